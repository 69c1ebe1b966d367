"""GPU and queue alerts, as the spec of a PrometheusRule (monitoring.coreos.com/v1) we author.

Thresholds come from MonitoringConfig. Metric names: NVIDIA/dcgm-exporter default counters
(DCGM_FI_DEV_GPU_UTIL %, on MIG slices DCGM_FI_PROF_GR_ENGINE_ACTIVE: dashboards/common.py gpu_activity;
DCGM_FI_DEV_GPU_TEMP C, DCGM_FI_DEV_XID_ERRORS "value of the last
XID error encountered"); kubernetes-sigs/kueue pkg/metrics (kueue_pending_workloads).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components.dashboards.common import NODE, WORKLOAD_NAMESPACE, WORKLOAD_POD, gpu_activity
from components.gpu_hours import recording_group
from stackmodel.components.monitoring import MonitoringConfig

GROUP = "mlplatform-gpu"
ALERT_WINDOW_SECONDS = 60
"""The idle alert reads each GPU's busiest sample of the last minute (gpu_activity)."""


@dataclass(frozen=True)
class Alert:
    name: str
    expr: str
    for_: str
    severity: str
    summary: str
    description: str

    def rule(self) -> dict[str, Any]:
        return {
            "alert": self.name,
            "expr": self.expr,
            "for": self.for_,
            "labels": {"severity": self.severity},
            "annotations": {"summary": self.summary, "description": self.description},
        }


def alerts(config: MonitoringConfig) -> list[Alert]:
    """Every alert, with the stack's thresholds filled in."""
    held = f'{WORKLOAD_NAMESPACE}!=""'
    return [
        Alert(
            name="GpuAllocatedButIdle",
            expr=f"avg by ({WORKLOAD_NAMESPACE}) ({gpu_activity(held, ALERT_WINDOW_SECONDS)}) < {config.idle_gpu_threshold}",
            for_=f"{config.idle_gpu_minutes}m",
            severity="warning",
            summary=f"GPUs of {{{{ $labels.{WORKLOAD_NAMESPACE} }}}} are allocated but idle",
            description=(
                f"The GPUs held by pods in namespace {{{{ $labels.{WORKLOAD_NAMESPACE} }}}} averaged "
                f"{{{{ $value | humanize }}}}% utilisation, below {config.idle_gpu_threshold}%, "
                f"for {config.idle_gpu_minutes} minutes. Release them for other teams."
            ),
        ),
        Alert(
            name="GpuXidError",
            expr=f"max by ({NODE}, gpu, UUID, {WORKLOAD_NAMESPACE}, {WORKLOAD_POD}) (DCGM_FI_DEV_XID_ERRORS) > 0",
            for_="0m",
            severity="critical",
            summary="GPU {{ $labels.gpu }} on {{ $labels.node }} reported XID error {{ $value }}",
            description=(
                "DCGM reported XID {{ $value }} on GPU {{ $labels.gpu }} ({{ $labels.UUID }}) of node "
                "{{ $labels.node }}, used by {{ $labels.exported_namespace }}/{{ $labels.exported_pod }}. "
                "See NVIDIA's XID catalogue; many XIDs need a node drain or GPU reset."
            ),
        ),
        Alert(
            name="GpuTemperatureHigh",
            expr=f"max by ({NODE}, gpu, UUID) (DCGM_FI_DEV_GPU_TEMP) > {config.gpu_temperature_celsius}",
            for_="5m",
            severity="warning",
            summary="GPU {{ $labels.gpu }} on {{ $labels.node }} is at {{ $value }}°C",
            description=(
                f"GPU {{{{ $labels.gpu }}}} ({{{{ $labels.UUID }}}}) of node {{{{ $labels.node }}}} stayed above "
                f"{config.gpu_temperature_celsius}°C for 5 minutes."
            ),
        ),
        Alert(
            name="KueueWorkloadsPendingTooLong",
            expr="sum by (cluster_queue) (kueue_pending_workloads) > 0",
            for_=f"{config.pending_workload_minutes}m",
            severity="warning",
            summary="Workloads have waited in ClusterQueue {{ $labels.cluster_queue }} for a long time",
            description=(
                "ClusterQueue {{ $labels.cluster_queue }} has had {{ $value }} pending workloads without a break for "
                f"{config.pending_workload_minutes} minutes: its quota is used up or its workloads are inadmissible."
            ),
        ),
    ]


def rule_spec(config: MonitoringConfig) -> dict[str, Any]:
    """The `spec` of our PrometheusRule: the alerts, and the GPU-hours recording rules
    (components/gpu_hours.py)."""
    return {"groups": [{"name": GROUP, "rules": [a.rule() for a in alerts(config)]}, recording_group(config)]}
