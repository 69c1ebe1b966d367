"""What the idle reclaim did, as metrics (components/idle_reclaim.py): kube-state-metrics' custom
resource state for Notebooks, in kube-prometheus-stack's values (components/monitoring.py), read by
the "GPUs by team" dashboard's "Idle reclaim" row.
"""

from __future__ import annotations

from typing import Any

from components import idle_reclaim_job
from facts.labels import NOTEBOOK_STOPPED_ANNOTATION

# kube-state-metrics' custom resource state (kube-state-metrics v2.20.0, the chart 88.5.3's: docs/metrics/extend/
# customresourcestate-metrics.md; a Gauge read from a path, an RFC 3339 string as its Unix time,
# pkg/customresourcestate/registry_factory.go toFloat64), one series per Notebook that carries the
# annotation. The chart mounts the config and adds the CRD rights (charts/kube-state-metrics
# customResourceState, rbac.customResourceState.createClusterRoleRules); list and watch of
# Notebooks are ours (rbac.extraRules). kube-state-metrics restarts itself when the file changes
# (internal/wrapper.go, crcViper.WatchConfig).
NOTEBOOK_METRIC_PREFIX = "mlplatform_notebook"
NOTEBOOK_METRICS = {
    "idle_reclaimed_timestamp_seconds": (idle_reclaim_job.ANNOTATION_RECLAIMED, "When the idle reclaim last stopped the notebook."),
    "idle_reclaim_warned_timestamp_seconds": (idle_reclaim_job.ANNOTATION_WARNED, "When the idle reclaim warned that it will stop the notebook."),
    "stopped_timestamp_seconds": (NOTEBOOK_STOPPED_ANNOTATION, "When the notebook was stopped (by its user, Kubeflow's culler or the idle reclaim)."),
}
"""Metric name (after the prefix) -> (Notebook annotation, help)."""


def metric_name(name: str) -> str:
    """The series name of one of NOTEBOOK_METRICS: kube-state-metrics joins prefix and name with `_`."""
    if name not in NOTEBOOK_METRICS:
        raise KeyError(f"{name}: not one of the Notebook metrics ({', '.join(NOTEBOOK_METRICS)})")
    return f"{NOTEBOOK_METRIC_PREFIX}_{name}"


def notebook_metrics_values() -> dict[str, Any]:
    """kube-state-metrics' values for the Notebook metrics."""
    config = {
        "kind": "CustomResourceStateMetrics",
        "spec": {
            "resources": [
                {
                    "groupVersionKind": {"group": "kubeflow.org", "kind": "Notebook", "version": "v1"},
                    "metricNamePrefix": NOTEBOOK_METRIC_PREFIX,
                    "labelsFromPath": {"namespace": ["metadata", "namespace"], "notebook": ["metadata", "name"]},
                    "metrics": [
                        {"name": name, "help": help_, "each": {"type": "Gauge", "gauge": {"path": ["metadata", "annotations", annotation]}}}
                        for name, (annotation, help_) in NOTEBOOK_METRICS.items()
                    ],
                }
            ]
        },
    }
    return {
        "customResourceState": {"enabled": True, "config": config},
        "rbac": {"extraRules": [{"apiGroups": ["kubeflow.org"], "resources": ["notebooks"], "verbs": ["list", "watch"]}]},
    }
