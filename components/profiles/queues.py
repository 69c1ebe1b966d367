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
from runtimes import kueue_guard
from stackmodel import quantity, team_quota
from stackmodel.schema import GpuPool
from stackmodel.schema import Team as TeamConfig

LOCAL_QUEUE = KUEUE_DEFAULT_LOCAL_QUEUE


def nominal_quota(team: TeamConfig, gpu_pools: Sequence[GpuPool]) -> dict[tuple[str, str], Decimal]:
    """(flavor, resource) -> the team's nominal quota: its CPU and memory shared among the
    `default` flavor and the flavors of the pools it has GPUs of, its GPUs per pool flavor
    (stackmodel/team_quota.py says how; the parts add up to the stack's figures)."""
    split = team_quota.shares(team, gpu_pools)
    quota = {(DEFAULT_FLAVOR, name): split.default[name] for name in team_quota.RESOURCES}
    for pool in gpu_pools:
        part = split.pools[pool.name]
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


def covered_resources(gpu_pools: Sequence[GpuPool]) -> list[str]:
    """The one resource group's resources: CPU and memory, and GPUs where there are GPU pools."""
    return [*team_quota.RESOURCES, *([GPU_RESOURCE] if gpu_pools else [])]


def cluster_queue(args: TeamArgs) -> dict[str, Any]:
    """One resource group of CPU, memory and GPUs: the `default` flavor first (CPU-only work),
    then one flavor per GPU pool, each with its part of the team's quota (nominal_quota), so a
    GPU pod takes its CPU, memory and GPUs from its pool's flavor, as a pod set on a
    topology-aware pool must (stackmodel/team_quota.py cites Kueue); in a cohort, what it may
    borrow written out (borrowing_limits).

    A workload given a queued pool's flavor is admitted only once its ProvisioningRequest
    is provisioned: the pool's AdmissionCheck (components/kueue.py) runs on that flavor
    alone (v1beta2 `admissionChecksStrategy.admissionChecks[].onFlavors`; v1beta2 has no
    plain `admissionChecks` list)."""
    team = args.team
    nominal = nominal_quota(team, args.gpu_pools)
    borrowing = borrowing_limits(args) if team.cohort else {}
    covered = covered_resources(args.gpu_pools)
    flavors = [DEFAULT_FLAVOR, *(pool.name for pool in args.gpu_pools)]
    group = {
        "coveredResources": covered,
        "flavors": [
            {"name": flavor, "resources": [_resource(flavor, name, nominal[(flavor, name)] if (flavor, name) in nominal else Decimal(0), borrowing) for name in covered]}
            for flavor in flavors
        ],
    }
    spec: dict[str, Any] = {
        "namespaceSelector": namespace_selector(team.name),
        "resourceGroups": [group],
    }
    if team.cohort:
        spec["cohortName"] = team.cohort
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
