"""The stacks the tests are written against: tests/stacks/, never the project's stacks/.

stacks/ holds acme's example stacks, which a fork replaces with its own; the tests, the golden
snapshots and the architecture diagram (docs/architecture.md) depend on particular teams,
pools and settings, so they read fixtures of their own: tests/stacks/Pulumi.{kind,dev,prod}.yaml
(copies of acme's examples as they shipped) and the stacks written for one test
(Pulumi.dev-shared-vpc.yaml). `use_fixture_stacks()` makes a stack name mean a fixture for the
whole process (`load("dev")`, `python -m stacks plan dev` run in-process, the e2e suite's kind
stack), so a test names a stack the way a user does. What runs over the project's own stacks,
whatever they are, says so: `make check-stacks`, tests/test_policy.py's test of the project's own stacks, and
scripts/gke_stacks.py (the workflows' GKE stacks).
"""

from __future__ import annotations

from pathlib import Path

from stackmodel import config

FIXTURE_STACKS = Path(__file__).resolve().parents[1] / "stacks"
PROJECT_STACKS = Path(config.__file__).resolve().parents[1] / "stacks"
"""The project's stacks/ (Pulumi.yaml `stackConfigDir`), where the tools look a name up outside the tests."""


def use_fixture_stacks() -> None:
    """From now on, in this process, a stack name is looked up in tests/stacks/."""
    config.STACKS_DIR = FIXTURE_STACKS


def fixture(name: str) -> Path:
    """The fixture stack file of that name (tests/stacks/Pulumi.<name>.yaml)."""
    return FIXTURE_STACKS / f"Pulumi.{name}.yaml"


GKE_STACKS_MATRIX = "${{ fromJSON(needs.stacks.outputs.gke) }}"
"""The stack matrix of the workflows that run per GKE stack: the `stacks` job's list of the GKE
stacks in stacks/ (scripts/gke_stacks.py), never a list of acme's names."""
