"""`python -m stacks …`: the alias kept for `python -m mlplatform …` (tooling/cli.py)."""

from tooling.cli import run

if __name__ == "__main__":
    run(prog="python -m stacks")
