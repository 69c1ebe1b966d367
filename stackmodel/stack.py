"""The whole stack file: PlatformConfig, made of the schema's parts (stackmodel/schema/) and the
components of the list (stackmodel/registry.py), keyed as a stack file writes them."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, field_validator

from stackmodel.components.spec import ComponentSpec
from stackmodel.registry import Components
from stackmodel.schema import (
    GCP_PROJECT_ID,
    GCP_REGION,
    GCP_ZONE,
    ClusterConfig,
    Environment,
    GkeClusterConfig,
    GpuPool,
    Images,
    Model,
    Overrides,
    Sources,
    Team,
    zone_region,
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

    @property
    def gpu_pools(self) -> tuple[GpuPool, ...]:
        """The stack's GPU pools; a kind cluster has none."""
        return tuple(self.cluster.gpu_pools) if isinstance(self.cluster, GkeClusterConfig) else ()

    def enabled_components(self) -> dict[str, bool]:
        """Which components this stack installs, by key, in the list's order."""
        return {spec.name: self.enabled(spec) for spec in self.components.specs}

    @property
    def deletion_protection(self) -> bool:
        cluster = self.cluster
        if isinstance(cluster, GkeClusterConfig) and cluster.deletion_protection is not None:
            return cluster.deletion_protection
        return self.environment is Environment.PROD
