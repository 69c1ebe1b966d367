"""LLM serving on a real API server, the kind fixture's render applied: who may deploy an
LLMInferenceService where (SubjectAccessReviews against the render's RBAC, Kubeflow's roles
aggregated by a real kube-controller-manager), and which HTTPRoutes a team namespace takes (the
platform's ValidatingAdmissionPolicy, evaluated by the API server)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from components.serving_llm import ROUTES_POLICY
from tests.envtest.conftest import kept, rbac_of
from tests.support import mirror
from tests.support.apiserver import Cluster, Who, api_message, user
from tests.support.renders import rendered
from tooling.waiting import wait_for

pytestmark = mirror.needed

LEAD, ANA, BO, KIM = user("lead@example.com"), user("ana@example.com"), user("bo@example.com"), user("kim@example.com")
"""vision's owner, editor and viewer (ana is a viewer in nlp), and nlp's owner."""
SERVING = "serving.kserve.io"

CASES: list[tuple[Who, str, str, bool]] = [
    # (who, verb, namespace, allowed) on llminferenceservices
    (LEAD, "create", "vision", True),
    (ANA, "create", "vision", True),  # an editor deploys in her team
    (ANA, "create", "nlp", False),  # ... and not where she views
    (ANA, "get", "nlp", True),
    (BO, "create", "vision", False),  # a viewer reads only
    (BO, "get", "vision", True),
    (BO, "get", "nlp", False),  # not another team's
    (KIM, "create", "vision", False),
]


@pytest.fixture(scope="module")
def kind_rbac(cluster: Cluster) -> Iterator[None]:
    with kept(cluster, rbac_of([o.obj for o in rendered("kind").objects])):
        yield


@pytest.mark.parametrize(("who", "verb", "namespace", "allowed"), CASES)
def test_editors_deploy_llms_in_their_team_only(cluster: Cluster, kind_rbac: None, who: Who, verb: str, namespace: str, allowed: bool) -> None:
    assert cluster.allows(who, verb, "llminferenceservices", namespace, SERVING) is allowed


# --- behind GKE Inference Gateway: each service's HealthCheckPolicy, made by the team ---------------
GKE_LEAD, GKE_ANA, GKE_BO, GKE_KIM = user("lead@acme.com"), user("ana@acme.com"), user("bo@acme.com"), user("kim@acme.com")
"""dev-shared-vpc's vision owner and editor, a viewer of vision (below), nlp's owner."""
HEALTH_CHECKS = ("healthcheckpolicies", "networking.gke.io")
GKE_CASES: list[tuple[Who, str, str, bool]] = [
    # (who, verb, namespace, allowed) on healthcheckpolicies.networking.gke.io
    (GKE_LEAD, "create", "vision", True),  # the owner, through kubeflow-admin
    (GKE_ANA, "create", "vision", True),  # an editor: the example makes one per service
    (GKE_ANA, "delete", "vision", True),
    (GKE_ANA, "create", "nlp", False),  # ... in her team only
    (GKE_BO, "get", "vision", True),  # a viewer reads them
    (GKE_BO, "create", "vision", False),
    (GKE_KIM, "create", "nlp", True),
    (GKE_KIM, "create", "vision", False),
    (GKE_KIM, "get", "vision", False),
]


def test_behind_istios_gateway_nobody_makes_health_check_policies(cluster: Cluster, kind_rbac: None) -> None:
    """The kind stack's RBAC (Istio's gateway): no role names them, so an editor may not. Before
    the GKE stack's RBAC below is stored beside it (the module keeps both)."""
    resource, group = HEALTH_CHECKS
    assert cluster.allows(ANA, "create", resource, "vision", group) is False
    assert cluster.allows(LEAD, "create", resource, "vision", group) is False


@pytest.fixture(scope="module")
def gke_rbac(cluster: Cluster) -> Iterator[None]:
    """dev-shared-vpc's RBAC (provider gke), and a viewer of vision bound as the platform binds a
    view contributor (its editor's binding with kubeflow-view): the fixture has none."""
    objects = rbac_of([o.obj for o in rendered("dev-shared-vpc").objects])
    (editor,) = [o for o in objects if o["kind"] == "RoleBinding" and o["metadata"]["name"] == "user-ana-acme-com-clusterrole-edit"]
    viewer = copy.deepcopy(editor)
    viewer["metadata"]["name"] = "user-bo-acme-com-clusterrole-view"
    viewer["roleRef"]["name"] = "kubeflow-view"
    viewer["subjects"] = [{**editor["subjects"][0], "name": GKE_BO.name}]
    with kept(cluster, [*objects, viewer]):
        yield


@pytest.mark.parametrize(("who", "verb", "namespace", "allowed"), GKE_CASES)
def test_behind_gkes_gateway_editors_make_their_pools_health_checks_in_their_team_only(
    cluster: Cluster, gke_rbac: None, who: Who, verb: str, namespace: str, allowed: bool
) -> None:
    resource, group = HEALTH_CHECKS
    assert cluster.allows(who, verb, resource, namespace, group) is allowed


def _route(namespace: str, paths: list[str], rule: dict[str, Any] | None = None) -> dict[str, Any]:
    """An HTTPRoute as KServe's route preset makes it for a service of `namespace`."""
    rules = [
        {
            "matches": [{"path": {"type": "PathPrefix", "value": p}}],
            "backendRefs": [{"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "chat-inference-pool", "port": 8000}],
        }
        for p in paths
    ]
    if rule is not None:
        rules.append(rule)
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "chat-kserve-route", "namespace": namespace},
        "spec": {"parentRefs": [{"name": "kubeflow-llm", "namespace": "istio-system"}], "rules": rules},
    }


def world() -> list[dict[str, Any]]:
    """What the routes need of the kind render: Gateway API's HTTPRoute CRD, the Namespaces, the
    platform's HTTPRoute policy and its binding."""
    objects = [o.obj for o in rendered("kind").objects]
    crds = ("httproutes.gateway.networking.k8s.io", "gateways.gateway.networking.k8s.io")
    found = [o for o in objects if o["kind"] == "CustomResourceDefinition" and o["metadata"]["name"] in crds]
    found += [o for o in objects if o["kind"] == "Namespace"]
    found += [o for o in objects if o["kind"].startswith("ValidatingAdmissionPolicy") and o["metadata"]["name"] == ROUTES_POLICY]
    return found


def refusal(cluster: Cluster, route: dict[str, Any]) -> str | None:
    """None when the API server admits `route` (a dry run), else its message."""
    plural = route["kind"].lower() + "s"
    path = f"/apis/gateway.networking.k8s.io/v1/namespaces/{route['metadata']['namespace']}/{plural}"
    try:
        cluster.request("POST", path, route, [("dryRun", "All")])
    except ApiException as error:
        return api_message(error)
    return None


@pytest.fixture(scope="module")
def routes_world(cluster: Cluster) -> Iterator[None]:
    with kept(cluster, world()):

        def pending() -> list[str]:
            return [] if refusal(cluster, _route("nlp", ["/"])) is not None else ["the HTTPRoute policy is not yet in force"]

        wait_for("the HTTPRoute policy's binding", pending, timeout=60, interval=0.1)
        yield


OWN = "may match paths under /nlp/ and /publishers/nlp/ only"
PLATFORMS = "attaches to the platform's Gateway istio-system/kubeflow-llm only"
BACKENDS = "sends to Services and InferencePools of that namespace only"
HOSTNAME = {"group": "networking.istio.io", "kind": "Hostname", "name": "chat-kserve-workload-svc.vision.svc.cluster.local", "port": 8000}
"""Istio's Hostname backend: any Service of the mesh, no ReferenceGrant asked (istio/istio 1.30.3
pilot/pkg/config/kube/gateway/conversion.go buildDestination)."""


def _sending_to(ref: dict[str, Any], mirror: bool = False) -> dict[str, Any]:
    """A route on nlp's own prefix whose one rule sends (or, `mirror`, mirrors) to `ref`."""
    match = [{"path": {"type": "PathPrefix", "value": "/nlp/steal/"}}]
    own = {"name": "chat-kserve-workload-svc", "port": 8000}
    if mirror:
        rule = {"matches": match, "backendRefs": [own], "filters": [{"type": "RequestMirror", "requestMirror": {"backendRef": ref}}]}
    else:
        rule = {"matches": match, "backendRefs": [ref]}
    return _route("nlp", [], rule)
GATEWAY = {
    "apiVersion": "gateway.networking.k8s.io/v1",
    "kind": "Gateway",
    "metadata": {"name": "mine", "namespace": "nlp"},
    "spec": {"gatewayClassName": "istio", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]},
}


def _on_its_own_gateway(route: dict[str, Any]) -> dict[str, Any]:
    route = copy.deepcopy(route)
    route["spec"]["parentRefs"] = [{"name": "mine", "namespace": "nlp"}]
    return route


@pytest.mark.parametrize(
    ("name", "obj", "refused"),
    [
        ("KServe's preset paths", _route("nlp", ["/nlp/chat/v1/completions", "/publishers/nlp/models/chat/v1/completions"]), None),
        ("another team's prefix", _route("nlp", ["/vision/chat/v1/completions"]), OWN),
        ("the gateway's root", _route("nlp", ["/"]), OWN),
        ("a rule with no matches (defaulted to /)", _route("nlp", ["/nlp/chat/v1/completions"], {"backendRefs": [{"name": "x", "port": 80}]}), OWN),
        ("a regular expression", _route("nlp", [], {"matches": [{"path": {"type": "RegularExpression", "value": "/nlp/.*|/vision/.*"}}]}), OWN),
        ("its own prefix on a Gateway of its own", _on_its_own_gateway(_route("nlp", ["/nlp/chat/v1/completions"])), PLATFORMS),
        ("a Gateway of its own", GATEWAY, "holds no Gateway"),
        ("outside team namespaces", _route("kubeflow", ["/"]), None),
        ("its own Service (the CRD's default kind)", _sending_to({"name": "chat-kserve-workload-svc", "port": 8000}), None),
        ("another team's LLM by Istio's Hostname kind", _sending_to(HOSTNAME), BACKENDS),
        ("another team's Service, granted or not", _sending_to({"name": "chat-kserve-workload-svc", "namespace": "vision", "port": 8000}), BACKENDS),
        ("another team's InferencePool", _sending_to({"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "chat-inference-pool", "namespace": "vision", "port": 8000}), BACKENDS),
        ("a mirror to a Hostname", _sending_to(HOSTNAME, mirror=True), BACKENDS),
    ],
)
def test_a_team_namespace_takes_httproutes_on_its_own_prefixes_of_the_platforms_gateway_only(
    cluster: Cluster, routes_world: None, name: str, obj: dict[str, Any], refused: str | None
) -> None:
    message = refusal(cluster, copy.deepcopy(obj))
    assert (message is None) is (refused is None), f"{name}: {message}"
    if refused is not None:
        assert f"ValidatingAdmissionPolicy '{ROUTES_POLICY}'" in str(message) and refused in str(message), message
