"""The Spark driver policy (components/spark.py GPU_DRIVER_POLICY) enforced by a real API server on
SparkApplications in a team namespace of the fixture with Katib, the Model Registry and Spark on:
a job whose executors ask for GPUs in sparkConf is admitted (Spark writes them into each executor pod,
which Kueue's pod integration queues); one whose executors ask for them where the operator's webhook
adds them after Kueue's, or whose driver asks for a GPU or names a Kueue queue, is refused with
the fix in its message (docs/spark.md); outside the team namespaces the policy is not in force.
The application is the one the Kubeflow SDK 0.5.0 writes for `SparkClient().submit_job(...)`
(its driver's account, cores and memory), with GPUs on the executors as Spark's own settings ask."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from components.spark import GPU_DRIVER_POLICY, SPARK_SERVICE_ACCOUNT
from tests.envtest.conftest import kept
from tests.support import mirror
from tests.support.apiserver import Cluster, api_message
from tests.support.renders import rendered
from tooling.waiting import wait_for

pytestmark = mirror.needed

STACK = "kind-kubeflow-options"
TEAM = "vision"
APPS = "/apis/sparkoperator.k8s.io/v1beta2/namespaces/{namespace}/sparkapplications"


def app(name: str, namespace: str = TEAM, driver: dict[str, Any] | None = None, executor: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "sparkoperator.k8s.io/v1beta2",
        "kind": "SparkApplication",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "type": "Python",
            "mode": "cluster",
            "image": "apache/spark:4.0.4",
            "sparkVersion": "4.0.4",
            "mainApplicationFile": "local:///opt/spark/app/spark_job.py",
            "driver": {"cores": 1, "memory": "512m", "serviceAccount": SPARK_SERVICE_ACCOUNT, **(driver or {})},
            "executor": {"instances": 2, "cores": 1, "memory": "2048m", **(executor or {})},
        },
    }


def refusal(cluster: Cluster, obj: dict[str, Any]) -> str | None:
    """None when the API server admits `obj` (a dry run), else its message."""
    try:
        cluster.request("POST", APPS.format(namespace=obj["metadata"]["namespace"]), obj, [("dryRun", "All")])
    except ApiException as error:
        return api_message(error)
    return None


GPU_DRIVER = {"gpu": {"name": "nvidia.com/gpu", "quantity": 1}}


@pytest.fixture(scope="module")
def in_force(cluster: Cluster) -> Iterator[None]:
    objects = [o.obj for o in rendered(STACK).objects]
    crds = [o for o in objects if o["kind"] == "CustomResourceDefinition" and o["spec"]["group"] == "sparkoperator.k8s.io"]
    world = crds + [o for o in objects if o["kind"] == "Namespace"]
    world += [o for o in objects if o["kind"].startswith("ValidatingAdmissionPolicy") and o["metadata"]["name"] == GPU_DRIVER_POLICY]
    assert len(world) > len(crds) + 2
    with kept(cluster, world):
        wait_for("the Spark driver policy", lambda: [] if refusal(cluster, app("probe", driver=GPU_DRIVER)) else ["not yet in force"], timeout=60, interval=0.1)
        yield


GPU_EXECUTOR_CONF = {
    "spark.executor.resource.gpu.amount": "1",
    "spark.executor.resource.gpu.vendor": "nvidia.com",
    "spark.executor.resource.gpu.discoveryScript": "/opt/spark/examples/src/main/scripts/getGpusResources.sh",
}
"""GPUs for the executors as Spark asks for them: written into each executor pod by Spark itself."""
GPU_CONTAINER = {"name": "gpu-sidecar", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": "1"}}}


def with_conf(obj: dict[str, Any], conf: dict[str, str]) -> dict[str, Any]:
    obj["spec"]["sparkConf"] = dict(conf)
    return obj


def test_gpu_executors_asked_for_in_spark_conf_are_admitted(cluster: Cluster, in_force: None) -> None:
    assert refusal(cluster, with_conf(app("gpu-executors"), GPU_EXECUTOR_CONF)) is None


@pytest.mark.parametrize(
    "executor",
    [
        {"gpu": {"name": "nvidia.com/gpu", "quantity": 1}},
        {"sidecars": [GPU_CONTAINER]},
        {"initContainers": [GPU_CONTAINER]},
    ],
    ids=["gpu", "sidecar", "init-container"],
)
def test_executor_gpus_the_operators_webhook_adds_after_kueues_are_refused(
    cluster: Cluster, in_force: None, executor: dict[str, Any]
) -> None:
    """The operator's pod webhook (spark-operator-webhook) runs after Kueue's (the API server orders
    mutating webhook configurations by name): GPUs it adds would never be queued."""
    message = refusal(cluster, app("gpu-executors", executor=executor))
    assert message is not None and "spec.executor.gpu" in message and "spark.executor.resource.gpu.amount" in message


def test_a_driver_asking_for_a_gpu_in_spark_conf_or_its_template_is_refused(cluster: Cluster, in_force: None) -> None:
    by_conf = with_conf(
        app("gpu-driver-conf"),
        {"spark.driver.resource.gpu.amount": "1", "spark.driver.resource.gpu.vendor": "nvidia.com"},
    )
    by_template = app("gpu-driver-template", driver={"template": {"spec": {"containers": [GPU_CONTAINER]}}})
    for obj in (by_conf, by_template):
        message = refusal(cluster, obj)
        assert message is not None and "give the GPUs to the executors" in message, obj["metadata"]["name"]


def test_a_driver_naming_a_queue_in_spark_conf_is_refused(cluster: Cluster, in_force: None) -> None:
    message = refusal(
        cluster,
        with_conf(app("queued-driver-conf"), {"spark.kubernetes.driver.label.kueue.x-k8s.io/queue-name": "default"}),
    )
    assert message is not None and "spec.driver.labels" in message


def test_a_driver_asking_for_a_gpu_is_refused_with_the_fix(cluster: Cluster, in_force: None) -> None:
    message = refusal(cluster, app("gpu-driver", driver=GPU_DRIVER))
    assert message is not None and "spec.driver.gpu" in message and "give the GPUs to the executors" in message


def test_a_driver_naming_a_queue_is_refused(cluster: Cluster, in_force: None) -> None:
    message = refusal(cluster, app("queued-driver", driver={"labels": {"kueue.x-k8s.io/queue-name": "default"}}))
    assert message is not None and "spec.driver.labels" in message


def test_outside_the_team_namespaces_the_policy_is_not_in_force(cluster: Cluster, in_force: None) -> None:
    cluster.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "spark-elsewhere"}})
    try:
        assert refusal(cluster, app("gpu-driver", namespace="spark-elsewhere", driver=GPU_DRIVER)) is None
    finally:
        cluster.request("DELETE", "/api/v1/namespaces/spark-elsewhere")
