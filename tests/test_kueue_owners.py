"""The owner guard (components/kueue_owners.py): which owners it judges, whom it lets make them,
where it is bound. What it admits and refuses is the API server's to say:
tests/envtest/test_kueue_owners.py has a real one enforce it as a team editor and as controllers."""

from __future__ import annotations

from components import kueue_owners
from components.kueue import FRAMEWORKS, kueue_args
from components.profiles.args import team_args
from components.profiles.team import team_objects
from stackmodel.config import load, validate
from tests.conftest import base_gke, with_changes

DEV = load("dev")


def test_every_framework_kueue_runs_here_is_an_owner_the_guard_judges() -> None:
    """A framework added to Kueue's configuration without its kind would leave its pods unguarded."""
    owners = {(k.group, k.kind) for k in kueue_owners.managed_kinds(FRAMEWORKS, kuberay_chart=True)}
    assert owners == {("batch", "Job"), ("jobset.x-k8s.io", "JobSet"), ("trainer.kubeflow.org", "TrainJob"), ("ray.io", "RayJob"), ("ray.io", "RayCluster"), ("", "Pod")}
    condition = kueue_owners.policies(FRAMEWORKS, True)[0]["spec"]["matchConditions"][0]["expression"]
    for group, kind in owners:
        assert f"'{group}/{kind}'" in condition


def test_every_team_namespace_binds_the_three_policies() -> None:
    for team in DEV.teams:
        bindings = [o for o in team_objects(team_args(DEV, team)) if o["kind"] == "ValidatingAdmissionPolicyBinding"]
        ours = {o["spec"]["policyName"]: o for o in bindings if o["spec"]["policyName"] in kueue_owners.POLICIES}
        assert sorted(ours) == ["kueue-admission-gate", "kueue-owned-gpu-pods", "kueue-owned-workloads"]
        for found in ours.values():
            assert found["spec"]["validationActions"] == ["Deny"]
            assert found["spec"]["matchResources"]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": team.name}}


def test_with_gkes_ray_add_on_the_ray_kinds_are_left_out() -> None:
    """GKE does not document its managed operator's identity: guarding Ray owners would refuse its pods."""
    addon = validate(with_changes(base_gke(), {"mlplatform:components.kuberay": {"source": "gke-addon"}}), "test")
    args = kueue_args(addon)
    assert not args.kuberay_chart and kueue_args(DEV).kuberay_chart
    for policy in kueue_owners.policies(FRAMEWORKS, args.kuberay_chart):
        assert "ray.io" not in policy["spec"]["matchConditions"][0]["expression"]
        assert "kuberay" not in policy["spec"]["validations"][0]["expression"]


def test_the_gate_guard_judges_updates_that_drop_kueues_gate_and_lets_only_kueues_controller_through() -> None:
    """Only pod UPDATEs, only those that remove `kueue.x-k8s.io/admission` (kueue v0.19.2 SchedulingGateName),
    only Kueue's manager (kueue chart 0.19.2 in kueue-system: kueue-controller-manager) allowed."""
    gate = next(p for p in kueue_owners.policies(FRAMEWORKS, True) if p["metadata"]["name"] == "kueue-admission-gate")
    spec = gate["spec"]
    assert spec["failurePolicy"] == "Fail"
    assert spec["matchConstraints"]["resourceRules"] == [{"apiGroups": [""], "apiVersions": ["*"], "operations": ["UPDATE"], "resources": ["pods"]}]
    (condition,) = spec["matchConditions"]
    assert "oldObject.spec.schedulingGates.exists(g, g.name == 'kueue.x-k8s.io/admission')" in condition["expression"]
    assert "!(has(object.spec.schedulingGates) && object.spec.schedulingGates.exists(g, g.name == 'kueue.x-k8s.io/admission'))" in condition["expression"]
    (validation,) = spec["validations"]
    assert validation["expression"] == "request.userInfo.username == 'system:serviceaccount:kueue-system:kueue-controller-manager'"
    assert "Wait for the queue" in validation["message"] and "kubectl get workloads" in validation["message"]


def test_without_kueues_pod_integration_there_is_no_gate_to_guard() -> None:
    names = [p["metadata"]["name"] for p in kueue_owners.policies(("batch/job", "ray.io/raycluster"), True)]
    assert names == ["kueue-owned-gpu-pods", "kueue-owned-workloads"]
