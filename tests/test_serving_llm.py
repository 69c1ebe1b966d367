"""Serving's LLM half (docs/serving.md, "LLMs"): what the platform gives KServe's LLM controller,
the gateway it binds to, and who passes the gateway's role check on a team's LLM prefixes."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from components.access import GATEWAY_SELECTOR
from components.inference_gateway import InferenceGatewayArgs, gateway_object
from components.istio import INFERENCE_EXTENSION_ENV
from components.profiles.serving_llm import llm_gateway_policy, team_llm_config, team_llm_workers_config
from components.serving import REPLICA_BOUNDS
from components.serving_llm import LLM_REPLICA_BOUNDS, routes_policy, with_path_routing_only
from stackmodel.components.inference_gateway import GatewayProvider, GkeGatewayClass
from stackmodel.config import validate
from stackmodel.schema import Sources
from tests.support import mirror
from tests.support.fixtures import fixture
from tests.support.mesh import Request, istio_decision
from tests.support.renders import edited, rendered, violations, with_objects
from tooling.plan import evaluate

GATEWAY_NAMESPACE = "istio-system"
DEX = "http://dex.auth.svc.cluster.local:5556/dex"


def _at_gateway(policies: list[dict], email: str | None, method: str, path: str, principal: str | None = None) -> bool:
    claims: dict[str, str | list[str]] = {"email": email, "sub": email} if email else {"sub": "system:serviceaccount:x"}
    request = Request(method, path, 8080, claims=claims, request_principal=principal or (f"{DEX}/{email}" if email else None))
    return istio_decision(policies, GATEWAY_NAMESPACE, {**GATEWAY_SELECTOR, "istio": "ingressgateway"}, request).allowed


@pytest.mark.parametrize(
    ("email", "path", "passes"),
    [
        ("bo@example.com", "/vision/chat/v1/chat/completions", True),  # a viewer of vision queries (a POST)
        ("lead@example.com", "/vision/chat/v1/chat/completions", True),  # its owner
        ("bo@example.com", "/nlp/chat/v1/chat/completions", False),  # not in nlp
        ("raj@example.com", "/publishers/vision/models/chat/v1/completions", False),  # another team's owner
        ("ana@example.com", "/publishers/nlp/models/chat/v1/completions", True),  # a viewer of nlp
    ],
)
def test_the_gateway_lets_a_team_query_its_own_models_only(email: str, path: str, passes: bool) -> None:
    policies = [
        llm_gateway_policy("vision", ["lead@example.com", "ana@example.com", "bo@example.com"]),
        llm_gateway_policy("nlp", ["kim@example.com", "ana@example.com"]),
    ]
    assert _at_gateway(policies, email, "POST", path) is passes


def test_a_teams_model_client_token_passes_on_its_team_prefix_only() -> None:
    policies = [llm_gateway_policy("vision", ["lead@example.com"]), llm_gateway_policy("nlp", ["kim@example.com"])]
    issuer = "https://kubernetes.default.svc"
    client = f"{issuer}/system:serviceaccount:vision:model-client"
    assert _at_gateway(policies, None, "POST", "/vision/chat/v1/completions", principal=client)
    assert not _at_gateway(policies, None, "POST", "/nlp/chat/v1/completions", principal=client)
    assert not _at_gateway(policies, None, "POST", "/vision/chat/v1/completions", principal=f"{issuer}/system:serviceaccount:vision:default-editor")


def test_model_based_routing_is_off_in_kserves_configuration() -> None:
    config = {"kind": "ConfigMap", "metadata": {"name": "inferenceservice-config"}, "data": {"ingress": json.dumps({"kserveIngressGateway": "a/b"})}}
    ingress = json.loads(with_path_routing_only(config)["data"]["ingress"])  # type: ignore[index]
    assert ingress == {"kserveIngressGateway": "a/b", "modelBasedRoutingMode": "disabled"}
    assert with_path_routing_only({"kind": "ConfigMap", "metadata": {"name": "other"}}) is None


def test_the_team_config_keeps_istio_out_of_the_llm_and_picker_pods() -> None:
    spec = team_llm_config("nlp", model_store=False)["spec"]
    assert spec["annotations"] == {"sidecar.istio.io/inject": "false"}
    assert spec["router"]["scheduler"]["annotations"] == {"sidecar.istio.io/inject": "false"}
    # The GPU taint tolerated by the pods themselves (no flavor tolerates it for them), no account of the platform's.
    assert spec["template"] == {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}]}
    assert "worker" not in spec  # a worker would make every service naming it a LeaderWorkerSet
    assert team_llm_workers_config("nlp", model_store=False)["spec"] == {"worker": spec["template"]}


def test_with_a_model_store_the_llm_pods_read_the_team_bucket_as_the_model_server() -> None:
    """As the serving PodDefault does for an InferenceService's pods, which it does not select."""
    spec = team_llm_config("nlp", model_store=True)["spec"]
    assert spec["template"]["serviceAccountName"] == "model-server"
    assert team_llm_workers_config("nlp", model_store=True)["spec"]["worker"]["serviceAccountName"] == "model-server"
    assert spec["annotations"] == {"sidecar.istio.io/inject": "false", "gke-gcsfuse/volumes": "true"}


def test_the_istio_gateway_binds_to_kubeflows_ingress_gateway_and_takes_routes_from_team_namespaces() -> None:
    args = InferenceGatewayArgs(sources=Sources(), provider=GatewayProvider.ISTIO, gke_class=GkeGatewayClass.INTERNAL, install_crds=True)
    gateway = gateway_object(args)
    assert gateway["spec"]["gatewayClassName"] == "istio"
    assert gateway["spec"]["addresses"] == [{"type": "Hostname", "value": "istio-ingressgateway.istio-system.svc.cluster.local"}]
    allowed = gateway["spec"]["listeners"][0]["allowedRoutes"]
    assert allowed["namespaces"]["selector"] == {"matchLabels": {"app.kubernetes.io/part-of": "kubeflow-profile"}}
    assert allowed["kinds"] == [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"}]  # the route policy's kind alone
    # KServe's own switch for model-based (header) routing of every service on this Gateway.
    assert gateway["metadata"]["annotations"] == {"serving.kserve.io/model-based-routing-enabled": "false"}
    gke = gateway_object(InferenceGatewayArgs(sources=Sources(), provider=GatewayProvider.GKE, gke_class=GkeGatewayClass.INTERNAL, install_crds=False))
    assert gke["spec"]["gatewayClassName"] == "gke-l7-rilb" and "addresses" not in gke["spec"]


def test_the_route_policy_names_both_team_prefixes() -> None:
    policy = routes_policy()
    assert [r["resources"] for r in policy["spec"]["matchConstraints"]["resourceRules"]] == [["httproutes", "gateways"]]
    assert {v["name"] for v in policy["spec"]["variables"]} == {"own", "published", "route", "ns"}
    # The backends held to the route's namespace, Istio's Hostname kind refused (tests/envtest/test_llm_access.py).
    backends = policy["spec"]["validations"][-1]["expression"]
    assert "variables.ns" in backends and "requestMirror" in backends and "Hostname" not in backends


@mirror.needed
def test_the_kind_render_holds_the_llm_controller_lws_the_gateway_and_each_teams_check() -> None:
    render = rendered("kind")
    names = {(o.obj["kind"], o.key[3]) for o in render.objects}
    assert {("Deployment", "llmisvc-controller-manager"), ("Deployment", "lws-controller-manager"), ("Gateway", "kubeflow-llm")} <= names
    assert ("CustomResourceDefinition", "inferencepools.inference.networking.k8s.io") in names
    assert ("LLMInferenceServiceConfig", "kserve-config-llm-router-route") in names
    # One copy of what KServe's two controllers share: the CRD both CRD charts render, the ConfigMap and Issuer.
    crds = {o.key[3]: o.source for o in render.objects if o.obj["kind"] == "CustomResourceDefinition"}
    assert crds["clusterstoragecontainers.serving.kserve.io"] == "serving/kserve-crd"
    assert crds["llminferenceservices.serving.kserve.io"] == "serving/kserve-llmisvc-crd"
    shared = [o.source for o in render.objects if (o.obj["kind"], o.key[3]) in {("ConfigMap", "inferenceservice-config"), ("Issuer", "selfsigned-issuer")}]
    assert shared == ["serving/kserve-resources", "serving/kserve-resources"]
    assert {("LLMInferenceServiceConfig", "team-llm"), ("AuthorizationPolicy", "team-nlp-llm")} <= names
    istiod = next(o.obj for o in render.objects if o.obj["kind"] == "Deployment" and o.key[3] == "istiod")
    env = {e["name"]: e.get("value") for c in istiod["spec"]["template"]["spec"]["containers"] for e in c.get("env") or []}
    assert env[INFERENCE_EXTENSION_ENV] == "true"
    kueue = next(o.obj for o in render.objects if o.obj["kind"] == "ConfigMap" and o.key[3] == "kueue-manager-config")
    frameworks = yaml.safe_load(kueue["data"]["controller_manager_config.yaml"])["integrations"]["frameworks"]
    assert "leaderworkerset.x-k8s.io/leaderworkerset" in frameworks
    config = next(o.obj for o in render.objects if o.obj["kind"] == "ConfigMap" and o.key[3] == "inferenceservice-config")
    ingress = json.loads(config["data"]["ingress"])
    assert ingress["kserveIngressGateway"] == "istio-system/kubeflow-llm" and ingress["modelBasedRoutingMode"] == "disabled"


@mirror.needed
def test_check_fails_a_team_llm_prefix_no_role_check_covers() -> None:
    render = rendered("kind")
    assert violations(render, "llm-routes-role-checked") == []
    without = with_objects(render, lambda objs: [o for o in objs if o.key[3] != "team-nlp-llm"])
    found = [v.message for v in violations(without, "llm-routes-role-checked")]
    assert found == ["no DENY policy at the gateway checks who reaches /nlp/*", "no DENY policy at the gateway checks who reaches /publishers/nlp/*"]


@mirror.needed
@pytest.mark.parametrize(("prefix", "overlaps"), [("/nl", True), ("/nlp", True), ("/nlp/", True), ("/nlp-x/", False), ("/", False)])
def test_check_fails_a_kubeflow_route_whose_string_prefix_takes_a_teams_llm_prefix(prefix: str, overlaps: bool) -> None:
    """A VirtualService's prefix is a string prefix (Kubeflow's `/pipeline` takes /pipelines/...)."""

    def on(obj: dict) -> None:
        obj["spec"]["http"][0]["match"] = [{"uri": {"prefix": prefix}}]

    render = rendered("kind")
    name = next(
        o.key[3]
        for o in render.objects
        if o.obj["kind"] == "VirtualService" and "kubeflow/kubeflow-gateway" in o.obj["spec"].get("gateways", []) and o.key[3] != "centraldashboard"
    )
    found = [v.message for v in violations(edited(render, "VirtualService", name, on), "llm-routes-role-checked")]
    assert bool([m for m in found if f"the team's LLM prefix /nlp/ overlaps {prefix} of" in m]) is overlaps, found


@mirror.needed
def test_check_fails_header_routing_left_on() -> None:
    def enable(obj: dict) -> None:
        ingress = json.loads(obj["data"]["ingress"])
        ingress["modelBasedRoutingMode"] = "enabled"
        obj["data"]["ingress"] = json.dumps(ingress)

    found = violations(edited(rendered("kind"), "ConfigMap", "inferenceservice-config", enable), "llm-routes-role-checked")
    assert [v.object for v in found] == ["LLMInferenceServiceConfig.serving.kserve.io kserve/kserve-config-llm-router-route"]


def test_with_llms_a_teams_model_client_passes_every_gateway_check_on_its_llm_prefixes_only() -> None:
    """The serving tokens' DENY (components/serving.py) and the team's LLM check together, as the
    gateway holds both: the model client of nlp queries nlp's LLMs, at either prefix, and no other's."""
    from components.serving import gateway_token_objects

    issuer = "https://container.googleapis.com/v1/projects/p/locations/l/clusters/c"
    _, tokens = gateway_token_objects(GATEWAY_NAMESPACE, dict(GATEWAY_SELECTOR), issuer, f"{issuer}/jwks", "mlplatform-serving", ["nlp", "vision"], llm=True)
    policies = [tokens, llm_gateway_policy("nlp", ["kim@example.com"]), llm_gateway_policy("vision", ["lead@example.com"])]
    client = f"{issuer}/system:serviceaccount:nlp:model-client"
    assert _at_gateway(policies, None, "POST", "/nlp/chat/v1/chat/completions", principal=client)
    assert _at_gateway(policies, None, "POST", "/publishers/nlp/models/chat/v1/completions", principal=client)
    assert not _at_gateway(policies, None, "POST", "/vision/chat/v1/chat/completions", principal=client)
    assert not _at_gateway(policies, None, "POST", "/publishers/vision/models/chat/v1/completions", principal=client)
    # Without LLMs the token's paths are the team's models' alone.
    _, without = gateway_token_objects(GATEWAY_NAMESPACE, dict(GATEWAY_SELECTOR), issuer, f"{issuer}/jwks", "mlplatform-serving", ["nlp"])
    assert not _at_gateway([without], None, "POST", "/nlp/chat/v1/chat/completions", principal=client)


def test_the_gpus_check_judges_are_the_examples() -> None:
    """tooling/admission.py judges the LLMInferenceService examples/llm_openai.py deploys."""
    import runpy

    from tooling import admission

    service = runpy.run_path("examples/llm_openai.py", run_name="example")["llm_service"]("chat", "pvc://team-models/chat")
    (main,) = service["spec"]["template"]["containers"]
    assert main["name"] == admission.LLM_CONTAINER
    assert main["resources"] == {"requests": admission.LLM_GPUS, "limits": admission.LLM_GPUS}
    assert service["spec"]["baseRefs"] == [{"name": admission.TEAM_LLM_CONFIG}]
    # Serving's priority (facts/priorities.py), on the service: KServe carries kueue.x-k8s.io labels to a
    # LeaderWorkerSet (kserve v0.20.0 workload_multi_node.go propagateTopLevelLeaderWorkerSetMetadata).
    from facts.priorities import PRIORITY_LABEL, SERVING_PRIORITY

    assert service["metadata"]["labels"] == {PRIORITY_LABEL: SERVING_PRIORITY.name}
    assert team_llm_config("nlp", model_store=False)["spec"]["labels"] == {PRIORITY_LABEL: SERVING_PRIORITY.name}


@mirror.needed
def test_a_multi_node_llm_is_never_admitted_without_its_workers_gpu_toleration() -> None:
    """Kueue makes the LeaderWorkerSet's Workload from its templates, which GKE's own GPU
    toleration never reaches: without the team config's the worker pod set gets no GPU flavor."""
    render = rendered("dev")
    assert violations(render, "admissible") == []

    def untolerated(obj: dict) -> None:
        obj["spec"]["worker"].pop("tolerations")

    found = [v.message for v in violations(edited(render, "LLMInferenceServiceConfig", "team-llm-workers", untolerated), "admissible")]
    assert found and all("LeaderWorkerSet of 2 nodes" in m and "untolerated taint nvidia.com/gpu=present:NoSchedule" in m for m in found)


@mirror.needed
def test_the_dev_render_holds_kserve_its_runtimes_the_llm_controller_lws_the_pool_path_and_a_teams_routes() -> None:
    """What issue 41 checks in the dev render; `check` and the API server judge it elsewhere
    (tests/test_check.py, tests/envtest/test_apply.py)."""
    render = rendered("dev")
    found = {(o.obj["kind"], o.key[2], o.key[3]) for o in render.objects}
    assert {
        ("Deployment", "kserve", "kserve-controller-manager"),
        ("ClusterServingRuntime", "", "kserve-vllm-l4"),
        ("ClusterServingRuntime", "", "kserve-tritonserver"),
        ("Deployment", "kserve", "llmisvc-controller-manager"),
        ("Deployment", "lws-system", "lws-controller-manager"),
        ("Gateway", "istio-system", "kubeflow-llm"),
        ("VirtualService", "nlp", "model-router"),  # the team's models at /serving/nlp/
        ("LLMInferenceServiceConfig", "nlp", "team-llm"),
        ("AuthorizationPolicy", "istio-system", "team-nlp-llm"),  # its LLMs at /nlp/ and /publishers/nlp/
    } <= found
    # The InferencePool path: KServe's route preset sends a team's LLM paths to the service's pool,
    # the scheduler preset makes the pool and its endpoint picker, and istiod routes to pools.
    route = next(o.obj for o in render.objects if o.key[3] == "kserve-config-llm-router-route")
    rules = route["spec"]["router"]["route"]["http"]["spec"]["rules"]
    to_pool = {r["name"] for r in rules for b in r["backendRefs"] if (b["kind"], b.get("group")) == ("InferencePool", "inference.networking.k8s.io")}
    assert {"v1-completions-path", "v1-chat-completions-path", "v1-chat-completions-publisher-path"} <= to_pool
    # The rest reach the workload's Service: catch-alls on the same team prefixes.
    assert {r["name"] for r in rules} - to_pool == {"v1-publisher-path-catch-all", "v1-catch-all-path", "v1-catch-all-model-routing"}
    scheduler = next(o.obj for o in render.objects if o.key[3] == "kserve-config-llm-scheduler")
    assert "pool" in scheduler["spec"]["router"]["scheduler"]
    istiod = next(o.obj for o in render.objects if o.obj["kind"] == "Deployment" and o.key[3] == "istiod")
    env = {e["name"]: e.get("value") for c in istiod["spec"]["template"]["spec"]["containers"] for e in c.get("env") or []}
    assert env[INFERENCE_EXTENSION_ENV] == "true"


@mirror.needed
def test_leaderworkersets_pod_webhook_after_kueues_is_judged_and_found_harmless(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its webhook is named `mpod.kb.io` like Kueue's; the rule tells the two apart by their
    configurations' names, and LWS's sorts after Kueue's: judged, and harmless only by its reason."""
    from tooling.check import kueue as kueue_rules

    render = rendered("dev")
    assert violations(render, "kueue") == []
    monkeypatch.setattr(kueue_rules, "HARMLESS_AFTER_KUEUE", {})
    found = [(v.object, v.message) for v in violations(render, "kueue")]
    assert [o for o, _ in found] == ["MutatingWebhookConfiguration.admissionregistration.k8s.io lws-mutating-webhook-configuration"]
    assert "webhook mpod.kb.io changes pods of nlp, research, vision after Kueue's pod webhook" in found[0][1]


# --- replicas: the stack's floor and ceiling on LLMs ---------------------------------------------


def _kind_planned(changes: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The admission policies of the kind fixture planned with `changes` to its serving settings, by name."""
    raw = yaml.safe_load(fixture("kind").read_text())["config"]
    raw["mlplatform:components"]["serving"].update(changes)
    plan = evaluate(validate(raw, "kind"), "kind")
    return {r.name: r.inputs for r in plan.resources if r.type.endswith(":ValidatingAdmissionPolicy")}


def test_the_stacks_replica_bounds_reach_the_llm_policy_beside_the_inference_service_one() -> None:
    """serving.replicas 1 to 3: both policies hold exactly those bounds; the LLM one refuses
    `scaling` naming them; without serving.llm there is no LLM policy."""
    policies = _kind_planned({"replicas": {"minReplicas": 1, "maxReplicas": 3}})
    llm = policies[LLM_REPLICA_BOUNDS]["spec"]
    assert {v["expression"] for v in llm["validations"]} >= {
        "variables.main.all(r, r >= 1)", "variables.main.all(r, r <= 3)", "variables.prefill.all(r, r >= 1)", "variables.prefill.all(r, r <= 3)"
    }
    assert "Set spec.replicas instead, from 1 to 3 here" in llm["validations"][0]["message"]
    assert [r["resources"] for r in llm["matchConstraints"]["resourceRules"]] == [["llminferenceservices", "llminferenceserviceconfigs"]]
    isvc = policies[REPLICA_BOUNDS]["spec"]
    assert [v["expression"] for v in isvc["validations"]] == ["variables.minimum >= 1", "variables.maximum <= 3"]
    assert LLM_REPLICA_BOUNDS not in _kind_planned({"llm": False})
