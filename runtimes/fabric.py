"""What a GPU pool's GPUDirect network adds to its ClusterTrainingRuntime variants, so that
`TrainerClient().train(runtime="torch-distributed-<pool>")` uses the fabric with no extra
argument: the interfaces annotation that attaches the pod to the pool's GPU NICs, the NCCL
environment, the host directories NCCL's plugin lives in and, on TCPXO, the receive-datapath
daemon beside every trainer. The pod spec is data in facts/fabric_pods.py (Google's examples
at the pinned commit); the NICs come from the fabric catalog (facts/gpu_fabric.py) through
the runtimes' Args (`RuntimeFabric`).

Per pod template (both replicated jobs of an MPI runtime: ranks run on the node pods and on
the launcher, runLauncherAsNode), on the `node` container (the trainer; the SDK reads it):
- TCPXO: the daemon as a native sidecar (an init container with `restartPolicy: Always`,
  Kubernetes 1.33 GA, in the pod template of Trainer v2.3.0's CRD and JobSet v0.12.0's): a
  plain second container, as Google's single-pod example has it, would keep every Job pod
  running after training ends, and the TrainJob would never complete; the injector's device
  annotation keyed by its name.
- RDMA: the gIB plugin's own settings script, sourced by the trainer's own bash before the
  training code (BASH_ENV; every command the SDK gives is `bash -c ...`), as GKE's example
  sources it in the workload container: its exports win over the image's and the job's, and the
  values stay the plugin release's, on the node, never copied here. (An NCCL configuration file
  written by an init container would lose to any variable already set: NCCL reads it with
  setenv(..., 0), facts/fabric_pods.py.) An init container fails the pod while the script is
  not on the node yet.
- MPI: mpirun starts the ranks of other pods over ssh, where the container's environment is
  not; Open MPI forwards the variables `OMPI_MCA_mca_base_env_list` names (`;`-separated) from
  the launcher to every rank (open-mpi ompi v4.1.x orte/orted/orted_submit.c and prrte's
  schizo_ompi.c read it; it cannot be combined with `mpirun -x`, which the SDK's command,
  `mpirun --hostfile /etc/mpi/hostfile bash -c ...`, does not use: kubeflow 0.5.0
  kubeflow/trainer/constants/constants.py MPI_COMMAND).
"""

from __future__ import annotations

import json
from typing import Any

from facts import fabric_pods as pods
from runtimes.args import RuntimeFabric

TCPXO = "tcpxo"
RDMA = "rdma"
ENV_LIST = "OMPI_MCA_mca_base_env_list"


def interfaces(fabric: RuntimeFabric) -> list[dict[str, str]]:
    """The interfaces annotation's value: the pod network on eth0, then every GPU NIC."""
    default = {"interfaceName": pods.DEFAULT_INTERFACE, "network": pods.DEFAULT_NETWORK}
    return [default, *({"interfaceName": i, "network": n} for i, n in fabric.nics)]


def pod_annotations(fabric: RuntimeFabric) -> dict[str, str]:
    """The pod annotations: GKE multi-networking's, and on TCPXO the device injector's."""
    found = {
        pods.DEFAULT_INTERFACE_ANNOTATION: pods.DEFAULT_INTERFACE,
        pods.INTERFACES_ANNOTATION: json.dumps(interfaces(fabric)),
    }
    if fabric.network == TCPXO:
        found[pods.DEVICE_ANNOTATION_PREFIX + pods.TCPXO_DAEMON] = "".join(f"- path: {d}\n" for d in pods.TCPXO_DAEMON_DEVICES)
    return found


def _env(pairs: tuple[tuple[str, str], ...]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in pairs]


def _mounts(mounts: tuple[pods.HostMount, ...]) -> list[dict[str, Any]]:
    return [{"name": m.volume, "mountPath": m.mount_path} for m in mounts]


def _volumes(mounts: tuple[pods.HostMount, ...]) -> list[dict[str, Any]]:
    return [{"name": m.volume, "hostPath": {"path": m.host_path}} for m in mounts]


def trainer_env(fabric: RuntimeFabric) -> tuple[tuple[str, str], ...]:
    """The trainer container's environment for the fabric."""
    if fabric.network == TCPXO:
        return pods.tcpxo_nccl_env(tuple(i for i, _ in fabric.nics))
    return (("LD_LIBRARY_PATH", pods.RDMA_LIBRARY_PATH), (pods.BASH_ENV, pods.GIB_ENV_SCRIPT))


def _unique(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """By name, first kept (the TCPXO daemon and trainer share the library volume)."""
    seen: dict[str, dict[str, Any]] = {}
    for item in items:
        seen.setdefault(item["name"], item)
    return list(seen.values())


def pod_template(template: dict[str, Any], fabric: RuntimeFabric, *, image: str, mpi: bool) -> dict[str, Any]:
    """A replicated job's pod template (`{metadata, spec}`) on `fabric`: a new dict.
    `image`: the trainer's (RDMA's init container runs its shell); `mpi`: forward the
    trainer's fabric environment to the ranks mpirun starts."""
    metadata = dict(template.get("metadata") or {})
    metadata["annotations"] = {**(metadata.get("annotations") or {}), **pod_annotations(fabric)}
    spec = dict(template["spec"])
    env = trainer_env(fabric)
    extra_env = _env(env)
    if mpi:
        extra_env.append({"name": ENV_LIST, "value": ";".join(name for name, _ in env)})
    if fabric.network == TCPXO:
        trainer_mounts, volumes = pods.TCPXO_TRAINER_MOUNTS, pods.TCPXO_DAEMON_MOUNTS + pods.TCPXO_TRAINER_MOUNTS
        init = [
            {
                "name": pods.TCPXO_DAEMON,
                "image": pods.TCPXO_DAEMON_IMAGE_REF,
                "command": list(pods.TCPXO_DAEMON_COMMAND),
                "args": [pods.TCPXO_DAEMON_SCRIPT],
                "restartPolicy": "Always",
                "securityContext": {"capabilities": {"add": list(pods.TCPXO_DAEMON_CAPABILITIES)}},
                "env": _env(pods.TCPXO_DAEMON_ENV),
                "volumeMounts": _mounts(pods.TCPXO_DAEMON_MOUNTS),
            }
        ]
        extra_volumes = _volumes(volumes)
        extra_mounts = _mounts(trainer_mounts)
    else:
        gib = [m for m in pods.RDMA_MOUNTS if pods.GIB_ENV_SCRIPT.startswith(m.mount_path + "/")]
        init = [
            {
                "name": pods.GIB_READY_INIT,
                "image": image,
                "command": ["/bin/sh", "-c"],
                "args": [pods.GIB_READY_SCRIPT],
                "volumeMounts": _mounts(tuple(gib)),
            }
        ]
        extra_volumes = _volumes(pods.RDMA_MOUNTS)
        extra_mounts = _mounts(pods.RDMA_MOUNTS)
    containers = []
    for container in spec["containers"]:
        container = dict(container)
        container["env"] = [*(container.get("env") or []), *extra_env]
        container["volumeMounts"] = _unique([*(container.get("volumeMounts") or []), *extra_mounts])
        containers.append(container)
    spec["initContainers"] = [*(spec.get("initContainers") or []), *init]
    spec["containers"] = containers
    spec["volumes"] = _unique([*(spec.get("volumes") or []), *extra_volumes])
    return {**template, "metadata": metadata, "spec": spec}


def on_fabric(manifest: dict[str, Any], fabric: RuntimeFabric | None, *, image: str, mpi: bool) -> dict[str, Any]:
    """A ClusterTrainingRuntime manifest (runtimes/catalog.py) with every replicated job's pod
    template on `fabric`; unchanged without one."""
    if fabric is None:
        return manifest
    jobset = manifest["spec"]["template"]["spec"]
    jobs = []
    for job in jobset["replicatedJobs"]:
        job_template = job["template"]
        pod = job_template["spec"]["template"]
        jobs.append({**job, "template": {**job_template, "spec": {**job_template["spec"], "template": pod_template(pod, fabric, image=image, mpi=mpi)}}})
    template = {**manifest["spec"]["template"], "spec": {**jobset, "replicatedJobs": jobs}}
    return {**manifest, "spec": {**manifest["spec"], "template": template}}
