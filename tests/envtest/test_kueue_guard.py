"""The GPU-accounting admission policy (runtimes/kueue_guard.py) enforced by a real API server on
TrainJobs the Kubeflow SDK builds (`TrainerClient().train(...)`, the data scientists' own call)
against the dev stack's runtimes, read from the cluster as the SDK reads them: the jobs Kueue
0.19.2 and Trainer 2.3.0 would count differently are refused by the API server itself, with the
fix in its message; the rest are admitted. The cases the SDK cannot build (a limits-only or
empty resourcesPerNode, a team's own TrainingRuntime, Kueue's rewrite of a job admitted before
the policy existed) are sent as TrainJobs of our own."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from facts.priorities import PRIORITY_LABEL
from runtimes.args import training_runtimes_args
from runtimes.catalog import cluster_training_runtimes
from runtimes.kueue_guard import TRAINJOB_GPU_POLICY
from stackmodel.config import load
from tests.envtest.conftest import kept
from tests.support import mirror
from tests.support.apiserver import Cluster, api_message
from tests.support.renders import rendered
from tooling.waiting import wait_for

pytestmark = mirror.needed

STACK = "dev"
TEAM, OTHER_TEAM = "vision", "research"
"""Two teams of the dev fixture."""
TRAINJOBS = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/{namespace}/trainjobs"
CPU_AND_MEMORY = {"cpu": 8, "memory": "32Gi"}
"""The SDK's resources_per_node without "gpu": what Kueue 0.19.2 would charge no GPUs for."""


def train() -> None:
    """The training function the SDK ships to the nodes (never run here: no pod runs)."""
    print("training")


def world() -> list[dict[str, Any]]:
    """What the SDK and the policy need of the dev render: the Trainer CRDs, the Namespaces, the
    runtimes, the Trainer's public ConfigMap (the SDK reads its version there), the policy and
    its bindings."""
    objects = [o.obj for o in rendered(STACK).objects]
    trainer_crds = [o for o in objects if o["kind"] == "CustomResourceDefinition" and o["spec"]["group"] == "trainer.kubeflow.org"]
    found = [o for o in objects if o["kind"] in ("Namespace", "ClusterTrainingRuntime")]
    found += [o for o in objects if o["kind"] == "ValidatingAdmissionPolicy" and o["metadata"]["name"] == TRAINJOB_GPU_POLICY]
    found += [o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding" and o["spec"]["policyName"] == TRAINJOB_GPU_POLICY]
    public = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "kubeflow-trainer-public"]
    return trainer_crds + found + public


def gpus_per_node() -> dict[str, int]:
    """Each GPU runtime of the dev stack and the GPUs its node container asks for, from the
    runtimes the program builds (runtimes/catalog.py; the render holds these same objects)."""
    found = {}
    for runtime in cluster_training_runtimes(training_runtimes_args(load(STACK))):
        for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
            for container in job["template"]["spec"]["template"]["spec"]["containers"]:
                limit = ((container.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu")
                if limit is not None:
                    found[runtime["metadata"]["name"]] = int(limit)
    return found


GPU_RUNTIMES = gpus_per_node()
BASE_RUNTIMES = ["torch-distributed", "deepspeed-distributed", "mlx-distributed", "jax-distributed"]


def trainjob(runtime: str, resources: dict[str, Any] | None = None, kind: str | None = None, namespace: str = TEAM) -> dict[str, Any]:
    """A TrainJob of our own, for what the SDK cannot build."""
    ref: dict[str, Any] = {"name": runtime, "apiGroup": "trainer.kubeflow.org", **({"kind": kind} if kind else {})}
    spec: dict[str, Any] = {"runtimeRef": ref}
    if resources is not None:
        spec["trainer"] = {"numNodes": 2, "resourcesPerNode": resources}
    name = f"job-{uuid.uuid4().hex[:8]}"
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def refusal(cluster: Cluster, job: dict[str, Any], dry_run: bool = False) -> str | None:
    """None when the API server admits `job` (creating it), else its message."""
    try:
        cluster.request("POST", TRAINJOBS.format(namespace=job["metadata"]["namespace"]), job, [("dryRun", "All")] if dry_run else [])
    except ApiException as error:
        return api_message(error)
    return None


def policy_in_force(cluster: Cluster, namespace: str, wanted: bool) -> None:
    """Until the API server enforces the policy in `namespace` (or, `wanted` False, no longer does):
    a dry run of a job it must refuse tells."""

    def pending() -> list[str]:
        refused = refusal(cluster, trainjob(next(iter(GPU_RUNTIMES)), {"limits": {"cpu": "1"}}, namespace=namespace), dry_run=True)
        return [] if (refused is not None) == wanted else [f"the policy is {'not yet' if wanted else 'still'} in force in {namespace}"]

    wait_for("the admission policy's binding", pending, timeout=60, interval=0.1)


def bound_namespace(binding: dict[str, Any]) -> str:
    return str(binding["spec"]["matchResources"]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"])


@pytest.fixture(scope="module")
def sdk(cluster: Cluster) -> Iterator[Any]:
    """The Kubeflow SDK's TrainerClient for the vision namespace, on this control plane, once
    the policy is in force in every team namespace; the jobs it made deleted after."""
    from kubeflow.trainer import KubernetesBackendConfig, TrainerClient

    objects = world()
    teams = [bound_namespace(o) for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding"]
    assert TEAM in teams and OTHER_TEAM in teams
    with kept(cluster, objects):
        for namespace in teams:
            policy_in_force(cluster, namespace, True)
        yield TrainerClient(KubernetesBackendConfig(namespace=TEAM, client_configuration=cluster.plane.configuration()))
        for namespace in teams:
            cluster.request("DELETE", TRAINJOBS.format(namespace=namespace))


def sdk_refusal(sdk: Any, runtime: str, resources: dict[str, Any] | None) -> str | None:
    """None when the SDK's TrainJob is admitted, else the API server's message."""
    from kubeflow.trainer import CustomTrainer

    try:
        sdk.train(runtime=runtime, trainer=CustomTrainer(func=train, num_nodes=2, resources_per_node=resources))
    except RuntimeError as error:  # the SDK wraps the API server's refusal
        if not isinstance(error.__cause__, ApiException):
            raise
        return api_message(error.__cause__)
    return None


def test_the_dev_stack_has_gpu_runtimes_of_every_framework() -> None:
    assert {name.rsplit("-", 1)[0] for name in GPU_RUNTIMES} == set(BASE_RUNTIMES)


@pytest.mark.parametrize("runtime", sorted(GPU_RUNTIMES))
def test_the_sdks_resources_per_node_without_gpus_is_refused_on_a_gpu_runtime_with_the_fix(sdk: Any, runtime: str) -> None:
    message = sdk_refusal(sdk, runtime, CPU_AND_MEMORY)
    assert message is not None, f"{runtime}: admitted"
    gpus = GPU_RUNTIMES[runtime]
    assert "ValidatingAdmissionPolicy 'kueue-trainjob-gpu-resources'" in message
    assert f" on {runtime}: spec.trainer.resourcesPerNode names resources but not nvidia.com/gpu." in message
    assert f"Trainer 2.3.0 keeps the runtime's {gpus} GPUs per node" in message
    assert f'Add "nvidia.com/gpu": "{gpus}" to resourcesPerNode' in message and f'"gpu": {gpus}}}' in message


@pytest.mark.parametrize("runtime", sorted(GPU_RUNTIMES))
def test_the_sdks_jobs_that_both_count_alike_are_admitted(sdk: Any, runtime: str) -> None:
    assert sdk_refusal(sdk, runtime, None) is None  # the runtime's GPUs, counted by both
    assert sdk_refusal(sdk, runtime, {**CPU_AND_MEMORY, "gpu": GPU_RUNTIMES[runtime]}) is None


@pytest.mark.parametrize("runtime", BASE_RUNTIMES)
def test_a_base_runtime_has_no_gpus_to_lose(sdk: Any, runtime: str) -> None:
    assert sdk_refusal(sdk, runtime, CPU_AND_MEMORY) is None


GPU = min(GPU_RUNTIMES)
OWN = {
    "limits only, no gpu": (trainjob(GPU, {"limits": {"memory": "64Gi"}}), True),
    "an empty limits map still replaces in Trainer 2.2.1": (trainjob(GPU, {"limits": {}}), True),
    "the kind spelt out": (trainjob(GPU, {"requests": {"cpu": "4"}}, kind="ClusterTrainingRuntime"), True),
    "resourcesPerNode without limits or requests: nothing replaced": (trainjob(GPU, {}), False),
    "the GPUs in limits only (Kueue counts limits as requests)": (trainjob(GPU, {"limits": {"nvidia.com/gpu": 2}}), False),
    "a team's own TrainingRuntime of the same name": (trainjob(GPU, {"requests": {"cpu": "4"}}, kind="TrainingRuntime"), False),
}


@pytest.mark.parametrize("case", list(OWN))
def test_jobs_the_sdk_cannot_build(sdk: Any, cluster: Cluster, case: str) -> None:
    job, refused = OWN[case]
    message = refusal(cluster, copy.deepcopy(job))
    assert (message is not None) is refused, message


def test_kueues_rewrite_of_a_job_admitted_before_the_policy_still_passes(sdk: Any, cluster: Cluster) -> None:
    """Kueue 0.19.2 writes whole TrainJobs when it starts and stops them: a job admitted before
    the policy was bound keeps running, its trainer part unchanged. A changed spec.trainer, which
    the policy would judge, never gets that far: Trainer 2.3.0's CRD makes it immutable."""
    namespace = OTHER_TEAM
    (binding,) = [o for o in world() if o["kind"] == "ValidatingAdmissionPolicyBinding" and bound_namespace(o) == namespace]
    cluster.delete(binding)
    policy_in_force(cluster, namespace, False)
    old = trainjob(GPU, CPU_AND_MEMORY, namespace=namespace)
    assert refusal(cluster, old) is None
    cluster.keep([binding])
    policy_in_force(cluster, namespace, True)
    path = f"{TRAINJOBS.format(namespace=namespace)}/{old['metadata']['name']}"
    stored = cluster.request("GET", path)
    started = {**stored, "spec": {**stored["spec"], "suspend": False}}
    cluster.request("PUT", path, started)  # admitted: the trainer part is unchanged
    changed = cluster.request("GET", path)
    changed["spec"]["trainer"]["resourcesPerNode"] = {"limits": {"cpu": "1"}}
    with pytest.raises(ApiException) as refused:
        cluster.request("PUT", path, changed)
    assert api_message(refused.value).endswith("spec.trainer: Invalid value: field is immutable")


@pytest.mark.parametrize("priority", ["interactive", "preemptible"])
def test_a_trainjob_the_sdk_builds_with_a_chosen_priority_is_stored_with_kueues_label(sdk: Any, cluster: Cluster, priority: str) -> None:
    """docs/teams.md, "Priorities": `options=[Labels({...})]` puts the class on the TrainJob itself,
    where Kueue reads it (facts/priorities.py); the runtime's pods keep their default class, which
    Kueue reads only where the job names none."""
    from kubeflow.trainer import CustomTrainer
    from kubeflow.trainer.options import Labels

    name = sdk.train(runtime="torch-distributed", trainer=CustomTrainer(func=train, num_nodes=2), options=[Labels({PRIORITY_LABEL: priority})])
    stored = cluster.request("GET", f"{TRAINJOBS.format(namespace=TEAM)}/{name}")
    assert stored["metadata"]["labels"][PRIORITY_LABEL] == priority
