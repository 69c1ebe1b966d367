"""A test run cannot pass without testing: snapshots are rewritten only by `make snapshots`,
and CI cannot skip the render tests for want of the upstream mirror, nor the envtest suite for
want of its binaries; `make test` runs the envtest suite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import UPDATE_SNAPSHOTS_SET, pytest_ignore_collect, refusals
from tests.support.checkout import copy_working_tree

REPO = Path(__file__).resolve().parents[1]


def test_a_set_update_snapshots_is_refused_everywhere() -> None:
    assert refusals({"UPDATE_SNAPSHOTS": "1"}) == [UPDATE_SNAPSHOTS_SET]
    assert "make snapshots" in UPDATE_SNAPSHOTS_SET
    assert refusals({}) == []


def test_ci_without_the_mirror_fails_the_run_naming_mlplatform_mirror(tmp_path: Path) -> None:
    """The real hook, in a pytest of its own: CI=true, UPDATE_SNAPSHOTS=1 and a mirror that is
    not there stop the run before any test (exit 4, usage error), each problem said, and so do
    envtest binaries that are not there. It runs in a copy of the working tree, which has no
    mirror of its own (.mlplatform/upstream, found before MLPLATFORM_MIRROR) and no ../shared
    beside it."""
    copy = copy_working_tree(tmp_path / "repo")
    env = {
        **os.environ,
        "CI": "true",
        "UPDATE_SNAPSHOTS": "1",
        "MLPLATFORM_MIRROR": str(tmp_path / "no-mirror"),
        "KUBEBUILDER_ASSETS": str(tmp_path),
    }
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
    assert f"CI=true and KUBEBUILDER_ASSETS={tmp_path} has no executable etcd, kube-apiserver, kube-controller-manager" in output
    assert "in CI the envtest suite (`make envtest`) must run, not skip" in output


def test_make_test_runs_the_suites_which_the_unit_run_leaves_out() -> None:
    makefile = (REPO / "Makefile").read_text()
    test_target = makefile.split("\ntest: $(INSTALLED)\n", 1)[1].split("\n\n", 1)[0]
    assert test_target.rstrip().endswith("@$(MAKE) --no-print-directory wheel-test\n\t@$(MAKE) --no-print-directory envtest")
    assert "envtest: $(INSTALLED)\n\t@$(PYTHON) -m pytest tests/envtest;" in makefile
    assert "wheel-test: $(INSTALLED)\n\t@$(PYTHON) -m pytest tests/package;" in makefile
    assert pytest_ignore_collect(REPO / "tests" / "envtest", None) is True  # type: ignore[arg-type]
    assert pytest_ignore_collect(REPO / "tests" / "package", None) is True  # type: ignore[arg-type]
    assert pytest_ignore_collect(REPO / "tests" / "test_quantity.py", None) is None  # type: ignore[arg-type]
