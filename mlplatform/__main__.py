"""`python -m mlplatform …`: the command line of the tools that act on a stack (tooling/cli.py)."""

from tooling.cli import run

if __name__ == "__main__":
    run()
