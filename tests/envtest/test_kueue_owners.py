"""The owner guard (components/kueue_owners.py) enforced by a real API server holding the dev
stack's RBAC: a team editor may create pods and Jobs, yet not a GPU pod nor a Job whose controller
is a kind Kueue manages (Kueue would leave it unqueued); the controllers that make such objects
(the Job controller, KubeRay's operator, JobSet's controller, each as its service account) still
may, and a CPU-only pod with such an owner, never Kueue's, is admitted. Every request a dry run:
nothing is stored, no owner needs to exist (the policy reads the reference, not the owner).
The gate guard: of a stored pod gated as Kueue gates it, an editor may change a label but not
remove the gate `kueue.x-k8s.io/admission`; Kueue's controller may (dry-run updates)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from components import kueue_owners
from tests.envtest.conftest import kept, rbac_of
from tests.support import mirror
from tests.support.apiserver import Cluster, api_message
from tests.support.renders import rendered
from tooling.waiting import wait_for

pytestmark = mirror.needed

TEAM, EDITOR = "vision", "ana@acme.com"
"""A team of the dev fixture and one of its edit contributors (tests/stacks/Pulumi.dev.yaml)."""
JOB_CONTROLLER = "system:serviceaccount:kube-system:job-controller"
KUBERAY = "system:serviceaccount:kuberay-system:kuberay-operator"
JOBSET = "system:serviceaccount:jobset-system:jobset-controller"
KUEUE = "system:serviceaccount:kueue-system:kueue-controller-manager"
"""Written out, not read from the module: the identities the charts and the controller manager use."""
PODS, JOBS = f"/api/v1/namespaces/{TEAM}/pods", f"/apis/batch/v1/namespaces/{TEAM}/jobs"
RAYCLUSTER = ("ray.io/v1", "RayCluster")
JOBSET_KIND = ("jobset.x-k8s.io/v1alpha2", "JobSet")
JOB = ("batch/v1", "Job")


def owner(api_version_kind: tuple[str, str], controller: bool = True) -> dict[str, Any]:
    api_version, kind = api_version_kind
    return {"apiVersion": api_version, "kind": kind, "name": "team-ray", "uid": str(uuid.uuid4()), "controller": controller}


def pod(owners: list[dict[str, Any]], resources: dict[str, Any], init: bool = False) -> dict[str, Any]:
    container = {"name": "main", "image": "python:3.12", "resources": resources}
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "python:3.12"}], "initContainers": [container]} if init else {"containers": [container]}
    metadata = {"name": f"p-{uuid.uuid4().hex[:8]}", "namespace": TEAM, "ownerReferences": owners}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def job(owners: list[dict[str, Any]]) -> dict[str, Any]:
    container = {"name": "main", "image": "python:3.12", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    template = {"spec": {"restartPolicy": "Never", "containers": [container]}}
    metadata = {"name": f"j-{uuid.uuid4().hex[:8]}", "namespace": TEAM, "ownerReferences": owners}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": {"template": template}}


GPU = {"limits": {"nvidia.com/gpu": "1"}}


def refusal(cluster: Cluster, path: str, body: dict[str, Any], user: str) -> str | None:
    """None when the API server would take `body` from `user` (a dry run), else its message."""
    try:
        cluster.request("POST", path, body, [("dryRun", "All")], as_user=user)
    except ApiException as error:
        return api_message(error)
    return None


@pytest.fixture(scope="module", autouse=True)
def dev_world(cluster: Cluster) -> Iterator[None]:
    """The dev render's RBAC, the team's default ServiceAccount and the guard, until the guard is in force in the team namespace."""
    objects = [o.obj for o in rendered("dev").objects]
    guard = [o for o in objects if o["kind"] == "ValidatingAdmissionPolicy" and o["metadata"]["name"] in kueue_owners.POLICIES]
    guard += [o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding" and o["spec"]["policyName"] in kueue_owners.POLICIES]
    assert len(guard) == 3 + 3 * 3  # three policies, bound in each of the three team namespaces
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": TEAM}}  # no controller makes it here
    with kept(cluster, [*rbac_of(objects), account, *guard]):

        def pending() -> list[str]:
            pods = refusal(cluster, PODS, pod([owner(RAYCLUSTER)], GPU), EDITOR)
            jobs = refusal(cluster, JOBS, job([owner(RAYCLUSTER)]), EDITOR)
            return [] if all(found and "Kueue does not queue" in found for found in (pods, jobs)) else [f"the guard is not in force yet ({pods}; {jobs})"]

        wait_for("the owner guard", pending, timeout=60, interval=0.1)
        yield


@pytest.mark.parametrize("kind", [RAYCLUSTER, JOBSET_KIND, ("trainer.kubeflow.org/v1alpha1", "TrainJob"), JOB, ("v1", "Pod")])
def test_an_editors_gpu_pod_owned_by_a_queued_job_is_refused_with_what_to_do(cluster: Cluster, kind: tuple[str, str]) -> None:
    message = refusal(cluster, PODS, pod([owner(kind)], GPU), EDITOR)
    assert message is not None, f"{kind}: admitted"
    assert f"ValidatingAdmissionPolicy '{kueue_owners.OWNED_GPU_PODS}'" in message
    assert f"(controller: {kind[1]} team-ray)" in message and "Submit the work through the team's queue" in message


def test_gpus_in_requests_or_in_an_init_container_are_refused_too(cluster: Cluster) -> None:
    assert refusal(cluster, PODS, pod([owner(RAYCLUSTER)], {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}), EDITOR)
    assert refusal(cluster, PODS, pod([owner(RAYCLUSTER)], GPU, init=True), EDITOR)


def test_gpus_claimed_through_dra_are_refused_too(cluster: Cluster) -> None:
    claimed = pod([owner(RAYCLUSTER)], {"claims": [{"name": "gpus"}]})
    claimed["spec"]["resourceClaims"] = [{"name": "gpus", "resourceClaimTemplateName": "l4-gpus"}]
    message = refusal(cluster, PODS, claimed, EDITOR)
    assert message is not None and f"ValidatingAdmissionPolicy '{kueue_owners.OWNED_GPU_PODS}'" in message


def test_what_kueue_queues_or_never_sees_is_admitted_from_an_editor(cluster: Cluster) -> None:
    assert refusal(cluster, PODS, pod([owner(RAYCLUSTER)], {"limits": {"cpu": "1"}}), EDITOR) is None  # CPU only
    assert refusal(cluster, PODS, pod([], GPU), EDITOR) is None  # no owner: Kueue queues it
    assert refusal(cluster, PODS, pod([owner(RAYCLUSTER, controller=False)], GPU), EDITOR) is None  # Kueue follows controllers only
    assert refusal(cluster, PODS, pod([owner(("kubeflow.org/v1", "Notebook"))], GPU), EDITOR) is None


def test_the_controllers_make_them(cluster: Cluster) -> None:
    assert refusal(cluster, PODS, pod([owner(JOB)], GPU), JOB_CONTROLLER) is None
    assert refusal(cluster, PODS, pod([owner(RAYCLUSTER)], GPU), KUBERAY) is None
    assert refusal(cluster, JOBS, job([owner(JOBSET_KIND)]), JOBSET) is None


def test_a_workload_of_an_editors_naming_a_queued_owner_is_refused(cluster: Cluster) -> None:
    """Kueue walks through a Job (or ReplicaSet, ...) to its controller: the Job controller would
    then make the unqueued pods itself."""
    message = refusal(cluster, JOBS, job([owner(RAYCLUSTER)]), EDITOR)
    assert message is not None and f"ValidatingAdmissionPolicy '{kueue_owners.OWNED_WORKLOADS}'" in message
    assert refusal(cluster, JOBS, job([]), EDITOR) is None


GATE = "kueue.x-k8s.io/admission"


def update(cluster: Cluster, stored: dict[str, Any], user: str) -> str | None:
    """None when the API server would take `stored` (changed) as an update from `user` (a dry run), else its message."""
    try:
        cluster.request("PUT", f"{PODS}/{stored['metadata']['name']}", stored, [("dryRun", "All")], as_user=user)
    except ApiException as error:
        return api_message(error)
    return None


def ungated(stored: dict[str, Any]) -> dict[str, Any]:
    return {**stored, "spec": {**stored["spec"], "schedulingGates": [g for g in stored["spec"]["schedulingGates"] if g["name"] != GATE]}}


@pytest.fixture(scope="module")
def gated(cluster: Cluster) -> Iterator[dict[str, Any]]:
    """A GPU pod as Kueue's webhook leaves it (gated; no scheduler runs here), stored until the module ends."""
    body = pod([], GPU)
    body["spec"]["schedulingGates"] = [{"name": GATE}, {"name": "example.com/other"}]
    stored = cluster.request("POST", PODS, body)
    try:

        def pending() -> list[str]:
            found = update(cluster, ungated(stored), EDITOR)
            return [] if found and "Wait for the queue" in found else [f"the gate guard is not in force yet ({found})"]

        wait_for("the gate guard", pending, timeout=60, interval=0.1)
        yield stored
    finally:
        cluster.request("DELETE", f"{PODS}/{stored['metadata']['name']}", None, [("gracePeriodSeconds", "0")])


def test_an_editor_removing_kueues_gate_is_refused_with_what_to_do(cluster: Cluster, gated: dict[str, Any]) -> None:
    message = update(cluster, ungated(gated), EDITOR)
    assert message is not None and f"ValidatingAdmissionPolicy '{kueue_owners.ADMISSION_GATE}'" in message
    assert f"Pod {gated['metadata']['name']}: only Kueue removes the scheduling gate {GATE}" in message and "kubectl get workloads" in message


def test_kueues_controller_lifts_the_gate(cluster: Cluster, gated: dict[str, Any]) -> None:
    assert update(cluster, ungated(gated), KUEUE) is None


def test_an_editor_may_change_the_rest_of_a_gated_pod(cluster: Cluster, gated: dict[str, Any]) -> None:
    labelled = {**gated, "metadata": {**gated["metadata"], "labels": {"purpose": "eval"}}}
    assert update(cluster, labelled, EDITOR) is None
    other = {**gated, "spec": {**gated["spec"], "schedulingGates": [{"name": GATE}]}}  # another gate removed: not Kueue's
    assert update(cluster, other, EDITOR) is None
