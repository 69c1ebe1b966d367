"""What a plan would delete, against what is there before: `python -m stacks plan <stack>
--against PREVIOUS`, run before `pulumi up`.

PREVIOUS is what the stack had: the exported state of a deployed stack (`pulumi stack export`,
the truth), or a plan JSON (`python -m stacks plan <stack> --json` of the commit last
deployed, or tests/snapshots/plans/<stack>.json). A resource is deleted when the plan has it
neither under its URN nor as an alias. URNs are compared without their stack part, so a
stack file named `dev` matches a Pulumi stack `acme/ml-dev`.

A team that would go, or any protected resource, is reported loudly: the exit code is 4
unless each team that goes is named with `--allow-removal` (docs/teams.md, "Removing a team").
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tooling.plan import STACK_TYPE, Plan

TEAM_TYPE = "mlplatform:components:Team"
PROVIDER_PREFIX = "pulumi:providers:"
ACCESS_KINDS = ("RoleBinding", "AuthorizationPolicy")
"""Object kinds whose deletion takes someone's access away (the type's last part)."""


@dataclass(frozen=True)
class Previous:
    """One resource the stack had."""

    urn: str
    type: str
    parent: str | None
    protect: bool
    retain_on_delete: bool

    @property
    def name(self) -> str:
        return self.urn.rsplit("::", 1)[-1]


def previous_resources(document: Any) -> list[Previous]:
    """The resources of a state export ({"deployment": {"resources": ...}}) or a plan JSON
    ({"resources": ...}); a ValueError for anything else."""
    if isinstance(document, dict) and isinstance(document.get("deployment"), dict):
        raw = document["deployment"].get("resources") or []
    elif isinstance(document, dict) and isinstance(document.get("resources"), list):
        raw = document["resources"]
    else:
        raise ValueError("neither a state export (pulumi stack export) nor a plan (python -m stacks plan --json)")
    return [
        Previous(
            urn=r["urn"],
            type=r["type"],
            parent=r.get("parent") or None,
            protect=bool(r.get("protect")),
            retain_on_delete=bool(r.get("retainOnDelete")),
        )
        for r in raw
        if r.get("type") != STACK_TYPE and not r.get("delete")  # pending deletes are already going
    ]


def load_previous(text: str) -> list[Previous]:
    return previous_resources(json.loads(text))


def stackless(urn: str) -> str:
    """`urn:pulumi:<stack>::<project>::<type>::<name>` without its stack."""
    return urn.split("::", 1)[-1]


@dataclass
class Removals:
    """What the plan deletes of what was there."""

    deleted: list[Previous]
    teams: dict[str, list[Previous]] = field(default_factory=dict)
    """Each team whose Team component goes -> everything of it that goes."""

    @property
    def protected(self) -> list[Previous]:
        return [r for r in self.deleted if r.protect]

    @property
    def access_removed(self) -> list[Previous]:
        """The RoleBindings and AuthorizationPolicies that go from teams that stay: someone loses
        a role (a member who left a stack group, a contributor taken off; docs/teams.md, "Groups")."""
        of_teams = {r.urn for rs in self.teams.values() for r in rs}
        return [r for r in self.deleted if r.type.split(":")[-1] in ACCESS_KINDS and r.urn not in of_teams]

    def blocking(self, allowed: Iterable[str] = ()) -> list[str]:
        """The teams that go without being named in `allowed`."""
        return sorted(set(self.teams) - set(allowed))

    def alarming(self, allowed: Iterable[str] = ()) -> bool:
        """A team goes that is not allowed to, or a protected resource outside the allowed teams."""
        allowed = set(allowed)
        of_allowed = {r.urn for team in allowed for r in self.teams.get(team, [])}
        return bool(self.blocking(allowed)) or any(r.urn not in of_allowed for r in self.protected)


def removals(previous: list[Previous], plan: Plan) -> Removals:
    kept = {stackless(r.urn) for r in plan.resources} | {stackless(a) for r in plan.resources for a in r.aliases}
    deleted = [r for r in previous if stackless(r.urn) not in kept and not r.type.startswith(PROVIDER_PREFIX)]
    by_urn = {stackless(r.urn): r for r in previous}

    def team_of(resource: Previous) -> str | None:
        node: Previous | None = resource
        while node is not None:
            if node.type == TEAM_TYPE:
                return node.name
            node = by_urn.get(stackless(node.parent)) if node.parent else None
        return None

    teams: dict[str, list[Previous]] = {}
    gone_teams = {r.name for r in deleted if r.type == TEAM_TYPE}
    for resource in deleted:
        team = team_of(resource)
        if team in gone_teams:
            teams.setdefault(team, []).append(resource)
    return Removals(deleted=deleted, teams=teams)


def _what(resource: Previous) -> str:
    kind = resource.type.split(":")[-1]
    notes = [n for n, on in (("protected", resource.protect), ("kept in the cluster on delete", resource.retain_on_delete)) if on]
    return f"{kind} {resource.name}" + (f" ({', '.join(notes)})" if notes else "")


def report(found: Removals, against: str, allowed: Iterable[str] = ()) -> list[str]:
    """Lines for the operator; the alarming ones start with '!!'."""
    allowed = set(allowed)
    lines = [f"against {against}: {len(found.deleted)} resources would be deleted"]
    for team, resources in sorted(found.teams.items()):
        mark = "  " if team in allowed else "!!"
        lines.append(f"{mark} TEAM {team} WOULD BE REMOVED: {len(resources)} resources, among them")
        lines += [f"{mark}   {_what(r)}" for r in resources if r.protect or r.retain_on_delete or r.type.endswith(":Namespace")]
    protected = found.protected
    if protected:
        lines.append("!! pulumi up stops at these protected resources unless they are unprotected first:")
        lines += [f"!!   pulumi state unprotect '{r.urn}'" for r in protected]
    access = found.access_removed
    if access:
        lines.append(f"access that goes: {len(access)} bindings of teams that stay (a person left a group or the team)")
        lines += [f"   {_what(r)}" for r in access]
    others = [r for r in found.deleted if not any(r in rs for rs in found.teams.values()) and r not in access]
    if others:
        lines.append(f"other resources deleted: {len(others)}")
        lines += [f"   {_what(r)}" for r in others[:50]]
        if len(others) > 50:
            lines.append(f"   ... and {len(others) - 50} more")
    blocking = found.blocking(allowed)
    if blocking:
        lines.append(
            f"!! {', '.join(blocking)}: if the team is meant to go, follow docs/teams.md \"Removing a team\" "
            "and re-run with --allow-removal " + ",".join(blocking) + "; otherwise fix the stack file (mlplatform:teams)"
        )
    return lines
