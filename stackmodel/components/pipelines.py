"""The stack file's Kubeflow Pipelines: its database (in-cluster MySQL, or Cloud SQL on GKE)
and where the teams' artifacts live."""

from __future__ import annotations

import re

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
    field_validator,
    model_validator,
)

from facts import cloud_sql, versions
from stackmodel.components.cert_manager import CERT_MANAGER
from stackmodel.components.istio import ISTIO
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.spec import ComponentSpec, Need, Toggle, What
from stackmodel.schema.common import Model, VolumeSize, problem, rule

# --- Kubeflow Pipelines (components/pipelines.py) -----------------------------------------

# Cloud SQL machine tiers (facts/cloud_sql.py): custom `db-custom-<vCPUs>-<memory MiB>` and the
# shared-core `db-f1-micro` / `db-g1-small`.
CLOUD_SQL_TIER = re.compile(r"^db-custom-(?P<vcpus>[0-9]+)-(?P<mib>[0-9]+)$|^db-(f1-micro|g1-small)$")
HOUR_MINUTE = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")


class PipelinesCloudSql(Model):
    """GKE: the pipelines database, Cloud SQL for MySQL on the stack's VPC (private IP only),
    with automated backups and point-in-time recovery; deletion-protected where the stack is."""

    tier: str = Field(
        default="db-custom-1-3840",
        description="Machine tier: db-custom-<vCPUs>-<memory MiB> (1 or an even number of vCPUs up to 96; memory "
        "0.9 to 6.5 GiB per vCPU, at least 3840 MiB, a multiple of 256 MiB) or a shared core (db-f1-micro, "
        "db-g1-small: no SLA).",
    )
    disk_size_gb: StrictInt = Field(default=10, ge=10, le=65536, description="SSD size (GB); grows by itself when full, never shrinks.")
    high_availability: StrictBool = Field(
        default=False, description="A standby in a second zone with automatic failover (REGIONAL); doubles the price."
    )
    backup_start_time: str = Field(default="03:00", description="When the daily backup starts (UTC, HH:MM).")
    retained_backups: StrictInt = Field(
        default=7, ge=1, le=365, description="Daily backups kept; at least logRetentionDays (Cloud SQL)."
    )
    log_retention_days: StrictInt = Field(
        default=7,
        ge=1,
        le=7,
        description="Days of binary logs kept for point-in-time recovery (at most 7, and at most retainedBackups).",
    )
    private_service_access: StrictBool | None = Field(
        default=None,
        description="Create the network's Private Service Access (a /20 for Google's services and the "
        "servicenetworking peering) the private IP needs. Default: on a network the stack creates; an existing one "
        "(cluster.network.existing) usually has one already (`gcloud services vpc-peerings list --network <name>`).",
    )

    @field_validator("tier")
    @classmethod
    def _tier(cls, value: str) -> str:
        found = CLOUD_SQL_TIER.match(value)
        if found is None:
            raise ValueError(f"{value!r} is not a Cloud SQL tier such as db-custom-2-7680 (db-custom-<vCPUs>-<memory MiB>)")
        if found["vcpus"]:
            reason = cloud_sql.custom_tier_problem(int(found["vcpus"]), int(found["mib"]))
            if reason:
                raise ValueError(f"{value!r}: {reason}")
        return value

    @model_validator(mode="after")
    @rule("backups-outlast-logs")
    def _backups_outlast_logs(self) -> PipelinesCloudSql:
        if self.retained_backups < self.log_retention_days:
            raise problem(
                "retainedBackups",
                f"{self.retained_backups} backups for {self.log_retention_days} days of transaction logs: point-in-time "
                "recovery replays the logs from a backup, and Cloud SQL refuses to keep logs older than its oldest "
                f"backup; set retainedBackups to at least {self.log_retention_days} or lower logRetentionDays",
            )
        return self

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


PIPELINES = ComponentSpec(
    "pipelines",
    PipelinesConfig,
    "Kubeflow Pipelines; needs kubeflow, certManager and istio.",
    needs=(
        Need(KUBEFLOW, What.CONTROLLER),  # its objects live in Kubeflow's namespace, beside its profile controller
        Need(CERT_MANAGER, What.CRDS),  # its cache webhook's certificate
        Need(ISTIO, What.CRDS),  # its routes and policies
    ),
    on_by_default=True,
    pins=(versions.KUBEFLOW_PIPELINES,),
)
