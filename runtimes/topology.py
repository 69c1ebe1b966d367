"""The topology request of each runtime on a topology-aware GPU pool: the pod-template
annotations Kueue reads for a TrainJob's pod sets (facts/topology.py).

Where Kueue reads them, kubernetes-sigs/kueue@v0.19.2: the TrainJob integration builds the
TrainJob's JobSet in-process from the runtime through Trainer's own runtime framework
(pkg/controller/jobs/trainjob/trainjob_controller.go:146-183 getChildJobSet, with Trainer
v2.2.1's library, go.mod:14) and takes the JobSet's pod sets (:217-224), one per replicated
job, whose topology request comes from the annotations of that job's pod template
(pkg/controller/jobs/jobset/jobset_controller.go:115-135, pkg/controller/jobframework/
tas.go:54-114); the TrainJob webhook validates the same annotations (trainjob_webhook.go:
149-165). Trainer keeps the runtime's pod-template metadata in the JobSet it builds
(kubeflow/trainer@v2.2.1 pkg/runtime/core/trainingruntime.go:124-200 newRuntimeInfo, the
runtime's JobSet spec as the apply configuration; :141-248 at v2.3.0, which builds the real
JobSet): so the annotations belong on the runtime's pod templates. The TrainJob's own
metadata annotations are not read for this; the SDK's `train()` writes no pod-template
metadata, so a job on such a runtime needs no extra argument.

The choice, per runtime (docs/runtimes.md):
- every runtime *prefers* one sub-block: Kueue places the pods as close as the free capacity
  allows and still admits a job larger than a sub-block (a required level would hold such a
  job forever); GKE's guide lists preferred sub-block among its requests;
- the MPI runtimes (deepspeed, mlx) have two pod sets, the launcher (rank 0, one pod) and the
  nodes: one pod-set group, so Kueue fits both into one domain together (a group of exactly two
  pod sets, one of them of one pod, with the same request: jobframework/tas_validation.go:
  214-280).
"""

from __future__ import annotations

from facts.topology import GROUP_ANNOTATION, PREFERRED_ANNOTATION, SUBBLOCK_LABEL
from stackmodel.schema import GpuPool

LEVEL = SUBBLOCK_LABEL
"""The level every runtime prefers."""
MPI_GROUP = "launcher-and-nodes"
"""The pod-set group of an MPI runtime's two replicated jobs (not a number: tas_validation.go:158)."""


def pod_annotations(pool: GpuPool | None, *, grouped: bool) -> dict[str, str]:
    """The topology annotations of one pod template of a runtime variant on `pool`; none off a
    topology-aware pool (a topology request on a flavor without a Topology is never admitted:
    kueue@v0.19.2 pkg/scheduler/flavorassigner/tas_flavorassigner.go:182).
    `grouped`: the template is one of an MPI runtime's two."""
    if pool is None or not pool.topology_aware:
        return {}
    found = {PREFERRED_ANNOTATION: LEVEL}
    if grouped:
        found[GROUP_ANNOTATION] = MPI_GROUP
    return found
