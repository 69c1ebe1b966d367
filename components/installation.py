"""How a component is installed: the other half of its entry in the list of components
(stackmodel/registry.py). The spec (stackmodel/components/spec.py) is what the stack model
knows; the `Installation`, in the module that installs the component, is what the program
does: the pure function that cuts its Args from the stack model, the installer that takes
them, and the charts whose values a stack may overlay. The spec names it (`installed_by`)
and `installation` finds it; nothing else lists the components.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, TypeVar

from args.platform import ArgsBuilder
from components.base import PlatformComponent
from components.readiness import Readiness, WiringError
from facts.versions import Pin
from infra.cluster import Cluster
from stackmodel.components.spec import ComponentSpec

A = TypeVar("A")

Installer = Callable[[A, Cluster, Readiness], PlatformComponent | None]
"""Install the component from its Args, after what `Readiness` says is ready; return it (the
composition records its `ready` for others and gathers its record of charts and trees), or None."""


@dataclass(frozen=True)
class ChartValues(Generic[A]):
    """A chart the component installs whose values a stack may overlay (docs/chart-values.md)."""

    field: str
    """The overlay's key in the component's settings: `values`, `grafanaValues`."""
    pin: Pin
    values: Callable[[A], Mapping[str, Any]]
    """The values the component passes to the chart, from its Args (the function the
    component itself calls, so the overlay check cannot drift from the program)."""
    overlay: Callable[[A], Mapping[str, Any]]
    """The stack's overlay, from the Args."""
    builder: str
    """Where the values are built, for messages (`components/kueue.py kueue_values`)."""
    installed: Callable[[A], bool] = lambda args: True
    """Whether the chart is installed with these Args (monitoring's kube-prometheus-stack is not
    with GKE's managed Prometheus)."""


def built_by(function: Callable[..., Any]) -> str:
    """Where chart values are built, for messages: `components/kueue.py kueue_values`."""
    return f"{function.__module__.replace('.', '/')}.py {function.__name__}"


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


@cache
def installation(spec: ComponentSpec[Any]) -> Installation[Any]:
    """The Installation `spec.installed_by` names: `<module>:<name>`, imported here (the
    composition's layer; the stack model only names it)."""
    try:
        found = pkgutil.resolve_name(spec.installed_by)
    except (ImportError, AttributeError, ValueError) as error:
        raise WiringError(f"component {spec.name}: installed_by {spec.installed_by!r} names nothing importable ({error})") from None
    if not isinstance(found, Installation) or found.spec is not spec:
        raise WiringError(f"component {spec.name}: {spec.installed_by} is not the Installation of this spec")
    return found


def builders(specs: Sequence[ComponentSpec[Any]]) -> dict[ComponentSpec[Any], ArgsBuilder[Any]]:
    """Each component's Args builder, for args.platform.platform_args."""
    return {spec: installation(spec).args for spec in specs}
