"""The GKE stacks, planned under mocks: what a GKE engineer expects to find, with its key inputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tooling.plan import Plan

CLUSTER = "gcp:container/cluster:Cluster"
POOL = "gcp:container/nodePool:NodePool"


def _pools(plan: Plan) -> dict[str, dict[str, Any]]:
    return {r.inputs["name"]: r.inputs for r in plan.of_type(POOL)}


def test_dev_cluster_core_settings(shipped_plan: Callable[[str], Plan]) -> None:
    cluster = shipped_plan("dev").one(CLUSTER, "ml-dev").inputs
    assert cluster["removeDefaultNodePool"] is True
    assert cluster["releaseChannel"] == {"channel": "REGULAR"}
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "acme-ml-dev.svc.id.goog"}
    assert cluster["datapathProvider"] == "ADVANCED_DATAPATH"
    assert cluster["enableShieldedNodes"] is True
    assert cluster["privateClusterConfig"]["enablePrivateNodes"] is True
    assert cluster["privateClusterConfig"]["masterIpv4CidrBlock"] == "172.16.0.0/28"
    assert cluster["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}
    assert cluster["gatewayApiConfig"] == {"channel": "CHANNEL_STANDARD"}
    assert cluster["nodePoolDefaults"]["nodeConfigDefaults"]["gcfsConfig"] == {"enabled": True}
    assert cluster["deletionProtection"] is False
    assert cluster["ipAllocationPolicy"] == {
        "clusterSecondaryRangeName": "pods",
        "servicesSecondaryRangeName": "services",
    }


def test_dev_autoprovisioning_limits_use_accelerator_names(shipped_plan: Callable[[str], Plan]) -> None:
    autoscaling = shipped_plan("dev").one(CLUSTER, "ml-dev").inputs["clusterAutoscaling"]
    assert autoscaling["enabled"] is True
    limits = {limit["resourceType"]: limit["maximum"] for limit in autoscaling["resourceLimits"]}
    assert limits == {"cpu": 512, "memory": 2048, "nvidia-l4": 24}
    defaults = autoscaling["autoProvisioningDefaults"]
    assert defaults["serviceAccount"] == "ml-dev-nodes@acme-ml-dev.iam.gserviceaccount.com"
    assert defaults["shieldedInstanceConfig"] == {"enableIntegrityMonitoring": True, "enableSecureBoot": True}
    assert defaults["upgradeSettings"]["strategy"] == "SURGE"


def test_dev_spot_l4_pool_scales_from_zero_with_gpu_taint(shipped_plan: Callable[[str], Plan]) -> None:
    l4 = _pools(shipped_plan("dev"))["l4"]
    assert l4["autoscaling"]["minNodeCount"] == 0 and l4["autoscaling"]["maxNodeCount"] == 4
    node = l4["nodeConfig"]
    assert node["spot"] is True
    assert node["machineType"] == "g2-standard-24"
    assert node["guestAccelerators"] == [
        {"type": "nvidia-l4", "count": 2, "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}
    ]
    assert node["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
    assert node["labels"] == {"mlplatform.dev/gpu-pool": "l4"}
    assert node["gvnic"] == {"enabled": True}
    assert node["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}


def test_system_pool_is_small_and_gpu_free(shipped_plan: Callable[[str], Plan]) -> None:
    system = _pools(shipped_plan("dev"))["system"]
    assert system["autoscaling"] == {"minNodeCount": 1, "maxNodeCount": 3}
    assert "guestAccelerators" not in system["nodeConfig"]


def test_prod_is_private_authorized_and_protected(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("prod")
    cluster_resource = plan.one(CLUSTER, "ml-prod")
    cluster = cluster_resource.inputs
    assert cluster["deletionProtection"] is True
    assert cluster["releaseChannel"] == {"channel": "STABLE"}
    cidrs = [b["cidrBlock"] for b in cluster["masterAuthorizedNetworksConfig"]["cidrBlocks"]]
    assert cidrs == ["203.0.113.0/24", "198.51.100.0/27"]


def test_prod_h100_queued_compact_pool(shipped_plan: Callable[[str], Plan]) -> None:
    h100 = _pools(shipped_plan("prod"))["h100"]
    assert h100["queuedProvisioning"] == {"enabled": True}
    assert h100["placementPolicy"] == {"type": "COMPACT"}
    assert h100["nodeLocations"] == ["us-central1-a"]
    assert h100["autoscaling"]["locationPolicy"] == "ANY"
    assert h100["management"]["autoRepair"] is False
    node = h100["nodeConfig"]
    assert node["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert node["guestAccelerators"][0]["count"] == 8
    assert node["fastSocket"] == {"enabled": True}
    assert node["spot"] is False


def test_queued_pool_is_flex_start_with_queued_provisioning(shipped_plan: Callable[[str], Plan]) -> None:
    # GKE: "To use flex-start with queued provisioning, you have to add the --flex-start and
    # --enable-queued-provisioning flags when you create the node pool"
    # (cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest); pulumi-gcp 10.2.0
    # spells them nodeConfig.flexStart and queuedProvisioning.enabled.
    h100 = _pools(shipped_plan("prod"))["h100"]
    assert h100["nodeConfig"]["flexStart"] is True
    assert h100["queuedProvisioning"] == {"enabled": True}
    assert "flexStart" not in _pools(shipped_plan("prod"))["l4"]["nodeConfig"]


def test_prod_l4_on_demand(shipped_plan: Callable[[str], Plan]) -> None:
    l4 = _pools(shipped_plan("prod"))["l4"]
    assert l4["nodeConfig"]["spot"] is False
    assert "queuedProvisioning" not in l4


def test_private_cluster_has_nat_and_webhook_firewall(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("dev")
    nat = plan.of_type("gcp:compute/routerNat:RouterNat")
    assert len(nat) == 1 and nat[0].inputs["sourceSubnetworkIpRangesToNat"] == "ALL_SUBNETWORKS_ALL_IP_RANGES"
    firewall = plan.one("gcp:compute/firewall:Firewall", "ml-dev-webhooks").inputs
    assert firewall["sourceRanges"] == ["172.16.0.0/28"]
    # 4443: Kubeflow's PodDefaults webhook (applications/dashboard/upstream/poddefaults-webhooks/base/deployment.yaml).
    assert firewall["allows"] == [{"protocol": "tcp", "ports": ["4443", "6443", "8082", "8443", "9443", "15017"]}]
    node_tags = {tuple(p.inputs["nodeConfig"]["tags"]) for p in plan.of_type(POOL)}
    assert node_tags == {tuple(firewall["targetTags"])}


def test_public_cluster_has_no_nat_or_firewall(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    from tests.conftest import base_gke, with_changes

    plan = plan_of(with_changes(base_gke(), {"mlplatform:cluster.privateNodes": False}))
    assert plan.of_type("gcp:compute/routerNat:RouterNat") == []
    assert plan.of_type("gcp:compute/firewall:Firewall") == []


def test_subnet_has_pod_and_service_ranges(shipped_plan: Callable[[str], Plan]) -> None:
    subnet = shipped_plan("dev").of_type("gcp:compute/subnetwork:Subnetwork")[0].inputs
    assert subnet["privateIpGoogleAccess"] is True
    assert [r["rangeName"] for r in subnet["secondaryIpRanges"]] == ["pods", "services"]


def test_node_service_account_is_least_privilege(shipped_plan: Callable[[str], Plan]) -> None:
    roles = sorted(r.inputs["role"] for r in shipped_plan("dev").of_type("gcp:projects/iAMMember:IAMMember"))
    assert "roles/editor" not in roles and "roles/owner" not in roles
    assert "roles/logging.logWriter" in roles and "roles/monitoring.metricWriter" in roles


def test_pools_ignore_server_normalised_fields() -> None:
    from infra.gke import SERVER_NORMALISED_POOL_FIELDS

    assert "nodeConfig.kubeletConfig" in SERVER_NORMALISED_POOL_FIELDS


def test_gpu_sharing_variants(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    from tests.conftest import base_gke, with_changes

    pools = [
        {"name": "ts", "accelerator": "nvidia-l4", "machineType": "g2-standard-8", "max": 1,
         "sharing": {"strategy": "time-sharing", "maxSharedClients": 4}},
        {"name": "mig", "accelerator": "nvidia-h100-80gb", "machineType": "a3-highgpu-8g", "max": 1,
         "sharing": {"strategy": "mig", "partitionSize": "1g.10gb"}, "driverVersion": "DEFAULT"},
        {"name": "res", "accelerator": "nvidia-l4", "machineType": "g2-standard-8", "max": 1,
         "provisioning": "reservation", "reservation": "l4-res"},
        {"name": "flex", "accelerator": "nvidia-h100-80gb", "machineType": "a3-highgpu-8g", "max": 1,
         "provisioning": "flex-start"},
    ]
    raw = with_changes(base_gke(), {"mlplatform:cluster.gpuPools": pools, "mlplatform:cluster.autoprovisioning": {"enabled": False}})
    found = _pools(plan_of(raw))
    ts = found["ts"]["nodeConfig"]["guestAccelerators"][0]
    assert ts["gpuSharingConfig"] == {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4}
    mig = found["mig"]["nodeConfig"]["guestAccelerators"][0]
    assert mig["gpuPartitionSize"] == "1g.10gb" and "gpuSharingConfig" not in mig
    assert mig["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "DEFAULT"}
    assert found["res"]["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["l4-res"],
    }
    assert found["flex"]["nodeConfig"]["flexStart"] is True
    assert "queuedProvisioning" not in found["flex"]


def test_kubeconfig_is_a_secret_and_feeds_the_one_provider(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("dev")
    providers = plan.of_type("pulumi:providers:kubernetes")
    assert len(providers) == 1
    assert providers[0].inputs["kubeconfig"] == "[secret]"
    assert plan.outputs["kubeconfig"] == "[secret]"


def test_gke_kubeconfig_uses_the_auth_plugin() -> None:
    import yaml

    from infra.cluster import gke_kubeconfig

    config = yaml.safe_load(gke_kubeconfig("c", "203.0.113.1", "Q0E="))
    assert config["clusters"][0]["cluster"]["server"] == "https://203.0.113.1"
    assert config["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
    assert "token" not in config["users"][0]["user"]


def test_gke_managed_dcgm_only_when_chosen(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    from tests.conftest import base_gke, with_changes

    def components(changes: dict[str, Any]) -> list[str]:
        cluster = plan_of(with_changes(base_gke(), changes)).of_type(CLUSTER)[0].inputs
        return cluster["monitoringConfig"]["enableComponents"]

    assert components({}) == ["SYSTEM_COMPONENTS"]
    # managed Prometheus with NVIDIA's chart: GKE must not run a second exporter
    assert components({"mlplatform:cluster.managedPrometheus": True}) == ["SYSTEM_COMPONENTS", "JOBSET"]
    managed = {
        "mlplatform:cluster.managedPrometheus": True,
        "mlplatform:components.monitoring": {"backend": "gke-managed"},
        "mlplatform:components.dcgmExporter": {"source": "gke-managed"},
    }
    assert components(managed) == ["SYSTEM_COMPONENTS", "JOBSET", "DCGM"]


REPOSITORY = "gcp:artifactregistry/repository:Repository"
REPOSITORY_MEMBER = "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember"


def test_gke_stacks_get_a_docker_repository_the_nodes_pull_from(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("dev")
    repository = plan.one(REPOSITORY, "ml-dev-images")
    assert {k: repository.inputs[k] for k in ("project", "location", "repositoryId", "format")} == {
        "project": "acme-ml-dev",
        "location": "us-central1",
        "repositoryId": "ml-dev",
        "format": "DOCKER",
    }
    assert not repository.protect and shipped_plan("prod").one(REPOSITORY, "ml-prod-images").protect
    members = {(r.inputs["role"], r.inputs["member"]) for r in plan.of_type(REPOSITORY_MEMBER)}
    assert members == {
        ("roles/artifactregistry.reader", "serviceAccount:ml-dev-nodes@acme-ml-dev.iam.gserviceaccount.com"),
        ("roles/artifactregistry.writer", "serviceAccount:notebook-images@acme-ml-dev.iam.gserviceaccount.com"),
        # stacks/Pulumi.dev.yaml: team vision has pushImages
        ("roles/artifactregistry.writer", "serviceAccount:team-vision@acme-ml-dev.iam.gserviceaccount.com"),
    }
    assert all(r.inputs["repository"] == "ml-dev" and r.inputs["location"] == "us-central1" for r in plan.of_type(REPOSITORY_MEMBER))
    assert plan.outputs["imageRegistry"] == "us-central1-docker.pkg.dev/acme-ml-dev/ml-dev"


def test_the_repository_is_the_stacks_to_name_or_switch_off(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    from tests.conftest import base_gke, with_changes

    named = plan_of(with_changes(base_gke(), {"mlplatform:cluster.imageRegistry": {"name": "images", "location": "europe"}}))
    assert named.one(REPOSITORY, "ml-test-images").inputs["repositoryId"] == "images"
    assert named.outputs["imageRegistry"] == "europe-docker.pkg.dev/acme-test/images"
    off = {"mlplatform:cluster.imageRegistry": {"enabled": False}, "mlplatform:components.kubeflow": {"enabled": False}}
    plan = plan_of(with_changes(base_gke(), off))
    assert plan.of_type(REPOSITORY) == [] and "imageRegistry" not in plan.outputs


# --- boot disks: A3 Ultra and A4 take no Persistent Disk (facts/gpu_catalog.py BOOT_DISK_TYPES) ---


def test_a4_pool_boots_from_hyperdisk_balanced_and_others_keep_gkes_default(shipped_plan: Callable[[str], Plan]) -> None:
    pools = _pools(shipped_plan("dev-fabric"))
    assert pools["b200"]["nodeConfig"]["machineType"] == "a4-highgpu-8g"
    assert pools["b200"]["nodeConfig"]["diskType"] == "hyperdisk-balanced"
    assert pools["h100"]["nodeConfig"]["machineType"] == "a3-megagpu-8g"
    assert "diskType" not in pools["h100"]["nodeConfig"]  # A3 Mega boots from GKE's pd-balanced
    assert "diskType" not in pools["system"]["nodeConfig"]


@pytest.mark.parametrize(
    ("accelerator", "machine_type", "disk_type"),
    [
        ("nvidia-h200-141gb", "a3-ultragpu-8g", "hyperdisk-balanced"),
        ("nvidia-b200", "a4-highgpu-8g", "hyperdisk-balanced"),
        ("nvidia-h100-80gb", "a3-highgpu-8g", None),
        ("nvidia-tesla-a100", "a2-highgpu-1g", None),
        ("nvidia-l4", "g2-standard-8", None),
    ],
)
def test_gpu_pool_boot_disk_type(accelerator: str, machine_type: str, disk_type: str | None) -> None:
    import pulumi_gcp as gcp

    from infra.gke import gpu_pool_args
    from stackmodel.config import validate
    from stackmodel.schema import GkeClusterConfig
    from tests.conftest import base_gke, with_changes

    pool = {"name": "p", "accelerator": accelerator, "machineType": machine_type, "max": 1}
    config = validate(
        with_changes(base_gke(), {"mlplatform:cluster.gpuPools": [pool], "mlplatform:cluster.autoprovisioning": {"enabled": False}}),
        "ok",
    )
    cluster = config.cluster
    assert isinstance(cluster, GkeClusterConfig)
    args = gpu_pool_args(cluster, cluster.gpu_pools[0], "ml-test", "nodes@acme-test.iam.gserviceaccount.com")
    node = args.node_config
    assert isinstance(node, gcp.container.NodePoolNodeConfigArgs)
    assert node.disk_type == disk_type
