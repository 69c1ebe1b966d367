"""Args of each GPU pool's GPUDirect networking ("the fabric"), cut from the stack model: what
the cloud side creates (infra/fabric.py: VPCs, subnets, firewall rules, the node pool's extra
NICs) and what the cluster side needs (the `Network` / `GKENetworkParamSet` objects, the NCCL
plugin installers on the pool's nodes, the runtimes' interfaces annotation). One pure
function, `fabric_pools`, for both sides, so both read the same names
(facts/gpu_fabric.py fabric_networks)."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from facts import gpu_fabric
from facts.gpu_fabric import FabricNic
from facts.node_labels import Taint, pool_selector, pool_taints
from stackmodel.schema import GkeClusterConfig
from stackmodel.stack import PlatformConfig


@dataclass(frozen=True)
class FabricPoolArgs:
    """One GPU pool with GPUDirect networking (`network: tcpxo | rdma`)."""

    pool: str
    """The GPU pool's name (its node pool, Kueue flavor and runtimes are named after it)."""
    kind: str
    """`tcpxo` or `rdma` (facts/gpu_fabric.py TCPXO, RDMA)."""
    machine_type: str
    accelerator: str
    gpus_per_node: int
    node_selector: Mapping[str, str]
    """Node labels that select exactly this pool's nodes (facts/node_labels.py pool_selector):
    the NCCL plugin installer's and the runtimes' nodeSelector."""
    nics: tuple[FabricNic, ...]
    """The nodes' extra NICs in the node pool's order, with their VPC, subnet, Kubernetes
    `Network` name, device mode and pod interface name."""
    created: bool
    """The program creates the VPCs and subnets (fabric.cidr); else they are the stack's own."""
    project: str | None
    """The project that holds the VPCs: the cluster network's (a Shared VPC host project's);
    None for the provider's default, the stack's own."""
    region: str
    zone: str | None
    """The pool's zone when it has exactly one (an RDMA pool always: its RoCE VPC is zonal)."""
    subnet_ranges: tuple[ipaddress.IPv4Network, ...]
    """Created: each NIC's subnet range, in `nics` order (facts/gpu_fabric.py carve); else empty."""
    cidr: ipaddress.IPv4Network | None
    """Created: the whole fabric range (the TCPXO firewall rules allow it)."""
    taints: tuple[Taint, ...] = ()
    """The pool's node taints (facts/node_labels.py pool_taints: the GPU taint, then the stack's):
    what a DaemonSet on the pool's nodes tolerates."""

    @property
    def fabric(self) -> gpu_fabric.Fabric:
        return gpu_fabric.FABRICS[self.kind]

    @property
    def pod_nics(self) -> tuple[FabricNic, ...]:
        """The NICs a training pod attaches (the `networking.gke.io/interfaces` annotation, after eth0)."""
        return tuple(nic for nic in self.nics if nic.in_pod)

    @property
    def gpu_vpcs(self) -> tuple[str, ...]:
        """The GPU NICs' VPCs, each once (TCPXO: eight; RDMA: the RoCE VPC)."""
        return tuple(dict.fromkeys(nic.vpc for nic in self.nics if nic.role == "gpu"))

    @property
    def network_profile(self) -> str | None:
        """The RoCE VPC's network profile, `projects/<project>/global/networkProfiles/<zone>-vpc-roce`
        (cluster-toolkit examples/gke-a4/gke-a4.yaml; pulumi-gcp compute.NetworkArgs.network_profile)."""
        profile = self.fabric.network_profile
        if profile is None or self.zone is None:
            return None
        return f"projects/{self.project}/global/networkProfiles/{profile.format(zone=self.zone)}"


def fabric_pools(config: PlatformConfig) -> tuple[FabricPoolArgs, ...]:
    """Every GPU pool of a gke stack with a fabric, in the stack's order; () on kind or without."""
    cluster = config.cluster
    if not isinstance(cluster, GkeClusterConfig):
        return ()
    existing = cluster.network.existing
    project = existing.host_project if existing is not None and existing.host_project else config.project
    found: list[FabricPoolArgs] = []
    for pool in cluster.gpu_pools:
        kind = pool.fabric_kind
        if kind == gpu_fabric.NONE or pool.fabric is None:
            continue
        source = pool.fabric
        cidr = source.cidr
        found.append(
            FabricPoolArgs(
                pool=pool.name,
                kind=kind,
                machine_type=pool.machine_type,
                accelerator=pool.accelerator,
                gpus_per_node=pool.gpus_per_node,
                node_selector=MappingProxyType(pool_selector(pool)),
                nics=gpu_fabric.fabric_networks(cluster.name, pool.name, kind, source.existing_pairs()),
                created=cidr is not None,
                project=project,
                region=cluster.region,
                zone=pool.zones[0] if pool.zones and len(pool.zones) == 1 else None,
                subnet_ranges=gpu_fabric.carve(cidr, kind) if cidr is not None else (),
                cidr=cidr,
                taints=tuple(pool_taints(pool)),
            )
        )
    return tuple(found)
