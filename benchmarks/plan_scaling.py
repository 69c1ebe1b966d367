"""How plan time grows with teams, against the raw cost of the Pulumi engine (mocks).

    python -m benchmarks.plan_scaling [--teams 10 100 1000] [--repeat 3] [--plot]

For each size, in one run and side by side: the kind stack with that many generated
teams is planned under mocks (tooling.plan.evaluate), then the same mocked engine
registers the same number of bare resources (no inputs, no parents: "raw"), then the plan's
resources again with their recorded inputs, flat ("replay"); the best of `--repeat` runs of
each is kept. All run the same way (tooling.plan.under_mocks: a thread, context and loop of
their own, bulk_registration). Each is measured in wall seconds and in CPU seconds of the
process (every thread; a shared machine disturbs them far less), and the judgements use CPU.
The kind stack with no generated team is planned first: ms per team at a size is the
marginal CPU time per team added since the size before it (the first since none).
Targets: linear growth (ms per team at the largest size within 1.1x of that at the smallest)
and the plan within 2x of the flat replay at the largest size; the exit code is 1 when one is
missed. Also printed: the dependency depth after the cluster (tooling/graph.py), component level
and resource level.
With --plot, the measurements also come out as a Mermaid line chart (plan, replay and raw
engine seconds by team count), which GitHub renders where docs/benchmarks.md embeds it.
Not part of the unit suite: it takes minutes at 1,000 teams.
"""

from __future__ import annotations

import argparse
import gc
import os
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


@dataclass(frozen=True)
class Seconds:
    wall: float
    cpu: float
    """CPU seconds of the process, every thread (the plan runs in a thread of its own)"""


def _timed(run: Callable[[], Any]) -> Seconds:
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return Seconds(time.perf_counter() - wall, time.process_time() - cpu)


def _engine(mock: mocks.Mocks, register: Callable[[], None]) -> Seconds:
    """Time to run `register` under the SDK's own mock monitor, the way evaluate() runs the
    program (tooling.plan.under_mocks: its own thread, context and loop, bulk_registration)."""
    return _timed(lambda: under_mocks(mocks.MockMonitor(mock), "bare", register))


def raw_engine(count: int) -> Seconds:
    """The mocked engine registering `count` bare resources in one program."""

    def register() -> None:
        for i in range(count):
            _Bare(f"r{i}")

    return _engine(_BareMocks(), register)


def replay(plan: Plan) -> Seconds:
    """The plan's resources registered again with their recorded inputs, flat: no components,
    parents, providers, dependencies or program logic (outputs echo inputs, as in the plan's
    mocks). What is left between this and the plan is our program's shape."""

    def register() -> None:
        for i, r in enumerate(plan.resources):
            _Bare(f"r{i}", dict(r.inputs), "bench:index:" + r.type.rsplit(":", 1)[-1])

    return _engine(_EchoMocks(), register)


def best(measure: Callable[[], Seconds], repeat: int) -> Seconds:
    """The fastest of `repeat` runs, wall and CPU each."""
    runs = []
    for _ in range(repeat):
        gc.collect()
        runs.append(measure())
    return Seconds(min(r.wall for r in runs), min(r.cpu for r in runs))


@dataclass(frozen=True)
class Row:
    teams: int
    resources: int
    plan: Seconds
    raw: Seconds
    replay: Seconds
    ms_per_team: float | None
    """CPU ms per team added since the size before (None for the kind stack without generated teams)"""

    @property
    def plan_s(self) -> float:
        return self.plan.wall

    @property
    def raw_s(self) -> float:
        return self.raw.wall

    @property
    def replay_s(self) -> float:
        return self.replay.wall


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


TARGET_LINEAR = 1.1
TARGET_REPLAY = 2.0


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
    print(f"load average before: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    print()
    print(
        f"{'teams':>6} {'resources':>9} {'plan s':>7} {'cpu s':>6} {'raw s':>6} {'cpu s':>6} {'plan/raw':>8}"
        f" {'replay s':>8} {'cpu s':>6} {'plan/replay':>11} {'ms/team':>7} {'stages':>6}"
    )
    previous: tuple[int, float] | None = None
    rows: list[Row] = []
    for teams in sorted({0, *args.teams}):
        config = teams_config(teams)
        plans: list[Plan] = []

        def plan_once(config: PlatformConfig = config, plans: list[Plan] = plans) -> Seconds:
            seconds = _timed(lambda: plans.append(evaluate(config, "bench")))
            del plans[:-1]
            return seconds

        plan = best(plan_once, args.repeat)
        count = len(plans[0].resources)
        raw = best(lambda count=count: raw_engine(count), args.repeat)  # type: ignore[misc]
        again = best(lambda plan=plans[0]: replay(plan), args.repeat)  # type: ignore[misc]
        stages = len(stages_after_cluster(plans[0])[0]) - 2  # after the provider
        per_team = None if previous is None else 1000 * (plan.cpu - previous[1]) / (teams - previous[0])
        print(
            f"{teams:>6} {count:>9} {plan.wall:>7.2f} {plan.cpu:>6.2f} {raw.wall:>6.2f} {raw.cpu:>6.2f}"
            f" {plan.cpu / raw.cpu:>7.2f}x {again.wall:>8.2f} {again.cpu:>6.2f} {plan.cpu / again.cpu:>10.2f}x"
            f" {'' if per_team is None else f'{per_team:.1f}':>7} {stages:>6}"
        )
        previous = (teams, plan.cpu)
        rows.append(Row(teams, count, plan, raw, again, per_team))
    print(f"load average after: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    print("\nplan/raw: CPU of the plan / of the engine registering as many bare resources; plan/replay: / of the")
    print("same resources and inputs registered flat; ms/team: CPU ms per team added since the row above")
    failed = False
    grown = [r for r in rows if r.ms_per_team is not None]
    if len(grown) >= 2:
        first, last = grown[0], grown[-1]
        assert first.ms_per_team is not None and last.ms_per_team is not None
        linear = last.ms_per_team / first.ms_per_team
        failed |= linear > TARGET_LINEAR
        print(
            f"linear: {last.ms_per_team:.1f} ms per team at {last.teams} teams, {first.ms_per_team:.1f} at {first.teams}:"
            f" {linear:.2f}x (target <= {TARGET_LINEAR})"
        )
    largest = rows[-1]
    failed |= largest.plan.cpu / largest.replay.cpu > TARGET_REPLAY
    print(f"plan / flat replay at {largest.teams} teams: {largest.plan.cpu / largest.replay.cpu:.2f}x CPU (target <= {TARGET_REPLAY})")
    if args.plot:
        print()
        print(plot(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
