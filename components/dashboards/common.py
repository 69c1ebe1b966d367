"""Shared pieces of our dashboards: the datasource variable, panel and query helpers,
and the metric label names every dashboard and alert agrees on.

Built with grafana-foundation-sdk (github.com/grafana/grafana-foundation-sdk), Grafana's
maintained dashboard-as-code library; its builders emit Grafana's dashboard JSON model.
"""

from __future__ import annotations

import json

from grafana_foundation_sdk.builders.dashboard import Dashboard, DatasourceVariable, QueryVariable
from grafana_foundation_sdk.builders.prometheus import Dataquery
from grafana_foundation_sdk.builders.stat import Panel as Stat
from grafana_foundation_sdk.builders.timeseries import Panel as Timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import DataSourceRef, VariableRefresh, VariableSort

# Through a ServiceMonitor with honorLabels: false (the dcgm-exporter chart's default), the
# exporter's pod-attribution labels namespace/pod/container clash with the target's own and
# Prometheus renames them exported_<label> (prometheus.io/docs, scrape_config honor_labels).
# GKE's managed DCGM collection reports them the same way. A GPU that no pod holds has none.
WORKLOAD_NAMESPACE = "exported_namespace"
WORKLOAD_POD = "exported_pod"
# Our DCGM ServiceMonitor copies the node name of the exporter pod into `node`
# (components/dcgm.py, relabelings); kube-state-metrics exposes the pool label of each node
# as label_mlplatform_dev_gpu_pool (components/monitoring.py, metricLabelsAllowlist).
NODE = "node"
POOL = "label_mlplatform_dev_gpu_pool"

# How busy a GPU is, in %: a whole GPU's DCGM_FI_DEV_GPU_UTIL; on a MIG slice (its series carry
# GPU_I_ID and GPU_I_PROFILE: dcgm-exporter 4.5.3-4.8.2 internal/pkg/rendermetrics/render_metrics.go:47)
# GPU_UTIL reads 0 or is absent (dcgm-exporter#216, #430: "not supported for MIG configurations",
# use DCGM_FI_PROF_GR_ENGINE_ACTIVE, "reported for MIG devices"), so the slice's graphics-engine
# activity, a ratio, times 100. The chart's default metric list, which the exporter reads as
# /etc/dcgm-exporter/default-counters.csv (values.yaml:171-182), collects both (dcgm-exporter
# chart 4.8.2 templates/metrics-configmap.yaml:36 and :82).
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
MIG_ACTIVITY = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
MIG_INSTANCE = "GPU_I_ID"


def gpu_activity(selector: str, window_seconds: int) -> str:
    """Per GPU or MIG slice matching `selector` (label matchers, without braces), its busiest
    sample of the last `window_seconds` in %: every sample counts, whatever the step a query or
    rule is evaluated at."""
    window = f"[{window_seconds}s]"
    whole = f'max_over_time({GPU_UTIL}{{{selector}, {MIG_INSTANCE}=""}}{window})'
    slices = f'100 * max_over_time({MIG_ACTIVITY}{{{selector}, {MIG_INSTANCE}!=""}}{window})'
    return f"({whole} or {slices})"


DATASOURCE_VARIABLE = "datasource"
DATASOURCE = DataSourceRef(type_val="prometheus", uid="${" + DATASOURCE_VARIABLE + "}")


def new_dashboard(title: str, uid: str, description: str) -> Dashboard:
    """A dashboard with our tags, a Prometheus datasource picker and a sane default window."""
    return (
        Dashboard(title)
        .uid(uid)
        .description(description)
        .tags(["mlplatform", "generated"])
        .time("now-6h", "now")
        .refresh("1m")
        .timezone("browser")
        .readonly()
        .with_variable(DatasourceVariable(DATASOURCE_VARIABLE).label("Data source").type("prometheus"))
    )


def label_variable(name: str, label: str, query: str) -> QueryVariable:
    """A multi-select variable over the values of one label (`label_values(metric, label)`)."""
    return (
        QueryVariable(name)
        .label(label)
        .datasource(DATASOURCE)
        .query(query)
        .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(VariableSort.ALPHABETICAL_ASC)
        .multi(True)
        .include_all(True)
        .all_value(".*")
    )


def query(expr: str, legend: str, ref_id: str = "A") -> Dataquery:
    return Dataquery().expr(expr).legend_format(legend).ref_id(ref_id)


def timeseries(title: str, unit: str, *targets: Dataquery, description: str = "", width: int = 12) -> Timeseries:
    panel = Timeseries().title(title).description(description).unit(unit).datasource(DATASOURCE).span(width).height(8)
    for index, target in enumerate(targets):
        panel = panel.with_target(target.ref_id(chr(ord("A") + index)))
    return panel


def stat(title: str, unit: str, target: Dataquery, description: str = "", width: int = 6) -> Stat:
    return Stat().title(title).description(description).unit(unit).datasource(DATASOURCE).span(width).height(4).with_target(target)


def to_json(dashboard: Dashboard) -> str:
    """The dashboard as Grafana JSON, deterministic (sorted keys)."""
    return JSONEncoder(sort_keys=True, indent=2).encode(dashboard.build())


def parse(text: str) -> dict[str, object]:
    value = json.loads(text)
    assert isinstance(value, dict)
    return value
