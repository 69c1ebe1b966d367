"""What one component makes ready for another, typed: the composition (components/platform.py)
records each component's readiness under a `Ready` key as it installs it, and everything that
waits names a `Need`: whose readiness, and which part of it (its CRDs, its admission webhooks,
its namespaces, its running controller). A key nobody has recorded yet is an error at plan
time (an installer ordered after its user), never a dependency silently dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

import pulumi


class Ready(Enum):
    """The readiness a component records; the value is its key of `mlplatform:components`
    (or, for a part of one, a name of its own)."""

    CERT_MANAGER = "certManager"
    ISTIO = "istio"
    KUBEFLOW_NAMESPACES = "kubeflowNamespaces"
    KUBEFLOW = "kubeflow"
    """The profile controller, and with it the Profile CRD."""
    KUBEFLOW_POD_DEFAULTS = "kubeflowPodDefaults"
    """The PodDefaults webhook, and with it the PodDefault CRD."""
    JOBSET = "jobset"
    TRAINER = "trainer"
    KUBERAY = "kuberay"
    KUEUE = "kueue"
    PIPELINES = "pipelines"
    MONITORING = "monitoring"
    """The Prometheus Operator's CRDs (kube-prometheus-stack); GKE's own with managed Prometheus."""
    DCGM_EXPORTER = "dcgmExporter"
    IDLE_RECLAIM = "idleReclaim"


class What(Enum):
    """Which part of a component's readiness a need is for."""

    CRDS = "its CRDs"
    WEBHOOKS = "its admission webhooks serving"
    NAMESPACE = "the namespaces it creates"
    CONTROLLER = "its controller running"


@dataclass(frozen=True)
class Need:
    """An edge of the deploy graph, said in code: `on`'s readiness, for `what`. `optional`:
    met by nothing when the stack does not install `on` (the object works without it, or the
    cluster provides it); otherwise a stack without `on` is an error at plan time."""

    on: Ready
    what: What
    optional: bool = False

    def __str__(self) -> str:
        return f"{self.on.value} ({self.what.value})"


class WiringError(Exception):
    """A need the composition cannot meet: the program is wired wrong (not the stack file)."""


class Readiness:
    """Each component's readiness as the composition installs it: a resource, or None for a
    component the stack does not install. Filled in install order."""

    def __init__(self) -> None:
        self._recorded: dict[Ready, pulumi.Resource | None] = {}

    def record(self, key: Ready, resource: pulumi.Resource | None) -> None:
        if key in self._recorded:
            raise WiringError(f"the readiness of {key.value} is recorded twice")
        self._recorded[key] = resource

    def get(self, key: Ready) -> pulumi.Resource | None:
        """The resource that is done when `key` is ready; None when the stack does not install it."""
        if key not in self._recorded:
            done = ", ".join(k.value for k in self._recorded) or "nothing"
            raise WiringError(
                f"{key.value} is needed before it is installed (installed so far: {done}); "
                "install it earlier in components/platform.py INSTALLERS"
            )
        return self._recorded[key]

    def resources(self, needs: Iterable[Need], needed_by: str) -> list[pulumi.Resource]:
        """What to wait for to meet `needs`; `needed_by` names the waiting object in errors."""
        found: list[pulumi.Resource] = []
        for need in needs:
            resource = self.get(need.on)
            if resource is None:
                if not need.optional:
                    raise WiringError(f"{needed_by} needs {need}, which this stack does not install")
                continue
            if resource not in found:
                found.append(resource)
        return found
