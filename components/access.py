"""Who may do what through the Kubeflow gateway: the identity it asserts, and the Istio
AuthorizationPolicies that make a profile's roles hold on every route we publish.

The gateway (kubeflow/manifests 26.03 common/oauth2-proxy, common/istio/kubeflow-istio-
resources) signs people in with oauth2-proxy and Dex, verifies the Dex JWT
(RequestAuthentication `dex-jwt` in istio-system) and copies its `email` claim into the
`kubeflow-userid` header (`outputClaimToHeaders`, Envoy jwt_authn `claim_to_headers`, which
replaces a client's own header of that name). Workloads see the gateway's mTLS principal
and that header.

KFAM's contributor policies and the profile controller's `ns-owner-access-istio` are ALLOW
policies that ignore the role (kubeflow/kubeflow v1.10.0 components/access-management/kfam/
api_default.go; components/profile-controller/controllers/profile_controller.go
getAuthorizationPolicy): a `view` contributor passes the same check as an editor. We keep
them (the dashboard lists and removes contributors by them) and add DENY policies beside
them. Istio evaluates CUSTOM, then DENY, then ALLOW (istio.io 1.29 docs, "Authorization
Policy": a matching DENY wins over any ALLOW), so these make `view` read-only whatever
ALLOW policies exist. They match requests from the gateway whose `kubeflow-userid` is not
one of the team's writers (owner and `edit` contributors of the stack file); Istio's
`notValues` also matches a missing header (pilot/pkg/security/authz/model/model.go 1.29.0:
notValues become a `not_id` of the header matchers).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

USER_HEADER = "kubeflow-userid"
# kubeflow/manifests 26.03 profiles params.env / KFAM defaults.
GATEWAY_PRINCIPAL = "cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account"
KFP_UI_PRINCIPAL = "cluster.local/ns/kubeflow/sa/ml-pipeline-ui"
GATEWAY_PRINCIPALS = (GATEWAY_PRINCIPAL, KFP_UI_PRINCIPAL)
"""Who KFAM's policies let act on behalf of the user in `kubeflow-userid`."""
KUBEFLOW_GATEWAY = "kubeflow/kubeflow-gateway"
GATEWAY_SELECTOR = {"app": "istio-ingressgateway"}
"""The release's gateway policies select the gateway pods by this label."""
# The paths the release's gateway policies leave open for signing in (common/oauth2-proxy/
# components/istio-external-auth: notPaths of istio-ingressgateway-require-jwt).
SIGN_IN_PATHS = ("/dex/*", "/oauth2/*")
READ_METHODS = ("GET", "HEAD")
"""What a viewer may send: reads. Everything else (POST, PUT, PATCH, DELETE, ...) acts."""
SECURITY_API = "security.istio.io/v1"

# Ray 2.58.0 dashboard routes (python/ray/dashboard/modules/*): every write is a POST, PUT or
# DELETE (jobs: POST /api/jobs/, POST /api/jobs/{id}/stop, DELETE /api/jobs/{id}, PUT
# /api/packages/..; Serve: PUT/DELETE /api/serve/applications/), except these GETs of
# modules/reporter/reporter_head.py, which attach py-spy, memray or the GPU/JAX profilers to
# processes (/worker/traceback, /worker/{cpu,gpu,jax}_profile, /task/..., /memory_profile).
# 2.46's GET /api/actors/kill is gone at 2.58; kept here in case a route of that name returns.
RAY_ACTING_GETS = ("/api/actors/kill*", "/worker/*", "/task/*", "/memory_profile*")
RAY_DASHBOARD_PORT = 8265
"""KubeRay v1.7.0 DefaultDashboardPort (ray-operator/controllers/ray/utils/constant.go): the dashboard
and the Jobs API, behind the cluster's token (ray 2.58.0 dashboard/http_server_head.py)."""
RAY_DASHBOARD_AUTH_PROXY_PORT = 8266
"""Where the head's token proxy listens (components/profiles/ray.py): the gateway's way into the dashboard."""
RAY_SERVE_PORT = 8000
"""KubeRay v1.7.0 DefaultServingPort: the head Service's `serve` port, Ray Serve's HTTP proxy."""
RAY_CLIENT_PORT = 10001
"""KubeRay v1.7.0 DefaultClientPort: Ray client (`ray://`), gRPC: code runs in the cluster."""
RAY_PUBLISHED_PORTS = (RAY_DASHBOARD_AUTH_PROXY_PORT, RAY_SERVE_PORT)
"""The Ray ports the gateway routes to (components/profiles/ray.py)."""


def identities(emails: Iterable[str]) -> list[str]:
    """The header values that mean these people: each address as written and lowercased
    (Istio compares header values exactly; identity providers often lowercase e-mails)."""
    return sorted({form for email in emails for form in (email, email.lower())})


def _policy(name: str, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": SECURITY_API, "kind": "AuthorizationPolicy", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def _not_a_writer(writers: Sequence[str], to: list[dict[str, Any]]) -> dict[str, Any]:
    """A rule: from the gateway on behalf of someone who is not a writer, to `to`."""
    return {
        "from": [{"source": {"principals": list(GATEWAY_PRINCIPALS)}}],
        "to": to,
        "when": [{"key": f"request.headers[{USER_HEADER}]", "notValues": identities(writers)}],
    }


VIEWERS_READ_ONLY = "viewers-read-only"
NOTEBOOK_PATH = "/notebook/{namespace}/*"
"""The notebook controller routes /notebook/<namespace>/<name>/ to the notebook unchanged
(kubeflow/kubeflow v1.10.0 components/notebook-controller/controllers/notebook_controller.go
generateVirtualService: the rewrite keeps the prefix Jupyter serves under)."""


SERVING_PATH = "/serving/{namespace}/*"
"""The team's models (facts/naming.py serving_path; components/profiles/serving.py): a query is a
POST, and viewers may query. The path alone decides where the gateway sends a request (its
route to the team's model router), so leaving it out of the read-only rule opens nothing else."""


def team_policies(namespace: str, writers: Sequence[str]) -> list[dict[str, Any]]:
    """In a team namespace, for everyone who is not a writer (viewers, and anyone the
    dashboard added): reads only, but for queries of the team's models, and no notebook at all
    (a Jupyter server runs code for whoever reaches it, even over GET: terminals and kernels are
    websockets)."""
    spec = {
        "action": "DENY",
        "rules": [
            _not_a_writer(
                writers, [{"operation": {"notMethods": list(READ_METHODS), "notPaths": [SERVING_PATH.format(namespace=namespace)]}}]
            ),
            _not_a_writer(writers, [{"operation": {"paths": [NOTEBOOK_PATH.format(namespace=namespace)]}}]),
        ],
    }
    return [_policy(VIEWERS_READ_ONLY, namespace, spec)]


def ray_policy(namespace: str, cluster: str, writers: Sequence[str]) -> dict[str, Any]:
    """On every pod of a team Ray cluster, for everyone who is not a writer: only the
    gateway's dashboard port and Serve's (never the Ray client, GCS or the agents' job API),
    and none of the dashboard's acting GETs. With `team_policies` a viewer reads the dashboard,
    the job list and logs, and GETs Serve; submitting, stopping or deleting a job does not pass."""
    spec = {
        "action": "DENY",
        "selector": {"matchLabels": {"ray.io/cluster": cluster}},
        "rules": [
            _not_a_writer(writers, [{"operation": {"notPorts": [str(p) for p in RAY_PUBLISHED_PORTS]}}]),
            _not_a_writer(
                writers, [{"operation": {"ports": [str(RAY_DASHBOARD_AUTH_PROXY_PORT)], "paths": list(RAY_ACTING_GETS)}}]
            ),
        ],
    }
    return _policy(f"{cluster}-ray-viewers-read-only", namespace, spec)


def ray_dashboard_proxy_policy(namespace: str, cluster: str) -> dict[str, Any]:
    """The head's token proxy answers the gateway only: it adds the cluster's token to every
    request, so anyone else reaching its port would act on the cluster without one. Pods of the
    namespace that hold the token (notebooks, through the PodDefault) use the dashboard's own port."""
    spec = {
        "action": "DENY",
        "selector": {"matchLabels": {"ray.io/cluster": cluster, "ray.io/node-type": "head"}},
        "rules": [
            {
                "from": [{"source": {"notPrincipals": [GATEWAY_PRINCIPAL]}}],
                "to": [{"operation": {"ports": [str(RAY_DASHBOARD_AUTH_PROXY_PORT)]}}],
            }
        ],
    }
    return _policy(f"{cluster}-ray-dashboard-gateway-only", namespace, spec)


# --- groups, live at the gateway -------------------------------------------------------------
# The gateway verifies the Dex token (RequestAuthentication dex-jwt, kubeflow/manifests
# 26.03.1-rc.2 common/oauth2-proxy/components/istio-external-auth; oauth2-proxy asks Dex for the
# `groups` scope, common/oauth2-proxy/base/oauth2_proxy.cfg), so its policies see the token's
# `groups` claim, a list Istio matches element by element (istio.io 1.29 docs, "Authorization
# Policy", request.auth.claims: list-typed claims; notValues matches when no element does, and
# when the claim is missing). The sidecars behind it see headers only, and `kubeflow-groups`
# holds the groups as one comma-joined string (the same RequestAuthentication's
# outputClaimToHeaders; common/oauth2-proxy/components/README.md), which Istio's exact, prefix and
# suffix matches cannot search: they name the members the stack lists, known at `pulumi up`
# (components/profiles/groups.py). So for a group whose membership is the identity provider's
# (source provider) the gateway itself refuses a listed member whose token no longer carries
# the group, on every route into the team's namespace, and refuses their writes likewise when
# no group left in the token lets them write: leaving the group at the provider takes effect at
# their next token, before anyone edits the stack (docs/teams.md, "Groups").
GROUP_CLAIM = "request.auth.claims[groups]"
EMAIL_CLAIM = "request.auth.claims[email]"
# Routes into a team namespace, as their controllers and trees publish them: the notebook
# controller's /notebook/<ns>/<name>/ (above), the tensorboard controller's /tensorboard/<ns>/<name>/
# (kubeflow/notebooks v1.11.0 tensorboard-controller generateVirtualService), the PVC viewer's
# /pvcviewers/<ns>/<name>/ (pvcviewer-controller), the web apps' /api/namespaces/<ns>/ under
# /jupyter/, /volumes/ and /tensorboards/ (crud-web-apps routes behind the trees' VirtualServices),
# and the team's Ray routes (facts/naming.py). Pipelines' requests name the namespace in the query
# or the body: there the API server's own review follows the members known at `pulumi up`.
TEAM_ROUTES = (
    "/notebook/{namespace}/*",
    "/tensorboard/{namespace}/*",
    "/pvcviewers/{namespace}/*",
    "/jupyter/api/namespaces/{namespace}/*",
    "/volumes/api/namespaces/{namespace}/*",
    "/tensorboards/api/namespaces/{namespace}/*",
    "/ray/{namespace}/*",
    "/ray-serve/{namespace}/*",
    SERVING_PATH,
)


def _left_their_groups(members: Sequence[str], groups: Sequence[str]) -> list[dict[str, Any]]:
    """Conditions: the token is one of `members`' and carries none of `groups`."""
    return [{"key": EMAIL_CLAIM, "values": identities(members)}, {"key": GROUP_CLAIM, "notValues": sorted(set(groups))}]


@dataclass(frozen=True)
class LiveGrant:
    """Members whose access to a team (reading, or writing) rests only on groups the identity
    provider keeps: they keep it while their token carries one of `groups`."""

    members: tuple[str, ...]
    groups: tuple[str, ...]


def team_gateway_policy(
    gateway_namespace: str, namespace: str, ray_dashboards: Sequence[str], readers: Sequence[LiveGrant], writers: Sequence[LiveGrant]
) -> dict[str, Any]:
    """At the gateway, for a team with provider groups: no route into the namespace for a
    member whose token carries none of the groups that let them in (`readers`), and no write,
    notebook or acting GET of the Ray dashboard (`ray_dashboards`: their path prefixes) for one
    whose token carries none of the groups that let them write (`writers`)."""
    routes = [route.format(namespace=namespace) for route in TEAM_ROUTES]
    acting = [NOTEBOOK_PATH.format(namespace=namespace)] + [
        f"{prefix.rstrip('/')}{path}" for prefix in ray_dashboards for path in RAY_ACTING_GETS
    ]
    rules = [{"to": [{"operation": {"paths": routes}}], "when": _left_their_groups(g.members, g.groups)} for g in readers]
    acting_routes = [route for route in routes if route != SERVING_PATH.format(namespace=namespace)]  # a query is a read
    for grant in writers:
        when = _left_their_groups(grant.members, grant.groups)
        rules += [
            {"to": [{"operation": {"paths": acting_routes, "notMethods": list(READ_METHODS)}}], "when": when},
            {"to": [{"operation": {"paths": acting}}], "when": when},
        ]
    spec = {"action": "DENY", "selector": {"matchLabels": dict(GATEWAY_SELECTOR)}, "rules": rules}
    return _policy(f"team-{namespace}-groups", gateway_namespace, spec)


ALLOWED_IDENTITIES = "istio-ingressgateway-allowed-identities"


def gateway_identity_policy(namespace: str, domains: Sequence[str], emails: Sequence[str], machine_issuers: Sequence[str] = ()) -> dict[str, Any]:
    """At the gateway: no request on behalf of an account outside `domains` and `emails`,
    whichever way it came in (an oauth2-proxy session, or a Dex token in Authorization, which
    skips oauth2-proxy: its CUSTOM policy applies only without that header). Istio matches a
    claim with `*@acme.com` as a suffix (istio.io 1.29 docs, "Authorization Policy": exact,
    prefix, suffix and presence matches). A request with no e-mail claim is refused too: no
    token, or a token of an issuer nobody listed. `machine_issuers`: issuers of tokens that carry
    no e-mail and that a DENY of their own confines (the cluster's, for the teams' model clients:
    components/serving.py gateway_token_objects); their tokens alone are left out of the rule.
    Every other issuer stays judged, so a RequestAuthentication added later (Kubeflow's istio-m2m,
    say) opens nothing by itself. `notRequestPrincipals` also matches a request with no principal
    (istio/istio 1.30.0 pilot/pkg/security/authz/model/model.go: notValues become principalNot)."""
    allowed = [f"*@{d}" for d in sorted(set(domains))] + identities(emails)
    exempt = [f"{issuer}/*" for issuer in machine_issuers]
    rule: dict[str, Any] = {"from": [{"source": {"notRequestPrincipals": exempt}}]} if exempt else {}
    spec = {
        "action": "DENY",
        "selector": {"matchLabels": dict(GATEWAY_SELECTOR)},
        "rules": [
            {
                **rule,
                "to": [{"operation": {"notPaths": list(SIGN_IN_PATHS)}}],
                "when": [{"key": "request.auth.claims[email]", "notValues": allowed}],
            }
        ],
    }
    return _policy(ALLOWED_IDENTITIES, namespace, spec)


def gateway_only_policy(name: str, namespace: str, selector: dict[str, str], port: int) -> dict[str, Any]:
    """ALLOW only the gateway, to `port` of the selected pods: for a workload that trusts the
    `kubeflow-userid` header (Grafana's auth proxy), so nobody else can assert an identity."""
    spec = {
        "action": "ALLOW",
        "selector": {"matchLabels": dict(selector)},
        "rules": [{"from": [{"source": {"principals": [GATEWAY_PRINCIPAL]}}], "to": [{"operation": {"ports": [str(port)]}}]}],
    }
    return _policy(name, namespace, spec)
