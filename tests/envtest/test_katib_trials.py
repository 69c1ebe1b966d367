"""A Katib search as the real API server meets it, in a team namespace of the fixture with Katib,
the Model Registry and Spark on (dev-groups): the Experiment examples/katib_mnist_search.py makes
through the Kubeflow SDK's OptimizerClient is stored by Katib's CRD, and its trial, the TrainJob
Katib's trial controller creates from it (tooling/admission.py katib_trial_job), is taken from the
controller's own identity: its ClusterRole lets it create TrainJobs in the team namespace, and
Trainer's CRD and the GPU-accounting policy (runtimes/kueue_guard.py) admit it, on a CPU and on a
GPU runtime. That each trial is then a workload of the team's queue is Kueue's to decide, judged in
tests/test_admission.py (test_the_example_searchs_trials_are_workloads_of_each_teams_queue). And
the kind fixture with the three on (kind-kubeflow-options, applied by test_apply.py) held to `check`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from components.katib import PRIMARY_POD_POLICY
from runtimes.kueue_guard import TRAINJOB_GPU_POLICY
from tests.envtest.conftest import kept, rbac_of
from tests.envtest.test_kueue_guard import bound_namespace, policy_in_force
from tests.support import mirror
from tests.support.apiserver import Cluster, api_message, service_account
from tests.support.renders import rendered
from tests.test_examples import load
from tooling import admission
from tooling import check as lint
from tooling.waiting import wait_for

pytestmark = mirror.needed

STACK, TEAM = "dev-groups", "vision"
KATIB_CONTROLLER = "system:serviceaccount:kubeflow:katib-controller"
"""Written out: the account of Katib's controller (the tree's components/controller/rbac.yaml)."""
EXPERIMENTS = "/apis/kubeflow.org/v1beta1/namespaces/{namespace}/experiments"
TRAINJOBS = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/{namespace}/trainjobs"


def world() -> list[dict[str, Any]]:
    """Of the dev-groups render: Katib's and Trainer's CRDs, the RBAC, the runtimes, Trainer's public
    ConfigMap (the SDK reads its version there), the GPU-accounting policy and Katib's MPI-trial
    policy (components/katib.py PRIMARY_POD_POLICY) with their bindings."""
    objects = [o.obj for o in rendered(STACK).objects]
    groups = ("trainer.kubeflow.org", "kubeflow.org")
    crds = [o for o in objects if o["kind"] == "CustomResourceDefinition" and o["spec"]["group"] in groups]
    found = [o for o in objects if o["kind"] == "ClusterTrainingRuntime"]
    found += [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "kubeflow-trainer-public"]
    policies = (TRAINJOB_GPU_POLICY, PRIMARY_POD_POLICY)
    found += [o for o in objects if o["kind"] == "ValidatingAdmissionPolicy" and o["metadata"]["name"] in policies]
    found += [
        o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding" and o["spec"]["policyName"] in policies
    ]
    return [*crds, *rbac_of(objects), *found]


@pytest.fixture(scope="module")
def optimizer(cluster: Cluster) -> Iterator[Any]:
    """The SDK's OptimizerClient for the team namespace, on this control plane, once the policy is
    in force there; the Experiments it made deleted after."""
    from kubeflow.optimizer import OptimizerClient
    from kubeflow.trainer import KubernetesBackendConfig

    objects = world()
    assert TEAM in {
        bound_namespace(o)
        for o in objects
        if o["kind"] == "ValidatingAdmissionPolicyBinding" and o["spec"]["policyName"] == TRAINJOB_GPU_POLICY
    }
    with kept(cluster, objects):
        policy_in_force(cluster, TEAM, True)
        yield OptimizerClient(KubernetesBackendConfig(namespace=TEAM, client_configuration=cluster.plane.configuration()))
        cluster.request("DELETE", EXPERIMENTS.format(namespace=TEAM))


@pytest.mark.parametrize("runtime", ["torch-distributed", "torch-distributed-l4"])
def test_the_examples_search_is_stored_and_its_trial_taken_from_katibs_controller(optimizer: Any, cluster: Cluster, runtime: str) -> None:
    name = load("katib_mnist_search").search(optimizer, runtime=runtime)
    experiment = cluster.request("GET", f"{EXPERIMENTS.format(namespace=TEAM)}/{name}")
    assert experiment["spec"]["trialTemplate"]["trialSpec"]["spec"]["runtimeRef"]["name"] == runtime
    trial = admission.katib_trial_job(experiment, {"lr": "0.0123"}, f"{name}-trial-1")
    trial["metadata"]["ownerReferences"][0]["uid"] = experiment["metadata"]["uid"]  # a Trial's, in the cluster
    try:
        cluster.request("POST", TRAINJOBS.format(namespace=TEAM), trial, [("dryRun", "All")], as_user=KATIB_CONTROLLER)
    except ApiException as error:
        pytest.fail(f"the trial of {runtime} was refused: {api_message(error)}")


def test_a_search_on_an_mpi_runtime_is_refused_with_the_runtimes_that_work(optimizer: Any, cluster: Cluster) -> None:
    """The SDK sets no primary pod, so Katib would read the metric from node 0, which runs sshd on
    the MPI runtimes (components/katib.py PRIMARY_POD_POLICY): refused, naming the fix; the torch
    runtimes' searches are stored (test_the_examples_search_is_stored_...)."""

    def refused() -> str | None:
        try:
            load("katib_mnist_search").search(optimizer, runtime="deepspeed-distributed")
        except RuntimeError as error:
            cause = error.__cause__
            return api_message(cause) if isinstance(cause, ApiException) else str(cause)
        return None

    found: list[str] = []

    def pending() -> list[str]:
        message = refused()
        found.extend([message] if message else [])
        return [] if message else ["not yet in force"]

    wait_for("Katib's MPI-trial policy", pending, timeout=60, interval=0.2)
    message = found[-1]
    assert "an MPI runtime" in message and "torch-distributed" in message and "primaryPodLabels" in message


def test_katibs_controller_may_create_both_trial_kinds_in_a_team_namespace(optimizer: Any, cluster: Cluster) -> None:
    """The trial kinds components/katib.py offers (TRIAL_RESOURCES): TrainJobs and Jobs; a service
    account of another namespace may not."""
    controller = service_account("kubeflow", "katib-controller")
    assert cluster.allows(controller, "create", "trainjobs", TEAM, "trainer.kubeflow.org")
    assert cluster.allows(controller, "create", "jobs", TEAM, "batch")
    assert not cluster.allows(service_account("kubeflow", "katib-ui"), "create", "trainjobs", TEAM, "trainer.kubeflow.org")


def test_the_kind_fixture_with_the_three_on_passes_every_rule() -> None:
    """kind-kubeflow-options (Katib, the Model Registry in the cluster, Spark), which test_apply.py
    renders and applies anyway: held to `check` here, so the unit suite does not render it; each
    team's Katib trial admissible on its own queue (dev-groups is checked in tests/test_groups.py)."""
    render = rendered("kind-kubeflow-options")
    assert [str(v) for v in lint.check(render)] == []
    trials = {v.team: v for v in admission.verdicts(render) if v.workload.startswith("Katib trial ")}
    assert sorted(trials) == ["nlp", "research", "vision"]
    assert all(v.status is admission.Status.ADMISSIBLE and v.queue == team for team, v in trials.items())
