"""The stack file's serving (components/serving.py): KServe in standard mode, KEDA, and each team's
share of it (components/profiles/serving.py; docs/serving.md)."""

from __future__ import annotations

import re

from pydantic import Field, StrictBool, StrictInt, field_validator, model_validator

from facts import versions
from stackmodel.components.cert_manager import CERT_MANAGER
from stackmodel.components.inference_gateway import INFERENCE_GATEWAY
from stackmodel.components.istio import ISTIO
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.leader_worker_set import LEADER_WORKER_SET
from stackmodel.components.spec import ComponentSpec, Need, Toggle, What
from stackmodel.schema.chart_values import ChartValues, chart_values_field
from stackmodel.schema.common import Model, problem, rule

REPLICAS_MAX = 100
AUDIENCE = re.compile(r"^(?=.{1,253}$)[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
"""What `kubectl create token --audience` is given and the gateway's RequestAuthentication names."""


class ServingReplicas(Model):
    """The bounds of every model's replicas in the team namespaces, enforced by admission policies
    as KServe reads them: an InferenceService's minReplicas and maxReplicas (an unset minimum is 1,
    an unset maximum the minimum) and, with llm, an LLMInferenceService's replicas and its prefill's
    (unset is 1; components/serving_llm.py)."""

    min_replicas: StrictInt = Field(
        default=1,
        ge=0,
        le=REPLICAS_MAX,
        description="The lowest minReplicas a predictor, and the lowest replicas an LLMInferenceService, may ask for; "
        "0 lets an idle model give its GPUs back (KEDA scales a predictor to zero, and the first request after "
        "idling waits for a replica; an LLM at 0 stays there until its replicas are raised), refused on a prod stack.",
    )
    max_replicas: StrictInt = Field(
        default=4,
        ge=1,
        le=REPLICAS_MAX,
        description="The highest maxReplicas a predictor, and the highest replicas an LLMInferenceService (each "
        "replica of a multi-node LLM a LeaderWorkerSet group), may ask for: what one model may take of its team's quota.",
    )

    @model_validator(mode="after")
    @rule("serving-replicas-floor-under-ceiling")
    def _floor_under_ceiling(self) -> ServingReplicas:
        if self.min_replicas > self.max_replicas:
            raise problem(
                "minReplicas",
                f"{self.min_replicas} is above maxReplicas {self.max_replicas}: no predictor could satisfy both; "
                "lower minReplicas or raise maxReplicas",
            )
        return self


class ServingConfig(Toggle):
    """KServe v0.20.0 in standard (raw Deployment) mode with its runtimes and KEDA; per team, its
    models at /serving/<team>/<name>/ of the Kubeflow gateway, its model client's tokens, its
    serving pods' PodDefault and, on GKE, its model store."""

    replicas: ServingReplicas = Field(
        default=ServingReplicas(), description="The bounds of every model's replicas (InferenceService predictors, LLMInferenceServices)."
    )
    token_audience: str = Field(
        default="mlplatform-serving",
        description="The audience of the tokens a team's programs query its models with (`kubectl create token "
        "model-client --audience <this>`): the gateway takes no other, and the API server takes none of these.",
    )
    values: ChartValues = chart_values_field("the kserve-resources chart (the controller)")

    @field_validator("token_audience")
    @classmethod
    def _audience(cls, value: str) -> str:
        if not AUDIENCE.match(value):
            raise ValueError(
                f"{value!r} is not a token audience here: a DNS-style name of lowercase letters, digits, '-' and '.', "
                "at most 253 characters, such as mlplatform-serving (no scheme or path)"
            )
        return value
    runtime_values: ChartValues = chart_values_field("the kserve-runtime-configs chart (its runtimes; with llm its LLM presets too)")
    crd_values: ChartValues = chart_values_field("the kserve-crd chart")
    keda_values: ChartValues = chart_values_field("the KEDA chart")
    llm: StrictBool = Field(
        default=False,
        description="KServe's LLMInferenceService controller and its presets: vLLM, multi-node replicas through "
        "LeaderWorkerSet, an endpoint picker per service behind the inference gateway; per team its LLMs at "
        "/<team>/<name>/v1/... of the gateway (docs/serving.md, LLMs). Needs leaderWorkerSet and inferenceGateway.",
    )
    llm_values: ChartValues = chart_values_field("the kserve-llmisvc-resources chart (the LLM controller)")
    llm_crd_values: ChartValues = chart_values_field("the kserve-llmisvc-crd chart")


SERVING = ComponentSpec(
    "serving",
    ServingConfig,
    "Model serving (KServe, KEDA; with llm KServe's LLM controller) behind the Kubeflow gateway; needs kubeflow, istio "
    "and certManager, and with llm leaderWorkerSet and inferenceGateway.",
    needs=(
        Need(CERT_MANAGER, What.CRDS),  # the webhooks' Certificates and Issuers
        Need(ISTIO, What.CRDS),  # the gateway's token policies; with llm, the Gateway in the ingress gateway's namespace
        # The teams' routes and PodDefaults are Kubeflow's, in its profiles; they wait for Kubeflow in the teams'
        # own needs (components/profiles/team.py), nothing of serving's own install does, and so the teams'
        # LLM configs, which wait for serving's LLM webhook, are not a stage later (tests/test_graph.py).
        Need(KUBEFLOW, What.CRDS, waits=False),
        # With llm: KServe's LLM controller manages LeaderWorkerSets, HTTPRoutes, Gateways and InferencePools only if
        # their CRDs are served when it starts (kserve v0.20.0 pkg/controller/v1alpha2/llmisvc/controller.go:428-459,
        # IsCrdAvailable); the loader refuses llm without them (serving-llm-needs).
        Need(LEADER_WORKER_SET, What.CRDS, optional=True),
        Need(INFERENCE_GATEWAY, What.CRDS, optional=True),
    ),
    pins=(
        versions.KSERVE_CRD_CHART,
        versions.KSERVE_CHART,
        versions.KSERVE_RUNTIMES_CHART,
        versions.KEDA_CHART,
        versions.KSERVE_LLMISVC_CRD_CHART,
        versions.KSERVE_LLMISVC_CHART,
        versions.LLM_D_CUDA_IMAGE,
        versions.LLM_D_EPP_IMAGE,
        versions.LLM_D_TOKENIZER_IMAGE,
        versions.LLM_D_DISAGG_SIDECAR_IMAGE,
        versions.LLM_D_LATENCY_TRAINING_IMAGE,
        versions.LLM_D_LATENCY_PREDICTION_IMAGE,
    ),
)
