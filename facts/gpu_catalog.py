"""GPU catalog: which GKE accelerator rides on which machine types, as data in one place.

Source: Google Cloud docs "GPU machine types" (cloud.google.com/compute/docs/gpus),
"Running multi-instance GPUs" (GKE, MIG partition sizes), "About GPU obtainability
with flex-start / queued provisioning" and "Compact placement" pages, as read in
Nov 2026. Re-check them when adding a GPU or a machine family.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Accelerator:
    """One GKE accelerator type (the name NAP limits and node labels use)."""

    name: str
    machine_types: Mapping[str, tuple[int, ...]]
    """machine type -> the GPU counts it can carry (fixed for A2/A3/A4/G2; N1 attaches 1/2/4/8)."""
    attached: bool = False
    """The GPUs are attached to a general-purpose machine (N1) and billed apart from it;
    otherwise the machine type is accelerator-optimized and comes with its GPUs."""
    mig_partitions: tuple[str, ...] = ()
    compact_placement: bool = False
    dws: bool = False
    """Dynamic Workload Scheduler: queued provisioning and flex-start."""
    fast_socket: bool = True
    memory_gib: int = 0

    def gpus_per_node(self, machine_type: str) -> int:
        """GPUs a node of this machine type carries (the largest count it allows)."""
        return max(self.machine_types[machine_type])

    @property
    def family(self) -> str:
        return sorted({m.split("-")[0] for m in self.machine_types})[0]


def _fixed(prefix: str, counts: Mapping[str, int]) -> Mapping[str, tuple[int, ...]]:
    return {f"{prefix}-{suffix}": (n,) for suffix, n in counts.items()}


_N1_COUNTS = (1, 2, 4)
_N1_TYPES = [f"n1-standard-{n}" for n in (1, 2, 4, 8, 16, 32, 64, 96)] + [
    f"n1-highmem-{n}" for n in (2, 4, 8, 16, 32, 64, 96)
]

_CATALOG: tuple[Accelerator, ...] = (
    Accelerator(
        name="nvidia-tesla-t4",
        machine_types=dict.fromkeys(_N1_TYPES, _N1_COUNTS),
        attached=True,
        fast_socket=False,
        memory_gib=16,
    ),
    Accelerator(
        name="nvidia-l4",
        machine_types=_fixed(
            "g2-standard",
            {"4": 1, "8": 1, "12": 1, "16": 1, "24": 2, "32": 1, "48": 4, "96": 8},
        ),
        compact_placement=True,
        dws=True,
        memory_gib=24,
    ),
    Accelerator(
        name="nvidia-tesla-a100",
        machine_types={
            **_fixed("a2-highgpu", {"1g": 1, "2g": 2, "4g": 4, "8g": 8}),
            "a2-megagpu-16g": (16,),
        },
        mig_partitions=("1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb"),
        compact_placement=True,
        dws=True,
        memory_gib=40,
    ),
    Accelerator(
        name="nvidia-a100-80gb",
        machine_types=_fixed("a2-ultragpu", {"1g": 1, "2g": 2, "4g": 4, "8g": 8}),
        mig_partitions=("1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"),
        compact_placement=True,
        dws=True,
        memory_gib=80,
    ),
    Accelerator(
        name="nvidia-h100-80gb",
        machine_types=_fixed("a3-highgpu", {"1g": 1, "2g": 2, "4g": 4, "8g": 8}),
        mig_partitions=("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "7g.80gb"),
        compact_placement=True,
        dws=True,
        memory_gib=80,
    ),
    Accelerator(
        name="nvidia-h100-mega-80gb",
        machine_types={"a3-megagpu-8g": (8,)},
        mig_partitions=("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "7g.80gb"),
        compact_placement=True,
        dws=True,
        memory_gib=80,
    ),
    Accelerator(
        name="nvidia-h200-141gb",
        machine_types={"a3-ultragpu-8g": (8,)},
        mig_partitions=("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"),
        compact_placement=True,
        dws=True,
        memory_gib=141,
    ),
    Accelerator(
        name="nvidia-b200",
        machine_types={"a4-highgpu-8g": (8,)},
        compact_placement=True,
        dws=True,
        memory_gib=180,
    ),
)

ACCELERATORS: Mapping[str, Accelerator] = MappingProxyType({a.name: a for a in _CATALOG})


def accelerator(name: str) -> Accelerator:
    """The catalog entry for `name`; KeyError names the known accelerators."""
    try:
        return ACCELERATORS[name]
    except KeyError:
        raise KeyError(f"unknown accelerator {name!r}; known: {', '.join(ACCELERATORS)}") from None


def bundled_gpus(machine_type: str) -> int:
    """GPUs an accelerator-optimized machine type comes with (G2, A2, A3, A4); 0 for any
    other machine type, N1 included (its GPUs are attached, not part of the machine)."""
    for acc in _CATALOG:
        if not acc.attached and machine_type in acc.machine_types:
            return acc.gpus_per_node(machine_type)
    return 0


# --- boot disks ---------------------------------------------------------------------------
# GKE node pools take pd-standard, pd-balanced, pd-ssd or hyperdisk-balanced as boot disk, and
# default to pd-balanced (GKE "Configuring a custom boot disk",
# https://cloud.google.com/kubernetes-engine/docs/how-to/custom-boot-disks, read 2026-12-04).
# A3 Ultra and A4 take no Persistent Disk: Hyperdisk Balanced is their boot disk (for A3 Ultra,
# AI Hypercomputer "Create an AI-optimized GKE cluster with default configuration",
# https://docs.cloud.google.com/ai-hypercomputer/docs/create/gke-ai-hypercompute, "Requirements",
# as facts/gpu_fabric.py records from its stored copy, and Vertex AI DiskSpec,
# https://docs.cloud.google.com/vertex-ai/docs/reference/rest/v1/DiskSpec, "for A3U machines, the
# default value is hyperdisk-balanced"; for both, Google's cluster-toolkit@10470803
# examples/machine-learning/a3-ultragpu-8g/a3ultra-vm.yaml and a4-highgpu-8g/a4high-vm.yaml boot
# their GPU VMs from hyperdisk-balanced, its A3 High/Mega, A2 and G2 examples from pd-ssd or
# pd-balanced; all read 2026-12-04). The per-series list of the Compute Engine page
# "Accelerator-optimized machine family" could not be read from a stored copy.
# GKE itself picks hyperdisk-balanced when a machine type takes it and not pd-balanced (pulumi-gcp
# 10.2.0 ClusterNodeConfigArgs.disk_type: "Defaults to `hyperdisk-balanced` if `hyperdisk-balanced`
# is supported and `pd-balanced` is not supported for the machine type; otherwise defaults to
# `pd-balanced`"); the program pins it on these pools all the same, so the plan shows it and a
# changed default cannot move it.
HYPERDISK_BALANCED = "hyperdisk-balanced"
HYPERDISK_BALANCED_MIN_GB = 4
HYPERDISK_BALANCED_MAX_GB = 64 * 1024
"""A Hyperdisk Balanced volume is at most 64 TiB ("About Google Cloud Hyperdisk",
https://cloud.google.com/compute/docs/disks/hyperdisks, read 2026-12-04) and at least 4 GiB (not
read on Google's page: Red Hat's GCP PD CSI docs, "at least 4Gi" for hyperdisk-balanced, and
cluster-toolkit PR 6004's precondition say so)."""

BOOT_DISK_TYPES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "a3-ultragpu-8g": (HYPERDISK_BALANCED,),
        "a4-highgpu-8g": (HYPERDISK_BALANCED,),
    }
)
"""The boot disk types a GKE node of these machine types takes, where GKE's default
(pd-balanced) is not one of them; every other catalog machine type boots from Persistent Disk."""


def boot_disk_type(machine_type: str) -> str | None:
    """The boot disk type a pool of this machine type pins; None leaves GKE's default (pd-balanced)."""
    types = BOOT_DISK_TYPES.get(machine_type)
    return types[0] if types else None


def describe_machine_types(acc: Accelerator) -> str:
    """A short human list of the machine types an accelerator rides on, for error messages."""
    names = list(acc.machine_types)
    if len(names) <= 4:
        return ", ".join(names)
    return f"{names[0]} … {names[-1]}"


__all__ = [
    "ACCELERATORS",
    "BOOT_DISK_TYPES",
    "HYPERDISK_BALANCED",
    "HYPERDISK_BALANCED_MAX_GB",
    "HYPERDISK_BALANCED_MIN_GB",
    "Accelerator",
    "accelerator",
    "boot_disk_type",
    "bundled_gpus",
    "describe_machine_types",
]
