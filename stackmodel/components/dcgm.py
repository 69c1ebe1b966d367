"""The stack file's NVIDIA DCGM exporter (components/dcgm.py): GPU metrics per pod."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import Field, StrictBool

from facts import versions
from facts.gpu_catalog import ACCELERATORS
from stackmodel.components.spec import ComponentSpec, unused_when
from stackmodel.schema.chart_values import ChartValues, chart_values_field
from stackmodel.schema.cluster import GkeClusterConfig
from stackmodel.schema.common import Model


class DcgmSource(str, Enum):
    CHART = "chart"
    GKE_MANAGED = "gke-managed"


class DcgmExporterConfig(Model):
    """NVIDIA DCGM exporter: GPU metrics per pod. Default: on for GKE stacks with GPUs, off otherwise."""

    enabled: StrictBool | None = Field(
        default=None, description="Default: on for gke stacks with GPU pools or GPU autoprovisioning limits, off otherwise."
    )
    source: DcgmSource = Field(default=DcgmSource.CHART, description="NVIDIA's chart, or GKE's managed DCGM metrics.")
    values: ChartValues = chart_values_field("NVIDIA's dcgm-exporter chart (source chart)")


def gpu_stack(config: Any) -> bool:
    """The DCGM exporter's default: on for a GKE stack with GPU pools or GPU autoprovisioning limits."""
    cluster = config.cluster
    return isinstance(cluster, GkeClusterConfig) and (
        bool(cluster.gpu_pools) or any(k in ACCELERATORS for k in cluster.autoprovisioning.limits)
    )


DCGM_EXPORTER = ComponentSpec(
    "dcgmExporter",
    DcgmExporterConfig,
    "GPU metrics per pod.",
    on_by_default=gpu_stack,
    pins=(versions.DCGM_EXPORTER,),
    unused_overlays=unused_when("source", DcgmSource.GKE_MANAGED, values="source gke-managed is GKE's DCGM metrics, not NVIDIA's chart"),
)
