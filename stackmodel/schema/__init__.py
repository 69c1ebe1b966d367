"""The one schema of a stack file: what `stacks/Pulumi.<env>.yaml` may say.

Field aliases are the keys a platform team writes (camelCase, and the namespaced
top-level keys `gcp:project`, `mlplatform:cluster`, ...), so every error path reads
exactly like the stack file. Defaults live on the fields; a field whose change
replaces live infrastructure says so in its description ("replaces ...").

Checks that span one model raise `problem(field, message)` so that the path names the
field; checks that span the whole stack (pools vs autoprovisioning, teams vs pools)
are the rules of stackmodel/rules.py and run once every part has its type.

One schema, one module per domain: `common` (the base model, names, quantities, e-mail
addresses), `pools` (and `fabric`, a pool's GPUDirect networking), `network` and `cluster`, `teams`, `components`, `auth` (the sign-in and its groups),
`pipelines`, `sources`
(mirrors and overrides), and here the whole stack file. Every name is importable from `stackmodel.schema` as
before.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, field_validator

from stackmodel.schema.auth import (
    DEX_DEFAULT_SCOPES,
    DISCOVERY_PATH,
    GOOGLE_ISSUER,
    AuthKind,
    EmailDomain,
    GroupDefinition,
    GroupSource,
    KubeflowAuth,
    OidcConnector,
    OidcGroups,
    _email_domain,
)
from stackmodel.schema.cluster import (
    EXCLUSIONS_MAX,
    KMS_KEY,
    NO_UPGRADES_MAX_DAYS,
    RECURRENCE,
    UTC_TIME,
    WEEKDAYS,
    WINDOW_HOURS_PER_32_DAYS,
    WINDOW_MIN_HOURS,
    ClusterConfig,
    Environment,
    ExclusionScope,
    GkeClusterConfig,
    KindClusterConfig,
    Maintenance,
    MaintenanceExclusion,
    MaintenanceWindow,
    ReleaseChannel,
    SecretsEncryption,
    UtcTime,
    _moment,
    _utc_text,
    _utc_time,
)
from stackmodel.schema.common import (
    _KUBERNETES,
    _PLATFORM,
    BUCKET_DUAL_REGIONS,
    BUCKET_MULTI_REGIONS,
    COMPUTE_NAME,
    DNS_LABEL,
    DNS_SUBDOMAIN,
    DNS_SUBDOMAIN_MAX,
    DURATION,
    EMAIL_DOMAIN,
    EMAIL_LOCAL,
    EMAIL_LOCAL_MAX,
    EMAIL_MAX,
    GCP_PROJECT_ID,
    GCP_REGION,
    GCP_ZONE,
    GKE_VERSION,
    HOSTNAME,
    IAM_MEMBER,
    MACHINE_TYPE,
    MIN_MEMORY_BYTES,
    MIN_VOLUME_BYTES,
    MIRROR_PATH,
    REGIONAL_ZONES,
    REGISTRY_MULTI_REGIONS,
    REGISTRY_PATH,
    REMOTE_SCHEME,
    REPOSITORY_ID,
    RESERVATION_NAME,
    RESERVED_NAMESPACE_PREFIXES,
    RESERVED_NAMESPACES,
    RESERVED_POOL_NAMES,
    RETENTION,
    RETENTION_SECONDS,
    Cidr,
    Email,
    GroupName,
    Int64,
    MemoryQuantity,
    Model,
    ResourceQuantity,
    ShortName,
    ValueKind,
    VolumeSize,
    _cidr_text,
    _dns_label,
    _email,
    _hostname,
    _is_domain,
    _machine_type_name,
    _memory_quantity,
    _resource_quantity,
    _text,
    _unique,
    _volume_size,
    problem,
    problems,
    zone_region,
)
from stackmodel.schema.component import COMPONENTS as COMPONENTS_KEY
from stackmodel.schema.component import ComponentSpec, Need, Ready, Toggle, What, install_order
from stackmodel.schema.components import (
    CERT_MANAGER,
    CHART_VALUES_KIND,
    CHART_VALUES_RULE,
    DCGM_EXPORTER,
    ISTIO,
    JOBSET,
    KUBEFLOW,
    KUBEFLOW_HTTPS_GATEWAY,
    KUBEFLOW_NAMESPACES,
    KUBEFLOW_POD_DEFAULTS,
    KUBERAY,
    KUEUE,
    MONITORING,
    SECRET_REFERENCE_KEY,
    SECRET_VALUE_KEY,
    TRAINER,
    CertManagerConfig,
    ChartValues,
    DcgmExporterConfig,
    DcgmSource,
    IstioConfig,
    JobSetConfig,
    KubeflowConfig,
    KubeRayConfig,
    KueueConfig,
    MetricsBackend,
    MonitoringConfig,
    RaySource,
    TrainerConfig,
    WaitForPodsReady,
    _chart_values,
    chart_values_field,
    gpu_stack,
)
from stackmodel.schema.dra import NVIDIA_DRA_DRIVER, NvidiaDraDriverConfig
from stackmodel.schema.fabric import FabricConfig, FabricNetwork, FabricNic
from stackmodel.schema.gpu_fabric import GPU_FABRIC, GpuFabricConfig
from stackmodel.schema.idle_reclaim import IDLE_RECLAIM, IdleReclaimConfig
from stackmodel.schema.network import (
    COMPUTE_RESOURCE_NAME,
    CREATED_RANGES,
    AuthorizedNetwork,
    ExistingNetwork,
    ImageRegistryConfig,
    NetworkConfig,
    _compute_name,
)
from stackmodel.schema.pipelines import (
    CLOUD_SQL_TIER,
    HOUR_MINUTE,
    PIPELINES,
    PipelinesCloudSql,
    PipelinesConfig,
)
from stackmodel.schema.pools import (
    LABEL_NAME,
    LABEL_VALUE_MAX,
    Autoprovisioning,
    DriverVersion,
    GpuAllocation,
    GpuPool,
    GpuSharing,
    NodeLabels,
    PoolTaint,
    Provisioning,
    SharingStrategy,
    SystemPool,
    TaintEffect,
    _label_key_problem,
    _label_value_problem,
    _node_labels,
)
from stackmodel.schema.registry import COMPONENTS, SPECS, Components, settings_model
from stackmodel.schema.sources import (
    Images,
    Overrides,
    Sources,
    _mirror_location,
)
from stackmodel.schema.teams import (
    PERSON_ROLES,
    ContainerDefaults,
    Contributor,
    Role,
    Team,
    TeamBucket,
    TeamQuota,
    TeamRay,
)


def _gcp_region(value: str | None) -> str | None:
    if value is not None and not GCP_REGION.match(value):
        hint = f"; {value!r} is a zone, its region is {zone_region(value)}" if GCP_ZONE.match(value) else ""
        raise ValueError(f"{value!r} is not a GCP region such as us-central1{hint}")
    return value


def _gcp_zone(value: str | None) -> str | None:
    if value is not None and not GCP_ZONE.match(value):
        raise ValueError(f"{value!r} is not a GCP zone such as us-central1-a")
    return value


class PlatformConfig(Model):
    """Everything a stack file may say, keyed as it is written."""

    project: str | None = Field(default=None, alias="gcp:project", description="GCP project; required for gke.")
    region: Annotated[str, AfterValidator(_gcp_region)] | None = Field(
        default=None,
        alias="gcp:region",
        description="The Google provider's default region; if set, the cluster's region (the program places "
        "everything there).",
    )
    zone: Annotated[str, AfterValidator(_gcp_zone)] | None = Field(
        default=None, alias="gcp:zone", description="The Google provider's default zone; if set, one of the cluster's region."
    )
    environment: Environment = Field(
        default=Environment.DEV,
        alias="mlplatform:environment",
        description="prod turns deletion protection on and the prod policy rules.",
    )
    cluster: ClusterConfig = Field(alias="mlplatform:cluster", description="The cluster; `kind` picks the model.")
    components: Components = Field(
        default_factory=dict,
        validate_default=True,
        alias="mlplatform:components",
        description="In-cluster components.",
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
    overrides: Overrides = Field(
        default=Overrides(),
        alias="mlplatform:overrides",
        description="Values the catalogs do not list yet, accepted knowingly (the error that refuses one names this key).",
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

    def enabled(self, spec: ComponentSpec[Any]) -> bool:
        """Whether this stack installs `spec`'s component: its `enabled`, else its default (which
        may depend on the rest of the stack)."""
        settings = self.components[spec]
        enabled = getattr(settings, "enabled", None)
        if enabled is not None:
            return bool(enabled)
        default = spec.on_by_default
        return default if isinstance(default, bool) else default(self)

    def enabled_components(self) -> dict[str, bool]:
        """Which components this stack installs, by key, in the list's order."""
        return {spec.name: self.enabled(spec) for spec in self.components.specs}

    @property
    def deletion_protection(self) -> bool:
        cluster = self.cluster
        if isinstance(cluster, GkeClusterConfig) and cluster.deletion_protection is not None:
            return cluster.deletion_protection
        return self.environment is Environment.PROD


__all__ = [
    "BUCKET_DUAL_REGIONS",
    "BUCKET_MULTI_REGIONS",
    "CERT_MANAGER",
    "CHART_VALUES_KIND",
    "CHART_VALUES_RULE",
    "CLOUD_SQL_TIER",
    "COMPONENTS",
    "COMPONENTS_KEY",
    "COMPUTE_NAME",
    "COMPUTE_RESOURCE_NAME",
    "CREATED_RANGES",
    "DCGM_EXPORTER",
    "DEX_DEFAULT_SCOPES",
    "DISCOVERY_PATH",
    "DNS_LABEL",
    "DNS_SUBDOMAIN",
    "DNS_SUBDOMAIN_MAX",
    "DURATION",
    "EMAIL_DOMAIN",
    "EMAIL_LOCAL",
    "EMAIL_LOCAL_MAX",
    "EMAIL_MAX",
    "EXCLUSIONS_MAX",
    "GCP_PROJECT_ID",
    "GCP_REGION",
    "GCP_ZONE",
    "GKE_VERSION",
    "GOOGLE_ISSUER",
    "GPU_FABRIC",
    "HOSTNAME",
    "HOUR_MINUTE",
    "IAM_MEMBER",
    "IDLE_RECLAIM",
    "ISTIO",
    "JOBSET",
    "KMS_KEY",
    "KUBEFLOW",
    "KUBEFLOW_HTTPS_GATEWAY",
    "KUBEFLOW_NAMESPACES",
    "KUBEFLOW_POD_DEFAULTS",
    "KUBERAY",
    "KUEUE",
    "LABEL_NAME",
    "LABEL_VALUE_MAX",
    "MACHINE_TYPE",
    "MIN_MEMORY_BYTES",
    "MIN_VOLUME_BYTES",
    "MIRROR_PATH",
    "MONITORING",
    "NO_UPGRADES_MAX_DAYS",
    "NVIDIA_DRA_DRIVER",
    "PERSON_ROLES",
    "PIPELINES",
    "RECURRENCE",
    "REGIONAL_ZONES",
    "REGISTRY_MULTI_REGIONS",
    "REGISTRY_PATH",
    "REMOTE_SCHEME",
    "REPOSITORY_ID",
    "RESERVATION_NAME",
    "RESERVED_NAMESPACES",
    "RESERVED_NAMESPACE_PREFIXES",
    "RESERVED_POOL_NAMES",
    "RETENTION",
    "RETENTION_SECONDS",
    "SECRET_REFERENCE_KEY",
    "SECRET_VALUE_KEY",
    "SPECS",
    "TRAINER",
    "UTC_TIME",
    "WEEKDAYS",
    "WINDOW_HOURS_PER_32_DAYS",
    "WINDOW_MIN_HOURS",
    "_KUBERNETES",
    "_PLATFORM",
    "AuthKind",
    "AuthorizedNetwork",
    "Autoprovisioning",
    "CertManagerConfig",
    "ChartValues",
    "Cidr",
    "ClusterConfig",
    "ComponentSpec",
    "Components",
    "ContainerDefaults",
    "Contributor",
    "DcgmExporterConfig",
    "DcgmSource",
    "DriverVersion",
    "Email",
    "EmailDomain",
    "Environment",
    "ExclusionScope",
    "ExistingNetwork",
    "FabricConfig",
    "FabricNetwork",
    "FabricNic",
    "GkeClusterConfig",
    "GpuAllocation",
    "GpuFabricConfig",
    "GpuPool",
    "GpuSharing",
    "GroupDefinition",
    "GroupName",
    "GroupSource",
    "IdleReclaimConfig",
    "ImageRegistryConfig",
    "Images",
    "Int64",
    "IstioConfig",
    "JobSetConfig",
    "KindClusterConfig",
    "KubeRayConfig",
    "KubeflowAuth",
    "KubeflowConfig",
    "KueueConfig",
    "Maintenance",
    "MaintenanceExclusion",
    "MaintenanceWindow",
    "MemoryQuantity",
    "MetricsBackend",
    "Model",
    "MonitoringConfig",
    "Need",
    "NetworkConfig",
    "NodeLabels",
    "NvidiaDraDriverConfig",
    "OidcConnector",
    "OidcGroups",
    "Overrides",
    "PipelinesCloudSql",
    "PipelinesConfig",
    "PlatformConfig",
    "PoolTaint",
    "Provisioning",
    "RaySource",
    "Ready",
    "ReleaseChannel",
    "ResourceQuantity",
    "Role",
    "SecretsEncryption",
    "SharingStrategy",
    "ShortName",
    "Sources",
    "SystemPool",
    "TaintEffect",
    "Team",
    "TeamBucket",
    "TeamQuota",
    "TeamRay",
    "Toggle",
    "TrainerConfig",
    "UtcTime",
    "ValueKind",
    "VolumeSize",
    "WaitForPodsReady",
    "What",
    "_chart_values",
    "_cidr_text",
    "_compute_name",
    "_dns_label",
    "_email",
    "_email_domain",
    "_gcp_region",
    "_gcp_zone",
    "_hostname",
    "_is_domain",
    "_label_key_problem",
    "_label_value_problem",
    "_machine_type_name",
    "_memory_quantity",
    "_mirror_location",
    "_moment",
    "_node_labels",
    "_resource_quantity",
    "_text",
    "_unique",
    "_utc_text",
    "_utc_time",
    "_volume_size",
    "chart_values_field",
    "gpu_stack",
    "install_order",
    "problem",
    "problems",
    "settings_model",
    "zone_region",
]
