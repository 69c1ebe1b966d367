"""The admission policy that guards Kueue 0.19.2's count of TrainJobs on our GPU runtimes
(runtimes/kueue_guard.py): what it names and where it is bound. What it admits and refuses is
the API server's to say: tests/envtest/test_kueue_guard.py has a real one enforce it on
TrainJobs the Kubeflow SDK builds."""

from __future__ import annotations

from components.profiles.args import team_args
from components.profiles.team import team_objects
from runtimes import kueue_guard
from runtimes.args import training_runtimes_args
from runtimes.catalog import cluster_training_runtimes
from stackmodel.config import load, validate
from tests.conftest import base_kind, with_changes

DEV = load("dev")


def test_the_policy_names_every_gpu_variant_and_its_gpus_and_nothing_else() -> None:
    runtimes = cluster_training_runtimes(training_runtimes_args(DEV))
    with_gpus = {
        r["metadata"]["name"]: int(c["resources"]["limits"]["nvidia.com/gpu"])
        for r in runtimes
        for job in r["spec"]["template"]["spec"]["replicatedJobs"]
        for c in job["template"]["spec"]["template"]["spec"]["containers"]
        if "resources" in c
    }
    # the GPUs the policy's message names per runtime: tests/envtest/test_kueue_guard.py
    assert kueue_guard.gpu_runtimes(training_runtimes_args(DEV).gpu_pools) == with_gpus


def test_a_stack_without_gpu_pools_gets_no_policy_and_no_binding() -> None:
    """No GPU runtime, nothing the two Trainers count differently (kind)."""
    assert kueue_guard.policy(()) is None
    kind = validate(with_changes(base_kind(), {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "quota": {}}]}), "test")
    assert kind.enabled_components()["kueue"]
    bound = {o["spec"]["policyName"] for o in team_objects(team_args(kind, kind.teams[0])) if o["kind"] == "ValidatingAdmissionPolicyBinding"}
    assert kueue_guard.TRAINJOB_GPU_POLICY not in bound and bound  # the owner guard's are there (tests/test_kueue_owners.py)


def test_every_team_namespace_of_a_gpu_stack_binds_the_policy() -> None:
    for team in DEV.teams:
        bindings = [o for o in team_objects(team_args(DEV, team)) if o["kind"] == "ValidatingAdmissionPolicyBinding"]
        (found,) = [o for o in bindings if o["spec"]["policyName"] == kueue_guard.TRAINJOB_GPU_POLICY]
        assert found["spec"]["validationActions"] == ["Deny"]
        assert found["spec"]["matchResources"]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": team.name}}
