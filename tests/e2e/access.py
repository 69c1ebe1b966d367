"""The access matrix: from the teams in the stack config, which verbs each person may use
in each team namespace, to be checked with SubjectAccessReviews.

Roles, as KFAM and the profile controller bind them: the owner gets kubeflow-admin, a
contributor kubeflow-edit or kubeflow-view, anyone else nothing. The actions below are
chosen so each role differs from the next (kubeflow/manifests 26.03 common/kubeflow-roles,
plus the Trainer and KubeRay roles aggregated into them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from stacks.schema import Team

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


def membership(team: Team, email: str) -> Membership:
    if email.lower() == team.owner.lower():
        return "owner"
    for contributor in team.contributors:
        if contributor.email.lower() == email.lower():
            return "edit" if contributor.role.value == "edit" else "view"
    return "outsider"


def access_matrix(teams: Sequence[Team], people: Iterable[str], actions: Sequence[Action] = ACTIONS) -> list[AccessCheck]:
    """Every (person, team namespace, action) with whether it must be allowed. `people`
    are everyone who can sign in; members of other teams are outsiders here."""
    everyone = sorted(set(people) | {t.owner for t in teams} | {c.email for t in teams for c in t.contributors})
    return [
        AccessCheck(
            user=person,
            membership=membership(team, person),
            namespace=team.name,
            verb=action.verb,
            group=action.group,
            resource=action.resource,
            allowed=membership(team, person) in action.allowed_for,
        )
        for team in teams
        for person in everyone
        for action in actions
    ]
