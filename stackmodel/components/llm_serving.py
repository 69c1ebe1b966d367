"""The stack file's LLM serving (components/llm_serving.py): KServe's LLMInferenceService
controller and its presets."""

from __future__ import annotations

from facts import versions
from stackmodel.components.cert_manager import CERT_MANAGER
from stackmodel.components.inference_gateway import INFERENCE_GATEWAY
from stackmodel.components.istio import ISTIO
from stackmodel.components.leader_worker_set import LEADER_WORKER_SET
from stackmodel.components.spec import ComponentSpec, Need, Toggle, What
from stackmodel.schema.chart_values import ChartValues, chart_values_field

PUBLISHED_PREFIX = "publishers"
"""KServe's route preset publishes each model at /publishers/<namespace>/models/<model>/... too
(kserve v0.20.0 charts/kserve-runtime-configs files/llmisvcconfigs/resources.yaml,
kserve-config-llm-router-route; pkg/controller/v1alpha2/llmisvc/router_discovery.go: "The
/publishers/ prefix is reserved for controller-managed model-level routes")."""


class LlmServingConfig(Toggle):
    """LLM serving: KServe v0.20.0's LLMInferenceService controller (vLLM, multi-node replicas
    through LeaderWorkerSet, an endpoint picker per service behind the inference gateway), and in
    every team namespace what a team's LLMInferenceService needs (docs/llm-serving.md)."""

    values: ChartValues = chart_values_field("the kserve-llmisvc-resources chart (the controller)")
    crd_values: ChartValues = chart_values_field("the kserve-llmisvc-crd chart (LLMInferenceService's CRDs)")
    presets_values: ChartValues = chart_values_field("the kserve-runtime-configs chart as the LLM presets' release")


LLM_SERVING = ComponentSpec(
    "llmServing",
    LlmServingConfig,
    "KServe's LLMInferenceService controller and its presets, per team a route on its own prefix of the inference gateway; "
    "needs certManager, leaderWorkerSet and inferenceGateway.",
    needs=(
        Need(CERT_MANAGER, What.CRDS),  # its webhook certificate is cert-manager's
        # The controller manages LeaderWorkerSets, HTTPRoutes, Gateways and InferencePools only if their CRDs are served
        # when it starts (kserve v0.20.0 pkg/controller/v1alpha2/llmisvc/controller.go:428-459, IsCrdAvailable).
        Need(LEADER_WORKER_SET, What.CRDS),
        Need(INFERENCE_GATEWAY, What.CRDS),
        Need(ISTIO, What.NAMESPACE),  # the Gateway it makes is in the ingress gateway's namespace
    ),
    pins=(
        versions.KSERVE_LLMISVC_CRD_CHART,
        versions.KSERVE_LLMISVC_CHART,
        versions.KSERVE_RUNTIMES_CHART,
        versions.LLM_D_CUDA_IMAGE,
        versions.LLM_D_EPP_IMAGE,
        versions.LLM_D_TOKENIZER_IMAGE,
        versions.LLM_D_DISAGG_SIDECAR_IMAGE,
        versions.LLM_D_LATENCY_TRAINING_IMAGE,
        versions.LLM_D_LATENCY_PREDICTION_IMAGE,
    ),
)
