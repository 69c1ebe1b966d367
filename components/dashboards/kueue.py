"""Kueue dashboard: pending and admitted workloads, admission wait, GPU quota vs usage, and how
teams share: preemptions by reason, fair shares, and where a data scientist sees their own queue.

Metrics from kubernetes-sigs/kueue pkg/metrics/metrics.go (prefix kueue_). The quota and
usage series (kueue_cluster_queue_nominal_quota, kueue_cluster_queue_resource_usage) need
Kueue's `metrics.enableClusterQueueResources: true`, and kueue_cluster_queue_weighted_share fair
sharing too (v0.19.2 pkg/controller/core/clusterqueue_controller.go:545-551). Preemptions:
kueue_preempted_workloads_total by `preempting_cluster_queue` and `reason` (InClusterQueue,
InCohortReclamation, InCohortFairSharing, InCohortReclaimWhileBorrowing, metrics.go:704-713),
kueue_evicted_workloads_total by the evicted `cluster_queue`, reason `Preempted`
(apis/kueue/v1beta2/workload_types.go WorkloadEvictedByPreemption). Numbers per queue only: a
team's workloads, by name, only its members see (docs/teams.md, "Your queue").
"""

from __future__ import annotations

from grafana_foundation_sdk.builders.dashboard import Dashboard, DashboardLink, Row
from grafana_foundation_sdk.builders.text import Panel as Text
from grafana_foundation_sdk.models.dashboard import DashboardLinkType
from grafana_foundation_sdk.models.text import TextMode

from components.dashboards.common import label_variable, new_dashboard, query, timeseries

UID = "mlplatform-kueue"
CQ = 'cluster_queue=~"$cluster_queue"'
NOTEBOOKS_PATH = "/jupyter/"
"""The notebooks UI through the gateway Grafana is served behind (components/kubeflow.py BASE_MENU)."""
YOUR_QUEUE = (
    "**Why does my job wait, and where is it in the queue?** Open a terminal in one of your "
    f"[notebooks]({NOTEBOOKS_PATH}) and run `queue-status NAME` (a TrainJob, notebook, RayCluster or "
    "serving replica; without a name, everything of your namespace): its priority class, its place in your "
    "team's queue, Kueue's reason (quota, flavor), or who preempted it. It shows your namespace only "
    "(docs/teams.md, \"Your queue\"). The panels below are every team's queues as numbers."
)


def your_queue() -> Text:
    """Where a data scientist sees their own queue: this dashboard shows numbers per queue only."""
    link = DashboardLink("Notebooks: run queue-status NAME in a terminal").type(DashboardLinkType.LINK).url(NOTEBOOKS_PATH)
    return Text().title("Your queue").mode(TextMode.MARKDOWN).content(YOUR_QUEUE).links([link]).span(24).height(4)


def dashboard() -> Dashboard:
    return (
        new_dashboard("Kueue", UID, "Kueue queues: pending and admitted workloads, admission wait, GPU quota and usage.")
        .with_variable(label_variable("cluster_queue", "ClusterQueue", "label_values(kueue_pending_workloads, cluster_queue)"))
        .with_panel(your_queue())
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
        .with_row(Row("Sharing and preemption"))
        .with_panel(
            timeseries(
                "Preemptions per hour, by the queue that preempted",
                "none",
                query(
                    'sum by (preempting_cluster_queue, reason) (increase(kueue_preempted_workloads_total{preempting_cluster_queue=~"$cluster_queue"}[1h]))',
                    "{{preempting_cluster_queue}} {{reason}}",
                ),
                description="InCohortReclamation: taking back quota it had lent; InCohortFairSharing: its share of the cohort's idle "
                "quota; InClusterQueue: its own higher-priority work.",
            )
        )
        .with_panel(
            timeseries(
                "Workloads preempted per hour",
                "none",
                query(f'sum by (cluster_queue) (increase(kueue_evicted_workloads_total{{{CQ},reason="Preempted"}}[1h]))', "{{cluster_queue}}"),
                description="Preempted workloads are queued again, not failed; preemption-safe jobs resume from their checkpoints.",
            )
        )
        .with_panel(
            timeseries(
                "Fair share (0: within its own quota)",
                "none",
                query(f"max by (cluster_queue) (kueue_cluster_queue_weighted_share{{{CQ}}})", "{{cluster_queue}}"),
                description="What a queue uses above its own quota, per mille of what its cohort can lend, divided by its weight: "
                "Kueue admits from the lowest and preempts from the highest.",
                width=24,
            )
        )
    )
