"""GPU-hours per team (components/gpu_hours.py, tooling/usage.py): the recording rules parse and
are in the PrometheusRule Prometheus selects; the dashboard's GPU-hours panels query them; `cost
<stack> --usage` adds up a recorded sample (tests/data/usage/week.json: Prometheus' answers to
`<metric>[7d]`, a few hours of it) and prices it.

The sample, one sample a minute: vision held 4 GPUs of pool l4 for 180 minutes, 2 of them busy
for 60; nlp held 1 of pool l4 for 90 minutes, never busy; research held 2 on a node
autoprovisioning made for 30 minutes, both busy."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from components import gpu_hours
from components.alerts import rule_spec
from components.dashboards import dashboards
from components.monitoring import RULE_NAME
from stackmodel.components.monitoring import MONITORING, MonitoringConfig
from stackmodel.config import load
from tests.support.promql import dashboard_expressions, metric_names, parse
from tooling import cli
from tooling.plan import Plan
from tooling.usage import UsageError, read_file, usage_of

SAMPLE = Path(__file__).parent / "data" / "usage" / "week.json"
RECORDED = {gpu_hours.ALLOCATED, gpu_hours.BUSY}


def test_the_recording_rules_parse_and_read_requests_and_dcgm() -> None:
    group = gpu_hours.recording_group(MonitoringConfig(idle_gpu_threshold=15))
    assert group["interval"] == f"{gpu_hours.INTERVAL_SECONDS}s"
    rules = {r["record"]: r["expr"] for r in group["rules"]}
    assert set(rules) == RECORDED
    assert metric_names(parse(rules[gpu_hours.ALLOCATED])) == {"kube_pod_container_resource_requests", "kube_pod_status_phase", "kube_node_labels"}
    # Whole GPUs by their utilisation, MIG slices by their graphics-engine activity (gpu_activity).
    assert metric_names(parse(rules[gpu_hours.BUSY])) == {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "kube_node_labels"}
    assert ">= 15" in rules[gpu_hours.BUSY]  # the stack's idle threshold, the idle-GPU alert's
    for expr in rules.values():
        assert expr.startswith(("sum by (namespace, pool, accelerator)", "count by (namespace, pool, accelerator)"))


def test_the_rules_are_in_the_prometheus_rule_of_every_monitored_stack(shipped_plan: Callable[[str], Plan]) -> None:
    # The GPU rules' object; serving brings its own (components/dashboards/serving.py).
    [rule] = [r for r in shipped_plan("dev").resources if r.type.endswith("PrometheusRule") and r.inputs["metadata"]["name"] == RULE_NAME]
    groups = {g["name"]: g for g in rule.inputs["spec"]["groups"]}
    assert {r["record"] for r in groups[gpu_hours.GROUP]["rules"]} == RECORDED
    assert rule_spec(load("dev").components[MONITORING])["groups"][1] == groups[gpu_hours.GROUP]


def test_the_dashboard_queries_the_recorded_gpu_hours() -> None:
    queried = {where: metric_names(parse(expr)) for where, expr in dashboard_expressions(dashboards()["gpus-by-team.json"])}
    recorded = {where: names for where, names in queried.items() if names & RECORDED}
    assert {where.split("'")[1] for where in recorded} == {
        "GPUs allocated and busy by team (recorded)",
        "GPU-hours by team (time range)",
        "Idle GPU-hours by team (time range)",
    }
    assert all(names <= RECORDED for names in recorded.values()), recorded
    assert set().union(*recorded.values()) == RECORDED


def test_a_recorded_sample_adds_up_to_gpu_hours_per_team_and_pool() -> None:
    usage = read_file(SAMPLE)
    assert [(r.team, r.pool, r.accelerator, r.gpu_hours, r.idle_gpu_hours) for r in usage.rows] == [
        ("nlp", "l4", "nvidia-l4", 1.5, 1.5),
        ("research", "", "nvidia-l4", 1.0, 0.0),
        ("vision", "l4", "nvidia-l4", 12.0, 10.0),
    ]
    assert (usage.start.isoformat(), usage.end.isoformat()) == ("2026-12-01T12:00:00+00:00", "2026-12-01T14:59:00+00:00")  # type: ignore[union-attr]


def test_cost_usage_prints_gpu_hours_idle_and_their_price_per_team(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["cost", "dev", "--usage", "--usage-file", str(SAMPLE)]) == 0
    lines = capsys.readouterr().out.splitlines()
    # Pool l4 is g2-standard-24 spot: 24 x 0.0100 + 96 x 0.00117 + 2 x 0.224 = 0.80032/h for 2 GPUs, 0.40016
    # a GPU-hour. Autoprovisioned L4: the cheapest on-demand G2 per GPU, g2-standard-4 (4 x 0.024988 +
    # 16 x 0.002927 + 0.56 = 0.706784).
    assert lines[2].split() == ["team", "pool", "GPU-hours", "idle", "GPU-hours", "cost", "idle", "cost"]
    assert [line.split() for line in lines[3:]] == [
        ["nlp", "l4", "1.5", "1.5", "0.60", "0.60"],
        ["research", "(autoprovisioned", "nvidia-l4)", "1.0", "0.0", "0.71", "0.00"],
        ["vision", "l4", "12.0", "10.0", "4.80", "4.00"],
        ["total", "14.5", "11.5", "6.11", "4.60"],
    ]


def test_cost_usage_needs_a_source_and_names_a_broken_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["cost", "dev", "--usage"]) == 2
    assert "--prometheus URL" in capsys.readouterr().err
    assert cli.main(["cost", "dev", "--usage-file", str(SAMPLE)]) == 2
    assert "go with --usage" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"allocated": {"status": "error", "error": "bad"}, "busy": {}}))
    assert cli.main(["cost", "dev", "--usage", "--usage-file", str(broken)]) == 1
    assert "allocated: not a successful Prometheus answer" in capsys.readouterr().err
    assert cli.main(["cost", "dev", "--usage", "--prometheus", "localhost:9090"]) == 1
    assert "http:// or https://" in capsys.readouterr().err


def test_an_instant_vector_is_refused() -> None:
    instant = {"status": "success", "data": {"resultType": "vector", "result": []}}
    with pytest.raises(UsageError, match="resultType matrix"):
        usage_of({"allocated": instant, "busy": instant})
