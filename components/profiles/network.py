"""A team namespace's NetworkPolicies: its own pods and the platform's namespaces reach it,
nothing else does."""

from __future__ import annotations

from typing import Any

from plumbing.network import SAME_NAMESPACE, namespace_peer, network_policy
from stackmodel.schema import Team as TeamConfig

# Namespaces whose traffic a team namespace accepts: the gateway, Kubeflow's web apps and
# notebook culling, the operators that probe workloads, and metrics scraping.
PLATFORM_NAMESPACES = ("istio-system", "kubeflow", "kuberay-system", "kubeflow-system", "monitoring")


def network_policies(team: TeamConfig) -> list[dict[str, Any]]:
    """Allow the namespace itself and the platform's namespaces; everything else is denied."""
    return [
        network_policy("allow-same-namespace", team.name, [SAME_NAMESPACE]),
        network_policy("allow-platform-namespaces", team.name, [namespace_peer(ns) for ns in PLATFORM_NAMESPACES]),
    ]
