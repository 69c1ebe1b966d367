"""A chart a component installs whose values a stack may overlay (docs/chart-values.md), and
what the platform needs of those values beyond what it sets: the keys it relies on at the
chart's defaults (Relied, each read in the chart at its pinned version, its file named), why it
sets the keys it sets and which stack key sets them instead (Hint), the keys that hold a YAML
document in a string. Each component declares its charts with these facts in its Installation
(components/<name>.py); plumbing/overlays.py judges the stack's overlays by them, and the keys
the platform sets come from the values builders themselves, not from here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from facts.versions import Pin

A = TypeVar("A")

Key = tuple[str, ...]
"""A place in a chart's values, key by key (`("grafana.ini", "auth.anonymous", "enabled")`)."""


@dataclass(frozen=True)
class Hint:
    """Why the platform sets the keys under `key`, and the stack key that sets them (None: none
    does, the key is the platform's)."""

    key: Key
    why: str
    stack_key: str | None = None


@dataclass(frozen=True)
class Relied:
    """A key the platform does not set but needs at a value the chart gives it by default."""

    key: Key
    """`*` stands for any one key."""
    keeps: Callable[[Any], bool]
    """Whether a value the overlay gives there keeps what the platform needs."""
    needs: str
    """What it needs, for messages (`crds.enabled true, the chart's default`)."""
    source: str
    """Where in the chart, at its pinned version."""
    why: str
    stack_key: str | None = None


def exactly(expected: Any) -> Callable[[Any], bool]:
    """The value `expected`, of its type (`true`, not `1`)."""
    return lambda value: bool(value == expected and type(value) is type(expected))


def empty(value: Any) -> bool:
    """Left empty, as the chart's default is."""
    return value in ({}, [], "")


def without_flag(flag: str) -> Callable[[Any], bool]:
    """A list of command-line arguments that does not give `flag`."""
    return lambda value: not (isinstance(value, list) and any(str(a) == flag or str(a).startswith(f"{flag}=") for a in value))


INT_OR_STRING = frozenset({"targetPort", "minAvailable", "maxUnavailable", "maxSurge"})
"""Keys a chart passes to a Kubernetes IntOrString (a port name, a percentage): a number by
default, a string is fine too. Quantities (anything under `resources`) likewise."""


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
    relied: tuple[Relied, ...] = ()
    """The keys the platform relies on without setting them, at the chart's defaults."""
    hints: tuple[Hint, ...] = ()
    """Why the platform sets the keys under each hint's key (the longest match wins), and the
    stack key that sets them; a key without a hint is explained by `builder`."""
    documents: frozenset[Key] = frozenset()
    """Values that hold a YAML document in a string, compared as the documents they hold."""
    checks: tuple[Callable[[Any], Iterator[tuple[str, str]]], ...] = ()
    """More checks of the overlay (plumbing/overlays.py Overlay -> (config path, message)) where
    the chart reads a value another way too (Grafana's environment over grafana.ini)."""


def built_by(function: Callable[..., Any]) -> str:
    """Where chart values are built, for messages: `components/kueue.py kueue_values`."""
    return f"{function.__module__.replace('.', '/')}.py {function.__name__}"
