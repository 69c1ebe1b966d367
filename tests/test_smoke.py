"""`python -m stacks smoke`: the manifests it starts on a live cluster, how it reads the
cluster's answers, and how it exits where there is nothing to smoke-test or no cluster."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from stackmodel.config import load, validate
from stackmodel.schema import GkeClusterConfig, GpuPool
from tests.conftest import base_gke, with_changes
from tests.support import crds
from tests.support.validation import validate as validate_object
from tooling.cli import main
from tooling.smoke import (
    EXIT_CANNOT_SMOKE,
    EXIT_NO_CLUSTER,
    Options,
    dcgm_series,
    dcgm_skip_reason,
    default_namespace,
    gpu_trainjob,
    job_state,
    kubeconfig_source,
    nvidia_smi_job,
    prometheus_query_path,
    run_id,
    smoke,
)


def gpu_pools(stack: str) -> list[GpuPool]:
    cluster = load(stack).cluster
    assert isinstance(cluster, GkeClusterConfig)
    return cluster.gpu_pools


SHIPPED_POOLS = {f"{stack}-{pool.name}": pool for stack in ("dev", "prod") for pool in gpu_pools(stack)}
POOLS = [pytest.param(pool, id=name) for name, pool in SHIPPED_POOLS.items()]
# The labels that select each shipped pool's nodes: GKE's accelerator label (and its Spot
# label on Spot pools), cloud.google.com/kubernetes-engine/docs/how-to/gpus and
# .../concepts/spot-vms, plus our own pool label (facts/node_labels.py POOL_LABEL).
SELECTORS = {
    "dev-l4": {
        "cloud.google.com/gke-accelerator": "nvidia-l4",
        "mlplatform.dev/gpu-pool": "l4",
        "cloud.google.com/gke-spot": "true",
    },
    "prod-l4": {"cloud.google.com/gke-accelerator": "nvidia-l4", "mlplatform.dev/gpu-pool": "l4"},
    "prod-h100": {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb", "mlplatform.dev/gpu-pool": "h100"},
}
# GKE's taint on GPU nodes, as a toleration (cloud.google.com/kubernetes-engine/docs/how-to/gpus).
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
LONGEST_POOL = GpuPool(name="p" * 40, accelerator="nvidia-l4", machine_type="g2-standard-24", max=1)


def test_every_shipped_pool_has_its_selector_listed() -> None:
    assert list(SHIPPED_POOLS) == list(SELECTORS)


@pytest.mark.parametrize(("pool", "selector"), [pytest.param(pool, SELECTORS.get(name), id=name) for name, pool in SHIPPED_POOLS.items()])
def test_nvidia_smi_job_is_a_valid_job_pinned_to_its_pool(pool: GpuPool, selector: dict[str, str]) -> None:
    job = nvidia_smi_job(pool, "team-a", "abc123")
    assert validate_object(job) == []
    pod = job["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == selector
    assert pod["tolerations"] == [GPU_TOLERATION]
    assert pod["containers"][0]["command"] == ["nvidia-smi"]
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert job["spec"]["template"]["metadata"]["labels"]["sidecar.istio.io/inject"] == "false"
    assert job["spec"]["backoffLimit"] == 0


@pytest.mark.skipif(not crds.available(), reason=crds.MISSING)
@pytest.mark.parametrize("pool", [*POOLS, pytest.param(LONGEST_POOL, id="40-character-pool")])
def test_gpu_trainjob_is_valid_and_targets_the_pools_runtime(pool: GpuPool) -> None:
    trainjob = gpu_trainjob(pool, "team-a", "abc123")
    assert validate_object(trainjob) == []
    assert trainjob["spec"]["runtimeRef"]["name"] == f"torch-distributed-{pool.name}"
    assert trainjob["spec"]["trainer"]["numNodes"] == 1
    assert trainjob["spec"]["trainer"]["resourcesPerNode"]["limits"] == {"nvidia.com/gpu": "1"}
    # The CRD's CEL rules, which schema validation does not run: an RFC 1035 label of <= 63.
    name = trainjob["metadata"]["name"]
    assert len(name) <= 63 and name[0].isalpha() and name.replace("-", "").isalnum() and name == name.lower()


def test_the_nvidia_smi_image_comes_through_the_stacks_mirror() -> None:
    from facts.image_refs import ImagePolicy

    pool = next(iter(SHIPPED_POOLS.values()))
    plain = nvidia_smi_job(pool, "ns", "abc123")["spec"]["template"]["spec"]["containers"][0]["image"]
    mirrored = nvidia_smi_job(pool, "ns", "abc123", ImagePolicy(mirror="registry.acme.internal/mirror"))
    assert plain.startswith("nvidia/cuda:")
    assert mirrored["spec"]["template"]["spec"]["containers"][0]["image"] == f"registry.acme.internal/mirror/docker.io/{plain}"


def test_longest_pool_names_fit_in_a_job_name() -> None:
    assert len(nvidia_smi_job(LONGEST_POOL, "ns", run_id(0))["metadata"]["name"]) <= 63


def test_job_state_reads_complete_and_failed_conditions() -> None:
    assert job_state({"status": {}}) == ("pending", "not finished")
    assert job_state({"status": {"conditions": [{"type": "Complete", "status": "True"}]}})[0] == "succeeded"
    failed = {"status": {"conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "x"}]}}
    assert job_state(failed) == ("failed", "BackoffLimitExceeded: x")
    assert job_state({"status": {"conditions": [{"type": "Complete", "status": "False"}]}})[0] == "pending"


def test_dcgm_series_lists_each_gpu_and_rejects_errors() -> None:
    response = {
        "status": "success",
        "data": {"result": [{"metric": {"Hostname": "gke-l4-1", "gpu": "0", "modelName": "NVIDIA L4"}, "value": [0, "3"]}]},
    }
    assert dcgm_series(response) == ["gke-l4-1/gpu0 NVIDIA L4"]
    assert dcgm_series({"status": "success", "data": {"result": []}}) == []
    with pytest.raises(RuntimeError, match="bad_data"):
        dcgm_series({"status": "error", "error": "bad_data"})


def test_prometheus_is_queried_through_the_api_server_service_proxy() -> None:
    assert prometheus_query_path() == "/api/v1/namespaces/monitoring/services/prometheus-operated:9090/proxy/api/v1/query"


def test_dcgm_check_is_skipped_with_a_reason_when_the_stack_has_no_dcgm_in_prometheus() -> None:
    from stackmodel.config import validate
    from tests.conftest import base_gke, with_changes

    assert dcgm_skip_reason(load("dev")) is None
    off = validate(with_changes(base_gke(), {"mlplatform:components.dcgmExporter": {"enabled": False}}), "test")
    assert dcgm_skip_reason(off) == "the DCGM exporter is off in this stack"


def test_jobs_run_in_the_first_teams_namespace_else_default() -> None:
    from stackmodel.config import validate
    from tests.conftest import base_gke

    assert default_namespace(load("dev")) == "vision"
    assert default_namespace(validate(base_gke(), "test")) == "default"


def test_kubeconfig_source_follows_kubectls_order(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("apiVersion: v1\n")
    assert kubeconfig_source({"KUBECONFIG": f"/nope:{config}"}, tmp_path) == f"KUBECONFIG ({config})"
    assert kubeconfig_source({"KUBECONFIG": "/nope"}, tmp_path) is None
    assert kubeconfig_source({}, tmp_path) is None
    assert kubeconfig_source({"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, tmp_path) == "in-cluster service account"
    (tmp_path / ".kube").mkdir()
    (tmp_path / ".kube" / "config").write_text("apiVersion: v1\n")
    assert kubeconfig_source({}, tmp_path) == str(tmp_path / ".kube" / "config")


def test_run_ids_are_short_and_lowercase() -> None:
    assert run_id(0) == "000000"
    assert run_id(35) == "00000z"
    assert len(run_id(1_790_000_000)) == 6 and run_id(1_790_000_000).isalnum()


def test_smoke_without_kubeconfig_exits_3_and_says_how_to_get_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["smoke", "dev"]) == EXIT_NO_CLUSTER
    err = capsys.readouterr().err
    assert "no kubeconfig" in err
    assert "gcloud container clusters get-credentials ml-dev --location us-central1 --project acme-ml-dev" in err


def test_smoke_with_a_missing_kubeconfig_file_exits_3(tmp_path: Path) -> None:
    err = io.StringIO()
    options = Options(kubeconfig=str(tmp_path / "absent"))
    assert smoke(load("dev"), "dev", options, out=io.StringIO(), err=err) == EXIT_NO_CLUSTER
    assert "no kubeconfig" in err.getvalue()


def test_smoke_without_the_gke_auth_plugin_stops_before_calling_the_cluster(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    monkeypatch.setattr("shutil.which", lambda name: None)
    err = io.StringIO()
    assert smoke(load("dev"), "dev", Options(kubeconfig=str(kubeconfig)), out=io.StringIO(), err=err) == EXIT_NO_CLUSTER
    assert "gke-gcloud-auth-plugin: the GKE auth plugin" in err.getvalue()
    assert "gcloud components install gke-gcloud-auth-plugin" in err.getvalue()


def test_smoke_of_a_kind_stack_exits_2_and_points_to_the_e2e_suite(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["smoke", "kind"]) == EXIT_CANNOT_SMOKE
    assert "make e2e" in capsys.readouterr().err


def test_smoke_of_a_gke_stack_without_gpu_pools_exits_2() -> None:
    config = validate(with_changes(base_gke(), {"mlplatform:cluster.gpuPools": []}), "test")
    err = io.StringIO()
    assert smoke(config, "test", Options(), out=io.StringIO(), err=err) == EXIT_CANNOT_SMOKE
    assert "no GPU pools" in err.getvalue()


class FakeApi:
    """The parts of the Kubernetes client `smoke` uses, answering from dicts."""

    def __init__(self, trainjob_conditions: dict[str, str], refuse: set[str]):
        self.trainjob_conditions, self.refuse = trainjob_conditions, refuse
        self.created: list[dict[str, Any]] = []
        self.deleted: list[str] = []

    def sanitize_for_serialization(self, obj: object) -> object:
        return obj

    # BatchV1Api
    def create_namespaced_job(self, namespace: str, body: dict[str, object]) -> None:
        self.created.append(body)

    def read_namespaced_job(self, name: str, namespace: str) -> dict[str, object]:
        return {"status": {"conditions": [{"type": "Complete", "status": "True"}]}}

    # CustomObjectsApi
    def create_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, body: dict[str, Any]) -> None:
        from kubernetes.client.exceptions import ApiException

        name = body["metadata"]["name"]
        if any(pool in name for pool in self.refuse):
            raise ApiException(status=422, reason="Unprocessable Entity")
        self.created.append(body)

    def get_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, name: str) -> dict[str, object]:
        kind = next(v for k, v in self.trainjob_conditions.items() if k in name)
        return {"status": {"conditions": [{"type": kind, "status": "True", "reason": "Boom", "message": "exit 1"}]}}

    def delete_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, name: str) -> None:
        self.deleted.append(name)


def test_live_run_reports_each_pool_and_cleans_up_what_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    import kubernetes.client

    from tooling import smoke as smoke_module

    api = FakeApi(trainjob_conditions={"-l4-": "Complete", "-h100-": "Failed", "-a100-": "Complete"}, refuse={"-a100-"})
    monkeypatch.setattr(kubernetes.client, "BatchV1Api", lambda _: api)
    monkeypatch.setattr(kubernetes.client, "CustomObjectsApi", lambda _: api)
    pools = [*gpu_pools("prod"), GpuPool(name="a100", accelerator="nvidia-tesla-a100", machine_type="a2-highgpu-1g", max=1)]
    outcomes = smoke_module._gpu_workloads(api, pools, "team-a", "run001", timeout=5)
    lines = [str(o) for o in outcomes]
    assert lines[0] == "PASS nvidia-smi on pool l4 (Job team-a/smoke-smi-l4-run001): completed"
    assert lines[1] == "PASS TrainJob on torch-distributed-l4 (team-a/smoke-train-l4-run001): completed"
    assert lines[3] == "FAIL TrainJob on torch-distributed-h100 (team-a/smoke-train-h100-run001): Boom: exit 1"
    assert lines[5].startswith("FAIL TrainJob on torch-distributed-a100 (team-a/smoke-train-a100-run001): not created: 422")
    assert [o.status for o in outcomes].count("PASS") == 4
    assert api.deleted == ["smoke-train-l4-run001"], "only TrainJobs that passed are deleted"
    assert [b["kind"] for b in api.created] == ["Job", "TrainJob", "Job", "TrainJob", "Job"]
