"""Every mutation of the shipped stacks (tests/support/mutations.py: drops, empties,
duplicated list entries, wrong types, out-of-range numbers), run through
`python -m stacks plan` for real: the ones the loader accepts are planned under mocks.

    python -m benchmarks.mutations [--jobs 2] [--count N --seed S] [--no-plan]

Each job is a process of its own that runs its share one after another in-process, the
way a long session does, so what only shows after many plans or at interpreter exit (a
traceback from a finaliser) shows in its stderr, which must stay empty. Fails (exit 1)
on any mutation that exits other than 0 or 2, prints a traceback, escapes the CLI, or is
accepted though the schema documents it as invalid; prints counts and the time taken.
The unit suite runs a seeded sample of the same (tests/test_mutations.py).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.support.mutations import Mutation

REPO = Path(__file__).resolve().parents[1]


def chosen(count: int | None, seed: int) -> list[Mutation]:
    from tests.support import mutations

    return mutations.sample(count, seed) if count else mutations.all_mutations()


def worker(shard: int, jobs: int, count: int | None, seed: int, plan: bool) -> int:
    """Run every `jobs`-th mutation from `shard` on, one JSON line each on stdout."""
    import tooling.cli
    from tests.support.mutations import run

    if not plan:

        def accepted(_config: object, _stack: str, _build: object = None) -> None:
            raise SystemExit(0)

        tooling.cli.evaluate = accepted  # type: ignore[assignment]
    picked = chosen(count, seed)[shard::jobs]
    with tempfile.TemporaryDirectory() as directory:
        for mutation in picked:
            outcome = run(mutation, Path(directory))
            line = {"id": mutation.id, "kind": mutation.kind, "code": outcome.code, "failures": outcome.failures()}
            if line["failures"]:
                line["output"] = outcome.output[-2000:]
            print(json.dumps(line), flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="processes side by side (default 2)")
    parser.add_argument("--count", type=int, help="a sample of this many (default: all)")
    parser.add_argument("--seed", type=int, default=26, help="the sample's seed")
    parser.add_argument("--no-plan", action="store_true", help="stop accepted stacks before the program")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        return worker(args.worker, args.jobs, args.count, args.seed, not args.no_plan)

    start = time.perf_counter()
    command = [sys.executable, "-m", "benchmarks.mutations", "--jobs", str(args.jobs), "--seed", str(args.seed)]
    command += ["--count", str(args.count)] if args.count else []
    command += ["--no-plan"] if args.no_plan else []
    processes = [
        subprocess.Popen([*command, "--worker", str(i)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(args.jobs)
    ]
    lines: list[dict[str, object]] = []
    problems: list[str] = []
    for i, process in enumerate(processes):
        out, err = process.communicate()
        lines += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        if process.returncode != 0 or err.strip():
            problems.append(f"job {i}: exit {process.returncode}, stderr:\n{err[-3000:]}")
    for line in lines:
        if line["failures"]:
            failures = line["failures"] if isinstance(line["failures"], list) else []
            problems.append(f"{line['id']}: {', '.join(str(f) for f in failures)}\n{line.get('output', '')}")
    codes = Counter(str(line["code"]) for line in lines)
    kinds = Counter(f"{line['kind']}->{line['code']}" for line in lines)
    print(f"{len(lines)} mutations in {time.perf_counter() - start:.0f} s, {args.jobs} jobs: exits {dict(codes)}")
    print("  " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    for problem in problems:
        print(f"FAIL {problem}", file=sys.stderr)
    print(f"{len(problems)} problems", file=sys.stderr if problems else sys.stdout)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
