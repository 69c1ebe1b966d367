"""Dashboards as code: each module builds one Grafana dashboard with grafana-foundation-sdk.

`dashboards()` gives them as Grafana JSON keyed by file name; components/monitoring.py
puts each in a ConfigMap the Grafana sidecar provisions. NVIDIA's DCGM dashboard is not
here: Grafana's chart fetches it from grafana.com by pinned id and revision.
"""

from __future__ import annotations

from components.dashboards import gpus_by_team, kueue, ray
from components.dashboards.common import to_json


def dashboards() -> dict[str, str]:
    """File name -> dashboard JSON, for every dashboard we write."""
    return {
        "gpus-by-team.json": to_json(gpus_by_team.dashboard()),
        "kueue.json": to_json(kueue.dashboard()),
        "ray.json": to_json(ray.dashboard()),
    }
