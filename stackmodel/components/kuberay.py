"""The stack file's KubeRay (components/kuberay.py): the upstream operator, or GKE's add-on."""

from __future__ import annotations

from enum import Enum

from pydantic import Field

from facts import versions
from stackmodel.components.spec import ComponentSpec, Toggle, unused_when
from stackmodel.schema.chart_values import ChartValues, chart_values_field


class RaySource(str, Enum):
    OPERATOR = "operator"
    GKE_ADDON = "gke-addon"


class KubeRayConfig(Toggle):
    """KubeRay: the upstream operator, or GKE's managed Ray operator add-on (never both)."""

    source: RaySource = Field(
        default=RaySource.OPERATOR,
        description="operator: the KubeRay chart; gke-addon: GKE's managed Ray operator (gke only).",
    )
    values: ChartValues = chart_values_field("the kuberay-operator chart (source operator)")


KUBERAY = ComponentSpec(
    "kuberay",
    KubeRayConfig,
    "Ray operator; team Ray clusters need it.",
    on_by_default=True,
    pins=(versions.KUBERAY_CHART,),
    unused_overlays=unused_when("source", RaySource.GKE_ADDON, values="source gke-addon is GKE's managed Ray operator, not the chart"),
)
