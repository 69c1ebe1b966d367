"""How a team's quota is shared among the flavors of its Kueue ClusterQueue: the stack says one
CPU and one memory figure per team (`quota.cpu`, `quota.memory`: what its pods may request at
once), and Kueue counts CPU and memory per flavor.

Why per flavor (kubernetes-sigs/kueue v0.19.2): a pod set that asks for a topology may take a
resource only from a flavor that has one (pkg/scheduler/flavorassigner/tas_flavorassigner.go
`checkPodSetAndFlavorMatchForTAS`: "Flavor %q does not support TopologyAwareScheduling" for a
flavor without topologyName whose resource group covers anything the pod requests), and a
flavor with a topology takes only pod sets that ask for one ("supports only
TopologyAwareScheduling"). A GPU pod on a topology-aware pool therefore takes its CPU and
memory from that pool's flavor, as GKE's TAS example has it (cpu, memory and nvidia.com/gpu
on the topology flavor). A resource and a flavor each belong to one resource group of a
ClusterQueue (pkg/webhooks/clusterqueue_webhook.go `validateResourceGroups`), and in a group
a pod set takes every covered resource from one flavor (flavorassigner.go
`findFlavorForPodSets`): so CPU, memory and GPUs form one group, the `default` flavor first
(CPU-only work: no GPUs) and one flavor per GPU pool after it.

Kueue keeps each flavor's quota apart (no flavor borrows from another of the same queue;
borrowing is from the cohort, per flavor and resource: the ClusterQueue API's `cohortName`),
so the team's figure is divided, and the parts add up to what the stack says:
- each GPU pool the team has GPUs of gets an equal share of the team's CPU and of its memory
  (with `n` such pools, 1/(n+1) each), but never more than the nodes its GPUs fill hold
  (its GPUs in whole nodes, times the node's allocatable: facts/allocatable.py), rounded down
  to a whole CPU and GiB (a millicore and a mebibyte when smaller);
- the `default` flavor keeps the rest (at least 1/(n+1)): CPU-only jobs and Ray heads.
With a cohort each flavor may also borrow what the other members lend of it (their own parts).

That split is needed only where a pool is topology-aware, and it costs where sharing happens, so
a stack without a topology-aware pool keeps two resource groups instead (`split_by_pool`): CPU
and memory on `default` alone, the team's whole figure (every pod takes them there, a GPU pod
too), and the GPUs in a group of their own, one flavor per pool. Split, a flavor's CPU is its
own: a GPU job whose CPU outgrows its pool's part borrows CPU from the cohort while the team's
own CPU idles on `default`, and Kueue then counts the team as borrowing: its workloads become
candidates for the other teams' reclaim (site/content/en/docs/concepts/preemption.md,
"Candidates": a queue borrowing a resource the preemptor needs) and its fair-sharing share rises
(pkg/cache/scheduler/fair_sharing.go dominantResourceShare adds up, per resource, what each
flavor uses above its quota); CPU-only work also gets only its `default` part of the team's CPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from facts.allocatable import allocatable
from stackmodel import quantity
from stackmodel.schema import GpuPool, Team

RESOURCES = ("cpu", "memory")
STEPS = {"cpu": (Decimal(1), Decimal("0.001")), "memory": (quantity.GI, quantity.MI)}
"""What a part is rounded down to: a whole CPU and GiB where it holds one, else a millicore and
a mebibyte (the ClusterQueue is read by people)."""


@dataclass(frozen=True)
class Shares:
    """The team's CPU and memory per flavor, and its GPUs per pool flavor."""

    default: dict[str, Decimal]
    """resource -> the `default` flavor's part."""
    pools: dict[str, dict[str, Decimal]]
    """pool name -> resource (cpu, memory, nvidia.com/gpu as `gpus`) -> that pool flavor's part."""
    split: bool = True
    """CPU and memory divided among the flavors (a topology-aware pool); False: all on `default`."""

    def of(self, flavor: str | None) -> dict[str, Decimal]:
        """A flavor's part; None: the default flavor's."""
        return self.default if flavor is None else self.pools[flavor]

    def cpu_flavor(self, pool: str | None) -> str | None:
        """The flavor a pod on `pool` (None: no GPU pool) takes its CPU and memory from; None: `default`."""
        return pool if self.split else None


def split_by_pool(gpu_pools: Sequence[GpuPool]) -> bool:
    """CPU and memory are divided among the flavors: only where a pool is topology-aware (the
    module's docstring says why)."""
    return any(pool.topology_aware for pool in gpu_pools)


def pool_gpus(team: Team, gpu_pools: Sequence[GpuPool]) -> dict[str, int]:
    """Pool name -> the team's GPUs on it: an accelerator's quota goes to its first pool; later
    pools of it get none of their own (a cohort member's may be borrowed)."""
    found: dict[str, int] = {}
    seen: set[str] = set()
    for pool in gpu_pools:
        found[pool.name] = team.quota.gpus.get(pool.accelerator, 0) if pool.accelerator not in seen else 0
        seen.add(pool.accelerator)
    return found


def _round_down(value: Decimal, resource: str) -> Decimal:
    coarse, fine = STEPS[resource]
    step = coarse if value >= coarse else fine
    return (value / step).to_integral_value(rounding=ROUND_FLOOR) * step


def nodes_hold(pool: GpuPool, gpus: int) -> dict[str, Decimal] | None:
    """What the nodes `gpus` GPUs of `pool` fill leave for pods; None for a machine type the
    shape table does not know."""
    node = allocatable(pool.machine_type)
    if node is None:
        return None
    nodes = (Decimal(gpus) / pool.gpus_per_node).to_integral_value(rounding=ROUND_CEILING)
    return {"cpu": nodes * node.cpu, "memory": nodes * node.memory}


def shares(team: Team, gpu_pools: Sequence[GpuPool]) -> Shares:
    """The team's quota per flavor (the module's docstring says how it is divided)."""
    gpus = pool_gpus(team, gpu_pools)
    total = {"cpu": quantity.parse(team.quota.cpu), "memory": quantity.parse(team.quota.memory)}
    split = split_by_pool(gpu_pools)
    holding = [pool.name for pool in gpu_pools if gpus[pool.name] > 0 and split]
    pools: dict[str, dict[str, Decimal]] = {}
    for pool in gpu_pools:
        part: dict[str, Decimal] = {name: Decimal(0) for name in RESOURCES}
        if pool.name in holding:
            cap = nodes_hold(pool, gpus[pool.name])
            for name in RESOURCES:
                equal = total[name] / (len(holding) + 1)
                part[name] = _round_down(min(equal, cap[name]) if cap else equal, name)
        part["gpus"] = Decimal(gpus[pool.name])
        pools[pool.name] = part
    default = {name: total[name] - sum((p[name] for p in pools.values()), Decimal(0)) for name in RESOURCES}
    return Shares(default=default, pools=pools, split=split)
