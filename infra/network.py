"""The network a GKE cluster is on, as the layers above infra see it."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi


@dataclass(frozen=True)
class ClusterNetwork:
    """The VPC network a GKE cluster is on, created by the program or existing: what other
    Google Cloud resources on that network need (firewall rules, a Cloud SQL instance's
    private IP), the same whichever it is."""

    project: str | None
    """The project that owns the network: a Shared VPC host project, else the stack's (None:
    the provider's default project, the stack's)."""
    network: pulumi.Output[str]
    """The network's relative resource name, `projects/<project>/global/networks/<name>`: what
    `private_network` of a Cloud SQL instance and `network` of a firewall rule take."""
    subnetwork: pulumi.Output[str]
    """`projects/<project>/regions/<region>/subnetworks/<name>`, the nodes' subnet."""
    node_tag: str
    """Network tag of every node of the cluster (firewall rules target it)."""
    shared_vpc: bool
    """The network is another project's (a Shared VPC host project)."""
    manages_host_project: bool
    """The program makes firewall rules and IAM bindings in the network's project (always in
    the stack's own; in a host project unless its admins do)."""
