"""The pipelines database on GKE: Cloud SQL for MySQL in the cluster's VPC, reached over a
private IP through Private Service Access, with daily backups and binary logs (point-in-time
recovery), deletion-protected where the stack is.

Why private IP and not the Cloud SQL Auth Proxy v2: KFP's three database clients (the API
server and cache server, Go's MySQL driver; ML Metadata's C++ client) take a host and port from
`pipeline-install-config` and connect directly, so the private IP needs nothing in the data path.
The proxy would add a Deployment (an image to mirror, a single point of failure unless it runs as
a sidecar of three upstream Deployments we do not own) and a Workload Identity account with
`roles/cloudsql.client`. What the proxy brings, TLS and IAM database authentication, the private
IP lacks: the traffic stays inside the VPC peering (no public IP, `ipv4Enabled: false`), and the
database user is a password user whose password is a Pulumi secret (components/pipelines.py).
Sources: cloud.google.com/sql/docs/mysql/private-ip, .../configure-private-services-access,
.../connect-auth-proxy; pulumi-gcp 10.2.0 sql.DatabaseInstance, servicenetworking.Connection.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from facts.versions import CLOUD_SQL_MYSQL
from infra.component import Component
from infra.network import ClusterNetwork
from stackmodel.components.pipelines import PipelinesCloudSql

PSA_PREFIX_LENGTH = 20
"""The range reserved for Google's producer network (Private Service Access): a /20, the size
the Cloud SQL docs use; Google picks a free one in the VPC (no `address` given)."""
SERVICE_NETWORKING = "servicenetworking.googleapis.com"
CHARSET = "utf8mb4"


@dataclass(frozen=True)
class CloudSqlArgs:
    """GKE: the pipelines database on Cloud SQL for MySQL, in the cluster's VPC."""

    project: str | None
    region: str
    instance: str
    """The instance's name (`<cluster>-pipelines`); a name is not reusable for a week after deletion."""
    settings: PipelinesCloudSql
    deletion_protection: bool
    private_service_access: bool
    """Create the network's Private Service Access (PipelinesCloudSql.private_service_access resolved)."""
    database_version: str = CLOUD_SQL_MYSQL.version
    """The MySQL line (facts/versions.py: Pipelines' CLOUD_SQL_MYSQL, the Model Registry's CLOUD_SQL_MYSQL_84)."""


def private_service_access(name: str, range_name: str, network: ClusterNetwork, opts: pulumi.ResourceOptions) -> pulumi.Resource:
    """The network's Private Service Access: a range for Google's producer network and the one
    servicenetworking connection a VPC has (made once: by the first database that needs it)."""
    peering_range = gcp.compute.GlobalAddress(
        f"{name}-psa",
        gcp.compute.GlobalAddressArgs(
            project=network.project,
            name=f"{range_name}-psa",
            purpose="VPC_PEERING",
            address_type="INTERNAL",
            prefix_length=PSA_PREFIX_LENGTH,
            network=network.network,
        ),
        opts=opts,
    )
    return gcp.servicenetworking.Connection(
        f"{name}-psa",
        gcp.servicenetworking.ConnectionArgs(network=network.network, service=SERVICE_NETWORKING, reserved_peering_ranges=[peering_range.name]),
        opts=opts,
    )


def instance_args(args: CloudSqlArgs, network: pulumi.Input[str]) -> gcp.sql.DatabaseInstanceArgs:
    settings = args.settings
    return gcp.sql.DatabaseInstanceArgs(
        project=args.project,
        name=args.instance,
        region=args.region,
        database_version=args.database_version,
        # Pulumi refuses to delete it; the API too (settings.deletion_protection_enabled).
        deletion_protection=args.deletion_protection,
        settings=gcp.sql.DatabaseInstanceSettingsArgs(
            tier=settings.tier,
            edition="ENTERPRISE",
            availability_type="REGIONAL" if settings.high_availability else "ZONAL",
            disk_type="PD_SSD",
            disk_size=settings.disk_size_gb,
            disk_autoresize=True,
            deletion_protection_enabled=args.deletion_protection,
            ip_configuration=gcp.sql.DatabaseInstanceSettingsIpConfigurationArgs(ipv4_enabled=False, private_network=network),
            backup_configuration=gcp.sql.DatabaseInstanceSettingsBackupConfigurationArgs(
                enabled=True,
                binary_log_enabled=True,
                start_time=settings.backup_start_time,
                transaction_log_retention_days=settings.log_retention_days,
                backup_retention_settings=gcp.sql.DatabaseInstanceSettingsBackupConfigurationBackupRetentionSettingsArgs(
                    retained_backups=settings.retained_backups, retention_unit="COUNT"
                ),
            ),
            # A deleted instance keeps its backups (until their retention ends) where it is protected.
            retain_backups_on_delete=args.deletion_protection,
        ),
    )


class CloudSqlDatabase(Component):
    """One Cloud SQL for MySQL instance with its databases and one password user."""

    private_ip: pulumi.Output[str]
    """Where the cluster reaches it (inside the VPC)."""
    instance_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: CloudSqlArgs,
        network: ClusterNetwork,
        user: str,
        password: pulumi.Output[str],
        databases: Sequence[str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`network`: the cluster's (a Shared VPC host project's, maybe); its Private Service Access
        is made here when `args.private_service_access`, in the network's project, else it exists."""
        super().__init__(name, opts)
        child = pulumi.ResourceOptions(parent=self)
        peering: list[pulumi.Resource] = []
        if args.private_service_access:
            peering.append(private_service_access(name, args.instance, network, child))
        instance = gcp.sql.DatabaseInstance(
            name,
            instance_args(args, network.network),
            opts=pulumi.ResourceOptions(parent=self, depends_on=peering, protect=args.deletion_protection),
        )
        for database in databases:
            gcp.sql.Database(
                f"{name}-{database}",
                gcp.sql.DatabaseArgs(
                    project=args.project,
                    instance=instance.name,
                    name=database,
                    charset=CHARSET,
                    # The data stays with the instance when the resource goes (its backups are the instance's).
                    deletion_policy="ABANDON",
                ),
                opts=child,
            )
        gcp.sql.User(
            f"{name}-{user}",
            gcp.sql.UserArgs(project=args.project, instance=instance.name, name=user, host="%", password=password),
            opts=child,
        )
        self.private_ip = instance.private_ip_address
        self.instance_name = instance.name
        self.register_outputs({"privateIp": self.private_ip, "instanceName": self.instance_name})
