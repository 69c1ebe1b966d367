"""A team's Kueue queues: its ClusterQueue (the quota, per pool flavor) and the `default`
LocalQueue every job of the namespace lands in, and the GPU-accounting guard's binding."""

from __future__ import annotations

from typing import Any

from args.teams import TeamArgs
from components.kueue import DEFAULT_FLAVOR, admission_check_name, queued_pools
from facts.labels import KUEUE_DEFAULT_LOCAL_QUEUE, namespace_selector
from facts.node_labels import GPU_RESOURCE
from runtimes import kueue_guard
from stacks.schema import Team as TeamConfig

LOCAL_QUEUE = KUEUE_DEFAULT_LOCAL_QUEUE


def cluster_queue(args: TeamArgs) -> dict[str, Any]:
    """CPU/memory in one resource group (default flavor), GPUs in another (one flavor per
    pool), so a GPU pod takes its CPU from the team's CPU quota and its GPUs from a pool.
    An accelerator's quota goes to its first pool; later pools of it can borrow.

    A workload given a queued pool's flavor is admitted only once its ProvisioningRequest
    is provisioned: the pool's AdmissionCheck (components/kueue.py) runs on that flavor
    alone (v1beta2 `admissionChecksStrategy.admissionChecks[].onFlavors`; v1beta2 has no
    plain `admissionChecks` list)."""
    team = args.team
    groups: list[dict[str, Any]] = [
        {
            "coveredResources": ["cpu", "memory"],
            "flavors": [
                {
                    "name": DEFAULT_FLAVOR,
                    "resources": [
                        {"name": "cpu", "nominalQuota": team.quota.cpu},
                        {"name": "memory", "nominalQuota": team.quota.memory},
                    ],
                }
            ],
        }
    ]
    seen: set[str] = set()
    gpu_flavors = []
    for pool in args.gpu_pools:
        quota = team.quota.gpus.get(pool.accelerator, 0) if pool.accelerator not in seen else 0
        seen.add(pool.accelerator)
        resource: dict[str, Any] = {"name": GPU_RESOURCE, "nominalQuota": quota}
        gpu_flavors.append({"name": pool.name, "resources": [resource]})
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


def local_queue(team: TeamConfig) -> dict[str, Any]:
    """Named `default`: Kueue queues TrainJobs, RayJobs and RayClusters without a queue label here."""
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": LOCAL_QUEUE, "namespace": team.name},
        "spec": {"clusterQueue": team.name},
    }



def queue_objects(args: TeamArgs) -> list[dict[str, Any]]:
    """The team's queues, and where Kueue runs GPU runtimes the guard's binding in its namespace
    (runtimes/kueue_guard.py)."""
    objects = [cluster_queue(args), local_queue(args.team)]
    if args.kueue and kueue_guard.gpu_runtimes(args.gpu_pools):
        objects.append(kueue_guard.binding(args.team.name))
    return objects
