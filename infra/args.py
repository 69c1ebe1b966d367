"""Args of the cloud side, cut from the stack model: the GKE cluster and its network, its
Artifact Registry repositories, or the kind cluster; and each GPU pool's GPUDirect networking
("the fabric"): what the cloud side creates (infra/fabric.py: VPCs, subnets, firewall rules,
the node pool's extra NICs) and what the cluster side needs (the `Network` /
`GKENetworkParamSet` objects, the NCCL plugin installers on the pool's nodes, the runtimes'
interfaces annotation). One pure function, `fabric_pools`, for both sides, so both read the
same names (facts/gpu_fabric.py fabric_networks)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from facts import gpu_fabric
from facts.gpu_fabric import FabricNic
from facts.node_labels import Taint, pool_selector, pool_taints
from stackmodel.components.dcgm import DCGM_EXPORTER, DcgmSource
from stackmodel.components.kuberay import KUBERAY, RaySource
from stackmodel.schema import Environment, ExistingNetwork, GkeClusterConfig, KindClusterConfig, NetworkConfig
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


@dataclass(frozen=True)
class NetworkArgs:
    """The VPC of a GKE cluster: one the program creates, or an existing one (`ranges.existing`),
    maybe a Shared VPC host project's."""

    project: str | None
    """The stack's project, where the cluster is (a Shared VPC's service project)."""
    region: str
    private_nodes: bool
    """Private nodes egress through Cloud NAT (a created network's router and NAT)."""
    ranges: NetworkConfig

    @property
    def existing(self) -> ExistingNetwork | None:
        return self.ranges.existing

    @property
    def host_project(self) -> str | None:
        """The project that owns the network: a Shared VPC host project, else the stack's."""
        existing = self.ranges.existing
        return existing.host_project if existing is not None and existing.host_project else self.project

    @property
    def shared_vpc(self) -> bool:
        return self.host_project != self.project

    @property
    def manages_host_project(self) -> bool:
        """Whether the program makes the network's IAM bindings and firewall rules: always in
        the stack's own project; in a Shared VPC host project unless its admins do
        (`existing.manageHostProject: false`)."""
        return not self.shared_vpc or (self.ranges.existing is not None and self.ranges.existing.manage_host_project)


@dataclass(frozen=True)
class ImageRegistryArgs:
    """The stack's Artifact Registry Docker repository."""

    project: str | None
    location: str
    repository_id: str
    pushers: tuple[str, ...]
    """IAM members with write access besides the teams that push."""
    deletion_protection: bool

    @property
    def path(self) -> str:
        """Where its images live: `<location>-docker.pkg.dev/<project>/<repository>`
        (cloud.google.com/artifact-registry/docs/docker/names)."""
        return f"{self.location}-docker.pkg.dev/{self.project}/{self.repository_id}"


# An Artifact Registry Docker host, `<location>-docker.pkg.dev`; the path under it is
# `<project>/<repository>[/...]`, a domain-scoped project `example.com:p` written
# `example.com/p` (cloud.google.com/artifact-registry/docs/docker/names).
ARTIFACT_REGISTRY_HOST = re.compile(r"^(?P<location>[a-z0-9-]+)-docker\.pkg\.dev$")


@dataclass(frozen=True)
class MirrorRepositoryArgs:
    """The Artifact Registry repository that holds the stack's image mirror."""

    project: str
    location: str
    repository_id: str


def mirror_repository_args(mirror: str | None) -> MirrorRepositoryArgs | None:
    """The repository of an Artifact Registry mirror (`mlplatform:images.mirror`); None for
    no mirror or any other registry, whose read access is the platform team's to grant."""
    host, *path = (mirror or "").split("/")
    found = ARTIFACT_REGISTRY_HOST.match(host)
    if found is None:
        return None
    if path and "." in path[0]:  # domain-scoped project
        path = [f"{path[0]}:{path[1]}", *path[2:]] if len(path) > 1 else []
    if len(path) < 2:
        return None
    return MirrorRepositoryArgs(project=path[0], location=found["location"], repository_id=path[1])


@dataclass(frozen=True)
class GkeClusterArgs:
    """The GKE cluster, its pools and the add-ons the components leave to GKE."""

    project: str | None
    cluster: GkeClusterConfig
    network: NetworkArgs
    environment: Environment
    deletion_protection: bool
    managed_dcgm: bool
    """GKE's managed DCGM metrics, when the stack picks them over NVIDIA's chart."""
    ray_operator: bool
    """GKE's managed Ray operator add-on, when the stack picks it over the KubeRay chart."""
    image_registry: ImageRegistryArgs | None = None
    """The stack's Artifact Registry repository, when it has one."""
    image_mirror: MirrorRepositoryArgs | None = None
    """The Artifact Registry repository of `mlplatform:images.mirror`: the nodes read it."""
    fabric: tuple[FabricPoolArgs, ...] = ()
    """The GPU pools with GPUDirect networking (fabric_pools, above): their VPCs, subnets and extra NICs."""


@dataclass(frozen=True)
class KindClusterArgs:
    """A local kind cluster, or an existing kubeconfig context (`cluster.existing_context`)."""

    cluster: KindClusterConfig


ClusterArgs = GkeClusterArgs | KindClusterArgs


def network_args(config: PlatformConfig, cluster: GkeClusterConfig) -> NetworkArgs:
    return NetworkArgs(
        project=config.project, region=cluster.region, private_nodes=cluster.private_nodes, ranges=cluster.network
    )


def image_registry_args(config: PlatformConfig) -> ImageRegistryArgs | None:
    """The repository of a gke stack with `imageRegistry` enabled; None otherwise."""
    cluster = config.cluster
    if not isinstance(cluster, GkeClusterConfig) or not cluster.image_registry.enabled:
        return None
    registry = cluster.image_registry
    return ImageRegistryArgs(
        project=config.project,
        location=registry.location or cluster.region,
        repository_id=registry.name or cluster.name,
        pushers=tuple(registry.pushers),
        deletion_protection=config.deletion_protection,
    )


def gke_cluster_args(config: PlatformConfig, cluster: GkeClusterConfig) -> GkeClusterArgs:
    dcgm, kuberay = config.components[DCGM_EXPORTER], config.components[KUBERAY]
    return GkeClusterArgs(
        project=config.project,
        cluster=cluster,
        network=network_args(config, cluster),
        environment=config.environment,
        deletion_protection=config.deletion_protection,
        # Never both: components/platform.py installs NVIDIA's chart only for source `chart`.
        managed_dcgm=config.enabled(DCGM_EXPORTER) and dcgm.source is DcgmSource.GKE_MANAGED,
        ray_operator=kuberay.enabled and kuberay.source is RaySource.GKE_ADDON,
        image_registry=image_registry_args(config),
        image_mirror=mirror_repository_args(config.images.mirror),
        fabric=fabric_pools(config),
    )


def cluster_args(config: PlatformConfig) -> ClusterArgs:
    cluster = config.cluster
    if isinstance(cluster, GkeClusterConfig):
        return gke_cluster_args(config, cluster)
    return KindClusterArgs(cluster=cluster)
