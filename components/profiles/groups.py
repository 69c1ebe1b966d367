"""A team's group contributors: the objects that give every member of a group the group's role,
on each surface in the way that surface checks who someone is (docs/teams.md, "Groups").

- The group's own RoleBinding and AuthorizationPolicy, named and annotated as kubeflow/dashboard
  PR #317 (open, 2026-06) writes them for a group added through "Manage contributors"
  (`group-<group>-clusterrole-<role>`, annotations `group` and `role`, a `Group` subject), so a
  dashboard that learns groups shows and removes them. The Group subject is what kubectl matches
  live: on GKE through Google Groups for RBAC (infra/gke.py, `securityGroup`), elsewhere through
  whatever authenticator hands the API server groups. Its AuthorizationPolicy lets the gateway
  act for the members in the team's sidecars; a sidecar sees no token claims (the Dex token is
  verified at the gateway only) and the `kubeflow-groups` header is one comma-joined string
  Istio cannot search, so the policy names the members the stack lists by `kubeflow-userid`, as
  KFAM's do, and the gateway follows a provider group's claim live (components/access.py).
- One RoleBinding per member as KFAM writes a person's (`user-<e-mail>-clusterrole-<role>`,
  annotations `user` and `role`, one User subject): the notebooks, volumes and tensorboards web
  apps (kubeflow/notebooks v1.11.0 crud-web-apps common/backend/kubeflow/kubeflow/crud_backend/
  authz.py: a SubjectAccessReview with `user` only) and the Pipelines API server (kubeflow/pipelines
  2.16.1 backend/src/apiserver/resource/resource_manager.go IsAuthorized: the same) review the
  user alone, without groups, and today's dashboard lists a person's namespaces from the bindings
  annotated with them (kubeflow/dashboard v2.0.0 access-management kfam/bindings.go List). These
  carry `mlplatform.io/groups` too: the groups of the team that grant them. They follow the
  members the stack lists, so they change at the next `pulumi up` (and `python -m stacks plan
  --against` shows the ones that go).

A Google group (`source: cloudIdentity`, GKE) has its members read from Cloud Identity at every
`pulumi up` (infra/cloud_identity.py), and they reach these objects as a stack group's do;
kubectl follows the group itself (docs/teams.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from components.access import GATEWAY_PRINCIPALS, USER_HEADER, LiveGrant, identities, team_gateway_policy
from components.istio import GATEWAY_NAMESPACE
from components.profiles.args import TeamArgs, TeamGroup
from components.profiles.namespace import CLUSTER_ROLES, RBAC
from facts.naming import contributor_binding_name, kfam_binding_name, ray_dashboard_path
from stackmodel.schema import Role
from stackmodel.schema import Team as TeamConfig

GROUP_ANNOTATION = "group"
"""PR #317's annotation of a group's binding (beside `role`), as `user` is a person's."""
GRANTED_BY = "mlplatform.io/groups"
"""On a member's binding: the groups of this team that grant it, comma-separated."""
WRITING_ROLES = (Role.ADMIN, Role.EDIT)


def group_binding_name(group: str, role: Role) -> str:
    return contributor_binding_name(group, role.value, "group")


def _meta(team: TeamConfig, name: str, annotations: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "namespace": team.name, "annotations": annotations}


def _binding(team: TeamConfig, name: str, annotations: dict[str, str], role: Role, subject: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "RoleBinding",
        "metadata": _meta(team, name, annotations),
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": CLUSTER_ROLES[role.value]},
        "subjects": [{"apiGroup": RBAC, **subject}],
    }


def group_objects(team: TeamConfig, group: TeamGroup) -> list[dict[str, Any]]:
    """The group's RoleBinding (a Group subject) and AuthorizationPolicy, as PR #317 names them."""
    name = group_binding_name(group.name, group.role)
    annotations = {GROUP_ANNOTATION: group.name, "role": group.role.value}
    people = identities(m for m in group.members if m.lower() != team.owner.lower())
    # No members listed: no rule, which matches nothing (ALLOW policies only add, and the
    # namespace has others); the object stays for the dashboard to show the group.
    rules = (
        [{"from": [{"source": {"principals": list(GATEWAY_PRINCIPALS)}}], "when": [{"key": f"request.headers[{USER_HEADER}]", "values": people}]}]
        if people
        else []
    )
    return [
        _binding(team, name, annotations, group.role, {"kind": "Group", "name": group.name}),
        {"apiVersion": "security.istio.io/v1beta1", "kind": "AuthorizationPolicy", "metadata": _meta(team, name, annotations), "spec": {"rules": rules}},
    ]


def member_bindings(team: TeamConfig, groups: Sequence[TeamGroup]) -> list[dict[str, Any]]:
    """A RoleBinding per member and role, named as KFAM names a person's, in the order members
    first appear. Left out: the owner (kubeflow-admin already), and a person the team lists with
    that very role, whose own binding has that name: stackmodel/rules/ refuses it for a stack's
    groups, and a cloudIdentity group's members, read at `pulumi up`, are not the stack's to edit."""
    people = _person_roles(team)
    granted: dict[tuple[str, Role], list[str]] = {}
    for group in groups:
        for member in group.members:
            if member.lower() != team.owner.lower() and group.role not in people.get(member.lower(), set()):
                granted.setdefault((member, group.role), []).append(group.name)
    return [
        _binding(
            team,
            kfam_binding_name(member, role.value),
            {"user": member, "role": role.value, GRANTED_BY: ",".join(names)},
            role,
            {"kind": "User", "name": member},
        )
        for (member, role), names in granted.items()
    ]


def _person_roles(team: TeamConfig) -> dict[str, set[Role]]:
    roles: dict[str, set[Role]] = {team.owner.lower(): {Role.ADMIN}}
    for person in team.people:
        roles.setdefault(str(person.email).lower(), set()).add(person.role)
    return roles


def writers(args: TeamArgs) -> list[str]:
    """Who may act (not only read) on the team's routes, as the sidecars' policies name them: the
    owner, `edit` contributors, and the listed members of its admin and edit groups."""
    team = args.team
    people = [team.owner] + [str(c.email) for c in team.people if c.role is Role.EDIT]
    return people + [m for g in args.groups if g.role in WRITING_ROLES for m in g.members]


def readers(args: TeamArgs) -> list[str]:
    """Everyone the team lets in, as the gateway's policies name them: the owner, every
    contributor of any role, and the listed members of every group of the team."""
    team = args.team
    return [team.owner] + [str(c.email) for c in team.people] + [m for g in args.groups for m in g.members]


def live_grants(args: TeamArgs) -> tuple[list[LiveGrant], list[LiveGrant]]:
    """(readers, writers): the listed members of the team's provider groups whose access (any, or
    writing) rests on those groups alone, each with the groups that give it them; members with
    the same groups share one grant."""
    person = _person_roles(args.team)

    def grants(roles: Iterable[Role]) -> list[LiveGrant]:
        roles = tuple(roles)
        static: set[str] = {m for m, r in person.items() if r & set(roles)}
        static |= {m.lower() for g in args.groups if not g.live and g.role in roles for m in g.members}
        by_member: dict[str, list[str]] = {}
        for group in args.groups:
            if group.live and group.role in roles:
                for member in group.members:
                    if member.lower() not in static:
                        by_member.setdefault(member, []).append(group.name)
        shared: dict[tuple[str, ...], list[str]] = {}
        for member, names in by_member.items():
            shared.setdefault(tuple(sorted(set(names))), []).append(member)
        return [LiveGrant(members=tuple(members), groups=names) for names, members in shared.items()]

    return grants(tuple(Role)), grants(WRITING_ROLES)


def group_access_objects(args: TeamArgs) -> list[dict[str, Any]]:
    """Every object of the team's group contributors: each group's pair, each member's binding,
    and at the gateway the live check of its provider groups."""
    team = args.team
    objects = [obj for group in args.groups for obj in group_objects(team, group)]
    objects += member_bindings(team, args.groups)
    readers, writers_ = live_grants(args)
    if readers or writers_:
        dashboards = [ray_dashboard_path(team.name, team.ray.name)] if team.ray else []
        objects.append(team_gateway_policy(GATEWAY_NAMESPACE, team.name, dashboards, readers, writers_))
    return objects
