"""The offline adapter: an evaluated plan (tooling.plan) as the rules' neutral resource list.

The plan already masks secrets with the same SECRET leaf the rules expect.
"""

from __future__ import annotations

from policy.rules import SECRET, Resource, StackView, Violation, check
from tooling.plan import SECRET as PLAN_SECRET
from tooling.plan import Plan

assert SECRET == PLAN_SECRET, "the plan and the rules must mask secrets alike"


def stack_view(plan: Plan) -> StackView:
    resources = [Resource(r.type, r.name, r.urn, r.inputs, r.protect) for r in plan.resources]
    return StackView(resources=resources, outputs=plan.outputs)


def violations(plan: Plan) -> list[Violation]:
    return check(stack_view(plan))
