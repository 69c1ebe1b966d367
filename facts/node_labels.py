"""The labels and taints GPU nodes carry: the contract between the node pools (infra),
Kueue's ResourceFlavors and the training runtimes' node selectors and tolerations.

Everything that targets a GPU pool derives from these functions, so a pool, its flavor
and its runtimes cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


# A DRA pool's node labels (gpuAllocation: dra). GKE: the device-plugin opt-out label, with GKE's
# driver installation off (docs.cloud.google.com/kubernetes-engine/docs/how-to/set-up-dra, "Create
# a GKE node pool with GPUs", read Dec 2026); the label that tells GKE's cluster autoscaler the
# pool's nodes run NVIDIA's GPU DRA driver, so it scales a pool from zero for pods with
# ResourceClaims (the same label in GKE's DRA examples: GoogleCloudPlatform/ai-on-gke and
# llm-d's GKE guide, read Dec 2026); NVIDIA's DRA driver: its kubelet plugin's node affinity
# (kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1 deployments/helm/dra-driver-nvidia-gpu/values.yaml
# kubeletPlugin.affinity, as NVIDIA/k8s-dra-driver-gpu@v25.12.0's; GKE nodes have no NFD labels, so
# this is the term that matches).
DRA_NODE_LABELS: Mapping[str, str] = {
    "gke-no-default-nvidia-gpu-device-plugin": "true",
    "cloud.google.com/gke-nvidia-gpu-dra-driver": "true",
    "nvidia.com/gpu.present": "true",
}


class Pool(Protocol):
    """What a GPU pool's labels derive from (the stack model's GpuPool has these)."""

    @property
    def name(self) -> str: ...
    @property
    def accelerator(self) -> str: ...
    @property
    def spot(self) -> bool: ...
    @property
    def labels(self) -> Mapping[str, str]: ...
    @property
    def extra_taints(self) -> Sequence[Taint]: ...
    @property
    def dra(self) -> bool: ...


# GKE taints GPU nodes so when the cluster has non-GPU pools; we declare it too, so it
# is explicit and the same on every pool.
GPU_TAINT = Taint(key=GPU_RESOURCE, value="present", effect="NoSchedule")


def pool_node_labels(pool: Pool) -> dict[str, str]:
    """Labels we set on the pool's nodes: the stack's own for the pool, then ours (GKE adds
    the accelerator and spot labels itself), and on a DRA pool DRA_NODE_LABELS. The schema keeps
    the stack's off our keys."""
    return {**pool.labels, POOL_LABEL: pool.name, **(DRA_NODE_LABELS if pool.dra else {})}


def pool_selector(pool: Pool) -> dict[str, str]:
    """Node labels that select exactly this pool's nodes."""
    labels = {ACCELERATOR_LABEL: pool.accelerator, POOL_LABEL: pool.name}
    if pool.spot:
        labels[SPOT_LABEL] = "true"
    return labels


def pool_taints(pool: Pool) -> list[Taint]:
    """Taints on the pool's nodes, ours first, then the stack's own for the pool; pods must
    tolerate them all to land there, and everything of the platform that targets the pool
    (runtimes, Ray workers, notebooks, DCGM) tolerates exactly these (a Kueue flavor, for the
    pods it admits, only the stack's own unless Kueue places the pool by topology:
    components/kueue.py flavor_tolerations)."""
    return [GPU_TAINT, *pool.extra_taints]


# Keys a stack's own node labels and taints may not take: the platform's, and the prefixes
# Kubernetes and GKE keep for themselves. Kubernetes: "The kubernetes.io/ and k8s.io/
# prefixes are reserved for Kubernetes core components" (kubernetes.io/docs/concepts/
# overview/working-with-objects/labels, "Syntax and character set"), subdomains included
# (node.kubernetes.io/..., the node-lifecycle taints). GKE sets cloud.google.com/gke-* labels
# and taints on nodes itself (gke-accelerator, gke-spot, gke-nodepool; gke-queued on queued
# provisioning nodes: cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest).
PLATFORM_KEYS: Mapping[str, str] = {
    ACCELERATOR_LABEL: "GKE's accelerator label, which the platform selects GPU nodes by",
    SPOT_LABEL: "GKE's Spot VM label, which the platform selects spot pools by",
    POOL_LABEL: "the platform's pool label (set from the pool's name)",
    GPU_TAINT.key: f"the platform's GPU taint ({GPU_TAINT.key}={GPU_TAINT.value}:{GPU_TAINT.effect}, on every GPU pool already)",
    "gke-no-default-nvidia-gpu-device-plugin": "GKE's device-plugin opt-out, which the platform sets on a pool with gpuAllocation: dra",
    "nvidia.com/gpu.present": "the label NVIDIA's DRA driver runs on, which the platform sets on a pool with gpuAllocation: dra",
}
RESERVED_DOMAINS: Mapping[str, str] = {
    "kubernetes.io": "Kubernetes",
    "k8s.io": "Kubernetes",
    "cloud.google.com": "GKE",
    "mlplatform.dev": "the platform",
}


def reserved_key(key: str) -> str | None:
    """Whose a node label or taint key is, when a stack may not set it; None when it may."""
    if key in PLATFORM_KEYS:
        return PLATFORM_KEYS[key]
    prefix = key.rpartition("/")[0]
    for domain, owner in RESERVED_DOMAINS.items():
        if prefix == domain or prefix.endswith(f".{domain}"):
            return f"under {domain}/, which {owner} keeps for its own"
    return None
