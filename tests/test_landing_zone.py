"""A company landing zone without code changes: the dev-like stack of tests/stacks/
Pulumi.dev-shared-vpc.yaml (an existing Shared VPC network, a maintenance window and
exclusion, secrets encrypted with a Cloud KMS key, a pool's own labels and taint, a Kueue
chart value) plans without a network of its own, renders and checks clean, and each of
those settings reaches the resource that carries it."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from components.dcgm import dcgm_exporter_args, dcgm_exporter_values
from components.gateway import GATEWAY_PORTS, GOOGLE_LB_RANGES
from components.inference_gateway import BACKEND_PORTS
from infra.gke import CONTROL_PLANE_TARGET_PORTS
from plumbing.base import overlay_values
from stackmodel.config import load
from tests.conftest import base_gke, with_changes
from tests.support import mirror
from tooling.plan import MOCK_PROJECT_NUMBER, Plan, evaluate

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "stacks" / "Pulumi.dev-shared-vpc.yaml"
HOST = "acme-net-host"
NETWORK = f"projects/{HOST}/global/networks/shared-vpc"
SUBNETWORK = f"projects/{HOST}/regions/us-central1/subnetworks/ml-dev-us-central1"
GKE_AGENT = f"serviceAccount:service-{MOCK_PROJECT_NUMBER}@container-engine-robot.iam.gserviceaccount.com"
APIS_AGENT = f"serviceAccount:{MOCK_PROJECT_NUMBER}@cloudservices.gserviceaccount.com"
C = "mlplatform:cluster"
CLUSTER = "gcp:container/cluster:Cluster"
FIREWALL = "gcp:compute/firewall:Firewall"
SUBNET_IAM = "gcp:compute/subnetworkIAMMember:SubnetworkIAMMember"
PROJECT_IAM = "gcp:projects/iAMMember:IAMMember"
KEY_IAM = "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember"
CREATED_NETWORK = {
    "gcp:compute/network:Network",
    "gcp:compute/subnetwork:Subnetwork",
    "gcp:compute/router:Router",
    "gcp:compute/routerNat:RouterNat",
}
EXISTING = {"network": "shared-vpc", "subnetwork": "ml-us-central1", "podsRange": "pods-a", "servicesRange": "services-a"}


@cache
def landing_zone() -> Plan:
    return evaluate(load(str(FIXTURE)), "dev-shared-vpc")


def test_the_stack_creates_no_network_subnet_router_or_nat(shipped_plan: Callable[[str], Plan]) -> None:
    assert {r.type for r in shipped_plan("dev").resources} >= CREATED_NETWORK  # the dev stack makes its own
    assert {r.type for r in landing_zone().resources} & CREATED_NETWORK == set()


def test_the_cluster_is_on_the_host_projects_subnet_and_its_named_ranges() -> None:
    cluster = landing_zone().one(CLUSTER, "ml-dev").inputs
    assert (cluster["network"], cluster["subnetwork"]) == (NETWORK, SUBNETWORK)
    assert cluster["networkingMode"] == "VPC_NATIVE"
    assert cluster["ipAllocationPolicy"] == {
        "clusterSecondaryRangeName": "ml-dev-pods",
        "servicesSecondaryRangeName": "ml-dev-services",
    }
    assert cluster["privateClusterConfig"]["masterIpv4CidrBlock"] == "172.16.8.0/28"


def test_the_service_projects_agents_get_the_host_projects_roles_before_the_cluster() -> None:
    plan = landing_zone()
    subnet = {(r.inputs["member"], r.inputs["role"]) for r in plan.of_type(SUBNET_IAM)}
    assert subnet == {(GKE_AGENT, "roles/compute.networkUser"), (APIS_AGENT, "roles/compute.networkUser")}
    assert {(r.inputs["project"], r.inputs["region"], r.inputs["subnetwork"]) for r in plan.of_type(SUBNET_IAM)} == {
        (HOST, "us-central1", "ml-dev-us-central1")
    }
    host = [r.inputs for r in plan.of_type(PROJECT_IAM) if r.inputs["project"] == HOST]
    assert host == [{"project": HOST, "role": "roles/container.hostServiceAgentUser", "member": GKE_AGENT}]
    bindings = {r.urn for r in plan.of_type(SUBNET_IAM)} | {r.urn for r in plan.of_type(PROJECT_IAM) if r.inputs["project"] == HOST}
    assert bindings <= set(plan.one(CLUSTER, "ml-dev").dependencies)


def test_the_firewall_rules_are_made_in_the_host_project() -> None:
    rules = {r.name: r.inputs for r in landing_zone().of_type(FIREWALL)}
    assert set(rules) == {"ml-dev-webhooks", "kubeflow-https-health-checks", "inference-gateway-backends"}
    assert {(r["project"], r["network"]) for r in rules.values()} == {(HOST, NETWORK)}
    assert rules["ml-dev-webhooks"]["sourceRanges"] == ["172.16.8.0/28"]
    # The load balancer's ranges to the gateway's ports: what GKE's Ingress controller opens itself in its own project.
    assert rules["kubeflow-https-health-checks"]["sourceRanges"] == ["130.211.0.0/22", "35.191.0.0/16"]
    assert rules["kubeflow-https-health-checks"]["allows"] == [{"protocol": "tcp", "ports": ["8080", "8443", "15021"]}]
    # GKE Inference Gateway: the host project's proxy-only subnet (the stack names it) and the health checkers to the LLM pods.
    assert rules["inference-gateway-backends"]["sourceRanges"] == ["10.129.0.0/23", "130.211.0.0/22", "35.191.0.0/16"]
    assert rules["inference-gateway-backends"]["allows"] == [{"protocol": "tcp", "ports": ["8000", "9002", "9003"]}]
    assert {tuple(r["targetTags"]) for r in rules.values()} == {("ml-dev-node",)}


def test_the_host_projects_admins_may_keep_its_iam_and_firewall_rules(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    existing = {**EXISTING, "hostProject": HOST, "manageHostProject": False}
    plan = plan_of(with_changes(base_gke(), {f"{C}.network": {"existing": existing}}))
    assert plan.of_type(SUBNET_IAM) == [] and plan.of_type(FIREWALL) == []
    assert [r for r in plan.of_type(PROJECT_IAM) if r.inputs["project"] == HOST] == []
    assert plan.one(CLUSTER, "ml-test").inputs["network"] == NETWORK


def test_an_existing_network_of_the_stacks_own_project(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    plan = plan_of(with_changes(base_gke(), {f"{C}.network": {"existing": EXISTING}}))
    assert plan.one(CLUSTER, "ml-test").inputs["network"] == "projects/acme-test/global/networks/shared-vpc"
    assert plan.of_type(SUBNET_IAM) == [] and {r.type for r in plan.resources} & CREATED_NETWORK == set()
    (webhooks,) = plan.of_type(FIREWALL)
    assert "project" not in webhooks.inputs  # the provider's, the stack's project


def test_the_maintenance_window_and_exclusion_reach_the_cluster() -> None:
    assert landing_zone().one(CLUSTER, "ml-dev").inputs["maintenancePolicy"] == {
        "recurringWindow": {
            "startTime": "2026-01-03T02:00:00Z",
            "endTime": "2026-01-03T08:00:00Z",
            "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU",
        },
        "maintenanceExclusions": [
            {
                "exclusionName": "year-end-freeze",
                "startTime": "2026-12-19T00:00:00Z",
                "endTime": "2027-01-04T00:00:00Z",
                "exclusionOptions": {"scope": "NO_UPGRADES"},
            }
        ],
    }


def test_an_exclusion_until_the_end_of_support(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    window = {"start": "2026-01-05T01:00:00Z", "end": "2026-01-05T05:00:00Z", "recurrence": "FREQ=DAILY"}
    exclusion = {"name": "campaign", "start": "2026-03-01T00:00:00Z", "untilEndOfSupport": True, "scope": "NO_MINOR_UPGRADES"}
    plan = plan_of(with_changes(base_gke(), {f"{C}.maintenance": {"window": window, "exclusions": [exclusion]}}))
    (sent,) = plan.one(CLUSTER, "ml-test").inputs["maintenancePolicy"]["maintenanceExclusions"]
    assert "endTime" not in sent
    assert sent["exclusionOptions"] == {"scope": "NO_MINOR_UPGRADES", "endTimeBehavior": "UNTIL_END_OF_SUPPORT"}


def test_secrets_are_encrypted_with_the_key_gke_is_allowed_to_use() -> None:
    plan = landing_zone()
    key = "projects/acme-security/locations/us-central1/keyRings/gke/cryptoKeys/ml-dev-secrets"
    assert plan.one(CLUSTER, "ml-dev").inputs["databaseEncryption"] == {"state": "ENCRYPTED", "keyName": key}
    grant = plan.one(KEY_IAM, "ml-dev-secrets-key")
    assert grant.inputs == {
        "cryptoKeyId": "acme-security/us-central1/gke/ml-dev-secrets",
        "role": "roles/cloudkms.cryptoKeyEncrypterDecrypter",
        "member": GKE_AGENT,
    }
    assert grant.urn in plan.one(CLUSTER, "ml-dev").dependencies


def test_the_keys_admins_may_grant_its_use(plan_of: Callable[[dict[str, Any]], Plan], shipped_plan: Callable[[str], Plan]) -> None:
    key = "projects/acme-sec/locations/us-central1/keyRings/gke/cryptoKeys/ml"
    plan = plan_of(with_changes(base_gke(), {f"{C}.secretsEncryption": {"key": key, "grantKeyAccess": False}}))
    assert plan.one(CLUSTER, "ml-test").inputs["databaseEncryption"]["keyName"] == key
    assert plan.of_type(KEY_IAM) == []
    assert "databaseEncryption" not in shipped_plan("dev").one(CLUSTER, "ml-dev").inputs


def test_a_pools_own_labels_and_taint_and_the_platform_tolerating_it() -> None:
    plan = landing_zone()
    config = plan.one("gcp:container/nodePool:NodePool", "ml-dev-l4").inputs["nodeConfig"]
    assert config["labels"] == {"acme.com/cost-center": "ml-research", "mlplatform.dev/gpu-pool": "l4"}
    assert config["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
        {"key": "acme.com/dedicated", "value": "ml", "effect": "NO_SCHEDULE"},
    ]
    system = plan.one("gcp:container/nodePool:NodePool", "ml-dev-system").inputs["nodeConfig"]
    assert system["labels"] == {"acme.com/cost-center": "ml-platform"} and "taints" not in system
    dedicated = {"key": "acme.com/dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}
    flavor = plan.one("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor", "flavor-l4").inputs
    assert dedicated in flavor["spec"]["tolerations"]
    runtime = plan.one("kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime", "torch-distributed-l4").inputs
    (job,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    assert dedicated in job["template"]["spec"]["template"]["spec"]["tolerations"]
    exporter = dcgm_exporter_args(load(str(FIXTURE)))
    assert exporter is not None and dedicated in dcgm_exporter_values(exporter)["tolerations"]


def test_the_gateway_address_is_a_stack_output(shipped_plan: Callable[[str], Plan]) -> None:
    (address,) = landing_zone().of_type("gcp:compute/globalAddress:GlobalAddress")
    assert landing_zone().outputs["gatewayAddress"] == "203.0.113.20"  # the mocks' address of kubeflow-https-ip
    assert address.name == "kubeflow-https-ip"
    assert "gatewayAddress" not in shipped_plan("dev").outputs  # no hostname, no gateway


def test_the_kueue_overlay_is_merged_into_the_charts_values() -> None:
    values = landing_zone().one("kubernetes:helm.sh/v4:Chart", "kueue").inputs["values"]
    assert values["controllerManager"] == {"manager": {"resources": {"limits": {"memory": "1Gi"}, "requests": {"memory": "1Gi"}}}}
    assert "controllerManagerConfigYaml" in values["managerConfig"]  # the platform's own values stay


def test_the_docs_firewall_commands_open_what_the_program_opens() -> None:
    """docs/gke-network.md gives the host project's admins the rules to make by hand."""
    text = (REPO / "docs" / "gke-network.md").read_text()
    assert "--allow " + ",".join(f"tcp:{port}" for port in CONTROL_PLANE_TARGET_PORTS) in text
    assert "--allow " + ",".join(f"tcp:{port}" for port in GATEWAY_PORTS) in text
    assert "--source-ranges " + ",".join(GOOGLE_LB_RANGES) in text
    assert "--allow " + ",".join(f"tcp:{port}" for port in BACKEND_PORTS) in text
    assert "--source-ranges PROXY_ONLY_RANGE," + ",".join(GOOGLE_LB_RANGES) in text


def test_overlay_values_merges_mappings_and_replaces_everything_else() -> None:
    ours = {"a": {"b": 1, "c": [1, 2]}, "d": "x"}
    theirs = {"a": {"c": [3], "e": {"f": True}}, "d": {"now": "a mapping"}}
    assert overlay_values(ours, theirs) == {"a": {"b": 1, "c": [3], "e": {"f": True}}, "d": {"now": "a mapping"}}
    assert ours == {"a": {"b": 1, "c": [1, 2]}, "d": "x"}  # the platform's values are left as they were


@mirror.needed
def test_the_stack_renders_and_checks_clean_with_the_overlay_in_the_render() -> None:
    from tests.support.renders import rendered
    from tooling.check import check

    render = rendered("dev-shared-vpc")
    assert check(render) == []
    (manager,) = [
        o.obj for o in render.objects if o.obj.get("kind") == "Deployment" and o.key[3] == "kueue-controller-manager"
    ]
    (container,) = [c for c in manager["spec"]["template"]["spec"]["containers"] if c["name"] == "manager"]
    # Ours over the chart's: memory from the overlay, the chart's cpu kept (mappings merge).
    assert container["resources"] == {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "500m", "memory": "1Gi"}}
