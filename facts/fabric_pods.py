"""What a training pod on a GPUDirect pool needs of its own, as data: the pod spec Google's
examples give for each network kind, read at the pinned commit of
GoogleCloudPlatform/container-engine-accelerators (facts/versions.py GPUDIRECT_MANIFESTS,
992db812, read 2026-12-04), and the names of GKE's multi-networking annotations.

runtimes/fabric.py puts it into the pool's ClusterTrainingRuntime variants, with the NICs
(interface and Network names) from the fabric catalog (facts/gpu_fabric.py).

TCPXO (A3 Mega): gpudirect-tcpxo/nccl-test-latest.yaml, the variant without host networking
and without privileges (the NRI device injector hands the daemon the GPU devices it names in
an annotation): a `tcpxo-daemon` container (the receive-datapath manager, RxDM) beside the
trainer, the host's NCCL libraries mounted at /usr/local/nvidia/lib64 in both, the host's
/sys and /proc/sys for the daemon, /dev/aperture_devices for the trainer; NCCL's settings
from gpudirect-tcpxo/README.md (release Jan 9, 2026, "NCCL configs").

RDMA (A3 Ultra, A4): gpudirect-rdma/nccl-test-a4.yaml: the host's NVIDIA directory at
/usr/local/nvidia and the gIB directory (what nccl-rdma-installer.yaml copies to
/home/kubernetes/bin/gib) at /usr/local/gib, LD_LIBRARY_PATH, and NCCL's settings from
`source /usr/local/gib/scripts/set_nccl_env.sh` in the workload container's own shell (its
lines 76 and 136), a script of the plugin's release on the node whose values are not published
beside it, so they are never copied here. The trainer's bash sources it through BASH_ENV
(runtimes/fabric.py), as the example's container does: its exports win over whatever the image
or the job set before, which an NCCL configuration file (NCCL_CONF_FILE) could not do: NCCL reads
that file with setenv(name, value, 0), never over a variable already set (NVIDIA/nccl v2.29.7-1
src/misc/param.cc setEnvFile, src/os/linux.cc:58 ncclOsSetEnv), and NCCL before 2.23 does not
read NCCL_CONF_FILE at all (v2.21.5-1 has no such variable; v2.23.4-1 src/misc/param.cc:53).
"""

from __future__ import annotations

from dataclasses import dataclass

from facts.versions import TCPXO_DAEMON_IMAGE, image

# --- GKE multi-networking and the NRI device injector ----------------------------------------
# The pod annotations both examples carry (nccl-test-latest.yaml, nccl-test-a4.yaml): the
# interface that keeps the pod network, and every interface with the Network it attaches.
DEFAULT_INTERFACE_ANNOTATION = "networking.gke.io/default-interface"
INTERFACES_ANNOTATION = "networking.gke.io/interfaces"
DEFAULT_INTERFACE = "eth0"
DEFAULT_NETWORK = "default"
"""The pod network's Network, which GKE itself has once multi-networking is on: the examples
attach eth0 to it and create only the GPU NICs' Networks (their Networks are ours)."""
DEVICE_ANNOTATION_PREFIX = "devices.gke.io/container."
"""`devices.gke.io/container.<container name>`: the devices the NRI injector adds to that
container (nri_device_injector/nri_device_injector.go ctrDeviceKeyPrefix; any container of
the pod, init containers included: it adjusts every container containerd creates)."""

# --- TCPXO ----------------------------------------------------------------------------------

TCPXO_DAEMON = "tcpxo-daemon"
"""The daemon container's name; the device annotation is keyed by it."""
TCPXO_DAEMON_IMAGE_REF = image(TCPXO_DAEMON_IMAGE)
TCPXO_DAEMON_COMMAND = ("/bin/sh", "-c")
TCPXO_DAEMON_SCRIPT = "set -ex\nchmod 755 /fts/entrypoint_rxdm_container.sh\n/fts/entrypoint_rxdm_container.sh --num_hops=2\n"
"""nccl-test-latest.yaml's args, as given (README: `--num_nics` removed at 2026-04-20, abbe8ddf)."""
TCPXO_DAEMON_CAPABILITIES = ("NET_ADMIN", "NET_BIND_SERVICE")
TCPXO_DAEMON_DEVICES = (
    *(f"/dev/nvidia{n}" for n in range(8)),
    "/dev/nvidiactl",
    "/dev/nvidia-uvm",
    "/dev/dmabuf_import_helper",
)
"""The devices nccl-test-latest.yaml's `devices.gke.io/container.tcpxo-daemon` names: the
eight GPUs of an a3-megagpu-8g, NVIDIA's control devices, and the import helper the
installer's pre-installation step loads (`modprobe import-helper`)."""
NCCL_LIBRARY_DIR = "/usr/local/nvidia/lib64"
"""Where the host's /home/kubernetes/bin/nvidia/lib64 is mounted in both containers: the
installer copies the TCPXO NCCL build there (nccl-tcpxo-installer.yaml: `cp -r
/var/lib/tcpxo/lib64/. /usr/local/nvidia/lib64` with /home/kubernetes/bin at /usr/local)."""
NCCL_LIBRARY_HOST_DIR = "/home/kubernetes/bin/nvidia/lib64"
APERTURE_DEVICES = "/dev/aperture_devices"
"""Bind-mounted per NIC by the installer's pre-installation step; the trainer's NCCL reads it
(NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY)."""


@dataclass(frozen=True)
class HostMount:
    """A host directory mounted into a container."""

    volume: str
    host_path: str
    mount_path: str


TCPXO_DAEMON_MOUNTS = (
    HostMount("tcpxo-nvidia", NCCL_LIBRARY_HOST_DIR, NCCL_LIBRARY_DIR),
    HostMount("tcpxo-sys", "/sys", "/hostsysfs"),
    HostMount("tcpxo-proc-sys", "/proc/sys", "/hostprocsysfs"),
)
TCPXO_TRAINER_MOUNTS = (
    HostMount("tcpxo-nvidia", NCCL_LIBRARY_HOST_DIR, NCCL_LIBRARY_DIR),
    HostMount("tcpxo-aperture-devices", APERTURE_DEVICES, APERTURE_DEVICES),
)
TCPXO_DAEMON_ENV = (("LD_LIBRARY_PATH", NCCL_LIBRARY_DIR),)


def tcpxo_nccl_env(gpu_interfaces: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The trainer's NCCL environment on TCPXO: README.md "NCCL configs" of the Jan 9, 2026
    release in its order, the tuner and guest-config files at the library directory the
    trainer mounts (the README: "replace /usr/local/tcpxo/lib64/ with the NCCL lib directory
    inside the workload container"), the NICs NCCL_FASTRAK_IFNAME names the pod's GPU
    interfaces (`gpu_interfaces`, as the interfaces annotation names them), plus
    nccl-test-latest.yaml's LD_LIBRARY_PATH and NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY and the
    README's NCCL_LIB_DIR (where nccl-env-profile.sh lies, for who sources it)."""
    return (
        ("LD_LIBRARY_PATH", NCCL_LIBRARY_DIR),
        ("NCCL_LIB_DIR", NCCL_LIBRARY_DIR),
        ("NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY", APERTURE_DEVICES),
        ("NCCL_FASTRAK_CTRL_DEV", DEFAULT_INTERFACE),
        ("NCCL_FASTRAK_IFNAME", ",".join(gpu_interfaces)),
        ("NCCL_SOCKET_IFNAME", DEFAULT_INTERFACE),
        ("NCCL_CROSS_NIC", "0"),
        ("NCCL_PROTO", "Simple,LL128"),
        ("NCCL_MIN_NCHANNELS", "4"),
        ("NCCL_TUNER_PLUGIN", "libnccl-tuner.so"),
        ("NCCL_TUNER_CONFIG_PATH", f"{NCCL_LIBRARY_DIR}/a3plus_tuner_config.textproto"),
        ("NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE", f"{NCCL_LIBRARY_DIR}/a3plus_guest_config.textproto"),
        ("CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"),
        ("NCCL_NVLSTREE_MAX_CHUNKSIZE", "131072"),
        ("NCCL_P2P_NET_CHUNKSIZE", "524288"),
        ("NCCL_P2P_PCI_CHUNKSIZE", "524288"),
        ("NCCL_P2P_NVL_CHUNKSIZE", "1048576"),
        ("NCCL_FASTRAK_NUM_FLOWS", "2"),
        ("NCCL_FASTRAK_USE_SNAP", "1"),
        ("NCCL_FASTRAK_PLUGIN_ACCEPT_TIMEOUT_MS", "600000"),
        ("NCCL_FASTRAK_ENABLE_CONTROL_CHANNEL", "0"),
        ("NCCL_BUFFSIZE", "8388608"),
        ("NCCL_NET_GDR_LEVEL", "PIX"),
        ("NCCL_FASTRAK_ENABLE_HOTPATH_LOGGING", "0"),
        ("NCCL_FASTRAK_USE_LLCM", "1"),
        ("NCCL_NVLS_ENABLE", "1"),
        ("NCCL_DEBUG", "WARN"),
    )


# --- RDMA (gIB) ------------------------------------------------------------------------------

RDMA_MOUNTS = (
    HostMount("gib-nvidia", "/home/kubernetes/bin/nvidia", "/usr/local/nvidia"),
    HostMount("gib", "/home/kubernetes/bin/gib", "/usr/local/gib"),
)
RDMA_LIBRARY_PATH = "/usr/local/nvidia/lib64"
"""nccl-test-a4.yaml's LD_LIBRARY_PATH: the installer copies the gIB NCCL build into the
host's /home/kubernetes/bin/nvidia/lib64 (nccl-rdma-installer.yaml)."""
GIB_ENV_SCRIPT = "/usr/local/gib/scripts/set_nccl_env.sh"
"""What nccl-test-a4.yaml sources in the workload container before NCCL runs: "all the necessary
environment variables for NCCL/gIB", which Google "expects to update in future NCCL/gIB releases"
(Google Cloud's gIB page, "Enable NCCL/gIB", read 2026-12-04)."""
BASH_ENV = "BASH_ENV"
"""The file a non-interactive bash reads and runs before its command (bash(1), INVOCATION: "When
bash is started non-interactively, to run a shell script, ... it looks for the variable BASH_ENV
in the environment ... and uses the expanded value as the name of a file to read and execute"):
every command the Kubeflow SDK gives a trainer is `bash -c ...` (kubeflow 0.5.0
trainer/constants/constants.py DEFAULT_COMMAND, TORCH_COMMAND; MPI_COMMAND runs each rank as
`bash -c ...`), so the script is sourced in the trainer's shell and every rank's, before the
training code, as GKE's example sources it."""
GIB_READY_INIT = "gib-ready"
"""An init container that waits for nothing and copies nothing: it fails the pod, naming the
file, while the gIB installer has not put the plugin's script on the node (the trainer's bash
would otherwise start without the plugin's settings, BASH_ENV naming a missing file)."""
GIB_READY_SCRIPT = (
    f'test -r {GIB_ENV_SCRIPT} || {{ echo "{GIB_ENV_SCRIPT} is not on this node: the gIB NCCL plugin installer '
    f'(nccl-rdma-installer) has not run here yet" >&2; exit 1; }}\n'
)
