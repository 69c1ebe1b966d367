"""A test run cannot pass without testing: snapshots are rewritten only by `make snapshots`,
and CI cannot skip the render tests for want of the upstream mirror."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import UPDATE_SNAPSHOTS_SET, refusals
from tests.support.checkout import copy_working_tree

REPO = Path(__file__).resolve().parents[1]


def test_a_set_update_snapshots_is_refused_everywhere() -> None:
    assert refusals({"UPDATE_SNAPSHOTS": "1"}) == [UPDATE_SNAPSHOTS_SET]
    assert "make snapshots" in UPDATE_SNAPSHOTS_SET
    assert refusals({}) == []


def test_ci_without_the_mirror_fails_the_run_naming_mlplatform_mirror(tmp_path: Path) -> None:
    """The real hook, in a pytest of its own: CI=true, UPDATE_SNAPSHOTS=1 and a mirror that is
    not there stop the run before any test (exit 4, usage error), each problem said. It runs in
    a copy of the working tree, which has no mirror of its own (.mlplatform/upstream, found
    before MLPLATFORM_MIRROR) and no ../shared beside it."""
    copy = copy_working_tree(tmp_path / "repo")
    env = {**os.environ, "CI": "true", "UPDATE_SNAPSHOTS": "1", "MLPLATFORM_MIRROR": str(tmp_path / "no-mirror")}
    env.pop("PYTEST_XDIST_WORKER", None)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "--collect-only", "-q", "tests/test_quantity.py"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 4, output
    assert f"no upstream mirror at {tmp_path / 'no-mirror'}: set MLPLATFORM_MIRROR" in output
    assert "in CI every test that renders must run, not skip" in output
    assert "UPDATE_SNAPSHOTS is set" in output


def test_make_snapshots_is_the_way_to_rewrite_them() -> None:
    makefile = (REPO / "Makefile").read_text()
    assert "snapshots: $(INSTALLED)\n\t$(PYTHON) -m tests.support.snapshots\n" in makefile
    tests = "".join(p.read_text() for p in (REPO / "tests").glob("test_*.py") if p.name != Path(__file__).name)
    assert "os.environ.get(\"UPDATE_SNAPSHOTS\")" not in tests, "a test that rewrites its own snapshot passes by construction"
