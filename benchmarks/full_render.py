"""How long the full render and `check` of each shipped stack take, cold (a fresh process:
no tree or parse cache), the way `python -m stacks check <stack>` runs it.

    python -m benchmarks.full_render [--mirror ../shared/upstream] [--stacks kind dev prod]

Each stack runs in its own interpreter so nothing carries over; printed per stack: the
plan under mocks, the render (helm, kustomize, parsing, transforms), the check, and the
total, against the 20 s target on these 2-core machines. Not part of the unit suite.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 20.0

ONE_STACK = """
import json, sys, time
from components.sources import mirror_sources
from tooling.check import check
from stacks.config import load
from tooling.fullrender import full_render
from tooling.plan import evaluate
from tooling import tools
tools.find(tools.HELM), tools.find(tools.KUBECTL)
stack, mirror = sys.argv[1], sys.argv[2]
start = time.perf_counter()
config = load(stack).model_copy(update={"sources": mirror_sources(mirror)})
plan = evaluate(config, stack)
planned = time.perf_counter()
render = full_render(plan)
rendered = time.perf_counter()
found = check(render)
done = time.perf_counter()
print(json.dumps({"plan": planned - start, "render": rendered - planned, "check": done - rendered,
                  "objects": len(render.objects), "violations": len(found)}))
"""


def measure(stack: str, mirror: Path) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-c", ONE_STACK, stack, str(mirror)], cwd=REPO, capture_output=True, text=True, check=True
    )
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, default=REPO.parent / "shared" / "upstream")
    parser.add_argument("--stacks", nargs="+", default=["kind", "dev", "prod"])
    args = parser.parse_args(argv)
    print(f"{'stack':<6} {'plan':>6} {'render':>7} {'check':>6} {'total':>6}  objects  (target <= {TARGET_SECONDS:.0f} s)")
    worst = 0.0
    for stack in args.stacks:
        m = measure(stack, args.mirror)
        total = m["plan"] + m["render"] + m["check"]
        worst = max(worst, total)
        print(f"{stack:<6} {m['plan']:6.1f} {m['render']:7.1f} {m['check']:6.1f} {total:6.1f}  {int(m['objects']):7d}")
    return 0 if worst <= TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
