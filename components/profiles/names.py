"""The Pulumi names of team objects, and the aliases that keep live objects through the
rename from the names they had before."""

from __future__ import annotations

from typing import Any

import pulumi

from plumbing.base import child_type, component_child_urn
from stackmodel.schema import Team as TeamConfig


def resource_name(team: TeamConfig, obj: dict[str, Any]) -> str:
    """The Pulumi name of a team object: `<namespace>/<name>`, the name pulumi-kubernetes
    gives each object of a yaml/v2 ConfigFile (pulumi-kubernetes v4.32.0
    provider/pkg/provider/yaml/v2/yaml.go, `register`); cluster-scoped objects (the namespace, Profile, ClusterQueue) under the
    team's name. Kubernetes names never contain '/' (Pulumi names may hold any string), and
    the Pulumi type carries the kind, so two team objects share a URN only when they are
    one Kubernetes object."""
    meta = obj["metadata"]
    return f"{meta.get('namespace', team.name)}/{meta['name']}"


def legacy_resource_name(team: TeamConfig, obj: dict[str, Any]) -> str:
    """The name team objects had before `resource_name`; `<team>-<kind>-<name>` let team
    `a` with Ray cluster `x-service-y` and team `a-service-x` with Ray cluster `y` share one."""
    if obj["kind"] == "Namespace":
        return f"{team.name}-namespace"
    return f"{team.name}-{obj['kind'].lower()}-{obj['metadata']['name']}"


class OldNames:
    """The rename to `resource_name` keeps live objects: each object gets its old name as an
    alias, so the engine finds it in the state (drop once every stack has run `pulumi up`
    with the new names). Each old name goes to the first object that had it: where two had
    one, the engine stopped at the second, so only the first can be in a stack's state, and
    two aliases of one URN would stop the engine again (error 2008)."""

    def __init__(self) -> None:
        self._given: set[tuple[str, str, str]] = set()

    def aliases(self, team: TeamConfig, obj: dict[str, Any], parent_type: str) -> list[pulumi.Input[pulumi.Alias | str]]:
        """`obj`'s old name as an alias, for a resource under the team's component (of type
        token `parent_type`, a child of the stack): its old URN, `pulumi.Alias(name=...)` as the
        engine resolves it."""
        old = (obj["apiVersion"], obj["kind"], legacy_resource_name(team, obj))
        if old in self._given:
            return []
        self._given.add(old)
        return [component_child_urn(parent_type, child_type(obj), old[2])]

