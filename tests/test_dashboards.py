"""Dashboards as code and alert rules: valid Grafana JSON from the library, PromQL that parses."""

from __future__ import annotations

import json
import re
import tarfile
from typing import Any

import pytest
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import Dashboard

from components.alerts import alerts, rule_spec
from components.dashboards import DCGM, dashboards
from components.dashboards.common import DATASOURCE_VARIABLE, WORKLOAD_NAMESPACE
from facts.versions import DCGM_EXPORTER
from stackmodel.components.monitoring import MonitoringConfig
from tests.support import mirror
from tests.support.mirror import MIRROR
from tests.support.promql import dashboard_expressions, metric_names, parse

DASHBOARDS = dashboards()
PINNED_DCGM_CHART = MIRROR / "charts" / f"dcgm-exporter-{DCGM_EXPORTER.version}.tgz"
COUNTER = re.compile(r"^\s*(DCGM_FI_[A-Z0-9_]+)\s*,", re.MULTILINE)


def _panels(model: dict[str, Any]) -> list[dict[str, Any]]:
    """The panels that query: not rows, not text (the Kueue dashboard's note on where your own queue is)."""
    return [p for p in model["panels"] if p["type"] not in ("row", "text")]


@pytest.mark.parametrize("file", sorted(DASHBOARDS))
def test_dashboard_is_grafana_json_the_library_reads_back(file: str) -> None:
    text = DASHBOARDS[file]
    model = Dashboard.from_json(json.loads(text))
    assert JSONEncoder(sort_keys=True, indent=2).encode(model) == text
    assert model.uid and model.title and "mlplatform" in (model.tags or [])


@pytest.mark.parametrize("file", sorted(DASHBOARDS))
def test_every_panel_queries_the_datasource_variable(file: str) -> None:
    model = json.loads(DASHBOARDS[file])
    variables = {v["name"]: v for v in model["templating"]["list"]}
    assert variables[DATASOURCE_VARIABLE]["type"] == "datasource"
    assert variables[DATASOURCE_VARIABLE]["query"] == "prometheus"
    for panel in _panels(model):
        assert panel["datasource"] == {"type": "prometheus", "uid": f"${{{DATASOURCE_VARIABLE}}}"}, panel["title"]
        assert panel["targets"], panel["title"]
        ref_ids = [t["refId"] for t in panel["targets"]]
        assert all(ref_ids) and len(set(ref_ids)) == len(ref_ids), panel["title"]
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]


@pytest.mark.parametrize("file", sorted(DASHBOARDS))
def test_every_dashboard_expression_parses(file: str) -> None:
    found = list(dashboard_expressions(DASHBOARDS[file]))
    assert found
    for where, expr in found:
        try:
            assert metric_names(parse(expr)), f"{where} selects no metric"
        except ValueError as err:
            pytest.fail(f"{file} {where}: {err}\n{expr}")


# Grafana 12 removed Angular; its Angular core panels are these (Grafana docs, "Angular
# support deprecation": graph -> timeseries, singlestat -> stat, table-old -> table).
ANGULAR_PANELS = {"graph", "singlestat", "table-old", "grafana-piechart-panel", "grafana-worldmap-panel"}


@pytest.mark.parametrize("file", sorted(DASHBOARDS))
def test_dashboards_use_no_angular_panel(file: str) -> None:
    types = {p["type"] for p in json.loads(DASHBOARDS[file])["panels"]}
    assert types and not types & ANGULAR_PANELS


@pytest.mark.parametrize("file", sorted(DASHBOARDS))
def test_dashboards_are_written_in_the_newest_schema_the_library_has(file: str) -> None:
    """Grafana 13 reads v1 JSON of any schemaVersion and migrates it (dynamic dashboards
    convert to schema v2 on load). The pinned flavour of grafana-foundation-sdk is Grafana
    11.6's (schemaVersion 41); the 10.1 flavour a version range picks writes 36, with
    `options: null` on every panel and the long-removed `style` field."""
    model = json.loads(DASHBOARDS[file])
    assert model["schemaVersion"] >= 41
    assert "style" not in model
    assert all(p.get("options", {}) is not None for p in model["panels"])


def test_dashboard_uids_are_unique() -> None:
    uids = [json.loads(t)["uid"] for t in DASHBOARDS.values()]
    assert len(set(uids)) == len(uids)


def test_gpus_by_team_covers_the_issue() -> None:
    model = json.loads(DASHBOARDS["gpus-by-team.json"])
    titles = {p["title"] for p in _panels(model)}
    assert {
        "GPU utilisation by team",
        "GPU memory used by team",
        "GPU power by team",
        "GPU utilisation by pool",
        "GPU memory used by pool",
        "GPU power by pool",
        "GPUs allocated vs used",
        "Queue wait before admission (p90)",
    } <= titles
    metrics: set[str] = set()
    for _, expr in dashboard_expressions(DASHBOARDS["gpus-by-team.json"]):
        metrics |= metric_names(parse(expr))
    assert {
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_POWER_USAGE",
        "kube_pod_container_resource_requests",
        "kube_node_labels",
        "kueue_admission_wait_time_seconds_bucket",
    } <= metrics
    team_panels = [p for p in _panels(model) if p["title"].endswith("by team")]
    for panel in team_panels:
        assert f"by ({WORKLOAD_NAMESPACE})" in panel["targets"][0]["expr"]


def test_ray_and_kueue_dashboards_read_their_metrics() -> None:
    def metrics(file: str) -> set[str]:
        found: set[str] = set()
        for _, expr in dashboard_expressions(DASHBOARDS[file]):
            found |= metric_names(parse(expr))
        return found

    assert {"ray_tasks", "ray_actors", "ray_node_gpus_utilization"} <= metrics("ray.json")
    assert {"kueue_pending_workloads", "kueue_admitted_active_workloads", "kueue_cluster_queue_nominal_quota"} <= metrics(
        "kueue.json"
    )


def _dcgm_metrics(texts: list[str]) -> set[str]:
    found: set[str] = set()
    for text in texts:
        for _, expr in dashboard_expressions(text):
            found |= {m for m in metric_names(parse(expr)) if m.startswith("DCGM_FI_")}
    return found


@mirror.needed
def test_every_dcgm_metric_we_query_is_a_default_counter_of_the_pinned_exporter() -> None:
    """The exporter collects only the counters of its metrics file: the chart's
    templates/metrics-configmap.yaml (mounted as default-counters.csv); `#` lines are off."""
    with tarfile.open(PINNED_DCGM_CHART) as chart:
        member = chart.extractfile("dcgm-exporter/templates/metrics-configmap.yaml")
        assert member is not None
        enabled = set(COUNTER.findall(member.read().decode()))
    assert {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"} <= enabled
    queried = _dcgm_metrics(list(DASHBOARDS.values()))
    queried |= {m for a in alerts(MonitoringConfig()) for m in metric_names(parse(a.expr)) if m.startswith("DCGM_FI_")}
    assert sorted(queried - enabled) == []


def test_the_dcgm_dashboard_shows_every_gpu_and_is_ours() -> None:
    """Built here, not NVIDIA's grafana.com JSON: per node and GPU, the counters a GPU operator reads."""
    model = json.loads(DASHBOARDS[DCGM])
    assert {v["name"] for v in model["templating"]["list"]} == {DATASOURCE_VARIABLE, "node", "gpu"}
    assert model["uid"] == "mlplatform-dcgm" and "gnetId" not in model
    assert {
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_SM_CLOCK",
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        "DCGM_FI_DEV_XID_ERRORS",
    } <= _dcgm_metrics([DASHBOARDS[DCGM]])
    for panel in _panels(model):
        if panel["type"] == "timeseries":
            assert all("$node" in t["expr"] and "$gpu" in t["expr"] for t in panel["targets"]), panel["title"]


def test_the_dcgm_dashboard_is_left_out_without_gpu_metrics() -> None:
    assert DCGM not in dashboards(gpu_metrics=False) and set(dashboards(gpu_metrics=False)) < set(DASHBOARDS)


def test_every_alert_expression_parses() -> None:
    for alert in alerts(MonitoringConfig()):
        try:
            parse(alert.expr)
        except ValueError as err:
            pytest.fail(f"{alert.name}: {err}\n{alert.expr}")


def test_alerts_use_the_configured_thresholds() -> None:
    config = MonitoringConfig.model_validate(
        {"idleGpuThreshold": 25, "idleGpuMinutes": 45, "pendingWorkloadMinutes": 90, "gpuTemperatureCelsius": 80}
    )
    by_name = {a["alert"]: a for a in rule_spec(config)["groups"][0]["rules"]}
    assert set(by_name) == {"GpuAllocatedButIdle", "GpuXidError", "GpuTemperatureHigh", "KueueWorkloadsPendingTooLong"}

    idle = parse(by_name["GpuAllocatedButIdle"]["expr"])
    assert str(idle.op) == "<" and idle.rhs.val == 25  # type: ignore[attr-defined]
    assert f"by ({WORKLOAD_NAMESPACE})" in by_name["GpuAllocatedButIdle"]["expr"]
    assert by_name["GpuAllocatedButIdle"]["for"] == "45m"

    temperature = parse(by_name["GpuTemperatureHigh"]["expr"])
    assert str(temperature.op) == ">" and temperature.rhs.val == 80  # type: ignore[attr-defined]
    assert metric_names(temperature) == {"DCGM_FI_DEV_GPU_TEMP"}

    assert metric_names(parse(by_name["GpuXidError"]["expr"])) == {"DCGM_FI_DEV_XID_ERRORS"}
    assert by_name["GpuXidError"]["labels"]["severity"] == "critical"

    pending = by_name["KueueWorkloadsPendingTooLong"]
    assert metric_names(parse(pending["expr"])) == {"kueue_pending_workloads"}
    assert pending["for"] == "90m"


def test_parser_rejects_broken_promql() -> None:
    with pytest.raises(ValueError, match="unclosed left parenthesis"):
        parse("sum(DCGM_FI_DEV_GPU_UTIL")


def test_the_kueue_dashboard_shows_how_teams_share_and_links_where_a_member_sees_their_own_queue() -> None:
    board = json.loads(DASHBOARDS["kueue.json"])
    found: set[str] = set()
    for _, expr in dashboard_expressions(DASHBOARDS["kueue.json"]):
        found |= metric_names(parse(expr))
    # Kueue v0.19.2 pkg/metrics/metrics.go: preemptions by reason, evictions, the fair share.
    assert {"kueue_preempted_workloads_total", "kueue_evicted_workloads_total", "kueue_cluster_queue_weighted_share"} <= found
    (text,) = [p for p in board["panels"] if p["type"] == "text"]
    assert "queue-status NAME" in text["options"]["content"]
    assert [link["url"] for link in text["links"]] == ["/jupyter/"]  # the notebooks UI behind the same gateway
