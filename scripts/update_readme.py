"""Rewrite the generated parts of README.md (architecture diagram, version table,
stack-file reference) from the prod stack's plan, the pin table and the schema. Tests fail when they drift; run this to fix them."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tooling.cli import plan_for, versions_table
from tooling.diagram import mermaid
from tooling.reference import reference

README = Path(__file__).resolve().parents[1] / "README.md"


def main() -> int:
    text = README.read_text()
    text = re.sub(r"\| upstream \| kind \| version \| from \|\n(\|.*\|\n)+", versions_table() + "\n", text)
    text = re.sub(r"```mermaid\n.*?```", lambda _: mermaid(plan_for("prod")), text, count=1, flags=re.S)
    head, _, _ = text.partition("## Stack-file reference")
    text = (
        head
        + "## Stack-file reference\n\nGenerated from `stacks/schema/` (`python -m stacks reference`); "
        + "a test keeps it equal.\n\n"
        + reference()
        + "\n"
    )
    README.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
