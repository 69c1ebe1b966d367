"""Our ValidatingAdmissionPolicies and the bindings that put them in force. Every policy the
platform writes fails closed (an expression that cannot be evaluated refuses) and every binding
denies (no warn or audit), in the namespaces a selector picks (one team's, or every team's).
With the quoting of the values the policies' CEL names."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from facts.labels import PROFILE_NAMESPACE_LABEL, namespace_selector


def cel_string(value: str) -> str:
    """`value` as a CEL string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def cel_list(values: Iterable[str]) -> str:
    """`values` as a CEL list of string literals."""
    return "[" + ", ".join(cel_string(v) for v in values) + "]"


def cel_concat(text: str, parts: Mapping[str, str]) -> str:
    """`text` as a CEL string expression in which each key of `parts` found in it is the CEL
    expression (a string) that key maps to: a policy compares with a string the platform builds in
    Python from the object's own fields, `text` made by the same function with placeholders."""
    pieces = re.split("(" + "|".join(re.escape(key) for key in parts) + ")", text)
    return " + ".join(parts[piece] if piece in parts else cel_string(piece) for piece in pieces if piece)


SPEC_CHANGED = {
    "name": "spec-changed",
    "expression": "request.operation == 'CREATE' || has(object.spec) != has(oldObject.spec) || (has(object.spec) && object.spec != oldObject.spec)",
}
"""A policy's match condition where it judges an object's spec: a create, or an update that changes
the spec. An update of the rest (a controller adding or removing its finalizer, a label, a storage
migration's empty patch) is not judged, so an object made before the policy, or before the stack
narrowed its bounds, can still be deleted (its controller's finalizer removed) and migrated; a
change of its spec is judged in full."""


def fail_closed_policy(
    name: str,
    rules: list[dict[str, Any]],
    conditions: list[dict[str, str]],
    validations: list[dict[str, str]],
    variables: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """A ValidatingAdmissionPolicy `name` over the requests `rules` match and `conditions` select,
    refusing what one of `validations` finds false (`variables` named for them)."""
    spec: dict[str, Any] = {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": rules}, "matchConditions": conditions}
    if variables:
        spec["variables"] = variables
    spec["validations"] = validations
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name}, "spec": spec}


def deny_binding(name: str, policy: str, selector: dict[str, Any]) -> dict[str, Any]:
    """A ValidatingAdmissionPolicyBinding `name` of `policy`, denying in the namespaces `selector` picks."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": policy, "validationActions": ["Deny"], "matchResources": {"namespaceSelector": selector}},
    }


def teams_binding(policy: str) -> dict[str, Any]:
    """`policy` in force in every team namespace (the profile label), bound under its own name."""
    key, value = PROFILE_NAMESPACE_LABEL
    return deny_binding(policy, policy, {"matchLabels": {key: value}})


def team_binding(policy: str, namespace: str) -> dict[str, Any]:
    """`policy` in force in one team namespace, bound as `<namespace>-<policy>`."""
    return deny_binding(f"{namespace}-{policy}", policy, namespace_selector(namespace))
