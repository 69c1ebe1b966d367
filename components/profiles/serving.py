"""A team's share of serving (components/serving.py installs KServe): the path of its
InferenceServices on the Kubeflow gateway and the router behind it, the token its programs query
with, the PodDefault of its serving pods, and on GKE its model store (docs/serving.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.access import (
    GATEWAY_PRINCIPAL,
    KUBEFLOW_GATEWAY,
    USER_HEADER,
)
from components.profiles.pod_default import GCS_FUSE_ANNOTATION, GCS_FUSE_DRIVER, ISTIO_GCS_FUSE_ANNOTATIONS
from components.serving import ROUTER_RESOURCES
from components.serving_tokens import MODEL_CLIENT, service_account_user
from facts.labels import INFERENCE_SERVICE_LABEL, KUEUE_PRIORITY_CLASS_LABEL
from facts.naming import MODEL_ROUTER, predictor_service, serving_path
from facts.priorities import SERVING_PRIORITY
from facts.versions import RAY_DASHBOARD_AUTH_PROXY_IMAGE, image
from plumbing.base import CONFIG_DIGEST_ANNOTATION, config_digest

# --- the team's path: /serving/<team>/<name>/ ------------------------------------------------
# InferenceServices are made at run time, so no per-model route can be rendered, and an Istio
# route's destination cannot be taken from the path. Each team gets one route of its prefix to a
# router in its namespace (the nginx image the Ray dashboard proxy runs), which sends
# /serving/<team>/<name>/<rest> to <name>-predictor.<team>.svc.cluster.local/<rest>. nginx needs a
# resolver for a proxy_pass with variables (nginx docs, ngx_http_proxy_module proxy_pass): the
# cluster's DNS Service, kube-dns in kube-system on GKE and on kind (CoreDNS keeps that name).
ROUTER = MODEL_ROUTER
ROUTER_PORT = 8080
CLUSTER_DNS = "kube-dns.kube-system.svc.cluster.local"
ISVC_NAME = "[a-z]([-a-z0-9]*[a-z0-9])?"
"""KServe's InferenceService name rule (pkg/apis/serving/v1beta1/inference_service_validation.go IsvcNameFmt)."""
NGINX_CONF = "default.conf"
NGINX_CONF_DIR = "/etc/nginx/conf.d"

# A model at zero replicas keeps its Service, with no endpoint: the router's Istio sidecar answers
# 503 itself (Envoy's "no healthy upstream", response flag UH) and counts the request, which wakes
# the model (components/serving_autoscaling.py wake_signal). The router turns every 503 into one the client can
# act on: Retry-After, and a body that names the model and says why. A model server's own 503
# (KServe's "model not ready") means the same, to retry later.
WAKE_RETRY_AFTER = 30
"""Seconds a client waits before it asks again: about one Prometheus scrape and one KEDA poll (30 s
each by default), the time a request takes to be seen; a GPU replica then takes minutes to be
ready (docs/serving.md, "Scale to zero, and back")."""


def router_config(namespace: str, resolver: str = CLUSTER_DNS, listen: str = str(ROUTER_PORT)) -> str:
    """The router's nginx server: each InferenceService of `namespace` under its path, the rest
    of the path and the query passed on as they came, responses streamed (an LLM's tokens), no
    size limit on a request body (a batch of inputs); a 503 (no ready replica: waking from zero,
    starting, loading) answered with Retry-After. `resolver` and `listen` for a test."""
    prefix = serving_path(namespace)
    predictor = predictor_service("$model")
    # nginx (ngx_http_proxy_module proxy_intercept_errors, ngx_http_core_module error_page): with
    # interception on, an upstream response whose code has an error_page is replaced by it, every
    # other passes as it came; `=` keeps the named location's own code.
    unavailable = (
        f"model $model has no ready replica: it is waking from zero or starting (minutes for a GPU model); "
        f"retry after {WAKE_RETRY_AFTER} seconds"
    )
    return f"""# The team's model router (mlplatform components/serving.py): {prefix}<name>/<path> to the
# InferenceService <name>'s predictor, {predictor_service("<name>")}.{namespace}.svc.cluster.local/<path>.
server {{
    listen {listen};
    resolver {resolver} valid=10s ipv6=off;
    client_max_body_size 0;
    location ~ "^{prefix}(?<model>{ISVC_NAME})(?<rest>/.*)$" {{
        proxy_pass http://{predictor}.{namespace}.svc.cluster.local$rest$is_args$args;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_buffering off;
        proxy_request_buffering off;
        proxy_read_timeout 1h;
        proxy_intercept_errors on;
        error_page 503 = @unavailable;
    }}
    location @unavailable {{
        default_type application/json;
        add_header Retry-After {WAKE_RETRY_AFTER} always;
        return 503 '{{"error": "{unavailable}"}}';
    }}
    location / {{
        return 404;
    }}
}}
"""


def router_objects(namespace: str) -> list[dict[str, Any]]:
    """The router's configuration, Deployment and Service, the gateway's route of the team's prefix
    to it, and its sidecar's request metrics."""
    labels = {"app.kubernetes.io/name": ROUTER}
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": ROUTER, "namespace": namespace},
        "data": {NGINX_CONF: router_config(namespace)},
    }
    container = {
        "name": "nginx",
        "image": image(RAY_DASHBOARD_AUTH_PROXY_IMAGE),
        "ports": [{"name": "http", "containerPort": ROUTER_PORT}],
        "readinessProbe": {"tcpSocket": {"port": ROUTER_PORT}},
        "resources": ROUTER_RESOURCES,
        "volumeMounts": [{"name": "config", "mountPath": NGINX_CONF_DIR, "readOnly": True}],
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": ROUTER, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                # Its configuration changes roll it (nginx reads it at start).
                "metadata": {"labels": labels, "annotations": {CONFIG_DIGEST_ANNOTATION: config_digest(config["data"])}},
                "spec": {"containers": [container], "volumes": [{"name": "config", "configMap": {"name": ROUTER}}]},
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": ROUTER, "namespace": namespace, "labels": labels},
        "spec": {"selector": labels, "ports": [{"name": "http", "port": 80, "targetPort": ROUTER_PORT, "appProtocol": "http"}]},
    }
    route = {
        "apiVersion": "networking.istio.io/v1",
        "kind": "VirtualService",
        "metadata": {"name": ROUTER, "namespace": namespace},
        "spec": {
            "gateways": [KUBEFLOW_GATEWAY],
            "hosts": ["*"],
            "http": [
                {
                    # No rewrite: the router reads the model's name from the path.
                    "match": [{"uri": {"prefix": serving_path(namespace)}}],
                    "route": [{"destination": {"host": f"{ROUTER}.{namespace}.svc.cluster.local", "port": {"number": 80}}}],
                    "timeout": "3600s",
                }
            ],
        },
    }
    return [config, deployment, service, route, router_telemetry(namespace)]


def router_telemetry(namespace: str) -> dict[str, Any]:
    """Istio's request metrics on the router's sidecar alone, its outbound side: the count of
    requests for each model that wakes one at zero (components/serving_autoscaling.py wake_signal). The mesh
    has no default metrics provider: the pinned Kubeflow tree's patch of the mesh config
    (common/istio/istio-install/base/patches/istio-configmap-disable-tracing.yaml) replaces the
    chart's, which named `prometheus`, with one that names none, and istiod then makes no stats
    filter (istio/istio 1.30.1 pilot/pkg/model/telemetry.go mergeMetrics: the providers are the
    mesh's defaults or a Telemetry's). `prometheus` is one of istiod's built-in extension providers
    (pkg/config/mesh/mesh.go DefaultMeshConfig), kept beside the mesh's own (ApplyMeshConfig); a
    Telemetry with a selector applies to the pods it selects in its namespace (applicableTelemetries);
    ALL_METRICS disabled for SERVER drops the inbound side's filter (mergeMetrics,
    disabledAllMetricsProviders)."""
    return {
        "apiVersion": "telemetry.istio.io/v1",
        "kind": "Telemetry",
        "metadata": {"name": ROUTER, "namespace": namespace},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": ROUTER}},
            "metrics": [
                {
                    "providers": [{"name": "prometheus"}],
                    "overrides": [{"match": {"metric": "ALL_METRICS", "mode": "SERVER"}, "disabled": True}],
                }
            ],
        },
    }


# --- programs: a token the team mints ----------------------------------------------------------
# The gateway takes a bearer JWT in place of a session (kubeflow/community-distribution 26.03.1-rc.2
# common/oauth2-proxy/components/istio-external-auth: oauth2-proxy's CUSTOM policy skips requests
# with an Authorization header, and the require-jwt DENY wants a request principal from a
# RequestAuthentication; istio-m2m's RequestAuthentication trusts a cluster issuer and writes the
# token's `sub` into kubeflow-userid). Kubeflow's m2m trusts every token of the cluster; this trusts
# one audience and, through the DENY below, one service account per team on that team's prefix.
TOKEN_MINTER = "model-client-token"


def token_objects(namespace: str, members: Sequence[dict[str, str]]) -> list[dict[str, Any]]:
    """The team's model client account, and who may mint its tokens (`create serviceaccounts/token`
    on that account alone; RBAC subjects `members`: the team's people and groups, any role)."""
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": MODEL_CLIENT, "namespace": namespace}}
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": TOKEN_MINTER, "namespace": namespace},
        "rules": [{"apiGroups": [""], "resources": ["serviceaccounts/token"], "resourceNames": [MODEL_CLIENT], "verbs": ["create"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": TOKEN_MINTER, "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": TOKEN_MINTER},
        "subjects": [dict(m) for m in members],
    }
    return [account, role, binding] if members else [account]


def router_client_policy(namespace: str) -> dict[str, Any]:
    """On the team's router: requests the gateway passes on for the team's model client (its
    token's `sub` in kubeflow-userid) reach the team's prefix. People are let in by the team's
    own policies (KFAM's contributors, the owner's)."""
    return {
        "apiVersion": "security.istio.io/v1",
        "kind": "AuthorizationPolicy",
        "metadata": {"name": f"{ROUTER}-{MODEL_CLIENT}", "namespace": namespace},
        "spec": {
            "action": "ALLOW",
            "selector": {"matchLabels": {"app.kubernetes.io/name": ROUTER}},
            "rules": [
                {
                    "from": [{"source": {"principals": [GATEWAY_PRINCIPAL]}}],
                    "to": [{"operation": {"paths": [serving_path(namespace) + "*"]}}],
                    "when": [{"key": f"request.headers[{USER_HEADER}]", "values": [service_account_user(namespace, MODEL_CLIENT)]}],
                }
            ],
        },
    }


# --- the serving pods of a team: one PodDefault ----------------------------------------------
# Kubeflow's PodDefaults webhook (kubeflow.org/v1alpha1 PodDefault; its CRD in ../shared/crds/
# kubeflow-dashboard-v2.0.0: selector, labels, annotations, serviceAccountName, ...) applies it to
# every pod of the team namespace that KServe labels as an InferenceService's
# (pkg/constants/constants.go InferenceServicePodLabelKey, set on every predictor pod by
# components/predictor.go buildObjectMeta). It is the one place an InferenceService's pods' labels,
# annotations and identity are decided; an LLMInferenceService's pods carry other labels
# (app.kubernetes.io/*) and take theirs from the team's LLM config instead (team_llm_config, below).
SERVING_POD_DEFAULT = "serving-pods"
MODEL_SERVER = "model-server"
"""The serving pods' service account: on GKE, Workload Identity to a Google account that may read
the team bucket and nothing more (the model store's identity)."""


SERVING_PRIORITY_CLASS = SERVING_PRIORITY.name
"""The Kueue WorkloadPriorityClass of serving replicas: someone waits on them, like a GPU notebook,
so batch work of the team never preempts them (facts/priorities.py)."""


def serving_pod_labels() -> dict[str, str]:
    """The labels every serving pod of a team gets: Kueue's priority class, which its pod
    integration reads from the pod (kubernetes-sigs/kueue v0.19.2 pkg/controller/jobframework/
    utils.go WorkloadPriorityClassName, pkg/controller/constants/constants.go
    WorkloadPriorityClassLabel). The class must exist: for a label naming none Kueue makes no
    Workload and the pod stays gated (reconciler.go ExtractPriority, pkg/util/priority/priority.go
    GetPriorityFromWorkloadPriorityClass returns the NotFound): check's `priority-classes` rule
    holds it to the classes the platform makes. KServe gives the Deployment's pod template the runtime's, the
    InferenceService's and the predictor's labels (kserve v0.20.0 components/predictor.go
    buildObjectMeta; reconcilers/deployment/deployment_reconciler.go createRawDefaultDeployment),
    none of Kueue's of its own: the PodDefault is the one place the platform adds them."""
    return {KUEUE_PRIORITY_CLASS_LABEL: SERVING_PRIORITY_CLASS}


def serving_pod_default(namespace: str, model_store: bool) -> dict[str, Any]:
    """The team's PodDefault for its serving pods: the labels above; with a model store (GKE, a
    team bucket), the account that reads it and GCS Fuse's sidecar, with the annotations Istio
    needs beside it (components/profiles/pod_default.py)."""
    spec: dict[str, Any] = {
        "desc": f"Team {namespace}: its InferenceServices' pods",
        "selector": {"matchExpressions": [{"key": INFERENCE_SERVICE_LABEL, "operator": "Exists"}]},
    }
    labels = serving_pod_labels()
    if labels:
        spec["labels"] = labels
    if model_store:
        spec["serviceAccountName"] = MODEL_SERVER
        spec["annotations"] = {GCS_FUSE_ANNOTATION: "true", **ISTIO_GCS_FUSE_ANNOTATIONS}
    return {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "PodDefault",
        "metadata": {"name": SERVING_POD_DEFAULT, "namespace": namespace},
        "spec": spec,
    }


# --- the team's model store on GKE ---------------------------------------------------------------
# The team bucket, read-only, as a PersistentVolume of GKE's GCS Fuse CSI driver (static
# provisioning: GKE docs, "Access Cloud Storage buckets with the Cloud Storage FUSE CSI driver"; the
# volume handle is the bucket's name) on the serving profile's StorageClass, which GKE installs from
# 1.35.1-gke.1616000 and whose driver tunes the file cache, parallel downloads and prefetch for model
# loading (GKE docs, "gcsfuse-profiles"); and its claim, which KServe mounts at /mnt/models for a
# `pvc://team-models/<path>` storage URI (pkg/webhook/admission/pod/storage_initializer_injector.go).
MODEL_STORE = "team-models"
SERVING_PROFILE = "gcsfusecsi-serving"
MODEL_STORE_CAPACITY = "5Gi"
"""A PersistentVolume must name a capacity; the driver ignores it (a bucket has no size)."""


def model_store_objects(namespace: str, bucket: str) -> list[dict[str, Any]]:
    """The PersistentVolume `<namespace>-team-models` of `bucket`, bound to the claim `team-models`
    of `namespace` alone."""
    volume = f"{namespace}-{MODEL_STORE}"
    persistent_volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": volume},
        "spec": {
            "accessModes": ["ReadOnlyMany"],
            "capacity": {"storage": MODEL_STORE_CAPACITY},
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": SERVING_PROFILE,
            "claimRef": {"namespace": namespace, "name": MODEL_STORE},
            "mountOptions": ["implicit-dirs"],
            "csi": {"driver": GCS_FUSE_DRIVER, "volumeHandle": bucket, "readOnly": True},
        },
    }
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": MODEL_STORE, "namespace": namespace},
        "spec": {
            "accessModes": ["ReadOnlyMany"],
            "resources": {"requests": {"storage": MODEL_STORE_CAPACITY}},
            "storageClassName": SERVING_PROFILE,
            "volumeName": volume,
        },
    }
    return [persistent_volume, claim]


# --- the team's share, together ----------------------------------------------------------------

RBAC = "rbac.authorization.k8s.io"


def token_minters(owner: str, people: Sequence[str], groups: Sequence[str]) -> list[dict[str, str]]:
    """Who may mint the model client's tokens: the owner, every contributor (viewers query too) and
    every group of the team, as RBAC subjects (the names the API server authenticates them by)."""
    users = dict.fromkeys([owner, *people])
    return [{"apiGroup": RBAC, "kind": "User", "name": u} for u in users] + [{"apiGroup": RBAC, "kind": "Group", "name": g} for g in dict.fromkeys(groups)]


def team_serving_objects(namespace: str, minters: Sequence[dict[str, str]], bucket: str | None) -> list[dict[str, Any]]:
    """Everything of serving in one team namespace but its LLMs' (components/profiles/serving_llm.py):
    its route and router, the model client and who mints its tokens, the router's policy for it,
    its serving pods' PodDefault, and with a bucket (GKE) its model store."""
    objects = [*router_objects(namespace), router_client_policy(namespace), *token_objects(namespace, minters)]
    objects.append(serving_pod_default(namespace, model_store=bucket is not None))
    if bucket is not None:
        objects += model_store_objects(namespace, bucket)
    return objects
