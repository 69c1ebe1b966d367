"""NetworkPolicies, built one way: every policy of ours admits Ingress to some pods of one
namespace from a list of peers, on some ports or all."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from facts.labels import namespace_selector

SAME_NAMESPACE: dict[str, Any] = {"podSelector": {}}
"""The peer "every pod of the policy's own namespace"."""


def namespace_peer(namespace: str, pods: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The peer "pods of `namespace`" (those with the labels `pods`, or all)."""
    peer: dict[str, Any] = {"namespaceSelector": namespace_selector(namespace)}
    if pods:
        peer["podSelector"] = {"matchLabels": dict(pods)}
    return peer


def ip_peer(cidr: str) -> dict[str, Any]:
    return {"ipBlock": {"cidr": cidr}}


def network_policy(
    name: str,
    namespace: str,
    sources: Iterable[dict[str, Any]],
    pods: Mapping[str, str] | None = None,
    ports: Iterable[int] = (),
) -> dict[str, Any]:
    """An Ingress NetworkPolicy: the pods of `namespace` with the labels `pods` (None: every
    pod) accept traffic from `sources` on the TCP `ports` (none: every port). The pods it
    selects accept nothing else (Kubernetes: a pod selected by any Ingress policy takes only
    what one of them admits)."""
    rule: dict[str, Any] = {"from": list(sources)}
    if ports:
        rule["ports"] = [{"protocol": "TCP", "port": port} for port in ports]
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"podSelector": {"matchLabels": dict(pods)} if pods else {}, "policyTypes": ["Ingress"], "ingress": [rule]},
    }
