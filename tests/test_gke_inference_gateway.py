"""GKE Inference Gateway (`inferenceGateway.provider: gke`, docs/serving.md): GKE's load balancer
reaches the teams' LLMs from the region's proxy-only subnet and Google's health checkers' ranges.
The platform makes that subnet in a network it creates, opens the VPC firewall to the model
servers' and pickers' ports, and each team namespace admits exactly those sources to exactly those
pods and ports; `check` fails a team namespace whose NetworkPolicies drop them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from components.profiles.serving_llm import gke_gateway_policies
from tests.conftest import base_gke, with_changes
from tests.support import mirror
from tests.support.renders import rendered, violations, with_objects
from tooling.check.platform import admits, selects
from tooling.plan import Plan

C = "mlplatform:cluster"
K = "mlplatform:components"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
FIREWALL = "gcp:compute/firewall:Firewall"
GKE_GATEWAY = {f"{K}.inferenceGateway": {"enabled": True, "provider": "gke"}}
HEALTH_CHECKS = ["130.211.0.0/22", "35.191.0.0/16"]
# Pod labels as KServe v0.20.0 gives them to a service `chat` (pkg/controller/v1alpha2/llmisvc/workload.go
# GetWorkloadLabelSelector, scheduler.go SchedulerLabels), and the team's model router's.
MODEL_SERVER = {"app.kubernetes.io/name": "chat", "app.kubernetes.io/part-of": "llminferenceservice", "kserve.io/component": "workload"}
PICKER = {"app.kubernetes.io/name": "chat", "app.kubernetes.io/part-of": "llminferenceservice", "app.kubernetes.io/component": "llminferenceservice-router-scheduler"}
ROUTER = {"app.kubernetes.io/name": "model-router"}


def _proxy_only_subnets(plan: Plan) -> list[dict[str, Any]]:
    return [r.inputs for r in plan.of_type(SUBNETWORK) if r.inputs.get("purpose") == "REGIONAL_MANAGED_PROXY"]


def test_a_network_the_platform_creates_gets_the_regions_proxy_only_subnet_and_the_firewall_rule(
    plan_of: Callable[[dict[str, Any]], Plan],
) -> None:
    plan = plan_of(with_changes(base_gke(), GKE_GATEWAY))
    (subnet,) = _proxy_only_subnets(plan)
    (nodes,) = [r.inputs for r in plan.of_type(SUBNETWORK) if "purpose" not in r.inputs]
    assert subnet["ipCidrRange"] == "10.129.0.0/23" and subnet["role"] == "ACTIVE" and subnet["region"] == "us-central1"
    assert subnet["network"] == nodes["network"]  # the created VPC, beside the nodes' subnet
    (rule,) = [r.inputs for r in plan.of_type(FIREWALL) if r.name == "inference-gateway-backends"]
    assert rule["sourceRanges"] == ["10.129.0.0/23", *HEALTH_CHECKS]
    assert rule["allows"] == [{"protocol": "tcp", "ports": ["8000", "9002", "9003"]}]
    assert rule["targetTags"] == ["ml-test-node"] and rule["direction"] == "INGRESS"


def test_the_stacks_own_range_is_the_subnets_and_the_firewalls(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    plan = plan_of(with_changes(base_gke(), {f"{K}.inferenceGateway": {**GKE_GATEWAY[f"{K}.inferenceGateway"], "proxyOnlySubnetRange": "10.40.0.0/24"}}))
    assert [s["ipCidrRange"] for s in _proxy_only_subnets(plan)] == ["10.40.0.0/24"]
    assert [r.inputs["sourceRanges"][0] for r in plan.of_type(FIREWALL) if r.name == "inference-gateway-backends"] == ["10.40.0.0/24"]


def test_an_existing_network_keeps_its_own_proxy_only_subnet(shipped_plan: Callable[[str], Plan]) -> None:
    """tests/stacks/Pulumi.dev-shared-vpc.yaml names the host project's subnet; tests/test_landing_zone.py
    holds its firewall rule, in the host project."""
    assert _proxy_only_subnets(shipped_plan("dev-shared-vpc")) == []


def test_nothing_of_gkes_gateway_with_the_istio_provider(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("dev")  # LLMs behind Kubeflow's own gateway
    assert _proxy_only_subnets(plan) == [] and [r for r in plan.of_type(FIREWALL) if r.name == "inference-gateway-backends"] == []


@pytest.mark.parametrize(
    ("pod", "port", "source", "admitted"),
    [
        (MODEL_SERVER, 8000, "10.129.0.0/23", True),  # the proxies, on the InferencePool's target port
        (MODEL_SERVER, 8000, "35.191.0.0/16", True),  # the health checkers
        (MODEL_SERVER, 8000, "10.129.1.7/32", True),  # one proxy's address
        (PICKER, 9002, "10.129.0.0/23", True),  # ext_proc
        (PICKER, 9002, "130.211.0.0/22", True),
        (PICKER, 9003, "35.191.0.0/16", True),  # the health checkers, on the picker's gRPC health port
        (MODEL_SERVER, 8001, "10.129.0.0/23", False),  # another port of the pod
        (PICKER, 9090, "10.129.0.0/23", False),  # the picker's metrics
        (MODEL_SERVER, 8000, "10.130.0.0/23", False),  # another range
        (MODEL_SERVER, 8000, "0.0.0.0/0", False),
    ],
)
def test_the_team_policies_admit_the_gateways_sources_to_the_llm_pods_and_nothing_more(
    pod: dict[str, str], port: int, source: str, admitted: bool
) -> None:
    policies = [p["spec"] for p in gke_gateway_policies("vision", ["10.129.0.0/23", *HEALTH_CHECKS])]
    selecting = [p for p in policies if selects(p["podSelector"], pod)]
    assert len(selecting) == 1
    assert admits(selecting, port, set(), source) is admitted


def test_the_team_policies_select_no_other_pod_of_the_namespace() -> None:
    policies = gke_gateway_policies("vision", ["10.129.0.0/23"])
    assert [p["metadata"]["namespace"] for p in policies] == ["vision", "vision"]
    assert not any(selects(p["spec"]["podSelector"], ROUTER) for p in policies)


@mirror.needed
def test_check_fails_a_team_namespace_that_drops_the_gateway() -> None:
    """The team namespaces' own policies admit pods of the platform's namespaces only: without the
    gateway's, GKE's proxies and health checks reach neither the model servers nor the picker."""
    render = rendered("dev-shared-vpc")
    assert violations(render, "gke-gateway-reach") == []
    without = with_objects(render, lambda objects: [o for o in objects if not o.key[3].startswith("allow-gke-gateway-")])
    found = {(v.object, v.message.split(":")[0]) for v in violations(without, "gke-gateway-reach")}
    assert ("LLMInferenceServiceConfig.serving.kserve.io vision/team-llm", "NetworkPolicies in vision drop 10.129.0.0/23 to the model servers on port 8000") in found
    assert ("LLMInferenceServiceConfig.serving.kserve.io nlp/team-llm", "NetworkPolicies in nlp drop 35.191.0.0/16 to the endpoint picker on port 9002") in found
    assert ("LLMInferenceServiceConfig.serving.kserve.io nlp/team-llm", "NetworkPolicies in nlp drop 130.211.0.0/22 to the endpoint picker on port 9003") in found
    assert len(found) == 2 * 3 * 3  # two teams, three sources, three pod ports (model server, picker, picker's health)


@mirror.needed
def test_check_fails_a_policy_on_the_wrong_port() -> None:
    render = rendered("dev-shared-vpc")

    def elsewhere(objects: list[Any]) -> list[Any]:
        from dataclasses import replace

        changed = []
        for o in objects:
            if o.key[2:] == ("vision", "allow-gke-gateway-to-models"):
                obj = {**o.obj, "spec": {**o.obj["spec"], "ingress": [{**o.obj["spec"]["ingress"][0], "ports": [{"protocol": "TCP", "port": 8080}]}]}}
                o = replace(o, obj=obj)
            changed.append(o)
        return changed

    messages = {v.message.split(":")[0] for v in violations(with_objects(render, elsewhere), "gke-gateway-reach")}
    assert messages == {f"NetworkPolicies in vision drop {s} to the model servers on port 8000" for s in ["10.129.0.0/23", *HEALTH_CHECKS]}


@mirror.needed
def test_check_fails_a_picker_policy_without_the_health_port() -> None:
    """Google's health checkers probe the picker on its gRPC health port (9003: llm-d-router v0.9.0's
    GKE chart); a policy admitting only the ext_proc port leaves the picker unhealthy to the load balancer."""
    render = rendered("dev-shared-vpc")

    def ext_proc_only(objects: list[Any]) -> list[Any]:
        from dataclasses import replace

        changed = []
        for o in objects:
            if o.key[2:] == ("vision", "allow-gke-gateway-to-picker"):
                obj = {**o.obj, "spec": {**o.obj["spec"], "ingress": [{**o.obj["spec"]["ingress"][0], "ports": [{"protocol": "TCP", "port": 9002}]}]}}
                o = replace(o, obj=obj)
            changed.append(o)
        return changed

    messages = {v.message.split(":")[0] for v in violations(with_objects(render, ext_proc_only), "gke-gateway-reach")}
    assert messages == {f"NetworkPolicies in vision drop {s} to the endpoint picker on port 9003" for s in ["10.129.0.0/23", *HEALTH_CHECKS]}
