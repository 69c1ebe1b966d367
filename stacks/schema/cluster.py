"""The stack file's cluster: a GKE cluster (its network, system pool, GPU pools with their
accelerators, autoprovisioning, image registry) or a local kind cluster."""

from __future__ import annotations

import ipaddress
from enum import Enum
from typing import Annotated, Literal

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
    field_validator,
    model_validator,
)

from facts.gpu_catalog import ACCELERATORS, describe_machine_types
from stacks.schema.common import (
    GCP_REGION,
    GCP_ZONE,
    GKE_VERSION,
    IAM_MEMBER,
    REGIONAL_ZONES,
    REGISTRY_MULTI_REGIONS,
    REPOSITORY_ID,
    RESERVATION_NAME,
    Cidr,
    Int64,
    Model,
    ShortName,
    _machine_type_name,
    _text,
    _unique,
    problem,
    zone_region,
)

# --- cluster ------------------------------------------------------------------------


class Environment(str, Enum):
    DEV = "dev"
    STAGING = "staging"
    PROD = "prod"
    CI = "ci"


class ReleaseChannel(str, Enum):
    RAPID = "RAPID"
    REGULAR = "REGULAR"
    STABLE = "STABLE"


class Provisioning(str, Enum):
    """How a GPU pool obtains its VMs."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    QUEUED = "queued"
    """Dynamic Workload Scheduler flex-start with queued provisioning: all nodes at once, only
    through ProvisioningRequests, which Kueue's admission check on the pool's flavor creates."""
    FLEX_START = "flex-start"
    """Dynamic Workload Scheduler flex-start: best-effort VMs for up to 7 days."""
    RESERVATION = "reservation"


class SharingStrategy(str, Enum):
    TIME_SHARING = "time-sharing"
    MPS = "mps"
    MIG = "mig"


class DriverVersion(str, Enum):
    LATEST = "LATEST"
    DEFAULT = "DEFAULT"
    INSTALLATION_DISABLED = "INSTALLATION_DISABLED"


class GpuSharing(Model):
    """Several pods on one GPU. Changing it replaces the pool."""

    strategy: SharingStrategy = Field(
        description="time-sharing or mps (with maxSharedClients), or mig (with partitionSize)."
    )
    max_shared_clients: StrictInt | None = Field(
        default=None, ge=2, le=48, description="time-sharing / mps: pods per GPU."
    )
    partition_size: str | None = Field(
        default=None, description="mig: the MIG profile, e.g. 1g.10gb."
    )

    @model_validator(mode="after")
    def _strategy_fields(self) -> GpuSharing:
        if self.strategy is SharingStrategy.MIG:
            if self.partition_size is None:
                raise problem("partitionSize", "mig needs partitionSize, e.g. 1g.10gb")
            if self.max_shared_clients is not None:
                raise problem("maxSharedClients", "mig takes partitionSize, not maxSharedClients")
        else:
            if self.max_shared_clients is None:
                raise problem(
                    "maxSharedClients",
                    f"{self.strategy.value} needs maxSharedClients (2..48 pods per GPU)",
                )
            if self.partition_size is not None:
                raise problem("partitionSize", "partitionSize is only for strategy mig")
        return self


class SystemPool(Model):
    """The small CPU pool that runs the platform's controllers."""

    machine_type: str = Field(
        default="e2-standard-8",
        description="Machine type of the nodes, one facts/prices.py knows (or in mlplatform:overrides.machineTypes). "
        "Replaces the pool.",
    )
    min: StrictInt = Field(default=1, ge=1, le=100, description="Nodes per zone at least.")
    max: StrictInt = Field(default=3, ge=1, le=1000, description="Nodes per zone at most.")
    disk_size_gb: StrictInt = Field(default=100, ge=20, le=4096, description="Boot disk per node (GB). Replaces the pool.")

    @field_validator("machine_type")
    @classmethod
    def _machine_type(cls, value: str) -> str:
        return _machine_type_name(value)

    @model_validator(mode="after")
    def _min_le_max(self) -> SystemPool:
        if self.min > self.max:
            raise problem("min", f"min {self.min} is above max {self.max}; lower min or raise max")
        return self


class GpuPool(Model):
    """One GPU node pool. Accelerator, machine type, sharing, driver, taints and
    labels replace the pool when changed; sizes do not."""

    name: ShortName = Field(
        description="Node pool name, also the runtime suffix (torch-distributed-<name>); not system or default."
    )
    accelerator: str = Field(description="GKE accelerator name, e.g. nvidia-l4. Replaces the pool.")
    machine_type: str = Field(description="A machine type that carries the accelerator. Replaces the pool.")
    min: StrictInt = Field(default=0, ge=0, le=1000, description="Nodes per zone at least; 0 lets the pool idle at no cost.")
    max: StrictInt = Field(ge=1, le=1000, description="Nodes per zone at most.")
    provisioning: Provisioning = Field(
        default=Provisioning.ON_DEMAND,
        description="queued: flex-start with queued provisioning, nodes only through Kueue's "
        "ProvisioningRequests (needs the kueue component). Replaces the pool.",
    )
    reservation: str | None = Field(default=None, description="Reservation name, with provisioning: reservation.")
    compact_placement: StrictBool = Field(default=False, description="COMPACT placement policy (one zone). Replaces the pool.")
    zones: list[str] | None = Field(default=None, description="Node locations; default: the cluster's.")
    gvnic: StrictBool = Field(default=True, description="Google Virtual NIC on the nodes; fastSocket needs it.")
    fast_socket: StrictBool = Field(default=False, description="NCCL Fast Socket (needs gvnic).")
    sharing: GpuSharing | None = Field(
        default=None, description="Several pods on one GPU: time-sharing, MPS or MIG. Replaces the pool."
    )
    driver_version: DriverVersion = Field(
        default=DriverVersion.LATEST,
        description="The NVIDIA driver GKE installs; INSTALLATION_DISABLED installs none. Replaces the pool.",
    )
    disk_size_gb: StrictInt = Field(default=200, ge=50, le=65536, description="Boot disk per node (GB). Replaces the pool.")

    @field_validator("zones")
    @classmethod
    def _zones(cls, zones: list[str] | None) -> list[str] | None:
        for i, zone in enumerate(zones or []):
            if not GCP_ZONE.match(zone):
                hint = f"; {zone!r} is a region, its zones are {zone}-<letter>" if GCP_REGION.match(zone) else ""
                raise ValueError(f"{zone!r} is not a GCP zone such as us-central1-a{hint}")
            if zone in (zones or [])[:i]:
                raise ValueError(f"zone {zone!r} is listed twice; keep one")
        if zones == []:
            raise ValueError("an empty zone list leaves the pool nowhere; remove zones to use the cluster's")
        return zones

    @field_validator("reservation")
    @classmethod
    def _reservation(cls, value: str | None) -> str | None:
        if value is not None and not RESERVATION_NAME.match(value):
            raise ValueError(
                f"{value!r} is not a reservation name: 1-63 lowercase letters, digits and '-', a letter first "
                "(or projects/<project>/reservations/<name> for a shared one)"
            )
        return value

    @model_validator(mode="after")
    def _fits_catalog(self) -> GpuPool:
        acc = ACCELERATORS.get(self.accelerator)
        if acc is None:
            raise problem(
                "accelerator",
                f"unknown accelerator {self.accelerator!r}; use one of {', '.join(ACCELERATORS)}",
            )
        if self.machine_type not in acc.machine_types:
            raise problem(
                "machineType",
                f"{self.machine_type!r} cannot carry {acc.name}; use one of "
                f"{describe_machine_types(acc)}",
            )
        if self.min > self.max:
            raise problem("min", f"min {self.min} is above max {self.max}; lower min or raise max")
        dws = self.provisioning in (Provisioning.QUEUED, Provisioning.FLEX_START)
        if dws and not acc.dws:
            raise problem(
                "provisioning",
                f"{self.provisioning.value} is not offered for {acc.name}; use on-demand, spot or reservation",
            )
        if dws and self.min != 0:
            raise problem("min", f"{self.provisioning.value} pools start empty; set min to 0")
        if (self.provisioning is Provisioning.RESERVATION) != (self.reservation is not None):
            raise problem(
                "reservation",
                "set reservation (the reservation's name) exactly when provisioning is reservation",
            )
        if self.compact_placement:
            if not acc.compact_placement:
                raise problem("compactPlacement", f"{acc.family} machines do not support compact placement; remove it")
            if self.zones is None or len(self.zones) != 1:
                raise problem("zones", "compactPlacement keeps nodes in one zone; set zones to exactly one zone")
        if self.fast_socket and not self.gvnic:
            raise problem("fastSocket", "NCCL Fast Socket needs gvnic: true")
        if self.fast_socket and not acc.fast_socket:
            raise problem("fastSocket", f"NCCL Fast Socket is not supported on {acc.name}; remove it")
        if (
            self.sharing
            and self.sharing.strategy is SharingStrategy.MIG
            and self.sharing.partition_size not in acc.mig_partitions
        ):
            allowed = ", ".join(acc.mig_partitions) or "none: this GPU has no MIG"
            raise problem(
                "sharing",
                f"partitionSize {self.sharing.partition_size!r} is not a MIG profile of "
                f"{acc.name}; use one of {allowed}",
            )
        return self

    @property
    def spot(self) -> bool:
        """Spot VMs: GKE labels their nodes, and every selector of the pool includes that label."""
        return self.provisioning is Provisioning.SPOT

    @property
    def gpus_per_node(self) -> int:
        return ACCELERATORS[self.accelerator].gpus_per_node(self.machine_type)


class Autoprovisioning(Model):
    """Node auto-provisioning (NAP): GKE creates pools for pending pods within these limits.

    The limits are cluster-wide totals over every node, the fixed pools' included, so they
    cover the system and GPU pools at full size, and each GPU pool's accelerator needs one
    (by accelerator name, e.g. nvidia-l4) or that pool cannot grow.
    """

    enabled: StrictBool = Field(
        default=False, description="Let GKE create node pools for pending pods; needs cpu and memory limits."
    )
    limits: dict[str, Int64] = Field(
        default_factory=dict,
        description="cpu (cores), memory (GiB) and GPUs per accelerator name, cluster-wide: every node counts, "
        "the system and GPU pools at full size included.",
    )

    @model_validator(mode="after")
    def _limits(self) -> Autoprovisioning:
        for key in self.limits:
            if key not in ("cpu", "memory") and key not in ACCELERATORS:
                hint = " (NAP uses accelerator names)" if key.startswith("nvidia.com") else ""
                raise problem(
                    f"limits.{key}",
                    f"unknown limit {key!r}{hint}; use cpu, memory or one of {', '.join(ACCELERATORS)}",
                )
        if self.enabled:
            missing = [k for k in ("cpu", "memory") if k not in self.limits]
            if missing:
                raise problem("limits", f"enabled autoprovisioning needs limits for {' and '.join(missing)}")
        return self


class AuthorizedNetwork(Model):
    """An IPv4 range allowed to reach the cluster's control plane."""

    cidr: Cidr = Field(description="The range, e.g. 203.0.113.0/24.")
    name: Annotated[str, _text("range's display name", spaces=True)] = Field(description="Display name of the range in GKE.")


class NetworkConfig(Model):
    """The VPC the cluster gets. Changing any range replaces the network and the cluster."""

    subnet_cidr: Cidr = Field(
        default=ipaddress.IPv4Network("10.0.0.0/20"), description="The subnet's primary range: node IPs."
    )
    pods_cidr: Cidr = Field(
        default=ipaddress.IPv4Network("10.16.0.0/14"), description="The subnet's secondary range for pod IPs."
    )
    services_cidr: Cidr = Field(
        default=ipaddress.IPv4Network("10.20.0.0/20"), description="The subnet's secondary range for Service IPs."
    )
    master_cidr: Cidr = Field(
        default=ipaddress.IPv4Network("172.16.0.0/28"),
        description="Control-plane range of a private cluster; must be a /28.",
    )

    @model_validator(mode="after")
    def _ranges(self) -> NetworkConfig:
        if self.master_cidr.prefixlen != 28:
            raise problem("masterCidr", f"{self.master_cidr} must be a /28 range, e.g. 172.16.0.0/28")
        ranges = {
            "subnetCidr": self.subnet_cidr,
            "podsCidr": self.pods_cidr,
            "servicesCidr": self.services_cidr,
            "masterCidr": self.master_cidr,
        }
        names = list(ranges)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                if ranges[a].overlaps(ranges[b]):
                    raise problem(b, f"{ranges[b]} overlaps {a} {ranges[a]}; pick a disjoint range")
        return self


class ImageRegistryConfig(Model):
    """An Artifact Registry Docker repository in the stack's project for the platform's images
    (the notebook images) and the teams' own; the cluster's nodes may pull from it."""

    enabled: StrictBool = Field(default=True, description="Create the repository (gke).")
    name: str | None = Field(
        default=None, description="Repository id; default: the cluster's name. Replaces the repository and its images."
    )
    location: str | None = Field(
        default=None,
        description="Region or multi-region (us, europe, asia); default: the cluster's region. Replaces the "
        "repository and its images.",
    )
    pushers: list[str] = Field(
        default_factory=list,
        description="IAM members that may push, such as the CI service account that builds the notebook image "
        "(`serviceAccount:ci@acme-ml-dev.iam.gserviceaccount.com`); teams push with `pushImages`.",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is not None and not REPOSITORY_ID.match(value):
            raise ValueError(
                f"{value!r} is not an Artifact Registry repository id: lowercase letters, digits and '-', "
                "a letter first, at most 63 characters"
            )
        return value

    @field_validator("location")
    @classmethod
    def _location(cls, value: str | None) -> str | None:
        if value is not None and not (GCP_REGION.match(value) or value in REGISTRY_MULTI_REGIONS):
            raise ValueError(f"{value!r} is neither a GCP region (us-central1) nor one of {', '.join(REGISTRY_MULTI_REGIONS)}")
        return value

    @field_validator("pushers")
    @classmethod
    def _pushers(cls, members: list[str]) -> list[str]:
        for member in members:
            if not IAM_MEMBER.match(member):
                raise ValueError(
                    f"{member!r} is not an IAM member: use user:, group:, serviceAccount: or principal(Set):// "
                    "followed by the identity"
                )
        _unique(members, lambda m: m, "; each becomes an IAM binding of its own")
        return members


class GkeClusterConfig(Model):
    """A GKE Standard cluster with a system pool, GPU pools and NAP."""

    kind: Literal["gke"] = Field(description="Picks this model: a GKE cluster.")
    name: ShortName = Field(description="Cluster name. Replaces the cluster.")
    location: str = Field(description="Region (regional cluster) or zone. Replaces the cluster.")
    release_channel: ReleaseChannel = Field(
        default=ReleaseChannel.REGULAR, description="GKE release channel the cluster takes its versions and upgrades from."
    )
    min_master_version: str | None = Field(
        default=None,
        description="The lowest GKE version the control plane is created at (a minor such as `1.35`, or a full GKE "
        "version `<minor>.<patch>-gke.<build>`); empty: the release channel's default. The full render renders the "
        "charts for it; `check` judges the components' Kubernetes ranges against it, and against the channel's "
        "default too where that is newer (GKE upgrades the cluster to it).",
    )
    private_nodes: StrictBool = Field(default=True, description="Nodes without public IPs, egress through Cloud NAT.")
    master_authorized_networks: list[AuthorizedNetwork] = Field(
        default_factory=list, description="CIDRs allowed to reach the control plane, each once; empty: any."
    )
    network: NetworkConfig = Field(default=NetworkConfig(), description="The VPC's address ranges.")
    system_pool: SystemPool = Field(default=SystemPool(), description="The CPU pool for the platform's controllers.")
    gpu_pools: list[GpuPool] = Field(
        default_factory=list,
        description="GPU node pools; each also gets a Kueue ResourceFlavor and training runtimes of its name.",
    )
    autoprovisioning: Autoprovisioning = Field(
        default=Autoprovisioning(), description="Node auto-provisioning (NAP) and its cluster-wide limits."
    )
    deletion_protection: StrictBool | None = Field(
        default=None, description="Default: on for prod stacks, off otherwise."
    )
    managed_prometheus: StrictBool = Field(
        default=False,
        description="Google Cloud Managed Service for Prometheus; monitoring backend gke-managed and "
        "dcgmExporter source gke-managed need it.",
    )
    image_streaming: StrictBool = Field(
        default=True, description="GKE image streaming for the node pools: containers start before the image is fully pulled."
    )
    gcs_fuse: StrictBool = Field(default=True, description="GCS Fuse CSI driver add-on (team buckets as volumes).")
    gateway_api: StrictBool = Field(
        default=True, description="Gateway API on the cluster (standard channel): its CRDs and GKE's Gateway controller."
    )
    image_registry: ImageRegistryConfig = Field(
        default=ImageRegistryConfig(),
        description="Artifact Registry Docker repository for the platform's and the teams' images.",
    )

    @field_validator("min_master_version")
    @classmethod
    def _min_master_version(cls, value: str | None) -> str | None:
        # GKE versions are `<minor>.<patch>-gke.<build>`; the API also takes a minor or a patch
        # (cloud.google.com/kubernetes-engine/versioning, "Versioning scheme").
        if value is not None and not GKE_VERSION.match(value):
            raise ValueError(f"{value!r} is not a GKE version: give a minor such as 1.35, or <minor>.<patch>[-gke.<build>]")
        return value

    @field_validator("location")
    @classmethod
    def _location(cls, value: str) -> str:
        if not (GCP_REGION.match(value) or GCP_ZONE.match(value)):
            raise ValueError(f"{value!r} is neither a GCP region (us-central1) nor a zone (us-central1-a)")
        return value

    @field_validator("master_authorized_networks")
    @classmethod
    def _networks(cls, networks: list[AuthorizedNetwork]) -> list[AuthorizedNetwork]:
        _unique(networks, lambda n: n.cidr)
        return networks

    @model_validator(mode="after")
    def _pools(self) -> GkeClusterConfig:
        seen: set[str] = set()
        for i, pool in enumerate(self.gpu_pools):
            if pool.name in seen:
                raise problem(f"gpuPools[{i}].name", f"duplicate pool name {pool.name!r}; pool names must be unique")
            seen.add(pool.name)
            for zone in pool.zones or []:
                if zone_region(zone) != self.region:
                    raise problem(
                        f"gpuPools[{i}].zones",
                        f"zone {zone!r} is outside the cluster's region {self.region} (it is in "
                        f"{zone_region(zone)}); use zones of {self.region}",
                    )
        return self

    @property
    def region(self) -> str:
        return self.location if GCP_REGION.match(self.location) else self.location.rsplit("-", 1)[0]

    def zone_count(self, zones: list[str] | None = None) -> int:
        """Zones a pool spreads over (its min/max count per zone): its own zones, else one for a
        zonal cluster and three for a regional one (GKE's default node locations,
        cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters)."""
        if zones:
            return len(zones)
        return 1 if GCP_ZONE.match(self.location) else REGIONAL_ZONES


class KindClusterConfig(Model):
    """A local kind cluster, for development and ephemeral CI clusters."""

    kind: Literal["kind"] = Field(description="Picks this model: a local kind cluster.")
    name: ShortName = Field(default="mlplatform", description="kind cluster name. Replaces the cluster.")
    workers: StrictInt = Field(default=2, ge=1, le=8, description="Worker nodes beside the control plane. Replaces the cluster.")
    existing_context: Annotated[str, _text("kubeconfig context", spaces=True)] | None = Field(
        default=None,
        description="Use this kubeconfig context instead of creating a cluster.",
    )


ClusterConfig = Annotated[GkeClusterConfig | KindClusterConfig, Field(discriminator="kind")]
