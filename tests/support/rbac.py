"""An offline RBAC evaluator: may this user do that, given Roles, ClusterRoles and their
bindings, as the API server's RBAC authorizer decides it. Used to check the access matrix
of team namespaces against Kubeflow's own aggregated roles (`kubeflow-roles/` of the upstream mirror, tests/support/mirror.py).

No Python package evaluates Kubernetes RBAC offline (the offline tools found, e.g.
cyberark/kubernetes-rbac-audit, list risky roles; rbac-tool is a Go binary that reads a
live cluster), so this follows the Go sources of Kubernetes v1.34 directly:
- plugin/pkg/auth/authorizer/rbac/rbac.go `RuleAllows`, and pkg/apis/rbac/v1/
  evaluation_helpers.go `VerbMatches`, `APIGroupMatches`, `ResourceMatches`,
  `ResourceNameMatches`, `NonResourceURLMatches`: `*` wildcards, `<resource>/<subresource>`
  and `*/<subresource>`, resourceNames (an empty list allows every name), non-resource
  URLs with a trailing `*` as a prefix;
- pkg/registry/rbac/validation/rule.go `VisitRulesFor`, `appliesToUser`,
  `GetRoleReferenceRules`: ClusterRoleBindings apply everywhere (and are the only ones for
  cluster-scoped and non-resource requests); a RoleBinding applies in its own namespace,
  to a Role there or to a ClusterRole's rules scoped to that namespace; User, Group and
  ServiceAccount subjects (a ServiceAccount subject without a namespace means the
  binding's own);
- staging/src/k8s.io/apiserver/pkg/authentication/serviceaccount/util.go and
  .../authentication/group/authenticated_group_adder.go: a service account's user name
  `system:serviceaccount:<ns>:<name>`, its groups `system:serviceaccounts` and
  `system:serviceaccounts:<ns>`, and `system:authenticated` on every authenticated user;
- pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go: an
  aggregated ClusterRole's rules are replaced by the union of the rules of the
  ClusterRoles its selectors select (itself excluded), to a fixed point; selectors with
  Kubernetes label-selector semantics (tooling.check.selects).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tests.support.mirror import MIRROR
from tooling.check import selects
from tooling.schemas import load_all

UPSTREAM_ROLES = MIRROR / "kubeflow-roles"
AUTHENTICATED = "system:authenticated"
SERVICE_ACCOUNTS = "system:serviceaccounts"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"

Rule = dict[str, Any]


@dataclass(frozen=True)
class UserInfo:
    """Who asks: a user name and the groups the authenticator gave it."""

    name: str
    groups: frozenset[str] = frozenset()


def user(name: str, *groups: str) -> UserInfo:
    """An authenticated user (every one is in `system:authenticated`)."""
    return UserInfo(name, frozenset({AUTHENTICATED, *groups}))


def service_account(namespace: str, name: str) -> UserInfo:
    """A service account, as its token authenticates: name and groups."""
    return UserInfo(
        f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}",
        frozenset({SERVICE_ACCOUNTS, f"{SERVICE_ACCOUNTS}:{namespace}", AUTHENTICATED}),
    )


@dataclass(frozen=True)
class Request:
    """A resource request (`resource` set; `namespace` "" for cluster-scoped ones) or a
    non-resource request (`path` set, e.g. /metrics)."""

    verb: str
    group: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    namespace: str = ""
    path: str = ""

    def __post_init__(self) -> None:
        if bool(self.resource) == bool(self.path):
            raise ValueError("a request names either a resource or a non-resource path")


def upstream_cluster_roles() -> list[dict[str, Any]]:
    roles: list[dict[str, Any]] = []
    for path in sorted(UPSTREAM_ROLES.glob("*.yaml")):
        roles += [d for d in load_all(path.read_text()) if d.get("kind") == "ClusterRole"]
    return roles


def resolve(cluster_roles: Iterable[dict[str, Any]]) -> dict[str, list[Rule]]:
    """ClusterRole name -> its effective rules, aggregation applied to a fixed point."""
    roles = {r["metadata"]["name"]: r for r in cluster_roles}
    aggregated = {name: (r.get("aggregationRule") or {}).get("clusterRoleSelectors") or [] for name, r in roles.items() if "aggregationRule" in r}
    rules = {name: [] if name in aggregated else list(r.get("rules") or []) for name, r in roles.items()}
    changed = True
    while changed:
        changed = False
        for name, selectors in aggregated.items():
            union: list[Rule] = []
            for selector in selectors:
                for other in sorted(roles):
                    if other != name and selects(selector, roles[other]["metadata"].get("labels") or {}):
                        union += [rule for rule in rules[other] if rule not in union]
            if union != rules[name]:
                rules[name], changed = union, True
    return rules


def _has(values: Iterable[str], value: str) -> bool:
    values = list(values)
    return "*" in values or value in values


def _resource_matches(rule: Rule, request: Request) -> bool:
    combined = f"{request.resource}/{request.subresource}" if request.subresource else request.resource
    for resource in rule.get("resources") or []:
        if resource in ("*", combined):
            return True
        if request.subresource and resource == f"*/{request.subresource}":
            return True
    return False


def _url_matches(rule: Rule, path: str) -> bool:
    for url in rule.get("nonResourceURLs") or []:
        if url in ("*", path) or (url.endswith("*") and path.startswith(url.rstrip("*"))):
            return True
    return False


def rule_allows(rule: Rule, request: Request) -> bool:
    if not _has(rule.get("verbs") or [], request.verb):
        return False
    if request.path:
        return _url_matches(rule, request.path)
    names = rule.get("resourceNames") or []
    return (
        _has(rule.get("apiGroups") or [], request.group)
        and _resource_matches(rule, request)
        and (not names or request.name in names)
    )


def _applies(subject: dict[str, Any], who: UserInfo, namespace: str) -> bool:
    kind = subject.get("kind")
    if kind == "User":
        return bool(subject.get("name") == who.name)
    if kind == "Group":
        return subject.get("name") in who.groups
    if kind == "ServiceAccount":
        sa_namespace = subject.get("namespace") or namespace
        return bool(sa_namespace) and who.name == f"{SERVICE_ACCOUNT_PREFIX}{sa_namespace}:{subject.get('name')}"
    return False


@dataclass
class Authorizer:
    """The RBAC objects of a cluster, and the decisions they make."""

    objects: Iterable[dict[str, Any]]
    cluster_roles: dict[str, list[Rule]] = field(init=False)
    roles: dict[tuple[str, str], list[Rule]] = field(init=False)
    bindings: list[dict[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        objects = list(self.objects)
        self.cluster_roles = resolve(o for o in objects if o.get("kind") == "ClusterRole")
        self.roles = {
            (o["metadata"].get("namespace", ""), o["metadata"]["name"]): list(o.get("rules") or [])
            for o in objects
            if o.get("kind") == "Role"
        }
        self.bindings = [o for o in objects if o.get("kind") in ("RoleBinding", "ClusterRoleBinding")]

    def _rules(self, binding: dict[str, Any]) -> list[Rule]:
        ref = binding["roleRef"]
        if ref.get("kind") == "ClusterRole":
            return self.cluster_roles.get(ref["name"], [])
        if ref.get("kind") == "Role" and binding["kind"] == "RoleBinding":
            return self.roles.get((binding["metadata"].get("namespace", ""), ref["name"]), [])
        return []  # a ClusterRoleBinding to a Role is invalid: it grants nothing

    def allows(self, who: UserInfo, request: Request) -> bool:
        for binding in self.bindings:
            if binding["kind"] == "ClusterRoleBinding":
                scope = ""
            elif request.namespace and not request.path and binding["metadata"].get("namespace") == request.namespace:
                scope = request.namespace
            else:
                continue
            subjects = binding.get("subjects") or []
            if any(_applies(s, who, scope) for s in subjects) and any(rule_allows(r, request) for r in self._rules(binding)):
                return True
        return False
