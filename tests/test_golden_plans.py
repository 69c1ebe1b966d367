"""The plan of every shipped stack, byte for byte: every resource, its URN, parent, provider,
dependencies and inputs (secrets masked), as `python -m stacks plan <stack> --json` prints it.
A change shows as a diff of tests/snapshots/plans/<stack>.json; `make snapshots` rewrites the
files (tests/support/snapshots.py), and the rewrite is reviewed like code."""

from __future__ import annotations

import difflib
from collections.abc import Callable

import pytest

from tests.support.snapshots import PLANS, plan_text
from tooling.plan import Plan


@pytest.mark.parametrize("stack", ["kind", "dev", "prod"])
def test_plan_matches_the_golden_snapshot(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    path = PLANS / f"{stack}.json"
    text = plan_text(shipped_plan(stack))
    golden = path.read_text()
    diff = list(difflib.unified_diff(golden.splitlines(), text.splitlines(), str(path), "plan", lineterm="", n=2))
    assert not diff, "the plan differs from its snapshot (if the change means it: `make snapshots`, then review):\n" + "\n".join(diff[:80])
