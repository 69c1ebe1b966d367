"""Our ClusterTrainingRuntimes, as plain manifests: the names data scientists pass to
`TrainerClient().train(runtime=...)`.

Four upstream runtimes (torch, deepspeed, mlx, jax) in the shape Kubeflow Trainer v2.3.0
ships them, plus one variant of each per GPU pool that lands on that pool's nodes.
Our objects are installed by our code after the Trainer CRDs and webhook exist, not by
the Trainer chart's runtime installer hook (`helm.v4.Chart` does not run hooks in order).

Upstream sources are files of github.com/kubeflow/trainer at tag v2.3.0 (commit 658725bd),
named on each fact below: the chart's `charts/kubeflow-trainer/files/runtimes/<name>.yaml`
(which `templates/runtimes/_runtimes.tpl` feeds to the installer Job) and the kustomize
`manifests/base/runtimes/<name>.yaml`. At the tag the two agree on everything below,
images included (the chart's tag defaults to `v<chart version>`, the kustomize overlay
`manifests/overlays/runtimes/kustomization.yaml` sets `newTag: v2.3.0`).

Our deliberate differences from upstream:
- GPU pool variants (`<runtime>-<pool>`): node selector, tolerations, GPU requests = limits,
  a memory-backed /dev/shm, and for MPI one process per GPU. Upstream has no per-pool variants.
  On a topology-aware pool, Kueue's topology request on each pod template (runtimes/topology.py);
  on a DRA pool, a ResourceClaim of the node's GPUs instead of `nvidia.com/gpu` (runtimes/dra.py).
- `sidecar.istio.io/inject: "false"` on every pod template (kubeflow/trainer#2794).
- No `trainer.kubeflow.org/webhook-validation: disabled` (the chart's `runtimes.commonLabels`,
  the kustomize overlay's `labels`): it opts a runtime out of Trainer's admission webhook for
  good; runtimes we author stay validated (upstream docs, "Skipping Webhook Validation").
  Nor the chart's own `helm.sh/*` / `app.kubernetes.io/*` labels.
- No `spec.podGroupPolicy` (upstream's four have none either, and we keep it that way):
  gang scheduling is Kueue's job here; a coscheduling/volcano pod group would make a second
  scheduler fight Kueue's admission.
- No `kueue.x-k8s.io/queue-name` label: Kueue v0.19 gives a TrainJob without one the
  LocalQueue named `default` of its namespace (LocalQueueDefaulting, GA and locked on);
  the platform gives every team namespace that queue.
- Preemption-safe pods (docs/teams.md, "Preemption-safe jobs"): `priorityClassName` the
  platform's `batch` class, which Kueue takes as the priority of a TrainJob that names no
  WorkloadPriorityClass (facts/priorities.py); `terminationGracePeriodSeconds` long enough to
  write a checkpoint after SIGTERM, and the job's name in TRAINJOB_NAME and the label of the
  team's checkpoint PodDefault, which mounts the team's checkpoint store and sets
  CHECKPOINT_DIR to the job's own folder there (facts/checkpoints.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from facts.checkpoints import CHECKPOINT_LABEL, JOBSET_NAME_LABEL, TERMINATION_GRACE_SECONDS, TRAINJOB_NAME_ENV
from facts.naming import DNS_LABEL_MAX
from facts.node_labels import GPU_RESOURCE, POOL_LABEL, pool_selector, pool_taints
from facts.priorities import RUNTIME_PREEMPTION_POLICY, RUNTIME_PRIORITY_CLASS
from facts.versions import (
    DEEPSPEED_RUNTIME_IMAGE,
    JAX_RUNTIME_IMAGE,
    MLX_RUNTIME_IMAGE,
    TORCH_RUNTIME_IMAGE,
    Pin,
    image,
)
from runtimes import dra, fabric, topology
from runtimes.args import TrainingRuntimesArgs
from stackmodel.schema import GpuPool

API_VERSION = "trainer.kubeflow.org/v1alpha1"
KIND = "ClusterTrainingRuntime"
# The SDK lists only runtimes with this label and reads the framework from it
# (kubeflow/sdk kubeflow/trainer/constants/constants.py RUNTIME_FRAMEWORK_LABEL).
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
# Marks the replicated job whose `node` container is the trainer; the SDK finds the
# trainer's image and devices through it (kubeflow/sdk constants TRAINJOB_ANCESTOR_LABEL),
# value `trainer` in every upstream runtime (charts/kubeflow-trainer/files/runtimes/*.yaml).
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
ANCESTOR_TRAINER = "trainer"
# Istio sidecars break multi-node TrainJobs in profile namespaces (kubeflow/trainer#2794);
# the pod template label opts the pods out, NetworkPolicies keep the namespace isolated.
ISTIO_INJECT_LABEL = "sidecar.istio.io/inject"
# The container every upstream runtime names `node`; the SDK reads image and devices from it.
NODE = "node"
LAUNCHER = "launcher"
# NCCL exchanges data through /dev/shm; the container default (64Mi) is too small on GPUs.
SHM_VOLUME = "dshm"


class Policy(str, Enum):
    """The mlPolicy a runtime uses: it decides how Trainer launches the processes."""

    TORCH = "torch"
    MPI = "mpi"
    JAX = "jax"


@dataclass(frozen=True)
class RuntimeSpec:
    """One upstream runtime: its name, the framework label the SDK reads, image and policy."""

    name: str
    framework: str
    image: Pin
    policy: Policy


RUNTIMES: tuple[RuntimeSpec, ...] = (
    # charts/kubeflow-trainer/files/runtimes/torch-distributed.yaml: mlPolicy torch: {},
    # one `node` job (ancestor trainer), image pytorch/pytorch.
    RuntimeSpec("torch-distributed", "torch", TORCH_RUNTIME_IMAGE, Policy.TORCH),
    # charts/kubeflow-trainer/files/runtimes/deepspeed-distributed.yaml: mlPolicy mpi,
    # `node` (sshd) + `launcher` (ancestor trainer) jobs, image deepspeed-runtime.
    RuntimeSpec("deepspeed-distributed", "deepspeed", DEEPSPEED_RUNTIME_IMAGE, Policy.MPI),
    # charts/kubeflow-trainer/files/runtimes/mlx-distributed.yaml: same shape as deepspeed.
    RuntimeSpec("mlx-distributed", "mlx", MLX_RUNTIME_IMAGE, Policy.MPI),
    # charts/kubeflow-trainer/files/runtimes/jax-distributed.yaml: mlPolicy jax: {}, one `node` job.
    RuntimeSpec("jax-distributed", "jax", JAX_RUNTIME_IMAGE, Policy.JAX),
)

# The MPI wiring Trainer's MPI plugin expects from the upstream images, as the chart's
# deepspeed/mlx runtimes set it (charts/kubeflow-trainer/files/runtimes/
# deepspeed-distributed.yaml, mlx-distributed.yaml): OpenMPI, keys mounted for user mpiuser
# (uid 1000), the launcher is also rank 0 of the nodes, workers run sshd on 2222 and say
# Ready when it listens.
MPI_USER_ID = 1000
# From v2.3.0 Trainer mounts the SSH private key 0640 root:root (pkg/constants/constants.go
# MPISSHPrivateKeyFileMode, kubeflow/trainer#3649), so uid 1000 reads it only through its
# group: both MPI pod templates set `securityContext: {fsGroup: 1000}` (files/runtimes/
# deepspeed-distributed.yaml and mlx-distributed.yaml, kubeflow/trainer#3748).
MPI_FS_GROUP = 1000
SSH_AUTH_MOUNT_PATH = "/home/mpiuser/.ssh"
SSHD_COMMAND = ("/usr/sbin/sshd",)
SSHD_ARGS = ("-De", "-f", "/home/mpiuser/.sshd_config")
SSHD_PORT = 2222
# The JobSet dependsOn status the launcher waits for (the CRD allows Ready or Complete).
NODES_READY = "Ready"


def runtime_name(spec: RuntimeSpec, pool: GpuPool | None = None) -> str:
    """`<runtime>` or `<runtime>-<pool name>`, e.g. torch-distributed-l4: typed by hand in
    notebooks, so readable and never hash-suffixed; too long is an error, not a truncation."""
    name = spec.name if pool is None else f"{spec.name}-{pool.name}"
    if len(name) > DNS_LABEL_MAX:
        raise ValueError(
            f"runtime name {name!r} has {len(name)} characters, more than {DNS_LABEL_MAX}; "
            f"shorten GPU pool name {pool.name if pool else ''!r}"
        )
    return name


TRAINJOB_NAME = {"name": TRAINJOB_NAME_ENV, "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{JOBSET_NAME_LABEL}']"}}}
"""The TrainJob's name, from its JobSet's label on the pod: first in the container's variables, so
the checkpoint PodDefault's CHECKPOINT_DIR, appended after them, may name it."""


def _container(spec: RuntimeSpec, *, sshd: bool, pool: GpuPool | None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": NODE, "image": image(spec.image), "env": [dict(TRAINJOB_NAME)]}
    if spec.policy is Policy.MPI:
        container["securityContext"] = {"runAsUser": MPI_USER_ID}
    if sshd:
        container["command"] = list(SSHD_COMMAND)
        container["args"] = list(SSHD_ARGS)
        container["readinessProbe"] = {"tcpSocket": {"port": SSHD_PORT}, "initialDelaySeconds": 5}
    if pool is not None:
        # Every GPU of the node to the one pod per node; requests equal limits so Kueue
        # counts them. Quantities are strings: the SDK's models keep them unchanged.
        gpus = str(pool.gpus_per_node)
        if pool.dra:
            container["resources"] = dra.container_resources()
        else:
            container["resources"] = {"requests": {GPU_RESOURCE: gpus}, "limits": {GPU_RESOURCE: gpus}}
        container["volumeMounts"] = [{"name": SHM_VOLUME, "mountPath": "/dev/shm"}]
    return container


def _replicated_job(
    spec: RuntimeSpec,
    name: str,
    *,
    trainer: bool,
    pool: GpuPool | None,
    depends_on: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """One JobSet replicated job whose pods opt out of Istio and, with a pool, land on it.
    Only MPI runtimes have a non-trainer job: the nodes that run sshd for the launcher."""
    pod_spec: dict[str, Any] = {}
    if spec.policy is Policy.MPI:
        # files/runtimes/deepspeed-distributed.yaml: on the launcher's and the nodes' pods.
        pod_spec["securityContext"] = {"fsGroup": MPI_FS_GROUP}
    pod_spec["containers"] = [_container(spec, sshd=not trainer, pool=pool)]
    pod_spec["priorityClassName"] = RUNTIME_PRIORITY_CLASS.name
    pod_spec["terminationGracePeriodSeconds"] = TERMINATION_GRACE_SECONDS
    if pool is not None:
        pod_spec["nodeSelector"] = pool_selector(pool)
        pod_spec["tolerations"] = [taint.toleration() for taint in pool_taints(pool)]
        pod_spec["volumes"] = [{"name": SHM_VOLUME, "emptyDir": {"medium": "Memory"}}]
        if pool.dra:
            pod_spec["resourceClaims"] = dra.pod_claims(pool)
    template: dict[str, Any] = {}
    if trainer:
        template["metadata"] = {"labels": {ANCESTOR_LABEL: ANCESTOR_TRAINER}}
    pod_metadata: dict[str, Any] = {"labels": {ISTIO_INJECT_LABEL: "false", CHECKPOINT_LABEL: "true"}}
    placement = topology.pod_annotations(pool, grouped=spec.policy is Policy.MPI)
    if placement:
        pod_metadata["annotations"] = placement
    template["spec"] = {"template": {"metadata": pod_metadata, "spec": pod_spec}}
    job: dict[str, Any] = {"name": name}
    if depends_on is not None:
        job["dependsOn"] = depends_on
    job["template"] = template
    return job


def _ml_policy(spec: RuntimeSpec, pool: GpuPool | None) -> dict[str, Any]:
    if spec.policy is Policy.MPI:
        # One MPI process per GPU on GPU pools; one per node otherwise (upstream default).
        return {
            "numNodes": 1,
            "mpi": {
                "numProcPerNode": pool.gpus_per_node if pool else 1,
                "mpiImplementation": "OpenMPI",
                "sshAuthMountPath": SSH_AUTH_MOUNT_PATH,
                "runLauncherAsNode": True,
            },
        }
    # torch and jax: `{}` as upstream. The v2.3 CRD's torch policy has no numProcPerNode
    # field: Trainer's torch plugin decides torchrun's processes per node.
    return {"numNodes": 1, spec.policy.value: {}}


def _jobset_spec(spec: RuntimeSpec, pool: GpuPool | None) -> dict[str, Any]:
    if spec.policy is not Policy.MPI:
        return {"replicatedJobs": [_replicated_job(spec, NODE, trainer=True, pool=pool)]}
    # The launcher runs mpirun (and is rank 0, runLauncherAsNode); the nodes run sshd. The
    # JobSet succeeds when the launcher does; node pods must be reachable by DNS before Ready.
    # From v2.3.0 the nodes come first and JobSet creates the launcher only once the node job
    # is Ready, i.e. sshd listens on every node (files/runtimes/deepspeed-distributed.yaml,
    # kubeflow/trainer#3748: JobSet forbids dependsOn on the first job and wants the
    # dependency listed before the job that depends on it).
    return {
        "network": {"publishNotReadyAddresses": True},
        "successPolicy": {"operator": "All", "targetReplicatedJobs": [LAUNCHER]},
        "replicatedJobs": [
            _replicated_job(spec, NODE, trainer=False, pool=pool),
            _replicated_job(
                spec, LAUNCHER, trainer=True, pool=pool, depends_on=[{"name": NODE, "status": NODES_READY}]
            ),
        ],
    }


def runtime(spec: RuntimeSpec, pool: GpuPool | None = None) -> dict[str, Any]:
    """The ClusterTrainingRuntime manifest of `spec`, on `pool`'s GPUs when given."""
    labels = {FRAMEWORK_LABEL: spec.framework}
    if pool is not None:
        labels[POOL_LABEL] = pool.name
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": runtime_name(spec, pool), "labels": labels},
        "spec": {
            "mlPolicy": _ml_policy(spec, pool),
            "template": {"spec": _jobset_spec(spec, pool)},
        },
    }


def runtime_priority_class() -> dict[str, Any]:
    """The Kubernetes PriorityClass the runtimes' pods name (facts/priorities.py
    RUNTIME_PRIORITY_CLASS): Kueue reads its value as the priority of a TrainJob that names no
    WorkloadPriorityClass. It never preempts (`preemptionPolicy: Never`: Kueue decides who gives
    way, the kube-scheduler evicts nobody for these pods) and is no cluster default."""
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": RUNTIME_PRIORITY_CLASS.name},
        "value": RUNTIME_PRIORITY_CLASS.value,
        "preemptionPolicy": RUNTIME_PREEMPTION_POLICY,
        "globalDefault": False,
        "description": RUNTIME_PRIORITY_CLASS.description,
    }


def base_runtimes() -> list[dict[str, Any]]:
    """The four runtimes every cluster gets, without GPUs (CPU nodes, or GPUs requested
    per job through `resources_per_node`)."""
    return [runtime(spec) for spec in RUNTIMES]


def cluster_training_runtimes(args: TrainingRuntimesArgs) -> list[dict[str, Any]]:
    """Every runtime of the stack: the base four, then the four again per GPU pool in the
    stack's pool order (deterministic, so the same stack file gives the same plan); a fabric
    pool's on its GPUDirect network (runtimes/fabric.py)."""
    fabrics = {f.pool: f for f in args.fabrics}
    return base_runtimes() + [
        fabric.on_fabric(runtime(spec, pool), fabrics.get(pool.name), image=image(spec.image), mpi=spec.policy is Policy.MPI)
        for pool in args.gpu_pools
        for spec in RUNTIMES
    ]


def dra_runtimes(gpu_pools: Sequence[GpuPool]) -> list[str]:
    """The variants of the pools whose GPUs come through DRA (runtimes/dra.py)."""
    return [runtime_name(spec, pool) for pool in gpu_pools if pool.dra for spec in RUNTIMES]
