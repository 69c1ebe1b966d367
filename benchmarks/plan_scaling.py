"""How plan time grows with teams, against the raw cost of the Pulumi engine (mocks).

    python -m benchmarks.plan_scaling [--teams 10 100 1000] [--repeat 3] [--plot]

For each size, in one run and side by side: the kind stack with that many generated
teams is planned under mocks (tooling.plan.evaluate), then the same mocked engine
registers the same number of bare resources (no inputs, no parents); the best of
`--repeat` runs of each is kept and their ratio printed. Both run the same way
(tooling.plan.under_mocks: a thread, context and loop of their own, bulk_registration).
Also printed: the dependency depth after the cluster (tooling/graph.py), component level
and resource level.
With --plot, the measurements also come out as a Mermaid line chart (plan, replay and raw
engine seconds by team count), which GitHub renders where docs/benchmarks.md embeds it.
Not part of the unit suite: it takes minutes at 1,000 teams.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi.runtime import mocks

from stackmodel.config import load, read_stack_file, stack_file, validate
from stackmodel.stack import PlatformConfig
from tooling.graph import short, stages_after_cluster
from tooling.plan import Plan, evaluate, under_mocks


def teams_config(count: int) -> PlatformConfig:
    """The shipped kind stack with `count` generated teams: unique names and e-mails, one contributor each."""
    raw = read_stack_file(stack_file("kind"))
    # Every owner and contributor is a Dex static user, as the schema asks of people in teams.
    auth = raw["mlplatform:components"]["kubeflow"]["auth"]
    auth["staticUsers"] = [*auth["staticUsers"], *(f"{who}-{i:04d}@example.com" for i in range(count) for who in ("lead", "dev"))]
    raw["mlplatform:teams"] = [
        {
            "name": f"team-{i:04d}",
            "owner": f"lead-{i:04d}@example.com",
            "contributors": [{"email": f"dev-{i:04d}@example.com", "role": "edit"}],
            "quota": {"cpu": "8", "memory": "32Gi"},
        }
        for i in range(count)
    ]
    return validate(raw, f"kind + {count} teams")


class _BareMocks(mocks.Mocks):
    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str | None, dict[Any, Any]]:
        return f"{args.name}-id", {}

    def call(self, args: mocks.MockCallArgs) -> tuple[dict[Any, Any], list[tuple[str, str]] | None]:
        return {}, None


class _EchoMocks(_BareMocks):
    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str | None, dict[Any, Any]]:
        return f"{args.name}-id", dict(args.inputs)


class _Bare(pulumi.CustomResource):
    def __init__(self, name: str, props: dict[str, Any] | None = None, type_: str = "bench:index:Bare") -> None:
        super().__init__(type_, name, props or {})


def _engine(mock: mocks.Mocks, register: Callable[[], None]) -> float:
    """Seconds to run `register` under the SDK's own mock monitor, the way evaluate() runs the
    program (tooling.plan.under_mocks: its own thread, context and loop, bulk_registration)."""
    start = time.perf_counter()
    under_mocks(mocks.MockMonitor(mock), "bare", register)
    return time.perf_counter() - start


def raw_engine(count: int) -> float:
    """Seconds for the mocked engine to register `count` bare resources in one program."""

    def register() -> None:
        for i in range(count):
            _Bare(f"r{i}")

    return _engine(_BareMocks(), register)


def replay(plan: Plan) -> float:
    """Seconds to register the plan's resources again with their recorded inputs, flat:
    no components, parents, providers, dependencies or program logic (outputs echo inputs,
    as in the plan's mocks). What is left between this and the plan is our program's shape."""

    def register() -> None:
        for i, r in enumerate(plan.resources):
            _Bare(f"r{i}", dict(r.inputs), "bench:index:" + r.type.rsplit(":", 1)[-1])

    return _engine(_EchoMocks(), register)


def timed_plan(config: PlatformConfig) -> tuple[float, Plan]:
    start = time.perf_counter()
    plan = evaluate(config, "bench")
    return time.perf_counter() - start, plan


def best(measure: Callable[[], float], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        times.append(measure())
    return min(times)


@dataclass(frozen=True)
class Row:
    teams: int
    resources: int
    plan_s: float
    raw_s: float
    replay_s: float


def plot(rows: Sequence[Row]) -> str:
    """A Mermaid xychart of the rows: one line per measurement, in the order the title names."""
    top = max(max(r.plan_s, r.raw_s, r.replay_s) for r in rows)
    series = [[r.plan_s for r in rows], [r.replay_s for r in rows], [r.raw_s for r in rows]]
    return "\n".join(
        [
            "```mermaid",
            "xychart-beta",
            '    title "Plan seconds by teams: plan (top), replay (middle), raw engine (bottom)"',
            f'    x-axis "teams" [{", ".join(str(r.teams) for r in rows)}]',
            f'    y-axis "seconds" 0 --> {top * 1.1:.1f}',
            *(f"    line [{', '.join(f'{v:.2f}' for v in values)}]" for values in series),
            "```",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.plan_scaling", description=__doc__.split("\n\n")[0])
    parser.add_argument("--teams", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--plot", action="store_true", help="also print the results as a Mermaid line chart")
    args = parser.parse_args(argv)

    base = evaluate(load("kind"), "kind")
    components, resources = stages_after_cluster(base)
    print(f"kind stack: {len(components) - 2} component-level stages after the Kubernetes provider:")
    print("  " + " -> ".join(short(u) for u in components))
    print(f"longest resource-level chain: {len(resources) - 1} edges after the cluster:")
    print("  " + " -> ".join(short(u) for u in resources))
    print()
    print(f"{'teams':>6} {'resources':>9} {'plan s':>8} {'raw s':>8} {'ratio':>6} {'replay s':>8} {'ms/team':>8} {'stages':>6}")
    previous: tuple[int, float] | None = None
    rows: list[Row] = []
    for teams in args.teams:
        config = teams_config(teams)
        plans: list[Plan] = []

        def plan_once(config: PlatformConfig = config, plans: list[Plan] = plans) -> float:
            seconds, plan = timed_plan(config)
            plans[:] = [plan]
            return seconds

        plan_s = best(plan_once, args.repeat)
        count = len(plans[0].resources)
        raw_s = best(lambda count=count: raw_engine(count), args.repeat)  # type: ignore[misc]
        replay_s = best(lambda plan=plans[0]: replay(plan), args.repeat)  # type: ignore[misc]
        stages = len(stages_after_cluster(plans[0])[0]) - 2  # after the provider
        per_team = ""
        if previous is not None:
            per_team = f"{1000 * (plan_s - previous[1]) / (teams - previous[0]):.1f}"
        print(
            f"{teams:>6} {count:>9} {plan_s:>8.2f} {raw_s:>8.2f} {plan_s / raw_s:>5.2f}x {replay_s:>8.2f}"
            f" {per_team:>8} {stages:>6}"
        )
        previous = (teams, plan_s)
        rows.append(Row(teams, count, plan_s, raw_s, replay_s))
    print("\nratio: plan / raw (bare resources, same count); replay: same resources and inputs, flat")
    print("ms/team: marginal plan time per added team since the previous row (flat = linear growth)")
    if args.plot:
        print()
        print(plot(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
