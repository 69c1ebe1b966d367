"""The access matrix: from the teams in the stack config, which verbs each person may use
in each team namespace, to be checked with SubjectAccessReviews.

Roles, as KFAM and the profile controller bind them: the owner gets kubeflow-admin, a
contributor kubeflow-edit or kubeflow-view, anyone else nothing. A group contributor's
members get its role (admin as an owner does), the strongest of their entries counting. The actions below are
chosen so each role differs from the next (kubeflow/manifests 26.03 common/kubeflow-roles,
plus the Trainer and KubeRay roles aggregated into them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from stackmodel.schema import Team

Membership = Literal["owner", "edit", "view", "outsider"]
EVERY_MEMBER: frozenset[Membership] = frozenset({"owner", "edit", "view"})
WRITERS: frozenset[Membership] = frozenset({"owner", "edit"})


@dataclass(frozen=True)
class Action:
    verb: str
    group: str
    resource: str
    allowed_for: frozenset[Membership]


ACTIONS = (
    Action("get", "", "pods", EVERY_MEMBER),
    Action("create", "", "pods", WRITERS),
    Action("get", "", "secrets", WRITERS),
    Action("list", "trainer.kubeflow.org", "trainjobs", EVERY_MEMBER),
    Action("create", "trainer.kubeflow.org", "trainjobs", WRITERS),
    Action("delete", "trainer.kubeflow.org", "trainjobs", WRITERS),
    Action("list", "ray.io", "rayjobs", EVERY_MEMBER),
    Action("create", "ray.io", "rayclusters", WRITERS),
    Action("create", "rbac.authorization.k8s.io", "rolebindings", frozenset({"owner"})),
)


@dataclass(frozen=True)
class AccessCheck:
    user: str
    membership: Membership
    namespace: str
    verb: str
    group: str
    resource: str
    allowed: bool

    def __str__(self) -> str:
        resource = f"{self.resource}.{self.group}" if self.group else self.resource
        expected = "allowed" if self.allowed else "denied"
        return f"{self.user} ({self.membership}) {self.verb} {resource} in {self.namespace}: should be {expected}"


RANK: dict[Membership, int] = {"outsider": 0, "view": 1, "edit": 2, "owner": 3}
ROLE_MEMBERSHIP: dict[str, Membership] = {"admin": "owner", "edit": "edit", "view": "view"}


def membership(team: Team, email: str, groups: Mapping[str, Iterable[str]] | None = None) -> Membership:
    """The person's strongest entry in the team: as owner, as a person, or through a group
    contributor whose members (`groups`: group name -> members) include them."""
    address = email.lower()
    if address == team.owner.lower():
        return "owner"
    found: list[Membership] = ["outsider"]
    for contributor in team.contributors:
        if (contributor.email is not None and contributor.email.lower() == address) or (contributor.group is not None and address in {m.lower() for m in (groups or {}).get(contributor.group, ())}):
            found.append(ROLE_MEMBERSHIP[contributor.role.value])
    return max(found, key=RANK.__getitem__)


def access_matrix(
    teams: Sequence[Team],
    people: Iterable[str],
    actions: Sequence[Action] = ACTIONS,
    groups: Mapping[str, Iterable[str]] | None = None,
) -> list[AccessCheck]:
    """Every (person, team namespace, action) with whether it must be allowed. `people`
    are everyone who can sign in; members of other teams are outsiders here; `groups`: the
    stack's groups and their members."""
    everyone = sorted(set(people) | {t.owner for t in teams} | {str(c.email) for t in teams for c in t.people})
    return [
        AccessCheck(
            user=person,
            membership=membership(team, person, groups),
            namespace=team.name,
            verb=action.verb,
            group=action.group,
            resource=action.resource,
            allowed=membership(team, person, groups) in action.allowed_for,
        )
        for team in teams
        for person in everyone
        for action in actions
    ]


def can_i(kubeconfig: str, check: AccessCheck, as_group: str | None = None) -> list[str]:
    """`kubectl auth can-i` for `check`, impersonating its user and, with `as_group`, the group
    an authenticator would have given them (on GKE, Google Groups for RBAC): exit 0 for yes,
    1 for no (kubectl auth can-i --help, "--quiet")."""
    resource = f"{check.resource}.{check.group}" if check.group else check.resource
    command = ["kubectl", "--kubeconfig", kubeconfig, "auth", "can-i", check.verb, resource, "-n", check.namespace, "--as", check.user]
    return command + (["--as-group", as_group] if as_group else []) + ["--quiet"]
