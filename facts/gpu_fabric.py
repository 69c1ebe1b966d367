"""GPUDirect networking ("the fabric") of GPU pools, as data: which machine types take which
network, the NICs, VPCs and subnets each needs, the GKE versions and GPU drivers it needs,
and the ONE naming function everyone uses for a pool's VPCs, subnets, Kubernetes `Network` /
`GKENetworkParamSet` objects and the interface names of the pod annotation. Imports nothing
of the project but the naming helpers.

Sources (stored copies, read 2026-12-04):
- GKE "Maximize GPU network bandwidth with GPUDirect and multi-networking" (Standard)
  (https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx): A3 Mega
  has "up to eight" secondary NICs for GPU data, each up to 200 Gbps; its "Requirements"
  section, as quoted with its link by a Google Cloud Japan hands-on (stored copy) and matching
  GoogleCloudPlatform/cluster-toolkit modules/compute/gke-node-pool/gpu_direct.tf's older
  `major_minor_version_acceptable_map` for a3-megagpu-8g: GKE 1.28.9-gke.1250000, 1.29.4-gke.1542000,
  1.30.4-gke.1129000 or later within those minors. The steps: eight VPCs with `--mtu=8244`,
  one subnet each, a firewall rule per VPC allowing tcp:0-65535, udp:0-65535 and icmp from the
  fabric's range; `Network`s `vpc1`..`vpc8` of type Device whose `GKENetworkParamSet` has
  `deviceMode: NetDevice`; pods name them as eth1..eth8 in `networking.gke.io/interfaces`
  (GoogleCloudPlatform/container-engine-accelerators@992db812 gpudirect-tcpxo/nccl-test-latest.yaml).
- AI Hypercomputer "Create an AI-optimized GKE cluster with default configuration"
  (https://docs.cloud.google.com/ai-hypercomputer/docs/create/gke-ai-hypercompute, "Requirements"):
  GPUDirect RDMA needs GKE 1.32.2-gke.1475000 or later on A4 and 1.31.4-gke.1183000 or later on
  A3 Ultra; A4's B200 need driver R570 (GKE installs it by default from 1.32.1-gke.1729000), A3
  Ultra's H200 R550 (`gpu-driver-version=latest` on 1.31, the default from 1.31.5-gke.1169000);
  "the GKE nodes must use a Container-Optimized OS node image"; A3 Ultra pools need the
  hyperdisk-balanced boot disk.
- AI Hypercomputer "Create a custom AI-optimized GKE cluster which uses A4 or A3 Ultra" (stored
  copies of its steps) and cluster-toolkit@10470803 examples/gke-a4/gke-a4.yaml: one extra gVNIC
  VPC with one subnet (GKENetworkParamSet `gvnic-1`, deviceMode NetDevice) and one VPC with the
  RDMA network profile `<zone>-vpc-roce` holding eight subnets (`rdma-0`..`rdma-7`, deviceMode
  RDMA); pods name the RDMA NICs eth2..eth9 (container-engine-accelerators@992db812
  gpudirect-rdma/nccl-test-a4.yaml: eth1, the node's gVNIC, is not in the pod).
- VPC "RDMA network profiles" (https://docs.cloud.google.com/vpc/docs/rdma-network-profiles):
  RoCE VPCs (`ZONE-vpc-roce`) take only MRDMA NICs, of A3 Ultra, A4 and A4X; resources in such a
  VPC are confined to the profile's zone, its subnets to that zone's region; MTU 8896 is
  recommended and the gcloud/API default; RDMA VPCs have implied allow-ingress and allow-egress
  rules. cluster-toolkit modules/network/vpc refuses firewall rules on a 'roce' profile VPC
  (the page's "features that don't apply to traffic from RDMA NICs").
- GKE "Set up multi-network support for Pods"
  (https://docs.cloud.google.com/kubernetes-engine/docs/how-to/setup-multinetwork-support-for-pods,
  "Requirements and limitations"): GKE Standard 1.28 or later; requires GKE Dataplane V2;
  Container-Optimized OS; no dual-stack; Pod networks of one cluster may not overlap; node
  network interfaces cannot be added or removed after a pool is created; in Shared VPC "all
  the network interfaces (NICs) attached to a node must belong to the same project as the host
  project"; Device-type Network names are at most 41 characters (the UNIX socket path).
Not confirmed from a stored copy: the GKE Standard TCPXO page's own driver requirement (the
program leaves the driver to GKE's default or LATEST, which at the versions above is past R550),
and whether node auto-provisioning can create multi-NIC pools (the program never asks it to:
fabric pools are its own node pools).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from facts.naming import bounded_name

READ = "2026-12-04"
TCPXO = "tcpxo"
RDMA = "rdma"
NONE = "none"
KINDS = (NONE, TCPXO, RDMA)

GCP_NAME_MAX = 63
"""Compute Engine resource names (networks, subnetworks, firewall rules): 1-63 characters."""
DEVICE_NETWORK_NAME_MAX = 41
"""GKE multi-networking: a Device-type `Network`'s name is at most 41 characters."""
NETDEVICE = "NetDevice"
RDMA_DEVICE = "RDMA"


@dataclass(frozen=True)
class MachineFabric:
    """What one machine type needs for its fabric."""

    machine_type: str
    min_versions: tuple[str, ...]
    """The first GKE version of each minor that carries the fabric, oldest minor first: a
    minor below the first is refused, later minors than the last are all fine."""
    driver: str
    """The NVIDIA driver branch the GPUs need (GKE installs it by default at min_versions)."""
    default_driver_from: str | None = None
    """The first GKE version whose default driver installation (`driverVersion: DEFAULT`) is
    `driver`; before it only LATEST installs it (None: GKE's default always fits)."""


@dataclass(frozen=True)
class Fabric:
    """One GPUDirect network kind."""

    kind: str
    title: str
    machines: Mapping[str, MachineFabric]
    gpu_nics: int
    """NICs carrying GPU traffic."""
    gvnic_nics: int
    """Extra gVNIC NICs besides the primary one (RDMA: one, on a VPC of its own)."""
    mtu: int
    """MTU of the VPCs the program creates."""
    gpu_vpc_per_nic: bool
    """TCPXO: a VPC per GPU NIC (a VM's NICs are on distinct VPCs); RDMA: one RoCE VPC, a subnet per NIC."""
    network_profile: str | None
    """The VPC network profile of the GPU VPC, `{zone}` for the pool's zone (RDMA: RoCE)."""
    gpu_device_mode: str
    """`GKENetworkParamSet.spec.deviceMode` of the GPU NICs."""
    firewall: bool
    """The program allows tcp/udp/icmp inside the fabric's range on the GPU VPCs (TCPXO). A RoCE
    VPC takes no firewall rules (its implied rules allow all)."""
    first_gpu_interface: int
    """The pod's interface number of the first GPU NIC (`eth<n>`)."""

    @property
    def nics(self) -> int:
        return self.gpu_nics + self.gvnic_nics

    @property
    def subnets(self) -> int:
        """Subnets the program carves from the pool's fabric range: one per NIC."""
        return self.nics


FABRICS: Mapping[str, Fabric] = MappingProxyType(
    {
        TCPXO: Fabric(
            kind=TCPXO,
            title="GPUDirect-TCPXO",
            machines={
                "a3-megagpu-8g": MachineFabric(
                    "a3-megagpu-8g", ("1.28.9-gke.1250000", "1.29.4-gke.1542000", "1.30.4-gke.1129000"), "GKE's default"
                )
            },
            gpu_nics=8,
            gvnic_nics=0,
            mtu=8244,
            gpu_vpc_per_nic=True,
            network_profile=None,
            gpu_device_mode=NETDEVICE,
            firewall=True,
            first_gpu_interface=1,
        ),
        RDMA: Fabric(
            kind=RDMA,
            title="GPUDirect RDMA over RoCE",
            machines={
                "a3-ultragpu-8g": MachineFabric("a3-ultragpu-8g", ("1.31.4-gke.1183000",), "R550", "1.31.5-gke.1169000"),
                "a4-highgpu-8g": MachineFabric("a4-highgpu-8g", ("1.32.2-gke.1475000",), "R570", "1.32.1-gke.1729000"),
            },
            gpu_nics=8,
            gvnic_nics=1,
            mtu=8896,
            gpu_vpc_per_nic=False,
            network_profile="{zone}-vpc-roce",
            gpu_device_mode=RDMA_DEVICE,
            firewall=False,
            first_gpu_interface=2,
        ),
    }
)

def machine_fabric(machine_type: str) -> MachineFabric | None:
    """What a machine type's fabric and GPUs need, or None for a machine without a fabric."""
    fabric = fabric_of(machine_type)
    return fabric.machines[machine_type] if fabric else None


def default_driver_problem(machine: MachineFabric, version: str) -> str | None:
    """Why GKE's default driver installation on `version` is too old for the machine's GPUs, or None."""
    if machine.default_driver_from is None:
        return None
    return version_problem(MachineFabric(machine.machine_type, (machine.default_driver_from,), machine.driver), version)


def fabric_of(machine_type: str) -> Fabric | None:
    """The fabric a machine type takes, or None."""
    return next((f for f in FABRICS.values() if machine_type in f.machines), None)


def version_key(version: str) -> tuple[int, ...]:
    """`1.31.4-gke.1183000` -> (1, 31, 4, 1183000); a minor or a patch alone sorts before its builds."""
    base, _, build = version.partition("-gke.")
    return (*(int(p) for p in base.split(".")), *((int(build),) if build else ()))


def version_problem(machine: MachineFabric, version: str) -> str | None:
    """Why GKE `version` (a minor such as 1.31, or a full version) cannot carry the fabric, or None.
    A minor alone gets that minor's newest patch, so only its minor is judged."""
    floors = sorted(machine.min_versions, key=version_key)
    minor = version_key(version)[:2]
    if minor < version_key(floors[0])[:2]:
        return f"needs GKE {floors[0]} or later"
    same = [f for f in floors if version_key(f)[:2] == minor]
    if same and len(version_key(version)) > 2 and version_key(version) < version_key(same[0]):
        return f"needs GKE {same[0]} or later in {minor[0]}.{minor[1]}"
    return None


@dataclass(frozen=True)
class FabricNic:
    """One extra NIC of a fabric pool's nodes, and every name that goes with it."""

    index: int
    """Its place among the pool's extra NICs (the order of the node pool's additional networks)."""
    role: str
    """`gpu` (GPU traffic) or `gvnic` (RDMA's extra host NIC)."""
    vpc: str
    """The VPC network's name (created by the program, or the stack's own)."""
    subnet: str
    """The subnetwork's name."""
    network: str
    """The Kubernetes `Network` (and its `GKENetworkParamSet`), cluster-scoped, at most 41 characters."""
    interface: str
    """The interface name in the pod's `networking.gke.io/interfaces` annotation."""
    device_mode: str
    """`GKENetworkParamSet.spec.deviceMode`: NetDevice or RDMA."""
    in_pod: bool
    """Whether training pods attach it (RDMA's gVNIC stays on the node)."""

    @property
    def param_set(self) -> str:
        """The `GKENetworkParamSet` the `Network` points at: the same name."""
        return self.network


def _gcp(cluster: str, pool: str, suffix: str) -> str:
    """A Compute Engine name unique to the cluster's pool (networks are global to the project)."""
    return bounded_name(f"{cluster}-{pool}", GCP_NAME_MAX, suffix=f"-{suffix}")


def _k8s(pool: str, suffix: str) -> str:
    return bounded_name(pool, DEVICE_NETWORK_NAME_MAX, suffix=f"-{suffix}")


def fabric_networks(
    cluster_name: str,
    pool_name: str,
    kind: str,
    existing: tuple[tuple[str, str], ...] | None = None,
) -> tuple[FabricNic, ...]:
    """The extra NICs of a pool's nodes with `kind`'s fabric, in the node pool's order: RDMA's
    gVNIC first, then the GPU NICs. `existing`: the stack's own (VPC, subnet) per NIC in that
    order; otherwise the names of what the program creates (`<cluster>-<pool>-gpu<i>` per TCPXO
    NIC; `<cluster>-<pool>-gvnic` and the RoCE VPC `<cluster>-<pool>-rdma` with subnets
    `...-rdma-<i>`). The Kubernetes names are per pool (`<pool>-vpc<i>`, `<pool>-gvnic-1`,
    `<pool>-rdma-<i>`), as a cluster's `Network`s are cluster-scoped and each pool has VPCs of
    its own. Empty for `none`."""
    fabric = FABRICS.get(kind)
    if fabric is None:
        return ()
    nics: list[FabricNic] = []
    for g in range(fabric.gvnic_nics):
        nics.append(
            FabricNic(
                index=len(nics),
                role="gvnic",
                vpc=_gcp(cluster_name, pool_name, "gvnic"),
                subnet=_gcp(cluster_name, pool_name, "gvnic"),
                network=_k8s(pool_name, f"gvnic-{g + 1}"),
                interface=f"eth{g + 1}",
                device_mode=NETDEVICE,
                in_pod=False,
            )
        )
    for i in range(fabric.gpu_nics):
        if fabric.gpu_vpc_per_nic:
            vpc = subnet = _gcp(cluster_name, pool_name, f"gpu{i}")
            network = _k8s(pool_name, f"vpc{i + 1}")
        else:
            vpc, subnet = _gcp(cluster_name, pool_name, "rdma"), _gcp(cluster_name, pool_name, f"rdma-{i}")
            network = _k8s(pool_name, f"rdma-{i}")
        nics.append(
            FabricNic(
                index=len(nics),
                role="gpu",
                vpc=vpc,
                subnet=subnet,
                network=network,
                interface=f"eth{fabric.first_gpu_interface + i}",
                device_mode=fabric.gpu_device_mode,
                in_pod=True,
            )
        )
    if existing is not None:
        if len(existing) != len(nics):
            raise ValueError(f"{kind} takes {len(nics)} networks, {len(existing)} given")
        nics = [
            FabricNic(n.index, n.role, vpc, subnet, n.network, n.interface, n.device_mode, n.in_pod)
            for n, (vpc, subnet) in zip(nics, existing, strict=True)
        ]
    return tuple(nics)


def firewall_name(vpc: str) -> str:
    """The firewall rule that lets a fabric VPC's range in: `<vpc>-internal`, within GCP's 63 characters."""
    return bounded_name(vpc, GCP_NAME_MAX, suffix="-internal")


def carve(cidr: ipaddress.IPv4Network, kind: str) -> tuple[ipaddress.IPv4Network, ...]:
    """The subnets' ranges of a created fabric, one per NIC in `fabric_networks` order: the
    range split into the fewest equal powers of two that hold them all (TCPXO: 8 eighths; RDMA:
    16 sixteenths, the first for the gVNIC, the next eight for the RDMA NICs)."""
    fabric = FABRICS[kind]
    bits = (fabric.subnets - 1).bit_length()
    return tuple(cidr.subnets(prefixlen_diff=bits))[: fabric.subnets]


def carve_prefix(cidr: ipaddress.IPv4Network, kind: str) -> int:
    """The prefix length of each subnet `carve` makes."""
    return cidr.prefixlen + (FABRICS[kind].subnets - 1).bit_length()


__all__ = [
    "FABRICS",
    "KINDS",
    "NONE",
    "RDMA",
    "TCPXO",
    "Fabric",
    "FabricNic",
    "MachineFabric",
    "carve",
    "carve_prefix",
    "fabric_networks",
    "fabric_of",
    "firewall_name",
    "version_problem",
]
