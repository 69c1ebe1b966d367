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
`source /usr/local/gib/scripts/set_nccl_env.sh`, a script of the plugin's release on the node
whose values are not published beside it (runtimes/fabric.py writes what it sets into an
NCCL configuration file instead of copying values we cannot check).
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
"""What nccl-test-a4.yaml sources before NCCL runs."""
NCCL_CONF_VOLUME = "nccl-conf"
NCCL_CONF_DIR = "/etc/mlplatform-nccl"
NCCL_CONF_FILE = f"{NCCL_CONF_DIR}/nccl.conf"
"""NCCL reads `KEY=VALUE` lines from the file $NCCL_CONF_FILE names (NCCL 2.23 and later;
docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html, read 2026-12-04), in every process
that inherits the variable: a setting no command line can lose."""
GIB_CONF_INIT = "gib-nccl-env"
"""The init container that sources GIB_ENV_SCRIPT in the pod (its network namespace: the
script sees the pod's RDMA interfaces) and writes the NCCL_* variables it exports to
NCCL_CONF_FILE, in the trainer's own image (bash)."""
GIB_CONF_SCRIPT = f'set -euo pipefail\nsource {GIB_ENV_SCRIPT}\nenv | grep "^NCCL_" > {NCCL_CONF_FILE}\ncat {NCCL_CONF_FILE}\n'
