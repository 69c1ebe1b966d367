"""The stack file's serving (components/serving.py): KServe in standard mode, KEDA, and each team's
share of it (components/profiles/serving.py; docs/serving.md)."""

from __future__ import annotations

import re

from pydantic import Field, StrictInt, field_validator, model_validator

from facts import versions
from stackmodel.components.cert_manager import CERT_MANAGER
from stackmodel.components.istio import ISTIO
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.spec import ComponentSpec, Need, Toggle, What
from stackmodel.schema.chart_values import ChartValues, chart_values_field
from stackmodel.schema.common import Model, problem, rule

REPLICAS_MAX = 100
AUDIENCE = re.compile(r"^(?=.{1,253}$)[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
"""What `kubectl create token --audience` is given and the gateway's RequestAuthentication names."""


class ServingReplicas(Model):
    """The bounds of every InferenceService's replicas in the team namespaces, enforced by an
    admission policy as KServe reads them (an unset minimum is 1, an unset maximum the minimum)."""

    min_replicas: StrictInt = Field(
        default=1,
        ge=0,
        le=REPLICAS_MAX,
        description="The lowest minReplicas a predictor may ask for; 0 lets an idle model give its GPUs back "
        "(KEDA scales it to zero; the first request after idling waits for a replica), refused on a prod stack.",
    )
    max_replicas: StrictInt = Field(
        default=4,
        ge=1,
        le=REPLICAS_MAX,
        description="The highest maxReplicas a predictor may ask for: what one model may take of its team's quota.",
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

    replicas: ServingReplicas = Field(default=ServingReplicas(), description="The bounds of every predictor's replicas.")
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
    runtime_values: ChartValues = chart_values_field("the kserve-runtime-configs chart (its runtimes)")
    crd_values: ChartValues = chart_values_field("the kserve-crd chart")
    keda_values: ChartValues = chart_values_field("the KEDA chart")


SERVING = ComponentSpec(
    "serving",
    ServingConfig,
    "Model serving (KServe, KEDA) behind the Kubeflow gateway; needs kubeflow, istio and certManager.",
    needs=(
        Need(CERT_MANAGER, What.CRDS),  # the webhooks' Certificates and Issuers
        Need(ISTIO, What.CRDS),  # the gateway's token policies
        Need(KUBEFLOW, What.CRDS),  # the teams' routes and PodDefaults are Kubeflow's, in its profiles
    ),
    pins=(versions.KSERVE_CRD_CHART, versions.KSERVE_CHART, versions.KSERVE_RUNTIMES_CHART, versions.KEDA_CHART),
)
