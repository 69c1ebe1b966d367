"""The stack file's node pools: the system pool, GPU pools with their accelerators, sharing,
provisioning, labels and taints, and autoprovisioning."""

from __future__ import annotations

import re
from enum import Enum
from typing import Annotated

from pydantic import (
    AfterValidator,
    Field,
    StrictBool,
    StrictInt,
    field_validator,
    model_validator,
)

from facts.gpu_catalog import ACCELERATORS, describe_machine_types
from facts.node_labels import Taint, reserved_key
from facts.topology import LABELLED_MACHINE_TYPES
from stackmodel.schema.common import (
    DNS_SUBDOMAIN,
    DNS_SUBDOMAIN_MAX,
    GCP_REGION,
    GCP_ZONE,
    RESERVATION_NAME,
    Int64,
    Model,
    ShortName,
    ValueKind,
    _machine_type_name,
    _unique,
    problem,
    problems,
    rule,
)
from stackmodel.schema.fabric import FabricConfig, FabricNetwork, pool_fabric_problems


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


class GpuAllocation(str, Enum):
    """How pods get a pool's GPUs: the device plugin's `nvidia.com/gpu` resource, or Dynamic
    Resource Allocation through NVIDIA's DRA driver (ResourceClaims)."""

    DEVICE_PLUGIN = "device-plugin"
    DRA = "dra"


DRA_SOURCE = "docs.cloud.google.com/kubernetes-engine/docs/how-to/set-up-dra, Limitations (read Dec 2026)"
"""What GKE refuses with DRA: node auto-provisioning, automatic GPU driver installation, GPU
sharing (time-sharing, multi-instance GPUs, MPS); GKE 1.34 or later."""


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
    @rule("gpu-sharing-fields")
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


# --- a pool's own node labels and taints ---------------------------------------------
# Kubernetes label syntax (kubernetes.io/docs/concepts/overview/working-with-objects/labels,
# "Syntax and character set"; apimachinery IsQualifiedName / IsValidLabelValue, which also
# judge a taint's key and value): a key is an optional DNS-subdomain prefix and '/', then a
# name of at most 63 characters, alphanumerics at both ends and '-', '_', '.' between; a
# value is empty or such a name.
LABEL_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$")
LABEL_VALUE_MAX = 63


def _label_key_problem(key: str) -> str | None:
    prefix, slash, name = key.rpartition("/")
    if (slash and (not prefix or len(prefix) > DNS_SUBDOMAIN_MAX or not DNS_SUBDOMAIN.match(prefix))) or not LABEL_NAME.match(name):
        return (
            f"{key!r} is not a Kubernetes label key: an optional DNS prefix and '/' (acme.com/), then at most 63 "
            "letters, digits, '-', '_' or '.', a letter or digit at each end"
        )
    owner = reserved_key(key)
    return f"{key!r} is {owner}; use a key of your own, such as acme.com/{name}" if owner else None


def _label_value_problem(key: str, value: str) -> str | None:
    if value and (len(value) > LABEL_VALUE_MAX or not LABEL_NAME.match(value)):
        return (
            f"{value!r} (for {key}) is not a Kubernetes label value: empty, or at most 63 letters, digits, '-', '_' "
            "or '.', a letter or digit at each end"
        )
    return None


def _node_labels(labels: dict[str, str]) -> dict[str, str]:
    found = [
        (key, message)
        for key, value in labels.items()
        for message in (_label_key_problem(key), _label_value_problem(key, value))
        if message
    ]
    if found:
        raise problems(found)
    return labels


NodeLabels = Annotated[dict[str, str], AfterValidator(_node_labels), ValueKind("map of label key to value")]
"""Kubernetes labels on a pool's nodes, none of the platform's or GKE's keys."""


class TaintEffect(str, Enum):
    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"


class PoolTaint(Model):
    """A taint on a GPU pool's nodes besides the platform's own GPU taint: pods that do not
    tolerate it stay off the pool. Everything of the platform that targets the pool (its
    runtimes, Kueue flavor, team Ray workers, notebook form, DCGM exporter) tolerates it, so it
    keeps off the rest, such as GPU pods that reach the pool without going through the platform."""

    key: str = Field(description="Taint key, e.g. acme.com/dedicated; not the platform's or under kubernetes.io/, k8s.io/ or cloud.google.com/.")
    value: str = Field(default="", description="Taint value (may be empty).")
    effect: TaintEffect = Field(default=TaintEffect.NO_SCHEDULE, description="What the taint does to pods that do not tolerate it.")

    @model_validator(mode="after")
    @rule("pool-taint-syntax")
    def _syntax(self) -> PoolTaint:
        found = [("key", m) for m in (_label_key_problem(self.key),) if m]
        found += [("value", m) for m in (_label_value_problem(self.key, self.value),) if m]
        if found:
            raise problems(found)
        return self

    def taint(self) -> Taint:
        return Taint(key=self.key, value=self.value, effect=self.effect.value)


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
    labels: NodeLabels = Field(
        default_factory=dict,
        description="Kubernetes labels on the nodes besides GKE's (e.g. acme.com/cost-center: ml). Replaces the pool. "
        "The system pool takes no taints: the platform's controllers run there.",
    )

    @field_validator("machine_type")
    @classmethod
    def _machine_type(cls, value: str) -> str:
        return _machine_type_name(value)

    @model_validator(mode="after")
    @rule("system-pool-min-le-max")
    def _min_le_max(self) -> SystemPool:
        if self.min > self.max:
            raise problem("min", f"min {self.min} is above max {self.max}; lower min or raise max")
        return self


class GpuPool(Model):
    """One GPU node pool. Accelerator, machine type, sharing, driver, taints and
    labels replace the pool when changed; sizes do not. Every problem of a pool is
    reported at once."""

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
    gpu_allocation: GpuAllocation = Field(
        default=GpuAllocation.DEVICE_PLUGIN,
        description="device-plugin (nvidia.com/gpu) or dra: GPUs through Dynamic Resource Allocation and NVIDIA's DRA driver "
        "(the nvidiaDraDriver component; GKE 1.34+, no sharing, no autoprovisioning, the platform installs the driver). "
        "Replaces the pool.",
    )
    disk_size_gb: StrictInt = Field(
        default=200,
        ge=50,
        le=65536,
        description="Boot disk per node (GB): Hyperdisk Balanced on a3-ultragpu-8g and a4-highgpu-8g, GKE's default "
        "pd-balanced otherwise. Replaces the pool.",
    )
    labels: NodeLabels = Field(
        default_factory=dict,
        description="Kubernetes labels on the nodes besides the platform's and GKE's (e.g. acme.com/cost-center: ml). "
        "Replaces the pool.",
    )
    taints: list[PoolTaint] = Field(
        default_factory=list,
        description="Taints on the nodes besides the platform's nvidia.com/gpu one, each key and effect once; the platform's "
        "workloads for the pool tolerate them, everything else stays off. Replaces the pool.",
    )
    network: FabricNetwork = Field(
        default=FabricNetwork.NONE,
        description="GPUDirect networking between the pool's nodes (docs/gpu-fabric.md): tcpxo on a3-megagpu-8g, rdma on "
        "a3-ultragpu-8g and a4-highgpu-8g, none otherwise. Needs fabric. Replaces the pool.",
    )
    fabric: FabricConfig | None = Field(
        default=None,
        description="With network tcpxo or rdma: the fabric's VPCs, created from a range (cidr) or existing. Replaces the pool.",
    )

    @field_validator("taints")
    @classmethod
    def _taints(cls, taints: list[PoolTaint]) -> list[PoolTaint]:
        _unique(taints, lambda t: f"the taint {t.key}:{t.effect.value}", "; a node takes one taint per key and effect")
        return taints

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
    @rule("gpu-pool-fits-catalog")
    def _fits_catalog(self) -> GpuPool:
        """Every problem of the pool at once: what needs the accelerator's catalog entry is
        judged only when the accelerator is known, everything else always."""
        found: list[tuple[str, str]] = []
        acc = ACCELERATORS.get(self.accelerator)
        if acc is None:
            found.append(("accelerator", f"unknown accelerator {self.accelerator!r}; use one of {', '.join(ACCELERATORS)}"))
        elif self.machine_type not in acc.machine_types:
            found.append(
                ("machineType", f"{self.machine_type!r} cannot carry {acc.name}; use one of {describe_machine_types(acc)}")
            )
        if self.min > self.max:
            found.append(("min", f"min {self.min} is above max {self.max}; lower min or raise max"))
        dws = self.provisioning in (Provisioning.QUEUED, Provisioning.FLEX_START)
        if dws and acc is not None and not acc.dws:
            found.append(
                ("provisioning", f"{self.provisioning.value} is not offered for {acc.name}; use on-demand, spot or reservation")
            )
        if dws and self.min != 0:
            found.append(("min", f"{self.provisioning.value} pools start empty; set min to 0"))
        if (self.provisioning is Provisioning.RESERVATION) != (self.reservation is not None):
            found.append(
                ("reservation", "set reservation (the reservation's name) exactly when provisioning is reservation")
            )
        if self.compact_placement:
            if acc is not None and not acc.compact_placement:
                found.append(("compactPlacement", f"{acc.family} machines do not support compact placement; remove it"))
            if self.zones is None or len(self.zones) != 1:
                found.append(("zones", "compactPlacement keeps nodes in one zone; set zones to exactly one zone"))
        if self.fast_socket and not self.gvnic:
            found.append(("fastSocket", "NCCL Fast Socket needs gvnic: true"))
        if self.fast_socket and acc is not None and not acc.fast_socket:
            found.append(("fastSocket", f"NCCL Fast Socket is not supported on {acc.name}; remove it"))
        sharing = self.sharing
        if acc is not None and sharing and sharing.strategy is SharingStrategy.MIG and sharing.partition_size not in acc.mig_partitions:
            allowed = ", ".join(acc.mig_partitions) or "none: this GPU has no MIG"
            found.append(
                (
                    "sharing",
                    f"partitionSize {sharing.partition_size!r} is not a MIG profile of {acc.name}; use one of {allowed}",
                )
            )
        found += pool_fabric_problems(self)
        if found:
            raise problems(found)
        return self

    @property
    def fabric_kind(self) -> str:
        """`none`, `tcpxo` or `rdma` (facts/gpu_fabric.py's names)."""
        return self.network.value

    @model_validator(mode="after")
    @rule("dra-pool-as-gke-allows")
    def _dra_as_gke_allows(self) -> GpuPool:
        """What GKE refuses of a DRA pool itself (DRA_SOURCE); autoprovisioning and the GKE version
        are the stack's (stackmodel/rules/ dra-pools-without-autoprovisioning, dra-pools-gke-version)."""
        if self.gpu_allocation is not GpuAllocation.DRA:
            return self
        found: list[tuple[str, str]] = []
        if self.sharing is not None:
            found.append(
                (
                    "gpuAllocation",
                    f"GKE's DRA takes no GPU sharing ({self.sharing.strategy.value} here; time-sharing, MPS and multi-instance "
                    f"GPUs are all refused: {DRA_SOURCE}); remove sharing or use gpuAllocation: device-plugin",
                )
            )
        if "driver_version" in self.model_fields_set and self.driver_version is not DriverVersion.INSTALLATION_DISABLED:
            found.append(
                (
                    "gpuAllocation",
                    f"GKE does not install the GPU driver on a DRA pool ({DRA_SOURCE}); the platform turns GKE's installation "
                    f"off and installs the driver itself: remove driverVersion ({self.driver_version.value}) or use "
                    "gpuAllocation: device-plugin",
                )
            )
        if found:
            raise problems(found)
        return self

    @model_validator(mode="after")
    @rule("dra-pool-as-kueue-admits")
    def _dra_as_kueue_admits(self) -> GpuPool:
        """What Kueue v0.19.2 cannot run on a DRA pool (docs/gke-cluster.md says why refused):
        - queued provisioning: its ProvisioningRequest check asks for nodes only for pod sets whose
          containers request a managed resource (pkg/controller/admissionchecks/provisioning/
          controller.go `reqIsNeeded` -> `podUses`), and a DRA pod asks through its claim: Ready
          with `NoRequestNeeded`, no request made, the pool never grows;
        - topology: "No DRA + Topology Aware Scheduling" (site/content/en/docs/concepts/
          dynamic_resource_allocation.md, Limitations): TAS sizes pods from container requests
          (pkg/scheduler/flavorassigner/tas_flavorassigner.go `podSetTopologyRequest`)."""
        if self.gpu_allocation is not GpuAllocation.DRA:
            return self
        found: list[tuple[str, str]] = []
        if self.provisioning is Provisioning.QUEUED:
            found.append(
                (
                    "provisioning",
                    "Kueue asks GKE for a queued pool's nodes only for pods whose containers request nvidia.com/gpu, and a DRA "
                    "pod asks through a ResourceClaim: no ProvisioningRequest would be made and the pool would never grow; use "
                    "provisioning: flex-start, on-demand, spot or reservation, or gpuAllocation: device-plugin",
                )
            )
        elif self.topology_aware:
            found.append(
                (
                    "gpuAllocation",
                    f"Kueue places this pool's {self.machine_type} nodes by GKE's topology (its size is fixed, min = max), and "
                    "Kueue does not support DRA with topology-aware scheduling (it sizes pods from container requests, not "
                    "claims); use gpuAllocation: device-plugin, or let the pool grow (min below max)",
                )
            )
        if found:
            raise problems(found)
        return self

    @property
    def dra(self) -> bool:
        return self.gpu_allocation is GpuAllocation.DRA

    @property
    def gke_driver_installation(self) -> DriverVersion:
        """What the node pool asks of GKE: none on a DRA pool (GKE's DRA needs it off)."""
        return DriverVersion.INSTALLATION_DISABLED if self.dra else self.driver_version

    @property
    def spot(self) -> bool:
        """Spot VMs: GKE labels their nodes, and every selector of the pool includes that label."""
        return self.provisioning is Provisioning.SPOT

    @property
    def gpus_per_node(self) -> int:
        return ACCELERATORS[self.accelerator].gpus_per_node(self.machine_type)

    @property
    def topology_labelled(self) -> bool:
        """GKE labels the pool's nodes with their block, sub-block and host (facts/topology.py):
        the machine type is one that carries them, and Spot VMs do only with compact placement."""
        return self.machine_type in LABELLED_MACHINE_TYPES and (not self.spot or self.compact_placement)

    @property
    def topology_aware(self) -> bool:
        """Kueue places the pool's jobs by GKE's topology (its flavor names the Topology, its
        runtime variants ask for a level): its nodes carry the labels and Kueue can count them
        before it admits, as TAS counts only nodes that exist (facts/topology.py). Queued pools:
        Kueue's ProvisioningRequest check brings the nodes up before it assigns the topology;
        pools of fixed size (min equal to max): the nodes are there. Any other pool grows only
        for pods Kueue has admitted, which TAS would never admit onto nodes not there yet."""
        return self.topology_labelled and (self.provisioning is Provisioning.QUEUED or self.min == self.max)

    @property
    def extra_taints(self) -> tuple[Taint, ...]:
        """The stack's own taints of the pool (facts/node_labels.py pool_taints adds the platform's)."""
        return tuple(t.taint() for t in self.taints)


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
    @rule("autoprovisioning-limits-named")
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
