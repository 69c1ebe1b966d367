"""A team's Kueue queues (components/profiles/queues.py): quota per pool flavor, the `default` LocalQueue."""

from __future__ import annotations

from decimal import Decimal

import pytest

from components.profiles.args import team_args
from components.profiles.queues import cluster_queue
from stackmodel import quantity
from stackmodel.config import load
from tests.conftest import base_gke, base_kind, with_changes
from tests.support.teams import TEAM, objects_of


def test_cluster_queue_quotas_per_pool_flavor_and_cohort() -> None:
    team = {**TEAM, "cohort": "research"}
    pools = [
        {"name": "l4-spot", "accelerator": "nvidia-l4", "machineType": "g2-standard-24", "max": 2, "provisioning": "spot"},
        {"name": "l4", "accelerator": "nvidia-l4", "machineType": "g2-standard-24", "max": 2},
    ]
    raw = with_changes(
        base_gke(),
        {
            "mlplatform:teams": [team],
            "mlplatform:cluster.gpuPools": pools,
            "mlplatform:cluster.autoprovisioning.limits.nvidia-l4": 24,  # 2 pools x 2 nodes x 2 GPUs x 3 zones
            # and with the system pool they take 360 vCPUs and 1440 GiB
            "mlplatform:cluster.autoprovisioning.limits.cpu": 512,
            "mlplatform:cluster.autoprovisioning.limits.memory": 2048,
        },
    )
    queue = objects_of(raw)[("ClusterQueue", "vision")]["spec"]
    assert queue["cohortName"] == "research"
    assert queue["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "vision"}}
    (group,) = queue["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]
    # 64 CPUs and 256Gi between the default flavor and the one pool with GPUs (l4-spot: the
    # accelerator's first pool), half each: its 8 GPUs fill 4 g2-standard-24 nodes, far more.
    assert group["flavors"] == [
        {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "32"}, {"name": "memory", "nominalQuota": "128Gi"}, {"name": "nvidia.com/gpu", "nominalQuota": 0}]},
        {"name": "l4-spot", "resources": [{"name": "cpu", "nominalQuota": "32"}, {"name": "memory", "nominalQuota": "128Gi"}, {"name": "nvidia.com/gpu", "nominalQuota": 8}]},
        {"name": "l4", "resources": [{"name": "cpu", "nominalQuota": "0"}, {"name": "memory", "nominalQuota": "0"}, {"name": "nvidia.com/gpu", "nominalQuota": 0}]},
    ]


def test_a_pool_flavor_takes_no_more_cpu_and_memory_than_the_nodes_its_gpus_fill() -> None:
    # 2 L4 GPUs fill one g2-standard-24 node: GKE leaves 23.87 CPUs (24 less 6%, 1%, 2 x 0.5%
    # and 20 x 0.25% of a core) and 88.5Gi (96Gi less 7.4Gi and the 100Mi eviction threshold)
    # to pods; rounded down to whole CPUs and GiB, the rest of the team's quota stays default.
    team = {**TEAM, "quota": {"gpus": {"nvidia-l4": 2}, "cpu": "64", "memory": "256Gi"}}
    queue = objects_of(with_changes(base_gke(), {"mlplatform:teams": [team]}))[("ClusterQueue", "vision")]["spec"]
    (group,) = queue["resourceGroups"]
    assert group["flavors"] == [
        {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "41"}, {"name": "memory", "nominalQuota": "168Gi"}, {"name": "nvidia.com/gpu", "nominalQuota": 0}]},
        {"name": "l4", "resources": [{"name": "cpu", "nominalQuota": "23"}, {"name": "memory", "nominalQuota": "88Gi"}, {"name": "nvidia.com/gpu", "nominalQuota": 2}]},
    ]


def test_without_gpu_pools_the_queue_covers_cpu_and_memory_on_the_default_flavor() -> None:
    queue = objects_of(with_changes(base_kind(), {"mlplatform:teams": [{**TEAM, "quota": {"cpu": "8", "memory": "32Gi"}}]}))[("ClusterQueue", "vision")]["spec"]
    assert queue["resourceGroups"] == [
        {"coveredResources": ["cpu", "memory"], "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "8"}, {"name": "memory", "nominalQuota": "32Gi"}]}]}
    ]


@pytest.mark.parametrize("stack", ["dev", "prod", "dev-fabric", "dev-groups", "dev-shared-vpc", "kind"])
def test_each_teams_flavor_parts_add_up_to_the_quota_its_stack_file_says(stack: str) -> None:
    config = load(stack)
    for team in config.teams:
        queue = cluster_queue(team_args(config, team))
        totals: dict[str, Decimal] = {}
        for flavor in queue["spec"]["resourceGroups"][0]["flavors"]:
            for resource in flavor["resources"]:
                totals[resource["name"]] = totals.get(resource["name"], Decimal(0)) + quantity.parse(str(resource["nominalQuota"]))
        assert totals["cpu"] == quantity.parse(team.quota.cpu), (stack, team.name)
        assert totals["memory"] == quantity.parse(team.quota.memory), (stack, team.name)
        assert totals.get("nvidia.com/gpu", Decimal(0)) == sum(team.quota.gpus.values()), (stack, team.name)


def test_default_local_queue_and_network_isolation() -> None:
    objects = objects_of(with_changes(base_kind(), {"mlplatform:teams": [{**TEAM, "quota": {}}]}))
    assert objects[("LocalQueue", "default")]["spec"] == {"clusterQueue": "vision"}
    assert objects[("LocalQueue", "default")]["metadata"]["namespace"] == "vision"
    same = objects[("NetworkPolicy", "allow-same-namespace")]["spec"]
    assert same["ingress"] == [{"from": [{"podSelector": {}}]}]
    platform = objects[("NetworkPolicy", "allow-platform-namespaces")]["spec"]["ingress"][0]["from"]
    namespaces = {s["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] for s in platform}
    assert {"istio-system", "kubeflow"} <= namespaces and "default" not in namespaces

