"""The plan of every shipped stack, byte for byte: every resource, its URN, parent, provider,
dependencies and inputs (secrets masked), as `python -m stacks plan <stack> --json` prints it.
A change shows as a reviewed diff of tests/snapshots/plans/<stack>.json; UPDATE_SNAPSHOTS=1
rewrites the files."""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tooling.cli import plan_json
from tooling.plan import Plan

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots" / "plans"


@pytest.mark.parametrize("stack", ["kind", "dev", "prod"])
def test_plan_matches_the_golden_snapshot(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    path = SNAPSHOTS / f"{stack}.json"
    text = plan_json(shipped_plan(stack)) + "\n"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOTS.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    golden = path.read_text()
    diff = list(difflib.unified_diff(golden.splitlines(), text.splitlines(), str(path), "plan", lineterm="", n=2))
    assert not diff, "\n".join(diff[:80])
