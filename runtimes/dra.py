"""The GPUs of a runtime variant on a DRA pool (`gpuAllocation: dra`): a claim of all the node's
GPUs instead of the device plugin's `nvidia.com/gpu`, which a DRA pool's nodes do not advertise
(GKE's device plugin is off there, facts/node_labels.py DRA_NODE_LABELS).

The pod names the team namespace's ResourceClaimTemplate of the pool (components/profiles/
dra.py), Kubernetes makes one ResourceClaim per pod from it, and the `node` container uses it
(pod `resourceClaims`, container `resources.claims`: Kubernetes 1.34+ core/v1 PodSpec). Kueue
counts the claim's devices against the team's `nvidia.com/gpu` quota on the pool's flavor
(components/kueue.py device_class_mappings).

Trainer's TrainJob `resourcesPerNode` replaces the node container's resources (Kueue's build,
Trainer v2.2.1) or merges over them (Trainer v2.3.0): a job on such a variant that names "gpu"
asks for `nvidia.com/gpu`, which no DRA node has, and never starts: `policy` refuses it, bound in
every team namespace; CPU and memory alone are fine for Kueue, which counts the pod's claims
(docs/runtimes.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from facts.admission import cel_list, fail_closed_policy, team_binding
from facts.dra import CLAIM_NAME, claim_template_name
from facts.node_labels import GPU_RESOURCE
from stackmodel.schema import GpuPool


def container_resources() -> dict[str, Any]:
    """The node container's resources: the pod's claim."""
    return {"claims": [{"name": CLAIM_NAME}]}


def pod_claims(pool: GpuPool) -> list[dict[str, str]]:
    """The pod's claim, made from the pool's ResourceClaimTemplate in the job's namespace."""
    return [{"name": CLAIM_NAME, "resourceClaimTemplateName": claim_template_name(pool.name)}]


TRAINJOB_DRA_POLICY = "trainjob-dra-gpus"
"""The policy that refuses a TrainJob asking a DRA variant for `nvidia.com/gpu`; each team
namespace binds it (`binding`)."""


def policy(runtimes: Sequence[str]) -> dict[str, Any] | None:
    """A ValidatingAdmissionPolicy refusing a TrainJob on one of `runtimes` (our DRA variants)
    whose resourcesPerNode names `nvidia.com/gpu`: no DRA node advertises it, so such a job would
    hold the team's quota and never start. None without DRA variants."""
    if not runtimes:
        return None
    names = cel_list(runtimes)
    resources = "object.spec.trainer.resourcesPerNode"
    return fail_closed_policy(
        TRAINJOB_DRA_POLICY,
        [{"apiGroups": ["trainer.kubeflow.org"], "apiVersions": ["v1alpha1"], "operations": ["CREATE", "UPDATE"], "resources": ["trainjobs"]}],
        [
            {
                "name": "on-a-platform-dra-runtime",
                "expression": "(!has(object.spec.runtimeRef.kind) || object.spec.runtimeRef.kind == 'ClusterTrainingRuntime') && "
                f"object.spec.runtimeRef.name in {names}",
            }
        ],
        [
            {
                "expression": f"!(has(object.spec.trainer) && has({resources})) || "
                f"!((has({resources}.limits) && '{GPU_RESOURCE}' in {resources}.limits) || "
                f"(has({resources}.requests) && '{GPU_RESOURCE}' in {resources}.requests))",
                "message": f"this runtime's GPUs come through DRA (a ResourceClaim of the node's GPUs); its nodes have no "
                f"{GPU_RESOURCE}, so a job asking for it would never start: leave the GPUs out of resourcesPerNode "
                "(the SDK: resources_per_node without \"gpu\")",
                "reason": "Invalid",
            }
        ],
    )


def binding(namespace: str) -> dict[str, Any]:
    """The policy in force in one team namespace."""
    return team_binding(TRAINJOB_DRA_POLICY, namespace)
