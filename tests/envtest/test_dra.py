"""The DRA objects a stack with a `gpuAllocation: dra` pool authors, judged by the real v1.36 API
server (its full render needs NVIDIA's chart, which the test mirror lacks, so test_apply cannot
apply it): the team's ResourceClaimTemplate in resource.k8s.io/v1, and a pod as a DRA runtime
variant's template makes it (the pod's claim from that template, its container using it)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from kubernetes.client.exceptions import ApiException

from components.profiles.args import teams_args
from components.profiles.dra import claim_templates
from runtimes import dra
from runtimes.args import training_runtimes_args
from runtimes.catalog import cluster_training_runtimes, dra_runtimes, runtime_priority_class
from tests.envtest.conftest import kept
from tests.support.apiserver import Cluster, api_message
from tests.test_dra import CONFIG
from tooling.schemas import crd_folders
from tooling.waiting import wait_for

NAMESPACE = "vision"


def test_the_api_server_serves_resource_v1_and_takes_the_claim_template_and_a_claiming_pod(cluster: Cluster) -> None:
    assert "ResourceClaimTemplate" in cluster.resources("resource.k8s.io/v1")
    (team,) = teams_args(CONFIG)
    (template,) = claim_templates(team)
    runtime = next(r for r in cluster_training_runtimes(training_runtimes_args(CONFIG)) if r["metadata"]["name"] == "torch-distributed-l4")
    pod_template = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "dra-node-0", "namespace": NAMESPACE, **pod_template["metadata"]},
        "spec": {**pod_template["spec"], "serviceAccountName": "default", "restartPolicy": "Never"},
    }
    world = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": NAMESPACE}},
        template,
        runtime_priority_class(),  # the runtimes' pods name it; the Priority admission plugin refuses a pod naming none that exists
    ]
    with kept(cluster, world):
        assert cluster.apply(pod, dry_run=True) in (200, 201)
        # The same pod whose container names a claim the pod does not have is refused: the
        # API server does judge the claims.
        broken = copy.deepcopy(pod)
        broken["spec"]["containers"][0]["resources"]["claims"] = [{"name": "elsewhere"}]
        with pytest.raises(ApiException) as refused:
            cluster.apply(broken, dry_run=True)
        assert refused.value.status == 422


TRAINJOBS = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/{namespace}/trainjobs"


def trainjob(runtime: str, resources: dict[str, Any]) -> dict[str, Any]:
    spec = {"runtimeRef": {"name": runtime, "apiGroup": "trainer.kubeflow.org"}, "trainer": {"numNodes": 2, "resourcesPerNode": resources}}
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "dra-job", "namespace": NAMESPACE}, "spec": spec}


def refusal(cluster: Cluster, job: dict[str, Any]) -> str | None:
    try:
        cluster.request("POST", TRAINJOBS.format(namespace=NAMESPACE), job, [("dryRun", "All")])
    except ApiException as error:
        return api_message(error)
    return None


def test_a_trainjob_asking_a_dra_variant_for_nvidia_gpu_is_refused_and_cpu_alone_is_not(cluster: Cluster) -> None:
    runtimes = dra_runtimes(training_runtimes_args(CONFIG).gpu_pools)
    policy = dra.policy(runtimes)
    assert policy is not None
    folder = crd_folders()["kubeflow-trainer-v2.3.0"]
    trainjob_crd = yaml.safe_load((folder / "trainer.kubeflow.org_trainjobs.yaml").read_text())
    world = [trainjob_crd, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}, policy, dra.binding(NAMESPACE)]
    gpus = trainjob("torch-distributed-l4", {"limits": {"nvidia.com/gpu": "2", "cpu": "8"}})
    with kept(cluster, world):
        wait_for("the DRA guard's binding", lambda: [] if refusal(cluster, gpus) else ["not yet in force"], timeout=60, interval=0.1)
        assert "its nodes have no nvidia.com/gpu" in (refusal(cluster, gpus) or "")
        assert refusal(cluster, trainjob("torch-distributed-l4", {"limits": {"cpu": "8", "memory": "32Gi"}})) is None
        # A device-plugin runtime is not this policy's business.
        assert refusal(cluster, trainjob("torch-distributed", {"limits": {"nvidia.com/gpu": "2"}})) is None
