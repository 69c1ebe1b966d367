"""The stack file's monitoring (components/monitoring.py): Prometheus, Grafana, dashboards and alerts."""

from __future__ import annotations

from decimal import Decimal
from enum import Enum
from typing import Any

from pydantic import Field, StrictInt, field_validator

from facts import versions
from facts.limits import GO_DURATION_MAX_SECONDS
from stackmodel.components.istio import ISTIO
from stackmodel.components.spec import ComponentSpec, Need, Toggle, What, unused_when
from stackmodel.schema.chart_values import ChartValues, chart_values_field
from stackmodel.schema.common import RETENTION, RETENTION_SECONDS, Email, VolumeSize, _unique


class MetricsBackend(str, Enum):
    KUBE_PROMETHEUS_STACK = "kube-prometheus-stack"
    GKE_MANAGED = "gke-managed"


class MonitoringConfig(Toggle):
    """Prometheus + Grafana with GPU, Ray, Kueue and per-team dashboards, and GPU alerts.
    Grafana signs people in with the identity the Kubeflow gateway asserts: Viewer, or Admin
    for grafanaAdmins; it has no shared admin login."""

    backend: MetricsBackend = Field(
        default=MetricsBackend.KUBE_PROMETHEUS_STACK,
        description="kube-prometheus-stack in the cluster, or gke-managed: Google Cloud Managed Service "
        "for Prometheus (needs cluster.managedPrometheus).",
    )
    retention: str = Field(
        default="15d", description="kube-prometheus-stack: how long Prometheus keeps data, e.g. 15d (h, d, w or y)."
    )
    storage_size: VolumeSize = Field(
        default="50Gi", description="kube-prometheus-stack: Prometheus volume size, a Kubernetes quantity such as 50Gi."
    )
    idle_gpu_threshold: StrictInt = Field(
        default=10, ge=1, le=100, description="Alert when allocated GPUs stay below this utilisation (%)."
    )
    idle_gpu_minutes: StrictInt = Field(
        default=30, ge=5, le=1440, description="... for this many minutes (the idle-GPU alert's `for`)."
    )
    pending_workload_minutes: StrictInt = Field(
        default=30, ge=1, le=10080, description="Alert when a workload waits in Kueue longer than this."
    )
    gpu_temperature_celsius: StrictInt = Field(default=85, ge=50, le=110, description="Alert above this GPU temperature.")
    grafana_admins: list[Email] = Field(
        default_factory=list,
        description="Who is Admin in Grafana (dashboards, data sources, alerting); everyone else who signs in is a Viewer.",
    )
    values: ChartValues = chart_values_field("the kube-prometheus-stack chart (backend kube-prometheus-stack)")
    grafana_values: ChartValues = chart_values_field("the Grafana chart")

    @field_validator("retention")
    @classmethod
    def _retention(cls, value: str) -> str:
        if not RETENTION.match(value):
            raise ValueError(f"{value!r} is not a Prometheus retention such as 15d: a positive number and h, d, w or y")
        if Decimal(value[:-1]) * RETENTION_SECONDS[value[-1]] > GO_DURATION_MAX_SECONDS:
            raise ValueError(
                f"{value!r} is longer than Prometheus can hold (a Go duration, about 292 years: it refuses "
                "'duration out of range'); use a shorter retention such as 10y"
            )
        return value

    @field_validator("grafana_admins")
    @classmethod
    def _grafana_admins(cls, admins: list[str]) -> list[str]:
        _unique(admins, str.lower)
        return admins


# Nothing waits for Monitoring: its monitors of others are Ties (components/platform.py).
MONITORING = ComponentSpec(
    "monitoring",
    MonitoringConfig,
    "Prometheus, Grafana, dashboards and GPU alerts.",
    # Grafana's pods get their sidecar from Istio's injection webhook (components/monitoring.py).
    needs=(Need(ISTIO, What.WEBHOOKS, optional=True),),
    on_by_default=True,
    pins=(versions.KUBE_PROMETHEUS_STACK, versions.GRAFANA),
    unused_overlays=unused_when("backend", MetricsBackend.GKE_MANAGED, values="backend gke-managed installs no kube-prometheus-stack (grafanaValues still reach Grafana)"),
)


def service_monitor_enabled(config: Any) -> bool:
    """Whether ServiceMonitors work here: they need the Prometheus Operator's CRDs and a
    Prometheus that scrapes them, i.e. monitoring on with kube-prometheus-stack."""
    monitoring = config.components[MONITORING]
    return bool(monitoring.enabled and monitoring.backend is MetricsBackend.KUBE_PROMETHEUS_STACK)
