"""A small RBAC evaluator: which verbs a user has in a namespace, given ClusterRoles (with
aggregation resolved the way the API server's aggregation controller does) and
RoleBindings. Used to check the access matrix of team namespaces offline, against
Kubeflow's own aggregated roles (../shared/upstream/kubeflow-roles)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from tooling.check import selects
from tooling.schemas import REPO, load_all

UPSTREAM_ROLES = REPO.parent / "shared" / "upstream" / "kubeflow-roles"


def upstream_cluster_roles() -> list[dict[str, Any]]:
    roles = []
    for path in sorted(UPSTREAM_ROLES.glob("*.yaml")):
        roles += [d for d in load_all(path.read_text()) if d.get("kind") == "ClusterRole"]
    return roles


def resolve(cluster_roles: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """ClusterRole name -> its effective rules, aggregation applied to a fixed point."""
    roles = {r["metadata"]["name"]: r for r in cluster_roles}
    rules = {name: list(r.get("rules") or []) for name, r in roles.items()}
    changed = True
    while changed:
        changed = False
        for name, role in roles.items():
            selectors = (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []
            for other_name, other in roles.items():
                labels = other["metadata"].get("labels") or {}
                if other_name != name and any(selects(s, labels) for s in selectors):
                    for rule in rules[other_name]:
                        if rule not in rules[name]:
                            rules[name].append(rule)
                            changed = True
    return rules


def _allows(rule: dict[str, Any], verb: str, group: str, resource: str) -> bool:
    def has(values: list[str], value: str) -> bool:
        return "*" in values or value in values

    return has(rule.get("verbs", []), verb) and has(rule.get("apiGroups", []), group) and has(
        rule.get("resources", []), resource
    )


def allowed(
    rules_by_role: dict[str, list[dict[str, Any]]],
    bindings: Iterable[dict[str, Any]],
    user: str,
    namespace: str,
    verb: str,
    group: str,
    resource: str,
) -> bool:
    for binding in bindings:
        if binding["kind"] != "RoleBinding" or binding["metadata"].get("namespace") != namespace:
            continue
        if not any(s["kind"] == "User" and s["name"] == user for s in binding["subjects"]):
            continue
        role = binding["roleRef"]["name"]
        if any(_allows(rule, verb, group, resource) for rule in rules_by_role.get(role, [])):
            return True
    return False
