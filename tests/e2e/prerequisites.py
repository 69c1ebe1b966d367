"""What the e2e suite needs on the machine, and the skip message when something is missing.

The suite creates a kind cluster (Docker + kind), drives Pulumi through the Automation
API (the Pulumi CLI), reaches the Kubeflow gateway through `kubectl port-forward`, and
uses two Python packages of the test extra. Each missing piece is named with how to get it.
"""

from __future__ import annotations

import importlib.util
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from facts.versions import KIND_VERSION

OPT_IN = "E2E"
"""The suite runs only with E2E=1 (`make e2e` sets it): it takes a machine for ~40 minutes."""


@dataclass(frozen=True)
class Requirement:
    name: str
    what: str
    how: str


TOOLS = (
    Requirement("docker", "Docker engine (kind runs the cluster's nodes as containers)", "https://docs.docker.com/engine/install/"),
    Requirement(
        "kind",
        f"kind {KIND_VERSION.version}",
        f"`go install sigs.k8s.io/kind@{KIND_VERSION.version}` or a release binary from {KIND_VERSION.location}",
    ),
    Requirement("pulumi", "the Pulumi CLI (the Automation API runs it)", "`curl -fsSL https://get.pulumi.com | sh`, see https://www.pulumi.com/docs/install/"),
    Requirement("kubectl", "kubectl (port-forward to the Kubeflow gateway)", "https://kubernetes.io/docs/tasks/tools/"),
)
PACKAGES = (
    Requirement("bcrypt", "the bcrypt package (hashes the test users' Dex passwords)", "pip install -e '.[test]'"),
    Requirement("kubeflow", "the Kubeflow SDK (submits the TrainJob as a data scientist would)", "pip install -e '.[test]'"),
)


def missing(
    which: Callable[[str], str | None],
    docker_problem: Callable[[], str | None],
    has_package: Callable[[str], bool] = lambda name: importlib.util.find_spec(name) is not None,
) -> list[str]:
    """One line per missing prerequisite, saying what it is and how to get it."""
    lines = [f"{r.name}: {r.what} is not on PATH; install: {r.how}" for r in TOOLS if which(r.name) is None]
    if which("docker") is not None:
        problem = docker_problem()
        if problem:
            lines.append(f"docker: the engine does not answer ({problem}); start it, or give your user access to it")
    lines += [f"{r.name}: {r.what} is not installed; install: {r.how}" for r in PACKAGES if not has_package(r.name)]
    return lines


def docker_problem() -> str | None:
    """Why `docker info` fails (engine down, no permission), or None when the engine answers."""
    try:
        result = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    if result.returncode == 0:
        return None
    return (result.stderr.strip().splitlines() or [f"docker info exited {result.returncode}"])[-1]


def skip_reason(missing_lines: list[str], environ: Mapping[str, str]) -> str | None:
    """The skip message for the e2e tests, or None when they can run."""
    lines = list(missing_lines)
    if environ.get(OPT_IN) != "1":
        lines.append(f"{OPT_IN}=1 is not set: the suite creates a kind cluster for ~40 minutes; run it with `make e2e`")
    return "e2e suite skipped:\n  " + "\n  ".join(lines) if lines else None
