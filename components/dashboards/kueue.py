"""Kueue dashboard: pending and admitted workloads, admission wait, GPU quota vs usage.

Metrics from kubernetes-sigs/kueue pkg/metrics/metrics.go (prefix kueue_). The quota and
usage series (kueue_cluster_queue_nominal_quota, kueue_cluster_queue_resource_usage) need
Kueue's `metrics.enableClusterQueueResources: true`.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders.dashboard import Dashboard, Row

from components.dashboards.common import label_variable, new_dashboard, query, timeseries

UID = "mlplatform-kueue"
CQ = 'cluster_queue=~"$cluster_queue"'


def dashboard() -> Dashboard:
    return (
        new_dashboard("Kueue", UID, "Kueue queues: pending and admitted workloads, admission wait, GPU quota and usage.")
        .with_variable(label_variable("cluster_queue", "ClusterQueue", "label_values(kueue_pending_workloads, cluster_queue)"))
        .with_row(Row("Workloads"))
        .with_panel(
            timeseries(
                "Pending workloads",
                "none",
                query(f"sum by (cluster_queue, status) (kueue_pending_workloads{{{CQ}}})", "{{cluster_queue}} {{status}}"),
                description="active: waiting for quota; inadmissible: cannot be admitted as they are.",
            )
        )
        .with_panel(
            timeseries(
                "Admitted active workloads",
                "none",
                query(f"sum by (cluster_queue) (kueue_admitted_active_workloads{{{CQ}}})", "{{cluster_queue}}"),
            )
        )
        .with_panel(
            timeseries(
                "Admissions per minute",
                "none",
                query(
                    f"sum by (cluster_queue) (rate(kueue_admitted_workloads_total{{{CQ}}}[$__rate_interval])) * 60",
                    "{{cluster_queue}}",
                ),
            )
        )
        .with_panel(
            timeseries(
                "Admission wait",
                "s",
                query(
                    f"histogram_quantile(0.5, sum by (le, cluster_queue) (rate(kueue_admission_wait_time_seconds_bucket{{{CQ}}}[$__rate_interval])))",
                    "{{cluster_queue}} p50",
                ),
                query(
                    f"histogram_quantile(0.9, sum by (le, cluster_queue) (rate(kueue_admission_wait_time_seconds_bucket{{{CQ}}}[$__rate_interval])))",
                    "{{cluster_queue}} p90",
                ),
            )
        )
        .with_row(Row("GPU quota"))
        .with_panel(
            timeseries(
                "GPU quota vs usage",
                "none",
                query(
                    f'sum by (cluster_queue) (kueue_cluster_queue_nominal_quota{{{CQ},resource="nvidia.com/gpu"}})',
                    "{{cluster_queue}} nominal quota",
                ),
                query(
                    f'sum by (cluster_queue) (kueue_cluster_queue_resource_usage{{{CQ},resource="nvidia.com/gpu"}})',
                    "{{cluster_queue}} in use",
                ),
                width=24,
            )
        )
    )
