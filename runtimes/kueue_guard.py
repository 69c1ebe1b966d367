"""Kueue 0.19.2's known gap with Trainer 2.3.0, refused by the API server before it costs a
team anything: a ValidatingAdmissionPolicy on TrainJobs that run on our GPU runtimes, bound
in each team namespace (components/profiles/queues.py `queue_objects`).

Kueue counts a TrainJob's pods the way the Trainer library it is built with would make them
(kubernetes-sigs/kueue v0.19.2 go.mod: github.com/kubeflow/trainer/v2 v2.2.1;
pkg/controller/jobs/trainjob/trainjob_controller.go PodSets -> getChildJobSet, which runs
trainer's own jobset builder). Trainer v2.2.1 *replaces* the node container's resources with
the TrainJob's `spec.trainer.resourcesPerNode` whenever that names limits or requests
(pkg/runtime/framework/plugins/jobset/builder.go Trainer: `WithResources(requirements)` of
resourcesPerNode alone); the Trainer 2.3.0 controller that really creates the JobSet *merges*
them over the runtime's (pkg/runtime/core/trainingruntime.go RuntimeInfo ->
pkg/util/trainingruntime/trainingruntime.go MergeResourceRequirements, a strategic merge,
kubeflow/trainer#3602). Both apply it to the same containers (the trainer ancestor's `node`
container, and with MPI's runLauncherAsNode the `node` job's too). The two agree unless the
runtime's container has a resource that resourcesPerNode does not name. Our GPU runtime
variants (runtimes/catalog.py) give the node container only `nvidia.com/gpu`, so exactly one
case differs: resourcesPerNode names limits or requests, and neither names `nvidia.com/gpu`
(the SDK's `resources_per_node={"cpu": 8, "memory": "32Gi"}`). Kueue then charges no GPUs to
the team's queue while every node gets the runtime's GPUs; on a queued (DWS) pool its
ProvisioningRequest asks for no GPUs, so the nodes never come.

Where resourcesPerNode names the GPUs the two count the same, and a request that differs
from the limit is refused by the API server anyway (extended resources need requests equal
to limits). A TrainingRuntime of the team's own, and the base runtimes (no resources of
their own), are not ours to guard. The policy lapses once Kueue is built with Trainer >= 2.3
(kueue main since #14504, 2026-08-17; the release-0.19 branch still has v2.2.1): see
docs/upgrading.md.

The API server evaluates the CEL: tests/envtest/test_kueue_guard.py has a real one enforce the
policy on TrainJobs the Kubeflow SDK builds, jobs that pass and jobs that are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from facts.admission import cel_list, cel_string, fail_closed_policy, team_binding
from facts.node_labels import GPU_RESOURCE
from facts.versions import KUEUE_CHART, KUEUE_TRAINER_LIBRARY, TRAINER_CHART
from runtimes.catalog import RUNTIMES, runtime_name
from stackmodel.schema import GpuPool

TRAINJOB_GPU_POLICY = "kueue-trainjob-gpu-resources"
"""The policy's name; each team namespace binds it (`binding`)."""
TRAINER_API_GROUP = "trainer.kubeflow.org"
CLUSTER_TRAINING_RUNTIME = "ClusterTrainingRuntime"
"""The TrainJob CRD's default for spec.runtimeRef.kind (kubeflow/trainer v2.3.0 trainjob_types.go)."""
KUEUE_FIXED_IN = "a Kueue release built with the Trainer the platform runs (kueue main since #14504; no 0.19.x)"

_RESOURCES = "object.spec.trainer.resourcesPerNode"
_HAS_RESOURCES = f"has(object.spec.trainer) && has({_RESOURCES})"


def gpu_runtimes(gpu_pools: Sequence[GpuPool]) -> dict[str, int]:
    """Each of our GPU runtime variants and the GPUs its node container asks for: those of the
    device-plugin pools (a DRA pool's variants claim their GPUs, runtimes/dra.py, which
    resourcesPerNode does not replace: Kueue counts the pod's claims)."""
    return {runtime_name(spec, pool): pool.gpus_per_node for pool in gpu_pools if not pool.dra for spec in RUNTIMES}


def policy(gpu_pools: Sequence[GpuPool]) -> dict[str, Any] | None:
    """The ValidatingAdmissionPolicy, or None without GPU pools (no runtime to guard)."""
    runtimes = gpu_runtimes(gpu_pools)
    if not runtimes:
        return None
    names = cel_list(runtimes)
    gpus = "{" + ", ".join(f"{cel_string(name)}: {count}" for name, count in runtimes.items()) + "}"
    gpu = cel_string(GPU_RESOURCE)
    runtime = "object.spec.runtimeRef.name"
    count = f"string(variables.gpusPerNode[{runtime}])"
    kueue, trainer = f"Kueue {KUEUE_CHART.version} (built with Trainer {KUEUE_TRAINER_LIBRARY})", f"Trainer {TRAINER_CHART.version}"
    message = (
        f"'TrainJob ' + object.metadata.name + ' on ' + {runtime} + ': spec.trainer.resourcesPerNode names "
        f"resources but not {GPU_RESOURCE}. {kueue} counts only what "
        f"resourcesPerNode names, {trainer} keeps the runtime' + \"'\" + 's ' + "
        f"{count} + ' GPUs per node: they would never be charged to the team' + \"'\" + 's queue. Add "
        f"\"{GPU_RESOURCE}\": \"' + {count} + '\" to resourcesPerNode (the SDK: resources_per_node="
        "{..., \"gpu\": ' + " + count + " + '}), or leave resourcesPerNode out. Lifted with "
        f"{KUEUE_FIXED_IN}.'"
    )
    return fail_closed_policy(
        TRAINJOB_GPU_POLICY,
        [{"apiGroups": [TRAINER_API_GROUP], "apiVersions": ["v1alpha1"], "operations": ["CREATE", "UPDATE"], "resources": ["trainjobs"]}],
        [
            {
                "name": "on-a-platform-gpu-runtime",
                "expression": f"(!has(object.spec.runtimeRef.kind) || object.spec.runtimeRef.kind == "
                f"{cel_string(CLUSTER_TRAINING_RUNTIME)}) && {runtime} in {names}",
            },
            {
                # Kueue rewrites whole TrainJobs when it starts and stops them: a job admitted
                # before this policy existed must keep running, so only a new or changed
                # spec.trainer is judged.
                "name": "trainer-new-or-changed",
                "expression": "request.operation == 'CREATE' || !has(oldObject.spec.trainer) || "
                "!has(object.spec.trainer) || oldObject.spec.trainer != object.spec.trainer",
            },
        ],
        [
            {
                "expression": "!variables.namesResources || variables.namesGpus",
                "message": f"spec.trainer.resourcesPerNode of a TrainJob on a GPU runtime must name {GPU_RESOURCE} "
                f"({kueue} would not count the runtime's GPUs): add it, or leave resourcesPerNode out",
                "messageExpression": message,
                "reason": "Invalid",
            }
        ],
        variables=[
            {
                "name": "namesResources",
                "expression": f"{_HAS_RESOURCES} && (has({_RESOURCES}.limits) || has({_RESOURCES}.requests))",
            },
            {
                "name": "namesGpus",
                "expression": f"{_HAS_RESOURCES} && ((has({_RESOURCES}.limits) && {gpu} in {_RESOURCES}.limits) || "
                f"(has({_RESOURCES}.requests) && {gpu} in {_RESOURCES}.requests))",
            },
            {"name": "gpusPerNode", "expression": gpus},
        ],
    )


def binding(namespace: str) -> dict[str, Any]:
    """The policy in force in one team namespace."""
    return team_binding(TRAINJOB_GPU_POLICY, namespace)
