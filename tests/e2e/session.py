"""The deployed e2e platform, its ordered teardown, and log collection after failures."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from pulumi import automation as auto

from stackmodel.stack import PlatformConfig
from tests.e2e.checks import terminating
from tests.e2e.cluster import Cluster
from tests.e2e.stack import CLUSTER_NAME, People, state_resources, teardown_stages
from tooling.waiting import wait_for
from tooling.workspace import release_protection

FAILED: list[str] = []
"""Node ids of e2e tests that failed this session (their logs are collected before teardown)."""
NAMESPACES_TIMEOUT = 600.0


def writer(log: TextIO, *echo: TextIO) -> Callable[[str], None]:
    """Pulumi's output, line by line, to the log file and to each `echo` stream (the terminal:
    a 30-minute `pulumi up` shows its progress, not silence)."""

    def write(line: str) -> None:
        line = line if line.endswith("\n") else line + "\n"
        for stream in (log, *echo):
            stream.write(line)
            stream.flush()

    return write


@dataclass
class Platform:
    """The deployed e2e stack and a client for its cluster."""

    stack: auto.Stack
    cluster: Cluster
    config: PlatformConfig
    people: People
    artifacts: Path
    log: Callable[[str], None]
    torn_down: bool = False

    @property
    def team_namespaces(self) -> list[str]:
        return [team.name for team in self.config.teams]

    def teardown(self) -> None:
        """Workloads, then queues and profiles, then components, then the cluster; after the
        components no namespace may still be terminating."""
        self.torn_down = True
        if FAILED:
            collect_logs(self.cluster.kubeconfig, self.artifacts, self.log)
        self.cluster.delete_workloads(self.team_namespaces, NAMESPACES_TIMEOUT)
        release_protection(self.stack)
        for stage, urns in teardown_stages(state_resources(self.stack.export_stack().deployment)):
            if stage == "cluster":
                break  # the full destroy below
            self.stack.destroy(
                target=urns, target_dependents=True, on_output=self.log, color="never", show_secrets=False
            )
            if stage == "teams":
                wait_for("team namespaces deleted", self._existing_team_namespaces, NAMESPACES_TIMEOUT)
            wait_for(
                f"no namespace terminating after the {stage} stage",
                lambda: terminating(self.cluster.items(self.cluster.core.list_namespace())),
                NAMESPACES_TIMEOUT,
            )
        self.stack.destroy(on_output=self.log, color="never", show_secrets=False)

    def _existing_team_namespaces(self) -> list[str]:
        return [
            f"namespace {ns} still exists"
            for ns in self.team_namespaces
            if self.cluster.get_or_none(self.cluster.core.read_namespace, ns) is not None
        ]


def collect_logs(kubeconfig: Path | None, artifacts: Path, log: Callable[[str], None]) -> None:
    """Best effort: a failure to collect logs must not keep the cluster from being destroyed."""
    if kubeconfig is None:
        log("no kubeconfig: no pod logs collected")
        return
    try:
        for path in Cluster(kubeconfig).collect_logs(artifacts / "pods"):
            log(f"collected {path}")
    except Exception as error:
        log(f"collecting pod logs failed: {error!r}")


def kind_kubeconfig(workdir: Path) -> Path | None:
    """The e2e cluster's kubeconfig from kind itself (when `up` failed before its outputs)."""
    result = subprocess.run(["kind", "get", "kubeconfig", "--name", CLUSTER_NAME], capture_output=True, text=True)
    if result.returncode != 0:
        return None
    path = workdir / "kubeconfig"
    path.write_text(result.stdout)
    path.chmod(0o600)
    return path
