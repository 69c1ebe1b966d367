"""What a rule of the loader is, and what the rules share: the config paths they read, the
helpers they call. A rule is a function of the PlatformConfig (a TeamRule: of it and one
team's place) that yields (config path, message) per problem, declared where it is written
with its ID, its one-line description and the config paths it reads:

    @stack_rule("pool-names-free", "No GPU pool takes the system pool's name ...", reads=(POOLS,))
    def _pool_names_free(config: PlatformConfig) -> Found: ...

The modules of stackmodel/rules/ hold them by area; stackmodel/rules/__init__.py gathers them
into the tables the loader runs (RULES, WARNINGS)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.schema import GkeClusterConfig, GpuPool
from stackmodel.stack import PlatformConfig

Found = Iterator[tuple[str, str]]
"""(config path, message) per problem, the path as the stack file spells it."""
CLUSTER = "mlplatform:cluster"
COMPONENTS = "mlplatform:components"
EVERYTHING = ""
"""A rule's `reads` that overlaps every path: the rule needs the whole stack parsed."""


def overlaps(a: str, b: str) -> bool:
    """Whether config paths `a` and `b` are one the other's part (or the same)."""
    if a == EVERYTHING or b == EVERYTHING:
        return True
    return a == b or any(long.startswith(short + sep) for long, short in ((a, b), (b, a)) for sep in (".", "["))


@dataclass(frozen=True)
class Rule:
    """A rule over the whole stack. `reads`: the config paths its check looks at (through the
    helpers it calls too), so it still runs, and only then, when the schema refused parts of
    the stack elsewhere (stackmodel/config.py)."""

    name: str
    description: str
    check: Callable[[PlatformConfig], Found]
    reads: tuple[str, ...] = (EVERYTHING,)

    def problems(self, config: PlatformConfig) -> list[tuple[str, str]]:
        return list(self.check(config))


@dataclass(frozen=True)
class TeamRule:
    """A rule over one team, `check(config, i)` for mlplatform:teams[i]; the team's
    place in the stack is passed because rules compare it with the teams before it."""

    name: str
    description: str
    check: Callable[[PlatformConfig, int], Found]
    reads: tuple[str, ...] = (EVERYTHING,)

    def problems(self, config: PlatformConfig) -> list[tuple[str, str]]:
        return [found for i in range(len(config.teams)) for found in self.check(config, i)]


F = TypeVar("F", bound=Callable[..., Found])
DECLARED = "loader_rule"
"""The attribute a rule's function carries its declaration in (the decorators below)."""


def _declare(kind: type[Rule] | type[TeamRule], name: str, description: str, reads: tuple[str, ...], warning: bool) -> Callable[[F], F]:
    def declare(check: F) -> F:
        setattr(check, DECLARED, (kind(name, description, check, reads), warning))
        return check

    return declare


def stack_rule(name: str, description: str, reads: tuple[str, ...] = (EVERYTHING,)) -> Callable[[F], F]:
    """Declare a rule over the whole stack: its ID, what it holds (one line) and the config
    paths it reads (through the helpers it calls too)."""
    return _declare(Rule, name, description, reads, warning=False)


def team_rule(name: str, description: str, reads: tuple[str, ...] = (EVERYTHING,)) -> Callable[[F], F]:
    """Declare a rule over one team (`check(config, i)`), run for each team in turn."""
    return _declare(TeamRule, name, description, reads, warning=False)


def warning_rule(name: str, description: str, reads: tuple[str, ...] = (EVERYTHING,)) -> Callable[[F], F]:
    """Declare a warning: what may be meant but usually is not (printed with the path, exit 0)."""
    return _declare(Rule, name, description, reads, warning=True)


# --- what the rules share -------------------------------------------------------------------


def gke_cluster(config: PlatformConfig) -> GkeClusterConfig | None:
    """The stack's GKE cluster; None on kind."""
    return config.cluster if isinstance(config.cluster, GkeClusterConfig) else None


def gpu_pools_of(config: PlatformConfig) -> list[GpuPool]:
    """The stack's GPU pools as the stack file lists them; none on kind."""
    gke = gke_cluster(config)
    return gke.gpu_pools if gke else []


def team_path(i: int) -> str:
    """The config path of mlplatform:teams[i]."""
    return f"mlplatform:teams[{i}]"


def minor_number(version: str) -> tuple[int, int]:
    """(major, minor) of a GKE version such as 1.34 or 1.34.1-gke.100."""
    major, minor = version.split(".")[:2]
    return int(major), int(minor.split("-")[0])


# What the rules read, as config paths.
PROJECT = "gcp:project"
KIND = f"{CLUSTER}.kind"
POOLS = f"{CLUSTER}.gpuPools"
NAP = f"{CLUSTER}.autoprovisioning"
REGISTRY = f"{CLUSTER}.imageRegistry"
MANAGED_PROMETHEUS = f"{CLUSTER}.managedPrometheus"
TEAMS = "mlplatform:teams"
OVERRIDES = "mlplatform:overrides"
# config.enabled(): the toggles, and defaults such as dcgmExporter's from the cluster.
ENABLED = (COMPONENTS, KIND, POOLS, NAP)
AUTH = f"{KUBEFLOW.path}.auth"
