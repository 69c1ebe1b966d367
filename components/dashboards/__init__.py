"""Dashboards as code: each module builds one Grafana dashboard with grafana-foundation-sdk.

`dashboards()` gives them as Grafana JSON keyed by file name; components/monitoring.py
puts each in a ConfigMap the Grafana sidecar provisions. The NVIDIA DCGM dashboard is ours
too (dcgm.py), shipped only where GPU metrics are collected: nothing is fetched from
grafana.com at run time.
"""

from __future__ import annotations

from components.dashboards import dcgm, gpus_by_team, kueue, ray
from components.dashboards.common import to_json

DCGM = "dcgm.json"


def dashboards(gpu_metrics: bool = True) -> dict[str, str]:
    """File name -> dashboard JSON, for every dashboard we write; the DCGM one only with
    `gpu_metrics` (a DCGM exporter or GKE's managed DCGM collection)."""
    found = {
        "gpus-by-team.json": to_json(gpus_by_team.dashboard()),
        "kueue.json": to_json(kueue.dashboard()),
        "ray.json": to_json(ray.dashboard()),
    }
    if gpu_metrics:
        found[DCGM] = to_json(dcgm.dashboard())
    return found
