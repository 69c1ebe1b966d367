"""A team's Kueue queues: its ClusterQueue (the quota, per pool flavor) and the `default`
LocalQueue every job of the namespace lands in, and the GPU-accounting guard's binding."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from args.teams import TeamArgs
from components import kueue_owners
from components.kueue import DEFAULT_FLAVOR, admission_check_name, queued_pools
from facts.labels import KUEUE_DEFAULT_LOCAL_QUEUE, namespace_selector
from facts.node_labels import GPU_RESOURCE
from runtimes import kueue_guard
from stacks import quantity
from stacks.schema import GpuPool
from stacks.schema import Team as TeamConfig

LOCAL_QUEUE = KUEUE_DEFAULT_LOCAL_QUEUE


def nominal_quota(team: TeamConfig, gpu_pools: Sequence[GpuPool]) -> dict[tuple[str, str], Decimal]:
    """(flavor, resource) -> the team's nominal quota: CPU and memory on the default flavor,
    GPUs per pool flavor. An accelerator's quota goes to its first pool; later pools of it get
    none of their own (they borrow)."""
    quota = {(DEFAULT_FLAVOR, "cpu"): quantity.parse(team.quota.cpu), (DEFAULT_FLAVOR, "memory"): quantity.parse(team.quota.memory)}
    seen: set[str] = set()
    for pool in gpu_pools:
        quota[(pool.name, GPU_RESOURCE)] = Decimal(team.quota.gpus.get(pool.accelerator, 0) if pool.accelerator not in seen else 0)
        seen.add(pool.accelerator)
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


def cluster_queue(args: TeamArgs) -> dict[str, Any]:
    """CPU/memory in one resource group (default flavor), GPUs in another (one flavor per
    pool), so a GPU pod takes its CPU from the team's CPU quota and its GPUs from a pool
    (nominal_quota); in a cohort, what it may borrow written out (borrowing_limits).

    A workload given a queued pool's flavor is admitted only once its ProvisioningRequest
    is provisioned: the pool's AdmissionCheck (components/kueue.py) runs on that flavor
    alone (v1beta2 `admissionChecksStrategy.admissionChecks[].onFlavors`; v1beta2 has no
    plain `admissionChecks` list)."""
    team = args.team
    nominal = nominal_quota(team, args.gpu_pools)
    borrowing = borrowing_limits(args) if team.cohort else {}
    groups: list[dict[str, Any]] = [
        {
            "coveredResources": ["cpu", "memory"],
            "flavors": [
                {
                    "name": DEFAULT_FLAVOR,
                    "resources": [_resource(DEFAULT_FLAVOR, name, nominal[(DEFAULT_FLAVOR, name)], borrowing) for name in ("cpu", "memory")],
                }
            ],
        }
    ]
    gpu_flavors = [
        {"name": pool.name, "resources": [_resource(pool.name, GPU_RESOURCE, nominal[(pool.name, GPU_RESOURCE)], borrowing)]}
        for pool in args.gpu_pools
    ]
    if gpu_flavors:
        groups.append({"coveredResources": [GPU_RESOURCE], "flavors": gpu_flavors})
    spec: dict[str, Any] = {
        "namespaceSelector": namespace_selector(team.name),
        "resourceGroups": groups,
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
