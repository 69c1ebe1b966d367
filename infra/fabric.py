"""A GPU pool's GPUDirect networking on the cloud side (facts/gpu_fabric.py, infra/args.py):
the VPCs and subnets of its extra NICs (created from the pool's fabric range, or the stack's
own), the firewall rules the docs give between the NICs, and the node pool's additional node
networks. The Kubernetes side (`Network`, `GKENetworkParamSet`, the NCCL plugin installers,
the runtimes) is components/fabric.py's, from the same FabricPoolArgs.

The `*_args` functions are pure: our Args in, pulumi-gcp `*Args` out, tested on their own."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence

import pulumi
import pulumi_gcp as gcp

from facts.gpu_fabric import FabricNic, firewall_name
from infra.args import FabricPoolArgs
from infra.component import Component

FABRIC_PROTOCOLS = ("tcp", "udp", "icmp")
"""What a TCPXO VPC (and RDMA's gVNIC VPC) lets in from the fabric's range: tcp:0-65535,
udp:0-65535 and icmp (GKE's GPUDirect-TCPXO steps, as quoted in facts/gpu_fabric.py;
cluster-toolkit examples/gke-a4/gke-a4.yaml `internal-1` on the gVNIC VPC). A RoCE VPC takes
no rule: its implied rules allow everything (VPC "RDMA network profiles")."""
NETWORK_USER = "roles/compute.networkUser"


def fabric_network_args(pool: FabricPoolArgs, vpc: str, *, roce: bool) -> gcp.compute.NetworkArgs:
    """One of the pool's VPCs: custom subnets, regional routing, the fabric's MTU (TCPXO 8244;
    RDMA 8896) and, for the RoCE VPC, the zone's RDMA network profile."""
    return gcp.compute.NetworkArgs(
        name=vpc,
        project=pool.project,
        auto_create_subnetworks=False,
        routing_mode="REGIONAL",
        mtu=pool.fabric.mtu,
        network_profile=pool.network_profile if roce else None,
        description=f"GPUDirect {pool.kind} of GPU pool {pool.pool}",
    )


def fabric_subnetwork_args(
    pool: FabricPoolArgs, nic: FabricNic, cidr: ipaddress.IPv4Network, network: pulumi.Input[str]
) -> gcp.compute.SubnetworkArgs:
    return gcp.compute.SubnetworkArgs(
        name=nic.subnet,
        project=pool.project,
        region=pool.region,
        network=network,
        ip_cidr_range=str(cidr),
    )


def fabric_firewall_args(pool: FabricPoolArgs, vpc: str, network: pulumi.Input[str]) -> gcp.compute.FirewallArgs:
    """The NICs of the pool's nodes reach each other on this VPC: everything from the fabric's range."""
    assert pool.cidr is not None
    return gcp.compute.FirewallArgs(
        name=firewall_name(vpc),
        project=pool.project,
        network=network,
        description=f"GPUDirect {pool.kind} of GPU pool {pool.pool}: node to node inside the fabric",
        direction="INGRESS",
        source_ranges=[str(pool.cidr)],
        allows=[
            gcp.compute.FirewallAllowArgs(protocol=p, ports=["0-65535"] if p != "icmp" else None)
            for p in FABRIC_PROTOCOLS
        ],
    )


def additional_node_networks(
    pool: FabricPoolArgs,
    networks: Mapping[str, pulumi.Input[str]] | None = None,
    subnets: Sequence[pulumi.Input[str]] | None = None,
) -> list[gcp.container.NodePoolNetworkConfigAdditionalNodeNetworkConfigArgs]:
    """The node pool's extra NICs in facts/gpu_fabric.py's order, by name (GKE's
    `additionalNodeNetworkConfigs`: "Name of the VPC", "Name of the subnetwork", pulumi-gcp
    10.2.0). `networks`/`subnets`: the created resources' names (so the pool waits for them);
    None: the names themselves (the stack's own networks)."""
    return [
        gcp.container.NodePoolNetworkConfigAdditionalNodeNetworkConfigArgs(
            network=networks[nic.vpc] if networks is not None else nic.vpc,
            subnetwork=subnets[i] if subnets is not None else nic.subnet,
        )
        for i, nic in enumerate(pool.nics)
    ]


def subnet_user_args(pool: FabricPoolArgs, subnet: pulumi.Input[str], member: pulumi.Input[str]) -> gcp.compute.SubnetworkIAMMemberArgs:
    """Shared VPC: a service agent of the stack's project uses a fabric subnet of the host project,
    as it does the cluster's own (infra/gke.py NETWORK_USER)."""
    return gcp.compute.SubnetworkIAMMemberArgs(
        project=pool.project, region=pool.region, subnetwork=subnet, role=NETWORK_USER, member=member
    )


class GpuFabric(Component):
    """One fabric pool's cloud networks. Created (`fabric.cidr`): its VPCs, a subnet per NIC and,
    except on a RoCE VPC, a rule letting the fabric's range in. Existing: nothing but, in a Shared
    VPC host project the program manages, the service agents' use of its subnets."""

    node_networks: list[gcp.container.NodePoolNetworkConfigAdditionalNodeNetworkConfigArgs]
    """The node pool's `network_config.additional_node_network_configs`."""
    access: list[pulumi.Resource]
    """What the node pool waits for besides the networks (Shared VPC bindings)."""

    def __init__(
        self,
        name: str,
        args: FabricPoolArgs,
        agents: Sequence[pulumi.Output[str]] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`agents`: the stack project's service agents that need the subnets (Shared VPC, managed)."""
        super().__init__(name, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.access = []
        if not args.created:
            self.node_networks = additional_node_networks(args)
            subnet_names: list[pulumi.Input[str]] = [nic.subnet for nic in args.nics]
        else:
            networks: dict[str, pulumi.Output[str]] = {}
            roce_vpc = args.gpu_vpcs[0] if args.fabric.network_profile is not None else None
            for nic in args.nics:
                if nic.vpc in networks:
                    continue
                roce = nic.vpc == roce_vpc
                network = gcp.compute.Network(
                    nic.vpc, fabric_network_args(args, nic.vpc, roce=roce), opts=child
                )
                networks[nic.vpc] = network.name
                if (args.fabric.firewall and not roce) or nic.role == "gvnic":
                    gcp.compute.Firewall(
                        firewall_name(nic.vpc), fabric_firewall_args(args, nic.vpc, network.name), opts=child
                    )
            subnets = [
                gcp.compute.Subnetwork(
                    nic.subnet, fabric_subnetwork_args(args, nic, cidr, networks[nic.vpc]), opts=child
                ).name
                for nic, cidr in zip(args.nics, args.subnet_ranges, strict=True)
            ]
            subnet_names = list(subnets)
            self.node_networks = additional_node_networks(args, networks, subnets)
        for a, agent in enumerate(agents):
            for nic, subnet in zip(args.nics, subnet_names, strict=True):
                self.access.append(
                    gcp.compute.SubnetworkIAMMember(
                        f"{nic.subnet}-network-user-{a}", subnet_user_args(args, subnet, agent), opts=child
                    )
                )
        self.register_outputs({})
