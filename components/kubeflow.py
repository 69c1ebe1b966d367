"""Kubeflow's multi-user core from the pinned release: namespaces, roles, the gateway,
central dashboard, profiles + KFAM, PodDefaults webhook, notebooks, volumes and
tensorboards, with Dex + oauth2-proxy in front (the identity header is kubeflow-userid).

Paths: kubeflow/community-distribution 26.03.1-rc.2 README, "Install individual components":
the dashboard, profile controller + KFAM and PodDefaults webhook are kubeflow/dashboard v2.0.0
(`applications/dashboard/upstream`), the notebook apps kubeflow/notebooks v1.11.0
(`applications/notebooks-v1/upstream`). Dex's users are ours, not the release's example user:
transforms replace the `dex` ConfigMap and the `dex-passwords` Secret (common/dex/base) with our
static users and their hashes. Every transform has one target and changes it in every stack
(the offline render fails on a transform that changes nothing).

Long by design: one upstream project, one module (its trees, the transforms of them and its
sign-in); each transform is a small pure function beside the tree it changes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import pulumi
import pulumi_random as random
import yaml

from components.access import ALLOWED_IDENTITIES, gateway_identity_policy
from components.gateway import HttpsGateway, HttpsGatewayArgs, https_gateway_args
from components.istio import GATEWAY_NAMESPACE
from components.monitoring import GRAFANA_PATH
from components.serving_tokens import token_issuer_args
from facts.image_set import LOCAL_REGISTRY, SPAWNER_CONFIG_KEY, notebook_image
from facts.naming import TEAM_POD_DEFAULT, dex_password_env, ray_dashboard_path
from facts.node_labels import pool_selector, pool_taints
from facts.priorities import NOTEBOOK_PRIORITY_POD_DEFAULT
from infra.args import image_registry_args
from infra.cluster import Cluster
from infra.component import type_token
from plumbing.base import (
    KUSTOMIZE_TYPE,
    Moved,
    PlatformComponent,
    PropsTransform,
    UpstreamArgs,
    apply_manifest,
    config_digest,
    matches,
    required,
    with_config_digest,
)
from plumbing.installation import Installation, Secrets
from plumbing.readiness import Need, Readiness, What
from stackmodel.components.istio import ISTIO
from stackmodel.components.kubeflow import KUBEFLOW, behind_gke_ingress
from stackmodel.components.kubeflow_parts import KUBEFLOW_HTTPS_GATEWAY, KUBEFLOW_NAMESPACES, KUBEFLOW_POD_DEFAULTS
from stackmodel.components.monitoring import MONITORING
from stackmodel.components.pipelines import PIPELINES
from stackmodel.schema import DEX_DEFAULT_SCOPES, AuthKind, GpuPool, GroupSource, KubeflowAuth, OidcGroups
from stackmodel.secrets import DEX_PASSWORD_HASHES, OIDC_CLIENT_SECRET
from stackmodel.stack import PlatformConfig

# The namespaces `kubeflow` and `kubeflow-system` and their NetworkPolicies: since
# kubeflow/manifests#3342 (in 26.03) `common/kubeflow-namespace/base` carries the policies
# the old `common/networkpolicies/base` held; the rest moved into the dex, oauth2-proxy,
# istio-namespace and cert-manager trees, and in 26.03.1 the dashboard's and the PodDefaults
# webhook's into their own trees. Installed first (KubeflowNamespaces): Istio's install puts
# Sidecars into `kubeflow`, Trainer runs in `kubeflow-system`.
NAMESPACES_TREE = "common/kubeflow-namespace/base"
NAMESPACES_INSTALL = "kubeflow-namespace"
NAMESPACE = "kubeflow"
CORE = (
    ("kubeflow-roles", "common/kubeflow-roles/base"),
    ("kubeflow-istio-resources", "common/istio/kubeflow-istio-resources/base"),
)
# The trees of each app, as the 26.03.1 README's "Install individual components" lists them
# (its `overlays/istio` aggregates combine the same trees). The central dashboard's `istio`
# overlay is its `kserve` one without the KServe menu entry (we replace the menu); the 26.03
# `oauth2-proxy` overlay and its component are gone, their LOGOUT_URL is in the base. The
# profile controller's `kubeflow` overlay, not `kubeflow-pss`: team namespaces get their labels
# from components/profiles/namespace.py.
DASHBOARD_TREES = "applications/dashboard/upstream"
NOTEBOOKS_TREES = "applications/notebooks-v1/upstream"
APPS = (
    ("central-dashboard", f"{DASHBOARD_TREES}/centraldashboard/overlays/istio"),
    ("profiles-kfam", f"{DASHBOARD_TREES}/profile-controller/overlays/kubeflow"),
    ("poddefaults-webhook", f"{DASHBOARD_TREES}/poddefaults-webhooks/overlays/cert-manager"),
    ("notebook-controller", f"{NOTEBOOKS_TREES}/notebook-controller/overlays/kubeflow"),
    ("jupyter-web-app", f"{NOTEBOOKS_TREES}/jupyter-web-app/overlays/istio"),
    ("pvcviewer-controller", f"{NOTEBOOKS_TREES}/pvcviewer-controller/base"),
    ("volumes-web-app", f"{NOTEBOOKS_TREES}/volumes-web-app/overlays/istio"),
    ("tensorboard-controller", f"{NOTEBOOKS_TREES}/tensorboard-controller/overlays/kubeflow"),
    ("tensorboards-web-app", f"{NOTEBOOKS_TREES}/tensorboards-web-app/overlays/istio"),
)
DEX = "common/dex/overlays/oauth2-proxy"
# Every cluster: oauth2-proxy trusts Dex (and, m2m, Dex-issued tokens). The release's kind
# variant `m2m-dex-and-kind` adds a `cluster-jwks-proxy` running `bitnamisecure/kubectl:latest`
# (common/oauth2-proxy/components/cluster-jwks-proxy/kustomization.yaml), an image that
# cannot be pinned by tag, for kind service-account tokens nothing here uses.
OAUTH2_PROXY = "common/oauth2-proxy/overlays/m2m-dex-only"
DEX_NAMESPACE = "auth"
DEX_ISSUER = f"http://dex.{DEX_NAMESPACE}.svc.cluster.local:5556/dex"


# The central dashboard's menu (26.03.1-rc.2 applications/dashboard/upstream/centraldashboard/
# base/configmap.yaml: ConfigMap dashboard-config, named centraldashboard-config until 26.03,
# key `links`, one JSON string). We replace it whole: the release's menu links Katib and
# KServe, which this bundle does not install, and Pipelines, which it may not.
DASHBOARD_CONFIGMAP = "dashboard-config"
BASE_MENU = (
    {"type": "item", "link": "/jupyter/", "text": "Notebooks", "icon": "book"},
    {"type": "item", "link": "/volumes/", "text": "Volumes", "icon": "device:storage"},
    {"type": "item", "link": "/tensorboards/", "text": "TensorBoards", "icon": "assessment"},
)
# The release's own Pipelines section of that menu, as it writes it: the KFP UI's pages under
# its route /pipeline (applications/pipeline/upstream/base/installs/multi-user/virtual-service.yaml).
PIPELINES_MENU = {
    "type": "section",
    "text": "Pipelines",
    "icon": "kubeflow:pipeline-centered",
    "items": [
        {"type": "item", "link": f"/pipeline/#/{page}", "text": text}
        for page, text in (
            ("pipelines", "Pipelines"),
            ("experiments", "Experiments"),
            ("runs", "Runs"),
            ("recurringruns", "Recurring Runs"),
            ("artifacts", "Artifacts"),
            ("executions", "Executions"),
        )
    ],
}


@dataclass(frozen=True)
class RayDashboard:
    """A team's Ray cluster, linked in the Kubeflow menu."""

    team: str
    cluster: str

@dataclass(frozen=True)
class NotebookImages:
    """The platform's notebook images the Jupyter web app offers (facts/image_set.py)."""

    cpu: str
    """The default."""
    gpu: str

@dataclass(frozen=True)
class KubeflowArgs(UpstreamArgs):
    auth: KubeflowAuth
    ray_dashboards: tuple[RayDashboard, ...]
    grafana: bool
    """Monitoring is installed: Grafana gets a menu entry."""
    notebook_images: NotebookImages = NotebookImages(
        cpu=notebook_image(LOCAL_REGISTRY), gpu=notebook_image(LOCAL_REGISTRY, gpu=True)
    )
    gpu_pools: tuple[GpuPool, ...] = ()
    """The notebook form's node choices: one per GPU pool."""
    pipelines: bool = False
    """Kubeflow Pipelines is installed: its section in the menu."""
    https: bool = False
    """The gateway is reached over HTTPS only (behind_gke_ingress): sign-in cookies are Secure."""
    dex_password_hashes: pulumi.Output[Any] | None = None
    """Dex static users: e-mail -> bcrypt hash."""
    oidc_client_secret: pulumi.Output[Any] | None = None
    """An OIDC connector's client secret."""
    machine_issuers: tuple[str, ...] = ()
    """Issuers of tokens without an e-mail that the gateway takes, each confined by a DENY of its
    own: the cluster's, for the teams' model clients, where serving is on (components/serving.py
    token_issuer_args). The allowed-identities rule judges every other request."""

@dataclass(frozen=True)
class KubeflowInstallArgs:
    """What installing Kubeflow takes: its namespaces (made before every component), the core,
    and on GKE behind an Ingress its HTTPS gateway."""

    namespaces: UpstreamArgs
    kubeflow: KubeflowArgs
    https_gateway: HttpsGatewayArgs | None


def dashboard_menu(args: KubeflowArgs) -> tuple[dict[str, Any], ...]:
    """Central dashboard menu entries: ours, Pipelines, the teams' Ray dashboards, Grafana."""
    ray_items = [
        {"type": "item", "link": ray_dashboard_path(d.team, d.cluster), "text": f"{d.team}: {d.cluster}"}
        for d in args.ray_dashboards
    ]
    ray_section = ({"type": "section", "text": "Ray dashboards", "icon": "assessment", "items": ray_items},)
    grafana = ({"type": "item", "link": GRAFANA_PATH, "text": "Grafana (GPUs)", "icon": "assessment"},)
    pipelines = (PIPELINES_MENU,) if args.pipelines else ()
    return BASE_MENU + pipelines + (ray_section if ray_items else ()) + (grafana if args.grafana else ())


def dashboard_links(menu: tuple[dict[str, Any], ...]) -> str:
    return json.dumps(
        {"menuLinks": list(menu), "externalLinks": [], "quickLinks": [], "documentationItems": []}, sort_keys=True
    )


def with_menu(props: dict[str, Any], links: str) -> dict[str, Any] | None:
    """The central dashboard's ConfigMap with our menu; None for other objects."""
    if not matches(props, "ConfigMap", DASHBOARD_CONFIGMAP):
        return None
    return {**props, "data": {**(props.get("data") or {}), "links": links}}


# The notebook form's configuration (26.03.1-rc.2 applications/notebooks-v1/upstream/
# jupyter-web-app/base/configs/spawner_ui_config.yaml, key spawnerFormDefaults): a
# configMapGenerator makes it the ConfigMap `jupyter-web-app-config-<hash>` with one key,
# the file's name, mounted into the web app. We change four of its fields and keep the rest:
# - image: the platform's notebook images (facts/image_set.py), the CPU one the default;
#   `allowCustomImage` stays on for anything else;
# - configurations: the teams' PodDefault and the one that gives notebooks the `interactive`
#   priority class (components/profiles/preemption.py) preselected by their labels (the form's
#   values are PodDefault labels; a namespace without that PodDefault just gets an unused label);
# - affinityConfig / tolerationGroup: per GPU pool a GPU notebook can run on (notebook_pools)
#   a node affinity to the pool and its taints, so a GPU notebook lands on the pool its user picks.


def notebook_pools(pools: Sequence[GpuPool]) -> list[GpuPool]:
    """The GPU pools the notebook form offers: those a GPU notebook's pod can be admitted to and
    run on. Not a DRA pool: the form asks for `nvidia.com/gpu` (its `gpus` field), which a DRA
    pool's nodes do not advertise (runtimes/dra.py). Not a topology-aware pool: Kueue gives a
    flavor with a topology only to a pod set that asks for one (kueue v0.19.2 pkg/scheduler/
    flavorassigner/tas_flavorassigner.go `checkPodSetAndFlavorMatchForTAS`, "supports only
    TopologyAwareScheduling"), and a notebook's pod carries no topology request (the form has
    no field that writes one, and its team queue has the default flavor too, so Kueue does not
    imply one: `isTASImplied`)."""
    return [pool for pool in pools if not pool.dra and not pool.topology_aware]


def spawner_form(upstream: dict[str, Any], args: KubeflowArgs) -> dict[str, Any]:
    """`spawnerFormDefaults` with the platform's images, PodDefault and the GPU pools a notebook can use."""
    form = dict(upstream)
    images = args.notebook_images
    form["image"] = {**form.get("image", {}), "value": images.cpu, "options": [images.cpu, images.gpu]}
    form["configurations"] = {**form.get("configurations", {}), "value": [TEAM_POD_DEFAULT, NOTEBOOK_PRIORITY_POD_DEFAULT]}
    offered = notebook_pools(args.gpu_pools)
    if offered:
        form["affinityConfig"] = {
            **form.get("affinityConfig", {}),
            "options": [
                {
                    "configKey": f"gpu-pool-{pool.name}",
                    "displayName": f"GPU pool {pool.name} ({pool.accelerator})",
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {"key": key, "operator": "In", "values": [value]}
                                            for key, value in pool_selector(pool).items()
                                        ]
                                    }
                                ]
                            }
                        }
                    },
                }
                for pool in offered
            ],
        }
        form["tolerationGroup"] = {
            **form.get("tolerationGroup", {}),
            "options": [
                {
                    "groupKey": f"gpu-pool-{pool.name}",
                    "displayName": f"GPU pool {pool.name} ({pool.accelerator})",
                    "tolerations": [taint.toleration() for taint in pool_taints(pool)],
                }
                for pool in offered
            ],
        }
    return form


def with_spawner_config(props: dict[str, Any], args: KubeflowArgs) -> dict[str, Any] | None:
    """The Jupyter web app's form configuration with ours (spawner_form); None for other objects."""
    data = props.get("data") or {}
    if props.get("kind") != "ConfigMap" or SPAWNER_CONFIG_KEY not in data:
        return None
    config = yaml.safe_load(data[SPAWNER_CONFIG_KEY]) or {}
    config["spawnerFormDefaults"] = spawner_form(config.get("spawnerFormDefaults") or {}, args)
    return {**props, "data": {**data, SPAWNER_CONFIG_KEY: yaml.safe_dump(config, sort_keys=False)}}


# Mutating webhooks run in the order of their configurations' names (k8s.io/apiserver
# pkg/admission/configuration/mutating_webhook_manager.go: `sort.SliceStable(...ByName)`). GKE's GCS Fuse driver injects its sidecar
# for the `gke-gcsfuse/volumes` annotation the team's PodDefault adds (components/profiles/pod_default.py),
# and is never called again after later webhooks (gcs-fuse-csi-driver deploy/base/webhook/
# mutatingwebhook.yaml: configuration gcsfuse-sidecar-injector.csi.storage.gke.io,
# reinvocationPolicy Never). kubeflow/dashboard v2 renamed the PodDefaults webhook's
# configuration `admission-webhook-mutating-webhook-configuration` (26.03) to
# `poddefaults-webhook-mutating-webhook-configuration`, which sorts after it: the bucket would
# never be mounted. The configuration keeps its 26.03 name, so the live one is updated in place.
PODDEFAULTS_WEBHOOK_CONFIGURATION = "poddefaults-webhook-mutating-webhook-configuration"
PODDEFAULTS_WEBHOOK_CONFIGURATION_NAME = "admission-webhook-mutating-webhook-configuration"
GCS_FUSE_WEBHOOK_CONFIGURATION = "gcsfuse-sidecar-injector.csi.storage.gke.io"


def poddefaults_webhook_before_gcs_fuse(props: dict[str, Any]) -> dict[str, Any] | None:
    """The PodDefaults webhook's configuration under a name that sorts before GCS Fuse's."""
    if not matches(props, "MutatingWebhookConfiguration", PODDEFAULTS_WEBHOOK_CONFIGURATION):
        return None
    return {**props, "metadata": {**props["metadata"], "name": PODDEFAULTS_WEBHOOK_CONFIGURATION_NAME}}


def moved_between_trees() -> dict[str, tuple[Moved, ...]]:
    """Per app tree, its objects that 26.03 created elsewhere under the same Kubernetes name
    (../shared/upstream/README.md, path mapping 26.03 -> 26.03.1-rc.2): the NetworkPolicy
    `poddefaults` was in `common/kubeflow-namespace/base`; the PodDefaults webhook's
    configuration was named `admission-webhook-...` in this very tree."""
    return {
        "poddefaults-webhook": (
            Moved(type_token(KubeflowNamespaces), KUSTOMIZE_TYPE, NAMESPACES_INSTALL, partial(matches, kind="NetworkPolicy", name="poddefaults")),
            Moved(
                type_token(Kubeflow),
                KUSTOMIZE_TYPE,
                "poddefaults-webhook",
                partial(matches, kind="MutatingWebhookConfiguration", name=PODDEFAULTS_WEBHOOK_CONFIGURATION),
                renamed=((PODDEFAULTS_WEBHOOK_CONFIGURATION, PODDEFAULTS_WEBHOOK_CONFIGURATION_NAME),),
            ),
        )
    }


def user_id(email: str) -> str:
    """A stable Dex userID per e-mail (Dex only needs it unique)."""
    return hashlib.sha256(email.lower().encode()).hexdigest()[:20]


def dex_config(auth: KubeflowAuth) -> str:
    """Dex's config.yaml: the layout of common/dex/overlays/oauth2-proxy/config-map.yaml,
    with our static users (hashes from env) or an upstream OIDC connector."""
    config: dict[str, Any] = {
        "issuer": DEX_ISSUER,
        "storage": {"type": "kubernetes", "config": {"inCluster": True}},
        "web": {"http": "0.0.0.0:5556"},
        "logger": {"level": "debug", "format": "text"},
        "oauth2": {"skipApprovalScreen": True},
        "enablePasswordDB": auth.kind is AuthKind.DEX,
        "staticClients": [
            {
                "idEnv": "OIDC_CLIENT_ID",
                "secretEnv": "OIDC_CLIENT_SECRET",
                "redirectURIs": ["/oauth2/callback"],
                "name": "Dex Login Application",
            }
        ],
    }
    if auth.kind is AuthKind.DEX:
        config["staticPasswords"] = [
            {"email": e, "hashFromEnv": dex_password_env(e), "username": e.split("@")[0], "userID": user_id(e)}
            | ({"groups": groups} if (groups := static_user_groups(auth, e)) else {})
            for e in auth.static_users
        ]
    elif auth.oidc:
        config["connectors"] = [
            {
                "type": "oidc",
                "id": "upstream",
                "name": auth.oidc.name,
                "config": {
                    "issuer": auth.oidc.issuer,
                    "clientID": auth.oidc.client_id,
                    "clientSecret": "$OIDC_CONNECTOR_SECRET",  # Dex expands $VARS from its env
                    "redirectURI": f"https://{auth.hostname}/dex/callback" if auth.hostname else "/dex/callback",
                    "scopes": ["openid", "profile", "email"],
                }
                | oidc_groups_config(auth.oidc.groups),
            }
        ]
    return yaml.safe_dump(config, sort_keys=False)


def static_user_groups(auth: KubeflowAuth, email: str) -> list[str]:
    """The groups whose members the program knows (a stack group's, a cloudIdentity group's as
    read) that a Dex static user is in: Dex v2.45.1 puts a static password's `groups`
    into the token (cmd/dex/config.go password, server/server.go passwordDB Login and Refresh),
    so the gateway's `kubeflow-groups` header carries them."""
    return [g.name for g in auth.groups if g.source is not GroupSource.PROVIDER and email.lower() in {m.lower() for m in g.members}]


def oidc_groups_config(groups: OidcGroups | None) -> dict[str, Any]:
    """What Dex's oidc connector needs to pass the provider's groups on (Dex v2.45.1 connector/
    oidc/oidc.go Config): `insecureEnableGroups` (off by default), the claim in
    `claimMapping.groups`, `scopes` (which replace Dex's default profile and email, hence ours
    first) and `getUserInfo`. None: no groups in the token."""
    if groups is None:
        return {}
    found: dict[str, Any] = {"scopes": [*DEX_DEFAULT_SCOPES, *groups.scopes], "insecureEnableGroups": True}
    if groups.claim != "groups":
        found["claimMapping"] = {"groups": groups.claim}
    if groups.user_info:
        found["getUserInfo"] = True
    return found


def dex_secret_data(args: KubeflowArgs) -> dict[str, pulumi.Output[str]]:
    """The dex-passwords Secret's stringData: one hash per static user, or the OIDC client
    secret; each value a Pulumi secret (the keys are not secret)."""
    auth = args.auth
    if auth.kind is AuthKind.OIDC:
        oidc = required(args.oidc_client_secret, "the OIDC client secret")
        return {"OIDC_CONNECTOR_SECRET": pulumi.Output.secret(oidc.apply(str))}
    if not auth.static_users:
        return {}
    hashes = required(args.dex_password_hashes, "the Dex password hashes")

    def hash_of(email: str) -> pulumi.Output[str]:
        # A user without a hash stops `pulumi up` before this runs (stackmodel.secrets.secret_problems).
        return pulumi.Output.secret(hashes.apply(lambda h: str(h.get(email, ""))))

    return {dex_password_env(e): hash_of(e) for e in auth.static_users}


def with_dex_config(props: dict[str, Any], config_yaml: str) -> dict[str, Any] | None:
    """The `dex` ConfigMap (common/dex/base) with our config: our users, not the release's example user."""
    if not matches(props, "ConfigMap", "dex"):
        return None
    return {**props, "data": {"config.yaml": config_yaml}}


def with_dex_passwords(props: dict[str, Any], secret_data: Any) -> dict[str, Any] | None:
    """The `dex-passwords` Secret (common/dex/base) with our hashes instead of the release's default password."""
    if not matches(props, "Secret", "dex-passwords"):
        return None
    return {**{k: v for k, v in props.items() if k != "data"}, "stringData": secret_data}


# The OAuth client between oauth2-proxy and Dex, and oauth2-proxy's cookie key: the release
# ships them as literals anyone can read (common/oauth2-proxy/base/kustomization.yaml
# secretGenerator `oauth2-proxy`: client-secret, cookie-secret; common/dex/base
# secret_params.env -> Secret `dex-oidc-client`: OIDC_CLIENT_SECRET). A cookie key must be
# 16, 24 or 32 bytes (oauth2-proxy docs, "Generating a Cookie Secret"): 32 characters.
CLIENT_SECRET_KEY = "client-secret"
COOKIE_SECRET_KEY = "cookie-secret"
DEX_CLIENT_SECRET = ("Secret", "dex-oidc-client")
DEX_CLIENT_SECRET_KEY = "OIDC_CLIENT_SECRET"
SECRET_LENGTH = 32


def with_secrets(props: dict[str, Any], replace: dict[str, Any]) -> dict[str, Any]:
    """A Secret with the `replace` keys taken out of `data` and set in `stringData`."""
    data = {k: v for k, v in (props.get("data") or {}).items() if k not in replace}
    return {**props, "data": data, "stringData": {**(props.get("stringData") or {}), **replace}}


def with_oauth2_proxy_secrets(props: dict[str, Any], client_secret: Any, cookie_secret: Any) -> dict[str, Any] | None:
    """oauth2-proxy's generated Secret (its name carries kustomize's content hash) with our values."""
    if props.get("kind") != "Secret" or not {CLIENT_SECRET_KEY, COOKIE_SECRET_KEY} <= set(props.get("data") or {}):
        return None
    return with_secrets(props, {CLIENT_SECRET_KEY: client_secret, COOKIE_SECRET_KEY: cookie_secret})


# Who may sign in. oauth2-proxy v7.15.2 (the pinned release's) lets an e-mail in when its domain is in
# email_domains or it is listed in authenticated_emails_file (validator.go; the release sets
# email_domains = [ "*" ]: everyone, common/oauth2-proxy/base/oauth2_proxy.cfg). Dex v2.45.1
# cannot help here: its oidc connector refuses to start with hostedDomains (connector/oidc/
# oidc.go Open: "support for the Hosted domains option had been deprecated and removed").
# oauth2-proxy only sees browser sessions, so the gateway checks the token's e-mail too
# (components/access.gateway_identity_policy).
OAUTH2_PROXY_CONFIG_KEY = "oauth2_proxy.cfg"
OAUTH2_PROXY_EMAILS_KEY = "authenticated-emails"
OAUTH2_PROXY_CONFIG_DIR = "/etc/oauth2_proxy"
"""Where the release's Deployment mounts its ConfigMap (every key a file), --config's directory."""
EMAIL_DOMAINS = re.compile(r"^email_domains\s*=.*$", re.MULTILINE)
OAUTH2_PROXY_DEPLOYMENT = ("Deployment", "oauth2-proxy")
OAUTH2_PROXY_CONFIG_VOLUME = "oauth2-proxy-config"
"""The release's volume of the ConfigMap (common/oauth2-proxy/base/deployment.yaml): it mounts
one key of it, `subPath: oauth2_proxy.cfg`, so every other file the config names needs a mount
of its own."""


def allowed_sign_ins(auth: KubeflowAuth) -> tuple[list[str], list[str]] | None:
    """(domains, e-mails) that may sign in; None when the stack does not restrict it (Dex
    without static users: nobody can sign in at all)."""
    if auth.kind is AuthKind.OIDC:
        return sorted(set(auth.allowed_domains)), sorted({str(e) for e in auth.allowed_emails})
    if auth.static_users:
        return [], sorted({str(e) for e in auth.static_users})
    return None


def oauth2_proxy_config(release: str, domains: list[str], emails: list[str]) -> str:
    """The release's oauth2_proxy.cfg with email_domains ours and our e-mails file."""
    if not EMAIL_DOMAINS.search(release):
        raise ValueError(f"{OAUTH2_PROXY_CONFIG_KEY} of the pinned release has no email_domains line; review with_allowed_sign_ins")
    lines = [f"email_domains = {json.dumps(domains)}"]
    if emails:
        lines.append(f'authenticated_emails_file = "{OAUTH2_PROXY_CONFIG_DIR}/{OAUTH2_PROXY_EMAILS_KEY}"')
    return EMAIL_DOMAINS.sub(lambda _: "\n".join(lines), release, count=1)


def with_allowed_sign_ins(props: dict[str, Any], domains: list[str], emails: list[str]) -> dict[str, Any] | None:
    """oauth2-proxy's ConfigMap letting in only the stack's people (allowed_sign_ins)."""
    if props.get("kind") != "ConfigMap" or OAUTH2_PROXY_CONFIG_KEY not in (props.get("data") or {}):
        return None
    data = {**props["data"], OAUTH2_PROXY_CONFIG_KEY: oauth2_proxy_config(props["data"][OAUTH2_PROXY_CONFIG_KEY], domains, emails)}
    if emails:
        data[OAUTH2_PROXY_EMAILS_KEY] = "".join(f"{e}\n" for e in emails)
    return {**props, "data": data}


def with_emails_file_mounted(props: dict[str, Any]) -> dict[str, Any] | None:
    """oauth2-proxy's container with the e-mails file its config names mounted beside the
    config: oauth2-proxy v7.15.2 exits when authenticated_emails_file cannot be opened
    (validator.go UserMap.LoadAuthenticatedEmailsFile: logger.Fatalf "failed opening
    authenticated-emails-file"). Its watcher (pkg/watcher) would reload the file, but a subPath
    mount never sees a later change of the ConfigMap: the pods roll instead (with_config_digest)."""
    if not matches(props, *OAUTH2_PROXY_DEPLOYMENT):
        return None
    spec = props["spec"]["template"]["spec"]
    volume = next((v for v in spec.get("volumes") or [] if v.get("name") == OAUTH2_PROXY_CONFIG_VOLUME), None)
    if volume is None:
        raise ValueError(f"oauth2-proxy of the pinned release has no volume {OAUTH2_PROXY_CONFIG_VOLUME!r}; review with_emails_file_mounted")
    mount = {
        "name": OAUTH2_PROXY_CONFIG_VOLUME,
        "mountPath": f"{OAUTH2_PROXY_CONFIG_DIR}/{OAUTH2_PROXY_EMAILS_KEY}",
        "subPath": OAUTH2_PROXY_EMAILS_KEY,
        "readOnly": True,
    }
    containers = [
        {**c, "volumeMounts": [*(c.get("volumeMounts") or []), mount]} if c.get("name") == "oauth2-proxy" else c
        for c in spec["containers"]
    ]
    template = props["spec"]["template"]
    return {**props, "spec": {**props["spec"], "template": {**template, "spec": {**spec, "containers": containers}}}}


# oauth2-proxy's parameters (common/oauth2-proxy/base/kustomization.yaml configMapGenerator
# `oauth2-proxy-parameters`, FORCE_HTTPS=false; deployment.yaml reads it as
# OAUTH2_PROXY_COOKIE_SECURE): behind an HTTPS-only gateway its cookies must be Secure
# (common/oauth2-proxy/components/README.md "Using HTTPS").
FORCE_HTTPS_KEY = "FORCE_HTTPS"


def with_secure_cookies(props: dict[str, Any]) -> dict[str, Any] | None:
    """oauth2-proxy's parameters with FORCE_HTTPS on: its session cookie never travels in clear."""
    if props.get("kind") != "ConfigMap" or FORCE_HTTPS_KEY not in (props.get("data") or {}):
        return None
    return {**props, "data": {**props["data"], FORCE_HTTPS_KEY: "true"}}


def oauth2_proxy_transforms(
    auth: KubeflowAuth, client_secret: Any, cookie_secret: Any, https: bool = False
) -> tuple[PropsTransform, ...]:
    """Our secrets in oauth2-proxy, Secure cookies behind HTTPS, and who may sign in where the
    stack says (allowed_sign_ins); its pods roll when any of it changes (it reads all of it only
    at start)."""
    transforms: list[PropsTransform] = [partial(with_oauth2_proxy_secrets, client_secret=client_secret, cookie_secret=cookie_secret)]
    if https:
        transforms.append(with_secure_cookies)
    allowed = allowed_sign_ins(auth)
    if allowed is not None:
        domains, emails = allowed
        transforms.append(partial(with_allowed_sign_ins, domains=domains, emails=emails))
        if emails:
            transforms.append(with_emails_file_mounted)
    digest = config_digest(allowed, https, client_secret, cookie_secret)
    transforms.append(partial(with_config_digest, workloads=(OAUTH2_PROXY_DEPLOYMENT,), digest=digest))
    return tuple(transforms)


def gateway_identity(auth: KubeflowAuth, machine_issuers: Sequence[str] = ()) -> dict[str, Any] | None:
    """The gateway's DENY for every account the stack does not let sign in (access.py), but for
    the tokens of `machine_issuers` (KubeflowArgs.machine_issuers)."""
    allowed = allowed_sign_ins(auth)
    return gateway_identity_policy(GATEWAY_NAMESPACE, *allowed, machine_issuers=machine_issuers) if allowed else None


def with_dex_client_secret(props: dict[str, Any], client_secret: Any) -> dict[str, Any] | None:
    if not matches(props, *DEX_CLIENT_SECRET):
        return None
    return with_secrets(props, {DEX_CLIENT_SECRET_KEY: client_secret})


DEX_DEPLOYMENT = ("Deployment", "dex")


def dex_transforms(args: KubeflowArgs, client_secret: Any) -> tuple[PropsTransform, ...]:
    """Our users (or OIDC connector) and secrets in Dex. Dex v2.45.1 reads its config and the
    password hashes it names (hashFromEnv: the Secret as env) only at start (cmd/dex/serve.go
    runServe: os.ReadFile of the config once, staticPasswords into storage.WithStaticPasswords; its
    fsnotify watcher reloads TLS files only), so its pods
    roll when any of it changes: a new person can sign in, a rotated password stops working."""
    config_yaml, secret_data = dex_config(args.auth), dex_secret_data(args)
    return (
        partial(with_dex_config, config_yaml=config_yaml),
        partial(with_dex_passwords, secret_data=secret_data),
        partial(with_dex_client_secret, client_secret=client_secret),
        partial(with_config_digest, workloads=(DEX_DEPLOYMENT,), digest=config_digest(config_yaml, secret_data, client_secret)),
    )


class KubeflowNamespaces(PlatformComponent):
    """Kubeflow's namespaces `kubeflow` and `kubeflow-system` with their NetworkPolicies,
    before Istio and Trainer, which put objects into them."""

    ready: pulumi.Resource
    """Done when the namespaces and their policies exist."""

    def __init__(
        self, name: str, args: UpstreamArgs, cluster: Cluster, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__(name, cluster, opts, args.sources)
        self.ready = self.kustomize(NAMESPACES_INSTALL, NAMESPACES_TREE)
        self.register_outputs({"ready": self.ready.urn})


class Kubeflow(PlatformComponent):
    """Kubeflow's multi-user core: where people sign in, get their profile and open notebooks."""

    ready: pulumi.Resource
    """Done when the profile controller (and so the Profile CRD) is ready."""
    pod_defaults: pulumi.Resource
    """Done when the PodDefaults webhook (and so the PodDefault CRD) is ready."""
    namespace: pulumi.Output[str]
    dex_issuer: pulumi.Output[str]
    """The OIDC issuer oauth2-proxy trusts (in-cluster Dex)."""

    def __init__(
        self,
        name: str,
        args: KubeflowArgs,
        cluster: Cluster,
        needs: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__(name, cluster, opts, args.sources)
        core: list[pulumi.Resource] = []
        for tree, path in CORE:
            core.append(self.kustomize(tree, path, depends_on=needs + core[:1]))
        client_secret, cookie_secret = (
            random.RandomPassword(f"{name}-{key}", random.RandomPasswordArgs(length=SECRET_LENGTH, special=False), opts=self.child()).result
            for key in (CLIENT_SECRET_KEY, COOKIE_SECRET_KEY)
        )
        oauth2_proxy = oauth2_proxy_transforms(args.auth, client_secret, cookie_secret, args.https)
        self.kustomize("oauth2-proxy", OAUTH2_PROXY, depends_on=core, transforms=oauth2_proxy)
        identity = gateway_identity(args.auth, args.machine_issuers)
        if identity is not None:
            apply_manifest(ALLOWED_IDENTITIES, identity, self.child(needs + core))
        self.kustomize("dex", DEX, depends_on=core, transforms=dex_transforms(args, client_secret))
        links = dashboard_links(dashboard_menu(args))
        transforms: dict[str, tuple[PropsTransform, ...]] = {
            "central-dashboard": (partial(with_menu, links=links),),
            "poddefaults-webhook": (poddefaults_webhook_before_gcs_fuse,),
            "jupyter-web-app": (partial(with_spawner_config, args=args),),
        }
        moves = moved_between_trees()
        apps = {
            tree: self.kustomize(tree, path, depends_on=core, transforms=transforms.get(tree, ()), moves=moves.get(tree, ()))
            for tree, path in APPS
        }
        self.ready = apps["profiles-kfam"]
        self.pod_defaults = apps["poddefaults-webhook"]
        self.namespace = pulumi.Output.from_input(NAMESPACE)
        self.dex_issuer = pulumi.Output.from_input(DEX_ISSUER)
        self.register_outputs(
            {
                "namespace": self.namespace,
                "dexIssuer": self.dex_issuer,
                "ready": self.ready.urn,
                "podDefaults": self.pod_defaults.urn,
            }
        )


def notebook_registry(config: PlatformConfig) -> str:
    """Where the stack's notebook images come from: `kubeflow.notebookRegistry`, else the
    stack's Artifact Registry repository, else (kind) the local name `make notebook-images`
    loads into the cluster. A gke stack with neither is refused (stackmodel/rules/)."""
    explicit = config.components[KUBEFLOW].notebook_registry
    if explicit:
        return explicit
    registry = image_registry_args(config)
    return registry.path if registry else LOCAL_REGISTRY

def notebook_images(config: PlatformConfig) -> NotebookImages:
    registry = notebook_registry(config)
    return NotebookImages(cpu=notebook_image(registry), gpu=notebook_image(registry, gpu=True))

def kubeflow_args(config: PlatformConfig, secrets: Secrets) -> KubeflowArgs:
    return KubeflowArgs(
        sources=config.sources,
        auth=config.components[KUBEFLOW].auth,
        ray_dashboards=tuple(RayDashboard(team=t.name, cluster=t.ray.name) for t in config.teams if t.ray),
        grafana=config.components[MONITORING].enabled,
        notebook_images=notebook_images(config),
        gpu_pools=config.gpu_pools,
        pipelines=config.components[PIPELINES].enabled,
        https=behind_gke_ingress(config),
        dex_password_hashes=secrets.get(DEX_PASSWORD_HASHES),
        oidc_client_secret=secrets.get(OIDC_CLIENT_SECRET),
        machine_issuers=tuple(issuer.issuer for issuer in [token_issuer_args(config)] if issuer is not None),
    )

def kubeflow_install_args(config: PlatformConfig, secrets: Secrets) -> KubeflowInstallArgs:
    return KubeflowInstallArgs(
        namespaces=UpstreamArgs(sources=config.sources),
        kubeflow=kubeflow_args(config, secrets),
        https_gateway=https_gateway_args(config, secrets) if behind_gke_ingress(config) else None,
    )


def _prepare(args: KubeflowInstallArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    """Kubeflow's namespaces, before every component: Istio and Trainer put objects into them."""
    namespaces = KubeflowNamespaces("kubeflow-namespaces", args.namespaces, cluster)
    ready.record(KUBEFLOW_NAMESPACES, namespaces.ready)
    return namespaces


GATEWAY_NEEDS = (Need(ISTIO, What.CONTROLLER),)
"""The Ingress sends to Istio's ingress gateway, which serves Kubeflow's sign-in (and so waits for Kubeflow too)."""


def _install(args: KubeflowInstallArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    kubeflow = Kubeflow("kubeflow", args.kubeflow, cluster, ready.resources(KUBEFLOW.needs, "Kubeflow"))
    ready.record(KUBEFLOW_POD_DEFAULTS, kubeflow.pod_defaults)  # the teams' PodDefaults need its CRD
    gateway = None
    if args.https_gateway is not None:
        needs = [*ready.resources(GATEWAY_NEEDS, "the HTTPS gateway"), kubeflow.ready]
        gateway = HttpsGateway("kubeflow-https", args.https_gateway, cluster, needs)
    ready.record(KUBEFLOW_HTTPS_GATEWAY, gateway)
    return kubeflow


INSTALLATION = Installation(KUBEFLOW, kubeflow_install_args, _install, prepare=_prepare)
