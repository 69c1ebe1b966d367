"""A fork replaces stacks/ with stacks of its own and keeps a green CI: the tools find its stacks
by name, the workflows run per GKE stack of whatever stacks/ holds, and nothing the suite
compares against reads stacks/. The whole proof, `make test` in a copy whose stacks/ holds
one new stack file, is `make fork-trial` (scripts/fork_trial.py; a CI job of its own)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import COMPONENTS_OFF
from tests.support.fixtures import GKE_STACKS_MATRIX, PROJECT_STACKS

REPO = Path(__file__).resolve().parents[1]
FORK_STACK = REPO / "tests" / "data" / "fork" / "Pulumi.staging.yaml"


@pytest.fixture
def fork_stacks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stacks/ that holds only the fork's own stack file."""
    import stackmodel.config

    directory = tmp_path / "stacks"
    directory.mkdir()
    shutil.copy(FORK_STACK, directory)
    monkeypatch.setattr(stackmodel.config, "STACKS_DIR", directory)
    return directory


def test_a_forks_only_stack_is_found_by_name_planned_and_held_to_the_guardrails(
    fork_stacks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stackmodel.config import stack_names
    from tooling.cli import main

    assert stack_names() == ["staging"]
    assert main(["policy", "staging"]) == 0
    assert capsys.readouterr().out.startswith("stack staging: ")


def test_the_gke_stack_list_is_of_whatever_stacks_holds(fork_stacks: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from scripts import gke_stacks

    assert gke_stacks.main() == 0
    laptop = {"mlplatform:cluster": {"kind": "kind", "name": "laptop"}, "mlplatform:components": COMPONENTS_OFF}
    (fork_stacks / "Pulumi.laptop.yaml").write_text(yaml.safe_dump({"config": laptop}))
    assert gke_stacks.gke_stacks() == ["staging"]  # the kind stack is no GKE stack
    (fork_stacks / "Pulumi.staging.yaml").unlink()
    assert gke_stacks.main() == 0
    assert capsys.readouterr().out.splitlines() == ['gke=["staging"]', "gke=[]"]


@pytest.mark.parametrize(("workflow", "job"), [("notebook-image.yml", "build"), ("preview.yml", "preview")])
def test_the_workflows_run_per_gke_stack_of_stacks_not_per_acme_name(workflow: str, job: str) -> None:
    jobs = yaml.safe_load((REPO / ".github" / "workflows" / workflow).read_text())["jobs"]
    assert jobs[job]["strategy"]["matrix"]["stack"] == GKE_STACKS_MATRIX
    assert jobs[job]["needs"] == "stacks" and "needs.stacks.outputs.gke != '[]'" in jobs[job]["if"]
    assert [s["run"] for s in jobs["stacks"]["steps"] if s.get("id") == "list"] == ['python scripts/gke_stacks.py >> "$GITHUB_OUTPUT"']


def test_the_tests_read_stack_names_from_their_fixtures() -> None:
    """In this process a name means tests/stacks/ (tests/conftest.py), not the project's stacks/."""
    from stackmodel.config import stack_file

    assert stack_file("dev") == REPO / "tests" / "stacks" / "Pulumi.dev.yaml"
    assert PROJECT_STACKS == REPO / "stacks"
