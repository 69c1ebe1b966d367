"""The stack model: what a stack file (`stacks/Pulumi.<env>.yaml`) may say and how it is read.
The schema (`schema/`), the rules across its parts (`rules`), the loader that turns a stack
file into a validated PlatformConfig or every problem with its config path (`config`), and
the secrets, ESC environments and quantities it reads. Above the facts, below everything that
builds resources (docs/architecture.md, "Layers")."""
