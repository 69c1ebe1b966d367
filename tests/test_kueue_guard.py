"""The admission policy that guards Kueue 0.19.2's count of TrainJobs on our GPU runtimes
(runtimes/kueue_guard.py), evaluated the way the API server does: match conditions first
(all must hold, else the policy does not apply), then the variables, then each validation,
whose refusal carries the messageExpression's text. The CEL is evaluated by CEL's own
implementation (cel-expr-python, the C++ runtime), not by a re-implementation here.

The cases are the accounting of the two Trainer versions (module docstring of the guard):
refused exactly where Kueue (Trainer 2.2.1: resourcesPerNode replaces the container's
resources) and Trainer 2.3.0 (a merge) would give different GPUs."""

from __future__ import annotations

from typing import Any

import pytest
from cel_expr_python import cel

from args.components import training_runtimes_args
from args.teams import team_args
from components.profiles import team_objects
from runtimes import kueue_guard
from runtimes.catalog import cluster_training_runtimes
from stacks.config import load, validate
from tests.conftest import base_kind, with_changes

ENV = cel.NewEnv(variables=dict.fromkeys(("object", "oldObject", "request", "variables"), cel.Type.DYN))
DEV = load("dev")
_POLICY = kueue_guard.policy(training_runtimes_args(DEV).gpu_pools)
assert _POLICY is not None
POLICY: dict[str, Any] = _POLICY


def evaluate(expression: str, data: dict[str, Any]) -> Any:
    result = ENV.compile(expression).eval(data=data)
    assert result.type() != cel.Type.ERROR, f"{expression!r}: {result.value()}"
    return result.plain_value()


def admit(job: dict[str, Any], old: dict[str, Any] | None = None, policy: dict[str, Any] = POLICY) -> str | None:
    """None when the API server lets the TrainJob in, else its refusal message."""
    data: dict[str, Any] = {
        "object": job,
        "oldObject": old,
        "request": {"operation": "CREATE" if old is None else "UPDATE"},
    }
    spec = policy["spec"]
    if not all(evaluate(c["expression"], data) is True for c in spec["matchConditions"]):
        return None
    data["variables"] = {}
    for variable in spec["variables"]:
        data["variables"][variable["name"]] = evaluate(variable["expression"], data)
    for validation in spec["validations"]:
        if evaluate(validation["expression"], data) is not True:
            return str(evaluate(validation["messageExpression"], data))
    return None


def trainjob(runtime: str, resources: dict[str, Any] | None = None, kind: str | None = None) -> dict[str, Any]:
    ref: dict[str, Any] = {"name": runtime, "apiGroup": "trainer.kubeflow.org"}
    if kind:
        ref["kind"] = kind
    spec: dict[str, Any] = {"runtimeRef": ref}
    if resources is not None:
        spec["trainer"] = {"numNodes": 2, "resourcesPerNode": resources}
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "job", "namespace": "vision"}, "spec": spec}


CPU_ONLY = {"requests": {"cpu": "8", "memory": "32Gi"}, "limits": {"cpu": "8", "memory": "32Gi"}}
REFUSED = {
    "cpu and memory only (the SDK's resources_per_node without gpu)": trainjob("torch-distributed-l4", CPU_ONLY),
    "limits only, no gpu": trainjob("jax-distributed-l4", {"limits": {"memory": "64Gi"}}),
    "an empty limits map still replaces in Trainer 2.2.1": trainjob("torch-distributed-l4", {"limits": {}}),
    "an MPI runtime's launcher and nodes": trainjob("deepspeed-distributed-l4", {"requests": {"cpu": "4"}}),
    "the kind spelt out": trainjob("mlx-distributed-l4", {"requests": {"cpu": "4"}}, kind="ClusterTrainingRuntime"),
}
ADMITTED = {
    "no resourcesPerNode: the runtime's GPUs, counted by both": trainjob("torch-distributed-l4"),
    "resourcesPerNode without limits or requests: nothing replaced": trainjob("torch-distributed-l4", {}),
    "the GPUs named in both": trainjob(
        "torch-distributed-l4", {"requests": {"cpu": "8", "nvidia.com/gpu": "2"}, "limits": {"nvidia.com/gpu": "2"}}
    ),
    "the GPUs named in limits only (Kueue counts limits as requests)": trainjob("torch-distributed-l4", {"limits": {"nvidia.com/gpu": 2}}),
    "a base runtime has no resources to lose": trainjob("torch-distributed", CPU_ONLY),
    "a team's own TrainingRuntime of the same name": trainjob("torch-distributed-l4", CPU_ONLY, kind="TrainingRuntime"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_trainjob_kueue_would_count_without_its_gpus_is_refused_with_the_fix(case: str) -> None:
    message = admit(REFUSED[case])
    assert message is not None, case
    runtime = REFUSED[case]["spec"]["runtimeRef"]["name"]
    # dev's l4 pool: g2-standard-24, 2 GPUs a node (facts/gpu_catalog.py)
    assert message.startswith(f"TrainJob job on {runtime}: spec.trainer.resourcesPerNode names resources but not nvidia.com/gpu.")
    assert "Trainer 2.3.0 keeps the runtime's 2 GPUs per node" in message
    assert 'Add "nvidia.com/gpu": "2" to resourcesPerNode' in message and '"gpu": 2}' in message


@pytest.mark.parametrize("case", list(ADMITTED))
def test_a_trainjob_both_count_alike_is_admitted(case: str) -> None:
    assert admit(ADMITTED[case]) is None


def test_kueues_rewrite_of_a_job_admitted_before_the_policy_still_passes() -> None:
    """Kueue 0.19.2 writes whole TrainJobs on start and stop; the trainer part is unchanged."""
    old = REFUSED["cpu and memory only (the SDK's resources_per_node without gpu)"]
    started = {**old, "spec": {**old["spec"], "suspend": False}}
    assert admit(started, old=old) is None
    changed = {**old, "spec": {**old["spec"], "trainer": {"numNodes": 2, "resourcesPerNode": {"limits": {"cpu": "1"}}}}}
    assert admit(changed, old=old) is not None


def test_the_policy_names_every_gpu_variant_and_its_gpus_and_nothing_else() -> None:
    runtimes = cluster_training_runtimes(training_runtimes_args(DEV))
    with_gpus = {
        r["metadata"]["name"]: int(c["resources"]["limits"]["nvidia.com/gpu"])
        for r in runtimes
        for job in r["spec"]["template"]["spec"]["replicatedJobs"]
        for c in job["template"]["spec"]["template"]["spec"]["containers"]
        if "resources" in c
    }
    assert kueue_guard.gpu_runtimes(training_runtimes_args(DEV).gpu_pools) == with_gpus
    variables = {v["name"]: v["expression"] for v in POLICY["spec"]["variables"]}
    assert evaluate(variables["gpusPerNode"], {}) == with_gpus


def test_a_stack_without_gpu_pools_gets_no_policy_and_no_binding() -> None:
    """No GPU runtime, nothing the two Trainers count differently (kind)."""
    assert kueue_guard.policy(()) is None
    kind = validate(with_changes(base_kind(), {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "quota": {}}]}), "test")
    assert kind.enabled_components()["kueue"]
    kinds = {o["kind"] for o in team_objects(team_args(kind, kind.teams[0]))}
    assert "ValidatingAdmissionPolicyBinding" not in kinds


def test_every_team_namespace_of_a_gpu_stack_binds_the_policy() -> None:
    for team in DEV.teams:
        (found,) = [o for o in team_objects(team_args(DEV, team)) if o["kind"] == "ValidatingAdmissionPolicyBinding"]
        assert found["spec"]["policyName"] == POLICY["metadata"]["name"]
        assert found["spec"]["validationActions"] == ["Deny"]
        assert found["spec"]["matchResources"]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": team.name}}
