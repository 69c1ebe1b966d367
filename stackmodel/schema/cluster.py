"""The stack file's cluster: a GKE cluster (its channel, maintenance, secrets encryption and
the parts of pools and network) or a local kind cluster."""

from __future__ import annotations

import datetime
import re
from enum import Enum
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    StrictBool,
    StrictInt,
    field_validator,
    model_validator,
)

from facts import gpu_fabric
from facts.networks import AUTHORIZED_NETWORKS_MAX
from facts.support import GKE_CHANNEL_DEFAULTS
from stackmodel.schema.common import (
    GCP_PROJECT_ID,
    GCP_REGION,
    GCP_ZONE,
    GKE_VERSION,
    REGIONAL_ZONES,
    Email,
    Model,
    ShortName,
    ValueKind,
    _text,
    _unique,
    problem,
    problems,
    rule,
    zone_region,
)
from stackmodel.schema.fabric import cluster_fabric_problems
from stackmodel.schema.network import AuthorizedNetwork, ImageRegistryConfig, NetworkConfig
from stackmodel.schema.pools import Autoprovisioning, GpuPool, SystemPool

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


# --- maintenance ------------------------------------------------------------------------
# GKE "Maintenance windows and exclusions" (cloud.google.com/kubernetes-engine/docs/concepts/
# maintenance-windows-and-exclusions and .../how-to/maintenance-windows-and-exclusions, read
# 2026-12-01): one recurring window per cluster; it must allow at least 48 hours of
# maintenance in any 32-day rolling window, counting only contiguous stretches of at least
# 4 hours; day-of-week recurrences are in UTC; a "no upgrades" exclusion lasts at most 30
# days, the minor-upgrade scopes may last until the version's end of support; at most 20
# exclusions (pulumi-gcp 10.2.0 ClusterMaintenancePolicyArgs.maintenance_exclusions). The
# provider takes times in RFC 3339 and "may accept other formats, but will return values in
# UTC, causing a permanent diff" (ClusterMaintenancePolicyArgs.recurring_window), so times
# here are written in UTC with a Z.
UTC_TIME = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")
WINDOW_MIN_HOURS = 4
WINDOW_HOURS_PER_32_DAYS = 48
NO_UPGRADES_MAX_DAYS = 30
EXCLUSIONS_MAX = 20
WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
RECURRENCE = re.compile(r"^FREQ=(DAILY|WEEKLY)(;BYDAY=([A-Z]{2}(,[A-Z]{2})*))?$")


def _utc_text(value: object) -> object:
    """YAML reads an unquoted 2026-01-03T02:00:00Z as a date (PyYAML, here) where Pulumi passes
    the text on: both become the same text."""
    if isinstance(value, datetime.datetime) and value.utcoffset() == datetime.timedelta(0):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value


def _utc_time(value: str) -> str:
    if not UTC_TIME.match(value):
        raise ValueError(
            f"{value!r} is not a UTC time such as 2026-01-03T02:00:00Z (RFC 3339 with a Z: GKE returns times in UTC, "
            "so any other form would show as a change on every update)"
        )
    try:
        datetime.datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a date and time that exists; check the day and hour") from None
    return value


UtcTime = Annotated[str, BeforeValidator(_utc_text), AfterValidator(_utc_time), ValueKind("UTC time (RFC 3339, Z)")]
"""A moment in UTC, `2026-01-03T02:00:00Z`."""


def _moment(value: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(value)


class MaintenanceWindow(Model):
    """When GKE may upgrade and maintain the cluster on its own: a window that recurs (RFC 5545
    RRULE), from the first occurrence's start to its end, in UTC."""

    start: UtcTime = Field(description="The first window's start, e.g. 2026-01-03T02:00:00Z.")
    end: UtcTime = Field(description="The first window's end; the length of every window.")
    recurrence: str = Field(
        description="How it recurs: FREQ=DAILY, or FREQ=WEEKLY;BYDAY=SA,SU (days in UTC). With the length, at "
        "least 48 hours in any 32 days, in windows of at least 4 hours (GKE's minimum).",
    )

    @field_validator("recurrence")
    @classmethod
    def _recurrence(cls, value: str) -> str:
        found = RECURRENCE.match(value)
        days = (found[3] or "").split(",") if found and found[3] else []
        if not found or any(d not in WEEKDAYS for d in days) or len(set(days)) != len(days):
            raise ValueError(
                f"{value!r} is not a recurrence this schema reads: FREQ=DAILY, FREQ=WEEKLY (the start's weekday) or "
                f"FREQ=WEEKLY;BYDAY= with days each once from {','.join(WEEKDAYS)}"
            )
        if found[1] == "DAILY" and days:
            raise ValueError(f"{value!r}: BYDAY goes with FREQ=WEEKLY; write FREQ=WEEKLY;BYDAY={found[3]}")
        return value

    @model_validator(mode="after")
    @rule("maintenance-window-availability")
    def _availability(self) -> MaintenanceWindow:
        hours = (_moment(self.end) - _moment(self.start)).total_seconds() / 3600
        if hours <= 0:
            raise problem("end", f"end {self.end} is not after start {self.start}")
        if hours < WINDOW_MIN_HOURS:
            raise problem(
                "end",
                f"a window of {hours:g} hours is shorter than GKE counts ({WINDOW_MIN_HOURS} hours at least); make it longer",
            )
        weekly = self.recurrence.startswith("FREQ=WEEKLY")
        per_week = len(self.recurrence.partition("BYDAY=")[2].split(",")) if "BYDAY=" in self.recurrence else 1
        # Any 32 days hold 4 of each weekday at least, and 32 daily windows.
        available = hours * (4 * per_week if weekly else 32)
        if available < WINDOW_HOURS_PER_32_DAYS:
            raise problem(
                "end",
                f"{per_week} window(s) a week of {hours:g} hours give {available:g} hours in 32 days, and GKE needs "
                f"{WINDOW_HOURS_PER_32_DAYS}; make the windows longer or add days",
            )
        return self


class ExclusionScope(str, Enum):
    NO_UPGRADES = "NO_UPGRADES"
    NO_MINOR_UPGRADES = "NO_MINOR_UPGRADES"
    NO_MINOR_OR_NODE_UPGRADES = "NO_MINOR_OR_NODE_UPGRADES"


class MaintenanceExclusion(Model):
    """A stretch of time in which GKE does not upgrade the cluster on its own (a release freeze,
    a training campaign). GKE still applies critical security fixes."""

    name: Annotated[str, _text("exclusion's name", spaces=True)] = Field(description="Its name, e.g. year-end-freeze.")
    start: UtcTime = Field(description="When it starts, e.g. 2026-12-20T00:00:00Z.")
    end: UtcTime | None = Field(default=None, description="When it ends; or untilEndOfSupport.")
    until_end_of_support: StrictBool = Field(
        default=False, description="NO_MINOR_* scopes: until the cluster's minor version leaves support, instead of end."
    )
    scope: ExclusionScope = Field(
        default=ExclusionScope.NO_UPGRADES,
        description="NO_UPGRADES (nothing, at most 30 days), NO_MINOR_UPGRADES (patches still come) or "
        "NO_MINOR_OR_NODE_UPGRADES (control-plane patches only).",
    )

    @model_validator(mode="after")
    @rule("maintenance-exclusion-span")
    def _span(self) -> MaintenanceExclusion:
        if (self.end is None) == (not self.until_end_of_support):
            raise problem("end", "give end, or untilEndOfSupport: true (one of them)")
        if self.until_end_of_support and self.scope is ExclusionScope.NO_UPGRADES:
            raise problem(
                "untilEndOfSupport",
                f"a NO_UPGRADES exclusion lasts at most {NO_UPGRADES_MAX_DAYS} days; give end, or use scope NO_MINOR_UPGRADES",
            )
        if self.end is not None:
            days = (_moment(self.end) - _moment(self.start)).total_seconds() / 86400
            if days <= 0:
                raise problem("end", f"end {self.end} is not after start {self.start}")
            if self.scope is ExclusionScope.NO_UPGRADES and days > NO_UPGRADES_MAX_DAYS:
                raise problem(
                    "end",
                    f"{days:g} days: a NO_UPGRADES exclusion lasts at most {NO_UPGRADES_MAX_DAYS} days (GKE); shorten it, "
                    "or use scope NO_MINOR_UPGRADES, which may last until the end of support",
                )
        return self


class Maintenance(Model):
    """When GKE may maintain the cluster on its own. Updated in place."""

    window: MaintenanceWindow | None = Field(default=None, description="The recurring maintenance window; none: any time.")
    exclusions: list[MaintenanceExclusion] = Field(
        default_factory=list, description="Times without automatic upgrades, each name once; at most 20. Need a window."
    )

    @field_validator("exclusions")
    @classmethod
    def _exclusions(cls, exclusions: list[MaintenanceExclusion]) -> list[MaintenanceExclusion]:
        if len(exclusions) > EXCLUSIONS_MAX:
            raise ValueError(f"{len(exclusions)} exclusions; GKE takes at most {EXCLUSIONS_MAX} at a time")
        _unique(exclusions, lambda e: e.name, "; GKE keys exclusions by name")
        return exclusions

    @model_validator(mode="after")
    @rule("maintenance-exclusions-in-a-window")
    def _exclusions_in_a_window(self) -> Maintenance:
        # pulumi-gcp 10.2.0 ClusterMaintenancePolicyArgs: a maintenance policy needs one of its
        # windows; the exclusions travel inside it.
        if self.exclusions and self.window is None:
            raise problem("window", "exclusions go with a maintenance window (the provider needs one); add window")
        return self


# Cloud KMS resource names (cloud.google.com/kms/docs/resource-hierarchy, "Key rings" and
# "Keys"): projects/<project>/locations/<location>/keyRings/<ring>/cryptoKeys/<key>; ring and
# key ids of 1-63 letters, digits, '_' and '-'.
KMS_KEY = re.compile(
    r"^projects/(?P<project>[^/]+)/locations/(?P<location>[a-z0-9-]+)/keyRings/(?P<ring>[A-Za-z0-9_-]{1,63})"
    r"/cryptoKeys/(?P<key>[A-Za-z0-9_-]{1,63})$"
)


class SecretsEncryption(Model):
    """Application-layer secrets encryption (GKE's databaseEncryption): Kubernetes Secrets in
    the control plane's database are encrypted with a Cloud KMS key you manage
    (cloud.google.com/kubernetes-engine/docs/how-to/encrypting-secrets). Updated in place:
    GKE re-encrypts every Secret with the new key."""

    key: str = Field(
        description="The Cloud KMS key: projects/<project>/locations/<cluster region>/keyRings/<ring>/cryptoKeys/<key> "
        "(Google: keep the key in the cluster's location)."
    )
    grant_key_access: StrictBool = Field(
        default=True,
        description="The program grants the stack project's GKE service agent roles/cloudkms.cryptoKeyEncrypterDecrypter "
        "on the key (the deployer needs cloudkms.cryptoKeys.setIamPolicy on it); false: the key's admins grant it first.",
    )

    @field_validator("key")
    @classmethod
    def _key(cls, value: str) -> str:
        if "/cryptoKeyVersions/" in value:
            raise ValueError(f"{value!r} names a key version; give the key ({value.split('/cryptoKeyVersions/')[0]!r}): GKE uses its primary version")
        found = KMS_KEY.match(value)
        if found is not None and GCP_ZONE.match(found["location"]):
            zone = found["location"]
            raise ValueError(
                f"{value!r}: {zone} is a zone, and Cloud KMS has no zonal locations (key rings live in a region, a "
                f"multi-region or global); use a key ring in the cluster's region, "
                f"projects/{found['project']}/locations/{zone_region(zone)}/keyRings/<ring>/cryptoKeys/<key>"
            )
        if found is None or not GCP_PROJECT_ID.match(found["project"]):
            raise ValueError(
                f"{value!r} is not a Cloud KMS key name: projects/<project>/locations/<region>/keyRings/<ring>/cryptoKeys/<key> "
                "(gcloud kms keys list --location <region> --keyring <ring> --format 'value(name)')"
            )
        return value

    @property
    def location(self) -> str:
        found = KMS_KEY.match(self.key)
        assert found is not None  # the validator matched it
        return found["location"]

    @property
    def iam_id(self) -> str:
        """The key as pulumi-gcp's CryptoKeyIAMMember names it: `<project>/<location>/<ring>/<key>`
        (pulumi-gcp 10.2.0 kms.CryptoKeyIAMMemberArgs.crypto_key_id)."""
        found = KMS_KEY.match(self.key)
        assert found is not None
        return "/".join(found.group("project", "location", "ring", "key"))


SECURITY_GROUP_NAME = "gke-security-groups"
"""The one group name Google Groups for RBAC reads (its member groups become RBAC groups)."""


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
    private_nodes: StrictBool = Field(
        default=True,
        description="Nodes without public IPs, egress through Cloud NAT (the created network's, or an existing "
        "network's own).",
    )
    master_authorized_networks: list[AuthorizedNetwork] = Field(
        default_factory=list, description="CIDRs allowed to reach the control plane, each once; empty: any."
    )
    network: NetworkConfig = Field(
        default=NetworkConfig(), description="The cluster's network: one the program creates (default), or an existing one."
    )
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
    maintenance: Maintenance = Field(
        default=Maintenance(), description="Maintenance window and exclusions; default: GKE maintains at any time."
    )
    secrets_encryption: SecretsEncryption | None = Field(
        default=None,
        description="Encrypt Kubernetes Secrets with your Cloud KMS key (application-layer secrets encryption); "
        "default: Google's encryption at rest only.",
    )
    security_group: Email | None = Field(
        default=None,
        description="Google Groups for RBAC: the group gke-security-groups@<your domain>, whose member groups "
        "the API server passes to RBAC, so a group contributor's members use kubectl as the group "
        "(docs/teams.md, \"Groups\"); GKE changes it in place.",
    )

    @field_validator("security_group")
    @classmethod
    def _security_group(cls, value: str | None) -> str | None:
        # cloud.google.com/kubernetes-engine/docs/how-to/google-groups-rbac: the group must be
        # named gke-security-groups in the Workspace or Cloud Identity domain.
        if value is not None and value.split("@", 1)[0] != SECURITY_GROUP_NAME:
            raise ValueError(
                f"{value!r}: GKE reads only the group named {SECURITY_GROUP_NAME}@<your domain> "
                f"(e.g. {SECURITY_GROUP_NAME}@{value.rsplit('@', 1)[-1]}); nest the teams' groups in it"
            )
        return value

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
    @rule("authorized-networks-fit")
    def _authorized_networks_fit(self) -> GkeClusterConfig:
        kind = "private" if self.private_nodes else "public"
        most = AUTHORIZED_NETWORKS_MAX[kind]
        count = len(self.master_authorized_networks)
        if count > most:
            raise problem(
                "masterAuthorizedNetworks",
                f"{count} authorized networks, and a {kind} GKE cluster takes at most {most}; merge ranges into larger ones",
            )
        return self

    @model_validator(mode="after")
    @rule("gpu-pool-names-and-zones")
    def _pools(self) -> GkeClusterConfig:
        found: list[tuple[str, str]] = []
        seen: set[str] = set()
        for i, pool in enumerate(self.gpu_pools):
            if pool.name in seen:
                found.append((f"gpuPools[{i}].name", f"duplicate pool name {pool.name!r}; pool names must be unique"))
            seen.add(pool.name)
            outside = [zone for zone in pool.zones or [] if zone_region(zone) != self.region]
            if outside:
                zone = outside[0]
                found.append(
                    (
                        f"gpuPools[{i}].zones",
                        f"zone {zone!r} is outside the cluster's region {self.region} (it is in "
                        f"{zone_region(zone)}); use zones of {self.region}",
                    )
                )
        if found:
            raise problems(found)
        return self

    @model_validator(mode="after")
    @rule("gpu-pool-fabric-fits-cluster")
    def _fabric_fits_cluster(self) -> GkeClusterConfig:
        """A fabric pool's needs of the cluster (stackmodel/schema/fabric.py cluster_fabric_problems)."""
        found = cluster_fabric_problems(self)
        if found:
            raise problems(found)
        return self

    def effective_version(self) -> tuple[str, str]:
        """The version the cluster is created at, and the key that decides it: minMasterVersion,
        else the release channel's default (facts/support.py)."""
        if self.min_master_version is not None:
            return self.min_master_version, "minMasterVersion"
        return GKE_CHANNEL_DEFAULTS[self.release_channel.value].version, "releaseChannel"

    @property
    def has_fabric(self) -> bool:
        """Whether any GPU pool has GPUDirect networking (the cluster then needs multi-networking)."""
        return any(pool.fabric_kind != gpu_fabric.NONE for pool in self.gpu_pools)

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
