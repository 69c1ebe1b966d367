"""Each LLM's health check behind GKE Inference Gateway (docs/serving.md, "The gateway, per
cluster"): GKE's load balancer sends to an InferencePool only while its health check passes, KServe
makes none and GKE's default asks `/`, which vLLM does not serve. The platform publishes the check
on each team's `team-llm` config, lets editors make HealthCheckPolicies in their namespace, and the
team's deploy path (examples/llm_openai.py) makes one per service; `check` holds the published check
to KServe's presets."""

from __future__ import annotations

import json
import runpy
from collections.abc import Callable
from typing import Any

import pytest

from components.inference_gateway import POOL_HEALTH_CHECK_ANNOTATION
from tests.conftest import base_gke, with_changes
from tests.support import mirror
from tests.support.renders import edited, rendered, violations, with_objects
from tooling.plan import Plan

K = "mlplatform:components"
GKE_GATEWAY = {f"{K}.inferenceGateway": {"enabled": True, "provider": "gke"}}
CLUSTER_ROLE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
EXAMPLE = runpy.run_path("examples/llm_openai.py", run_name="example")


def _team_llm(render: Any, team: str) -> dict[str, Any]:
    (config,) = [o.obj for o in render.objects if o.obj["kind"] == "LLMInferenceServiceConfig" and o.key[2:] == (team, "team-llm")]
    return config


def _service(name: str, namespace: str = "vision") -> dict[str, Any]:
    """The service as the API server returns it to `deploy`: the example's, with its namespace and uid."""
    service = EXAMPLE["llm_service"](name, "pvc://team-models/chat")
    service["metadata"].update(namespace=namespace, uid="5f1c0b6e-0000-4000-8000-000000000001")
    return service


def test_editors_and_viewers_get_health_check_policies_with_gkes_gateway_only(
    plan_of: Callable[[dict[str, Any]], Plan], shipped_plan: Callable[[str], Plan]
) -> None:
    roles = {r.inputs["metadata"]["name"]: r.inputs for r in plan_of(with_changes(base_gke(), GKE_GATEWAY)).of_type(CLUSTER_ROLE)}
    edit, view = roles["kubeflow-gke-health-checks-edit"], roles["kubeflow-gke-health-checks-view"]
    assert edit["metadata"]["labels"] == {"rbac.authorization.kubeflow.org/aggregate-to-kubeflow-edit": "true"}
    assert edit["rules"] == [{"apiGroups": ["networking.gke.io"], "resources": ["healthcheckpolicies"], "verbs": ["get", "list", "watch", "create", "delete", "deletecollection", "patch", "update"]}]
    assert view["metadata"]["labels"] == {"rbac.authorization.kubeflow.org/aggregate-to-kubeflow-view": "true"}
    assert view["rules"][0]["verbs"] == ["get", "list", "watch"]
    istio = {r.inputs["metadata"]["name"] for r in shipped_plan("dev").of_type(CLUSTER_ROLE)}  # LLMs behind Kubeflow's gateway
    assert not {"kubeflow-gke-health-checks-edit", "kubeflow-gke-health-checks-view"} & istio


@pytest.mark.parametrize(
    ("parent", "suffix", "want"),
    [
        # knative.dev/pkg kmeta/names_test.go TestChildName (the commit kserve v0.20.0 pins), the cases
        # of a suffix the hash does not swallow.
        ("asdf", "-deployment", "asdf-deployment"),
        ("f" * 63, "-deployment", "ffffffffffffffffffff105d7597f637e83cc711605ac3ea4957-deployment"),
        ("f" * 63, "-deploy", "ffffffffffffffffffffffff105d7597f637e83cc711605ac3ea4957-deploy"),
        ("chat", "-inference-pool", "chat-inference-pool"),
        ("c" * 48, "-inference-pool", "c" * 48 + "-inference-pool"),  # 63: still fits
    ],
)
def test_the_example_names_the_pool_as_kserve_does(parent: str, suffix: str, want: str) -> None:
    assert EXAMPLE["child_name"](parent, suffix) == want


def test_a_long_service_name_gets_a_pool_name_of_63_characters() -> None:
    name = EXAMPLE["child_name"]("c" * 49, "-inference-pool")
    assert len(name) == 63 and name.startswith("c" * 16) and name.endswith("-inference-pool")


@mirror.needed
def test_the_example_makes_the_pools_health_check_from_its_teams_config() -> None:
    """What `deploy` creates behind GKE's gateway (dev-shared-vpc): a HealthCheckPolicy on the
    InferencePool KServe makes for the service, HTTP /health on the pool's target port, owned by the
    service; behind Kubeflow's own gateway (dev) nothing."""
    policy = EXAMPLE["pool_health_check_policy"](_service("chat"), _team_llm(rendered("dev-shared-vpc"), "vision"))
    assert policy == {
        "apiVersion": "networking.gke.io/v1",
        "kind": "HealthCheckPolicy",
        "metadata": {
            "name": "chat-inference-pool",
            "namespace": "vision",
            "ownerReferences": [{"apiVersion": "serving.kserve.io/v1alpha2", "kind": "LLMInferenceService", "name": "chat", "uid": "5f1c0b6e-0000-4000-8000-000000000001"}],
        },
        "spec": {
            "targetRef": {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "chat-inference-pool"},
            "default": {
                "timeoutSec": 2,
                "checkIntervalSec": 2,
                "config": {"type": "HTTP", "httpHealthCheck": {"requestPath": "/health", "portSpecification": "USE_FIXED_PORT", "port": 8000}},
            },
        },
    }
    assert EXAMPLE["pool_health_check_policy"](_service("chat"), _team_llm(rendered("dev"), "vision")) is None


@mirror.needed
def test_the_published_check_asks_what_kserves_presets_serve() -> None:
    """The policy's target and check as KServe's presets in the render make them: the scheduler
    preset's pool targets port 8000, the model server preset's readiness probe asks /health there."""
    render = rendered("dev-shared-vpc")
    presets = {o.key[3]: o.obj["spec"] for o in render.objects if o.obj["kind"] == "LLMInferenceServiceConfig" and o.key[2] == "kserve"}
    pool = presets["kserve-config-llm-scheduler"]["router"]["scheduler"]["pool"]["spec"]
    (main,) = [c for c in presets["kserve-config-llm-template"]["template"]["containers"] if c["name"] == "main"]
    check = json.loads(_team_llm(render, "nlp")["metadata"]["annotations"][POOL_HEALTH_CHECK_ANNOTATION])["config"]["httpHealthCheck"]
    assert [p["number"] for p in pool["targetPorts"]] == [check["port"]]
    assert (main["readinessProbe"]["httpGet"]["path"], main["readinessProbe"]["httpGet"]["port"]) == (check["requestPath"], check["port"])
    assert violations(render, "gke-pool-health-check") == []


def _annotated(check: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def edit(obj: dict[str, Any]) -> None:
        obj["metadata"]["annotations"][POOL_HEALTH_CHECK_ANNOTATION] = json.dumps(check)

    return edit


@mirror.needed
def test_check_fails_a_team_config_without_the_health_check() -> None:
    render = rendered("dev-shared-vpc")

    def bare(objects: list[Any]) -> list[Any]:
        from dataclasses import replace

        out = []
        for o in objects:
            if o.obj["kind"] == "LLMInferenceServiceConfig" and o.key[3] == "team-llm":
                o = replace(o, obj={**o.obj, "metadata": {k: v for k, v in o.obj["metadata"].items() if k != "annotations"}})
            out.append(o)
        return out

    found = violations(with_objects(render, bare), "gke-pool-health-check")
    assert sorted(v.object for v in found) == ["LLMInferenceServiceConfig.serving.kserve.io nlp/team-llm", "LLMInferenceServiceConfig.serving.kserve.io vision/team-llm"]
    assert "publishes no health check" in found[0].message and "HTTP /health on port 8000" in found[0].message


@mirror.needed
@pytest.mark.parametrize(
    ("check", "says"),
    [
        ({"config": {"type": "HTTP", "httpHealthCheck": {"portSpecification": "USE_FIXED_PORT", "port": 8000}}}, "path /, the model server's readiness is /health"),  # GKE's default path
        ({"config": {"type": "HTTP", "httpHealthCheck": {"requestPath": "/health", "portSpecification": "USE_FIXED_PORT", "port": 9002}}}, "port 9002, the pool targets [8000]"),
        ({"config": {"type": "TCP", "tcpHealthCheck": {"portSpecification": "USE_FIXED_PORT", "port": 8000}}}, "type TCP, the model server speaks HTTP"),
        # The chart's own shape: a port beside no portSpecification, which the published CRD refuses.
        ({"config": {"type": "HTTP", "httpHealthCheck": {"requestPath": "/health", "port": 8000}}}, "port 8000 without portSpecification USE_FIXED_PORT"),
    ],
)
def test_check_fails_a_health_check_the_model_server_does_not_pass(check: dict[str, Any], says: str) -> None:
    render = edited(rendered("dev-shared-vpc"), "LLMInferenceServiceConfig", "team-llm", _annotated(check))
    found = violations(render, "gke-pool-health-check")
    assert len(found) == 2 and all(says in v.message for v in found), [v.message for v in found]


@mirror.needed
def test_check_follows_kserves_tls_switch() -> None:
    """With `enableLLMInferenceServiceTLS` vLLM serves HTTPS on 8000 (the template preset's probe
    scheme), which an HTTP check fails."""

    def tls(obj: dict[str, Any]) -> None:
        ingress = json.loads(obj["data"]["ingress"])
        obj["data"]["ingress"] = json.dumps({**ingress, "enableLLMInferenceServiceTLS": True})

    render = edited(rendered("dev-shared-vpc"), "ConfigMap", "inferenceservice-config", tls)
    messages = [v.message for v in violations(render, "gke-pool-health-check")]
    assert len(messages) == 2 and all("type HTTP, the model server speaks HTTPS" in m for m in messages)


class _Store:
    """The API server's answers `make_pool_health_check` relies on: create refuses a name taken (409),
    replace wants the stored resourceVersion. Holds the team's config and what is made."""

    def __init__(self, team_config: dict[str, Any], policies: dict[str, dict[str, Any]] | None = None):
        self.team_config = team_config
        self.policies = dict(policies or {})

    def get_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, name: str) -> dict[str, Any]:
        from kubernetes.client.rest import ApiException

        found = self.team_config if plural == "llminferenceserviceconfigs" and name == "team-llm" else self.policies.get(name)
        if found is None:
            raise ApiException(status=404)
        return found

    def create_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, body: dict[str, Any]) -> dict[str, Any]:
        from kubernetes.client.rest import ApiException

        assert (group, version, namespace, plural) == ("networking.gke.io", "v1", "vision", "healthcheckpolicies")
        if body["metadata"]["name"] in self.policies:
            raise ApiException(status=409)
        self.policies[body["metadata"]["name"]] = {**body, "metadata": {**body["metadata"], "resourceVersion": "1"}}
        return body

    def replace_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        from kubernetes.client.rest import ApiException

        if body["metadata"].get("resourceVersion") != self.policies[name]["metadata"]["resourceVersion"]:
            raise ApiException(status=409)
        self.policies[name] = {**body, "metadata": {**body["metadata"], "resourceVersion": "2"}}
        return body


@mirror.needed
def test_deploy_and_health_check_take_over_a_policy_left_by_an_earlier_service_of_the_name() -> None:
    """A policy of the pool's name already there (an earlier `chat` deleted, its policy not yet
    collected, or one made by hand) is replaced with the new service as its owner: created again it
    would be refused, and the garbage collector would take it with the old service."""
    team = _team_llm(rendered("dev-shared-vpc"), "vision")
    old = EXAMPLE["pool_health_check_policy"](_service("chat"), team)
    old["metadata"]["ownerReferences"][0]["uid"] = "0ld00000-0000-4000-8000-000000000000"
    store = _Store(team, {"chat-inference-pool": {**old, "metadata": {**old["metadata"], "resourceVersion": "7"}}})
    EXAMPLE["make_pool_health_check"](store, _service("chat"))
    (owner,) = store.policies["chat-inference-pool"]["metadata"]["ownerReferences"]
    assert owner["uid"] == "5f1c0b6e-0000-4000-8000-000000000001"
    assert store.policies["chat-inference-pool"]["metadata"]["resourceVersion"] == "2"

    fresh = _Store(team)
    EXAMPLE["make_pool_health_check"](fresh, _service("chat"))
    assert list(fresh.policies) == ["chat-inference-pool"]
    behind_istio = _Store(_team_llm(rendered("dev"), "vision"))
    EXAMPLE["make_pool_health_check"](behind_istio, _service("chat"))
    assert behind_istio.policies == {}


@mirror.needed
@pytest.mark.parametrize("status", [403, 404])
def test_a_refused_health_check_says_the_service_is_up_without_it_and_how_to_finish(status: int) -> None:
    """A viewer's deploy (403) or a cluster without GKE's Gateway API (404): the service exists
    already, so the example says it runs without a health check and what makes one, not a traceback."""
    from kubernetes.client.rest import ApiException

    class Refusing(_Store):
        def create_namespaced_custom_object(self, *args: Any) -> dict[str, Any]:
            raise ApiException(status=status, reason="Forbidden" if status == 403 else "Not Found")

    with pytest.raises(SystemExit) as stopped:
        EXAMPLE["make_pool_health_check"](Refusing(_team_llm(rendered("dev-shared-vpc"), "vision")), _service("chat"))
    message = str(stopped.value)
    assert f"chat is deployed, but its HealthCheckPolicy chat-inference-pool could not be made (HTTP {status}" in message
    assert "python examples/llm_openai.py health-check --name chat" in message
