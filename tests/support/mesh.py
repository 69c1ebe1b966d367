"""Who reaches what, evaluated over rendered objects: Istio AuthorizationPolicies with Istio's
semantics, Kubernetes NetworkPolicies, and VirtualService routing on the Kubeflow gateway.

Istio 1.29 (istio.io docs "Authorization Policy" and security/authorization reference):
- a policy applies to a workload when it is in the root namespace (istio-system) or the
  workload's namespace, and its selector (matchLabels) is empty or matches the pod;
- CUSTOM first, then DENY: any matching DENY denies; then ALLOW: with no ALLOW policy the
  request passes, otherwise one must match; a policy with no rules matches nothing, a rule
  `{}` everything (so `spec: {}` in the root namespace allows nothing anywhere);
- a rule matches when every `from` source (any of them), `to` operation (any) and `when`
  condition (all) matches; within one, every field must match;
- values match exactly, by prefix (`abc*`), suffix (`*abc`) or presence (`*`); a `not*`
  field matches when none of its values match, also when the attribute is missing
  (pilot/pkg/security/authz/model/model.go 1.29.0: not_id of the matchers).
Things this evaluator does not model are not used by the rendered policies it reads
(hosts, ipBlocks, audiences); it fails on an unknown field instead of ignoring it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import yaml

from tooling.check import selects

ROOT_NAMESPACE = "istio-system"
ACTIONS = ("CUSTOM", "DENY", "ALLOW")
SOURCE_FIELDS = {"principals", "notPrincipals", "requestPrincipals", "notRequestPrincipals", "namespaces", "notNamespaces"}
OPERATION_FIELDS = {"methods", "notMethods", "paths", "notPaths", "ports", "notPorts"}


def mesh_path_normalization(mesh_config_map: dict[str, Any]) -> str:
    """The mesh config's path normalization (Istio 1.30.1 mesh/v1alpha1/config.proto
    ProxyPathNormalization; DEFAULT is BASE)."""
    mesh = yaml.safe_load(mesh_config_map["data"]["mesh"]) or {}
    found = (mesh.get("pathNormalization") or {}).get("normalization", "DEFAULT")
    return "BASE" if found == "DEFAULT" else str(found)


def normalized(path: str, normalization: str) -> str:
    """The path as the gateway and sidecars route and authorize it (Istio's "Authorization
    Policy Normalization" reference): DECODE_AND_MERGE_SLASHES first decodes %2F and %5C in any
    case; BASE turns backslashes into slashes and removes dot segments (RFC 3986 5.2.4);
    MERGE_SLASHES and stricter merge runs of slashes. NONE leaves it as it is."""
    if normalization == "NONE":
        return path
    if normalization == "DECODE_AND_MERGE_SLASHES":
        path = re.sub("%2f", "/", path, flags=re.IGNORECASE)
        path = re.sub("%5c", "/", path, flags=re.IGNORECASE)  # a backslash, which BASE turns into a slash
    segments: list[str] = []
    for segment in path.replace("\\", "/").split("/")[1:]:
        if segment == "..":
            segments = segments[:-1]
        elif segment != ".":
            segments.append(segment)
    if path.rstrip("/").rsplit("/", 1)[-1] in (".", ".."):
        segments.append("")  # ending in a dot segment, it ends in a slash (RFC 3986 5.2.4)
    path = "/" + "/".join(segments)
    if normalization in ("MERGE_SLASHES", "DECODE_AND_MERGE_SLASHES"):
        path = re.sub("/{2,}", "/", path)
    return path


@dataclass(frozen=True)
class Request:
    """One request as a sidecar (or the gateway) sees it."""

    method: str
    path: str
    port: int
    """The destination (container) port."""
    principal: str | None = None
    """The peer's mTLS identity; None in plain text (a pod without sidecar)."""
    namespace: str | None = None
    """The peer's namespace as mTLS tells it; None in plain text."""
    headers: dict[str, str] = field(default_factory=dict)
    claims: dict[str, str | list[str]] = field(default_factory=dict)
    """request.auth.claims: a JWT a RequestAuthentication of this workload verified; a list claim
    (`groups`) matches a condition when any element does (istio.io 1.29 docs, "Authorization
    Policy", list-typed claims: pilot builds a ListMatcher `one_of`, and notValues its `not_id`)."""
    request_principal: str | None = None


def value_matches(pattern: str, value: str | None) -> bool:
    if value is None:
        return False
    if pattern == "*":
        return value != ""
    if pattern.endswith("*"):
        return value.startswith(pattern[:-1])
    if pattern.startswith("*"):
        return value.endswith(pattern[1:])
    return value == pattern


def _field(values: Iterable[str] | None, negative: Iterable[str] | None, value: str | None) -> bool:
    if values is not None and not any(value_matches(str(v), value) for v in values):
        return False
    return negative is None or not any(value_matches(str(v), value) for v in negative)


def _source(source: dict[str, Any], request: Request) -> bool:
    unknown = set(source) - SOURCE_FIELDS
    assert not unknown, f"source fields the evaluator does not model: {unknown}"
    return (
        _field(source.get("principals"), source.get("notPrincipals"), request.principal)
        and _field(source.get("requestPrincipals"), source.get("notRequestPrincipals"), request.request_principal)
        and _field(source.get("namespaces"), source.get("notNamespaces"), request.namespace)
    )


def _operation(operation: dict[str, Any], request: Request) -> bool:
    unknown = set(operation) - OPERATION_FIELDS
    assert not unknown, f"operation fields the evaluator does not model: {unknown}"
    return (
        _field(operation.get("methods"), operation.get("notMethods"), request.method)
        and _field(operation.get("paths"), operation.get("notPaths"), request.path.split("?", 1)[0])
        and _field(operation.get("ports"), operation.get("notPorts"), str(request.port))
    )


def _attribute(key: str, request: Request) -> str | list[str] | None:
    if key.startswith("request.headers[") and key.endswith("]"):
        return request.headers.get(key[len("request.headers[") : -1].lower())
    if key.startswith("request.auth.claims[") and key.endswith("]"):
        return request.claims.get(key[len("request.auth.claims[") : -1])
    if key == "source.namespace":
        return request.namespace
    if key == "source.principal":
        return request.principal
    raise AssertionError(f"condition key the evaluator does not model: {key}")


def _condition(condition: dict[str, Any], request: Request) -> bool:
    value = _attribute(condition["key"], request)
    if isinstance(value, list):
        values, negative = condition.get("values"), condition.get("notValues")
        hit = lambda patterns: any(value_matches(str(p), v) for p in patterns for v in value)  # noqa: E731
        return (values is None or hit(values)) and (negative is None or not hit(negative))
    return _field(condition.get("values"), condition.get("notValues"), value)


def rule_matches(rule: dict[str, Any], request: Request) -> bool:
    sources = [s.get("source") or {} for s in rule.get("from") or []]
    operations = [o.get("operation") or {} for o in rule.get("to") or []]
    return (
        (not sources or any(_source(s, request) for s in sources))
        and (not operations or any(_operation(o, request) for o in operations))
        and all(_condition(c, request) for c in rule.get("when") or [])
    )


def policy_matches(policy: dict[str, Any], request: Request) -> bool:
    return any(rule_matches(rule, request) for rule in (policy.get("spec") or {}).get("rules") or [])


def applies(policy: dict[str, Any], namespace: str, pod_labels: dict[str, str]) -> bool:
    meta, spec = policy["metadata"], policy.get("spec") or {}
    if meta.get("namespace") not in (ROOT_NAMESPACE, namespace):
        return False
    assert "targetRef" not in spec and "targetRefs" not in spec, "policies attached to gateways by reference are not modelled"
    labels = (spec.get("selector") or {}).get("matchLabels") or {}
    return all(pod_labels.get(k) == v for k, v in labels.items())


@dataclass(frozen=True)
class Decision:
    allowed: bool
    why: str


def istio_decision(policies: Iterable[dict[str, Any]], namespace: str, pod_labels: dict[str, str], request: Request, custom_allows: bool = True) -> Decision:
    """What the workload's proxy does with `request`; `custom_allows`: the external
    authorizer's answer for a request a CUSTOM policy sends it."""
    applicable = [p for p in policies if applies(p, namespace, pod_labels)]
    by_action: dict[str, list[dict[str, Any]]] = {a: [] for a in ACTIONS}
    for policy in applicable:
        action = (policy.get("spec") or {}).get("action", "ALLOW")
        assert action in ACTIONS, f"{policy['metadata']['name']}: action {action} is not modelled"
        by_action[action].append(policy)
    for policy in by_action["CUSTOM"]:
        if policy_matches(policy, request) and not custom_allows:
            return Decision(False, f"CUSTOM {policy['metadata']['name']} denied")
    for policy in by_action["DENY"]:
        if policy_matches(policy, request):
            return Decision(False, f"DENY {policy['metadata']['namespace']}/{policy['metadata']['name']}")
    if not by_action["ALLOW"]:
        return Decision(True, "no ALLOW policy")
    for policy in by_action["ALLOW"]:
        if policy_matches(policy, request):
            return Decision(True, f"ALLOW {policy['metadata']['namespace']}/{policy['metadata']['name']}")
    return Decision(False, "no ALLOW policy matches")


# --- NetworkPolicies ----------------------------------------------------------------------


@dataclass(frozen=True)
class Pod:
    namespace: str
    labels: dict[str, str]


def network_allows(
    policies: Iterable[dict[str, Any]],
    namespaces: dict[str, dict[str, str]],
    destination: Pod,
    port: int,
    source: Pod,
) -> bool:
    """Kubernetes NetworkPolicy ingress semantics for pod-to-pod traffic (ipBlocks apart)."""
    selecting = [
        p["spec"]
        for p in policies
        if p["metadata"].get("namespace") == destination.namespace
        and "Ingress" in (p["spec"].get("policyTypes") or ["Ingress"])
        and selects(p["spec"].get("podSelector") or {}, destination.labels)
    ]
    if not selecting:
        return True
    for spec in selecting:
        for rule in spec.get("ingress") or []:
            ports = rule.get("ports")
            if ports and not any(p.get("port") in (None, port) for p in ports):
                continue
            peers = rule.get("from")
            if not peers:
                return True
            for peer in peers:
                if "ipBlock" in peer:
                    continue
                ns_selector, pod_selector = peer.get("namespaceSelector"), peer.get("podSelector")
                if ns_selector is None:
                    in_ns = source.namespace == destination.namespace
                else:
                    in_ns = selects(ns_selector, namespaces.get(source.namespace, {"kubernetes.io/metadata.name": source.namespace}))
                if in_ns and (pod_selector is None or selects(pod_selector, source.labels)):
                    return True
    return False


# --- the Kubeflow gateway's routing -------------------------------------------------------


@dataclass(frozen=True)
class Route:
    host: str
    port: int
    path: str
    """After the route's rewrite."""
    headers: dict[str, str]
    """What the route sets on the request."""


def _string_match(match: dict[str, Any], value: str | None) -> bool:
    if value is None:
        return False
    if "exact" in match:
        return bool(value == match["exact"])
    if "prefix" in match:
        return value.startswith(match["prefix"])
    raise AssertionError(f"string match not modelled: {match}")


def _catch_all(http: dict[str, Any]) -> bool:
    """A route that matches every request (no match, or the prefix `/`)."""
    return any(not m or (m.get("uri") in (None, {"prefix": "/"}) and not m.get("headers")) for m in http.get("match") or [{}])


def route(virtual_services: Iterable[dict[str, Any]], gateway: str, path: str, claims: dict[str, str], headers: dict[str, str]) -> Route | None:
    """The first http route of a VirtualService bound to `gateway` matching the request. Istio
    merges the VirtualServices of one gateway host; the routes we publish do not overlap, so
    their order does not matter here, except the central dashboard's catch-all `/`, which
    Kubeflow's other routes rely on being tried last (Istio moves catch-all routes behind the
    others when it merges them: pilot's gateway route merging). `@request.auth.claims.<c>`
    matches a verified claim. A gateway named without a namespace is the VirtualService's own
    namespace's (Istio's VirtualService reference, `gateways`)."""
    candidates: list[dict[str, Any]] = []
    for vs in virtual_services:
        spec = vs.get("spec") or {}
        namespace = (vs.get("metadata") or {}).get("namespace", "")
        gateways = [g if "/" in g else f"{namespace}/{g}" for g in spec.get("gateways") or []]
        if gateway in gateways:
            candidates += spec.get("http") or []
    for http in sorted(candidates, key=_catch_all):
        for match in http.get("match") or [{}]:
            uri = match.get("uri")
            if uri and not _string_match(uri, path):
                continue
            wanted = match.get("headers") or {}
            ok = all(
                _string_match(m, claims.get(k.removeprefix("@request.auth.claims.")) if k.startswith("@request.auth.claims.") else headers.get(k))
                for k, m in wanted.items()
            )
            if not ok:
                continue
            rewritten = path
            rewrite = (http.get("rewrite") or {}).get("uri")
            if rewrite is not None and uri and "prefix" in uri:
                rewritten = rewrite + path[len(uri["prefix"]) :]
            destination = http["route"][0]["destination"]
            sets = ((http.get("headers") or {}).get("request") or {}).get("set") or {}
            return Route(destination["host"], destination["port"]["number"], rewritten, dict(sets))
    return None
