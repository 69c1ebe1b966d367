"""`python -m stacks smoke <stack>`: after `pulumi up` of a GKE stack, prove on the live
cluster that each GPU pool really serves GPUs, to the platform's users and to monitoring:

- an `nvidia-smi` Job on each GPU pool (the pool's node selector and tolerations of its taints,
  from facts/node_labels.py, exactly as runtimes and Kueue flavors target it);
- a 1-node TrainJob on each GPU runtime variant (`torch-distributed-<pool>`) that
  asserts CUDA is visible to PyTorch;
- DCGM metrics in Prometheus (`DCGM_FI_DEV_GPU_UTIL`, through the API server's service
  proxy to Prometheus in namespace `monitoring`).

Manifests are built by pure functions (unit-tested against the real schemas); the
rest is polling the cluster until each check passes, fails or times out. Exit codes:
0 every check passed, 1 a check failed, 2 the stack cannot be smoke-tested (config),
3 no cluster to talk to (no kubeconfig, or no gke-gcloud-auth-plugin to sign in with).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal, TextIO

from facts.image_refs import ImagePolicy
from facts.node_labels import GPU_RESOURCE, POOL_LABEL, pool_selector, pool_taints
from facts.versions import SMOKE_CUDA_IMAGE, image
from runtimes import catalog
from stackmodel.components.dcgm import DCGM_EXPORTER, DcgmSource
from stackmodel.components.monitoring import MONITORING, MetricsBackend
from stackmodel.schema import GkeClusterConfig, GpuPool
from stackmodel.stack import PlatformConfig
from tooling import prerequisites
from tooling.waiting import WaitTimeout, wait_for

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CANNOT_SMOKE = 2
EXIT_NO_CLUSTER = 3

APP_LABEL = "app.kubernetes.io/name"
APP = "mlplatform-smoke"
# Team namespaces are Istio-injected; a sidecar would keep a finished Job's pod running.
NO_SIDECAR = {"sidecar.istio.io/inject": "false"}
TRAINER_API = "trainer.kubeflow.org/v1alpha1"
MONITORING_NAMESPACE = "monitoring"
# The operator creates this Service for every Prometheus in the namespace, whatever the release name.
PROMETHEUS_SERVICE = "prometheus-operated:9090"
DCGM_QUERY = "DCGM_FI_DEV_GPU_UTIL"
GPU_CHECK = (
    "import torch; assert torch.cuda.is_available(), 'CUDA is not available to PyTorch'; "
    "print('cuda devices:', torch.cuda.device_count(), torch.cuda.get_device_name(0)); "
    "print('sum on gpu:', torch.ones(1024, device='cuda').sum().item())"
)
IN_CLUSTER = "in-cluster service account"
JOB_TTL_SECONDS = 3600
"""Finished smoke Jobs stay an hour for `kubectl logs`, then Kubernetes deletes them."""

State = Literal["pending", "succeeded", "failed"]


@dataclass(frozen=True)
class Outcome:
    check: str
    status: Literal["PASS", "FAIL", "SKIP"]
    detail: str

    def __str__(self) -> str:
        return f"{self.status} {self.check}: {self.detail}"


# --- manifests ----------------------------------------------------------------------


TORCH_RUNTIME = next(spec for spec in catalog.RUNTIMES if spec.policy is catalog.Policy.TORCH)
"""The runtime the GPU TrainJob runs on (its image has PyTorch with CUDA)."""


def runtime_name(pool: GpuPool) -> str:
    """The pool's GPU variant of torch-distributed, named as the runtime catalog names it."""
    return catalog.runtime_name(TORCH_RUNTIME, pool)


def object_name(check: str, pool: GpuPool, run: str) -> str:
    """`smoke-<check>-<pool>-<run>`: at most 63 characters (pool names are at most 40)."""
    return f"smoke-{check}-{pool.name}-{run}"


def labels(pool: GpuPool) -> dict[str, str]:
    return {APP_LABEL: APP, POOL_LABEL: pool.name}


def nvidia_smi_job(pool: GpuPool, namespace: str, run: str, images: ImagePolicy | None = None) -> dict[str, Any]:
    """A Job that runs `nvidia-smi` on one GPU of `pool`, and nowhere else; its image pulled
    the way the stack pulls every image (`images`: through its mirror, if any)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": object_name("smi", pool, run), "namespace": namespace, "labels": labels(pool)},
        "spec": {
            "backoffLimit": 0,
            "ttlSecondsAfterFinished": JOB_TTL_SECONDS,
            "template": {
                "metadata": {"labels": {**labels(pool), **NO_SIDECAR}},
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": pool_selector(pool),
                    "tolerations": [t.toleration() for t in pool_taints(pool)],
                    "containers": [
                        {
                            "name": "nvidia-smi",
                            "image": (images or ImagePolicy()).image(image(SMOKE_CUDA_IMAGE)),
                            "command": ["nvidia-smi"],
                            "resources": {
                                "requests": {"cpu": "100m", "memory": "128Mi", GPU_RESOURCE: "1"},
                                "limits": {"memory": "128Mi", GPU_RESOURCE: "1"},
                            },
                        }
                    ],
                },
            },
        },
    }


def gpu_trainjob(pool: GpuPool, namespace: str, run: str) -> dict[str, Any]:
    """A 1-node TrainJob on the pool's runtime variant that fails unless PyTorch sees a GPU."""
    return {
        "apiVersion": TRAINER_API,
        "kind": "TrainJob",
        "metadata": {"name": object_name("train", pool, run), "namespace": namespace, "labels": labels(pool)},
        "spec": {
            "runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime", "name": runtime_name(pool)},
            "trainer": {
                "numNodes": 1,
                "command": ["python", "-c", GPU_CHECK],
                "resourcesPerNode": {
                    "requests": {"cpu": "1", "memory": "4Gi", GPU_RESOURCE: "1"},
                    "limits": {GPU_RESOURCE: "1"},
                },
            },
        },
    }


# --- reading the cluster's answers -----------------------------------------------------


def true_condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    """The object's status condition of type `kind` if it is True, else None."""
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind and condition.get("status") == "True":
            return condition
    return None


def job_state(job: Mapping[str, Any]) -> tuple[State, str]:
    """A Job's or a TrainJob's outcome (both say it with Complete/Failed conditions), with the reason."""
    if true_condition(job, "Complete"):
        return "succeeded", "completed"
    failed = true_condition(job, "Failed")
    if failed:
        return "failed", f"{failed.get('reason', 'Failed')}: {failed.get('message', '')}".rstrip(": ")
    return "pending", "not finished"


def prometheus_query_path(namespace: str = MONITORING_NAMESPACE, service: str = PROMETHEUS_SERVICE) -> str:
    """The API server path that proxies to Prometheus' query API (needs `services/proxy` get)."""
    return f"/api/v1/namespaces/{namespace}/services/{service}/proxy/api/v1/query"


def dcgm_series(response: Mapping[str, Any]) -> list[str]:
    """The GPU series in a Prometheus query response, as `Hostname/gpu modelName` lines."""
    if response.get("status") != "success":
        raise RuntimeError(f"Prometheus answered {response.get('status')}: {response.get('error', response)}")
    series = []
    for sample in response.get("data", {}).get("result", []):
        metric = sample.get("metric", {})
        series.append(f"{metric.get('Hostname', '?')}/gpu{metric.get('gpu', '?')} {metric.get('modelName', '')}".strip())
    return series


def dcgm_skip_reason(config: PlatformConfig) -> str | None:
    """Why this stack has no DCGM metrics in an in-cluster Prometheus to query, or None."""
    if not config.enabled(DCGM_EXPORTER):
        return "the DCGM exporter is off in this stack"
    if config.components[DCGM_EXPORTER].source is DcgmSource.GKE_MANAGED:
        return "DCGM metrics go to Google Cloud Managed Prometheus; query them in Cloud Monitoring"
    if not config.enabled(MONITORING) or config.components[MONITORING].backend is not MetricsBackend.KUBE_PROMETHEUS_STACK:
        return f"no Prometheus in namespace {MONITORING_NAMESPACE} in this stack"
    return None


# --- where the cluster is ----------------------------------------------------------------


def kubeconfig_source(environ: Mapping[str, str], home: Path) -> str | None:
    """Where the Kubernetes client will find credentials, or None if nowhere."""
    if environ.get("KUBECONFIG"):
        found = [p for p in environ["KUBECONFIG"].split(os.pathsep) if p and Path(p).is_file()]
        return f"KUBECONFIG ({', '.join(found)})" if found else None
    if (home / ".kube" / "config").is_file():
        return str(home / ".kube" / "config")
    if environ.get("KUBERNETES_SERVICE_HOST"):
        return IN_CLUSTER
    return None


def credentials_hint(cluster: GkeClusterConfig, project: str | None) -> str:
    return (
        f"gcloud container clusters get-credentials {cluster.name} --location {cluster.location}"
        f" --project {project or '<project>'}"
    )


def cannot_smoke(config: PlatformConfig) -> str | None:
    """Why this stack has nothing for the GPU smoke test to check, or None."""
    cluster = config.cluster
    if not isinstance(cluster, GkeClusterConfig):
        return "a kind stack has no GPUs; the smoke test is for GKE stacks (kind has `make e2e`)"
    if not cluster.gpu_pools:
        return "this stack has no GPU pools (mlplatform:cluster.gpuPools) to smoke-test"
    return None


def default_namespace(config: PlatformConfig) -> str:
    """The first team's namespace (its default LocalQueue admits the jobs, as it would a
    user's), else `default`."""
    return config.teams[0].name if config.teams else "default"


# --- the live run -----------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    timeout: float = 1800.0
    """Seconds; GPU pools that scale from zero (spot, DWS) need many minutes."""


def run_id(now: float) -> str:
    """A short suffix that keeps reruns apart (base-36 seconds, 6 characters)."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    value, out = int(now) % 36**6, ""
    for _ in range(6):
        value, rest = divmod(value, 36)
        out = digits[rest] + out
    return out


def smoke(config: PlatformConfig, stack: str, options: Options, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run every check against the live cluster; print one PASS/FAIL/SKIP line each."""
    out, err = out or sys.stdout, err or sys.stderr
    reason = cannot_smoke(config)
    if reason:
        print(f"smoke {stack}: {reason}", file=err)
        return EXIT_CANNOT_SMOKE
    cluster = config.cluster
    assert isinstance(cluster, GkeClusterConfig)
    source = options.kubeconfig or kubeconfig_source(os.environ, Path.home())
    if source is None or (options.kubeconfig and not Path(options.kubeconfig).is_file()):
        print(
            f"smoke {stack}: skipped, no kubeconfig: set KUBECONFIG or pass --kubeconfig, e.g. after\n"
            f"  {credentials_hint(cluster, config.project)}",
            file=err,
        )
        return EXIT_NO_CLUSTER

    lacking = [] if source == IN_CLUSTER else prerequisites.missing(prerequisites.COMMANDS["smoke"])
    if lacking:
        print(f"smoke {stack}: needs tools this machine does not have:\n  " + "\n  ".join(lacking), file=err)
        return EXIT_NO_CLUSTER

    from kubernetes import client
    from kubernetes import config as kube_config

    if source == IN_CLUSTER:
        kube_config.load_incluster_config()
    else:
        kube_config.load_kube_config(config_file=options.kubeconfig, context=options.context)
    api = client.ApiClient()
    namespace = options.namespace or default_namespace(config)
    run = run_id(time.time())
    print(f"smoke {stack}: kubeconfig {source}, namespace {namespace}, run {run}", file=out)

    images = ImagePolicy(mirror=config.images.mirror)
    outcomes = _gpu_workloads(api, cluster.gpu_pools, namespace, run, options.timeout, images)
    skip = dcgm_skip_reason(config)
    outcomes.append(Outcome(DCGM_QUERY, "SKIP", skip) if skip else _dcgm(api, options.timeout))
    for outcome in outcomes:
        print(outcome, file=out)
    return EXIT_FAILED if any(o.status == "FAIL" for o in outcomes) else EXIT_OK


def _gpu_workloads(
    api: Any, pools: list[GpuPool], namespace: str, run: str, timeout: float, images: ImagePolicy | None = None
) -> list[Outcome]:
    """Start every Job and TrainJob at once (pools scale up in parallel), then poll them."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    batch, custom = client.BatchV1Api(api), client.CustomObjectsApi(api)
    group, version = TRAINER_API.split("/")

    def read_job(name: str) -> tuple[State, str]:
        return job_state(api.sanitize_for_serialization(batch.read_namespaced_job(name, namespace)))

    def read_trainjob(name: str) -> tuple[State, str]:
        return job_state(custom.get_namespaced_custom_object(group, version, namespace, "trainjobs", name))

    watched: dict[str, Callable[[], tuple[State, str]]] = {}
    results: dict[str, tuple[State, str]] = {}
    delete_when_passed: dict[str, Callable[[], object]] = {}

    def start(check: str, create: Callable[[], object], read: Callable[[], tuple[State, str]]) -> None:
        watched[check] = read
        try:
            create()
        except ApiException as error:
            results[check] = ("failed", f"not created: {error.status} {error.reason}: {error.body}")

    for pool in pools:
        job = nvidia_smi_job(pool, namespace, run, images)
        name = job["metadata"]["name"]
        start(
            f"nvidia-smi on pool {pool.name} (Job {namespace}/{name})",
            partial(batch.create_namespaced_job, namespace, job),
            partial(read_job, name),
        )
        trainjob = gpu_trainjob(pool, namespace, run)
        name = trainjob["metadata"]["name"]
        check = f"TrainJob on {runtime_name(pool)} ({namespace}/{name})"
        start(
            check,
            partial(custom.create_namespaced_custom_object, group, version, namespace, "trainjobs", trainjob),
            partial(read_trainjob, name),
        )
        # Jobs delete themselves (TTL); a TrainJob that failed stays for `kubectl describe`.
        delete_when_passed[check] = partial(custom.delete_namespaced_custom_object, group, version, namespace, "trainjobs", name)

    def pending() -> list[str]:
        for check, read in watched.items():
            if check not in results:
                state, detail = read()
                if state != "pending":
                    results[check] = (state, detail)
        return [c for c in watched if c not in results]

    with contextlib.suppress(WaitTimeout):  # each unfinished check is reported below, with the others
        wait_for("GPU workloads", pending, timeout, interval=10)
    outcomes = []
    for check in watched:
        state, detail = results.get(check, ("pending", f"not finished after {timeout:.0f}s"))
        outcomes.append(Outcome(check, "PASS" if state == "succeeded" else "FAIL", detail))
        if state == "succeeded" and check in delete_when_passed:
            with contextlib.suppress(ApiException):  # already gone: nothing to clean up
                delete_when_passed[check]()
    return outcomes


def _dcgm(api: Any, timeout: float) -> Outcome:
    """Poll Prometheus until DCGM reports at least one GPU (exporters need a scrape or two)."""
    from kubernetes.client.exceptions import ApiException

    found: list[str] = []

    def pending() -> list[str]:
        try:
            response = api.call_api(
                prometheus_query_path(), "GET", query_params=[("query", DCGM_QUERY)],
                auth_settings=["BearerToken"], _preload_content=False,
            )
        except ApiException as error:  # Prometheus not up yet, or not there at all
            return [f"{prometheus_query_path()} answered {error.status} {error.reason}"]
        found[:] = dcgm_series(json.loads(response[0].data))
        return [] if found else [f"no {DCGM_QUERY} series yet"]

    try:
        wait_for(f"{DCGM_QUERY} in Prometheus", pending, min(timeout, 900), interval=15)
    except (WaitTimeout, RuntimeError) as error:
        return Outcome(DCGM_QUERY, "FAIL", str(error))
    return Outcome(DCGM_QUERY, "PASS", f"{len(found)} GPUs report: {', '.join(found[:8])}")
