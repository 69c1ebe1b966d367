"""IPv4 ranges a GKE cluster's network may use, and how many addresses and authorized
networks it needs, as data. The created network's ranges (stackmodel/schema/network.py) and the
authorized networks are checked against it.

Sources (stored copies, read 2026-12-02):
- GKE "Add authorized networks for control plane access"
  (https://cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks, "Limitations"):
  "Public clusters can have up to 50 authorized network CIDR ranges; private clusters can have
  up to 100."
- GKE "VPC-native clusters" and "Configure maximum Pods per node"
  (https://cloud.google.com/kubernetes-engine/docs/concepts/alias-ips,
  .../how-to/flexible-pod-cidr): nodes take their IPs from the subnet's primary range, Pods
  from its Pod secondary range, a range per node; with the default 110 Pods per node (the
  program sets no other) that range is a /24, so a Pod range of /N holds 2^(24-N) nodes.
- Reserved ranges: RFC 6890 special-purpose blocks that no VPC route reaches (0.0.0.0/8 "this
  network", 127.0.0.0/8 loopback, 169.254.0.0/16 link-local, which Compute Engine uses for its
  metadata server 169.254.169.254, 224.0.0.0/4 multicast, 240.0.0.0/4 reserved). Google's VPC
  page listing them as invalid subnet ranges (https://cloud.google.com/vpc/docs/subnets,
  "Prohibited IPv4 ranges") was NOT among the stored copies; RFC 6890 is the source here.
- 172.17.0.0/16, the Docker bridge's default range: GKE's private-cluster page warns against it
  for the control plane range (https://cloud.google.com/kubernetes-engine/docs/how-to/legacy/
  network-isolation, "Restrictions and limitations", behind a collapsed section the stored copy
  does not show). NOT confirmed from a stored copy; kept because the range is the Docker
  bridge's on every host that runs Docker, where an address in it is the host's own bridge.
- The smallest subnet primary range, /29, and the 4 addresses Google reserves in each primary
  range (network, gateway, second-to-last, broadcast): Google's VPC "Subnets" page; NOT among
  the stored copies either.
"""

from __future__ import annotations

import ipaddress

READ = "2026-12-02"
AUTHORIZED_NETWORKS_MAX = {"public": 50, "private": 100}
POD_RANGE_PER_NODE_PREFIX = 24
"""The Pod range GKE gives each node at 110 Pods per node."""
SUBNET_SMALLEST_PREFIX = 29
SUBNET_RESERVED_ADDRESSES = 4
DOCKER_BRIDGE = ipaddress.IPv4Network("172.17.0.0/16")
RESERVED: dict[ipaddress.IPv4Network, str] = {
    ipaddress.IPv4Network("0.0.0.0/8"): "'this network' (RFC 6890)",
    ipaddress.IPv4Network("127.0.0.0/8"): "loopback (RFC 6890)",
    ipaddress.IPv4Network("169.254.0.0/16"): "link-local, where Compute Engine's metadata server answers (RFC 6890)",
    ipaddress.IPv4Network("224.0.0.0/4"): "multicast (RFC 6890)",
    ipaddress.IPv4Network("240.0.0.0/4"): "reserved (RFC 6890)",
}
"""Ranges no subnet, Pod, Service or control-plane range of a VPC may use."""


def reserved_overlap(cidr: ipaddress.IPv4Network) -> str | None:
    """What reserved range `cidr` overlaps, or None."""
    for reserved, what in RESERVED.items():
        if cidr.overlaps(reserved):
            return f"{reserved}, {what}"
    return None


def nodes_in_pod_range(prefix: int) -> int:
    """Nodes a Pod range of /prefix holds at 110 Pods per node (0 below a /24)."""
    return 2 ** (POD_RANGE_PER_NODE_PREFIX - prefix) if prefix <= POD_RANGE_PER_NODE_PREFIX else 0


def nodes_in_subnet(prefix: int) -> int:
    """Node IPs a primary range of /prefix holds."""
    return max(2 ** (32 - prefix) - SUBNET_RESERVED_ADDRESSES, 0)
