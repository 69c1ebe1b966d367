"""What the stack model knows of a component: its key of `mlplatform:components`, the model of
its settings, what it needs of other components, whether a stack that says nothing installs it,
its pins, and where it is installed from. One `ComponentSpec` per component, beside its model
in its own module of stackmodel/components/; the ordered list of them (stackmodel/registry.py)
is the one place a component is added, and the schema root, the dependency check, the install
order, the reference and the plan's waits are derived from it (docs/development.md, "Adding a
component").

The spec lives in the stack model because the loader needs it (the schema root and its checks
are built from it) and the layers point down: the module that installs the component is the
one of components/ with its settings module's name (`installed_by`), which the composition's
plumbing imports (docs/architecture.md, "Components").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, TypeVar

from pydantic import Field, StrictBool, create_model

from facts.versions import Pin
from stackmodel.schema.chart_values import ChartValues, chart_values_field
from stackmodel.schema.common import Model

COMPONENTS = "mlplatform:components"


class What(Enum):
    """Which part of a component's readiness a need is for."""

    CRDS = "its CRDs"
    WEBHOOKS = "its admission webhooks serving"
    NAMESPACE = "the namespaces it creates"
    CONTROLLER = "its controller running"


@dataclass(frozen=True)
class Ready:
    """What one component makes ready for others: a component (its ComponentSpec) or a part of
    one that is ready earlier or apart (Kubeflow's namespaces, its PodDefaults webhook)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Need:
    """An edge of the deploy graph, said in code: `on`'s readiness, for `what`. `optional`: met
    by nothing when the stack does not install `on` (the object works without it, or the cluster
    provides it); otherwise a stack without `on` is refused (a component's needs) or an error at
    plan time (an object's)."""

    on: Ready
    what: What
    optional: bool = False
    waits: bool = True
    """False: a stack that installs the component must install `on` too, but the install does not
    wait for it: nothing the component itself installs uses it (its objects of other owners wait
    in their own needs), and waiting would only lengthen the deploy's chain of stages."""

    def __str__(self) -> str:
        return f"{self.on.name} ({self.what.value})"


class Toggle(Model):
    enabled: StrictBool = Field(
        default=False,
        description="Install this component. Default: the component's own (the table of mlplatform:components); "
        "a component a release adds is off until the stack switches it on.",
    )


M = TypeVar("M", bound=Model)

SETTINGS_PACKAGE = "stackmodel.components."
"""Where each component's settings and spec are, a module per component."""
INSTALLERS_PACKAGE = "components"
"""Where each component's installer is: the module of the same name."""


@dataclass(frozen=True, eq=False)
class ComponentSpec(Ready, Generic[M]):
    """One component as the stack model knows it. `name` is its key of `mlplatform:components`
    (camelCase, as a stack file writes it)."""

    model: type[M]
    """The model of its settings; a `Toggle` (or a model with its own `enabled`)."""
    summary: str
    """One line for the reference's table: what it is, and who needs it."""
    needs: tuple[Need, ...] = ()
    """What of other components it waits for; a need that is not optional is also a need of the
    stack: a stack that enables this component and disables that one is refused."""
    on_by_default: bool | Callable[[Any], bool] = False
    """Whether a stack that says nothing of it installs it; a function of the PlatformConfig where
    the rest of the stack decides (the model says `enabled: null` then). New components are off:
    a fork that merges a release switches a new one on itself."""
    unused_overlays: Callable[[Any], dict[str, str]] | None = None
    """For settings (its model) that install some chart of its elsewhere or not at all: which of
    its chart-values fields reach no chart, and why (stackmodel/rules/ chart-values-reach-a-chart)."""
    parts: tuple[Ready, ...] = ()
    """Parts of it others wait for apart from the whole (recorded as nothing where the stack
    does not install it)."""
    pins: tuple[Pin, ...] = field(default=())
    """Its upstreams in the pin table (facts/versions.py), each with its support facts (facts/support.py)."""
    installed_by: str = ""
    """`<module>:<name>` of its Installation (the Args it takes and its installer). Left out, as
    every shipped component does: `components.<name>:INSTALLATION`, where
    `stackmodel/components/<name>.py` holds its settings, for a component's two modules share
    their name. A component kept whole in one module elsewhere (a test's) names it."""

    def __post_init__(self) -> None:
        if not self.installed_by:
            module = self.model.__module__
            if not module.startswith(SETTINGS_PACKAGE):
                raise ValueError(
                    f"component {self.name}: its settings are in {module}, not in stackmodel/components/: name "
                    "the module that installs it (installed_by)"
                )
            object.__setattr__(self, "installed_by", f"{INSTALLERS_PACKAGE}.{module.removeprefix(SETTINGS_PACKAGE)}:INSTALLATION")

    def __repr__(self) -> str:
        return f"ComponentSpec({self.name!r})"

    @property
    def key(self) -> str:
        return self.name

    @property
    def path(self) -> str:
        """Its config path, `mlplatform:components.<key>`."""
        return f"{COMPONENTS}.{self.name}"

    def required(self) -> tuple[ComponentSpec[Any], ...]:
        """The components a stack that installs this one must install too."""
        return tuple(n.on for n in self.needs if not n.optional and isinstance(n.on, ComponentSpec))


def install_order(specs: tuple[ComponentSpec[Any], ...]) -> tuple[ComponentSpec[Any], ...]:
    """The specs in an order where each comes after every component it needs (optional needs
    too, where both are listed), else in list order; a need on a component that is not in the
    list is left to the stack check."""
    listed = {spec.name: spec for spec in specs}
    placed: list[ComponentSpec[Any]] = []
    visiting: list[str] = []

    def place(spec: ComponentSpec[Any]) -> None:
        if spec in placed:
            return
        if spec.name in visiting:
            cycle = " -> ".join([*visiting[visiting.index(spec.name) :], spec.name])
            raise ValueError(f"components that need each other cannot be installed in any order: {cycle}")
        visiting.append(spec.name)
        for need in spec.needs:
            needed = listed.get(need.on.name)
            if needed is not None and needed is not spec:
                place(needed)
        visiting.pop()
        placed.append(spec)

    for spec in specs:
        place(spec)
    return tuple(placed)


class ChartToggle(Toggle):
    """The settings of a component that is one Helm chart and has nothing else to say: on or
    off, and the stack's overlay of the chart's values (chart_component)."""

    values: ChartValues = Field(default_factory=dict)


def chart_component(name: str, summary: str, settings: tuple[str, str, str], module: str, **spec: Any) -> ComponentSpec[ChartToggle]:
    """The spec of a component that is one Helm chart and has nothing else to say, with its
    settings' model made here: `settings` is (the model's name, its description, the chart as
    the `values` field's description names it); `module`, the settings module it stands in
    (`__name__`: its installer is the module of components/ of that name); `spec`, the rest of
    the spec (needs, on_by_default, pins, ...)."""
    model_name, description, chart = settings
    model = create_model(model_name, __base__=ChartToggle, __doc__=description, __module__=module, values=(ChartValues, chart_values_field(chart)))
    return ComponentSpec(name, model, summary, **spec)


@dataclass(frozen=True)
class UnusedWhen:
    """A spec's `unused_overlays`: where the settings' `field` is `value`, the chart-values
    fields `why` names reach no chart (it is installed elsewhere or not at all), each with why."""

    field: str
    value: Any
    why: tuple[tuple[str, str], ...]

    def __call__(self, settings: Any) -> dict[str, str]:
        return dict(self.why) if getattr(settings, self.field) == self.value else {}


def unused_when(field: str, value: Any, **why: str) -> UnusedWhen:
    """`unused_overlays=unused_when("source", RaySource.GKE_ADDON, values="...")`."""
    return UnusedWhen(field, value, tuple(why.items()))
