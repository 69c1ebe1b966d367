"""The Args of the whole platform: the cluster's, each component's the stack installs (cut by
the component's own builder, in install order), the teams' and the image policy."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from args.components import Secrets
from args.infra import ClusterArgs, cluster_args
from args.teams import TeamArgs, teams_args
from facts.image_refs import ImagePolicy
from stackmodel.components.spec import ComponentSpec
from stackmodel.stack import PlatformConfig

A = TypeVar("A")
T = TypeVar("T")

ArgsBuilder = Callable[[PlatformConfig, Secrets], A | None]
"""A component's Args, cut from the stack model (and the secrets it needs): a pure function
named in its Installation (components/installation.py). None: nothing of it to install here
although the stack enables it (GKE's Ray add-on, GKE's managed DCGM metrics)."""


@dataclass(frozen=True)
class ComponentArgs:
    """One component the stack installs, and its Args."""

    spec: ComponentSpec[Any]
    args: Any
    """What its builder made (the component's own Args type)."""


@dataclass(frozen=True)
class PlatformArgs:
    cluster: ClusterArgs
    specs: tuple[ComponentSpec[Any], ...]
    """Every component of the stack's list, in install order (stackmodel/components/spec.py install_order)."""
    components: tuple[ComponentArgs, ...]
    """The components the stack installs here, in install order, each with its Args."""
    teams: tuple[TeamArgs, ...]
    images: ImagePolicy
    """Where every object's images are pulled from (`mlplatform:images`, retired registries)."""

    def of(self, spec: ComponentSpec[Any], kind: type[T]) -> T | None:
        """The Args of `spec`'s component, None when the stack does not install it here."""
        for component in self.components:
            if component.spec is spec:
                if not isinstance(component.args, kind):
                    raise TypeError(f"{spec.name}'s Args are {type(component.args).__name__}, not {kind.__name__}")
                return component.args
        return None


def platform_args(config: PlatformConfig, secrets: Secrets, builders: Mapping[ComponentSpec[Any], ArgsBuilder[Any]]) -> PlatformArgs:
    """`builders`: each component's Args builder (components/installation.py builders), which
    this layer cannot import: they live with the components that install them."""
    order = config.components.installed_in_order()
    components = []
    for spec in order:
        if config.enabled(spec):
            built = builders[spec](config, secrets)
            if built is not None:
                components.append(ComponentArgs(spec, built))
    return PlatformArgs(
        cluster=cluster_args(config),
        specs=order,
        components=tuple(components),
        teams=teams_args(config),
        images=ImagePolicy(mirror=config.images.mirror),
    )
