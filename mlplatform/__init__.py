"""The platform's command line: `python -m mlplatform <command>` (the `mlplatform` command),
the tools that act on a stack (tooling/cli.py)."""
