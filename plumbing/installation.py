"""How a component is installed: the other half of its entry in the list of components
(stackmodel/registry.py). The spec (stackmodel/components/spec.py) is what the stack model
knows; the `Installation`, in the module that installs the component, is what the program
does: the pure function that cuts its Args from the stack model, the installer that takes
them, and the charts whose values a stack may overlay (plumbing/charts.py). The spec names it
(`installed_by`: `components/<name>.py` for settings in `stackmodel/components/<name>.py`)
and `installation` imports it; nothing else lists the components.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any, Generic, TypeVar

import pulumi

from infra.cluster import Cluster
from plumbing.base import ChartArgs, PlatformComponent
from plumbing.charts import ChartValues
from plumbing.readiness import Readiness, WiringError
from stackmodel.components.spec import ComponentSpec
from stackmodel.secrets import SecretKey
from stackmodel.stack import PlatformConfig

A = TypeVar("A")

Secrets = Mapping[SecretKey, pulumi.Output[Any]]
"""The secrets a stack needs (stackmodel.secrets.required_secrets), each a Pulumi secret read
once at the edge (program.py); a component fails on a secret it needs but did not get."""
NO_SECRETS: Secrets = MappingProxyType({})
"""What a component that reads no secret is handed by default."""

ArgsBuilder = Callable[[PlatformConfig, Secrets], A | None]
"""A component's Args, cut from the stack model (and the secrets it needs): a pure function
named in its Installation, `<name>_args`. None: nothing of it to install here although the
stack enables it (GKE's Ray add-on, GKE's managed DCGM metrics)."""

Installer = Callable[[A, Cluster, Readiness], PlatformComponent | None]
"""Install the component from its Args, after what `Readiness` says is ready; return it (the
composition records its `ready` for others and gathers its record of charts and trees), or None."""


@dataclass(frozen=True)
class Installation(Generic[A]):
    """One component's installation: its Args from the stack model (None: nothing to install
    here, e.g. GKE runs it), and its installer."""

    spec: ComponentSpec[Any]
    args: ArgsBuilder[A]
    install: Installer[A]
    charts: tuple[ChartValues[A], ...] = ()
    prepare: Installer[A] | None = None
    """What it makes before any component is installed, recording those parts of it in the
    readiness (Kubeflow's namespaces, which Istio's and Trainer's objects live in); the
    composition gathers the returned component's record too."""


@dataclass(frozen=True)
class ComponentArgs:
    """One component the stack installs, and its Args."""

    spec: ComponentSpec[Any]
    args: Any
    """What its builder made (the component's own Args type)."""


def chart_args(spec: ComponentSpec[Any]) -> ArgsBuilder[ChartArgs]:
    """The Args builder of a component that is one chart and the stack's overlay of it (its
    settings' `values`), and nothing else to say (cert-manager, JobSet)."""

    def build(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> ChartArgs:
        return ChartArgs(sources=config.sources, values=config.components[spec].values)

    build.__name__ = build.__qualname__ = f"{spec.name}_chart_args"
    return build


@cache
def installation(spec: ComponentSpec[Any]) -> Installation[Any]:
    """The Installation `spec.installed_by` names: `<module>:<name>`, imported here (the
    composition's plumbing; the stack model only names it)."""
    try:
        found = pkgutil.resolve_name(spec.installed_by)
    except (ImportError, AttributeError, ValueError) as error:
        raise WiringError(f"component {spec.name}: installed_by {spec.installed_by!r} names nothing importable ({error})") from None
    if not isinstance(found, Installation) or found.spec is not spec:
        raise WiringError(f"component {spec.name}: {spec.installed_by} is not the Installation of this spec")
    return found
