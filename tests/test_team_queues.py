"""A team's Kueue queues (components/profiles/queues.py): quota per pool flavor, the `default` LocalQueue."""

from __future__ import annotations

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
    cpu_group, gpu_group = queue["resourceGroups"]
    assert cpu_group["coveredResources"] == ["cpu", "memory"]
    assert cpu_group["flavors"] == [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "64"}, {"name": "memory", "nominalQuota": "256Gi"}]}]
    assert gpu_group["coveredResources"] == ["nvidia.com/gpu"]
    assert gpu_group["flavors"] == [
        {"name": "l4-spot", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]},
        {"name": "l4", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 0}]},
    ]


def test_default_local_queue_and_network_isolation() -> None:
    objects = objects_of(with_changes(base_kind(), {"mlplatform:teams": [{**TEAM, "quota": {}}]}))
    assert objects[("LocalQueue", "default")]["spec"] == {"clusterQueue": "vision"}
    assert objects[("LocalQueue", "default")]["metadata"]["namespace"] == "vision"
    same = objects[("NetworkPolicy", "allow-same-namespace")]["spec"]
    assert same["ingress"] == [{"from": [{"podSelector": {}}]}]
    platform = objects[("NetworkPolicy", "allow-platform-namespaces")]["spec"]["ingress"][0]["from"]
    namespaces = {s["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] for s in platform}
    assert {"istio-system", "kubeflow"} <= namespaces and "default" not in namespaces

