"""GPU-hours per team: recording rules that keep, per team namespace, GPU pool and accelerator,
how many GPUs its pods hold and how many of those do work, once a minute. The "GPUs by team"
dashboard and `python -m stacks cost <stack> --usage` (tooling/usage.py) sum them.

- Allocated: GPUs requested by the team's running pods (kube-state-metrics
  kube_pod_container_resource_requests, extended resources as resource="nvidia_com_gpu", with the
  pod's `node`; kube_pod_status_phase), on the node's pool and accelerator (kube_node_labels, whose
  allow-listed labels components/monitoring.py sets). A GPU counts while its pod holds it, used
  or not: what the team kept from others.
- Busy: those of the team's GPUs (and MIG slices) whose activity (components/dashboards/common.py
  gpu_activity: DCGM_FI_DEV_GPU_UTIL, on a MIG slice DCGM_FI_PROF_GR_ENGINE_ACTIVE; the idle-GPU
  alert's and the idle reclaim's signal) reached the stack's idle threshold
  (monitoring.idleGpuThreshold) in the rule's interval. Idle GPU-hours are allocated minus busy.

Each rule is evaluated every INTERVAL_SECONDS (the group's `interval`), so one recorded sample
stands for that many GPU-seconds: `sum_over_time(rule[range]) * INTERVAL_SECONDS / 3600` is the
range's GPU-hours, a pod that did not run adding no sample at all.
"""

from __future__ import annotations

from typing import Any

from components.dashboards.common import NODE, POOL, WORKLOAD_NAMESPACE, gpu_activity
from stackmodel.components.monitoring import MonitoringConfig

GROUP = "mlplatform-gpu-hours"
INTERVAL_SECONDS = 60
ALLOCATED = "mlplatform:gpus_allocated:team_pool"
BUSY = "mlplatform:gpus_busy:team_pool"
ACCELERATOR = "label_cloud_google_com_gke_accelerator"
"""kube-state-metrics' name for the node label cloud.google.com/gke-accelerator (facts/node_labels.py
ACCELERATOR_LABEL), allow-listed beside the pool label."""
LABELS = ("namespace", "pool", "accelerator")
"""The labels every recorded series has: the team namespace, the pool's name (empty on a node
GKE's autoprovisioning made) and the accelerator."""

_NODE_POOLS = f"max by ({NODE}, {POOL}, {ACCELERATOR}) (kube_node_labels)"


def _named(expr: str) -> str:
    """`expr` with the node labels renamed to LABELS' `pool` and `accelerator`."""
    return f'label_replace(label_replace({expr}, "pool", "$1", "{POOL}", "(.*)"), "accelerator", "$1", "{ACCELERATOR}", "(.*)")'


def allocated_expr() -> str:
    running = 'max by (namespace, pod) (kube_pod_status_phase{phase="Running"}) == 1'
    requests = 'kube_pod_container_resource_requests{resource="nvidia_com_gpu", namespace!=""}'
    held = f"{requests} * on (namespace, pod) group_left () ({running}) * on ({NODE}) group_left ({POOL}, {ACCELERATOR}) {_NODE_POOLS}"
    return f"sum by ({', '.join(LABELS)}) ({_named(held)})"


def busy_expr(threshold: int) -> str:
    activity = gpu_activity(f'{WORKLOAD_NAMESPACE}!=""', INTERVAL_SECONDS)
    working = f'label_replace({activity} >= {threshold}, "namespace", "$1", "{WORKLOAD_NAMESPACE}", "(.*)")'
    held = f"{working} * on ({NODE}) group_left ({POOL}, {ACCELERATOR}) {_NODE_POOLS}"
    return f"count by ({', '.join(LABELS)}) ({_named(held)})"


def recording_group(config: MonitoringConfig) -> dict[str, Any]:
    """The rule group, for our PrometheusRule (and GMP's ClusterRules)."""
    return {
        "name": GROUP,
        "interval": f"{INTERVAL_SECONDS}s",
        "rules": [
            {"record": ALLOCATED, "expr": allocated_expr()},
            {"record": BUSY, "expr": busy_expr(config.idle_gpu_threshold)},
        ],
    }


def gpu_hours(metric: str, selector: str = "", over: str = "$__range") -> str:
    """The GPU-hours a recorded metric adds up to over `over`, per team (a Grafana range by default)."""
    return f"sum by (namespace) (sum_over_time({metric}{{{selector}}}[{over}])) * {INTERVAL_SECONDS} / 3600"
