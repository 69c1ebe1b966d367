"""The golden snapshots, and the one way to rewrite them: `make snapshots` (this module).

    python -m tests.support.snapshots        # what `make snapshots` runs

The tests compare what the code gives today with these files and never write them: a test
that rewrote its own expectation whenever an environment variable was set would pass by
construction (tests/conftest.py refuses a run with UPDATE_SNAPSHOTS set). After a rewrite,
review `git diff tests/snapshots/`: it must change only where the change means it to.

- plans/<stack>.json: every resource of the plan of tests/stacks/Pulumi.<stack>.yaml, as
  `python -m stacks plan tests/stacks/Pulumi.<stack>.yaml --json` prints it;
- full-render/<stack>.yaml: every object of the full render by digest, with its source;
- object-counts.yaml: objects per install (upstream) and per component (ours).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from tooling.cli import plan_json
from tooling.fullrender import FullRender, counts
from tooling.plan import Plan
from tooling.render import ordered

ROOT = Path(__file__).resolve().parents[1] / "snapshots"
PLANS = ROOT / "plans"
FULL_RENDERS = ROOT / "full-render"
OBJECT_COUNTS = ROOT / "object-counts.yaml"
STACKS = ("kind", "dev", "prod")
COUNTED_STACKS = ("dev", "kind", "prod")
"""The order of object-counts.yaml (as it was first written)."""


def plan_text(plan: Plan) -> str:
    return plan_json(plan) + "\n"


def content_digest(obj: dict[str, Any]) -> str:
    """The digest of an object's content in the apply order's canonical form (JSON, keys
    sorted): any change to a value, a type (1 vs "1") or a key shows; quick, unlike dumping
    ~590 objects through the pure-Python YAML dumper."""
    text = json.dumps(ordered(obj), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def object_digests(render: FullRender) -> dict[str, str]:
    """Each object the cluster receives, keyed as the API server keys it, with its source and
    the digest of its content: a change to any object shows here by name."""
    return {
        f"{o.obj.get('apiVersion', '')} {o.obj.get('kind', '')} {o.key[2]}/{o.key[3]}": f"{o.source} {content_digest(o.obj)}"
        for o in render.objects
    }


def digests_text(render: FullRender) -> str:
    return yaml.safe_dump(object_digests(render), sort_keys=False, width=200)


def counts_text(renders: dict[str, FullRender]) -> str:
    return yaml.safe_dump({stack: counts(renders[stack]) for stack in COUNTED_STACKS}, sort_keys=True)


def main() -> int:
    from stacks.config import load
    from tests.support import mirror, renders
    from tests.support.fixtures import use_fixture_stacks
    from tooling.plan import evaluate

    use_fixture_stacks()  # the snapshots are of the fixtures, whatever stacks/ holds
    if not mirror.FOUND:
        raise SystemExit(mirror.MISSING)
    PLANS.mkdir(parents=True, exist_ok=True)
    FULL_RENDERS.mkdir(parents=True, exist_ok=True)
    rendered = {}
    for stack in STACKS:
        (PLANS / f"{stack}.json").write_text(plan_text(evaluate(load(stack), stack)))
        rendered[stack] = renders.rendered(stack)
        (FULL_RENDERS / f"{stack}.yaml").write_text(digests_text(rendered[stack]))
        print(f"wrote {PLANS.name}/{stack}.json and {FULL_RENDERS.name}/{stack}.yaml")
    OBJECT_COUNTS.write_text(counts_text(rendered))
    print(f"wrote {OBJECT_COUNTS.name}; review the change: git diff {ROOT.relative_to(ROOT.parents[1])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
