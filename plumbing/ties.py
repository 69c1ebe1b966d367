"""Objects that tie two components: a ServiceMonitor of Kueue's metrics (a kind of the
Prometheus Operator), Grafana's route through the Kubeflow gateway (an Istio kind). Each waits
for what it needs of both, and nothing waits for it, so neither component's install waits for
the other: Kueue's whole chart no longer waits for Monitoring's CRDs, nor Monitoring for Istio's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pulumi

from infra.cluster import Cluster
from plumbing.base import PlatformComponent, apply_manifest, child_type


@dataclass(frozen=True)
class Tied:
    """One object that ties two components, and where an earlier release of the program made it."""

    manifest: Mapping[str, Any]
    name: str
    """Its Pulumi resource name."""
    was_under: tuple[str, ...] = ()
    """The type tokens of the parents it had before (outermost first: a component, maybe a
    chart of it), when it moved here; its old name is `was_named`."""
    was_named: str = ""


@dataclass(frozen=True)
class TieArgs:
    """Objects that tie two components (a monitor of one component's metrics, in the other's
    custom kind; a route of one through the other's gateway), built by those components' pure
    functions in the composition (components/platform.py)."""

    objects: tuple[Tied, ...]


def old_urn(tied: Tied) -> str:
    """The URN the object had under its old parents (a child of the stack's component)."""
    type_ = child_type(dict(tied.manifest))
    parents = "$".join(tied.was_under)
    return f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{parents}${type_}::{tied.was_named}"


class Tie(PlatformComponent):
    """Objects that need two components, made once both are ready enough, outside both."""

    room: ClassVar[str] = "components"
    """Its token's room where Ties were first made: the token is part of each tied object's URN."""

    def __init__(
        self,
        name: str,
        args: TieArgs,
        cluster: Cluster,
        needs: Sequence[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`needs`: what of each component the objects wait for (a namespace, CRDs)."""
        super().__init__(name, cluster, opts)
        for tied in args.objects:
            # Moved here from another component: the alias keeps the live object (a new URN
            # alone would create it anew, AlreadyExists, and delete the old one).
            aliases = [old_urn(tied)] if tied.was_under else []
            apply_manifest(tied.name, dict(tied.manifest), self.child(needs, aliases=aliases))
        self.register_outputs({})
