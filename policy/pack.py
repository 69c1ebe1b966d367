"""The live adapter: each rule of `rules.py` as a mandatory pulumi_policy StackValidationPolicy.

pulumi_policy hands stack policies their properties with secrets silently unwrapped
(pulumi/pulumi-policy#241: a policy cannot tell a secret), although the engine sends them
marked. `keep_secrets_marked` makes its deserializer keep the mark, and `to_plain` turns
marked values into SECRET leaves and preview unknowns into UNKNOWN, as the offline plan does.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import pulumi_policy
from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
    proxy,
)
from pulumi_policy import policy as policy_module
from pulumi_policy.secret import Secret

from facts.resource_types import STACK
from policy.rules import RULES, SECRET, UNKNOWN, Resource, Rule, StackView

PACK_NAME = "mlplatform-guardrails"


def keep_secrets_marked() -> None:
    """Make AnalyzeStack deserialize with secrets kept as `Secret` objects (idempotent)."""
    current = policy_module.deserialize_properties
    if getattr(current, "keeps_secrets", False):
        return
    patched: Any = functools.partial(current, proxy_secrets=True)
    patched.keeps_secrets = True
    policy_module.deserialize_properties = patched


PREVIEW_UNKNOWNS = frozenset(
    {
        proxy.UNKNOWN_BOOLEAN_VALUE,
        proxy.UNKNOWN_NUMBER_VALUE,
        proxy.UNKNOWN_STRING_VALUE,
        proxy.UNKNOWN_ARRAY_VALUE,
        proxy.UNKNOWN_ASSET_VALUE,
        proxy.UNKNOWN_ARCHIVE_VALUE,
        proxy.UNKNOWN_OBJECT_VALUE,
    }
)
"""The sentinels pulumi_policy hands a policy for values unknown during a preview, one per type."""


def is_unknown(value: Any) -> bool:
    return isinstance(value, str) and value in PREVIEW_UNKNOWNS


def _raw(value: Any) -> Any:
    """The plain dict or list under pulumi_policy's proxies (their `__target` key)."""
    while isinstance(value, (Mapping, Sequence)) and not isinstance(value, (dict, list, tuple, str)):
        proxy: Any = value
        value = proxy["__target"]
    return value


def to_plain(value: Any, secret: bool = False) -> Any:
    """Dicts and lists with SECRET for every leaf inside a secret and UNKNOWN for unknowns."""
    value = _raw(value)
    if isinstance(value, Secret):
        return to_plain(value.value, secret=True)
    if isinstance(value, dict):
        return {k: to_plain(v, secret) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v, secret) for v in value]
    if is_unknown(value):
        return UNKNOWN
    return SECRET if secret else value


def stack_view(args: StackValidationArgs) -> StackView:
    resources = []
    outputs: Mapping[str, Any] = {}
    for r in args.resources:
        props = to_plain(r.props)
        if r.resource_type == STACK:
            outputs = props
            continue
        resources.append(Resource(r.resource_type, r.name, r.urn, props, bool(r.opts.protect)))
    return StackView(resources=resources, outputs=outputs, live=True)


def stack_policy(rule: Rule) -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        for violation in rule(stack_view(args)):
            report(violation.message, None if violation.resource == "stack" else violation.resource)

    return StackValidationPolicy(
        name=rule.name,
        description=rule.description,
        validate=validate,
        enforcement_level=EnforcementLevel.MANDATORY,
    )


def policies() -> list[pulumi_policy.Policy]:
    return [stack_policy(rule) for rule in RULES]


def serve() -> None:
    """Start the policy pack server the Pulumi CLI talks to (blocks)."""
    keep_secrets_marked()
    pulumi_policy.PolicyPack(name=PACK_NAME, policies=policies(), enforcement_level=EnforcementLevel.MANDATORY)
