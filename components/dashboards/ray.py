"""Ray dashboard: clusters, nodes, tasks and actors, CPU/GPU/memory of Ray nodes.

Metrics are the ones Ray's metrics agent exports on each Ray pod's `metrics` port
(docs.ray.io, "System Metrics"); the ray_io_cluster label is added by our PodMonitor
(components/monitoring.py), as in KubeRay's config/prometheus/podMonitor.yaml.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders.dashboard import Dashboard, Row

from components.dashboards.common import label_variable, new_dashboard, query, timeseries

UID = "mlplatform-ray"
SEL = 'namespace=~"$namespace",ray_io_cluster=~"$cluster"'


def dashboard() -> Dashboard:
    return (
        new_dashboard("Ray clusters", UID, "Ray clusters run by KubeRay: nodes, tasks, actors and resources.")
        .with_variable(label_variable("namespace", "Namespace", "label_values(ray_node_cpu_utilization, namespace)"))
        .with_variable(
            label_variable(
                "cluster", "Ray cluster", 'label_values(ray_node_cpu_utilization{namespace=~"$namespace"}, ray_io_cluster)'
            )
        )
        .with_row(Row("Work"))
        .with_panel(
            timeseries("Tasks by state", "none", query(f"sum by (State) (ray_tasks{{{SEL}}})", "{{State}}"))
        )
        .with_panel(
            timeseries("Actors by state", "none", query(f"sum by (State) (ray_actors{{{SEL}}})", "{{State}}"))
        )
        .with_row(Row("Resources"))
        .with_panel(
            timeseries(
                "Node CPU utilisation",
                "percent",
                query(f"avg by (ray_io_cluster, instance) (ray_node_cpu_utilization{{{SEL}}})", "{{ray_io_cluster}} {{instance}}"),
                width=8,
            )
        )
        .with_panel(
            timeseries(
                "Node GPU utilisation",
                "percent",
                query(f"avg by (ray_io_cluster, instance) (ray_node_gpus_utilization{{{SEL}}})", "{{ray_io_cluster}} {{instance}}"),
                width=8,
            )
        )
        .with_panel(
            timeseries(
                "Node memory used",
                "bytes",
                query(f"sum by (ray_io_cluster, instance) (ray_node_mem_used{{{SEL}}})", "{{ray_io_cluster}} {{instance}}"),
                width=8,
            )
        )
        .with_panel(
            timeseries(
                "GPU memory used",
                "decmbytes",
                query(f"sum by (ray_io_cluster) (ray_node_gram_used{{{SEL}}})", "{{ray_io_cluster}}"),
            )
        )
        .with_panel(
            timeseries(
                "Object store memory",
                "bytes",
                query(f"sum by (ray_io_cluster) (ray_object_store_memory{{{SEL}}})", "{{ray_io_cluster}}"),
            )
        )
    )
