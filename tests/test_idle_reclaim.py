"""The idle reclaim (components/idle_reclaim.py and its job, components/idle_reclaim_job.py).

Its decision is judged on DCGM samples in the shape Prometheus answers the job's query
(tests/data/idle_reclaim/dcgm.json: per notebook pod the busiest GPU's utilisation each minute
over the last 4h02m, values written for the cases; no GPU here to record them on): a training
notebook keeps, one left open stops after the period, an exempt one keeps, one idle for less
than the period is warned, one unseen for a while is judged only since. Its objects are judged in
the dev stack's full render; its rights and the exemption policy by a real API server
(tests/envtest/test_idle_reclaim_rights.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import promql_parser
import pytest

from components import dcgm, idle_reclaim, idle_reclaim_job
from components.dashboards.common import gpu_activity
from components.idle_reclaim import idle_reclaim_args
from components.idle_reclaim_job import (
    ANNOTATION_RECLAIMED,
    ANNOTATION_WARNED,
    Action,
    Settings,
    decide,
    plan,
    series_of,
)
from components.monitoring import prometheus_stack_values
from components.notebook_metrics import NOTEBOOK_METRIC_PREFIX, NOTEBOOK_METRICS
from facts import labels
from facts.versions import PYTHON_IMAGE, image
from stackmodel.components.idle_reclaim import STEP_SECONDS
from stackmodel.components.monitoring import MONITORING, MonitoringConfig
from stackmodel.config import ConfigError, load, validate
from tests.conftest import base_gke, base_kind, with_changes
from tests.support import mirror
from tests.support.promql import parse
from tests.support.renders import rendered
from tooling.fullrender import FullRender
from tooling.plan import Plan

SAMPLES = json.loads((Path(__file__).parent / "data" / "idle_reclaim" / "dcgm.json").read_text())
NOW = 1796140800.0  # the samples' end, 2026-12-01T16:00:00Z
SETTINGS = Settings(prometheus="http://prometheus:9090", namespaces=("vision", "nlp", "research"), period_seconds=4 * 3600, warning_seconds=30 * 60, threshold=10)
TEAMS = ("vision", "nlp", "research")


def notebook(namespace: str, name: str, gpus: int | None = 1, labels_: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """A Notebook as the notebook UI creates it (kubeflow.org/v1; the form puts GPUs in limits)."""
    limits: dict[str, str] = {"cpu": "0.6", "memory": "1.2Gi"}
    if gpus:
        limits["nvidia.com/gpu"] = str(gpus)
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "Notebook",
        "metadata": {"name": name, "namespace": namespace, "labels": labels_ or {}, "annotations": annotations or {}},
        "spec": {"template": {"spec": {"containers": [{"name": name, "image": "notebook:gpu", "resources": {"limits": limits}}]}}},
    }


def steps(*notebooks: dict[str, Any], now: float = NOW) -> dict[str, idle_reclaim_job.Step]:
    return {s.notebook: s for s in plan(notebooks, series_of(SAMPLES), now, SETTINGS)}


EXEMPT = {labels.IDLE_RECLAIM_LABEL: labels.IDLE_RECLAIM_EXEMPT}


def test_busy_keeps_idle_past_the_period_stops_exempt_keeps() -> None:
    found = steps(
        notebook("vision", "training"),
        notebook("vision", "left-open"),
        notebook("nlp", "pinned", labels_=EXEMPT),
        notebook("research", "winding-down"),
        notebook("nlp", "unseen"),
    )
    assert {name: s.decision.action for name, s in found.items()} == {
        "training": Action.KEEP,
        "left-open": Action.WARN,  # past the period but never warned: warned now, stopped by the next run
        "pinned": Action.KEEP,
        "winding-down": Action.WARN,
        "unseen": Action.KEEP,
    }
    assert found["left-open"].decision.idle_seconds == 4 * 3600 + 2 * 60  # every sample of the window below 10%
    warned = steps(notebook("vision", "left-open", annotations={ANNOTATION_WARNED: "2026-12-01T15:50:00Z"}))["left-open"]
    assert warned.decision.action is Action.STOP
    assert found["pinned"].decision.reason == "exempt (label mlplatform.dev/idle-reclaim=exempt)"
    assert found["winding-down"].decision.reason == "GPUs below 10% for 3h34m, stopped in 0h26m"
    assert found["unseen"].decision.reason == "idle for 1h59m, under the period"  # judged since it was seen again


def test_a_stop_is_the_notebook_uis_stop_with_an_event_and_the_time_recorded() -> None:
    step = steps(notebook("vision", "left-open", annotations={ANNOTATION_WARNED: "2026-12-01T15:30:00Z"}))["left-open"]
    assert step.patch == {
        "metadata": {
            "annotations": {
                # kubeflow/notebooks v1.11.0 routes/patch.py: the UI's stop, UTC to the second.
                labels.NOTEBOOK_STOPPED_ANNOTATION: "2026-12-01T16:00:00Z",
                ANNOTATION_RECLAIMED: "2026-12-01T16:00:00Z",
                ANNOTATION_WARNED: None,
            }
        }
    }
    assert step.event is not None and step.event[0] == "IdleGpuReclaimed"
    assert "GPUs below 10% for 4h02m (the stack's idle period is 4h00m). Its volumes are kept" in step.event[1]


def test_a_notebook_is_never_stopped_by_the_run_that_first_sees_it_past_the_period() -> None:
    """With runs every 10 minutes a notebook may go from under `period - warning` to past the
    period between two runs (a warning shorter than a run's interval, or a run missed): that run
    warns it, with the event, and the next one stops it."""
    first = steps(notebook("vision", "left-open"))["left-open"]
    assert first.decision.action is Action.WARN
    assert first.decision.reason == "GPUs below 10% for 4h02m: stopped at the reclaim's next run"
    assert first.patch == {"metadata": {"annotations": {ANNOTATION_WARNED: "2026-12-01T16:00:00Z"}}}
    assert first.event is not None and first.event[0] == "IdleGpuReclaimWarning"


def test_a_warning_is_given_once_and_taken_back_when_the_gpus_work_again() -> None:
    first = steps(notebook("research", "winding-down"))["winding-down"]
    assert first.patch == {"metadata": {"annotations": {ANNOTATION_WARNED: "2026-12-01T16:00:00Z"}}}
    assert first.event is not None and first.event[0] == "IdleGpuReclaimWarning"
    assert "mlplatform.dev/idle-reclaim=exempt" in first.event[1]
    again = steps(notebook("research", "winding-down", annotations={ANNOTATION_WARNED: "2026-12-01T15:50:00Z"}))["winding-down"]
    assert (again.decision.action, again.patch, again.event) == (Action.WARN, None, None)
    working = steps(notebook("vision", "training", annotations={ANNOTATION_WARNED: "2026-12-01T15:50:00Z"}))["training"]
    assert (working.decision.action, working.patch, working.event) == (Action.KEEP, {"metadata": {"annotations": {ANNOTATION_WARNED: None}}}, None)


def test_cpu_only_and_stopped_notebooks_are_not_judged_and_a_restarted_one_starts_afresh() -> None:
    assert steps(notebook("vision", "left-open", gpus=None), notebook("vision", "left-open", annotations={labels.NOTEBOOK_STOPPED_ANNOTATION: "x"})) == {}
    # Stopped by the reclaim at 14:00 and started again: the samples of its earlier run do not count.
    restarted = steps(notebook("vision", "left-open", annotations={ANNOTATION_RECLAIMED: "2026-12-01T14:00:00Z"}))["left-open"]
    assert (restarted.decision.action, restarted.decision.reason) == (Action.KEEP, "idle for 1h59m, under the period")


@pytest.mark.parametrize(
    ("samples", "expected"),
    [
        ([], "no recent GPU samples: not judged"),
        ([(NOW - 3600, 0.0)], "no recent GPU samples: not judged"),  # the exporter stopped reporting
        ([(NOW - 60 * i, 95.0) for i in range(10)], "busy"),
    ],
)
def test_without_evidence_nothing_is_stopped(samples: list[tuple[float, float]], expected: str) -> None:
    decision = decide(samples, NOW, SETTINGS)
    assert (decision.action, decision.reason) == (Action.KEEP, expected)


def test_each_step_reads_every_collection_of_its_window_and_mig_slices_by_their_engine_activity() -> None:
    """The exporter collects every 30 s and the job steps every 60 s: a plain instant read at
    each step would see one collection in two, so each step is the busiest sample of its own
    minute. Whole GPUs by DCGM_FI_DEV_GPU_UTIL; MIG slices (GPU_I_ID set), where it reads 0 or is
    absent (dcgm-exporter#216, #430), by DCGM_FI_PROF_GR_ENGINE_ACTIVE x 100. The job spells it
    itself (it runs alone); the dashboards' helper is the platform's one spelling."""
    query = idle_reclaim_job.utilisation_query(TEAMS, STEP_SECONDS)
    teams = 'exported_namespace=~"vision|nlp|research"'
    assert query == f"max by (exported_namespace, exported_pod) ({gpu_activity(teams, STEP_SECONDS)})"
    windows, reads = [], []

    def visit(node: promql_parser.Expr) -> bool:
        if isinstance(node, promql_parser.MatrixSelector):
            windows.append((node.vector_selector.name, str(node.vector_selector.matchers), node.range))
        if isinstance(node, promql_parser.VectorSelector):
            reads.append(node.name)
        return True

    promql_parser.walk(parse(query), pre_visit=visit)
    step = timedelta(seconds=STEP_SECONDS)
    assert sorted(windows) == [
        ("DCGM_FI_DEV_GPU_UTIL", '{exported_namespace=~"vision|nlp|research",GPU_I_ID=""}', step),
        ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", '{exported_namespace=~"vision|nlp|research",GPU_I_ID!=""}', step),
    ]
    assert len(reads) == len(windows)  # no instant read outside a window
    assert dcgm.COLLECT_INTERVAL_SECONDS <= STEP_SECONDS == SETTINGS.step_seconds
    assert idle_reclaim.settings(idle_reclaim_args(load("dev"))).step_seconds == STEP_SECONDS


def test_the_job_speaks_the_platforms_labels_and_annotations() -> None:
    """It runs alone from its ConfigMap, so it spells them itself."""
    assert idle_reclaim_job.STOP_ANNOTATION == labels.NOTEBOOK_STOPPED_ANNOTATION
    assert (idle_reclaim_job.EXEMPT_LABEL, idle_reclaim_job.EXEMPT_VALUE) == (labels.IDLE_RECLAIM_LABEL, labels.IDLE_RECLAIM_EXEMPT)


# --- the stack: on in dev, off on prod, and where it cannot judge refused ---


def test_on_in_dev_off_on_prod_by_default(shipped_plan: Callable[[str], Plan]) -> None:
    assert [r for r in shipped_plan("dev").resources if r.type == "mlplatform:components:IdleReclaim"]
    assert not [r for r in shipped_plan("prod").resources if r.type == "mlplatform:components:IdleReclaim"]
    assert not load("kind").enabled_components()["idleReclaim"]  # no GPU metrics to judge by


def test_off_by_default_on_mig_pools_read_through_gkes_managed_dcgm() -> None:
    """Which fields GKE's managed DCGM reports per MIG slice is not confirmed (rule
    idle-reclaim-reads-mig-slices); with the chart's exporter the reclaim runs on MIG pools."""
    mig = {"mlplatform:cluster.gpuPools.0.accelerator": "nvidia-tesla-a100", "mlplatform:cluster.gpuPools.0.machineType": "a2-highgpu-1g",
           "mlplatform:cluster.gpuPools.0.sharing": {"strategy": "mig", "partitionSize": "1g.5gb"},
           "mlplatform:cluster.autoprovisioning.limits": {"cpu": 256, "memory": 1024, "nvidia-tesla-a100": 12}}
    managed = {"mlplatform:cluster.managedPrometheus": True, "mlplatform:components.monitoring": {"enabled": True, "backend": "gke-managed"},
               "mlplatform:components.dcgmExporter": {"source": "gke-managed"}}
    chart = {"mlplatform:components.monitoring": {"enabled": True}, "mlplatform:components.dcgmExporter": {}}
    assert not validate(with_changes(base_gke(), {**mig, **managed}), "mig").enabled_components()["idleReclaim"]
    assert validate(with_changes(base_gke(), {**mig, **chart}), "mig").enabled_components()["idleReclaim"]
    assert validate(with_changes(base_gke(), managed), "whole").enabled_components()["idleReclaim"]


def test_switched_on_where_it_cannot_judge_is_refused_with_the_path() -> None:
    raw = with_changes(base_kind(), {"mlplatform:components": {"idleReclaim": {"enabled": True}}})
    with pytest.raises(ConfigError) as err:
        validate(raw, "test")
    assert "mlplatform:components.idleReclaim.enabled: idle reclaim needs dcgmExporter (the GPUs' utilisation; kind has no GPUs)" in str(err.value)


@pytest.mark.parametrize(
    ("settings", "path", "message"),
    [
        ({"period": "10m"}, "idleReclaim.period", "outside 30m..168h"),
        ({"period": "4h", "warning": "4h"}, "idleReclaim.warning", "not shorter than period 4h"),
        ({"period": "four hours"}, "idleReclaim.period", "not a duration such as 4h"),
        ({"warning": "5m"}, "idleReclaim.warning", "shorter than the 10 minutes between two runs of the reclaim"),
    ],
)
def test_bad_periods_are_refused(settings: dict[str, str], path: str, message: str) -> None:
    raw = with_changes(base_kind(), {"mlplatform:components": {"idleReclaim": settings}})
    with pytest.raises(ConfigError) as err:
        validate(raw, "test")
    assert f"mlplatform:components.{path}" in str(err.value) and message in str(err.value)


# --- its objects in the dev stack's full render ---


@pytest.fixture(scope="module")
def dev() -> FullRender:
    return rendered("dev")


def _of(render: FullRender, kind: str) -> list[dict[str, Any]]:
    return [o.obj for o in render.objects if o.key[1] == kind]


@mirror.needed
def test_the_cronjob_runs_this_very_script_with_the_stacks_settings(dev: FullRender) -> None:
    [config_map] = [o for o in _of(dev, "ConfigMap") if o["metadata"]["name"] == idle_reclaim.NAME]
    assert config_map["data"][idle_reclaim.SCRIPT] == Path(idle_reclaim_job.__file__).read_text()
    settings = Settings.from_json(config_map["data"]["config.json"])
    monitoring = load("dev").components[MONITORING]
    assert settings == Settings("http://kube-prometheus-stack-prometheus.monitoring.svc:9090", TEAMS, 4 * 3600, 30 * 60, monitoring.idle_gpu_threshold)
    [cron_job] = [o for o in _of(dev, "CronJob") if o["metadata"]["name"] == idle_reclaim.NAME]
    assert cron_job["metadata"]["namespace"] == "monitoring"  # where the NetworkPolicies let it reach Prometheus
    pod = cron_job["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert container["image"] == image(PYTHON_IMAGE)
    assert container["command"][1] == f"{idle_reclaim.MOUNT}/{idle_reclaim.SCRIPT}"
    assert pod["serviceAccountName"] == idle_reclaim.NAME and container["securityContext"]["runAsNonRoot"]


@mirror.needed
def test_its_rights_are_bound_in_team_namespaces_never_cluster_wide(dev: FullRender) -> None:
    """What the rights allow is asked of a real API server: tests/envtest/test_idle_reclaim_rights.py."""
    assert not [b for b in _of(dev, "ClusterRoleBinding") if b["roleRef"]["name"] == idle_reclaim.CLUSTER_ROLE]
    bound = {b["metadata"]["namespace"] for b in _of(dev, "RoleBinding") if b["roleRef"]["name"] == idle_reclaim.CLUSTER_ROLE}
    assert bound == set(TEAMS)


@mirror.needed
def test_the_exemption_policy_asks_the_authorizer_and_binds_in_profile_namespaces(dev: FullRender) -> None:
    """What it admits and refuses is the API server's to say: tests/envtest/test_idle_reclaim_rights.py."""
    [policy] = [p for p in _of(dev, "ValidatingAdmissionPolicy") if p["metadata"]["name"] == idle_reclaim.EXEMPTION_POLICY]
    assert policy["spec"]["variables"] == [{"name": "mayManageAccess", "expression": idle_reclaim.OWNER}]
    assert ".resource('rolebindings')" in idle_reclaim.OWNER and ".check('create')" in idle_reclaim.OWNER
    [binding] = [b for b in _of(dev, "ValidatingAdmissionPolicyBinding") if b["spec"]["policyName"] == idle_reclaim.EXEMPTION_POLICY]
    assert binding["spec"]["matchResources"]["namespaceSelector"] == {"matchLabels": {labels.PROFILE_NAMESPACE_LABEL[0]: labels.PROFILE_NAMESPACE_LABEL[1]}}


def test_what_it_did_reaches_grafana_through_kube_state_metrics() -> None:
    state = prometheus_stack_values(MonitoringConfig(), notebook_metrics=True)["kube-state-metrics"]
    [resource] = state["customResourceState"]["config"]["spec"]["resources"]
    assert resource["groupVersionKind"] == {"group": "kubeflow.org", "kind": "Notebook", "version": "v1"}
    paths = {m["name"]: m["each"]["gauge"]["path"] for m in resource["metrics"]}
    assert paths["idle_reclaimed_timestamp_seconds"] == ["metadata", "annotations", ANNOTATION_RECLAIMED]
    assert paths["idle_reclaim_warned_timestamp_seconds"] == ["metadata", "annotations", ANNOTATION_WARNED]
    assert {"apiGroups": ["kubeflow.org"], "resources": ["notebooks"], "verbs": ["list", "watch"]} in state["rbac"]["extraRules"]
    assert "customResourceState" not in prometheus_stack_values(MonitoringConfig())["kube-state-metrics"]
    from components.dashboards.gpus_by_team import RECLAIMED, WARNED

    assert {RECLAIMED, WARNED} == {f"{NOTEBOOK_METRIC_PREFIX}_{name}" for name in NOTEBOOK_METRICS if "idle" in name}


def test_team_ray_clusters_give_idle_gpu_workers_back() -> None:
    """Ray's own autoscaler does for Ray what the reclaim does for notebooks: nlp's GPU workers
    (tests/stacks/Pulumi.dev.yaml: pool l4, minWorkers 0) go after RAY_IDLE_TIMEOUT_SECONDS unused."""
    from components.profiles.args import team_args
    from components.profiles.ray import RAY_IDLE_TIMEOUT_SECONDS, ray_objects

    config = load("dev")
    nlp = next(t for t in config.teams if t.name == "nlp")
    [cluster] = [o for o in ray_objects(team_args(config, nlp)) if o["kind"] == "RayCluster"]
    assert cluster["spec"]["enableInTreeAutoscaling"] is True
    assert cluster["spec"]["autoscalerOptions"]["idleTimeoutSeconds"] == RAY_IDLE_TIMEOUT_SECONDS == 300
    [workers] = cluster["spec"]["workerGroupSpecs"]
    assert (workers["groupName"], workers["minReplicas"]) == ("l4", 0)
    assert "nvidia.com/gpu" in workers["template"]["spec"]["containers"][0]["resources"]["limits"]
