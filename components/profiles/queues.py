"""A team's Kueue queues: its ClusterQueue (the quota, per flavor) and the `default`
LocalQueue every job of the namespace lands in, and the GPU-accounting guard's binding."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from components import kueue_owners
from components.kueue import DEFAULT_FLAVOR, admission_check_name, queued_pools
from components.profiles.args import TeamArgs
from facts.labels import KUEUE_DEFAULT_LOCAL_QUEUE, namespace_selector
from facts.node_labels import GPU_RESOURCE
from facts.priorities import PREEMPTIBLE
from runtimes import kueue_guard
from stackmodel import quantity, team_quota
from stackmodel.schema import GpuPool
from stackmodel.schema import Team as TeamConfig

LOCAL_QUEUE = KUEUE_DEFAULT_LOCAL_QUEUE


def nominal_quota(team: TeamConfig, gpu_pools: Sequence[GpuPool]) -> dict[tuple[str, str], Decimal]:
    """(flavor, resource) -> the team's nominal quota: its CPU and memory on `default` (or, with a
    topology-aware pool, shared among `default` and the flavors of the pools it has GPUs of), its
    GPUs per pool flavor (stackmodel/team_quota.py says how; the parts add up to the stack's
    figures)."""
    split = team_quota.shares(team, gpu_pools)
    quota = {(DEFAULT_FLAVOR, name): split.default[name] for name in team_quota.RESOURCES}
    for pool in gpu_pools:
        part = split.pools[pool.name]
        if split.split:
            quota.update({(pool.name, name): part[name] for name in team_quota.RESOURCES})
        quota[(pool.name, GPU_RESOURCE)] = part["gpus"]
    return quota


def borrowing_limits(args: TeamArgs) -> dict[tuple[str, str], Decimal]:
    """(flavor, resource) -> what the team's ClusterQueue may borrow from its cohort: all the
    other members' nominal quota of it (they lend all of it: no lendingLimit). Kueue without a
    borrowingLimit allows the same; written out, the namespace quota can be sized to it."""
    limits: dict[tuple[str, str], Decimal] = {}
    for peer in args.cohort_peers:
        for key, value in nominal_quota(peer, args.gpu_pools).items():
            limits[key] = limits.get(key, Decimal(0)) + value
    return {key: value for key, value in limits.items() if value > 0}


def _resource(flavor: str, name: str, nominal: Decimal, borrowing: dict[tuple[str, str], Decimal]) -> dict[str, Any]:
    resource: dict[str, Any] = {"name": name, "nominalQuota": quantity.text(nominal) if name != GPU_RESOURCE else int(nominal)}
    if (flavor, name) in borrowing:
        limit = borrowing[(flavor, name)]
        resource["borrowingLimit"] = quantity.text(limit) if name != GPU_RESOURCE else int(limit)
    return resource


def resource_groups(gpu_pools: Sequence[GpuPool]) -> list[tuple[list[str], list[str]]]:
    """(covered resources, flavors) per resource group. With a topology-aware pool one group of
    CPU, memory and GPUs, `default` first (CPU-only work) then one flavor per GPU pool, so a GPU
    pod takes its CPU, memory and GPUs from its pool's flavor, as a pod set on a topology-aware
    pool must; otherwise CPU and memory on `default` and the GPUs in a group of their own
    (stackmodel/team_quota.py cites Kueue for both)."""
    pools = [pool.name for pool in gpu_pools]
    if team_quota.split_by_pool(gpu_pools):
        return [([*team_quota.RESOURCES, GPU_RESOURCE], [DEFAULT_FLAVOR, *pools])]
    return [(list(team_quota.RESOURCES), [DEFAULT_FLAVOR]), *([([GPU_RESOURCE], pools)] if pools else [])]


# What a team's queue may preempt (kueue v0.19.2 apis/kueue/v1beta2/clusterqueue_types.go
# ClusterQueuePreemption): `reclaimWithinCohort: Any` takes back, regardless of priority, what
# the team lent: a workload that fits the team's nominal quota preempts workloads of cohort
# queues that are above their own nominal quota, so borrowers go before owners and an owner is
# never preempted by another team (site/content/en/docs/concepts/preemption.md, "Candidates"; with
# fair sharing a queue at or below its nominal quota has share 0 and is no target,
# pkg/scheduler/preemption/fairsharing/ordering.go). `withinClusterQueue: LowerPriority`: in the
# team's own queue, work of a higher class preempts lower classes (facts/priorities.py). Kueue's
# own fair-sharing tests run this block: pkg/scheduler/preemption/preemption_fair_test.go
# "reclaim nominal from user using the most", "can't preempt when everyone under nominal", "CQ
# with higher weight can preempt more", "can preempt lower priority workloads from same CQ";
# classic: preemption_test.go "reclaim quota from borrower", "reclaim borrowed quota from same
# priority for withinCohort=ReclaimFromAny".
RECLAIM_WITHIN_COHORT = "Any"
WITHIN_CLUSTER_QUEUE = "LowerPriority"


def preemption(fair_sharing: bool) -> dict[str, Any]:
    """The team queue's preemption. Without fair sharing (Kueue's classic preemption) a workload
    that must borrow may also preempt preemptible work of other teams that borrow
    (`borrowWithinCohort`, LowerPriority up to the preemptible class's value); Kueue honours
    borrowWithinCohort with classic preemption only (clusterqueue_types.go:539-544), so with fair
    sharing it is left out: there the shares decide."""
    block: dict[str, Any] = {"reclaimWithinCohort": RECLAIM_WITHIN_COHORT, "withinClusterQueue": WITHIN_CLUSTER_QUEUE}
    if not fair_sharing:
        block["borrowWithinCohort"] = {"policy": "LowerPriority", "maxPriorityThreshold": PREEMPTIBLE.value}
    return block


def weight_text(weight: Decimal) -> str:
    """A weight as a Kubernetes quantity: `2`, `0.5`, `100` (never `1E+2`)."""
    return format(weight.normalize(), "f")


def cluster_queue(args: TeamArgs) -> dict[str, Any]:
    """The team's quota per flavor (nominal_quota) in its resource groups (resource_groups); in a
    cohort, what it may borrow written out (borrowing_limits); what it may preempt (preemption)
    and, with fair sharing, its weight in the cohort.

    A workload given a queued pool's flavor is admitted only once its ProvisioningRequest
    is provisioned: the pool's AdmissionCheck (components/kueue.py) runs on that flavor
    alone (v1beta2 `admissionChecksStrategy.admissionChecks[].onFlavors`; v1beta2 has no
    plain `admissionChecks` list)."""
    team = args.team
    nominal = nominal_quota(team, args.gpu_pools)
    borrowing = borrowing_limits(args) if team.cohort else {}
    groups = [
        {
            "coveredResources": covered,
            "flavors": [
                {"name": flavor, "resources": [_resource(flavor, name, nominal.get((flavor, name), Decimal(0)), borrowing) for name in covered]}
                for flavor in flavors
            ],
        }
        for covered, flavors in resource_groups(args.gpu_pools)
    ]
    spec: dict[str, Any] = {
        "namespaceSelector": namespace_selector(team.name),
        "resourceGroups": groups,
        "preemption": preemption(args.fair_sharing),
    }
    if team.cohort:
        spec["cohortName"] = team.cohort
        if args.fair_sharing:
            spec["fairSharing"] = {"weight": weight_text(team.weight)}
    checks = [{"name": admission_check_name(pool), "onFlavors": [pool.name]} for pool in queued_pools(args.gpu_pools)]
    if checks:
        spec["admissionChecksStrategy"] = {"admissionChecks": checks}
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": team.name}, "spec": spec}


def queue_admits(args: TeamArgs) -> dict[str, Decimal]:
    """Resource -> the most the team's ClusterQueue admits at once: its nominal quota plus what
    it may borrow, over every flavor."""
    total: dict[str, Decimal] = {}
    for (_, name), value in [*nominal_quota(args.team, args.gpu_pools).items(), *(borrowing_limits(args) if args.team.cohort else {}).items()]:
        total[name] = total.get(name, Decimal(0)) + value
    return total


def local_queue(team: TeamConfig) -> dict[str, Any]:
    """Named `default`: Kueue queues TrainJobs, RayJobs and RayClusters without a queue label here."""
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": LOCAL_QUEUE, "namespace": team.name},
        "spec": {"clusterQueue": team.name},
    }



def queue_objects(args: TeamArgs) -> list[dict[str, Any]]:
    """The team's queues, the owner guard's bindings (components/kueue_owners.py), and where Kueue
    runs GPU runtimes the GPU-accounting guard's binding in its namespace (runtimes/kueue_guard.py)."""
    objects = [cluster_queue(args), local_queue(args.team)]
    if args.kueue:
        objects += kueue_owners.bindings(args.team.name)
    if args.kueue and kueue_guard.gpu_runtimes(args.gpu_pools):
        objects.append(kueue_guard.binding(args.team.name))
    return objects
