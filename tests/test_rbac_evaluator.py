"""The offline RBAC evaluator (tests/support/rbac.py) decides as the API server does:
one literal case per rule of Kubernetes' RBAC authorizer and aggregation controller."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.rbac import Authorizer, Request, UserInfo, resolve, rule_allows, service_account, user
from tooling.check import selects


def cluster_role(name: str, rules: list[dict[str, Any]], labels: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"kind": "ClusterRole", "metadata": {"name": name, "labels": labels or {}}, "rules": rules, **extra}


def binding(kind: str, role: tuple[str, str], subjects: list[dict[str, str]], namespace: str | None = None) -> dict[str, Any]:
    metadata = {"name": f"{role[1]}-binding"} | ({"namespace": namespace} if namespace else {})
    return {"kind": kind, "metadata": metadata, "roleRef": {"kind": role[0], "name": role[1]}, "subjects": subjects}


READ_PODS = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}
ANA = user("ana@acme.com")


# --- rules ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "request_", "allowed"),
    [
        (READ_PODS, Request("get", "", "pods", namespace="a"), True),
        (READ_PODS, Request("delete", "", "pods", namespace="a"), False),
        (READ_PODS, Request("get", "apps", "pods", namespace="a"), False),  # the group counts
        (READ_PODS, Request("get", "", "pods", subresource="log", namespace="a"), False),  # pods is not pods/log
        ({**READ_PODS, "verbs": ["*"]}, Request("delete", "", "pods", namespace="a"), True),
        ({**READ_PODS, "apiGroups": ["*"]}, Request("get", "apps", "pods", namespace="a"), True),
        ({**READ_PODS, "resources": ["*"]}, Request("get", "", "secrets", namespace="a"), True),
        ({**READ_PODS, "resources": ["*"]}, Request("get", "", "pods", subresource="log", namespace="a"), True),
        ({**READ_PODS, "resources": ["pods/log"]}, Request("get", "", "pods", subresource="log", namespace="a"), True),
        ({**READ_PODS, "resources": ["pods/log"]}, Request("get", "", "pods", namespace="a"), False),
        ({**READ_PODS, "resources": ["*/scale"]}, Request("get", "", "deployments", subresource="scale", namespace="a"), True),
        ({**READ_PODS, "resources": ["*/scale"]}, Request("get", "", "deployments", namespace="a"), False),
        ({**READ_PODS, "resources": ["*/scale"]}, Request("get", "", "pods", subresource="log", namespace="a"), False),
        ({**READ_PODS, "resourceNames": ["web"]}, Request("get", "", "pods", name="web", namespace="a"), True),
        ({**READ_PODS, "resourceNames": ["web"]}, Request("get", "", "pods", name="db", namespace="a"), False),
        # a list names no object: a rule limited to names never allows it
        ({**READ_PODS, "resourceNames": ["web"]}, Request("list", "", "pods", namespace="a"), False),
        ({**READ_PODS, "resourceNames": ["*"]}, Request("get", "", "pods", name="web", namespace="a"), False),  # no wildcard
    ],
)
def test_resource_rules(rule: dict[str, Any], request_: Request, allowed: bool) -> None:
    assert rule_allows(rule, request_) is allowed


@pytest.mark.parametrize(
    ("urls", "path", "allowed"),
    [
        (["/metrics"], "/metrics", True),
        (["/metrics"], "/metrics/cadvisor", False),
        (["/healthz/*"], "/healthz/etcd", True),
        (["/healthz/*"], "/healthz", False),
        (["/api*"], "/apis/apps", True),  # a trailing * is a plain prefix
        (["*"], "/anything", True),
    ],
)
def test_non_resource_rules(urls: list[str], path: str, allowed: bool) -> None:
    assert rule_allows({"nonResourceURLs": urls, "verbs": ["get"]}, Request("get", path=path)) is allowed


def test_a_non_resource_rule_allows_no_resource_and_a_resource_rule_no_url() -> None:
    assert not rule_allows({"nonResourceURLs": ["*"], "verbs": ["*"]}, Request("get", "", "pods", namespace="a"))
    assert not rule_allows({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}, Request("get", path="/metrics"))


def test_a_request_names_a_resource_or_a_path() -> None:
    with pytest.raises(ValueError, match="either a resource or a non-resource path"):
        Request("get", "", "pods", path="/metrics")


# --- subjects --------------------------------------------------------------------------------


def test_authenticated_users_and_service_accounts_carry_their_groups() -> None:
    assert UserInfo("ana@acme.com", frozenset({"system:authenticated"})) == ANA
    assert service_account("vision", "default-editor") == UserInfo(
        "system:serviceaccount:vision:default-editor",
        frozenset({"system:serviceaccounts", "system:serviceaccounts:vision", "system:authenticated"}),
    )


@pytest.mark.parametrize(
    ("subject", "who", "allowed"),
    [
        ({"kind": "User", "name": "ana@acme.com"}, ANA, True),
        ({"kind": "User", "name": "bo@acme.com"}, ANA, False),
        ({"kind": "Group", "name": "system:authenticated"}, ANA, True),
        ({"kind": "Group", "name": "system:authenticated"}, UserInfo("system:anonymous"), False),
        ({"kind": "Group", "name": "ml-team"}, user("ana@acme.com", "ml-team"), True),
        ({"kind": "Group", "name": "ml-team"}, ANA, False),
        ({"kind": "Group", "name": "system:serviceaccounts"}, service_account("nlp", "x"), True),
        ({"kind": "Group", "name": "system:serviceaccounts:vision"}, service_account("vision", "x"), True),
        ({"kind": "Group", "name": "system:serviceaccounts:vision"}, service_account("nlp", "x"), False),
        ({"kind": "ServiceAccount", "name": "x", "namespace": "vision"}, service_account("vision", "x"), True),
        ({"kind": "ServiceAccount", "name": "x", "namespace": "vision"}, service_account("nlp", "x"), False),
        ({"kind": "ServiceAccount", "name": "x", "namespace": "vision"}, service_account("vision", "y"), False),
        # a user named like a service account is that service account (the name is the identity)
        ({"kind": "ServiceAccount", "name": "x", "namespace": "vision"}, UserInfo("system:serviceaccount:vision:x"), True),
    ],
)
def test_subjects_of_a_role_binding(subject: dict[str, str], who: UserInfo, allowed: bool) -> None:
    cluster = Authorizer([cluster_role("reader", [READ_PODS]), binding("RoleBinding", ("ClusterRole", "reader"), [subject], "vision")])
    assert cluster.allows(who, Request("get", "", "pods", namespace="vision")) is allowed


def test_a_service_account_subject_without_namespace_is_the_bindings_own() -> None:
    subject = {"kind": "ServiceAccount", "name": "x"}
    cluster = Authorizer([cluster_role("reader", [READ_PODS]), binding("RoleBinding", ("ClusterRole", "reader"), [subject], "vision")])
    assert cluster.allows(service_account("vision", "x"), Request("get", "", "pods", namespace="vision"))
    # ... and, in a ClusterRoleBinding, no one's
    everywhere = Authorizer([cluster_role("reader", [READ_PODS]), binding("ClusterRoleBinding", ("ClusterRole", "reader"), [subject])])
    assert not everywhere.allows(service_account("vision", "x"), Request("get", "", "pods", namespace="vision"))


# --- bindings and their scope ------------------------------------------------------------------


def test_a_role_binding_to_a_cluster_role_grants_it_in_its_namespace_only() -> None:
    cluster = Authorizer(
        [cluster_role("reader", [READ_PODS]), binding("RoleBinding", ("ClusterRole", "reader"), [{"kind": "User", "name": "ana@acme.com"}], "vision")]
    )
    assert cluster.allows(ANA, Request("get", "", "pods", namespace="vision"))
    assert not cluster.allows(ANA, Request("get", "", "pods", namespace="nlp"))
    assert not cluster.allows(ANA, Request("get", "", "pods"))  # across namespaces (namespace "") needs a ClusterRoleBinding


def test_a_cluster_role_binding_grants_everywhere_and_cluster_scoped_resources() -> None:
    rules = [{"apiGroups": [""], "resources": ["namespaces", "pods"], "verbs": ["get"]}]
    cluster = Authorizer([cluster_role("reader", rules), binding("ClusterRoleBinding", ("ClusterRole", "reader"), [{"kind": "User", "name": "ana@acme.com"}])])
    assert cluster.allows(ANA, Request("get", "", "pods", namespace="nlp"))
    assert cluster.allows(ANA, Request("get", "", "namespaces", name="nlp"))


def test_a_role_binding_grants_no_cluster_scoped_resource_nor_url() -> None:
    rules = [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}, {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    subject = [{"kind": "User", "name": "ana@acme.com"}]
    scoped = Authorizer([cluster_role("r", rules), binding("RoleBinding", ("ClusterRole", "r"), subject, "vision")])
    assert not scoped.allows(ANA, Request("get", "", "namespaces", name="vision"))
    assert not scoped.allows(ANA, Request("get", path="/metrics"))
    everywhere = Authorizer([cluster_role("r", rules), binding("ClusterRoleBinding", ("ClusterRole", "r"), subject)])
    assert everywhere.allows(ANA, Request("get", path="/metrics"))


def test_a_role_binding_to_a_role_uses_the_role_of_its_own_namespace() -> None:
    subject = [{"kind": "User", "name": "ana@acme.com"}]
    role = {"kind": "Role", "metadata": {"name": "reader", "namespace": "vision"}, "rules": [READ_PODS]}
    cluster = Authorizer([role, binding("RoleBinding", ("Role", "reader"), subject, "vision"), binding("RoleBinding", ("Role", "reader"), subject, "nlp")])
    assert cluster.allows(ANA, Request("get", "", "pods", namespace="vision"))
    assert not cluster.allows(ANA, Request("get", "", "pods", namespace="nlp")), "nlp has no Role named reader"


def test_a_cluster_role_binding_to_a_role_grants_nothing() -> None:
    role = {"kind": "Role", "metadata": {"name": "reader", "namespace": "vision"}, "rules": [READ_PODS]}
    cluster = Authorizer([role, binding("ClusterRoleBinding", ("Role", "reader"), [{"kind": "User", "name": "ana@acme.com"}])])
    assert not cluster.allows(ANA, Request("get", "", "pods", namespace="vision"))


def test_a_binding_to_a_missing_role_grants_nothing() -> None:
    cluster = Authorizer([binding("ClusterRoleBinding", ("ClusterRole", "nothing"), [{"kind": "User", "name": "ana@acme.com"}])])
    assert not cluster.allows(ANA, Request("get", "", "pods", namespace="vision"))


# --- aggregation ------------------------------------------------------------------------------


WRITE_JOBS = {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create"]}


def test_an_aggregated_role_has_the_rules_of_the_roles_it_selects_and_not_its_own() -> None:
    roles = [
        cluster_role("edit", [READ_PODS], aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"to-edit": "true"}}]}),
        cluster_role("jobs", [WRITE_JOBS], {"to-edit": "true"}),
        cluster_role("other", [READ_PODS], {"to-edit": "false"}),
    ]
    assert resolve(roles)["edit"] == [WRITE_JOBS]  # the controller overwrites the role's own rules


def test_aggregation_follows_aggregated_roles_to_a_fixed_point() -> None:
    roles = [
        cluster_role("admin", [], aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"to-admin": "true"}}]}),
        cluster_role("edit", [], {"to-admin": "true"}, aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"to-edit": "true"}}]}),
        cluster_role("jobs", [WRITE_JOBS], {"to-edit": "true"}),
        cluster_role("pods", [READ_PODS], {"to-admin": "true"}),
    ]
    assert resolve(roles) == {"admin": [WRITE_JOBS, READ_PODS], "edit": [WRITE_JOBS], "jobs": [WRITE_JOBS], "pods": [READ_PODS]}


def test_aggregation_selects_with_match_expressions_and_keeps_each_rule_once() -> None:
    selector = {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}, {"key": "legacy", "operator": "DoesNotExist"}]}
    roles = [
        cluster_role("agg", [], aggregationRule={"clusterRoleSelectors": [selector, {"matchLabels": {"tier": "a"}}]}),
        cluster_role("a", [READ_PODS], {"tier": "a"}),
        cluster_role("b", [READ_PODS, WRITE_JOBS], {"tier": "b"}),
        cluster_role("old", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}], {"tier": "a", "legacy": "yes"}),
    ]
    assert resolve(roles)["agg"] == [READ_PODS, WRITE_JOBS, {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
    # (the second selector, matchLabels tier=a, brings `old` back in: selectors are OR-ed)


# --- label selectors (tooling.check.selects, shared with the check rules) ----------------------


@pytest.mark.parametrize(
    ("selector", "labels", "selected"),
    [
        ({}, {}, True),
        ({}, {"a": "1"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
        ({"matchLabels": {"a": "1"}}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {"a": "2"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {"a": "1"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),  # absent key: selected
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""}, True),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"b": "1"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"b": "1"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": "1"}, False),
        # matchLabels and every expression are AND-ed
        ({"matchLabels": {"a": "1"}, "matchExpressions": [{"key": "b", "operator": "Exists"}]}, {"a": "1"}, False),
    ],
)
def test_label_selector_semantics(selector: dict[str, Any], labels: dict[str, str], selected: bool) -> None:
    assert selects(selector, labels) is selected


def test_an_unknown_selector_operator_is_an_error() -> None:
    with pytest.raises(ValueError, match="operator 'Gt' on 'a'"):
        selects({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}, {"a": "2"})
