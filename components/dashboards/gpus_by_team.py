"""Our own "GPUs by team" dashboard: utilisation, memory and power per namespace (team) and
per GPU pool, GPUs allocated vs used, and how long workloads wait in Kueue.

Metrics: DCGM exporter fields (NVIDIA/dcgm-exporter default-counters.csv: DCGM_FI_DEV_GPU_UTIL %,
DCGM_FI_DEV_FB_USED MiB, DCGM_FI_DEV_POWER_USAGE W); kube-state-metrics
kube_pod_container_resource_requests (extended resources as resource="nvidia_com_gpu") and
kube_node_labels; Kueue's kueue_admission_wait_time_seconds histogram and
kueue_pending_workloads (kubernetes-sigs/kueue pkg/metrics/metrics.go); our GPU-hours recording
rules (components/gpu_hours.py).
"""

from __future__ import annotations

from grafana_foundation_sdk.builders.dashboard import Dashboard, Row

from components import gpu_hours
from components.dashboards.common import (
    NODE,
    POOL,
    WORKLOAD_NAMESPACE,
    label_variable,
    new_dashboard,
    query,
    stat,
    timeseries,
)
from components.notebook_metrics import metric_name

UID = "mlplatform-gpus-by-team"
# kube-state-metrics' Notebook metrics (components/notebook_metrics.py).
RECLAIMED = metric_name("idle_reclaimed_timestamp_seconds")
WARNED = metric_name("idle_reclaim_warned_timestamp_seconds")
NS = f'{WORKLOAD_NAMESPACE}=~"$namespace"'
# GPU metrics that belong to a pod of the selected teams.
TEAM_GPUS = f'{WORKLOAD_NAMESPACE}!="",{NS}'


def by_pool(metric: str, aggregation: str = "avg") -> str:
    """`metric` per GPU pool: joined to the node's pool label from kube-state-metrics."""
    return f"{aggregation} by ({POOL}) ({metric} * on ({NODE}) group_left ({POOL}) max by ({NODE}, {POOL}) (kube_node_labels{{{POOL}!=\"\"}}))"


def dashboard() -> Dashboard:
    allocated = (
        'sum by (namespace) (kube_pod_container_resource_requests{resource="nvidia_com_gpu",namespace=~"$namespace"}'
        ' * on (namespace, pod) group_left () max by (namespace, pod) (kube_pod_status_phase{phase="Running"} == 1))'
    )
    teams = 'namespace=~"$namespace"'
    held_hours, busy_hours = gpu_hours.gpu_hours(gpu_hours.ALLOCATED, teams), gpu_hours.gpu_hours(gpu_hours.BUSY, teams)
    return (
        new_dashboard(
            "GPUs by team",
            UID,
            "GPU utilisation, memory and power per team namespace and per GPU pool; allocated vs used; Kueue queue wait.",
        )
        .with_variable(
            label_variable("namespace", "Team namespace", f"label_values(DCGM_FI_DEV_GPU_UTIL, {WORKLOAD_NAMESPACE})")
        )
        .with_row(Row("Overview"))
        .with_panel(
            stat(
                "GPUs allocated",
                "none",
                query(f"sum({allocated})", "allocated"),
                description="GPUs requested by running pods of the selected namespaces.",
            )
        )
        .with_panel(
            stat(
                "GPUs busy",
                "none",
                query(f"count(DCGM_FI_DEV_GPU_UTIL{{{TEAM_GPUS}}} > 0)", "busy"),
                description="GPUs held by a pod with non-zero utilisation.",
            )
        )
        .with_panel(
            stat(
                "Mean utilisation",
                "percent",
                query(f"avg(DCGM_FI_DEV_GPU_UTIL{{{TEAM_GPUS}}})", "utilisation"),
            )
        )
        .with_panel(
            stat(
                "Power draw",
                "watt",
                query(f"sum(DCGM_FI_DEV_POWER_USAGE{{{TEAM_GPUS}}})", "power"),
            )
        )
        .with_row(Row("Per team"))
        .with_panel(
            timeseries(
                "GPU utilisation by team",
                "percent",
                query(f"avg by ({WORKLOAD_NAMESPACE}) (DCGM_FI_DEV_GPU_UTIL{{{TEAM_GPUS}}})", f"{{{{{WORKLOAD_NAMESPACE}}}}}"),
            )
        )
        .with_panel(
            timeseries(
                "GPU memory used by team",
                "decmbytes",
                query(f"sum by ({WORKLOAD_NAMESPACE}) (DCGM_FI_DEV_FB_USED{{{TEAM_GPUS}}})", f"{{{{{WORKLOAD_NAMESPACE}}}}}"),
            )
        )
        .with_panel(
            timeseries(
                "GPU power by team",
                "watt",
                query(f"sum by ({WORKLOAD_NAMESPACE}) (DCGM_FI_DEV_POWER_USAGE{{{TEAM_GPUS}}})", f"{{{{{WORKLOAD_NAMESPACE}}}}}"),
            )
        )
        .with_panel(
            timeseries(
                "GPUs allocated vs used",
                "none",
                query(allocated, "{{namespace}} allocated"),
                query(
                    f"sum by ({WORKLOAD_NAMESPACE}) (DCGM_FI_DEV_GPU_UTIL{{{TEAM_GPUS}}}) / 100",
                    f"{{{{{WORKLOAD_NAMESPACE}}}}} used (GPU-equivalents)",
                ),
                description="Allocated: GPUs requested by running pods. Used: summed utilisation in whole GPUs.",
            )
        )
        .with_row(Row("Per GPU pool"))
        .with_panel(
            timeseries("GPU utilisation by pool", "percent", query(by_pool("DCGM_FI_DEV_GPU_UTIL"), f"{{{{{POOL}}}}}"), width=8)
        )
        .with_panel(
            timeseries(
                "GPU memory used by pool", "decmbytes", query(by_pool("DCGM_FI_DEV_FB_USED", "sum"), f"{{{{{POOL}}}}}"), width=8
            )
        )
        .with_panel(
            timeseries("GPU power by pool", "watt", query(by_pool("DCGM_FI_DEV_POWER_USAGE", "sum"), f"{{{{{POOL}}}}}"), width=8)
        )
        .with_row(Row("GPU-hours"))
        .with_panel(
            timeseries(
                "GPUs allocated and busy by team (recorded)",
                "none",
                query(f'sum by (namespace) ({gpu_hours.ALLOCATED}{{namespace=~"$namespace"}})', "{{namespace}} allocated"),
                query(f'sum by (namespace) ({gpu_hours.BUSY}{{namespace=~"$namespace"}})', "{{namespace}} busy"),
                description="Per team, GPUs its running pods hold, and those of them at or above the idle threshold "
                "(the GPU-hours recording rules, once a minute).",
            )
        )
        .with_panel(
            stat(
                "GPU-hours by team (time range)",
                "none",
                query(held_hours, "{{namespace}}"),
                description="GPU-hours held over the dashboard's time range; `python -m stacks cost <stack> --usage` prices a week of them.",
            )
        )
        .with_panel(
            stat(
                "Idle GPU-hours by team (time range)",
                "none",
                query(f"{held_hours} - ({busy_hours} or {held_hours} * 0)", "{{namespace}}"),
                description="GPU-hours held below the idle threshold over the dashboard's time range.",
            )
        )
        .with_row(Row("Idle reclaim"))
        .with_panel(
            stat(
                "GPU notebooks the idle reclaim stopped",
                "dateTimeAsIso",
                query(f'max by (namespace, notebook) ({RECLAIMED}{{namespace=~"$namespace"}}) * 1000', "{{namespace}}/{{notebook}}"),
                description="When the idle reclaim last stopped each notebook (its GPUs idle for the stack's period; "
                "mlplatform:components.idleReclaim). Its volumes are kept; Start in the notebook list brings it back.",
                width=12,
            )
        )
        .with_panel(
            stat(
                "GPU notebooks warned",
                "dateTimeAsIso",
                query(f'max by (namespace, notebook) ({WARNED}{{namespace=~"$namespace"}}) * 1000', "{{namespace}}/{{notebook}}"),
                description="Notebooks the idle reclaim warned, and when: stopped at the end of the period unless their GPUs work.",
                width=12,
            )
        )
        .with_row(Row("Queue"))
        .with_panel(
            timeseries(
                "Queue wait before admission (p90)",
                "s",
                query(
                    "histogram_quantile(0.9, sum by (le, cluster_queue) "
                    "(rate(kueue_admission_wait_time_seconds_bucket[$__rate_interval])))",
                    "{{cluster_queue}}",
                ),
                description="Time from a workload's creation to its admission by Kueue, per ClusterQueue.",
            )
        )
        .with_panel(
            timeseries(
                "Workloads pending in Kueue",
                "none",
                query("sum by (cluster_queue) (kueue_pending_workloads)", "{{cluster_queue}}"),
            )
        )
    )
