"""GKE: network (created, or an existing one, maybe a Shared VPC host project's), cluster
with node auto-provisioning, maintenance policy and secrets encryption, system pool and GPU pools.

The ComponentResources stay thin; the `*_args` functions turn their Args (infra/args.py) into
pulumi-gcp `*Args` and are unit-tested on their own.

Long by design: one cloud's cluster, whose parts (network, pools, NAP, IAM) are read together;
each `*_args` function is short and tested on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi
import pulumi_gcp as gcp

from facts.gpu_catalog import ACCELERATORS, boot_disk_type
from facts.naming import node_service_account_id
from facts.node_labels import pool_node_labels, pool_taints
from infra.args import FabricPoolArgs, GkeClusterArgs, MirrorRepositoryArgs, NetworkArgs
from infra.component import Component
from infra.fabric import GpuFabric
from infra.network import ClusterNetwork
from infra.registry import READER as ARTIFACT_REGISTRY_READER
from stackmodel.schema import (
    GkeClusterConfig,
    GpuPool,
    GpuSharing,
    Maintenance,
    Provisioning,
    SecretsEncryption,
    SharingStrategy,
)

# Least privilege for node VMs: GKE's documented minimum ("Use least privilege IAM
# service accounts", cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster)
# plus reading images from Artifact Registry.
NODE_SA_ROLES = (
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/monitoring.viewer",
    "roles/stackdriver.resourceMetadata.writer",
    "roles/autoscaling.metricsWriter",
    "roles/artifactregistry.reader",
)
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
# GCP label on the cluster naming the stack's environment, so the policy pack (policy/)
# can tell prod from the resources alone. Updated in place, never a replacement.
ENVIRONMENT_LABEL = "mlplatform-environment"
# Pod ports the control plane calls on private clusters (it reaches pods directly, at the
# Service's target port): admission and CRD conversion webhooks on 9443 (Trainer, JobSet,
# Kueue, KubeRay, the PVC viewer), 8443 (Pipelines' cache-server webhook), 15017 (istiod's
# injector), 4443 (Kubeflow's PodDefaults webhook: applications/dashboard/upstream/
# poddefaults-webhooks/base/deployment.yaml containerPort 4443), and Kueue's aggregated
# visibility API on 8082 (kueue chart 0.19.2 templates/visibility/service.yaml targetPort
# 8082, the manager's containerPort), KEDA's external metrics API on 6443 (keda chart 2.20.2
# keda-operator-metrics-apiserver Service targetPort 6443, `--secure-port=6443`; its admission
# webhook and KServe's listen on 9443). GKE opens 443 and 10250 itself (cert-manager's webhook
# listens on 10250). `python -m mlplatform check` (rule control-plane-reach) proves the list
# against every webhook, conversion webhook and APIService of the render.
CONTROL_PLANE_TARGET_PORTS = ("4443", "6443", "8082", "8443", "9443", "15017")
PODS_RANGE = "pods"
SERVICES_RANGE = "services"
"""The secondary ranges' names in a subnet the program creates."""
# Shared VPC (cloud.google.com/kubernetes-engine/docs/how-to/cluster-shared-vpc, "Enabling
# and granting roles"; GoogleCloudPlatform/cloud-foundation-fabric modules/project/
# sharedvpc-agent-iam.yaml cites the same): the service project's GKE service agent and its
# Google APIs service agent use the host project's subnet (roles/compute.networkUser on it),
# and the GKE service agent acts in the host project (roles/container.hostServiceAgentUser).
NETWORK_USER = "roles/compute.networkUser"
HOST_SERVICE_AGENT_USER = "roles/container.hostServiceAgentUser"
# Application-layer secrets encryption: the GKE service agent encrypts and decrypts with the
# key (cloud.google.com/kubernetes-engine/docs/how-to/encrypting-secrets, "Grant permission to use the key").
KEY_ENCRYPTER_DECRYPTER = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
# Node fields GKE fills in after creation; left alone they would plan a pool
# replacement on every `pulumi up` (kubelet defaults, provisioning-model resource labels).
SERVER_NORMALISED_POOL_FIELDS = ["initialNodeCount", "nodeConfig.kubeletConfig", "nodeConfig.resourceLabels"]


def mirror_reader_args(mirror: MirrorRepositoryArgs, member: pulumi.Input[str]) -> gcp.artifactregistry.RepositoryIamMemberArgs:
    """The nodes' read access to the image mirror's repository (cloud.google.com/artifact-
    registry/docs/access-control: roles/artifactregistry.reader on the repository)."""
    return gcp.artifactregistry.RepositoryIamMemberArgs(
        project=mirror.project,
        location=mirror.location,
        repository=mirror.repository_id,
        role=ARTIFACT_REGISTRY_READER,
        member=member,
    )


def node_tag(cluster: GkeClusterConfig) -> str:
    """Network tag on every node of the cluster, targeted by the webhook firewall rule."""
    return f"{cluster.name}-node"


def network_name(project: str | None, name: str) -> str:
    """A network's relative resource name (what `gcp.compute.Network.id` is too)."""
    return f"projects/{project}/global/networks/{name}"


def subnetwork_name(project: str | None, region: str, name: str) -> str:
    """A subnetwork's relative resource name (what `gcp.compute.Subnetwork.id` is too)."""
    return f"projects/{project}/regions/{region}/subnetworks/{name}"


def gke_service_agent(project_number: str) -> str:
    """The project's GKE service agent, as an IAM member (cloud.google.com/iam/docs/service-agents:
    `service-PROJECT_NUMBER@container-engine-robot.iam.gserviceaccount.com`)."""
    return f"serviceAccount:service-{project_number}@container-engine-robot.iam.gserviceaccount.com"


def google_apis_service_agent(project_number: str) -> str:
    """The project's Google APIs service agent, which creates the nodes' VMs (managed instance
    groups): `PROJECT_NUMBER@cloudservices.gserviceaccount.com` (same page)."""
    return f"serviceAccount:{project_number}@cloudservices.gserviceaccount.com"


def project_number(project: str | None, opts: pulumi.InvokeOutputOptions | None = None) -> pulumi.Output[str]:
    """The stack project's number, which names its service agents (a read: resourcemanager.projects.get)."""
    return gcp.organizations.get_project_output(project_id=project, opts=opts).number.apply(lambda n: str(n))


# --- pure functions: our Args -> pulumi-gcp Args --------------------------------------


def subnetwork_args(args: NetworkArgs, network: pulumi.Input[str]) -> gcp.compute.SubnetworkArgs:
    net = args.ranges
    return gcp.compute.SubnetworkArgs(
        network=network,
        region=args.region,
        ip_cidr_range=str(net.subnet_cidr),
        private_ip_google_access=True,
        secondary_ip_ranges=[
            gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=PODS_RANGE, ip_cidr_range=str(net.pods_cidr)),
            gcp.compute.SubnetworkSecondaryIpRangeArgs(
                range_name=SERVICES_RANGE, ip_cidr_range=str(net.services_cidr)
            ),
        ],
    )


def secondary_ranges(args: NetworkArgs) -> tuple[str, str]:
    """The subnet's secondary ranges for pods and Services, by name."""
    existing = args.existing
    return (existing.pods_range, existing.services_range) if existing else (PODS_RANGE, SERVICES_RANGE)


def maintenance_policy_args(maintenance: Maintenance) -> gcp.container.ClusterMaintenancePolicyArgs | None:
    """The recurring window and its exclusions; None without a window (GKE maintains at any
    time; the schema takes exclusions only with a window)."""
    window = maintenance.window
    if window is None:
        return None
    return gcp.container.ClusterMaintenancePolicyArgs(
        recurring_window=gcp.container.ClusterMaintenancePolicyRecurringWindowArgs(
            start_time=window.start, end_time=window.end, recurrence=window.recurrence
        ),
        maintenance_exclusions=[
            gcp.container.ClusterMaintenancePolicyMaintenanceExclusionArgs(
                exclusion_name=e.name,
                start_time=e.start,
                end_time=e.end,
                exclusion_options=gcp.container.ClusterMaintenancePolicyMaintenanceExclusionExclusionOptionsArgs(
                    scope=e.scope.value, end_time_behavior="UNTIL_END_OF_SUPPORT" if e.until_end_of_support else None
                ),
            )
            for e in maintenance.exclusions
        ]
        or None,
    )


def database_encryption_args(encryption: SecretsEncryption | None) -> gcp.container.ClusterDatabaseEncryptionArgs | None:
    """Secrets encrypted with the stack's key; None leaves GKE's default (Google's encryption at rest)."""
    if encryption is None:
        return None
    return gcp.container.ClusterDatabaseEncryptionArgs(state="ENCRYPTED", key_name=encryption.key)


def cluster_args(
    args: GkeClusterArgs,
    network: pulumi.Input[str],
    subnetwork: pulumi.Input[str],
    node_service_account: pulumi.Input[str],
) -> gcp.container.ClusterArgs:
    cluster = args.cluster
    nap = cluster.autoprovisioning
    limits = [
        gcp.container.ClusterClusterAutoscalingResourceLimitArgs(resource_type=name, maximum=value, minimum=0)
        for name, value in sorted(nap.limits.items())
    ]
    monitoring_components = (
        ["SYSTEM_COMPONENTS"] + (["JOBSET"] if cluster.managed_prometheus else []) + (["DCGM"] if args.managed_dcgm else [])
    )
    pods_range, services_range = secondary_ranges(args.network)
    return gcp.container.ClusterArgs(
        name=cluster.name,
        project=args.project,
        location=cluster.location,
        network=network,
        subnetwork=subnetwork,
        networking_mode="VPC_NATIVE",
        ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(
            cluster_secondary_range_name=pods_range,
            services_secondary_range_name=services_range,
        ),
        # The default pool cannot be configured like ours; GKE needs one node to start.
        remove_default_node_pool=True,
        initial_node_count=1,
        release_channel=gcp.container.ClusterReleaseChannelArgs(channel=cluster.release_channel.value),
        # The stack's pinned minimum (None: the channel's default); facts/support.py and `check` judge it.
        min_master_version=cluster.min_master_version,
        workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
            workload_pool=f"{args.project}.svc.id.goog"
        ),
        # Google Groups for RBAC: the API server hands RBAC the Google groups nested in this one,
        # so a team's Group RoleBinding (components/profiles/groups.py) lets its members use
        # kubectl, following the group live (cloud.google.com/kubernetes-engine/docs/how-to/
        # google-groups-rbac; pulumi-gcp ClusterAuthenticatorGroupsConfig security_group).
        authenticator_groups_config=(
            gcp.container.ClusterAuthenticatorGroupsConfigArgs(security_group=cluster.security_group)
            if cluster.security_group
            else None
        ),
        datapath_provider="ADVANCED_DATAPATH",  # Dataplane V2: NetworkPolicy enforcement built in; multi-networking needs it
        # GPUDirect pools' extra NICs: multi-network support for Pods (GKE "Set up multi-network
        # support for Pods": needs Dataplane V2, above); left unset without a fabric pool.
        enable_multi_networking=True if cluster.has_fabric else None,
        enable_shielded_nodes=True,
        private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(
            enable_private_nodes=cluster.private_nodes,
            enable_private_endpoint=False,
            master_ipv4_cidr_block=str(cluster.network.master_cidr) if cluster.private_nodes else None,
        ),
        master_authorized_networks_config=(
            gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
                cidr_blocks=[
                    gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(
                        cidr_block=str(n.cidr), display_name=n.name
                    )
                    for n in cluster.master_authorized_networks
                ]
            )
            if cluster.master_authorized_networks
            else None
        ),
        addons_config=gcp.container.ClusterAddonsConfigArgs(
            gcs_fuse_csi_driver_config=gcp.container.ClusterAddonsConfigGcsFuseCsiDriverConfigArgs(
                enabled=cluster.gcs_fuse
            ),
            ray_operator_configs=(
                [gcp.container.ClusterAddonsConfigRayOperatorConfigArgs(enabled=True)] if args.ray_operator else None
            ),
        ),
        gateway_api_config=(
            gcp.container.ClusterGatewayApiConfigArgs(channel="CHANNEL_STANDARD") if cluster.gateway_api else None
        ),
        monitoring_config=gcp.container.ClusterMonitoringConfigArgs(
            enable_components=monitoring_components,
            managed_prometheus=gcp.container.ClusterMonitoringConfigManagedPrometheusArgs(
                enabled=cluster.managed_prometheus
            ),
        ),
        node_pool_defaults=gcp.container.ClusterNodePoolDefaultsArgs(
            node_config_defaults=gcp.container.ClusterNodePoolDefaultsNodeConfigDefaultsArgs(
                gcfs_config=gcp.container.ClusterNodePoolDefaultsNodeConfigDefaultsGcfsConfigArgs(
                    enabled=cluster.image_streaming
                )
            )
        ),
        # Tags for pools NAP creates, so the webhook firewall rule covers them too.
        node_pool_auto_config=gcp.container.ClusterNodePoolAutoConfigArgs(
            network_tags=gcp.container.ClusterNodePoolAutoConfigNetworkTagsArgs(tags=[node_tag(cluster)])
        ),
        cluster_autoscaling=gcp.container.ClusterClusterAutoscalingArgs(
            enabled=nap.enabled,
            resource_limits=limits if nap.enabled else None,
            autoscaling_profile="OPTIMIZE_UTILIZATION",
            auto_provisioning_defaults=(
                gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsArgs(
                    service_account=node_service_account,
                    oauth_scopes=[CLOUD_PLATFORM_SCOPE],
                    shielded_instance_config=gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsShieldedInstanceConfigArgs(
                        enable_secure_boot=True, enable_integrity_monitoring=True
                    ),
                    management=gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsManagementArgs(
                        auto_repair=True, auto_upgrade=True
                    ),
                    upgrade_settings=gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsUpgradeSettingsArgs(
                        strategy="SURGE", max_surge=1, max_unavailable=0
                    ),
                )
                if nap.enabled
                else None
            ),
        ),
        maintenance_policy=maintenance_policy_args(cluster.maintenance),
        database_encryption=database_encryption_args(cluster.secrets_encryption),
        deletion_protection=args.deletion_protection,
        resource_labels={ENVIRONMENT_LABEL: args.environment.value},
    )


def _node_config(
    cluster: GkeClusterConfig,
    machine_type: str,
    disk_size_gb: int,
    service_account: pulumi.Input[str],
    *,
    guest_accelerators: Sequence[gcp.container.NodePoolNodeConfigGuestAcceleratorArgs] | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[gcp.container.NodePoolNodeConfigTaintArgs] | None = None,
    spot: bool | None = None,
    flex_start: bool | None = None,
    reservation_affinity: gcp.container.NodePoolNodeConfigReservationAffinityArgs | None = None,
    gvnic: gcp.container.NodePoolNodeConfigGvnicArgs | None = None,
    fast_socket: gcp.container.NodePoolNodeConfigFastSocketArgs | None = None,
    image_type: str | None = None,
) -> gcp.container.NodePoolNodeConfigArgs:
    """A pool's node config; the keyword fields are a GPU pool's (None: left unset). The boot
    disk type is the catalog's for machine types that take no Persistent Disk (A3 Ultra, A4:
    facts/gpu_catalog.py `BOOT_DISK_TYPES`), else GKE's default; changing it replaces the pool."""
    return gcp.container.NodePoolNodeConfigArgs(
        machine_type=machine_type,
        disk_size_gb=disk_size_gb,
        disk_type=boot_disk_type(machine_type),
        service_account=service_account,
        oauth_scopes=[CLOUD_PLATFORM_SCOPE],
        tags=[node_tag(cluster)],
        shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
            enable_secure_boot=True, enable_integrity_monitoring=True
        ),
        workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
        guest_accelerators=guest_accelerators,
        labels=labels,
        taints=taints,
        spot=spot,
        flex_start=flex_start,
        reservation_affinity=reservation_affinity,
        gvnic=gvnic,
        fast_socket=fast_socket,
        image_type=image_type,
    )


def system_pool_args(
    cluster: GkeClusterConfig, cluster_name: pulumi.Input[str], service_account: pulumi.Input[str]
) -> gcp.container.NodePoolArgs:
    pool = cluster.system_pool
    return gcp.container.NodePoolArgs(
        name="system",
        cluster=cluster_name,
        location=cluster.location,
        initial_node_count=pool.min,
        autoscaling=gcp.container.NodePoolAutoscalingArgs(min_node_count=pool.min, max_node_count=pool.max),
        management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
        upgrade_settings=gcp.container.NodePoolUpgradeSettingsArgs(strategy="SURGE", max_surge=1, max_unavailable=0),
        node_config=_node_config(
            cluster, pool.machine_type, pool.disk_size_gb, service_account, labels=dict(pool.labels) or None
        ),
    )


def _sharing_config(
    sharing: GpuSharing | None,
) -> gcp.container.NodePoolNodeConfigGuestAcceleratorGpuSharingConfigArgs | None:
    """Time-sharing or MPS; MIG is a partition size, not a sharing config."""
    if sharing is None or sharing.strategy is SharingStrategy.MIG or sharing.max_shared_clients is None:
        return None
    return gcp.container.NodePoolNodeConfigGuestAcceleratorGpuSharingConfigArgs(
        gpu_sharing_strategy="TIME_SHARING" if sharing.strategy is SharingStrategy.TIME_SHARING else "MPS",
        max_shared_clients_per_gpu=sharing.max_shared_clients,
    )


FABRIC_IMAGE_TYPE = "COS_CONTAINERD"
"""GPUDirect needs Container-Optimized OS nodes (facts/gpu_fabric.py: the AI Hypercomputer
requirements for RDMA, GKE's multi-network requirements); GKE's default today, pinned on
fabric pools so a changed default cannot move them."""


def gpu_pool_args(
    cluster: GkeClusterConfig,
    pool: GpuPool,
    cluster_name: pulumi.Input[str],
    service_account: pulumi.Input[str],
    fabric: Sequence[gcp.container.NodePoolNetworkConfigAdditionalNodeNetworkConfigArgs] | None = None,
) -> gcp.container.NodePoolArgs:
    """One GPU pool. DWS pools (queued, flex-start) follow GKE's required settings:
    no reservation, location policy ANY, autoscaling from zero, auto-repair off
    (cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest and .../dws-flex-start-training).

    Queued pools are "flex-start with queued provisioning": GKE's current guide creates them
    with both `--flex-start` and `--enable-queued-provisioning` (provisioningrequest page,
    "How flex-start with queued provisioning works"; flex-start needs GKE 1.32.2-gke.1652000
    or later, .../concepts/dws). pulumi-gcp 10.2.0 exposes the two separately:
    `NodePoolNodeConfigArgs.flex_start` and `NodePoolArgs.queued_provisioning`
    (`NodePoolQueuedProvisioningArgs(enabled=...)`), so a queued pool sets both and a
    flex-start pool only the first. A queued pool's nodes come only through
    ProvisioningRequests ("obtainable through the ProvisioningRequest API exclusively",
    pulumi-gcp's NodePoolQueuedProvisioningArgs), which Kueue's admission check creates
    (components/kueue.py).

    `fabric`: a GPUDirect pool's extra NICs (infra/fabric.py), on Container-Optimized OS; GKE
    cannot add or remove them later, so they replace the pool."""
    acc = ACCELERATORS[pool.accelerator]
    dws = pool.provisioning in (Provisioning.QUEUED, Provisioning.FLEX_START)
    sharing = pool.sharing
    accelerator = gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
        type=acc.name,
        count=pool.gpus_per_node,
        gpu_driver_installation_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
            gpu_driver_version=pool.gke_driver_installation.value  # off on a DRA pool
        ),
        gpu_partition_size=sharing.partition_size if sharing and sharing.strategy is SharingStrategy.MIG else None,
        gpu_sharing_config=_sharing_config(sharing),
    )
    if pool.provisioning is Provisioning.RESERVATION:
        affinity = gcp.container.NodePoolNodeConfigReservationAffinityArgs(
            consume_reservation_type="SPECIFIC_RESERVATION",
            key="compute.googleapis.com/reservation-name",
            values=[pool.reservation or ""],
        )
    elif dws:
        affinity = gcp.container.NodePoolNodeConfigReservationAffinityArgs(consume_reservation_type="NO_RESERVATION")
    else:
        affinity = None
    node_config = _node_config(
        cluster,
        pool.machine_type,
        pool.disk_size_gb,
        service_account,
        guest_accelerators=[accelerator],
        labels=pool_node_labels(pool),
        taints=[
            gcp.container.NodePoolNodeConfigTaintArgs(key=t.key, value=t.value, effect=t.gke_effect)
            for t in pool_taints(pool)
        ],
        spot=pool.provisioning is Provisioning.SPOT,
        flex_start=True if dws else None,  # queued pools too: see the docstring
        reservation_affinity=affinity,
        gvnic=gcp.container.NodePoolNodeConfigGvnicArgs(enabled=pool.gvnic),
        fast_socket=gcp.container.NodePoolNodeConfigFastSocketArgs(enabled=True) if pool.fast_socket else None,
        image_type=FABRIC_IMAGE_TYPE if fabric else None,
    )
    return gcp.container.NodePoolArgs(
        name=pool.name,
        cluster=cluster_name,
        location=cluster.location,
        node_locations=pool.zones,
        initial_node_count=pool.min,
        autoscaling=gcp.container.NodePoolAutoscalingArgs(
            min_node_count=pool.min,
            max_node_count=pool.max,
            location_policy="ANY" if dws or pool.provisioning is Provisioning.SPOT else "BALANCED",
        ),
        management=gcp.container.NodePoolManagementArgs(auto_repair=not dws, auto_upgrade=True),
        upgrade_settings=gcp.container.NodePoolUpgradeSettingsArgs(strategy="SURGE", max_surge=1, max_unavailable=0),
        queued_provisioning=(
            gcp.container.NodePoolQueuedProvisioningArgs(enabled=True)
            if pool.provisioning is Provisioning.QUEUED
            else None
        ),
        placement_policy=gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT") if pool.compact_placement else None,
        network_config=(
            gcp.container.NodePoolNetworkConfigArgs(additional_node_network_configs=list(fabric)) if fabric else None
        ),
        node_config=node_config,
    )


def webhook_firewall_args(
    cluster: GkeClusterConfig, network: pulumi.Input[str], project: str | None = None
) -> gcp.compute.FirewallArgs:
    """Private clusters only open 443/10250 from the control plane; webhooks need more. The
    rule lives with the network (`project`: a Shared VPC host project; None: the stack's)."""
    return gcp.compute.FirewallArgs(
        project=project,
        network=network,
        description=f"GKE control plane of {cluster.name} -> admission webhooks on its nodes",
        direction="INGRESS",
        source_ranges=[str(cluster.network.master_cidr)],
        target_tags=[node_tag(cluster)],
        allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=list(CONTROL_PLANE_TARGET_PORTS))],
    )


# --- components -----------------------------------------------------------------------


def subnet_user_args(args: NetworkArgs, member: pulumi.Input[str]) -> gcp.compute.SubnetworkIAMMemberArgs:
    """Shared VPC: `member` (a service agent of the stack's project) uses the host project's
    subnetwork (NETWORK_USER above)."""
    existing = args.existing
    assert existing is not None
    return gcp.compute.SubnetworkIAMMemberArgs(
        project=args.host_project, region=args.region, subnetwork=existing.subnetwork, role=NETWORK_USER, member=member
    )


def host_agent_user_args(args: NetworkArgs, member: pulumi.Input[str]) -> gcp.projects.IAMMemberArgs:
    """Shared VPC: the GKE service agent of the stack's project acts in the host project."""
    return gcp.projects.IAMMemberArgs(project=args.host_project or "", role=HOST_SERVICE_AGENT_USER, member=member)


class Network(Component):
    """The cluster's network. Created: its own VPC, a subnet with VPC-native pod and service
    ranges, and Cloud NAT so private nodes still reach registries. Existing (maybe a Shared
    VPC host project's): nothing of the network is created; in a host project the program
    may manage, the bindings GKE needs there."""

    network_id: pulumi.Output[str]
    subnetwork_id: pulumi.Output[str]
    access: list[pulumi.Resource]
    """What the cluster needs before it is created (Shared VPC bindings)."""

    def __init__(
        self, name: str, args: NetworkArgs, number: pulumi.Output[str] | None, opts: pulumi.ResourceOptions | None = None
    ):
        """`number`: the stack project's number (its service agents' names), when they get roles here."""
        super().__init__(name, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.access = []
        existing = args.existing
        if existing is not None:
            self.network_id = pulumi.Output.from_input(network_name(args.host_project, existing.network))
            self.subnetwork_id = pulumi.Output.from_input(subnetwork_name(args.host_project, args.region, existing.subnetwork))
            if args.shared_vpc and args.manages_host_project and number is not None:
                gke = number.apply(gke_service_agent)
                apis = number.apply(google_apis_service_agent)
                self.access = [
                    gcp.compute.SubnetworkIAMMember(f"{name}-gke-network-user", subnet_user_args(args, gke), opts=child),
                    gcp.compute.SubnetworkIAMMember(f"{name}-apis-network-user", subnet_user_args(args, apis), opts=child),
                    gcp.projects.IAMMember(f"{name}-gke-host-agent", host_agent_user_args(args, gke), opts=child),
                ]
            self.register_outputs({"networkId": self.network_id, "subnetworkId": self.subnetwork_id})
            return
        network = gcp.compute.Network(
            name,
            gcp.compute.NetworkArgs(project=args.project, auto_create_subnetworks=False, routing_mode="REGIONAL"),
            opts=child,
        )
        subnet = gcp.compute.Subnetwork(name, subnetwork_args(args, network.id), opts=child)
        if args.private_nodes:
            router = gcp.compute.Router(
                name, gcp.compute.RouterArgs(network=network.id, region=args.region), opts=child
            )
            gcp.compute.RouterNat(
                name,
                gcp.compute.RouterNatArgs(
                    router=router.name,
                    region=args.region,
                    nat_ip_allocate_option="AUTO_ONLY",
                    source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
                    log_config=gcp.compute.RouterNatLogConfigArgs(enable=True, filter="ERRORS_ONLY"),
                ),
                opts=child,
            )
        self.network_id = network.id
        self.subnetwork_id = subnet.id
        self.register_outputs({"networkId": network.id, "subnetworkId": subnet.id})


def fabric_name(cluster_component: str, pool: FabricPoolArgs) -> str:
    """The Pulumi name of a pool's GpuFabric component."""
    return f"{cluster_component}-{pool.pool}-fabric"


class GkeCluster(Component):
    """The GKE cluster the platform runs on: a least-privilege node account, the system pool,
    one pool per GPU pool of the stack, and node auto-provisioning."""

    name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    """The control plane's address, for the kubeconfig."""
    ca_certificate: pulumi.Output[str]
    node_service_account: pulumi.Output[str]
    """The e-mail of the nodes' Google service account (what pulls images)."""
    network: ClusterNetwork
    """The network the cluster is on, created or existing."""

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts)
        cluster = args.cluster
        child = pulumi.ResourceOptions(parent=self)
        encryption = cluster.secrets_encryption
        net = args.network
        # The service agents' names need the project's number: read only when they get roles.
        agents_get_roles = (net.shared_vpc and net.manages_host_project) or bool(encryption and encryption.grant_key_access)
        number = project_number(args.project) if agents_get_roles else None
        network = Network(name, net, number, opts=child)

        node_sa = gcp.serviceaccount.Account(
            f"{name}-nodes",
            gcp.serviceaccount.AccountArgs(
                project=args.project,
                account_id=node_service_account_id(cluster.name),
                display_name=f"GKE nodes of {cluster.name} (least privilege)",
            ),
            opts=child,
        )
        member = node_sa.email.apply(lambda email: f"serviceAccount:{email}")
        roles: list[pulumi.Resource] = [
            gcp.projects.IAMMember(
                f"{name}-nodes-{role.split('/')[-1]}",
                gcp.projects.IAMMemberArgs(project=args.project or "", role=role, member=member),
                opts=child,
            )
            for role in NODE_SA_ROLES
        ]
        roles += network.access  # Shared VPC: GKE uses the host project's subnet
        if encryption is not None and encryption.grant_key_access and number is not None:
            roles.append(
                gcp.kms.CryptoKeyIAMMember(
                    f"{name}-secrets-key",
                    gcp.kms.CryptoKeyIAMMemberArgs(
                        crypto_key_id=encryption.iam_id, role=KEY_ENCRYPTER_DECRYPTER, member=number.apply(gke_service_agent)
                    ),
                    opts=child,
                )
            )
        if args.image_mirror is not None:
            # Every image comes through the mirror (mlplatform:images.mirror), often a shared
            # repository in another project: the nodes read it, before the first node boots.
            roles.append(
                gcp.artifactregistry.RepositoryIamMember(
                    f"{name}-nodes-image-mirror", mirror_reader_args(args.image_mirror, member), opts=child
                )
            )
        gke = gcp.container.Cluster(
            name,
            cluster_args(args, network.network_id, network.subnetwork_id, node_sa.email),
            opts=pulumi.ResourceOptions(
                parent=self,
                # NAP nodes need their roles before the first node boots; GKE needs the host
                # project's subnet and the secrets key before it creates the cluster.
                depends_on=roles,
                protect=args.deletion_protection,
                # GKE reports node_config for the removed default pool, and our NodePools in
                # the cluster's nodePools (pulumi-gcp 10.2.0 ClusterArgs.node_pools); neither
                # is ours to manage here.
                ignore_changes=["nodeConfig", "initialNodeCount", "nodePools"],
            ),
        )
        pool_opts = pulumi.ResourceOptions(parent=self, ignore_changes=SERVER_NORMALISED_POOL_FIELDS)
        gcp.container.NodePool(f"{name}-system", system_pool_args(cluster, gke.name, node_sa.email), opts=pool_opts)
        fabrics = {f.pool: f for f in args.fabric}
        fabric_agents = [number.apply(gke_service_agent), number.apply(google_apis_service_agent)] if (
            number is not None and net.shared_vpc and net.manages_host_project
        ) else []
        for pool in cluster.gpu_pools:
            fabric_args = fabrics.get(pool.name)
            fabric = self._fabric(name, fabric_args, fabric_agents) if fabric_args else None
            gcp.container.NodePool(
                f"{name}-{pool.name}",
                gpu_pool_args(cluster, pool, gke.name, node_sa.email, fabric.node_networks if fabric else None),
                opts=pulumi.ResourceOptions.merge(pool_opts, pulumi.ResourceOptions(depends_on=fabric.access))
                if fabric and fabric.access
                else pool_opts,
            )
        if cluster.private_nodes and net.manages_host_project:
            # With the network, in a Shared VPC host project too; its admins make it when the
            # program may not (docs/gke-network.md).
            firewall_project = net.host_project if net.shared_vpc else None
            gcp.compute.Firewall(
                f"{name}-webhooks", webhook_firewall_args(cluster, network.network_id, firewall_project), opts=child
            )
        self.network = ClusterNetwork(
            project=net.host_project,
            network=network.network_id,
            subnetwork=network.subnetwork_id,
            node_tag=node_tag(cluster),
            shared_vpc=net.shared_vpc,
            manages_host_project=net.manages_host_project,
        )

        self.name = gke.name
        self.endpoint = gke.endpoint
        self.ca_certificate = gke.master_auth.cluster_ca_certificate.apply(lambda ca: ca or "")
        self.node_service_account = node_sa.email
        self.register_outputs(
            {
                "name": gke.name,
                "endpoint": gke.endpoint,
                "caCertificate": self.ca_certificate,
                "nodeServiceAccount": self.node_service_account,
            }
        )

    def _fabric(self, name: str, args: FabricPoolArgs, agents: Sequence[pulumi.Output[str]]) -> GpuFabric:
        return GpuFabric(fabric_name(name, args), args, agents, opts=pulumi.ResourceOptions(parent=self))
