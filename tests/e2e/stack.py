"""The e2e stack: the shipped kind stack plus test users and a team, driven through
Pulumi's Automation API with a local file backend in a temp dir and a passphrase
secrets provider; and the order it is torn down in.

The program runs inline (in this process, tooling/workspace.py), so no stack file is
written into `stacks/`: the workspace, its `Pulumi.e2e.yaml` and the state all live in
the temp dir.
"""

from __future__ import annotations

import copy
import json
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi import automation as auto

from facts.resource_types import STACK as STACK_TYPE
from stackmodel.config import read_stack_file, stack_file
from stackmodel.secrets import DEX_PASSWORD_HASHES, NAMESPACE
from tooling import kind_stack
from tooling.workspace import plain_values

STACK = "e2e"
CLUSTER_NAME = "mlplatform-e2e"
"""Not the kind stack's `mlplatform`, so a developer's `make kind-up` cluster is never touched."""
TEAM = "e2e-team"
TEAM_QUOTA = {"cpu": "8", "memory": "16Gi"}
DOMAIN = "example.com"


@dataclass(frozen=True)
class Person:
    email: str
    password: str


ROLES = ("owner", "editor", "viewer", "outsider", "group-owner", "group-editor", "group-viewer")


@dataclass(frozen=True)
class People:
    """The sides of the access matrix: the team's people, an outsider, and a member of each of
    the team's groups (an owner group, an editor group, a viewer group); passwords are new for
    every run."""

    owner: Person
    editor: Person
    viewer: Person
    outsider: Person
    group_owner: Person
    group_editor: Person
    group_viewer: Person

    def all(self) -> list[Person]:
        return [self.owner, self.editor, self.viewer, self.outsider, self.group_owner, self.group_editor, self.group_viewer]

    def groups(self) -> dict[str, list[str]]:
        """The stack's groups (`auth.groups`, source stack) and their members."""
        return {
            f"e2e-admins@{DOMAIN}": [self.group_owner.email],
            f"e2e-editors@{DOMAIN}": [self.group_editor.email],
            f"e2e-viewers@{DOMAIN}": [self.group_viewer.email],
        }


GROUP_ROLES = {f"e2e-admins@{DOMAIN}": "admin", f"e2e-editors@{DOMAIN}": "edit", f"e2e-viewers@{DOMAIN}": "view"}


def new_people(token: Callable[[], str] = lambda: secrets.token_urlsafe(18)) -> People:
    return People(*(Person(f"e2e-{role}@{DOMAIN}", token()) for role in ROLES))


def teams(people: People) -> list[dict[str, Any]]:
    """`mlplatform:teams` of the e2e stack: one team with people and groups; the outsider belongs to none."""
    return [
        {
            "name": TEAM,
            "owner": people.owner.email,
            "contributors": [
                {"email": people.editor.email, "role": "edit"},
                {"email": people.viewer.email, "role": "view"},
                *({"group": group, "role": role} for group, role in GROUP_ROLES.items()),
            ],
            "quota": dict(TEAM_QUOTA),
        }
    ]


def e2e_config(kind_stack: Mapping[str, Any], people: People) -> dict[str, Any]:
    """The kind stack's config with the e2e cluster name, the test users as Dex static
    users, and the team (plain values; the password hashes go in as a secret)."""
    config = copy.deepcopy(dict(kind_stack))
    config["mlplatform:environment"] = "ci"
    config["mlplatform:cluster"] = {**config["mlplatform:cluster"], "name": CLUSTER_NAME}
    components = config.setdefault("mlplatform:components", {})
    auth = components.setdefault("kubeflow", {}).setdefault("auth", {})
    auth["kind"] = "dex"
    auth["staticUsers"] = [p.email for p in people.all()]
    auth["groups"] = [{"name": name, "members": members} for name, members in people.groups().items()]
    config["mlplatform:teams"] = teams(people)
    return config


def config_values(config: Mapping[str, Any], people: People, hash_password: Callable[[str], str]) -> dict[str, auto.ConfigValue]:
    """Stack config for the Automation API: JSON for structured values, and the bcrypt
    hashes as the secret `mlplatform:dexPasswordHashes` (e-mail -> hash)."""
    values = plain_values(config)
    hashes = {p.email: hash_password(p.password) for p in people.all()}
    values[f"{NAMESPACE}:{DEX_PASSWORD_HASHES.key}"] = auto.ConfigValue(json.dumps(hashes), secret=True)
    return values


def bcrypt_hash(password: str) -> str:
    """A bcrypt hash Dex accepts, at cost 10 (Dex's minimum): the users live one run."""
    return kind_stack.bcrypt_hash(password, rounds=10)


def kind_stack_config() -> dict[str, Any]:
    return read_stack_file(stack_file("kind"))


# --- teardown order --------------------------------------------------------------------

TEAM_KINDS = frozenset({"Profile", "LocalQueue", "ClusterQueue"})
"""Custom resources of a team (Kubeflow profile, Kueue queues), wherever they are declared."""
TEARDOWN = ("teams", "components", "cluster")
"""Queues and profiles before the components that serve them, components before the
cluster they run on. Workloads the tests made go first, outside Pulumi."""


@dataclass(frozen=True)
class StateResource:
    urn: str
    type: str
    parent: str | None


def state_resources(deployment: Mapping[str, Any] | None) -> list[StateResource]:
    """The resources of an exported stack (`Stack.export_stack().deployment`)."""
    return [
        StateResource(urn=r["urn"], type=r["type"], parent=r.get("parent") or None)
        for r in (deployment or {}).get("resources") or []
    ]


def _lineage(resource: StateResource, by_urn: Mapping[str, StateResource]) -> list[StateResource]:
    """The resource and its ancestors below the stack, innermost first."""
    chain, parent = [resource], resource.parent
    while parent is not None and parent in by_urn:
        chain.append(by_urn[parent])
        parent = by_urn[parent].parent
    return [r for r in chain if r.type != STACK_TYPE]


def stage_of(resource: StateResource, by_urn: Mapping[str, StateResource]) -> str:
    """Which teardown stage deletes `resource`: the cluster (infra and providers), a team's
    objects (any Profile/queue, or anything inside a team/profile component), or a component."""
    lineage = _lineage(resource, by_urn)
    if resource.type.startswith("pulumi:providers:") or any(r.type.startswith("mlplatform:infra:") for r in lineage):
        return "cluster"
    for r in lineage:
        kind = r.type.rsplit(":", 1)[-1]
        if (r.type.startswith("kubernetes:") and kind in TEAM_KINDS) or (
            r.type.startswith("mlplatform:") and kind in ("Team", "Teams", "Profile", "Profiles")
        ):
            return "teams"
    return "components"


def teardown_stages(resources: Iterable[StateResource]) -> list[tuple[str, list[str]]]:
    """(stage, URNs) in teardown order; the stack itself and empty stages left out."""
    listed = [r for r in resources if r.type != STACK_TYPE]
    by_urn = {r.urn: r for r in listed}
    stages: dict[str, list[str]] = {name: [] for name in TEARDOWN}
    for resource in listed:
        stages[stage_of(resource, by_urn)].append(resource.urn)
    return [(name, sorted(urns)) for name, urns in stages.items() if urns]
