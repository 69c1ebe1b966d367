"""GKE: network, cluster with node auto-provisioning, system pool and GPU pools.

The ComponentResources stay thin; the `*_args` functions turn their Args (args/infra.py) into
pulumi-gcp `*Args` and are unit-tested on their own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi
import pulumi_gcp as gcp

from args.infra import GkeClusterArgs, MirrorRepositoryArgs, NetworkArgs
from facts.gpu_catalog import ACCELERATORS
from facts.naming import node_service_account_id
from facts.node_labels import pool_node_labels, pool_taints
from infra.component import Component
from infra.registry import READER as ARTIFACT_REGISTRY_READER
from stacks.schema import GkeClusterConfig, GpuPool, GpuSharing, Provisioning, SharingStrategy

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
# Admission webhooks the control plane must reach on private clusters: 9443 (Trainer,
# JobSet, Kueue, KubeRay), 8443 (Kueue visibility, profile webhooks), 15017 (istiod's
# injector), 4443 (Kubeflow's PodDefaults webhook: applications/dashboard/upstream/
# poddefaults-webhooks/base/deployment.yaml containerPort 4443). GKE opens 443 and 10250 itself (cert-manager's
# webhook listens on 10250). `python -m stacks check` proves the list against the render.
WEBHOOK_PORTS = ("4443", "8443", "9443", "15017")
PODS_RANGE = "pods"
SERVICES_RANGE = "services"
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
    return gcp.container.ClusterArgs(
        name=cluster.name,
        project=args.project,
        location=cluster.location,
        network=network,
        subnetwork=subnetwork,
        networking_mode="VPC_NATIVE",
        ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(
            cluster_secondary_range_name=PODS_RANGE,
            services_secondary_range_name=SERVICES_RANGE,
        ),
        # The default pool cannot be configured like ours; GKE needs one node to start.
        remove_default_node_pool=True,
        initial_node_count=1,
        release_channel=gcp.container.ClusterReleaseChannelArgs(channel=cluster.release_channel.value),
        workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
            workload_pool=f"{args.project}.svc.id.goog"
        ),
        datapath_provider="ADVANCED_DATAPATH",  # Dataplane V2: NetworkPolicy enforcement built in
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
) -> gcp.container.NodePoolNodeConfigArgs:
    """A pool's node config; the keyword fields are a GPU pool's (None: left unset)."""
    return gcp.container.NodePoolNodeConfigArgs(
        machine_type=machine_type,
        disk_size_gb=disk_size_gb,
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
        node_config=_node_config(cluster, pool.machine_type, pool.disk_size_gb, service_account),
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


def gpu_pool_args(
    cluster: GkeClusterConfig, pool: GpuPool, cluster_name: pulumi.Input[str], service_account: pulumi.Input[str]
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
    (components/kueue.py)."""
    acc = ACCELERATORS[pool.accelerator]
    dws = pool.provisioning in (Provisioning.QUEUED, Provisioning.FLEX_START)
    sharing = pool.sharing
    accelerator = gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
        type=acc.name,
        count=pool.gpus_per_node,
        gpu_driver_installation_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
            gpu_driver_version=pool.driver_version.value
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
        node_config=node_config,
    )


def webhook_firewall_args(cluster: GkeClusterConfig, network: pulumi.Input[str]) -> gcp.compute.FirewallArgs:
    """Private clusters only open 443/10250 from the control plane; webhooks need more."""
    return gcp.compute.FirewallArgs(
        network=network,
        description=f"GKE control plane of {cluster.name} -> admission webhooks on its nodes",
        direction="INGRESS",
        source_ranges=[str(cluster.network.master_cidr)],
        target_tags=[node_tag(cluster)],
        allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=list(WEBHOOK_PORTS))],
    )


# --- components -----------------------------------------------------------------------


class Network(Component):
    """The cluster's own VPC: a subnet with VPC-native pod and service ranges, and Cloud NAT
    so private nodes still reach registries."""

    network_id: pulumi.Output[str]
    subnetwork_id: pulumi.Output[str]

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts)
        child = pulumi.ResourceOptions(parent=self)
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


class GkeCluster(Component):
    """The GKE cluster the platform runs on: a least-privilege node account, the system pool,
    one pool per GPU pool of the stack, and node auto-provisioning."""

    name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    """The control plane's address, for the kubeconfig."""
    ca_certificate: pulumi.Output[str]
    node_service_account: pulumi.Output[str]
    """The e-mail of the nodes' Google service account (what pulls images)."""
    network_id: pulumi.Output[str]
    """The cluster's VPC, where private services (the pipelines database) are reached."""

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts)
        cluster = args.cluster
        child = pulumi.ResourceOptions(parent=self)
        network = Network(name, args.network, opts=child)

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
                depends_on=roles,  # NAP nodes need their roles before the first node boots
                protect=args.deletion_protection,
                # GKE reports node_config for the removed default pool, and our NodePools in
                # the cluster's nodePools (pulumi-gcp 10.2.0 ClusterArgs.node_pools); neither
                # is ours to manage here.
                ignore_changes=["nodeConfig", "initialNodeCount", "nodePools"],
            ),
        )
        pool_opts = pulumi.ResourceOptions(parent=self, ignore_changes=SERVER_NORMALISED_POOL_FIELDS)
        gcp.container.NodePool(f"{name}-system", system_pool_args(cluster, gke.name, node_sa.email), opts=pool_opts)
        for pool in cluster.gpu_pools:
            gcp.container.NodePool(f"{name}-{pool.name}", gpu_pool_args(cluster, pool, gke.name, node_sa.email), opts=pool_opts)
        if cluster.private_nodes:
            gcp.compute.Firewall(f"{name}-webhooks", webhook_firewall_args(cluster, network.network_id), opts=child)

        self.name = gke.name
        self.endpoint = gke.endpoint
        self.ca_certificate = gke.master_auth.cluster_ca_certificate.apply(lambda ca: ca or "")
        self.node_service_account = node_sa.email
        self.network_id = network.network_id
        self.register_outputs(
            {
                "name": gke.name,
                "endpoint": gke.endpoint,
                "caCertificate": self.ca_certificate,
                "nodeServiceAccount": self.node_service_account,
                "networkId": self.network_id,
            }
        )
