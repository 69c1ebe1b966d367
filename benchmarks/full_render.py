"""How long the full render and `check` of each shipped stack take, cold (a fresh process:
no tree or parse cache), the way `python -m stacks check <stack>` runs it, beside the raw
tools doing the same installs.

    python -m benchmarks.full_render [--mirror DIR] [--stacks kind dev prod] [--repeat 3]

Each run of a stack is an interpreter of its own, so nothing carries over. It measures the
plan under mocks, the render (helm, kustomize, parsing, transforms) and the check; then, in
the same process, "raw": `helm template` and `kubectl kustomize` of the same installs with
the same inputs (chart values, namespace, capabilities, tree), four at a time as the render
runs them, their output thrown away. The ratio (plan + render + check) / raw is what `check`
costs over the tools it cannot do without. Printed per stack: the median of each over the
repeats, the ratio of the medians and the range of the runs' ratios, the component stages
after the Kubernetes provider (tooling/graph.py), and the machine's load average before and
after (a shared machine is noisy: compare runs at a similar load). Targets: at most 20 s per
stack, a ratio of at most 2.0 on dev, at most 4 stages. Not part of the unit suite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tooling.mirror import mirror_for

REPO = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 20.0
TARGET_RATIO = 2.0
TARGET_STAGES = 4
"""Component stages after the Kubernetes provider (tooling/graph.py; tests/test_graph.py asserts it)."""
RATIO_STACK = "dev"
"""The stack the ratio target is about (the issue that set it measured dev)."""

ONE_STACK = """
import json, sys, time
from concurrent.futures import ThreadPoolExecutor
from plumbing.sources import mirror_sources
from tooling.check import check
from stackmodel.config import load
from tooling import cluster_version, fullrender
from tooling.fullrender import api_versions, rendering_early, full_render, helm_template
from tooling.graph import stages_after_cluster
from tooling.plan import evaluate
from tooling import tools
helm, kubectl = tools.find(tools.HELM), tools.find(tools.KUBECTL)
stack, mirror = sys.argv[1], sys.argv[2]
start = time.perf_counter()
config = load(stack).model_copy(update={"sources": mirror_sources(mirror)})
with rendering_early(cluster_version.kubernetes_version(config)) as early:
    plan = evaluate(config, stack, on_record=early)
planned = time.perf_counter()
render = full_render(plan)
rendered = time.perf_counter()
found = check(render)
done = time.perf_counter()

# The same installs with the raw tools: each chart with the capabilities the render gave it
# (the CRDs of the installs it waits for), each tree as the render builds it.
by_urn = {i.resource.urn: i for i in render.installs}
kube_version = cluster_version.kubernetes_version(plan.config)
crds = {}
for o in render.objects:
    if o.upstream and o.obj.get("kind") == "CustomResourceDefinition":
        crds.setdefault(o.urn, []).append(o.original or o.obj)
def raw(install):
    if install.kind == "kustomize":
        fullrender._run([kubectl, "kustomize", "--load-restrictor", "LoadRestrictionsNone", install.target], install.label)
    else:
        waits = plan.waits_for(install.resource) & set(by_urn)
        helm_template(install, api_versions(o for urn in waits for o in crds.get(urn, [])), kube_version)
raw_start = time.perf_counter()
with ThreadPoolExecutor(max_workers=4) as pool:
    list(pool.map(raw, render.installs))
raw_done = time.perf_counter()
print(json.dumps({"plan": planned - start, "render": rendered - planned, "check": done - rendered,
                  "raw": raw_done - raw_start, "installs": len(render.installs),
                  "stages": len(stages_after_cluster(plan)[0]) - 2,
                  "objects": len(render.objects), "violations": len(found)}))
"""


def measure(stack: str, mirror: Path) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-c", ONE_STACK, stack, str(mirror)], cwd=REPO, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise SystemExit(f"{stack}: the measuring process failed:\n{result.stderr.strip()}")
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def load_average() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, help="the mirror directory (default: where the tools find one, tooling/mirror.py)")
    parser.add_argument("--stacks", nargs="+", default=["kind", "dev", "prod"])
    parser.add_argument("--repeat", type=int, default=3, help="runs per stack; medians are printed (default 3)")
    args = parser.parse_args(argv)
    mirror = mirror_for(args.mirror)
    if mirror is None:
        parser.error("no upstream mirror found: `make mirror`, or give --mirror DIR")
    print(f"load average before: {load_average()} ({os.cpu_count()} CPUs); medians of {args.repeat} run(s) per stack")
    print(
        f"{'stack':<6} {'plan':>5} {'render':>6} {'check':>5} {'total':>6} {'raw':>5} {'ratio':>6} {'runs':>11}"
        f"  installs objects stages  (targets: total <= {TARGET_SECONDS:.0f} s, ratio <= {TARGET_RATIO:.1f} on {RATIO_STACK},"
        f" stages <= {TARGET_STAGES})"
    )
    failed = False
    for stack in args.stacks:
        runs = [measure(stack, mirror) for _ in range(args.repeat)]
        median = {key: statistics.median(r[key] for r in runs) for key in ("plan", "render", "check", "raw")}
        totals = [r["plan"] + r["render"] + r["check"] for r in runs]
        total = statistics.median(totals)
        ratio = total / median["raw"]
        ratios = sorted(t / r["raw"] for t, r in zip(totals, runs, strict=True))
        spread = f"{ratios[0]:.2f}-{ratios[-1]:.2f}"
        print(
            f"{stack:<6} {median['plan']:5.1f} {median['render']:6.1f} {median['check']:5.1f} {total:6.1f} "
            f"{median['raw']:5.1f} {ratio:5.2f}x {spread:>11}  {int(runs[0]['installs']):8d} {int(runs[0]['objects']):7d}"
            f" {int(runs[0]['stages']):6d}"
        )
        failed |= total > TARGET_SECONDS or (stack == RATIO_STACK and ratio > TARGET_RATIO) or runs[0]["stages"] > TARGET_STAGES
    print(f"load average after: {load_average()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
