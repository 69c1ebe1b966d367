"""GPUDirect networking ("the fabric") of GPU pools in the stack file: a pool's `network` and
`fabric` keys, and the loader's judgement of them (facts/gpu_fabric.py is the catalog it reads;
docs/gpu-fabric.md explains it). The pool's own problems are judged with the pool's
(`gpu-pool-fits-catalog`), what needs the cluster with the cluster (`gpu-pool-fabric-fits-cluster`)."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from enum import Enum
from typing import Annotated, Protocol

from pydantic import Field, model_validator

from facts import gpu_fabric, networks
from stackmodel.schema.common import Cidr, Model, problem, rule
from stackmodel.schema.network import _compute_name


class FabricNetwork(str, Enum):
    """A GPU pool's GPUDirect networking (facts/gpu_fabric.py, docs/gpu-fabric.md)."""

    NONE = gpu_fabric.NONE
    TCPXO = gpu_fabric.TCPXO
    """GPUDirect-TCPXO: A3 Mega (a3-megagpu-8g), eight extra NICs on eight VPCs."""
    RDMA = gpu_fabric.RDMA
    """GPUDirect RDMA over RoCE: A3 Ultra, A4; a gVNIC VPC and a RoCE VPC of eight subnets."""


class FabricNic(Model):
    """One extra NIC's existing VPC network and subnetwork, in the project of the cluster's own
    network (a Shared VPC host project's too: GKE needs every NIC of a node there)."""

    network: Annotated[str, _compute_name("network", "a3-gpu-0")] = Field(description="The VPC network's name.")
    subnetwork: Annotated[str, _compute_name("subnetwork", "a3-gpu-0-sub")] = Field(
        description="The subnetwork's name, in the cluster's region."
    )


class FabricConfig(Model):
    """Where a fabric pool's extra NICs' VPCs come from: the program creates them from `cidr`
    (carved into one subnet per NIC, facts/gpu_fabric.py carve), or the stack names its own
    (`existing`). Either replaces the pool."""

    cidr: Cidr | None = Field(
        default=None,
        description="A range the program carves into the fabric's subnets: tcpxo eight equal parts, rdma sixteen "
        "(the gVNIC's, then eight RDMA subnets); disjoint from the cluster's ranges and other pools' fabrics, e.g. "
        "192.168.0.0/16.",
    )
    existing: list[FabricNic] | None = Field(
        default=None,
        description="The stack's own networks, one per extra NIC in order: tcpxo eight VPCs (a VPC each); rdma the "
        "gVNIC's VPC and subnet first, then the RoCE VPC's eight subnets. In the project of the cluster's network.",
    )

    @model_validator(mode="after")
    @rule("fabric-source")
    def _one_source(self) -> FabricConfig:
        if (self.cidr is None) == (self.existing is None):
            raise problem("cidr", "give cidr (the program creates the networks) or existing (your own), one of them")
        return self

    def existing_pairs(self) -> tuple[tuple[str, str], ...] | None:
        return tuple((n.network, n.subnetwork) for n in self.existing) if self.existing is not None else None


class _Pool(Protocol):
    """What the fabric rules read of a GPU pool (stackmodel/schema/pools.py GpuPool)."""

    @property
    def name(self) -> str: ...
    @property
    def machine_type(self) -> str: ...
    @property
    def max(self) -> int: ...
    @property
    def zones(self) -> list[str] | None: ...
    @property
    def gvnic(self) -> bool: ...
    @property
    def fast_socket(self) -> bool: ...
    @property
    def network(self) -> FabricNetwork: ...
    @property
    def fabric(self) -> FabricConfig | None: ...
    @property
    def fabric_kind(self) -> str: ...


class _Network(Protocol):
    """What the fabric rules read of the cluster's network (stackmodel/schema/network.py NetworkConfig)."""

    @property
    def existing(self) -> _Existing | None: ...
    @property
    def master_cidr(self) -> ipaddress.IPv4Network: ...
    @property
    def subnet_cidr(self) -> ipaddress.IPv4Network: ...
    @property
    def pods_cidr(self) -> ipaddress.IPv4Network: ...
    @property
    def services_cidr(self) -> ipaddress.IPv4Network: ...


class _Existing(Protocol):
    @property
    def network(self) -> str: ...
    @property
    def host_project(self) -> str | None: ...
    @property
    def manage_host_project(self) -> bool: ...


class _Cluster(Protocol):
    """What the fabric rules read of a GKE cluster (stackmodel/schema/cluster.py GkeClusterConfig)."""

    @property
    def private_nodes(self) -> bool: ...
    @property
    def network(self) -> _Network: ...
    @property
    def gpu_pools(self) -> Sequence[_Pool]: ...
    def effective_version(self) -> tuple[str, str]: ...
    def zone_count(self, zones: list[str] | None = None) -> int: ...


def pool_fabric_problems(self: _Pool) -> list[tuple[str, str]]:
    """The pool's own fabric problems (facts/gpu_fabric.py); the cluster's side (versions,
    ranges, Shared VPC) is GkeClusterConfig's."""
    kind = self.network.value
    if self.network is FabricNetwork.NONE:
        return [("fabric", "fabric goes with network tcpxo or rdma; remove it")] if self.fabric is not None else []
    fabric = gpu_fabric.FABRICS[kind]
    found: list[tuple[str, str]] = []
    if self.machine_type not in fabric.machines:
        takes = gpu_fabric.fabric_of(self.machine_type)
        instead = f"{takes.kind} (or none)" if takes else "none: only A3 Mega (tcpxo), A3 Ultra and A4 (rdma) have GPUDirect NICs"
        found.append(
            (
                "network",
                f"{kind} is {fabric.title}, which runs on {' and '.join(fabric.machines)}, not {self.machine_type}; "
                f"this pool takes {instead}",
            )
        )
    if self.fabric is None:
        found.append(
            (
                "network",
                f"{kind} needs the fabric's networks: set fabric.cidr (the program creates {fabric.nics} subnets) "
                "or fabric.existing (your own)",
            )
        )
    else:
        found += [(f"fabric.{path}", message) for path, message in _fabric_source_problems(self, kind)]
    if not self.gvnic:
        found.append(("gvnic", f"{fabric.title} needs gVNIC on the nodes; remove gvnic: false"))
    if self.fast_socket:
        found.append(
            ("fastSocket", f"NCCL takes one network plugin and {fabric.title} brings its own; remove fastSocket")
        )
    if fabric.network_profile is not None and (self.zones is None or len(self.zones) != 1):
        found.append(
            (
                "zones",
                "an rdma pool's nodes sit in its RoCE VPC's zone (a VPC with an RDMA network profile is zonal); "
                "set zones to exactly that one zone",
            )
        )
    return found

def _fabric_source_problems(self: _Pool, kind: str) -> list[tuple[str, str]]:
    fabric = gpu_fabric.FABRICS[kind]
    source = self.fabric
    assert source is not None
    found: list[tuple[str, str]] = []
    if source.cidr is not None:
        cidr = source.cidr
        reserved = networks.reserved_overlap(cidr)
        prefix = gpu_fabric.carve_prefix(cidr, kind)
        if reserved:
            found.append(("cidr", f"{cidr} overlaps {reserved}, which no VPC range may use; pick a range in 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16"))
        elif prefix > networks.SUBNET_SMALLEST_PREFIX:
            widest = networks.SUBNET_SMALLEST_PREFIX - (prefix - cidr.prefixlen)
            found.append(
                (
                    "cidr",
                    f"{cidr} carves into {fabric.subnets} subnets of /{prefix}, smaller than the smallest subnet GCP "
                    f"creates (/{networks.SUBNET_SMALLEST_PREFIX}); use a /{widest} or wider, e.g. a /20",
                )
            )
    if source.existing is not None:
        nics = source.existing
        # A subnetwork's name is unique in its project and region, and belongs to one VPC: a name
        # given twice is one subnet on two NICs, which Compute Engine refuses (a VM's NICs are on
        # distinct subnets; for TCPXO on distinct VPCs too, so at most one of them names its
        # subnet's VPC). pulumi up would fail creating the node pool, after the cluster.
        named: dict[str, int] = {}
        for i, nic in enumerate(nics):
            if nic.subnetwork in named:
                found.append(
                    (
                        f"existing[{i}].subnetwork",
                        f"{nic.subnetwork} is existing[{named[nic.subnetwork]}]'s subnetwork too; each NIC needs a subnetwork "
                        "of its own (a subnetwork belongs to one VPC, and a VM's NICs are on distinct subnets)",
                    )
                )
            named.setdefault(nic.subnetwork, i)
        if len(nics) != fabric.nics:
            what = "eight VPCs, one per GPU NIC" if fabric.gpu_vpc_per_nic else "the gVNIC's network, then the RoCE VPC's eight subnets"
            found.append(("existing", f"{kind} takes {fabric.nics} networks ({what}); {len(nics)} given"))
        elif fabric.gpu_vpc_per_nic:
            seen: set[str] = set()
            for i, nic in enumerate(nics):
                if nic.network in seen:
                    found.append(
                        (f"existing[{i}].network", f"{nic.network} is named twice; a VM's NICs are on distinct VPCs, one per NIC")
                    )
                seen.add(nic.network)
        elif any(nic.network == nics[0].network for nic in nics[1:]):
            found.append(
                ("existing[0].network", "the gVNIC's network is not the RoCE VPC (a RoCE VPC takes only RDMA NICs); name another")
            )
    return found


def cluster_fabric_problems(self: _Cluster) -> list[tuple[str, str]]:
    """A fabric pool's needs of the cluster (facts/gpu_fabric.py): the GKE version its machine
    type's fabric needs, fabric ranges disjoint from the cluster's and each other's (GKE: a
    cluster's Pod networks may not overlap), its subnets big enough for the pool, and with a
    Shared VPC the fabric in the host project (GKE: every NIC of a node there)."""
    found: list[tuple[str, str]] = []
    version, where = self.effective_version()
    created_primary = self.network.existing is None
    ranges: dict[str, ipaddress.IPv4Network] = {"masterCidr": self.network.master_cidr} if self.private_nodes else {}
    if created_primary:
        ranges |= {
            "network.subnetCidr": self.network.subnet_cidr,
            "network.podsCidr": self.network.pods_cidr,
            "network.servicesCidr": self.network.services_cidr,
        }
    existing = self.network.existing
    shared_unmanaged = (
        existing is not None and existing.host_project is not None and not existing.manage_host_project
    )
    for i, pool in enumerate(self.gpu_pools):
        fabric = gpu_fabric.FABRICS.get(pool.fabric_kind)
        if fabric is None:
            continue
        path = f"gpuPools[{i}]"
        machine = fabric.machines.get(pool.machine_type)
        problem_text = gpu_fabric.version_problem(machine, version) if machine else None
        if problem_text:
            found.append(
                (
                    where,
                    f"gpuPools[{i}] ({pool.name}) has {fabric.title} on {pool.machine_type}, which {problem_text}; "
                    f"the cluster is created at {version}: raise minMasterVersion or remove it for the channel's default",
                )
            )
        source = pool.fabric
        if source is None:
            continue
        # Every extra NIC is on a VPC other than the node's primary NIC's (GKE multi-networking: an
        # additional node network is another VPC; TCPXO's eight and RDMA's gVNIC alike, and a RoCE
        # VPC takes only RDMA NICs), so none of them may name the cluster's own network.
        if source.existing is not None and existing is not None:
            for j, nic in enumerate(source.existing):
                if nic.network == existing.network:
                    found.append(
                        (
                            f"{path}.fabric.existing[{j}].network",
                            f"{nic.network} is the cluster's own network; each extra NIC needs a VPC of its own",
                        )
                    )
        cidr = source.cidr
        if cidr is None:
            continue
        if shared_unmanaged:
            found.append(
                (
                    f"{path}.fabric.cidr",
                    "the cluster's network is a Shared VPC host project's that the program does not manage "
                    "(manageHostProject: false), and GKE needs every NIC of a node in that project: have its admins "
                    "create the fabric's networks and name them in fabric.existing",
                )
            )
        for key, other in ranges.items():
            if cidr.overlaps(other):
                found.append((f"{path}.fabric.cidr", f"{cidr} overlaps {key} {other}; pick a disjoint range"))
        ranges[f"gpuPools[{i}].fabric.cidr"] = cidr
        prefix = gpu_fabric.carve_prefix(cidr, pool.fabric_kind)
        nodes = pool.max * self.zone_count(pool.zones)
        room = networks.nodes_in_subnet(prefix)
        if prefix <= 29 and nodes > room:
            found.append(
                (
                    f"{path}.fabric.cidr",
                    f"its subnets of /{prefix} hold {room} nodes and the pool grows to {nodes}; use a wider range",
                )
            )
    return found
