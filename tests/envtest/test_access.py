"""The access matrix of the rendered dev stack with groups (tests/stacks/Pulumi.dev-groups.yaml:
dev's people plus group contributors): owner / editor / viewer / an owner group's, an editor
group's and a viewer group's member / a person in no group / another team's people / pods
elsewhere in the cluster, on every route we publish, with read and write methods. A person
signs in with the token Dex issues them: their e-mail, and their groups as the render's Dex
configuration gives its static users (the gateway's `kubeflow-groups` header). Each cell is evaluated over the full render with Istio's semantics (CUSTOM, DENY,
ALLOW; selectors, principals, headers, claims), the NetworkPolicies and the RBAC the
people have, then Grafana's own role (tests/support/mesh.py). RBAC is asked of a real API
server's authorizer (SubjectAccessReviews, tests/support/apiserver.py), holding the render's
RBAC with its ClusterRoles aggregated by a real kube-controller-manager (the envtest suite).

Two objects exist only at run time and are modelled from their upstream code: the profile
controller's `ns-owner-access-istio` policy and its RoleBindings (kubeflow/kubeflow v1.10.0
components/profile-controller/controllers/profile_controller.go: the owner through the gateway,
the namespace's own pods, probe paths, the notebook controller's kernel check;
tests/support/profile_controller.py: the owner as kubeflow-admin, the namespace's
`default-editor` account as kubeflow-edit), and what KubeRay
v1.7.0 and the notebook controller create (the head Service with its default ports, the
notebook's route /notebook/<ns>/<name>/ to port 8888 of its pod).

Kubeflow Pipelines is one central API server for every namespace, so who may do what there is
its own check (kubeflow/pipelines 2.16.1 backend/src/apiserver/resource/resource_manager.go
IsAuthorized: a SubjectAccessReview of the caller for `<verb>` on `pipelines.kubeflow.org/
<resource>` in the run's namespace), after the mesh: the UI (ml-pipeline-ui) forwards `/pipeline/
apis/...` to the API server with the caller's `kubeflow-userid` (frontend/server/app.ts, the
`/apis/` proxy), which the API server takes as the user (KUBEFLOW_USERID_HEADER); a caller
without that header is the service account of its bearer token (TokenReview, audience
pipelines.kubeflow.org). The matrix asks that review of the real authorizer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
import yaml

from components.access import (
    GATEWAY_PRINCIPAL,
    KUBEFLOW_GATEWAY,
    RAY_CLIENT_PORT,
    RAY_DASHBOARD_AUTH_PROXY_PORT,
    RAY_DASHBOARD_PORT,
    RAY_SERVE_PORT,
    USER_HEADER,
)
from components.monitoring import GRAFANA_CONTAINER_PORT
from components.profiles.serving import ROUTER, ROUTER_PORT
from tests.envtest.conftest import kept, rbac_of
from tests.support import mirror
from tests.support.apiserver import Cluster, Who, service_account, user
from tests.support.mesh import Pod, Request, istio_decision, network_allows, route
from tests.support.profile_controller import profile_owners
from tests.support.renders import rendered
from tooling.check import Platform

pytestmark = mirror.needed

TEAM, CLUSTER, NOTEBOOK = "nlp", "ray", "nb"
ROUTER_HOST = f"{ROUTER}.{TEAM}.svc.cluster.local"
GATEWAY_POD = Pod("istio-system", {"app": "istio-ingressgateway", "istio": "ingressgateway"})
DEX_ISSUER = "http://dex.auth.svc.cluster.local:5556/dex"
NOTEBOOK_CONTROLLER = "cluster.local/ns/kubeflow/sa/notebook-controller-service-account"
HEAD_LABELS = {"ray.io/cluster": CLUSTER, "ray.io/node-type": "head", "ray.io/is-ray-node": "yes"}
NOTEBOOK_LABELS = {"statefulset": NOTEBOOK, "notebook-name": NOTEBOOK}
NOTEBOOK_PORT = 8888
WRITE_ROLES = {"Admin", "Editor"}
KFP_UI = "ml-pipeline-ui.kubeflow.svc.cluster.local"
KFP_API = "ml-pipeline.kubeflow.svc.cluster.local"
KFP_UI_PORT, KFP_API_PORT = 3000, 8888
KFP_UI_PRINCIPAL = "cluster.local/ns/kubeflow/sa/ml-pipeline-ui"
KFP_API_PREFIX = "/pipeline/apis/"
"""What the KFP UI forwards to the API server (stripping `/pipeline`)."""
KFP_GROUP = "pipelines.kubeflow.org"
MLMD_ENVOY, MLMD_PORT = "metadata-envoy-service.kubeflow.svc.cluster.local", 9090
REGISTRY = f"model-registry-service.{TEAM}.svc.cluster.local"
REGISTRY_UI = "model-registry-ui-service.kubeflow.svc.cluster.local"
REGISTRY_PORT, REGISTRY_UI_PORT = 8080, 8080
REGISTRY_API = "/api/model_registry/v1alpha3/registered_models"
"""A team's Model Registry (kubeflow/hub v0.3.9 base/model-registry-service.yaml, port http-api 8080) and its REST API."""
KATIB_UI = "katib-ui.kubeflow.svc.cluster.local"
NO_SIDECAR = "sidecar.istio.io/inject"
"""The pod label that keeps Istio's sidecar out of a pod (the release's metadata-envoy has it)."""


def owner_policy(namespace: str, owner: str) -> dict[str, Any]:
    """ns-owner-access-istio as the profile controller v1.10.0 writes it."""
    return {
        "metadata": {"name": "ns-owner-access-istio", "namespace": namespace},
        "spec": {
            "action": "ALLOW",
            "rules": [
                {
                    "from": [{"source": {"principals": [GATEWAY_PRINCIPAL, "cluster.local/ns/kubeflow/sa/ml-pipeline-ui"]}}],
                    "when": [{"key": f"request.headers[{USER_HEADER}]", "values": [owner]}],
                },
                {"when": [{"key": "source.namespace", "values": [namespace]}]},
                {"to": [{"operation": {"paths": ["/healthz", "/metrics", "/wait-for-drain"]}}]},
                {"from": [{"source": {"principals": [NOTEBOOK_CONTROLLER]}}], "to": [{"operation": {"methods": ["GET"], "paths": ["*/api/kernels"]}}]},
            ],
        },
    }


@dataclass(frozen=True)
class Target:
    """A pod behind a Service, and the port the Service sends to."""

    pod: Pod
    port: int


class World:
    """Everything the matrix reads, from the render plus the run-time objects above."""

    def __init__(self, stack: str):
        render = rendered(stack)
        platform = Platform(render)
        objects = [o.obj for o in render.objects]
        self.namespaces = platform.namespaces
        self.profiles = profile_owners(objects)
        self.render_objects = objects
        self.policies = [o for o in objects if o["kind"] == "AuthorizationPolicy"]
        self.policies += [owner_policy(ns, owner) for ns, owner in self.profiles.items()]
        self.network = [o for o in objects if o["kind"] == "NetworkPolicy"]
        self.routes = [o for o in objects if o["kind"] == "VirtualService"]
        self.routes.append(
            {
                "spec": {
                    "gateways": [KUBEFLOW_GATEWAY],
                    "http": [
                        {
                            "match": [{"uri": {"prefix": f"/notebook/{TEAM}/{NOTEBOOK}/"}}],
                            "rewrite": {"uri": f"/notebook/{TEAM}/{NOTEBOOK}/"},
                            "route": [{"destination": {"host": f"{NOTEBOOK}.{TEAM}.svc.cluster.local", "port": {"number": 80}}}],
                        }
                    ],
                }
            }
        )
        def pod_labels(name: str) -> dict[str, str]:
            workload = next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == name)
            return dict(workload["spec"]["template"]["metadata"]["labels"])

        grafana_labels = pod_labels("grafana")
        self.kfp_api = Pod("kubeflow", pod_labels("ml-pipeline"))
        head = Pod(TEAM, HEAD_LABELS)
        self.targets = {
            (f"{CLUSTER}-head-svc.{TEAM}.svc.cluster.local", RAY_DASHBOARD_PORT): Target(head, RAY_DASHBOARD_PORT),
            (f"{CLUSTER}-head-svc.{TEAM}.svc.cluster.local", RAY_SERVE_PORT): Target(head, RAY_SERVE_PORT),
            (f"{CLUSTER}-head-svc.{TEAM}.svc.cluster.local", RAY_CLIENT_PORT): Target(head, RAY_CLIENT_PORT),
            (f"{CLUSTER}-dashboard-auth.{TEAM}.svc.cluster.local", RAY_DASHBOARD_AUTH_PROXY_PORT): Target(head, RAY_DASHBOARD_AUTH_PROXY_PORT),
            (f"{NOTEBOOK}.{TEAM}.svc.cluster.local", 80): Target(Pod(TEAM, NOTEBOOK_LABELS), NOTEBOOK_PORT),
            ("grafana.monitoring.svc.cluster.local", 80): Target(Pod("monitoring", grafana_labels), GRAFANA_CONTAINER_PORT),
            (KFP_UI, 80): Target(Pod("kubeflow", pod_labels("ml-pipeline-ui")), KFP_UI_PORT),
            (KFP_API, KFP_API_PORT): Target(self.kfp_api, KFP_API_PORT),
            (MLMD_ENVOY, MLMD_PORT): Target(Pod("kubeflow", pod_labels("metadata-envoy-deployment")), MLMD_PORT),
            (ROUTER_HOST, 80): Target(Pod(TEAM, {"app.kubernetes.io/name": ROUTER}), ROUTER_PORT),
        }
        deployments = {o["metadata"]["name"] for o in objects if o["kind"] == "Deployment"}
        if {"model-registry-deployment", "katib-ui"} <= deployments:  # a stack with the rest of Kubeflow (issue 43)
            self.targets[(REGISTRY, REGISTRY_PORT)] = Target(Pod(TEAM, pod_labels("model-registry-deployment")), REGISTRY_PORT)
            self.targets[(REGISTRY_UI, 80)] = Target(Pod("kubeflow", pod_labels("model-registry-ui")), REGISTRY_UI_PORT)
            self.targets[(KATIB_UI, 80)] = Target(Pod("kubeflow", pod_labels("katib-ui")), 8080)
        ini = next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "grafana")["data"]["grafana.ini"]
        self.grafana_role_header = re.search(r"^headers = Role:(\S+)$", ini, re.MULTILINE)[1].lower()  # type: ignore[index]
        self.grafana_default_role = re.search(r"^auto_assign_org_role = (\S+)$", ini, re.MULTILINE)[1]  # type: ignore[index]
        self.grafana_header = re.search(r"^header_name = (\S+)$", ini, re.MULTILINE)[1].lower()  # type: ignore[index]
        dex = yaml.safe_load(next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "dex")["data"]["config.yaml"])
        self.token_groups = {p["email"]: list(p.get("groups") or []) for p in dex.get("staticPasswords") or []}
        authn = next(o for o in objects if o["kind"] == "RequestAuthentication" and o["metadata"]["name"] == "dex-jwt")
        self.claim_headers = {h["claim"]: h["header"] for r in authn["spec"]["jwtRules"] for h in r.get("outputClaimToHeaders") or []}
        proxy = next(o for o in objects if o["kind"] == "ConfigMap" and "oauth2_proxy.cfg" in (o.get("data") or {}))
        config = proxy["data"]["oauth2_proxy.cfg"]
        self.email_domains = json.loads(re.search(r"^email_domains = (.*)$", config, re.MULTILINE)[1])  # type: ignore[index]
        self.emails = set((proxy["data"].get("authenticated-emails") or "").split())
        self.rbac = rbac_of(objects)
        self.cluster: Cluster | None = None
        """The control plane that holds `rbac` while a test asks (the `rbac_kept` fixture)."""

    def allows(self, who: Who, verb: str, resource: str, namespace: str, group: str = "") -> bool:
        """A SubjectAccessReview of `who` against the real RBAC authorizer."""
        assert self.cluster is not None, "this world's RBAC is not in a control plane: use the rbac_kept fixture"
        return self.cluster.allows(who, verb, resource, namespace, group)

    def oauth2_proxy_allows(self, email: str) -> bool:
        """oauth2-proxy v7.14.3 validator.go: a listed domain, or the e-mails file, or `*`."""
        address = email.lower()
        return "*" in self.email_domains or address.rsplit("@", 1)[1] in self.email_domains or address in self.emails

    def through_gateway(self, email: str, method: str, path: str, kfp: tuple[str, str] | None = None) -> tuple[bool, str]:
        """A signed-in person's browser request to the gateway, as far as it gets; `kfp`: the
        (verb, resource) the Pipelines API server checks for it."""
        return self.signed_in(email, self.token_groups.get(email, []), method, path, kfp)

    def signed_in(self, email: str, groups: list[str], method: str, path: str, kfp: tuple[str, str] | None = None) -> tuple[bool, str]:
        """`through_gateway` with a token that carries `groups`."""
        claims: dict[str, str | list[str]] = {"email": email, "sub": email}
        if groups:
            claims["groups"] = groups
        at_gateway = Request(method, path, 8080, claims=claims, request_principal=f"{DEX_ISSUER}/{email}")
        gateway = istio_decision(self.policies, GATEWAY_POD.namespace, GATEWAY_POD.labels, at_gateway, custom_allows=self.oauth2_proxy_allows(email))
        if not gateway.allowed:
            return False, f"gateway: {gateway.why}"
        # Envoy's claim_to_headers joins a list claim with commas (common/oauth2-proxy/components/README.md).
        headers = {self.claim_headers[c]: v if isinstance(v, str) else ",".join(v) for c, v in claims.items() if c in self.claim_headers}
        found = route(self.routes, KUBEFLOW_GATEWAY, path, {c: v for c, v in claims.items() if isinstance(v, str)}, headers)
        if found is None:
            return False, "no route"
        headers = {**headers, **{k.lower(): v for k, v in found.headers.items()}}
        target = self.targets[(found.host, found.port)]
        allowed, why = self._at(target, Request(method, found.path, target.port, GATEWAY_PRINCIPAL, GATEWAY_POD.namespace, headers), GATEWAY_POD)
        if not allowed or found.host != KFP_UI or not found.path.startswith(KFP_API_PREFIX):
            return allowed, why
        # The UI's proxy: the same request to the API server, as the UI, the caller's header kept.
        api = self.targets[(KFP_API, KFP_API_PORT)]
        forwarded = Request(method, found.path.removeprefix("/pipeline"), api.port, KFP_UI_PRINCIPAL, "kubeflow", headers)
        return self._at(api, forwarded, target.pod, kfp)

    def from_pod(
        self,
        source: Pod,
        principal: str | None,
        host: str,
        port: int,
        method: str,
        path: str,
        headers: dict[str, str],
        kfp: tuple[str, str] | None = None,
    ) -> tuple[bool, str]:
        """A pod's request straight to a Service, past the gateway (a bearer token of its own
        service account when it sends no identity header)."""
        target = self.targets[(host, port)]
        namespace = source.namespace if principal else None
        return self._at(target, Request(method, path, target.port, principal, namespace, headers), source, kfp)

    def api_server_allows(self, request: Request, verb: str, resource: str) -> tuple[bool, str]:
        """The Pipelines API server's own check: the caller (its `kubeflow-userid`, else its
        service-account token) may `verb` `resource` in the team's namespace."""
        header = request.headers.get(USER_HEADER)
        if header:
            caller = user(header)
        elif request.principal:
            _, namespace, _, account = request.principal.removeprefix("cluster.local/").split("/")
            caller = service_account(namespace, account)
        else:
            return False, "API server: no identity"
        allowed = self.allows(caller, verb, resource, TEAM, group=KFP_GROUP)
        return allowed, f"API server: {caller.name} {'may' if allowed else 'may not'} {verb} {resource} in {TEAM}"

    def _at(self, target: Target, request: Request, source: Pod, kfp: tuple[str, str] | None = None) -> tuple[bool, str]:
        if not network_allows(self.network, self.namespaces, target.pod, target.port, source):
            return False, f"NetworkPolicy of {target.pod.namespace}"
        if target.pod.labels.get(NO_SIDECAR) == "false":
            # No proxy in the pod: Istio's policies are never evaluated for it (its own check only).
            return True, "no sidecar: the mesh does not check it"
        decision = istio_decision(self.policies, target.pod.namespace, target.pod.labels, request)
        if not decision.allowed:
            return False, decision.why
        if target.pod.namespace == "monitoring" and request.method not in ("GET", "HEAD"):
            role = request.headers.get(self.grafana_role_header, self.grafana_default_role)
            if request.headers.get(self.grafana_header) is None or role not in WRITE_ROLES:
                return False, f"Grafana role {role}"
        if target.pod == self.kfp_api:
            assert kfp is not None, "a request to the Pipelines API names what the API server checks"
            return self.api_server_allows(request, *kfp)
        return True, decision.why

    def can(self, email: str, verb: str, resource: str, namespace: str, groups: tuple[str, ...] = (), group: str = "") -> bool:
        """kubectl as `email` in `groups` (what the authenticator says: on GKE, Google Groups for RBAC)."""
        return self.allows(user(email, *groups), verb, resource, namespace, group)


STACK = "dev-groups"


@cache
def world(stack: str = STACK) -> World:
    return World(stack)


@pytest.fixture(scope="module", autouse=True)
def rbac_kept(cluster: Cluster) -> Iterator[None]:
    """The matrix stack's RBAC in the control plane for this module, its ClusterRoles aggregated
    by the real controller manager; removed after."""
    w = world()
    with kept(cluster, w.rbac):
        w.cluster = cluster
        yield
        w.cluster = None


@dataclass(frozen=True)
class Actor:
    name: str
    email: str | None = None
    """Signs in through the gateway as this account."""
    pod: Pod | None = None
    """Or: a pod elsewhere in the cluster, which sends `kubeflow-userid` of its choice."""
    principal: str | None = None


KIM, BO, ANA, RAJ, LEAD = "kim@acme.com", "bo@acme.com", "ana@acme.com", "raj@acme.com", "lead@acme.com"
OLI, EVE, VIC, SAM = "oli@acme.com", "eve@acme.com", "vic@acme.com", "sam@acme.com"
"""In the fixture: oli in nlp-leads (nlp's admin group), eve in ml-nlp (edit) and ml-readers
(view), vic in ml-readers (view in nlp and vision), sam in no group and no team."""
OWNER_GROUP, EDITOR_GROUP, VIEWER_GROUP = "nlp-leads@acme.com", "ml-nlp@acme.com", "ml-readers@acme.com"
ACTORS = (
    Actor("owner", KIM),
    Actor("editor", BO),
    Actor("viewer", ANA),
    Actor("owner group", OLI),
    Actor("editor group", EVE),
    Actor("viewer group", VIC),
    Actor("person in no group", SAM),
    Actor("other team", RAJ),
    Actor("other team, Grafana admin", LEAD),
    Actor("pod outside the mesh", pod=Pod("default", {"app": "curl"})),
    Actor("other team's notebook", pod=Pod("research", {"notebook-name": "x"}), principal="cluster.local/ns/research/sa/default-editor"),
)
HEAD = f"{CLUSTER}-head-svc.{TEAM}.svc.cluster.local"
INFER = f"/serving/{TEAM}/mnist-cnn/v2/models/mnist-cnn/infer"
"""A query of the team's InferenceService mnist-cnn, through its router (components/profiles/serving.py)."""
TOKEN_PROXY = f"{CLUSTER}-dashboard-auth.{TEAM}.svc.cluster.local"
GRAFANA = "grafana.monitoring.svc.cluster.local"


@dataclass(frozen=True)
class Operation:
    route: str
    access: str
    """read or write"""
    method: str
    path: str
    """Through the gateway."""
    host: str
    port: int
    direct_path: str
    """The same request straight at the Service."""
    kfp: tuple[str, str] | None = None
    """The Pipelines API server's check of it: (verb, resource of pipelines.kubeflow.org)."""


OPERATIONS = (
    Operation("Ray dashboard", "read", "GET", f"/ray/{TEAM}/{CLUSTER}/", HEAD, RAY_DASHBOARD_PORT, "/"),
    Operation("Ray job API", "read", "GET", f"/ray/{TEAM}/{CLUSTER}/api/jobs/", HEAD, RAY_DASHBOARD_PORT, "/api/jobs/"),
    Operation("Ray job API", "write", "POST", f"/ray/{TEAM}/{CLUSTER}/api/jobs/", HEAD, RAY_DASHBOARD_PORT, "/api/jobs/"),
    Operation("Ray job API", "write", "DELETE", f"/ray/{TEAM}/{CLUSTER}/api/jobs/raysubmit_1", HEAD, RAY_DASHBOARD_PORT, "/api/jobs/raysubmit_1"),
    Operation("Ray dashboard", "write", "GET", f"/ray/{TEAM}/{CLUSTER}/worker/cpu_profile?pid=1", HEAD, RAY_DASHBOARD_PORT, "/worker/cpu_profile?pid=1"),
    Operation("Ray Serve", "read", "GET", f"/ray-serve/{TEAM}/{CLUSTER}/regressor", HEAD, RAY_SERVE_PORT, "/regressor"),
    Operation("Ray Serve", "write", "POST", f"/ray-serve/{TEAM}/{CLUSTER}/regressor", HEAD, RAY_SERVE_PORT, "/regressor"),
    Operation("Ray client", "write", "POST", "", HEAD, RAY_CLIENT_PORT, "/ray.rpc.RayletDriver/Init"),
    # The head's token proxy adds the cluster's token: only the gateway may reach it.
    Operation("Ray token proxy", "write", "POST", "", TOKEN_PROXY, RAY_DASHBOARD_AUTH_PROXY_PORT, "/api/jobs/"),
    Operation("notebook", "write", "GET", f"/notebook/{TEAM}/{NOTEBOOK}/api/terminals/websocket/1", f"{NOTEBOOK}.{TEAM}.svc.cluster.local", 80, f"/notebook/{TEAM}/{NOTEBOOK}/api/terminals/websocket/1"),
    Operation("Grafana", "read", "GET", "/grafana/d/gpus-by-team", GRAFANA, 80, "/grafana/d/gpus-by-team"),
    Operation("Grafana", "write", "POST", "/grafana/api/dashboards/db", GRAFANA, 80, "/grafana/api/dashboards/db"),
    # The team's models: a query is a POST, and viewers may query (components/access.py SERVING_PATH).
    Operation("model", "read", "POST", INFER, ROUTER_HOST, 80, INFER),
    Operation("model", "read", "GET", f"/serving/{TEAM}/mnist-cnn/v2/models/mnist-cnn/ready", ROUTER_HOST, 80, f"/serving/{TEAM}/mnist-cnn/v2/models/mnist-cnn/ready"),
    # Kubeflow Pipelines: the UI's page (one app for every namespace), and its API through the UI.
    Operation("Pipelines UI", "read", "GET", "/pipeline/", KFP_UI, 80, "/pipeline/"),
    Operation("Pipelines API", "read", "GET", f"/pipeline/apis/v2beta1/runs?namespace={TEAM}", KFP_API, KFP_API_PORT, f"/apis/v2beta1/runs?namespace={TEAM}", ("list", "runs")),
    Operation("Pipelines API", "read", "GET", f"/pipeline/apis/v2beta1/experiments?namespace={TEAM}", KFP_API, KFP_API_PORT, f"/apis/v2beta1/experiments?namespace={TEAM}", ("list", "experiments")),
    Operation("Pipelines API", "write", "POST", "/pipeline/apis/v2beta1/runs", KFP_API, KFP_API_PORT, "/apis/v2beta1/runs", ("create", "runs")),
    Operation("Pipelines API", "write", "POST", "/pipeline/apis/v2beta1/experiments", KFP_API, KFP_API_PORT, "/apis/v2beta1/experiments", ("create", "experiments")),
    Operation("Pipelines API", "write", "DELETE", "/pipeline/apis/v2beta1/runs/r1", KFP_API, KFP_API_PORT, "/apis/v2beta1/runs/r1", ("delete", "runs")),
    Operation("Pipelines API", "write", "POST", "/pipeline/apis/v2beta1/pipelines/upload", KFP_API, KFP_API_PORT, "/apis/v2beta1/pipelines/upload", ("create", "pipelines")),
    # ML Metadata through its gRPC-web proxy (the UI's Artifacts and Executions pages): upstream
    # has no per-namespace check there; docs/pipelines.md, "Access".
    Operation("ML Metadata", "read", "POST", "/ml_metadata/ml_metadata.MetadataStoreService/GetArtifacts", MLMD_ENVOY, MLMD_PORT, "/ml_metadata/ml_metadata.MetadataStoreService/GetArtifacts"),
    # kfp.Client() in a notebook of the namespace: the API server straight, its account's token.
    Operation("Pipelines API from a notebook", "write", "POST", "", KFP_API, KFP_API_PORT, "/apis/v2beta1/runs", ("create", "runs")),
    # The team's Model Registry (docs/model-registry.md): its REST API from a pod of the namespace (no
    # gateway route leads to it), and the one UI for every team, reads only.
    Operation("Model Registry from a notebook", "read", "GET", "", REGISTRY, REGISTRY_PORT, REGISTRY_API),
    Operation("Model Registry from a notebook", "write", "POST", "", REGISTRY, REGISTRY_PORT, REGISTRY_API),
    Operation("Model Registry UI", "read", "GET", f"/model-registry/api/v1/model_registry?namespace={TEAM}", REGISTRY_UI, 80, f"/api/v1/model_registry?namespace={TEAM}"),
    Operation("Model Registry UI", "write", "POST", f"/model-registry/api/v1/model_registry/model-registry-service/registered_models?namespace={TEAM}", REGISTRY_UI, 80, "/api/v1/model_registry/model-registry-service/registered_models"),
    # Katib's UI: one app for every namespace; its backend reviews the user itself (docs/katib.md, Access).
    Operation("Katib UI", "read", "GET", f"/katib/fetch_experiments/?namespace={TEAM}", KATIB_UI, 80, f"/katib/fetch_experiments/?namespace={TEAM}"),
)

# Who may: per (route, access), the actors allowed. Everyone who signs in reads Grafana;
# only its admins change it. Nobody reaches anything past the gateway from outside.
MEMBERS = {"owner", "editor", "viewer", "owner group", "editor group", "viewer group"}
WRITERS = {"owner", "editor", "owner group", "editor group"}
SIGNED_IN = MEMBERS | {"person in no group", "other team", "other team, Grafana admin"}
EXPECTED = {
    ("Ray dashboard", "read"): MEMBERS,
    ("Ray job API", "read"): MEMBERS,
    ("Ray job API", "write"): WRITERS,
    ("Ray dashboard", "write"): WRITERS,
    ("Ray Serve", "read"): MEMBERS,
    ("Ray Serve", "write"): WRITERS,
    ("Ray client", "write"): WRITERS,
    ("Ray token proxy", "write"): set(),
    ("notebook", "write"): WRITERS,
    ("model", "read"): MEMBERS,
    ("Grafana", "read"): SIGNED_IN,
    ("Grafana", "write"): {"other team, Grafana admin"},
    ("Pipelines UI", "read"): SIGNED_IN,
    ("Pipelines API", "read"): MEMBERS,
    ("Pipelines API", "write"): WRITERS,
    ("Pipelines API from a notebook", "write"): WRITERS,
    ("ML Metadata", "read"): SIGNED_IN,
    ("Model Registry from a notebook", "read"): WRITERS,  # a pod of the namespace: who may run one there
    ("Model Registry from a notebook", "write"): WRITERS,
    ("Model Registry UI", "read"): SIGNED_IN,  # the mesh lets the gateway in; the UI's backend reviews who may read the team's Services
    ("Model Registry UI", "write"): set(),  # read-only: its backend would let a viewer write (components/model_registry.py)
    ("Katib UI", "read"): SIGNED_IN,  # the mesh; the UI reviews the user for each namespace (APP_DISABLE_AUTH=false)
}
CELLS = [(a, o) for a in ACTORS for o in OPERATIONS]


def attempt(actor: Actor, op: Operation) -> tuple[bool, str]:
    w = world()
    if actor.pod is not None:
        spoofed = {USER_HEADER: KIM, w.grafana_role_header: "Admin"}
        return w.from_pod(actor.pod, actor.principal, op.host, op.port, op.method, op.direct_path, spoofed, op.kfp)
    assert actor.email
    if not op.path:
        # Not published on the gateway: reached from a pod of the team namespace, which takes
        # creating one (or exec into one, or port-forward) there.
        if not any(w.can(actor.email, "create", r, TEAM) for r in ("pods", "pods/exec", "pods/portforward")):
            return False, "RBAC: no pod of its own in the namespace"
        editor_pod = Pod(TEAM, {"notebook-name": "mine"})
        return w.from_pod(editor_pod, f"cluster.local/ns/{TEAM}/sa/default-editor", op.host, op.port, op.method, op.direct_path, {}, op.kfp)
    return w.through_gateway(actor.email, op.method, op.path, op.kfp)


@pytest.mark.parametrize(("actor", "op"), CELLS, ids=[f"{a.name}|{o.route} {o.access} {o.method}" for a, o in CELLS])
def test_access_matrix_cell(actor: Actor, op: Operation) -> None:
    allowed, why = attempt(actor, op)
    expected = actor.name in EXPECTED[(op.route, op.access)]
    assert allowed == expected, f"{actor.name} {op.method} {op.path or op.direct_path}: {'allowed' if allowed else 'denied'} ({why})"


def test_every_route_we_publish_is_in_the_matrix() -> None:
    """A new route on the Kubeflow gateway needs its rows here."""
    published = {
        http["match"][0]["uri"]["prefix"]
        for vs in world().routes
        if KUBEFLOW_GATEWAY in vs["spec"]["gateways"] and (vs.get("metadata") or {}).get("namespace") in (TEAM, "monitoring")
        for http in vs["spec"]["http"]
    }
    assert published == {f"/ray/{TEAM}/{CLUSTER}/", f"/ray-serve/{TEAM}/{CLUSTER}/", f"/serving/{TEAM}/", "/grafana/"}
    pipelines = {
        http["match"][0]["uri"]["prefix"]
        for vs in world().routes
        if (vs.get("metadata") or {}).get("name") in ("ml-pipeline-ui", "metadata-grpc")
        for http in vs["spec"]["http"]
    }
    assert pipelines == {"/pipeline", "/ml_metadata"}  # the UI (and through it the API, KFP_API_PREFIX), ML Metadata
    assert {(o.route, o.access) for o in OPERATIONS} == set(EXPECTED)


def test_a_viewer_keeps_the_kfam_objects_the_dashboard_shows() -> None:
    names = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in world().policies}
    assert (TEAM, "user-ana-acme-com-clusterrole-view") in names and (TEAM, "user-bo-acme-com-clusterrole-edit") in names


def test_only_listed_accounts_pass_the_gateway_of_an_oidc_stack() -> None:
    """prod lets in acme.com: a Google account elsewhere is stopped by oauth2-proxy and, for a
    token sent as a bearer (which skips oauth2-proxy), by the gateway itself."""
    prod = world("prod")
    assert prod.email_domains == ["acme.com"]
    assert prod.oauth2_proxy_allows("ana@acme.com") and not prod.oauth2_proxy_allows("ana@gmail.com")
    bearer = Request("GET", "/grafana/", 8080, claims={"email": "ana@gmail.com"}, request_principal=f"{DEX_ISSUER}/x", headers={"authorization": "Bearer t"})
    decision = istio_decision(prod.policies, "istio-system", GATEWAY_POD.labels, bearer)
    assert not decision.allowed and "allowed-identities" in decision.why
    assert prod.through_gateway("ana@acme.com", "GET", "/grafana/")[0]


def test_no_shared_grafana_login_in_any_render() -> None:
    for stack in ("dev", "prod"):
        objects = [o.obj for o in rendered(stack).objects]
        assert not [o for o in objects if o["kind"] == "Secret" and o["metadata"]["name"].startswith("grafana")]
        grafana = next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "grafana")
        env = {e["name"]: e for c in grafana["spec"]["template"]["spec"]["containers"] for e in c.get("env") or []}
        assert env["GF_SECURITY_DISABLE_INITIAL_ADMIN_CREATION"]["value"] == "true"
        assert not {"GF_SECURITY_ADMIN_USER", "GF_SECURITY_ADMIN_PASSWORD"} & set(env)


def test_without_the_role_aware_policies_a_viewer_submits_a_ray_job() -> None:
    """The matrix is sensitive to them: KFAM's policies alone let a viewer run code."""
    w = world()
    submit = next(o for o in OPERATIONS if o.method == "POST" and o.route == "Ray job API")
    viewer = next(a for a in ACTORS if a.name == "viewer")
    assert attempt(viewer, submit) == (False, f"DENY {TEAM}/viewers-read-only")
    kept = w.policies
    try:
        w.policies = [p for p in kept if not p["metadata"]["name"].endswith("viewers-read-only")]
        allowed, why = attempt(viewer, submit)
    finally:
        w.policies = kept
    assert allowed and why == f"ALLOW {TEAM}/user-ana-acme-com-clusterrole-view"


@pytest.mark.parametrize(
    ("email", "reads"), [(KIM, True), (BO, True), (ANA, False), (OLI, True), (EVE, True), (VIC, False), (SAM, False), (RAJ, False)]
)
def test_the_ray_token_secret_is_readable_by_owners_and_editors_only(email: str, reads: bool) -> None:
    """KubeRay keeps the team cluster's token in a Secret of the namespace (docs/teams.md)."""
    w = world()
    assert w.can(email, "get", "secrets", TEAM) is reads
    assert w.can(email, "create", "pods", TEAM) is reads  # a pod with the PodDefault gets it too


# The Kubernetes verbs of the matrix (tests/e2e/access.py ACTIONS), for kubectl as a member the
# stack does not list, in the group only by what the authenticator says: the group's own
# RoleBinding (a Group subject) answers, so kubectl follows the group live.
UNLISTED = "new-hire@acme.com"
VERBS = (("get", "", "pods"), ("create", "", "pods"), ("get", "", "secrets"), ("list", "trainer.kubeflow.org", "trainjobs"),
         ("create", "trainer.kubeflow.org", "trainjobs"), ("create", "ray.io", "rayclusters"), ("create", "rbac.authorization.k8s.io", "rolebindings"))
BY_GROUP = {
    OWNER_GROUP: set(VERBS),
    EDITOR_GROUP: {v for v in VERBS if v[2] != "rolebindings"},
    VIEWER_GROUP: {("get", "", "pods"), ("list", "trainer.kubeflow.org", "trainjobs")},
    "somebody-else@acme.com": set(),
}


@pytest.mark.parametrize(("group", "verb"), [(g, v) for g in BY_GROUP for v in VERBS], ids=[f"{g}|{' '.join(v)}" for g in BY_GROUP for v in VERBS])
def test_kubectl_as_a_group_member_follows_the_group(group: str, verb: tuple[str, str, str]) -> None:
    action, api_group, resource = verb
    w = world()
    assert w.can(UNLISTED, action, resource, TEAM, groups=(group,), group=api_group) is (verb in BY_GROUP[group])
    assert not w.can(UNLISTED, action, resource, TEAM, group=api_group)  # without the group: nothing


def test_a_group_member_is_also_bound_as_a_person_for_the_web_apps_and_pipelines() -> None:
    """The web apps and Pipelines review the user without groups: the member's own binding."""
    w = world()
    assert w.can(EVE, "create", "pods", TEAM) and w.can(VIC, "get", "pods", TEAM) and not w.can(VIC, "create", "pods", TEAM)
    assert w.can(VIC, "get", "pods", "vision") and not w.can(EVE, "create", "pods", "vision")
    assert not w.can(SAM, "get", "pods", TEAM)


def test_the_group_objects_carry_the_proposed_upstream_naming() -> None:
    """kubeflow/dashboard PR #317: group-<group>-clusterrole-<role>, annotations group and role."""
    objects = [o.obj for o in rendered(STACK).objects if o.obj["metadata"].get("namespace") == TEAM]
    for group, role in ((OWNER_GROUP, "admin"), (EDITOR_GROUP, "edit"), (VIEWER_GROUP, "view")):
        name = f"group-{group.replace('@', '-').replace('.', '-')}-clusterrole-{role}"
        pair = {o["kind"]: o for o in objects if o["metadata"]["name"] == name}
        assert set(pair) == {"RoleBinding", "AuthorizationPolicy"}, name
        assert all(o["metadata"]["annotations"] == {"group": group, "role": role} for o in pair.values())
        assert pair["RoleBinding"]["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}]
        assert pair["RoleBinding"]["roleRef"]["name"] == f"kubeflow-{role}"
    member = next(o for o in objects if o["kind"] == "RoleBinding" and o["metadata"]["name"] == "user-eve-acme-com-clusterrole-edit")
    assert member["metadata"]["annotations"] == {"user": EVE, "role": "edit", "mlplatform.io/groups": EDITOR_GROUP}


def test_a_team_registry_answers_the_ui_with_reads_only() -> None:
    """The UI (its own identity, no user header: kubeflow/hub v0.3.8 clients/ui/bff) reads a team's
    registry; a write from it is refused at the registry too, whatever the UI's own policy."""
    w = world()
    ui = Pod("kubeflow", {"app": "model-registry-ui"})
    principal = "cluster.local/ns/kubeflow/sa/model-registry-ui"
    assert w.from_pod(ui, principal, REGISTRY, REGISTRY_PORT, "GET", REGISTRY_API, {})[0]
    assert not w.from_pod(ui, principal, REGISTRY, REGISTRY_PORT, "POST", REGISTRY_API, {})[0]


def test_a_teams_model_servers_read_its_registry_and_not_another_teams() -> None:
    """The Hub's storage initializer runs in the serving pod, after its mesh sidecar, as the pod's
    account (docs/serving.md, "A registered model by name"): the team's registry answers it; a
    model server of another team naming this registry (`?namespace=` or its host) is refused."""
    w = world()
    serving = {"serving.kserve.io/inferenceservice": "mnist-cnn"}
    lookup = "/api/model_registry/v1alpha3/registered_model?name=mnist-cnn"
    own = Pod(TEAM, serving)
    assert w.from_pod(own, f"cluster.local/ns/{TEAM}/sa/model-server", REGISTRY, REGISTRY_PORT, "GET", lookup, {})[0]
    other = Pod("research", serving)
    assert not w.from_pod(other, "cluster.local/ns/research/sa/model-server", REGISTRY, REGISTRY_PORT, "GET", lookup, {})[0]


KINDS = (
    ("kubeflow.org", "experiments"),
    ("kubeflow.org", "trials"),
    ("sparkoperator.k8s.io", "sparkapplications"),
    ("sparkoperator.k8s.io", "scheduledsparkapplications"),
)
"""Katib's and the Spark operator's kinds, which their trees' aggregated roles give the profile roles
(kubeflow-katib-edit/-view, kubeflow-spark-edit/-view: aggregate-to-kubeflow-edit/-view)."""


@pytest.mark.parametrize(("group", "resource"), KINDS, ids=[r for _, r in KINDS])
def test_katib_and_spark_kinds_follow_the_profile_roles(group: str, resource: str) -> None:
    w = world()
    for email, writes in ((KIM, True), (BO, True), (ANA, False)):
        assert w.can(email, "list", resource, TEAM, group=group), email
        assert w.can(email, "create", resource, TEAM, group=group) is writes, email
    assert not w.can(RAJ, "list", resource, TEAM, group=group)  # another team's
    assert not w.can(SAM, "list", resource, TEAM, group=group)  # in no group of this team


# --- serving: who deploys, and the model client's tokens ----------------------------------------


def test_editors_deploy_models_in_their_team_and_viewers_only_read_them() -> None:
    """An editor of nlp may create InferenceServices there (kubeflow-edit, with KServe's roles
    aggregated into it), a viewer may read them only, another team's person neither."""
    w = world()

    def may(email: str, verb: str, namespace: str = TEAM) -> bool:
        return w.can(email, verb, "inferenceservices", namespace, group="serving.kserve.io")

    assert may(BO, "create") and may(BO, "delete") and may(KIM, "create")
    assert may(ANA, "get") and not may(ANA, "create") and not may(ANA, "patch")
    assert not may(RAJ, "create") and not may(RAJ, "get")


def _model_client_query(namespace: str, path: str) -> tuple[bool, str]:
    """A program's query with its team's model-client token: verified at the gateway by the
    stack's serving RequestAuthentication, its `sub` then the request's kubeflow-userid."""
    w = world()
    authn = next(o for o in w.render_objects if o["kind"] == "RequestAuthentication" and o["metadata"]["name"] == "serving-tokens")
    issuer = authn["spec"]["jwtRules"][0]["issuer"]
    subject = f"system:serviceaccount:{namespace}:model-client"
    at_gateway = Request("POST", path, 8080, headers={"authorization": "Bearer <token>"}, claims={"sub": subject}, request_principal=f"{issuer}/{subject}")
    gateway = istio_decision(w.policies, GATEWAY_POD.namespace, GATEWAY_POD.labels, at_gateway)
    if not gateway.allowed:
        return False, f"gateway: {gateway.why}"
    found = route(w.routes, KUBEFLOW_GATEWAY, path, {"sub": subject}, {USER_HEADER: subject})
    if found is None:
        return False, "no route"
    target = w.targets[(found.host, found.port)]
    return w._at(target, Request("POST", found.path, target.port, GATEWAY_PRINCIPAL, GATEWAY_POD.namespace, {USER_HEADER: subject}), GATEWAY_POD)


def test_a_teams_model_client_token_queries_its_teams_models_and_nothing_else() -> None:
    assert _model_client_query(TEAM, INFER)[0], _model_client_query(TEAM, INFER)[1]
    # Another team's client, on nlp's models: refused at the gateway (its token is for its own prefix).
    allowed, why = _model_client_query("research", INFER)
    assert not allowed and why.startswith("gateway"), why
    # nlp's client anywhere else: the gateway refuses it.
    for path in (f"/ray/{TEAM}/{CLUSTER}/api/jobs/", f"/notebook/{TEAM}/{NOTEBOOK}/", "/pipeline/apis/v2beta1/runs", "/grafana/"):
        allowed, why = _model_client_query(TEAM, path)
        assert not allowed and why.startswith("gateway"), (path, why)


def test_no_other_token_of_the_cluster_passes_the_gateway() -> None:
    """The gateway's allowed-identities rule leaves the cluster issuer's tokens out (components/
    access.py gateway_identity_policy `machine_issuers`): what keeps every one of them but the model
    clients' out is the serving-tokens DENY. A token of that issuer and audience for any other
    account (a notebook's default-editor, KFP's runner, a lookalike of the client's name) is refused
    on the team's models and everywhere else; a request with no token at all is refused too."""
    w = world()
    authn = next(o for o in w.render_objects if o["kind"] == "RequestAuthentication" and o["metadata"]["name"] == "serving-tokens")
    issuer = authn["spec"]["jwtRules"][0]["issuer"]
    subjects = (
        f"system:serviceaccount:{TEAM}:default-editor",
        "system:serviceaccount:kubeflow:pipeline-runner",
        f"system:serviceaccount:{TEAM}:model-client-x",
        f"system:serviceaccount:{TEAM}:model-clien",
    )
    for subject in subjects:
        for path in (INFER, f"/ray/{TEAM}/{CLUSTER}/api/jobs/", "/pipeline/apis/v2beta1/runs", "/grafana/"):
            request = Request("POST", path, 8080, headers={"authorization": "Bearer <token>"}, claims={"sub": subject}, request_principal=f"{issuer}/{subject}")
            decision = istio_decision(w.policies, GATEWAY_POD.namespace, GATEWAY_POD.labels, request)
            assert not decision.allowed and "serving-tokens" in decision.why, (subject, path, decision.why)
    anonymous = Request("POST", INFER, 8080)
    decision = istio_decision(w.policies, GATEWAY_POD.namespace, GATEWAY_POD.labels, anonymous, custom_allows=True)
    assert not decision.allowed and ("require-jwt" in decision.why or "allowed-identities" in decision.why), decision.why


def test_a_token_of_an_issuer_added_later_is_still_judged_by_its_email() -> None:
    """allowed-identities leaves out the serving issuer's tokens alone (serving-tokens confines
    them); a token of any other issuer the gateway might come to trust (Kubeflow's istio-m2m
    trusts the cluster's own issuer for every token, kind's here) carries no listed e-mail and is
    refused, as before serving."""
    w = world()
    authn = next(o for o in w.render_objects if o["kind"] == "RequestAuthentication" and o["metadata"]["name"] == "serving-tokens")
    issuer = authn["spec"]["jwtRules"][0]["issuer"]
    identity = next(p for p in w.policies if p["metadata"]["name"] == "istio-ingressgateway-allowed-identities")
    assert identity["spec"]["rules"][0]["from"] == [{"source": {"notRequestPrincipals": [f"{issuer}/*"]}}]
    subject = f"system:serviceaccount:{TEAM}:model-client"
    for other in ("https://kubernetes.default.svc.cluster.local", "https://accounts.google.com"):
        request = Request("POST", INFER, 8080, headers={"authorization": "Bearer <token>"}, claims={"sub": subject}, request_principal=f"{other}/{subject}")
        decision = istio_decision(w.policies, GATEWAY_POD.namespace, GATEWAY_POD.labels, request)
        assert not decision.allowed and "allowed-identities" in decision.why, (other, decision.why)
