"""Serving: KServe v0.20.0 in standard (raw Deployment) mode, and what makes an InferenceService
of a team reachable, role-checked and counted like the team's other work (docs/serving.md).

This module holds the pure builders (values, transforms, per-team objects) the `serving`
component installs; each is one function on plain data, used by the program and the offline
render alike. Upstream facts, read at kserve/kserve tag v0.20.0 (1fb78105) unless said:

- `kserve.controller.deploymentMode: Standard` makes raw Deployments, Services and an autoscaler
  per InferenceService, no Knative (pkg/constants/constants.go DeploymentModeType: Standard, and
  RawDeployment its legacy name; charts/kserve-resources/files/common/configmap-patch.yaml writes
  it into inferenceservice-config `deploy.defaultDeploymentMode`).
- In Standard mode KServe routes an InferenceService with a host-based networking.k8s.io Ingress
  or, with `enableGatewayApi`, an HTTPRoute (pkg/controller/v1beta1/inferenceservice/reconcilers/
  factory.go CreateIngressReconciler; ingress/kube_ingress_reconciler.go createRawIngress: rules on
  `<name>-<namespace>.<domain>`, path `/`). Neither is a path of the Kubeflow gateway, so
  `disableIngressCreation` is on and each team's router serves /serving/<team>/<name>/ (below).
- The predictor's Service is `<name>-predictor`, port 80 to the container's 8080
  (pkg/constants/constants.go PredictorServiceName, CommonDefaultHttpPort).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from components.access import USER_HEADER
from components.dashboards.serving import MODEL_LABEL
from facts.admission import deny_binding, fail_closed_policy
from facts.labels import PROFILE_NAMESPACE_LABEL
from facts.naming import serving_path
from facts.node_labels import GPU_RESOURCE, Pool, pool_selector, pool_taints
from facts.versions import (
    KSERVE_AGENT_IMAGE,
    KSERVE_HUGGINGFACE_GPU_IMAGE,
    KSERVE_STORAGE_INITIALIZER_IMAGE,
    VLLM_IMAGE,
    image,
)

NAMESPACE = "kserve"
"""Where the controller runs: the charts' own namespace name (charts/kserve-resources values and
templates take the release's namespace; the webhook Certificate names `<service>.<namespace>.svc`)."""
CONFIG_MAP = "inferenceservice-config"
"""The controller's configuration (charts/kserve-resources files/common/configmap.yaml), read at
each reconcile (pkg/controller/v1beta1/inferenceservice/controller.go: NewIngressConfig,
NewDeployConfig of the ConfigMap it fetches)."""
STANDARD = "Standard"

# --- the charts' values ----------------------------------------------------------------------


def kserve_values() -> dict[str, Any]:
    """kserve-resources: Standard mode; the webhook certificate from cert-manager (the chart's
    Issuer and Certificate, templates/common/certmanager.yaml, files/kserve/certificate-patch.yaml);
    no Ingress or Istio VirtualService of KServe's (the team router serves the path); the images
    it injects at the pinned tags (the chart's `tag: ""` is its appVersion, the same)."""
    return {
        "kserve": {
            "certManager": {"enabled": True},
            "controller": {
                "deploymentMode": STANDARD,
                "imagePullPolicy": "IfNotPresent",
                "gateway": {"disableIngressCreation": True, "disableIstioVirtualHost": True},
            },
            "storage": {"image": _repository(KSERVE_STORAGE_INITIALIZER_IMAGE), "tag": KSERVE_STORAGE_INITIALIZER_IMAGE.version},
            "agent": {"image": _repository(KSERVE_AGENT_IMAGE), "tag": KSERVE_AGENT_IMAGE.version},
        }
    }


def _repository(pin: Any) -> str:
    return str(image(pin)).rsplit(":", 1)[0]


RUNTIMES_KEPT = ("sklearnserver", "xgbserver", "huggingfaceserver", "tritonserver")
"""The ClusterServingRuntimes of kserve-runtime-configs the platform keeps (values.yaml
`kserve.servingruntime.<name>.disabled`): scikit-learn, XGBoost, the Hugging Face server (its CPU
build) and Triton, which serves the `pytorch` format as TorchScript (TorchServe, the chart's other
PyTorch runtime, is in limited maintenance: pytorch/serve#3396). vLLM and the Hugging Face
server's GPU build are the platform's per-pool runtimes."""
RUNTIMES_DISABLED = (
    "tensorflow",
    "mlserver",
    "huggingfaceserver_multinode",
    "pmmlserver",
    "predictiveserver",
    "paddleserver",
    "lgbserver",
    "autogluonserver",
    "torchserve",
    "vllmserver",
)
"""Every other runtime of the chart's values.yaml at v0.20.0 (kserve.servingruntime.*)."""


def runtime_values() -> dict[str, Any]:
    """kserve-runtime-configs: its ClusterServingRuntimes on, all but RUNTIMES_KEPT disabled."""
    runtimes: dict[str, Any] = {name: {"disabled": True} for name in RUNTIMES_DISABLED}
    return {"kserve": {"servingruntime": {"enabled": True, **runtimes}}}


MULTINODE_RUNTIME = "kserve-huggingfaceserver-multinode"


def with_multinode_runtime_disabled(props: dict[str, Any]) -> dict[str, Any] | None:
    """The chart's multi-node Hugging Face runtime disabled: its `disabled` follows the
    single-node runtime's value, not a key of its own (charts/kserve-runtime-configs
    files/runtimes/clusterservingruntimes-patch.yaml:438, `.Values.kserve.servingruntime.
    huggingfaceserver.disabled`), so keeping that one on keeps this one on. Multi-node serving is
    LeaderWorkerSet's, through LLMInferenceService (issue 41's LLM half). None for other objects."""
    if props.get("kind") != "ClusterServingRuntime" or (props.get("metadata") or {}).get("name") != MULTINODE_RUNTIME:
        return None
    return {**props, "spec": {**(props.get("spec") or {}), "disabled": True}}


# --- the controller's configuration ----------------------------------------------------------
# A GPU replica waits in its team's queue (Kueue's plain-pod integration, components/kueue_pods.py).
# KServe's default rollout surges first: RollingUpdate, maxSurge 25% and maxUnavailable 25%
# (reconcilers/deployment/deployment_reconciler.go setDefaultDeploymentSpec), one new pod above a
# 1- to 4-replica model, which under a full quota waits for quota the old pods hold, for ever.
# `deploy.deploymentRolloutStrategy.defaultRollout` (pkg/apis/serving/v1beta1/configmap.go
# DeployConfig, RolloutSpec; applied in Standard mode only, applyRolloutStrategyFromConfigmap)
# replaces it: no surge, and as the Deployment controller takes 0 and 0 as one unavailable
# (kubernetes pkg/controller/deployment/util ResolveFenceposts), one replica at a time. KServe
# writes the values as strings (intstr.String): a percentage, which a Deployment accepts, where
# a bare number would be refused (a string must match `[0-9]+%`: the API server's answer,
# tests/envtest/test_serving.py).
DEFAULT_ROLLOUT = {"maxSurge": "0%", "maxUnavailable": "25%"}


def with_rollout_strategy(props: dict[str, Any]) -> dict[str, Any] | None:
    """inferenceservice-config with the no-surge rollout in its `deploy` key; None for other objects."""
    if props.get("kind") != "ConfigMap" or (props.get("metadata") or {}).get("name") != CONFIG_MAP:
        return None
    data = dict(props.get("data") or {})
    deploy = json.loads(data.get("deploy") or "{}")
    deploy["deploymentRolloutStrategy"] = {"defaultRollout": dict(DEFAULT_ROLLOUT)}
    data["deploy"] = json.dumps(deploy, indent=2, sort_keys=True)
    return {**props, "data": data}


# --- who may deploy: Kubeflow's roles --------------------------------------------------------
# kserve/kserve v0.20.0 config/overlays/kubeflow/cluster-role.yaml (what Kubeflow's own KServe
# install aggregates into its roles; the charts carry no such roles): editors manage the team's
# InferenceServices and their parts, viewers read them. The Knative kinds of that file are left
# out (no Knative here); its `lllminferenceserviceconfigs` is a typo upstream, written here as meant.
SERVING_API = "serving.kserve.io"
SERVING_RESOURCES = (
    "inferencegraphs",
    "inferenceservices",
    "servingruntimes",
    "trainedmodels",
    "llminferenceservices",
    "llminferenceserviceconfigs",
)
EDIT_VERBS = ("get", "list", "watch", "create", "delete", "deletecollection", "patch", "update")
VIEW_VERBS = ("get", "list", "watch")
AGGREGATE = "rbac.authorization.kubeflow.org/aggregate-to-{role}"


def kubeflow_roles() -> list[dict[str, Any]]:
    """kubeflow-kserve-admin (aggregating the edit role), -edit into kubeflow-edit, -view into kubeflow-view."""

    def role(name: str, labels: Sequence[str], verbs: Sequence[str] | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name, "labels": {AGGREGATE.format(role=label): "true" for label in labels}},
        }
        if verbs is None:
            body["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {AGGREGATE.format(role="kubeflow-kserve-admin"): "true"}}]}
            body["rules"] = []
        else:
            body["rules"] = [{"apiGroups": [SERVING_API], "resources": list(SERVING_RESOURCES), "verbs": list(verbs)}]
        return body

    return [
        role("kubeflow-kserve-admin", ("kubeflow-admin",), None),
        role("kubeflow-kserve-edit", ("kubeflow-edit", "kubeflow-kserve-admin"), EDIT_VERBS),
        role("kubeflow-kserve-view", ("kubeflow-view",), VIEW_VERBS),
    ]


INFERENCE_SERVICE_LABEL = "serving.kserve.io/inferenceservice"
"""The label KServe puts on every pod of an InferenceService, its name the value
(pkg/constants/constants.go InferenceServicePodLabelKey; components/predictor.go buildObjectMeta)."""
MODEL_CLIENT = "model-client"
"""The service account whose tokens a team's programs query its models with: no Kubernetes rights."""
def service_account_user(namespace: str, account: str) -> str:
    """A service account's username, which its token's `sub` claim holds (Kubernetes
    ServiceAccount token: sub = system:serviceaccount:<namespace>:<name>)."""
    return f"system:serviceaccount:{namespace}:{account}"


SERVING_TOKENS = "serving-tokens"


def gateway_token_objects(
    gateway_namespace: str, gateway_selector: dict[str, str], issuer: str, jwks_uri: str, audience: str, teams: Sequence[str]
) -> list[dict[str, Any]]:
    """At the gateway: the cluster's tokens of `audience` verified (their `sub` into kubeflow-userid,
    as Kubeflow's istio-m2m does), and refused unless they are a team's model client on that
    team's prefix."""
    authentication = {
        "apiVersion": "security.istio.io/v1",
        "kind": "RequestAuthentication",
        "metadata": {"name": SERVING_TOKENS, "namespace": gateway_namespace},
        "spec": {
            "selector": {"matchLabels": dict(gateway_selector)},
            "jwtRules": [
                {
                    "issuer": issuer,
                    "jwksUri": jwks_uri,
                    "audiences": [audience],
                    "forwardOriginalToken": False,
                    "outputClaimToHeaders": [{"header": USER_HEADER, "claim": "sub"}, {"header": "kubeflow-groups", "claim": "groups"}],
                    "fromHeaders": [{"name": "Authorization", "prefix": "Bearer "}],
                }
            ],
        },
    }
    clients = [f"{issuer}/{service_account_user(team, MODEL_CLIENT)}" for team in teams]
    rules: list[dict[str, Any]] = [{"from": [{"source": {"requestPrincipals": [f"{issuer}/*"], "notRequestPrincipals": clients}}]}]
    rules += [
        {
            "from": [{"source": {"requestPrincipals": [client]}}],
            "to": [{"operation": {"notPaths": [serving_path(team) + "*"]}}],
        }
        for team, client in zip(teams, clients, strict=True)
    ]
    deny = {
        "apiVersion": "security.istio.io/v1",
        "kind": "AuthorizationPolicy",
        "metadata": {"name": SERVING_TOKENS, "namespace": gateway_namespace},
        "spec": {"action": "DENY", "selector": {"matchLabels": dict(gateway_selector)}, "rules": rules},
    }
    return [authentication, deny]


# --- GPU runtimes, one per GPU pool ----------------------------------------------------------
# vLLM and the Hugging Face server's GPU build as ClusterServingRuntimes pinned to a pool, as the
# training runtimes have one variant per GPU pool (runtimes/): the pool's node selector and
# taints, one GPU. A predictor that names one is placed there; one that asks for GPUs on another
# runtime gets the first pool flavor of its team's queue with room, and Kueue adds that flavor's
# node labels (components/kueue_pods.py). A DRA pool's GPUs are claimed, not counted as
# nvidia.com/gpu, and KServe's runtimes cannot name a claim: no runtime there.
# The containers follow kserve/kserve v0.20.0 charts/kserve-runtime-configs files/runtimes/
# clusterservingruntimes-patch.yaml: kserve-vllmserver (vLLM's OpenAI server on 8080, the model
# at /mnt/models served under the InferenceService's name, its caches in /tmp, a memory-backed
# /dev/shm) and kserve-huggingfaceserver (`--model_name={{.Name}}`; its vLLM backend by default on
# a GPU: python/huggingfaceserver/huggingfaceserver/__main__.py).
MODEL_NAME_PLACEHOLDER = "{{.Name}}"
"""The InferenceService's name, as KServe substitutes it into a runtime's arguments (values.yaml
kserve.servingruntime.modelNamePlaceholder)."""
METRICS_ANNOTATIONS = {"prometheus.kserve.io/path": "/metrics", "prometheus.kserve.io/port": "8080"}
"""Where both servers answer Prometheus (the chart's runtimes' annotations)."""
GPU_RUNTIME_RESOURCES = {"cpu": "4", "memory": "16Gi"}
"""A replica's CPU and memory beside its one GPU: a starting point a predictor overrides
(`resources` of its model spec)."""


def _gpu_runtime(name: str, pool: Pool, container: dict[str, Any], formats: list[dict[str, Any]], protocols: list[str] | None) -> dict[str, Any]:
    resources = {**GPU_RUNTIME_RESOURCES, GPU_RESOURCE: "1"}
    container = {
        **container,
        "name": "kserve-container",
        "resources": {"requests": dict(resources), "limits": dict(resources)},
        "securityContext": {"allowPrivilegeEscalation": False, "privileged": False, "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "devshm", "mountPath": "/dev/shm"}],
    }
    spec: dict[str, Any] = {
        "annotations": dict(METRICS_ANNOTATIONS),
        "supportedModelFormats": formats,
        "containers": [container],
        "volumes": [{"name": "devshm", "emptyDir": {"medium": "Memory"}}],
        "nodeSelector": pool_selector(pool),
        "tolerations": [t.toleration() for t in pool_taints(pool)],
    }
    if protocols:
        spec["protocolVersions"] = protocols
    return {"apiVersion": f"{SERVING_API}/v1alpha1", "kind": "ClusterServingRuntime", "metadata": {"name": name}, "spec": spec}


def gpu_runtimes(pools: Sequence[Pool]) -> list[dict[str, Any]]:
    """`kserve-vllm-<pool>` and `kserve-huggingface-<pool>` for every GPU pool whose GPUs the
    device plugin counts. Neither auto-selects: a predictor names the runtime, which says the pool."""
    found: list[dict[str, Any]] = []
    for pool in pools:
        if pool.dra:
            continue
        vllm = {
            "image": image(VLLM_IMAGE),
            "command": ["python", "-m", "vllm.entrypoints.openai.api_server"],
            "args": ["--port=8080", "--model=/mnt/models", f"--served-model-name={MODEL_NAME_PLACEHOLDER}"],
            "env": [
                {"name": "HF_HOME", "value": "/tmp"},
                {"name": "VLLM_CONFIG_ROOT", "value": "/tmp"},
                {"name": "VLLM_WORKER_MULTIPROC_METHOD", "value": "spawn"},
            ],
            "readinessProbe": {"httpGet": {"path": "/v1/models", "port": 8080}, "periodSeconds": 10, "timeoutSeconds": 5},
            "startupProbe": {
                "httpGet": {"path": "/v1/models", "port": 8080},
                "initialDelaySeconds": 30,
                "periodSeconds": 30,
                "timeoutSeconds": 10,
                "failureThreshold": 60,
            },
        }
        huggingface = {
            "image": image(KSERVE_HUGGINGFACE_GPU_IMAGE),
            "args": [f"--model_name={MODEL_NAME_PLACEHOLDER}"],
            # As the chart's GPU (multinode) Hugging Face runtime sets them.
            "env": [{"name": "VLLM_CONFIG_ROOT", "value": "/tmp"}, {"name": "HF_HUB_CACHE", "value": "/tmp"}],
        }
        found.append(_gpu_runtime(f"kserve-vllm-{pool.name}", pool, vllm, [{"name": "vLLM", "version": "1", "autoSelect": False}], None))
        found.append(
            _gpu_runtime(
                f"kserve-huggingface-{pool.name}", pool, huggingface, [{"name": "huggingface", "version": "1", "autoSelect": False}], ["v2", "v1"]
            )
        )
    return found


# --- replicas: the stack's floor and ceiling ---------------------------------------------------
# KServe makes the autoscaler from the predictor's minReplicas and maxReplicas
# (reconcilers/hpa/hpa_reconciler.go: HPA at least 1; reconcilers/keda/keda_reconciler.go: KEDA
# from 0, an unset minimum 1 (constants.go DefaultMinReplicas), a maximum below the minimum
# raised to it). A policy on InferenceServices in the team namespaces holds both to the stack's
# bounds, as KServe will read them; the API server evaluates it after KServe's defaulting webhook.
REPLICA_BOUNDS = "serving-replica-bounds"
EFFECTIVE_MIN = "has(object.spec.predictor.minReplicas) ? object.spec.predictor.minReplicas : 1"


def replica_bounds_policy(lowest_min: int, highest_max: int) -> dict[str, Any]:
    """The ValidatingAdmissionPolicy: a predictor's minReplicas at least `lowest_min` (0 lets an
    idle model give its GPUs back) and its maxReplicas, or its minimum where it names none, at
    most `highest_max`; each refusal names the field and the stack's bound."""
    rules = [{"apiGroups": [SERVING_API], "apiVersions": ["v1beta1"], "resources": ["inferenceservices"], "operations": ["CREATE", "UPDATE"]}]
    variables = [
        {"name": "minimum", "expression": EFFECTIVE_MIN},
        {"name": "maximum", "expression": "has(object.spec.predictor.maxReplicas) && object.spec.predictor.maxReplicas > variables.minimum ? object.spec.predictor.maxReplicas : variables.minimum"},
    ]
    validations = [
        {
            "expression": f"variables.minimum >= {lowest_min}",
            "messageExpression": f"'spec.predictor.minReplicas ' + string(variables.minimum) + ' is below the platform\\'s floor of {lowest_min} replicas'",
        },
        {
            "expression": f"variables.maximum <= {highest_max}",
            "messageExpression": f"'spec.predictor.maxReplicas ' + string(variables.maximum) + ' is above the platform\\'s ceiling of {highest_max} replicas'",
        },
    ]
    return fail_closed_policy(REPLICA_BOUNDS, rules, [], validations, variables)


def replica_bounds_binding() -> dict[str, Any]:
    """The policy in force in every team namespace."""
    key, value = PROFILE_NAMESPACE_LABEL
    return deny_binding(REPLICA_BOUNDS, REPLICA_BOUNDS, {"matchLabels": {key: value}})


# --- KEDA: replicas on a serving signal ------------------------------------------------------------
# KServe v0.20.0 in Standard mode scales on CPU or memory alone with its HPA class, on anything else
# through KEDA (pkg/apis/serving/v1beta1/inference_service_validation.go
# validateScalingHPACompExtension: Resource metrics only; validateScalingKedaCompExtension: Resource,
# External, PodMetric), making a ScaledObject whose `prometheus` trigger queries the server the
# predictor names (reconcilers/keda/keda_reconciler.go getKedaMetrics). KEDA's chart (kedacore/charts
# v2.20.2 keda/values.yaml `certificates`) takes its webhook's and metrics server's certificates from
# cert-manager instead of making its own: a self-signed CA Issuer and Certificate, and cainjector
# fills the APIService and the webhook configuration (their `cert-manager.io/inject-ca-from`). The
# control plane calls the metrics server on 6443 (APIService v1beta1.external.metrics.k8s.io,
# Service port 443) and the webhook on 9443.
KEDA_NAMESPACE = "keda"
KEDA_CONTROL_PLANE_PORTS = (6443, 9443)


def keda_values() -> dict[str, Any]:
    """The KEDA chart's certificates from cert-manager."""
    return {"certificates": {"autoGenerated": False, "certManager": {"enabled": True}}}


# --- seen like training: the predictors' metrics ---------------------------------------------------
# Every serving runtime says where it answers Prometheus in its pod annotations
# `prometheus.kserve.io/port` and `prometheus.kserve.io/path` (pkg/constants/constants.go
# KserveContainerPrometheusPortKey; the chart's runtimes and ours set them, and KServe copies a
# runtime's annotations onto the pod: components/predictor.go buildObjectMeta), and most declare
# no container port, so a monitor by port name or number finds nothing (prometheus-operator
# v0.93.1 PodMonitor `portNumber`: "The Pod must declare the specified Port"). The PodMonitor
# names no port: Prometheus then makes one target per container without ports, "for manually
# adding a port via relabeling" (prometheus.io docs, kubernetes_sd_config role pod), and the
# relabelings take address and path from the annotations. The profile's own policy lets
# /metrics through the pods' sidecars (ns-owner-access-istio, tests/envtest/test_access.py).
PREDICTOR_MONITOR = "kserve-predictors"
PREDICTOR_CONTAINER = "kserve-container"
"""The model server's container in every runtime (KServe's constants.InferenceServiceContainerName)."""


def predictor_pod_monitor_spec() -> dict[str, Any]:
    """The PodMonitor spec: every InferenceService's model server container, in every namespace."""
    annotation = "__meta_kubernetes_pod_annotation_prometheus_kserve_io_"
    return {
        "namespaceSelector": {"any": True},
        "selector": {"matchExpressions": [{"key": INFERENCE_SERVICE_LABEL, "operator": "Exists"}]},
        "podMetricsEndpoints": [
            {
                "relabelings": [
                    {"sourceLabels": ["__meta_kubernetes_pod_container_name"], "regex": PREDICTOR_CONTAINER, "action": "keep"},
                    {"sourceLabels": [f"{annotation}port"], "regex": "[0-9]+", "action": "keep"},
                    {
                        "sourceLabels": ["__meta_kubernetes_pod_ip", f"{annotation}port"],
                        "separator": ";",
                        "regex": "(.+);([0-9]+)",
                        "replacement": "$1:$2",
                        "targetLabel": "__address__",
                    },
                    {"sourceLabels": [f"{annotation}path"], "regex": "(.+)", "targetLabel": "__metrics_path__"},
                    {"sourceLabels": ["__meta_kubernetes_pod_label_serving_kserve_io_inferenceservice"], "targetLabel": MODEL_LABEL},
                ]
            }
        ],
    }


# --- alerts: a model down, a model saturated ----------------------------------------------------
SERVING_ALERT_GROUP = "mlplatform-serving"
SATURATED_WAITING = 10
"""Requests waiting in a vLLM server, all of its replicas together, above which it is saturated."""
SATURATED_KV_CACHE = 0.95
"""KV-cache use above which vLLM starts to preempt requests (its scheduler evicts when blocks run out)."""


def serving_alert_rules() -> list[dict[str, Any]]:
    """A PrometheusRule group's rules: an InferenceService that wants replicas and has none ready,
    and one whose requests queue or whose KV cache stays full."""
    predictor = 'deployment=~".+-predictor"'
    by = f"by (namespace, {MODEL_LABEL})"
    return [
        {
            "alert": "InferenceServiceDown",
            "expr": (
                f"sum by (namespace, deployment) (kube_deployment_spec_replicas{{{predictor}}}) > 0 and "
                f"sum by (namespace, deployment) (kube_deployment_status_replicas_available{{{predictor}}}) == 0"
            ),
            "for": "10m",
            "labels": {"severity": "critical"},
            "annotations": {
                "summary": "{{ $labels.namespace }}/{{ $labels.deployment }} has no ready replica",
                "description": (
                    "The predictor {{ $labels.deployment }} of namespace {{ $labels.namespace }} wants replicas and has had "
                    "none ready for 10 minutes: its model fails to load, its image to pull, or its replicas wait in the "
                    "team's Kueue queue (kubectl get workloads -n {{ $labels.namespace }})."
                ),
            },
        },
        {
            "alert": "InferenceServiceSaturated",
            "expr": (
                f"sum {by} (vllm:num_requests_waiting) > {SATURATED_WAITING} or "
                f"max {by} (vllm:kv_cache_usage_perc) > {SATURATED_KV_CACHE}"
            ),
            "for": "10m",
            "labels": {"severity": "warning"},
            "annotations": {
                "summary": "{{ $labels.namespace }}/{{ $labels." + MODEL_LABEL + " }} is saturated",
                "description": (
                    f"For 10 minutes more than {SATURATED_WAITING} requests waited, or its KV cache stayed above "
                    f"{SATURATED_KV_CACHE:.0%} full: raise its maxReplicas (within the platform's ceiling) or give it larger GPUs."
                ),
            },
        },
    ]
