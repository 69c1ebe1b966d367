"""What a GKE node leaves for pods: the machine's vCPUs and memory (facts/prices.py
SHAPES, the one table of machine shapes) minus what GKE reserves for the system.

Source: GKE "Plan GKE Standard node sizes", section "Memory and CPU reservations"
(cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes, read Nov 2026):
- CPU: 6% of the first core, 1% of the next (up to 2), 0.5% of the next 2 (up to 4),
  0.25% of every core above 4;
- memory: 255 MiB on machines below 1 GiB; else 25% of the first 4 GiB, 20% of the next
  4 GiB (up to 8), 10% of the next 8 GiB (up to 16), 6% of the next 112 GiB (up to 128),
  2% of anything above 128 GiB; and the kubelet's eviction threshold, 100 MiB.

DaemonSets (GPU device plugin, DCGM exporter, Istio CNI, logging) take more, so a pod
larger than this never fits; one smaller may still not.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from facts.prices import SHAPES

GIB = Decimal(2**30)
MIB = Decimal(2**20)
EVICTION_THRESHOLD = 100 * MIB
_CPU_STEPS = ((Decimal(1), Decimal("0.06")), (Decimal(1), Decimal("0.01")), (Decimal(2), Decimal("0.005")))
_CPU_ABOVE = Decimal("0.0025")
_MEMORY_STEPS = (
    (Decimal(4), Decimal("0.25")),
    (Decimal(4), Decimal("0.20")),
    (Decimal(8), Decimal("0.10")),
    (Decimal(112), Decimal("0.06")),
)
_MEMORY_ABOVE = Decimal("0.02")


@dataclass(frozen=True)
class Allocatable:
    """What pods on one node may request in total."""

    cpu: Decimal
    """Cores."""
    memory: Decimal
    """Bytes."""


def _reserved(total: Decimal, steps: tuple[tuple[Decimal, Decimal], ...], above: Decimal) -> Decimal:
    reserved, left = Decimal(0), total
    for size, share in steps:
        part = min(left, size)
        reserved += part * share
        left -= part
    return reserved + max(left, Decimal(0)) * above


def allocatable(machine_type: str) -> Allocatable | None:
    """What a GKE node of `machine_type` leaves for pods; None for a machine type SHAPES lacks."""
    shape = SHAPES.get(machine_type)
    if shape is None:
        return None
    cores, gib = Decimal(shape.vcpus), Decimal(str(shape.gib))
    reserved_memory = Decimal(255) * MIB if gib < 1 else _reserved(gib, _MEMORY_STEPS, _MEMORY_ABOVE) * GIB
    return Allocatable(
        cpu=cores - _reserved(cores, _CPU_STEPS, _CPU_ABOVE),
        memory=gib * GIB - reserved_memory - EVICTION_THRESHOLD,
    )
