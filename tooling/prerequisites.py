"""The outside tools each command needs, checked before anything slow starts.

`python3 -m tooling.prerequisites <command>` runs with the system Python, before the
virtualenv exists (it imports only the standard library and facts/), and prints one line per
missing tool, saying what it is for and how to get it; exit 1 if anything is missing. The
Makefile runs it first for `kind-up` and `e2e`; the e2e suite uses it for its skip message.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from facts.versions import KIND_VERSION

OPT_IN = "E2E"
"""The e2e suite runs only with E2E=1 (`make e2e` sets it): it takes a machine for ~40 minutes."""


@dataclass(frozen=True)
class Requirement:
    name: str
    what: str
    how: str


DOCKER = Requirement("docker", "Docker engine (kind runs the cluster's nodes as containers)", "https://docs.docker.com/engine/install/")
KIND = Requirement(
    "kind",
    f"kind {KIND_VERSION.version}",
    f"`go install sigs.k8s.io/kind@{KIND_VERSION.version}` or a release binary from {KIND_VERSION.location}",
)
PULUMI = Requirement("pulumi", "the Pulumi CLI", "`curl -fsSL https://get.pulumi.com | sh`, see https://www.pulumi.com/docs/install/")
KUBECTL = Requirement("kubectl", "kubectl (port-forwards to the Kubeflow gateway)", "https://kubernetes.io/docs/tasks/tools/")
GKE_AUTH_PLUGIN = Requirement(
    "gke-gcloud-auth-plugin",
    "the GKE auth plugin (a GKE kubeconfig runs it for credentials)",
    "`gcloud components install gke-gcloud-auth-plugin`, see "
    "https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl",
)

COMMANDS: Mapping[str, tuple[Requirement, ...]] = {
    "kind-up": (DOCKER, KIND, PULUMI, KUBECTL),
    "e2e": (DOCKER, KIND, PULUMI, KUBECTL),
    "smoke": (GKE_AUTH_PLUGIN,),
}
"""Which tools each command runs (`make kind-up`, `make e2e`, `python -m stacks smoke`)."""

E2E_PACKAGES = (
    Requirement("bcrypt", "the bcrypt package (hashes the test users' Dex passwords)", "make test (installs the test extra)"),
    Requirement("kubeflow", "the Kubeflow SDK (submits the TrainJob as a data scientist would)", "make test (installs the test extra)"),
)


def missing(
    tools: Sequence[Requirement],
    which: Callable[[str], str | None] | None = None,
    docker_problem: Callable[[], str | None] | None = None,
    packages: Sequence[Requirement] = (),
    has_package: Callable[[str], bool] = lambda name: importlib.util.find_spec(name) is not None,
) -> list[str]:
    """One line per missing prerequisite, saying what it is and how to get it."""
    which = which or shutil.which
    lines = [f"{r.name}: {r.what} is not on PATH; install: {r.how}" for r in tools if which(r.name) is None]
    if DOCKER in tools and which(DOCKER.name) is not None:
        problem = (docker_problem or engine_problem)()
        if problem:
            lines.append(f"docker: the engine does not answer ({problem}); start it, or give your user access to it")
    lines += [f"{r.name}: {r.what} is not installed; install: {r.how}" for r in packages if not has_package(r.name)]
    return lines


def engine_problem() -> str | None:
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tooling.prerequisites", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=sorted(COMMANDS), help="the command about to run")
    command = parser.parse_args(argv).command
    lines = missing(COMMANDS[command])
    if lines:
        print(f"{command} needs tools this machine does not have:\n  " + "\n  ".join(lines), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
