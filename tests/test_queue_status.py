"""The notebook image's `queue-status` (images/notebook/queue_status.py): what it prints for the
Workloads Kueue writes, with Kueue's own messages (taken from Kueue v0.19.2's tests), and the
requests it makes: the namespace's Workloads and its LocalQueue's pending workloads at the path
Kueue's visibility API serves, through the real Kubernetes client against a server on loopback.
Which callers the API server lets read those: tests/envtest/ (the team viewer's rights)."""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import pytest
import yaml

from facts.image_set import NOTEBOOK_HELPERS, dockerfile

HELPER = Path(__file__).resolve().parents[1] / "images" / "notebook" / "queue_status.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("queue_status", HELPER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


queue_status = load()


def workload(name: str, owner: tuple[str, str], conditions: list[dict[str, Any]], **status: Any) -> dict[str, Any]:
    kind, owner_name = owner
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "vision", "ownerReferences": [{"kind": kind, "name": owner_name}], "labels": {}},
        "spec": {"queueName": "default", "priority": 100, "priorityClassRef": {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "batch"}},
        "status": {"conditions": conditions, **status},
    }


# Kueue v0.19.2 pkg/scheduler/scheduler_afs_test.go:125, the QuotaReserved condition of a workload that does not fit.
NO_QUOTA = {
    "type": "QuotaReserved",
    "status": "False",
    "reason": "Pending",
    "message": "couldn't assign flavors to pod set one: insufficient unused quota for cpu in flavor default, 8 more needed",
}
# Kueue v0.19.2 pkg/scheduler/preemption/preemption_hierarchical_test.go:123, the Preempted condition's message.
RECLAIMED = {
    "type": "Preempted",
    "status": "True",
    "reason": "InCohortReclamation",
    "lastTransitionTime": "2026-12-05T10:00:00Z",
    "message": "Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing",
}


def test_a_pending_job_shows_its_place_in_the_teams_queue_and_kueues_reason() -> None:
    job = workload("trainjob-mnist-3f2a1", ("TrainJob", "mnist"), [NO_QUOTA])
    pending = [{"metadata": {"name": "trainjob-mnist-3f2a1"}, "positionInLocalQueue": 2, "positionInClusterQueue": 2, "priority": 100}]
    lines = queue_status.report("mnist", [job], pending, "vision")
    assert lines == [
        "TrainJob mnist: workload trainjob-mnist-3f2a1, priority batch (100)",
        "  pending: 2 of your team's workloads ahead of it in its LocalQueue, 2 in your team's ClusterQueue",
        "  waits because: couldn't assign flavors to pod set one: insufficient unused quota for cpu in flavor default, 8 more needed",
    ]


def test_a_job_another_team_preempted_names_that_teams_queue_and_nothing_of_its_jobs() -> None:
    job = workload("trainjob-mnist-3f2a1", ("TrainJob", "mnist"), [RECLAIMED, NO_QUOTA])
    lines = queue_status.report("mnist", [job], [], "vision")
    assert lines[1] == (
        "  preempted at 2026-12-05T10:00:00Z by another team of your cohort taking back quota it had lent yours: a workload of queue q"
    )
    assert "job-in" not in "\n".join(lines)  # the preemptor's job is another namespace's: not named
    assert lines[-1].startswith("  waits because: couldn't assign flavors")


def test_a_job_preempted_inside_the_team_names_the_job_that_preempted_it() -> None:
    preempted = {**RECLAIMED, "reason": "InClusterQueue", "message": RECLAIMED["message"].replace("reclamation within the cohort", "prioritization in the ClusterQueue")}
    job = workload("trainjob-mnist-3f2a1", ("TrainJob", "mnist"), [preempted])
    notebook = workload("pod-nb-0-77c1e", ("Pod", "nb-0"), [{"type": "Admitted", "status": "True"}],
                        admission={"clusterQueue": "vision", "podSetAssignments": [{"name": "main", "flavors": {"nvidia.com/gpu": "l4", "cpu": "l4"}}]})
    notebook["metadata"]["labels"] = {queue_status.JOB_UID_LABEL: "job-in"}
    assert queue_status.report("mnist", [job, notebook], [], "vision")[1].endswith(
        "by work of a higher priority class in your team's queue: Pod nb-0"
    )
    assert queue_status.report("nb", [job, notebook], [], "vision") == [
        "Pod nb-0: workload pod-nb-0-77c1e, priority batch (100)",
        "  admitted (running) on l4",
    ]


def test_a_name_kueue_queues_nothing_of_says_why_that_may_be() -> None:
    (line,) = queue_status.report("cpu-notebook", [], [], "vision")
    assert "Kueue queues nothing of 'cpu-notebook' in namespace vision" in line and "CPU-only notebooks" in line


def test_the_notebook_image_installs_the_helper_as_a_command() -> None:
    assert ("queue_status.py", "/usr/local/bin/queue-status") in NOTEBOOK_HELPERS
    assert "COPY queue_status.py /usr/local/bin/queue-status" in dockerfile()
    assert HELPER.stat().st_mode & 0o111  # executable in git, so COPY keeps it so


# --- the requests, through the real client ------------------------------------------------------


class FakeApiServer(BaseHTTPRequestHandler):
    """Answers the two paths the helper may call, as the API server would for a team member, and
    records every path asked for."""

    asked: ClassVar[list[str]] = []
    credentials: ClassVar[list[str | None]] = []
    answers: ClassVar[dict[str, Any]] = {}

    def do_GET(self) -> None:
        FakeApiServer.asked.append(self.path)
        FakeApiServer.credentials.append(self.headers.get("Authorization"))
        body = FakeApiServer.answers.get(self.path.split("?")[0])
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps(body or {"kind": "Status", "code": 404}).encode())

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeApiServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "team",
        "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{server.server_address[1]}"}}],
        "users": [{"name": "u", "user": {"token": "a-team-members-token"}}],
        "contexts": [{"name": "team", "context": {"cluster": "c", "user": "u", "namespace": "vision"}}],
    }))
    from kubernetes.config import kube_config

    monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", str(kubeconfig))  # $KUBECONFIG, as read at import
    monkeypatch.setattr(queue_status, "SERVICE_ACCOUNT_NAMESPACE", tmp_path / "not-in-a-pod")
    FakeApiServer.asked, FakeApiServer.credentials = [], []
    yield kubeconfig
    server.shutdown()


def test_it_reads_the_namespaces_workloads_and_its_local_queues_pending_workloads_and_nothing_else(api: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = workload("trainjob-mnist-3f2a1", ("TrainJob", "mnist"), [NO_QUOTA])
    # The path of Kueue's docs (site/content/en/docs/tasks/manage/monitor_pending_workloads/
    # pending_workloads_on_demand.md, "Local Queue visibility") for namespace vision's `default`.
    visibility = "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/vision/localqueues/default/pendingworkloads"
    FakeApiServer.answers = {
        "/apis/kueue.x-k8s.io/v1beta2/namespaces/vision/workloads": {"items": [job]},
        visibility: {"kind": "PendingWorkloadsSummary", "items": [{"metadata": {"name": "trainjob-mnist-3f2a1"}, "positionInLocalQueue": 0, "positionInClusterQueue": 1}]},
    }
    assert queue_status.main(["mnist"]) == 0
    assert [p.split("?")[0] for p in FakeApiServer.asked] == ["/apis/kueue.x-k8s.io/v1beta2/namespaces/vision/workloads", visibility]
    assert FakeApiServer.credentials == ["Bearer a-team-members-token"] * 2  # the caller's own rights, both times
    assert "pending: 0 of your team's workloads ahead of it in its LocalQueue, 1 in your team's ClusterQueue" in capsys.readouterr().out


def test_a_refusal_is_one_line_naming_the_namespace(api: Path, capsys: pytest.CaptureFixture[str]) -> None:
    FakeApiServer.answers = {}
    assert queue_status.main(["mnist", "-n", "nlp"]) == 1
    assert capsys.readouterr().err.startswith("queue-status: cannot read namespace nlp's queue: ")
