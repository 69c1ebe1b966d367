"""The labels and taints GPU nodes carry: the contract between the node pools (infra),
Kueue's ResourceFlavors and the training runtimes' node selectors and tolerations.

Everything that targets a GPU pool derives from these functions, so a pool, its flavor
and its runtimes cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

# GKE labels every GPU node with its accelerator (cloud.google.com/kubernetes-engine/docs/how-to/gpus).
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
# GKE labels Spot VMs so (cloud.google.com/kubernetes-engine/docs/concepts/spot-vms).
SPOT_LABEL = "cloud.google.com/gke-spot"
# Our own label, set on the pool's nodes, so two pools of one accelerator stay apart.
POOL_LABEL = "mlplatform.dev/gpu-pool"
# The resource the NVIDIA device plugin advertises.
GPU_RESOURCE = "nvidia.com/gpu"


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str  # Kubernetes spelling: NoSchedule

    @property
    def gke_effect(self) -> str:
        """The GKE API's spelling of the effect (NO_SCHEDULE)."""
        return {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}[
            self.effect
        ]

    def toleration(self) -> dict[str, str]:
        return {"key": self.key, "operator": "Equal", "value": self.value, "effect": self.effect}


class Pool(Protocol):
    """What a GPU pool's labels derive from (the stack model's GpuPool has these)."""

    @property
    def name(self) -> str: ...
    @property
    def accelerator(self) -> str: ...
    @property
    def spot(self) -> bool: ...


# GKE taints GPU nodes so when the cluster has non-GPU pools; we declare it too, so it
# is explicit and the same on every pool.
GPU_TAINT = Taint(key=GPU_RESOURCE, value="present", effect="NoSchedule")


def pool_node_labels(pool: Pool) -> dict[str, str]:
    """Labels we set on the pool's nodes (GKE adds the accelerator and spot labels itself)."""
    return {POOL_LABEL: pool.name}


def pool_selector(pool: Pool) -> dict[str, str]:
    """Node labels that select exactly this pool's nodes."""
    labels = {ACCELERATOR_LABEL: pool.accelerator, POOL_LABEL: pool.name}
    if pool.spot:
        labels[SPOT_LABEL] = "true"
    return labels


def pool_taints(pool: Pool) -> list[Taint]:
    """Taints on the pool's nodes; pods must tolerate them to land there."""
    return [GPU_TAINT]
