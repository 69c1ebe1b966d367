"""The offline adapter: an evaluated plan (tooling.plan.Plan) as the rules' neutral resource list.

The plan already masks secrets with the rules' own SECRET leaf (tooling.plan imports it).
The plan is read through the protocols below, so the rules do not depend on the tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from policy.rules import Resource, StackView, Violation, check


class PlannedResource(Protocol):
    """What the adapter reads of one recorded resource (tooling.plan.Recorded)."""

    @property
    def type(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def urn(self) -> str: ...
    @property
    def inputs(self) -> Mapping[str, Any]: ...
    @property
    def protect(self) -> bool: ...


class PlannedStack(Protocol):
    """What the adapter reads of a plan (tooling.plan.Plan)."""

    @property
    def resources(self) -> Sequence[PlannedResource]: ...
    @property
    def outputs(self) -> Mapping[str, Any]: ...


def stack_view(plan: PlannedStack) -> StackView:
    resources = [Resource(r.type, r.name, r.urn, r.inputs, r.protect) for r in plan.resources]
    return StackView(resources=resources, outputs=plan.outputs)


def violations(plan: PlannedStack) -> list[Violation]:
    return check(stack_view(plan))
