"""Per component, the slice of the stack model it needs (a frozen `*Args`) and the pure
function that cuts it from a PlatformConfig. Above the model (stacks/), below everything
that builds resources: infra and components take only their Args, so none of them reads
the stack file or the Pulumi config (tests/test_architecture.py)."""
