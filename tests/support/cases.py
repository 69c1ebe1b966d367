"""The one case type of the table-driven validation tests (tests/test_config_errors.py,
tests/test_stack_rules.py): a bad stack as changes to a small valid one, and the problem
it must report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.conftest import base_gke, base_kind, with_changes


@dataclass(frozen=True)
class Case:
    """One bad stack: what changes from a valid base, and the problem it must report."""

    id: str
    changes: dict[str, Any]
    path: str
    message: str
    base: str = "gke"
    rule: str = ""
    """The rule of stackmodel/rules/ the stack breaks, for the cases that test one."""

    def stack(self) -> dict[str, Any]:
        """The bad stack, as a stack file's `config:` mapping."""
        return with_changes(base_gke() if self.base == "gke" else base_kind(), self.changes)
