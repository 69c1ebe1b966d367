"""The one schema of a stack file: what `stacks/Pulumi.<env>.yaml` may say.

Field aliases are the keys a platform team writes (camelCase, and the namespaced
top-level keys `gcp:project`, `mlplatform:cluster`, ...), so every error path reads
exactly like the stack file. Defaults live on the fields; a field whose change
replaces live infrastructure says so in its description ("replaces ...").

Checks that span one model raise `problem(field, message)` so that the path names the
field; checks that span the whole stack (pools vs autoprovisioning, teams vs pools)
are the rules of stacks/rules.py and run once every part has its type.
"""

from __future__ import annotations

import ipaddress
import re
from decimal import Decimal
from enum import Enum
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    EmailStr,
    Field,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from facts.gpu_catalog import ACCELERATORS, describe_machine_types
from facts.naming import bucket_name_problem
from stacks import quantity

DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
# Prometheus --storage.tsdb.retention.time units we accept (prometheus.io/docs, "Storage").
RETENTION = re.compile(r"^[1-9][0-9]*(h|d|w|y)$")
# Artifact Registry repository ids (cloud.google.com/artifact-registry/docs/repositories/create-repos):
# lowercase letters, digits and hyphens, starting with a letter, at most 63 characters.
REPOSITORY_ID = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
REGISTRY_MULTI_REGIONS = ("us", "europe", "asia")
IAM_MEMBER = re.compile(r"^(user:|group:|serviceAccount:|domain:)[^\s:]+$|^principal(Set)?://\S+$")
# An image registry path (`host[:port]/path`, no scheme, no tag): where our notebook images are pulled from.
REGISTRY_PATH = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)+$")
# A registry prefix images are pulled through (`host[:port][/path]`): the images mirror.
MIRROR_PATH = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$")
# A Go time.Duration as Kueue's configuration reads it (metav1.Duration), in whole h, m, s.
DURATION = re.compile(r"^([0-9]+h)?([0-9]+m)?([0-9]+s)?$")
# Smallest volume we accept: anything below is a missing unit (a bare 50 is 50 bytes).
MIN_VOLUME_BYTES = 2**20
# Compute Engine "Regions and zones" (cloud.google.com/compute/docs/regions-zones): a
# region is `<geography>-<area><number>` (us-central1, europe-west10), a zone its region,
# '-' and a letter (europe-west10-a is in europe-west10, not europe-west1).
EMAIL_DOMAIN = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)+[a-z]{2,63}$")
GCP_REGION = re.compile(r"^[a-z]+-[a-z]+[0-9]+$")
GCP_ZONE = re.compile(r"^[a-z]+-[a-z]+[0-9]+-[a-z]$")
REGIONAL_ZONES = 3
# Resource Manager "Creating and managing projects" (cloud.google.com/resource-manager/docs/
# creating-managing-projects): a project ID is 6-30 lowercase letters, digits and hyphens,
# starts with a letter, does not end with a hyphen; older projects may be domain-scoped
# (`example.com:my-project`).
GCP_PROJECT_ID = re.compile(r"^([a-z0-9][-a-z0-9.]*\.[a-z]{2,}:)?[a-z][-a-z0-9]{4,28}[a-z0-9]$")
# Compute Engine "Naming resources" (cloud.google.com/compute/docs/naming-resources): 1-63
# characters, `[a-z]([-a-z0-9]*[a-z0-9])?`. A node pool takes a reservation by that name in
# the project, or a shared one as `projects/<project>/reservations/<name>` (Compute API
# ReservationAffinity.values), optionally one block of it (`<reservation>/reservationBlocks/<block>`).
COMPUTE_NAME = r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?"
RESERVATION_NAME = re.compile(
    rf"^(projects/[a-z][-a-z0-9]{{4,28}}[a-z0-9]/reservations/)?{COMPUTE_NAME}(/reservationBlocks/{COMPUTE_NAME})?$"
)
# Cloud Storage "Bucket locations" (cloud.google.com/storage/docs/locations): a region, a
# multi-region, or a predefined dual-region.
BUCKET_MULTI_REGIONS = ("ASIA", "EU", "US")
BUCKET_DUAL_REGIONS = ("ASIA1", "EUR4", "EUR5", "EUR7", "EUR8", "NAM4")
# Kubernetes DNS subdomain (RFC 1123), as Kueue's CRDs validate cohortName (kueue v0.19.2
# config/components/crd/bases/kueue.x-k8s.io_clusterqueues.yaml): at most 253 characters.
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS_SUBDOMAIN_MAX = 253
# Namespaces a team must never take: the cluster's, Kubeflow's and the operators'.
RESERVED_NAMESPACES = frozenset(
    {
        "default",
        "kube-system",
        "kube-public",
        "kube-node-lease",
        "kubeflow",
        "kubeflow-system",
        "istio-system",
        "auth",
        "oauth2-proxy",
        "cert-manager",
        "kueue-system",
        "kuberay-system",
        "jobset-system",
        "monitoring",
        "gpu-operator",
        "dcgm-exporter",
        "gke-managed-system",
        "gmp-system",
        "gmp-public",
    }
)
# GPU pool names other objects already take, with the reason: the system pool's GKE name,
# and Kueue's ResourceFlavor for CPU-only nodes (components/kueue.py DEFAULT_FLAVOR; every
# pool also gets a flavor of its name).
RESERVED_POOL_NAMES = {
    "system": "the system pool's name",
    "default": "the name of Kueue's ResourceFlavor for CPU-only nodes",
}


def problem(field: str, message: str) -> PydanticCustomError:
    """A validation error attributed to `field` of the model that raises it."""
    return PydanticCustomError("config", message, {"field": field})


class Model(BaseModel):
    """Base of every stack-file model: camelCase keys, unknown keys rejected."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        use_enum_values=False,
    )


def _dns_label(value: str, max_length: int) -> str:
    if len(value) > max_length or not DNS_LABEL.match(value):
        raise ValueError(
            f"{value!r} is not a valid name: use lowercase letters, digits and '-', "
            f"start with a letter, at most {max_length} characters"
        )
    return value


ShortName = Annotated[str, AfterValidator(lambda v: _dns_label(v, 40))]
"""GKE caps cluster and node pool names at 40 characters."""


def zone_region(zone: str) -> str:
    """The region a zone is in: its name without the last '-<letter>'."""
    return zone.rsplit("-", 1)[0]


# The gateway's hostname goes into a GKE Ingress rule (networking/v1 IngressRule.host: a
# lowercase DNS name, no IP, port or path) and a ManagedCertificate, which certifies no
# wildcard domain (GoogleCloudPlatform/gke-managed-certs README: "multi-SAN non-wildcard").
HOSTNAME = re.compile(r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")


def _hostname(value: str | None) -> str | None:
    if value is None:
        return None
    if REMOTE_SCHEME.match(value) or "/" in value:
        bare = REMOTE_SCHEME.sub("", value).split("/", 1)[0]
        raise ValueError(f"{value!r} is a URL; give the hostname alone, e.g. {bare!r}")
    if ":" in value:
        raise ValueError(f"{value!r} has a port; give the hostname alone (the gateway serves HTTPS on 443)")
    if value != value.lower():
        raise ValueError(f"{value!r}: hostnames are lowercase here; use {value.lower()!r}")
    if len(value) > DNS_SUBDOMAIN_MAX or not HOSTNAME.match(value):
        raise ValueError(f"{value!r} is not a DNS hostname such as kubeflow.example.com (no wildcard, no trailing dot)")
    return value


def _resource_quantity(value: object) -> object:
    """A quota or request: a Kubernetes quantity of 0 or more (the API server rejects
    negative ones), kept as written; YAML numbers (64, 0.5) become their text."""
    text = str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    if quantity.parse(text) < 0:
        raise ValueError(f"{text!r} is negative; use 0 or more")
    return text


ResourceQuantity = Annotated[str, BeforeValidator(_resource_quantity)]


def _volume_size(value: str) -> str:
    try:
        size: Decimal | None = quantity.parse(value)
    except ValueError:
        size = None
    if size is None or size < MIN_VOLUME_BYTES:
        raise ValueError(
            f"{value!r} is not a volume size such as 50Gi: a Kubernetes quantity of at least 1Mi "
            "(a bare number counts bytes)"
        )
    return value


VolumeSize = Annotated[
    str, BeforeValidator(lambda v: str(v) if isinstance(v, int) and not isinstance(v, bool) else v), AfterValidator(_volume_size)
]
"""A PersistentVolumeClaim's size: a Kubernetes quantity of at least MIN_VOLUME_BYTES."""


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
    max_shared_clients: int | None = Field(
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

    machine_type: str = Field(default="e2-standard-8", description="Machine type of the nodes. Replaces the pool.")
    min: int = Field(default=1, ge=1, le=100, description="Nodes per zone at least.")
    max: int = Field(default=3, ge=1, le=1000, description="Nodes per zone at most.")
    disk_size_gb: int = Field(default=100, ge=20, le=4096, description="Boot disk per node (GB). Replaces the pool.")

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
    min: int = Field(default=0, ge=0, le=1000, description="Nodes per zone at least; 0 lets the pool idle at no cost.")
    max: int = Field(ge=1, le=1000, description="Nodes per zone at most.")
    provisioning: Provisioning = Field(
        default=Provisioning.ON_DEMAND,
        description="queued: flex-start with queued provisioning, nodes only through Kueue's "
        "ProvisioningRequests (needs the kueue component). Replaces the pool.",
    )
    reservation: str | None = Field(default=None, description="Reservation name, with provisioning: reservation.")
    compact_placement: bool = Field(default=False, description="COMPACT placement policy (one zone). Replaces the pool.")
    zones: list[str] | None = Field(default=None, description="Node locations; default: the cluster's.")
    gvnic: bool = Field(default=True, description="Google Virtual NIC on the nodes; fastSocket needs it.")
    fast_socket: bool = Field(default=False, description="NCCL Fast Socket (needs gvnic).")
    sharing: GpuSharing | None = Field(
        default=None, description="Several pods on one GPU: time-sharing, MPS or MIG. Replaces the pool."
    )
    driver_version: DriverVersion = Field(
        default=DriverVersion.LATEST,
        description="The NVIDIA driver GKE installs; INSTALLATION_DISABLED installs none. Replaces the pool.",
    )
    disk_size_gb: int = Field(default=200, ge=50, le=65536, description="Boot disk per node (GB). Replaces the pool.")

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

    The limits are cluster-wide totals over every autoscaled pool, so each GPU pool's
    accelerator needs one (by accelerator name, e.g. nvidia-l4) or that pool cannot grow.
    """

    enabled: bool = Field(
        default=False, description="Let GKE create node pools for pending pods; needs cpu and memory limits."
    )
    limits: dict[str, int] = Field(
        default_factory=dict,
        description="cpu (cores), memory (GiB) and GPUs per accelerator name.",
    )

    @model_validator(mode="after")
    def _limits(self) -> Autoprovisioning:
        for key, value in self.limits.items():
            if key not in ("cpu", "memory") and key not in ACCELERATORS:
                hint = " (NAP uses accelerator names)" if key.startswith("nvidia.com") else ""
                raise problem(
                    f"limits.{key}",
                    f"unknown limit {key!r}{hint}; use cpu, memory or one of {', '.join(ACCELERATORS)}",
                )
            if value < 0:
                raise problem(f"limits.{key}", f"limit {value} is negative; use 0 or more")
        if self.enabled:
            missing = [k for k in ("cpu", "memory") if k not in self.limits]
            if missing:
                raise problem("limits", f"enabled autoprovisioning needs limits for {' and '.join(missing)}")
        return self


class AuthorizedNetwork(Model):
    """An IPv4 range allowed to reach the cluster's control plane."""

    cidr: ipaddress.IPv4Network = Field(description="The range, e.g. 203.0.113.0/24.")
    name: str = Field(description="Display name of the range in GKE.")


class NetworkConfig(Model):
    """The VPC the cluster gets. Changing any range replaces the network and the cluster."""

    subnet_cidr: ipaddress.IPv4Network = Field(
        default=ipaddress.IPv4Network("10.0.0.0/20"), description="The subnet's primary range: node IPs."
    )
    pods_cidr: ipaddress.IPv4Network = Field(
        default=ipaddress.IPv4Network("10.16.0.0/14"), description="The subnet's secondary range for pod IPs."
    )
    services_cidr: ipaddress.IPv4Network = Field(
        default=ipaddress.IPv4Network("10.20.0.0/20"), description="The subnet's secondary range for Service IPs."
    )
    master_cidr: ipaddress.IPv4Network = Field(
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

    enabled: bool = Field(default=True, description="Create the repository (gke).")
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
        return members


class GkeClusterConfig(Model):
    """A GKE Standard cluster with a system pool, GPU pools and NAP."""

    kind: Literal["gke"] = Field(description="Picks this model: a GKE cluster.")
    name: ShortName = Field(description="Cluster name. Replaces the cluster.")
    location: str = Field(description="Region (regional cluster) or zone. Replaces the cluster.")
    release_channel: ReleaseChannel = Field(
        default=ReleaseChannel.REGULAR, description="GKE release channel the cluster takes its versions and upgrades from."
    )
    private_nodes: bool = Field(default=True, description="Nodes without public IPs, egress through Cloud NAT.")
    master_authorized_networks: list[AuthorizedNetwork] = Field(
        default_factory=list, description="CIDRs allowed to reach the control plane; empty: any."
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
    deletion_protection: bool | None = Field(
        default=None, description="Default: on for prod stacks, off otherwise."
    )
    managed_prometheus: bool = Field(
        default=False,
        description="Google Cloud Managed Service for Prometheus; monitoring backend gke-managed and "
        "dcgmExporter source gke-managed need it.",
    )
    image_streaming: bool = Field(
        default=True, description="GKE image streaming for the node pools: containers start before the image is fully pulled."
    )
    gcs_fuse: bool = Field(default=True, description="GCS Fuse CSI driver add-on (team buckets as volumes).")
    gateway_api: bool = Field(
        default=True, description="Gateway API on the cluster (standard channel): its CRDs and GKE's Gateway controller."
    )
    image_registry: ImageRegistryConfig = Field(
        default=ImageRegistryConfig(),
        description="Artifact Registry Docker repository for the platform's and the teams' images.",
    )

    @field_validator("location")
    @classmethod
    def _location(cls, value: str) -> str:
        if not (GCP_REGION.match(value) or GCP_ZONE.match(value)):
            raise ValueError(f"{value!r} is neither a GCP region (us-central1) nor a zone (us-central1-a)")
        return value

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
    workers: int = Field(default=2, ge=1, le=8, description="Worker nodes beside the control plane. Replaces the cluster.")
    existing_context: str | None = Field(
        default=None,
        description="Use this kubeconfig context instead of creating a cluster.",
    )


ClusterConfig = Annotated[GkeClusterConfig | KindClusterConfig, Field(discriminator="kind")]


# --- teams ----------------------------------------------------------------------------


class Role(str, Enum):
    EDIT = "edit"
    VIEW = "view"


class Contributor(Model):
    """Someone besides the owner with access to the team namespace."""

    email: EmailStr = Field(description="The address they sign in with.")
    role: Role = Field(description="edit (ClusterRole kubeflow-edit) or view (kubeflow-view) in the namespace.")


class TeamQuota(Model):
    """What the team's pods may request at once: the namespace's ResourceQuota and, with kueue,
    the nominal quota of the team's ClusterQueue."""

    gpus: dict[str, int] = Field(default_factory=dict, description="GPUs per accelerator name, e.g. nvidia-l4: 8.")
    cpu: ResourceQuantity = Field(default="32", description="CPU cores, a Kubernetes quantity such as 64 or 500m.")
    memory: ResourceQuantity = Field(default="128Gi", description="Memory, a Kubernetes quantity such as 256Gi.")

    @model_validator(mode="after")
    def _gpus(self) -> TeamQuota:
        for name, count in self.gpus.items():
            if count < 0:
                raise problem(f"gpus.{name}", f"quota {count} is negative; use 0 or more")
        return self


class ContainerDefaults(Model):
    """What a container that names no resources gets in the team namespace (its LimitRange):
    requests, so the namespace's quota admits it and Kueue counts it, and limits. Jobs from the
    Kubeflow SDK's `resources_per_node`, notebooks and Ray pods name their own."""

    cpu: ResourceQuantity = Field(default="1", description="CPU request of a container that names none.")
    memory: ResourceQuantity = Field(default="2Gi", description="Memory request of a container that names none.")
    cpu_limit: ResourceQuantity = Field(default="4", description="CPU limit of a container that names none.")
    memory_limit: ResourceQuantity = Field(
        default="16Gi",
        description="Memory limit of a container that names none; a container that asks for more memory than "
        "this must name its limit too (the SDK's resources_per_node sets both).",
    )

    @model_validator(mode="after")
    def _requests_within_limits(self) -> ContainerDefaults:
        for request, limit, key in ((self.cpu, self.cpu_limit, "cpu"), (self.memory, self.memory_limit, "memory")):
            if quantity.parse(request) > quantity.parse(limit):
                raise problem(key, f"{key} {request} is above {key}Limit {limit}; a default request must fit its limit")
        return self


class TeamBucket(Model):
    """A GCS bucket for the team's datasets and checkpoints (GKE only), mounted through GCS Fuse."""

    name: str | None = Field(default=None, description="Default: <project>-<team>. Replaces the bucket.")
    location: str | None = Field(default=None, description="Default: the cluster's region.")

    @field_validator("name")
    @classmethod
    def _bucket_name(cls, value: str | None) -> str | None:
        reason = bucket_name_problem(value) if value is not None else None
        if reason:
            raise ValueError(f"{value!r} is not a valid bucket name: {reason}")
        return value

    @field_validator("location")
    @classmethod
    def _location(cls, value: str | None) -> str | None:
        if value is None:
            return None
        upper = value.upper()
        if upper in BUCKET_MULTI_REGIONS or upper in BUCKET_DUAL_REGIONS or GCP_REGION.match(value.lower()):
            return value
        if GCP_ZONE.match(value.lower()):
            raise ValueError(f"{value!r} is a zone; buckets live in a region, e.g. {zone_region(value.lower())}")
        raise ValueError(
            f"{value!r} is not a bucket location: a region (us-central1), a multi-region "
            f"({', '.join(BUCKET_MULTI_REGIONS)}) or a dual-region ({', '.join(BUCKET_DUAL_REGIONS)})"
        )


class TeamRay(Model):
    """A RayCluster in the team namespace, autoscaled in-tree (with Kueue: an elastic Kueue job,
    each scale-up admitted against the team's quota), dashboard behind the Kubeflow gateway."""

    name: ShortName = Field(default="ray", description="RayCluster name.")
    pool: str | None = Field(default=None, description="GPU pool for the workers; none: CPU workers.")
    min_workers: int = Field(default=0, ge=0, le=100, description="Workers the autoscaler keeps at least.")
    max_workers: int = Field(default=4, ge=1, le=100, description="Workers the autoscaler may add up to.")
    worker_cpu: ResourceQuantity = Field(default="4", description="CPU per worker (Kubernetes quantity).")
    worker_memory: ResourceQuantity = Field(default="16Gi", description="Memory per worker (Kubernetes quantity).")

    @model_validator(mode="after")
    def _sizes(self) -> TeamRay:
        if self.min_workers > self.max_workers:
            raise problem("minWorkers", f"minWorkers {self.min_workers} is above maxWorkers {self.max_workers}")
        return self


class Team(Model):
    """A team: one Kubeflow profile namespace with its people, quota and queue."""

    name: str = Field(description="Profile and namespace name.")
    owner: EmailStr = Field(description="The profile's owner, admin of the namespace (ClusterRole kubeflow-admin).")
    contributors: list[Contributor] = Field(default_factory=list, description="Everyone else with access.")
    quota: TeamQuota = Field(default=TeamQuota(), description="CPU, memory and GPUs the team may use at once.")
    container_defaults: ContainerDefaults = Field(
        default=ContainerDefaults(),
        description="Requests and limits of containers that name none (the namespace's LimitRange), so a plain "
        "job starts and counts against the quota.",
    )
    cohort: str | None = Field(
        default=None, description="Kueue cohort: teams in one cohort borrow each other's unused GPUs."
    )
    bucket: TeamBucket | None = Field(default=None, description="A GCS bucket for the team (gke only).")
    ray: TeamRay | None = Field(default=None, description="A RayCluster in the namespace (needs kuberay).")
    push_images: bool = Field(
        default=False,
        description="The team's Google service account (its notebooks and jobs, through Workload Identity) may push "
        "to the stack's Artifact Registry repository (gke).",
    )

    @field_validator("cohort")
    @classmethod
    def _cohort(cls, value: str | None) -> str | None:
        if value is not None and (len(value) > DNS_SUBDOMAIN_MAX or not DNS_SUBDOMAIN.match(value)):
            raise ValueError(
                f"{value!r} is not a Kueue cohort name: lowercase letters, digits, '-' and '.', "
                "starting and ending with a letter or digit, at most 253 characters"
            )
        return value

    @field_validator("name")
    @classmethod
    def _team_name(cls, value: str) -> str:
        _dns_label(value, 63)
        if value in RESERVED_NAMESPACES or value.startswith("kube-"):
            raise ValueError(f"{value!r} is a reserved namespace; pick another team name")
        return value

    @model_validator(mode="after")
    def _people(self) -> Team:
        seen: set[str] = set()
        for i, person in enumerate(self.contributors):
            email = person.email.lower()
            if email == self.owner.lower():
                raise problem(f"contributors[{i}].email", f"{person.email} is the owner; remove them from contributors")
            if email in seen:
                raise problem(f"contributors[{i}].email", f"{person.email} is listed twice; keep one entry")
            seen.add(email)
        return self


# --- the whole stack ------------------------------------------------------------------


class Toggle(Model):
    enabled: bool = Field(default=True, description="Install this component.")


class CertManagerConfig(Toggle):
    """cert-manager from its own chart, with the issuer and NetworkPolicies the pinned Kubeflow release adds (webhook certificates)."""


class IstioConfig(Toggle):
    """Istio with CNI and the ingress gateway, as the pinned Kubeflow release installs it."""


class AuthKind(str, Enum):
    DEX = "dex"
    """Dex static users (passwords from the secret config key mlplatform:dexPasswordHashes)."""
    OIDC = "oidc"
    """Dex with an upstream OIDC connector (e.g. Google); client secret from mlplatform:oidcClientSecret."""


class OidcConnector(Model):
    """The upstream identity provider Dex sends people to."""

    issuer: str = Field(
        default="https://accounts.google.com",
        description="The identity provider's issuer URL, https:// and all, exactly as its discovery document says.",
    )
    client_id: str = Field(description="OAuth client ID at the identity provider.")
    name: str = Field(default="Google", description="Shown on the Dex login page.")

    @field_validator("issuer")
    @classmethod
    def _issuer(cls, value: str) -> str:
        # OpenID Connect Discovery 1.0 section 3: the issuer is a case-sensitive https URL
        # with no query or fragment; Dex fetches <issuer>/.well-known/openid-configuration.
        if not REMOTE_SCHEME.match(value):
            raise ValueError(f"{value!r} has no scheme; an OIDC issuer is an https URL, e.g. 'https://{value}'")
        if not value.startswith("https://") or len(value) <= len("https://"):
            raise ValueError(f"{value!r}: an OIDC issuer is an https URL, e.g. https://accounts.google.com")
        if "?" in value or "#" in value:
            raise ValueError(f"{value!r}: an OIDC issuer has no query or fragment")
        return value


def _email_domain(value: str) -> str:
    if value != value.lower() or "@" in value or "*" in value or not EMAIL_DOMAIN.match(value):
        raise ValueError(f"{value!r} is not an e-mail domain such as acme.com: lowercase, no '@' or '*'")
    return value


EmailDomain = Annotated[str, AfterValidator(_email_domain)]
"""The part of an e-mail address after '@', e.g. acme.com (subdomains are not included)."""


class KubeflowAuth(Model):
    """How people sign in. The identity header that reaches profiles is kubeflow-userid."""

    kind: AuthKind = Field(
        default=AuthKind.DEX, description="dex: static users; oidc: Dex with an upstream OIDC provider."
    )
    static_users: list[EmailStr] = Field(
        default_factory=list,
        description="dex: users who may sign in; each needs a bcrypt hash in mlplatform:dexPasswordHashes.",
    )
    oidc: OidcConnector | None = Field(default=None, description="oidc: the upstream provider.")
    hostname: str | None = Field(
        default=None,
        description="gke: public hostname of the gateway (managed certificate, HTTPS), e.g. kubeflow.acme.com: no scheme or path.",
    )
    iap: bool = Field(default=False, description="gke: put Identity-Aware Proxy in front of the gateway.")
    iap_client_id: str | None = Field(
        default=None, description="gke + iap: OAuth client ID for IAP; its secret in mlplatform:iapClientSecret."
    )
    allowed_domains: list[EmailDomain] = Field(
        default_factory=list,
        description="oidc: e-mail domains whose accounts may sign in (acme.com: anyone@acme.com); "
        "with allowedEmails, kind oidc needs at least one entry.",
    )
    allowed_emails: list[EmailStr] = Field(
        default_factory=list, description="oidc: single accounts that may sign in besides allowedDomains."
    )

    @field_validator("hostname")
    @classmethod
    def _hostname_only(cls, value: str | None) -> str | None:
        return _hostname(value)

    @model_validator(mode="after")
    def _kind_fields(self) -> KubeflowAuth:
        if self.kind is AuthKind.OIDC and self.oidc is None:
            raise problem("oidc", "kind oidc needs oidc: {issuer, clientId}")
        if self.iap and not (self.hostname and self.iap_client_id):
            raise problem("iap", "iap needs hostname (the HTTPS entry point) and iapClientId")
        if self.kind is AuthKind.OIDC and not self.hostname:
            raise problem("hostname", "an OIDC provider redirects back to a public URL; set hostname")
        if self.kind is AuthKind.OIDC and not (self.allowed_domains or self.allowed_emails):
            raise problem(
                "allowedDomains",
                "kind oidc lets in every account of the provider unless you list who may sign in; "
                "set allowedDomains (e.g. [acme.com]) and/or allowedEmails",
            )
        if self.kind is AuthKind.DEX and (self.allowed_domains or self.allowed_emails):
            raise problem(
                "allowedDomains" if self.allowed_domains else "allowedEmails",
                "allowedDomains and allowedEmails are for kind oidc; with dex, staticUsers are who may sign in",
            )
        if self.kind is AuthKind.DEX and self.oidc is not None:
            raise problem("oidc", "oidc settings need kind: oidc")
        return self


class KubeflowConfig(Toggle):
    """Kubeflow multi-user core: dashboard, profiles + KFAM, PodDefaults, notebooks, auth."""

    auth: KubeflowAuth = Field(default=KubeflowAuth(), description="How people sign in.")
    notebook_registry: str | None = Field(
        default=None,
        description="Where the platform's notebook images are pulled from (`<registry>/notebook:<tag>`, "
        "images/notebook/Dockerfile). Default: the stack's Artifact Registry repository on gke, "
        "`localhost/mlplatform` on kind (`make notebook-images` builds them and loads them into the cluster).",
    )

    @field_validator("notebook_registry")
    @classmethod
    def _notebook_registry(cls, value: str | None) -> str | None:
        if value is not None and not REGISTRY_PATH.match(value):
            raise ValueError(
                f"{value!r} is not a registry path such as europe-docker.pkg.dev/acme/images: "
                "host and path, no scheme and no tag"
            )
        return value


class JobSetConfig(Toggle):
    """JobSet, installed once (Trainer's own copy is switched off)."""


class TrainerConfig(Toggle):
    """Kubeflow Trainer v2 controller; our runtimes come from runtimes/."""


class RaySource(str, Enum):
    OPERATOR = "operator"
    GKE_ADDON = "gke-addon"


class KubeRayConfig(Toggle):
    """KubeRay: the upstream operator, or GKE's managed Ray operator add-on (never both)."""

    source: RaySource = Field(
        default=RaySource.OPERATOR,
        description="operator: the KubeRay chart; gke-addon: GKE's managed Ray operator (gke only).",
    )


class WaitForPodsReady(Model):
    """Kueue's all-or-nothing admission (its `waitForPodsReady`): a workload Kueue admitted whose
    pods are not all ready in time is evicted, its quota freed, and requeued with backoff, so
    a half-started multi-node job never holds GPUs for long."""

    timeout: str = Field(
        default="20m",
        description="How long an admitted workload may take until every pod is scheduled, running and ready "
        "(a GPU pool scaling from zero plus the image pull) before Kueue evicts and requeues it; a duration "
        "such as 20m or 1h30m.",
    )
    block_admission: bool = Field(
        default=False,
        description="Admit nothing else until the admitted workload's pods are all ready: strict one-at-a-time "
        "admission, at the price of admissions waiting on every node scale-up.",
    )
    backoff_limit_count: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="Evictions for unready pods after which Kueue deactivates the workload; none: requeue "
        "it forever, backing off 60s doubling up to an hour.",
    )

    @field_validator("timeout")
    @classmethod
    def _timeout(cls, value: str) -> str:
        if not DURATION.match(value) or not any(c.isdigit() and c != "0" for c in value):
            raise ValueError(f"{value!r} is not a duration such as 20m or 1h30m: positive numbers with h, m or s")
        return value


class KueueConfig(Toggle):
    """Kueue with the TrainJob, JobSet and Ray integrations; one ResourceFlavor per GPU pool,
    and a ProvisioningRequest admission check per queued pool."""

    wait_for_pods_ready: WaitForPodsReady = Field(
        default=WaitForPodsReady(),
        description="All-or-nothing admission: a multi-node TrainJob or RayJob starts whole, or is evicted "
        "and requeued.",
    )


class MetricsBackend(str, Enum):
    KUBE_PROMETHEUS_STACK = "kube-prometheus-stack"
    GKE_MANAGED = "gke-managed"


class MonitoringConfig(Toggle):
    """Prometheus + Grafana with GPU, Ray, Kueue and per-team dashboards, and GPU alerts.
    Grafana signs people in with the identity the Kubeflow gateway asserts: Viewer, or Admin
    for grafanaAdmins; it has no shared admin login."""

    backend: MetricsBackend = Field(
        default=MetricsBackend.KUBE_PROMETHEUS_STACK,
        description="kube-prometheus-stack in the cluster, or gke-managed: Google Cloud Managed Service "
        "for Prometheus (needs cluster.managedPrometheus).",
    )
    retention: str = Field(
        default="15d", description="kube-prometheus-stack: how long Prometheus keeps data, e.g. 15d (h, d, w or y)."
    )
    storage_size: VolumeSize = Field(
        default="50Gi", description="kube-prometheus-stack: Prometheus volume size, a Kubernetes quantity such as 50Gi."
    )
    idle_gpu_threshold: int = Field(
        default=10, ge=1, le=100, description="Alert when allocated GPUs stay below this utilisation (%)."
    )
    idle_gpu_minutes: int = Field(
        default=30, ge=5, le=1440, description="... for this many minutes (the idle-GPU alert's `for`)."
    )
    pending_workload_minutes: int = Field(
        default=30, ge=1, le=10080, description="Alert when a workload waits in Kueue longer than this."
    )
    gpu_temperature_celsius: int = Field(default=85, ge=50, le=110, description="Alert above this GPU temperature.")
    grafana_admins: list[EmailStr] = Field(
        default_factory=list,
        description="Who is Admin in Grafana (dashboards, data sources, alerting); everyone else who signs in is a Viewer.",
    )

    @field_validator("retention")
    @classmethod
    def _retention(cls, value: str) -> str:
        if not RETENTION.match(value):
            raise ValueError(f"{value!r} is not a Prometheus retention such as 15d: a positive number and h, d, w or y")
        return value



class DcgmSource(str, Enum):
    CHART = "chart"
    GKE_MANAGED = "gke-managed"


class DcgmExporterConfig(Model):
    """NVIDIA DCGM exporter: GPU metrics per pod. Default: on for GKE stacks with GPUs, off otherwise."""

    enabled: bool | None = Field(
        default=None, description="Default: on for gke stacks with GPU pools or GPU autoprovisioning limits, off otherwise."
    )
    source: DcgmSource = Field(default=DcgmSource.CHART, description="NVIDIA's chart, or GKE's managed DCGM metrics.")


# --- Kubeflow Pipelines (components/pipelines.py) -----------------------------------------

# Cloud SQL machine tiers (cloud.google.com/sql/docs/mysql/instance-settings, "Machine types"):
# custom `db-custom-<vCPUs>-<memory MiB>` and the shared-core `db-f1-micro` / `db-g1-small`.
CLOUD_SQL_TIER = re.compile(r"^db-custom-(?P<vcpus>[0-9]+)-(?P<mib>[0-9]+)$|^db-(f1-micro|g1-small)$")
HOUR_MINUTE = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")


class PipelinesCloudSql(Model):
    """GKE: the pipelines database, Cloud SQL for MySQL on the stack's VPC (private IP only),
    with automated backups and point-in-time recovery; deletion-protected where the stack is."""

    tier: str = Field(
        default="db-custom-1-3840",
        description="Machine tier: db-custom-<vCPUs>-<memory MiB> (memory 0.9 to 6.5 GiB per vCPU, a multiple of "
        "256 MiB) or a shared core (db-f1-micro, db-g1-small: no SLA).",
    )
    disk_size_gb: int = Field(default=10, ge=10, le=65536, description="SSD size (GB); grows by itself when full, never shrinks.")
    high_availability: bool = Field(
        default=False, description="A standby in a second zone with automatic failover (REGIONAL); doubles the price."
    )
    backup_start_time: str = Field(default="03:00", description="When the daily backup starts (UTC, HH:MM).")
    retained_backups: int = Field(default=7, ge=1, le=365, description="Daily backups kept.")
    log_retention_days: int = Field(
        default=7, ge=1, le=7, description="Days of binary logs kept for point-in-time recovery (at most 7)."
    )

    @field_validator("tier")
    @classmethod
    def _tier(cls, value: str) -> str:
        found = CLOUD_SQL_TIER.match(value)
        if found is None:
            raise ValueError(f"{value!r} is not a Cloud SQL tier such as db-custom-2-7680 (db-custom-<vCPUs>-<memory MiB>)")
        if found["vcpus"]:
            vcpus, mib = int(found["vcpus"]), int(found["mib"])
            if vcpus != 1 and vcpus % 2:
                raise ValueError(f"{value!r}: a custom tier has 1 or an even number of vCPUs")
            if mib % 256 or not 0.9 * 1024 * vcpus <= mib <= 6.5 * 1024 * vcpus:
                raise ValueError(f"{value!r}: memory must be a multiple of 256 MiB, 0.9 to 6.5 GiB per vCPU")
        return value

    @field_validator("backup_start_time")
    @classmethod
    def _start(cls, value: str) -> str:
        if not HOUR_MINUTE.match(value):
            raise ValueError(f"{value!r} is not a time of day such as 03:00 (UTC, HH:MM)")
        return value


class PipelinesConfig(Toggle):
    """Kubeflow Pipelines, multi-user: the API server, UI, Argo Workflows, its database and object
    store, behind the Kubeflow gateway; every team's runs keep their artifacts in the team's bucket
    (gke) or its own prefix of the in-cluster store."""

    database_storage: VolumeSize = Field(
        default="20Gi",
        description="kind, existingContext: the in-cluster MySQL's volume (protected and retained). Grows where the "
        "storage class allows expansion; never shrinks.",
    )
    object_store_storage: VolumeSize = Field(
        default="20Gi",
        description="The in-cluster SeaweedFS volume (protected and retained): the API server's own store (pipeline "
        "packages), and on kind every team's artifacts. Grows where the storage class allows; never shrinks.",
    )
    cloud_sql: PipelinesCloudSql = Field(
        default=PipelinesCloudSql(), description="gke: the pipelines database on Cloud SQL for MySQL."
    )


class Components(Model):
    """In-cluster components. Each is on unless `enabled: false`."""

    cert_manager: CertManagerConfig = Field(default=CertManagerConfig(), description="Webhook certificates; kubeflow needs it.")
    istio: IstioConfig = Field(default=IstioConfig(), description="Service mesh and ingress gateway; kubeflow needs it.")
    kubeflow: KubeflowConfig = Field(default=KubeflowConfig(), description="Dashboard, notebooks, profiles and sign-in; teams need it.")
    jobset: JobSetConfig = Field(default=JobSetConfig(), description="JobSet, which TrainJobs run as; trainer needs it.")
    trainer: TrainerConfig = Field(default=TrainerConfig(), description="Kubeflow Trainer and our training runtimes.")
    kuberay: KubeRayConfig = Field(default=KubeRayConfig(), description="Ray operator; team Ray clusters need it.")
    kueue: KueueConfig = Field(default=KueueConfig(), description="Queues and quotas per team; queued GPU pools need it.")
    monitoring: MonitoringConfig = Field(default=MonitoringConfig(), description="Prometheus, Grafana, dashboards and GPU alerts.")
    dcgm_exporter: DcgmExporterConfig = Field(default=DcgmExporterConfig(), description="GPU metrics per pod.")
    pipelines: PipelinesConfig = Field(
        default=PipelinesConfig(), description="Kubeflow Pipelines; needs kubeflow, certManager and istio."
    )

    @model_validator(mode="after")
    def _needs(self) -> Components:
        needs = {
            "kubeflow": ("istio", "certManager"),
            "trainer": ("jobset",),
            "pipelines": ("kubeflow", "certManager", "istio"),
        }
        enabled = {name for name, on in self.enabled_by_key().items() if on}
        for component, required in needs.items():
            for dependency in required:
                if component in enabled and dependency not in enabled:
                    raise problem(
                        f"{dependency}.enabled",
                        f"{component} needs {dependency}; enable {dependency} or disable {component}",
                    )
        return self

    def enabled_by_key(self) -> dict[str, bool]:
        return {
            (field.alias or name): bool(getattr(self, name).enabled)
            for name, field in type(self).model_fields.items()
        }


# --- where upstream software comes from ------------------------------------------------

REMOTE_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://")


class Sources(Model):
    """Where upstream software is installed from: the public upstreams of the pin table
    (default), or a mirror for air-gapped and private-registry installs. `pulumi up` and
    the offline render resolve both the same way (components/sources.py)."""

    charts: str | None = Field(
        default=None,
        description="Every Helm chart from a mirror instead of its public repository: an OCI registry "
        "(`oci://europe-docker.pkg.dev/acme/charts`, chart at `<registry>/<chart>`), a Helm repository "
        "(`https://charts.acme.internal`), or a local directory of `<chart>-<version>.tgz` archives "
        "(relative to the project directory).",
    )
    kubeflow_manifests: str | None = Field(
        default=None,
        description="The Kubeflow manifests from a mirror: a git mirror of kubeflow/community-distribution, "
        "formerly kubeflow/manifests (`https://git.acme.internal/kubeflow/manifests`, read at the pinned tag), or a local checkout "
        "of the pinned tag (relative to the project directory).",
    )

    remote_bases: str | None = Field(
        default=None,
        description="The remote kustomize bases the Kubeflow trees name (Argo Workflows for Pipelines) from a local "
        "directory laid out `<host>/<owner>/<repo>/<ref>/<path>` (the `remote/` folder of a mirror; relative to the "
        "project directory); needs a local kubeflowManifests. `python -m stacks prepare <stack>` writes the trees "
        "pointing at it before `pulumi up` (docs/pipelines.md). Default: fetched from GitHub at the refs the trees name.",
    )

    @field_validator("charts")
    @classmethod
    def _charts(cls, value: str | None) -> str | None:
        return _mirror_location(
            value,
            ("oci://", "https://", "http://"),
            "use oci://<registry>/<path>, https://<helm repository>, or a local directory",
            "remove the key to use the public chart repositories",
        )

    @field_validator("kubeflow_manifests")
    @classmethod
    def _manifests(cls, value: str | None) -> str | None:
        value = _mirror_location(
            value,
            ("https://", "http://", "ssh://", "file://"),
            "use a git URL (https:// or ssh://) or a local directory",
            "remove the key to use github.com/kubeflow/community-distribution",
        )
        if value is not None and ("?" in value or "//" in value.split("://", 1)[-1]):
            raise ValueError(f"{value!r}: give the repository root; the tag and paths come from the pin table")
        return value

    @field_validator("remote_bases")
    @classmethod
    def _remote_bases(cls, value: str | None) -> str | None:
        return _mirror_location(
            value, (), "give a local directory (a mirror's remote/ folder)", "remove the key to fetch them from GitHub"
        )

    @model_validator(mode="after")
    def _remote_bases_beside_local_trees(self) -> Sources:
        manifests = self.kubeflow_manifests
        if self.remote_bases is not None and (manifests is None or REMOTE_SCHEME.match(manifests)):
            raise problem(
                "remoteBases",
                "a local remoteBases needs a local kubeflowManifests (a checkout of the pinned tag) for its trees to "
                "point at; set kubeflowManifests to that directory, or remove remoteBases",
            )
        return self


class Images(Model):
    """Where the cluster pulls images from. Retired registries are replaced whatever this says
    (facts/registries.py); with a mirror, every image the platform runs is pulled through it."""

    mirror: str | None = Field(
        default=None,
        description="A registry prefix every image is pulled through (`europe-docker.pkg.dev/acme-ml/mirror`; "
        "no scheme, no tag): `<mirror>/<source registry>/<path>:<tag>`, the source registry kept in the path "
        "(`<mirror>/docker.io/istio/pilot:<tag>`; Docker Hub short names as `docker.io/library/...`), so it "
        "must allow nested paths. `python -m stacks images <stack> --copy-list` lists what to copy into it "
        "(docs/images.md). On gke, an Artifact Registry mirror is made readable by the nodes.",
    )

    @field_validator("mirror")
    @classmethod
    def _mirror(cls, value: str | None) -> str | None:
        if value is None:
            return None
        bare = value.rstrip("/")
        if REMOTE_SCHEME.match(bare):
            raise ValueError(f"{value!r}: give the registry path without a scheme, e.g. {REMOTE_SCHEME.sub('', bare)!r}")
        host, slash, path = bare.partition("/")
        if "@" in bare or (slash and ":" in path):
            raise ValueError(f"{value!r} names a tag or digest; give the registry prefix alone (images keep their own tags)")
        if not MIRROR_PATH.match(bare):
            raise ValueError(
                f"{value!r} is not a registry prefix such as europe-docker.pkg.dev/acme-ml/mirror: "
                "a host (and port), then lowercase path components"
            )
        if host in ("docker.io", "index.docker.io"):
            raise ValueError(f"{value!r}: Docker Hub repositories cannot hold the mirror's nested paths; use a registry that can")
        if host.endswith("-docker.pkg.dev") and len([p for p in path.split("/") if p]) < 2:
            raise ValueError(
                f"{value!r}: an Artifact Registry mirror is a repository, <location>-docker.pkg.dev/<project>/<repository>"
            )
        return bare


def _mirror_location(value: str | None, schemes: tuple[str, ...], use: str, empty: str) -> str | None:
    """A mirror location: a URL with one of `schemes`, or a local path; trailing `/` dropped."""
    if value is None:
        return None
    if not value.strip():
        raise ValueError(f"empty; {empty}")
    scheme = REMOTE_SCHEME.match(value)
    if scheme and scheme[0] not in schemes:
        raise ValueError(f"{value!r}: {use}")
    return value.rstrip("/")


class PlatformConfig(Model):
    """Everything a stack file may say, keyed as it is written."""

    project: str | None = Field(default=None, alias="gcp:project", description="GCP project; required for gke.")
    environment: Environment = Field(
        default=Environment.DEV,
        alias="mlplatform:environment",
        description="prod turns deletion protection on and the prod policy rules.",
    )
    cluster: ClusterConfig = Field(alias="mlplatform:cluster", description="The cluster; `kind` picks the model.")
    components: Components = Field(
        default=Components(), alias="mlplatform:components", description="In-cluster components."
    )
    teams: list[Team] = Field(
        default_factory=list, alias="mlplatform:teams", description="One Kubeflow profile namespace each."
    )
    sources: Sources = Field(
        default=Sources(),
        alias="mlplatform:sources",
        description="Where charts and Kubeflow manifests come from; default: the public upstreams.",
    )
    images: Images = Field(
        default=Images(),
        alias="mlplatform:images",
        description="Where the cluster pulls images from; default: each image's own registry.",
    )

    @field_validator("project")
    @classmethod
    def _project(cls, value: str | None) -> str | None:
        if value is not None and not GCP_PROJECT_ID.match(value):
            hint = " (the project ID, not its number)" if value.isdigit() else ""
            raise ValueError(
                f"{value!r} is not a GCP project ID{hint}: 6-30 lowercase letters, digits and '-', "
                "a letter first, no '-' last (gcloud projects list shows the IDs)"
            )
        return value

    def enabled_components(self) -> dict[str, bool]:
        """Which components this stack installs, with defaults that depend on the cluster resolved."""
        enabled = self.components.enabled_by_key()
        cluster = self.cluster
        if self.components.dcgm_exporter.enabled is None:
            enabled["dcgmExporter"] = isinstance(cluster, GkeClusterConfig) and (
                bool(cluster.gpu_pools) or any(k in ACCELERATORS for k in cluster.autoprovisioning.limits)
            )
        return enabled

    @property
    def deletion_protection(self) -> bool:
        cluster = self.cluster
        if isinstance(cluster, GkeClusterConfig) and cluster.deletion_protection is not None:
            return cluster.deletion_protection
        return self.environment is Environment.PROD

