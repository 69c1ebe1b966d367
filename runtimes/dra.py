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
asks for `nvidia.com/gpu`, which no DRA node has, and never starts; CPU and memory alone are fine
for Kueue, which counts the pod's claims (docs/runtimes.md).
"""

from __future__ import annotations

from typing import Any

from facts.dra import CLAIM_NAME, claim_template_name
from stacks.schema import GpuPool


def container_resources() -> dict[str, Any]:
    """The node container's resources: the pod's claim."""
    return {"claims": [{"name": CLAIM_NAME}]}


def pod_claims(pool: GpuPool) -> list[dict[str, str]]:
    """The pod's claim, made from the pool's ResourceClaimTemplate in the job's namespace."""
    return [{"name": CLAIM_NAME, "resourceClaimTemplateName": claim_template_name(pool.name)}]
