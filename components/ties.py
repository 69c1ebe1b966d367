"""Objects that tie two components: a ServiceMonitor of Kueue's metrics (a kind of the
Prometheus Operator), Grafana's route through the Kubeflow gateway (an Istio kind). Each waits
for what it needs of both, and nothing waits for it, so neither component's install waits for
the other: Kueue's whole chart no longer waits for Monitoring's CRDs, nor Monitoring for Istio's.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi

from args.components import TieArgs, Tied
from components.base import PlatformComponent, apply_manifest, child_type
from infra.cluster import Cluster


def old_urn(tied: Tied) -> str:
    """The URN the object had under its old parents (a child of the stack's component)."""
    type_ = child_type(dict(tied.manifest))
    parents = "$".join(tied.was_under)
    return f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{parents}${type_}::{tied.was_named}"


class Tie(PlatformComponent):
    """Objects that need two components, made once both are ready enough, outside both."""

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
