"""Rewrite the generated parts of the docs: docs/reference.md (the stack-file reference, from
the schema), the version table of docs/versions.md (from the pin table) and the architecture
diagram of docs/architecture.md (from the plan of the prod fixture, tests/stacks/Pulumi.prod.yaml,
so a fork's stacks/ does not change it). Tests fail when one drifts (tests/test_cli.py); `make
docs` runs this to fix them."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tooling.cli import plan_for, versions_table
from tooling.diagram import mermaid
from tooling.reference import reference

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
REFERENCE = DOCS / "reference.md"
VERSIONS = DOCS / "versions.md"
ARCHITECTURE = DOCS / "architecture.md"
DIAGRAM_STACK = REPO / "tests" / "stacks" / "Pulumi.prod.yaml"
REFERENCE_HEADER = (
    "# Stack-file reference\n\n"
    "Every key a stack file (`stacks/Pulumi.<stack>.yaml`) may hold, generated from `stackmodel/schema/` "
    "(`python -m mlplatform reference`; `make docs` rewrites this file); a test keeps it equal.\n\n"
)


def main() -> int:
    REFERENCE.write_text(REFERENCE_HEADER + reference() + "\n")
    text = VERSIONS.read_text()
    table = r"\| upstream \| kind \| version \| from \|\n(\|.*\|\n)+(\n\| patched \|.*\|\n(\|.*\|\n)+)?"
    VERSIONS.write_text(re.sub(table, lambda _: versions_table() + "\n", text))
    text = ARCHITECTURE.read_text()
    diagram = mermaid(plan_for(str(DIAGRAM_STACK)))
    ARCHITECTURE.write_text(re.sub(r"```mermaid\n.*?```", lambda _: diagram, text, count=1, flags=re.S))
    return 0


if __name__ == "__main__":
    sys.exit(main())
