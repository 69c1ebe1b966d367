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

H100_QUEUED = {"name": "h100", "accelerator": "nvidia-h100-80gb", "machineType": "a3-highgpu-8g", "max": 2, "provisioning": "queued"}
"""A topology-aware pool (GKE's topology labels on A3, queued: stackmodel/schema/pools.py)."""


def test_without_a_topology_aware_pool_cpu_and_memory_stay_whole_on_default_and_gpus_have_a_group_of_their_own() -> None:
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
    # The team's 64 CPUs and 256Gi whole on `default`, where every pod takes them; its 8 L4s on
    # l4-spot (the accelerator's first pool), none of its own on l4.
    assert queue["resourceGroups"] == [
        {"coveredResources": ["cpu", "memory"], "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "64"}, {"name": "memory", "nominalQuota": "256Gi"}]}]},
        {
            "coveredResources": ["nvidia.com/gpu"],
            "flavors": [
                {"name": "l4-spot", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]},
                {"name": "l4", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 0}]},
            ],
        },
    ]


def test_with_a_topology_aware_pool_cpu_and_memory_are_split_among_the_flavors_of_one_group() -> None:
    team = {**TEAM, "quota": {"gpus": {"nvidia-l4": 8, "nvidia-h100-80gb": 8}, "cpu": "64", "memory": "256Gi"}}
    pools = [{"name": "l4", "accelerator": "nvidia-l4", "machineType": "g2-standard-24", "max": 4}, H100_QUEUED]
    raw = with_changes(base_gke(), {"mlplatform:teams": [team], "mlplatform:cluster.gpuPools": pools, "mlplatform:cluster.autoprovisioning.enabled": False})
    (group,) = objects_of(raw)[("ClusterQueue", "vision")]["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]
    # A third each: 21 CPUs and 85Gi per pool flavor (rounded down), the rest on default.
    assert group["flavors"] == [
        {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "22"}, {"name": "memory", "nominalQuota": "86Gi"}, {"name": "nvidia.com/gpu", "nominalQuota": 0}]},
        {"name": "l4", "resources": [{"name": "cpu", "nominalQuota": "21"}, {"name": "memory", "nominalQuota": "85Gi"}, {"name": "nvidia.com/gpu", "nominalQuota": 8}]},
        {"name": "h100", "resources": [{"name": "cpu", "nominalQuota": "21"}, {"name": "memory", "nominalQuota": "85Gi"}, {"name": "nvidia.com/gpu", "nominalQuota": 8}]},
    ]


def test_a_pool_flavor_takes_no_more_cpu_and_memory_than_the_nodes_its_gpus_fill() -> None:
    # Split (a topology-aware pool): 2 L4 GPUs fill one g2-standard-24 node: GKE leaves 23.87
    # CPUs (24 less 6%, 1%, 2 x 0.5% and 20 x 0.25% of a core) and 88.5Gi (96Gi less 7.4Gi and
    # the 100Mi eviction threshold) to pods; rounded down to whole CPUs and GiB, the rest of the
    # team's quota stays with the others.
    team = {**TEAM, "quota": {"gpus": {"nvidia-l4": 2, "nvidia-h100-80gb": 8}, "cpu": "96", "memory": "384Gi"}}
    pools = [{"name": "l4", "accelerator": "nvidia-l4", "machineType": "g2-standard-24", "max": 4}, H100_QUEUED]
    raw = with_changes(base_gke(), {"mlplatform:teams": [team], "mlplatform:cluster.gpuPools": pools, "mlplatform:cluster.autoprovisioning.enabled": False})
    (group,) = objects_of(raw)[("ClusterQueue", "vision")]["spec"]["resourceGroups"]
    assert group["flavors"][1] == {"name": "l4", "resources": [{"name": "cpu", "nominalQuota": "23"}, {"name": "memory", "nominalQuota": "88Gi"}, {"name": "nvidia.com/gpu", "nominalQuota": 2}]}


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
        for group in queue["spec"]["resourceGroups"]:
            for flavor in group["flavors"]:
                for resource in flavor["resources"]:
                    totals[resource["name"]] = totals.get(resource["name"], Decimal(0)) + quantity.parse(str(resource["nominalQuota"]))
        assert totals["cpu"] == quantity.parse(team.quota.cpu), (stack, team.name)
        assert totals["memory"] == quantity.parse(team.quota.memory), (stack, team.name)
        assert totals.get("nvidia.com/gpu", Decimal(0)) == sum(team.quota.gpus.values()), (stack, team.name)


# --- reclaim, fair sharing and priorities ----------------------------------------------------------
# The preemption block Kueue's own fair-sharing tests give their queues (kueue v0.19.2
# pkg/scheduler/preemption/preemption_fair_test.go "CQ with higher weight can preempt more",
# "reclaim nominal from user using the most": WithinClusterQueue LowerPriority, ReclaimWithinCohort
# Any, and the weight as FairWeight).
KUEUE_FAIR_SHARING_TESTS_PREEMPTION = {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}


def test_a_team_in_a_cohort_reclaims_what_it_lent_and_shares_by_its_weight() -> None:
    teams = [{**TEAM, "cohort": "research", "weight": 2}, {**TEAM, "name": "nlp", "owner": "lead@acme.com", "cohort": "research"}]
    objects = objects_of(with_changes(base_gke(), {"mlplatform:teams": teams}))
    vision = objects[("ClusterQueue", "vision")]["spec"]
    assert vision["preemption"] == KUEUE_FAIR_SHARING_TESTS_PREEMPTION
    assert vision["fairSharing"] == {"weight": "2"}
    nlp = objects_of(with_changes(base_gke(), {"mlplatform:teams": teams}), team="nlp")[("ClusterQueue", "nlp")]["spec"]
    assert nlp["fairSharing"] == {"weight": "1"}  # the stack's default, written out


@pytest.mark.parametrize(("weight", "text"), [("0.5", "0.5"), (100, "100"), (0, "0"), ("1.250", "1.25")])
def test_a_weight_is_written_as_the_quantity_kueue_parses(weight: object, text: str) -> None:
    teams = [{**TEAM, "cohort": "research", "weight": weight}]
    assert objects_of(with_changes(base_gke(), {"mlplatform:teams": teams}))[("ClusterQueue", "vision")]["spec"]["fairSharing"] == {"weight": text}


def test_without_fair_sharing_a_borrower_may_preempt_only_preemptible_work_of_other_teams() -> None:
    """Kueue's classic preemption: borrowWithinCohort, which it ignores under fair sharing
    (clusterqueue_types.go BorrowWithinCohort: "only works with Classical Preemption")."""
    teams = [{**TEAM, "cohort": "research"}]
    raw = with_changes(base_gke(), {"mlplatform:teams": teams, "mlplatform:components.kueue": {"fairSharing": False}})
    spec = objects_of(raw)[("ClusterQueue", "vision")]["spec"]
    assert spec["preemption"] == {**KUEUE_FAIR_SHARING_TESTS_PREEMPTION, "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": -100}}
    assert "fairSharing" not in spec


def test_a_team_alone_still_lets_its_interactive_work_preempt_its_batch_work() -> None:
    spec = objects_of(with_changes(base_gke(), {"mlplatform:teams": [TEAM]}))[("ClusterQueue", "vision")]["spec"]
    assert spec["preemption"]["withinClusterQueue"] == "LowerPriority" and "fairSharing" not in spec and "cohortName" not in spec


def test_default_local_queue_and_network_isolation() -> None:
    objects = objects_of(with_changes(base_kind(), {"mlplatform:teams": [{**TEAM, "quota": {}}]}))
    assert objects[("LocalQueue", "default")]["spec"] == {"clusterQueue": "vision"}
    assert objects[("LocalQueue", "default")]["metadata"]["namespace"] == "vision"
    same = objects[("NetworkPolicy", "allow-same-namespace")]["spec"]
    assert same["ingress"] == [{"from": [{"podSelector": {}}]}]
    platform = objects[("NetworkPolicy", "allow-platform-namespaces")]["spec"]["ingress"][0]["from"]
    namespaces = {s["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] for s in platform}
    assert {"istio-system", "kubeflow"} <= namespaces and "default" not in namespaces

