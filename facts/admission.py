"""The binding that puts one of our ValidatingAdmissionPolicies in force: every policy the
platform writes denies (no warn or audit), in the namespaces a selector picks (one team's, or
every team's)."""

from __future__ import annotations

from typing import Any

from facts.labels import namespace_selector


def deny_binding(name: str, policy: str, selector: dict[str, Any]) -> dict[str, Any]:
    """A ValidatingAdmissionPolicyBinding `name` of `policy`, denying in the namespaces `selector` picks."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": policy, "validationActions": ["Deny"], "matchResources": {"namespaceSelector": selector}},
    }


def team_binding(policy: str, namespace: str) -> dict[str, Any]:
    """`policy` in force in one team namespace, bound as `<namespace>-<policy>`."""
    return deny_binding(f"{namespace}-{policy}", policy, namespace_selector(namespace))
