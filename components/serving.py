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
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pulumi

from components.access import GATEWAY_SELECTOR
from components.inference_gateway import InferenceGatewayArgs, inference_gateway_args
from components.istio import GATEWAY_NAMESPACE
from components.serving_autoscaling import SPEC_OR_CLASS_CHANGED, wake_validation, wake_variables
from components.serving_llm import LLM_CHARTS, gateway_ref, install_llm_controller, with_path_routing_only
from components.serving_registry import STORAGE_INITIALIZER, STORAGE_INITIALIZER_TREE, with_team_registry
from components.serving_runtimes import gpu_runtimes
from components.serving_tokens import TokenIssuer, gateway_token_objects, token_issuer_args
from facts.admission import SPEC_CHANGED, fail_closed_policy, teams_binding
from facts.node_labels import Pool
from facts.versions import (
    KEDA_CHART,
    KSERVE_AGENT_IMAGE,
    KSERVE_CHART,
    KSERVE_CRD_CHART,
    KSERVE_RUNTIMES_CHART,
    KSERVE_STORAGE_INITIALIZER_IMAGE,
    VLLM_IMAGE,
    image,
)
from infra.cluster import Cluster
from plumbing.base import ChartArgs, PlatformComponent, apply_manifest
from plumbing.charts import ChartValues, Relied, built_by, exactly
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.network import namespace_peer, network_policy
from plumbing.readiness import Readiness
from plumbing.roles import VERBS_EDIT, VERBS_READ, Rule, aggregated_role_manifest
from stackmodel.components.model_registry import MODEL_REGISTRY
from stackmodel.components.serving import SERVING
from stackmodel.schema import GkeClusterConfig
from stackmodel.stack import PlatformConfig

NAMESPACE = "kserve"
"""Where the controller runs: the charts' own namespace name (charts/kserve-resources values and
templates take the release's namespace; the webhook Certificate names `<service>.<namespace>.svc`)."""
CONFIG_MAP = "inferenceservice-config"
"""The controller's configuration (charts/kserve-resources files/common/configmap.yaml), read at
each reconcile (pkg/controller/v1beta1/inferenceservice/controller.go: NewIngressConfig,
NewDeployConfig of the ConfigMap it fetches)."""
STANDARD = "Standard"

# --- the charts' values ----------------------------------------------------------------------


def kserve_values(llm: bool = False) -> dict[str, Any]:
    """kserve-resources: Standard mode; the webhook certificate from cert-manager (the chart's
    Issuer and Certificate, templates/common/certmanager.yaml, files/kserve/certificate-patch.yaml);
    no Ingress or Istio VirtualService of KServe's (the team router serves the path); the images
    it injects at the pinned tags (the chart's `tag: ""` is its appVersion, the same); with `llm`,
    the inference gateway the LLM routes attach to (components/serving_llm.py)."""
    gateway: dict[str, Any] = {"disableIngressCreation": True, "disableIstioVirtualHost": True}
    if llm:
        gateway["ingressGateway"] = {"kserveGateway": gateway_ref()}
    return {
        "kserve": {
            "certManager": {"enabled": True},
            "controller": {
                "deploymentMode": STANDARD,
                "imagePullPolicy": "IfNotPresent",
                "gateway": gateway,
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


def runtime_values(llm: bool = False) -> dict[str, Any]:
    """kserve-runtime-configs: its ClusterServingRuntimes on, all but RUNTIMES_KEPT disabled; with
    `llm`, the LLMInferenceServiceConfig presets too (components/serving_llm.py)."""
    runtimes: dict[str, Any] = {name: {"disabled": True} for name in RUNTIMES_DISABLED}
    # Disabled, and still an object of the cluster: at the pinned vLLM, not values.yaml's `latest`.
    runtimes["vllmserver"]["tag"] = VLLM_IMAGE.version
    values: dict[str, Any] = {"servingruntime": {"enabled": True, **runtimes}}
    if llm:
        values["llmisvcConfigs"] = {"enabled": True}
    return {"kserve": values}


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


def kubeflow_roles() -> list[dict[str, Any]]:
    """kubeflow-kserve-admin (aggregating the edit role), -edit into kubeflow-edit, -view into kubeflow-view."""
    on_serving = (SERVING_API,), SERVING_RESOURCES
    return [
        aggregated_role_manifest("kubeflow-kserve-admin", ("kubeflow-admin",), aggregates="kubeflow-kserve-admin"),
        aggregated_role_manifest("kubeflow-kserve-edit", ("kubeflow-edit", "kubeflow-kserve-admin"), [Rule(*on_serving, VERBS_EDIT)]),
        aggregated_role_manifest("kubeflow-kserve-view", ("kubeflow-view",), [Rule(*on_serving, VERBS_READ)]),
    ]


ROUTER_RESOURCES = {"requests": {"cpu": "50m", "memory": "32Mi"}, "limits": {"cpu": "1", "memory": "128Mi"}}
"""The size of each team's model router (components/profiles/serving.py), which the team's quota
keeps room for (components/profiles/namespace.py serving_requests)."""


# --- replicas: the stack's floor and ceiling ---------------------------------------------------
# KServe makes the autoscaler from the predictor's minReplicas and maxReplicas
# (reconcilers/hpa/hpa_reconciler.go: HPA at least 1; reconcilers/keda/keda_reconciler.go: KEDA
# from 0, an unset minimum 1 (constants.go DefaultMinReplicas), a maximum below the minimum
# raised to it). A policy on InferenceServices in the team namespaces holds both to the stack's
# bounds, as KServe will read them; the API server evaluates it after KServe's defaulting webhook.
# It judges a create and a change of the spec only (facts/admission.py SPEC_CHANGED; with a floor
# of 0 a change of the InferenceService's autoscaler class too, which its wake rule reads): KServe patches
# the finalizer of a service being deleted (pkg/controller/v1beta1/inferenceservice/controller.go:
# 195-205), which must pass for a service made before the stack narrowed its bounds.
# The same bounds on LLMInferenceServices: components/serving_llm.py llm_replica_bounds_policy.
REPLICA_BOUNDS = "serving-replica-bounds"
EFFECTIVE_MIN = "has(object.spec.predictor.minReplicas) ? object.spec.predictor.minReplicas : 1"


def replica_bounds_policy(lowest_min: int, highest_max: int) -> dict[str, Any]:
    """The ValidatingAdmissionPolicy: a predictor's minReplicas at least `lowest_min` (0 lets an
    idle model give its GPUs back) and its maxReplicas, or its minimum where it names none, at
    most `highest_max`; each refusal names the field and the stack's bound. Where the floor is 0,
    a predictor at 0 must carry its wake signal (components/serving_autoscaling.py wake_validation)."""
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
    if lowest_min == 0:
        variables += wake_variables()
        validations.append(wake_validation("variables.minimum"))
    return fail_closed_policy(REPLICA_BOUNDS, rules, [SPEC_OR_CLASS_CHANGED if lowest_min == 0 else SPEC_CHANGED], validations, variables)


def replica_bounds_binding() -> dict[str, Any]:
    """The policy in force in every team namespace."""
    return teams_binding(REPLICA_BOUNDS)


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


KEDA_OPERATOR_LABELS = {"app": "keda-operator"}
"""The KEDA operator's pods (kedacore/charts v2.20.2 keda/templates/manager/deployment.yaml), which
run the scalers: its prometheus scaler queries Prometheus itself."""


def keda_to_prometheus_policy(monitoring_namespace: str, port: int) -> dict[str, Any]:
    """In the monitoring namespace (whose pods take traffic from that namespace alone,
    components/monitoring.py): KEDA's operator may query Prometheus, on its port only. Without it
    every prometheus trigger times out and no model follows its load."""
    return network_policy("keda-queries-prometheus", monitoring_namespace, [namespace_peer(KEDA_NAMESPACE, KEDA_OPERATOR_LABELS)], None, [port])


# --- the component -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ServingArgs(ChartArgs):
    gpu_pools: tuple[Pool, ...]
    """One vLLM and one Hugging Face runtime per pool whose GPUs the device plugin counts."""
    min_replicas: int
    max_replicas: int
    keda_values: Mapping[str, Any]
    runtime_values: Mapping[str, Any]
    crd_values: Mapping[str, Any]
    teams: tuple[str, ...]
    """Whose model clients the gateway lets through, each to its own prefix."""
    audience: str
    issuer: TokenIssuer | None
    """GKE's issuer; None on kind, whose issuer's keys are served only inside the cluster over its
    own CA (Kubeflow's m2m-dex-and-kind overlay proxies them with an image that cannot be pinned):
    the model clients' tokens are not taken there (docs/serving.md)."""
    llm_values: Mapping[str, Any] = field(default_factory=dict)
    llm_crd_values: Mapping[str, Any] = field(default_factory=dict)
    gateway: InferenceGatewayArgs | None = None
    """With `serving.llm`: the inference gateway's settings, for the Gateway the LLM routes attach to;
    None without LLMs."""

    @property
    def llm(self) -> bool:
        return self.gateway is not None
    registry_loader: bool = False
    """modelRegistry on: the Hub's storage initializer, so InferenceServices load registered models by name."""
    gke: bool = False


class Serving(PlatformComponent):
    """KServe's controller, CRDs and runtimes in standard mode, the platform's GPU runtimes, the
    roles team members deploy with, the replica bounds, KEDA, and the gateway's model-client tokens."""

    ready: pulumi.Resource
    """Done when the controller and its webhooks are (the runtimes need them)."""

    def __init__(self, name: str, args: ServingArgs, cluster: Cluster, needs: list[pulumi.Resource], opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, args.sources)
        # KEDA before the controller: KServe v0.20.0 looks for KEDA's ScaledObject CRD once, when
        # it starts (pkg/controller/v1beta1/inferenceservice/controller.go SetupWithManager,
        # IsCrdAvailable), and owns (watches) the ScaledObjects it makes only if it was there.
        keda_namespace = self.create_namespace(KEDA_NAMESPACE)
        keda = self.chart("keda", KEDA_CHART, KEDA_NAMESPACE, keda_values(), [keda_namespace, *needs], overlay=args.keda_values)
        namespace = self.create_namespace(NAMESPACE)
        crds = self.chart("kserve-crd", KSERVE_CRD_CHART, NAMESPACE, {}, [namespace], overlay=args.crd_values)
        routing = (with_path_routing_only,) if args.llm else ()
        self.ready = self.chart(
            "kserve-resources",
            KSERVE_CHART,
            NAMESPACE,
            kserve_values(args.llm),
            [namespace, crds, keda, *needs],
            transforms=(with_rollout_strategy, *routing),
            overlay=args.values,
        )
        controllers: list[pulumi.Resource] = [self.ready]
        if args.gateway is not None:
            self.ready = install_llm_controller(
                self, NAMESPACE, namespace, args.gateway, args.llm_values, args.llm_crd_values, [self.ready, keda, *needs], needs,
                (args.min_replicas, args.max_replicas),
            )
            controllers.append(self.ready)
        # Its LLM presets are validated by the LLM controller's webhook (failurePolicy Fail).
        self.chart(
            "kserve-runtime-configs",
            KSERVE_RUNTIMES_CHART,
            NAMESPACE,
            runtime_values(args.llm),
            controllers,
            transforms=(with_multinode_runtime_disabled,),
            overlay=args.runtime_values,
        )
        for runtime in gpu_runtimes(args.gpu_pools):
            apply_manifest(f"runtime-{runtime['metadata']['name']}", runtime, self.child([self.ready]))
        for role in kubeflow_roles():
            apply_manifest(role["metadata"]["name"], role, self.child())
        apply_manifest(REPLICA_BOUNDS, replica_bounds_policy(args.min_replicas, args.max_replicas), self.child())
        apply_manifest(f"{REPLICA_BOUNDS}-binding", replica_bounds_binding(), self.child())
        if args.registry_loader:
            self.kustomize(STORAGE_INITIALIZER, STORAGE_INITIALIZER_TREE, [self.ready], transforms=(partial(with_team_registry, gke=args.gke),))
        if args.issuer is not None:
            for obj in gateway_token_objects(
                GATEWAY_NAMESPACE, dict(GATEWAY_SELECTOR), args.issuer.issuer, args.issuer.jwks_uri, args.audience, args.teams, args.llm
            ):
                apply_manifest(f"{obj['kind'].lower()}-{obj['metadata']['name']}", obj, self.child(needs))
        self.register_outputs({"ready": self.ready.urn})


def serving_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> ServingArgs:
    settings = config.components[SERVING]
    issuer = token_issuer_args(config)
    return ServingArgs(
        sources=config.sources,
        values=settings.values,
        gpu_pools=tuple(config.gpu_pools),
        min_replicas=settings.replicas.min_replicas,
        max_replicas=settings.replicas.max_replicas,
        keda_values=settings.keda_values,
        runtime_values=settings.runtime_values,
        crd_values=settings.crd_values,
        teams=tuple(team.name for team in config.teams),
        audience=settings.token_audience,
        issuer=issuer,
        llm_values=settings.llm_values,
        llm_crd_values=settings.llm_crd_values,
        gateway=inference_gateway_args(config) if settings.llm else None,
        registry_loader=config.enabled(MODEL_REGISTRY),
        gke=isinstance(config.cluster, GkeClusterConfig),
    )


def _install(args: ServingArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return Serving("serving", args, cluster, ready.resources(SERVING.needs, "serving"))


KSERVE_RELIED = (
    Relied(("kserve", "service", "serviceClusterIPNone"), exactly(False), "serviceClusterIPNone false, the chart's default",
           "values.yaml kserve.service.serviceClusterIPNone, files/common/configmap-patch.yaml (inferenceservice-config `service`; "
           "reconcilers/service/service_reconciler.go createDefaultSvc: ClusterIP None when true)",
           "the team router reaches a model at zero replicas through its predictor Service's ClusterIP: a headless Service has no "
           "address without a ready pod, the router's name lookup fails, its sidecar counts no request and the model never wakes "
           "(docs/serving.md, \"Scale to zero, and back\")"),
)


INSTALLATION = Installation(
    SERVING,
    serving_args,
    _install,
    charts=(
        ChartValues("values", KSERVE_CHART, lambda args: kserve_values(args.llm), lambda args: args.values, built_by(kserve_values), relied=KSERVE_RELIED),
        ChartValues("runtimeValues", KSERVE_RUNTIMES_CHART, lambda args: runtime_values(args.llm), lambda args: args.runtime_values, built_by(runtime_values)),
        ChartValues("crdValues", KSERVE_CRD_CHART, lambda args: {}, lambda args: args.crd_values, "components/serving.py (none: the chart's defaults)"),
        ChartValues("kedaValues", KEDA_CHART, lambda args: keda_values(), lambda args: args.keda_values, built_by(keda_values)),
        *LLM_CHARTS,
    ),
)
