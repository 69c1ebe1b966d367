"""The golden snapshots, and the one way to rewrite them: `make snapshots` (this module).

    python -m tests.support.snapshots        # what `make snapshots` runs

The tests compare what the code gives today with these files and never write them: a test
that rewrote its own expectation whenever an environment variable was set would pass by
construction (tests/conftest.py refuses a run with UPDATE_SNAPSHOTS set). After a rewrite,
review `git diff tests/snapshots/`: it must change only where the change means it to.

- plans/<stack>.json: every resource of the plan of tests/stacks/Pulumi.<stack>.yaml, as
  `python -m stacks plan tests/stacks/Pulumi.<stack>.yaml --json` prints it;
- full-render/<stack>/: every object of the full render as normalized YAML, one file per
  install (`<component>/<install>.yaml`, a chart's or tree's objects after our transforms)
  and per component for our own objects (`<component>.yaml`), in apply order, so a diff
  shows the fields a change moves; `index.yaml` lists every object in apply order with its
  file and a digest of what the file holds (the test compares digests, then shows the diff
  of the files that differ). Normalized: keys in the order `python -m stacks render` writes
  them, and values derived from other content replaced by a placeholder (kustomize's
  hash suffix on generated ConfigMap and Secret names, wherever the name is used, and
  annotations that hold a checksum, digest or hash of configuration), so that a change
  shows once, where it is made. Secrets are masked in the render already. A
  CustomResourceDefinition keeps its metadata and a summary of its spec (group, names,
  scope, versions, a digest of the whole): the pinned upstream CRDs are 16 MB of each
  stack's 17, read from ../shared/crds, not ours to review line by line;
- object-counts.yaml: objects per install (upstream) and per component (ours).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from tooling.cli import plan_json
from tooling.fullrender import FullRender, Rendered, counts
from tooling.plan import Plan
from tooling.render import ordered

ROOT = Path(__file__).resolve().parents[1] / "snapshots"
PLANS = ROOT / "plans"
FULL_RENDERS = ROOT / "full-render"
OBJECT_COUNTS = ROOT / "object-counts.yaml"
STACKS = ("kind", "dev", "prod")
COUNTED_STACKS = ("dev", "kind", "prod")
"""The order of object-counts.yaml (as it was first written)."""
INDEX = "index.yaml"

KUSTOMIZE_HASH = re.compile(r"^(?P<name>.+)-[2456789bcdfghkmt]{10}$")
"""kustomize's suffix on a generated ConfigMap's or Secret's name: ten characters of the hash
of its content, in the alphabet kustomize encodes it in (api/hasher/hasher.go `encode`)."""
GENERATED = "<hash>"
DERIVED_ANNOTATION = re.compile(r"checksum|digest|hash", re.IGNORECASE)
"""Annotations whose value is a checksum of configuration (a chart's `checksum/config`, Kueue's
config checksum, our `mlplatform.io/config-digest`): they change with what they hash."""
DERIVED = "<digest>"


def plan_text(plan: Plan) -> str:
    return plan_json(plan) + "\n"


def object_digest(value: Any) -> str:
    """16 hex characters of the SHA-256 of `value`'s canonical JSON (keys sorted): the index's
    digest of a normalized object, and a CRD summary's of its spec. Any change to a value, a
    type (1 vs "1") or a key shows."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def generated_names(objects: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Each kustomize-generated ConfigMap or Secret name of the render -> its placeholder."""
    found = {}
    for obj in objects:
        name = (obj.get("metadata") or {}).get("name", "")
        match = KUSTOMIZE_HASH.match(name) if obj.get("kind") in ("ConfigMap", "Secret") else None
        if match:
            found[name] = f"{match['name']}-{GENERATED}"
    return found


def _sanitized(value: Any, generated: Mapping[str, str], key: str = "") -> Any:
    if isinstance(value, dict):
        if key == "annotations":
            return {k: DERIVED if DERIVED_ANNOTATION.search(k) else _sanitized(v, generated) for k, v in value.items()}
        return {k: _sanitized(v, generated, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_sanitized(v, generated) for v in value]
    if isinstance(value, str):
        return generated.get(value, value)
    return value


def _crd_summary(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec") or {}
    versions = [{k: v.get(k) for k in ("name", "served", "storage") if k in v} for v in spec.get("versions") or []]
    names = {k: v for k, v in (spec.get("names") or {}).items() if k in ("kind", "plural")}
    summary = {"group": spec.get("group"), "names": names, "scope": spec.get("scope"), "versions": versions, "digest": object_digest(spec)}
    return {**obj, "spec": summary}


def normalized(obj: dict[str, Any], generated: Mapping[str, str]) -> dict[str, Any]:
    """An object as its snapshot file holds it (see the module's docstring)."""
    clean = _sanitized(obj, generated)
    if clean.get("kind") == "CustomResourceDefinition":
        clean = _crd_summary(clean)
    return ordered(clean)


def file_of(o: Rendered) -> str:
    """The snapshot file of an object, relative to its stack's folder."""
    return f"{o.source}.yaml"


def snapshot(render: FullRender) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """File -> its objects (key as the index names it, normalized object), in apply order."""
    generated = generated_names(o.obj for o in render.objects)
    files: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for o in render.objects:
        files.setdefault(file_of(o), []).append((object_key(o), normalized(o.obj, generated)))
    return files


def object_key(o: Rendered) -> str:
    """An object keyed as the API server keys it."""
    return f"{o.obj.get('apiVersion', '')} {o.obj.get('kind', '')} {o.key[2]}/{o.key[3]}"


def index(files: Mapping[str, list[tuple[str, dict[str, Any]]]], render: FullRender) -> dict[str, str]:
    """Every object in apply order -> `<file> <digest of its normalized form>`."""
    digests = {key: f"{name} {object_digest(obj)}" for name, objects in files.items() for key, obj in objects}
    return {object_key(o): digests[object_key(o)] for o in render.objects}


class _Dumper(yaml.SafeDumper):
    """Block style, and multi-line strings (a ConfigMap's files, scripts) as literal blocks, one
    line of the file per line of the snapshot, so that a diff shows the lines that changed."""

    def represent_str(self, data: str) -> yaml.ScalarNode:
        return self.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)


_Dumper.add_representer(str, _Dumper.represent_str)


def file_text(objects: list[tuple[str, dict[str, Any]]]) -> str:
    return yaml.dump_all([obj for _key, obj in objects], Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120)


def read_index(stack: str) -> dict[str, str]:
    found: dict[str, str] = yaml.load((FULL_RENDERS / stack / INDEX).read_text(), Loader=yaml.CSafeLoader)
    return found


def differences(stack: str, render: FullRender, changed: Iterable[str], lines: int = 120) -> str:
    """The unified diff of the snapshot files that hold `changed` objects (index keys), against
    what `make snapshots` would write today: the fields that moved, first `lines` lines."""
    files = snapshot(render)
    old, new = read_index(stack), index(files, render)
    names = sorted({entry.split(" ", 1)[0] for key in changed for entry in (old.get(key), new.get(key)) if entry})
    diff: list[str] = []
    for name in names:
        path = FULL_RENDERS / stack / name
        before = path.read_text().splitlines(keepends=True) if path.is_file() else []
        after = file_text(files.get(name, [])).splitlines(keepends=True)
        diff += difflib.unified_diff(before, after, f"{stack}/{name} (snapshot)", f"{stack}/{name} (today)", n=2)
    shown = "".join(diff[:lines])
    return shown + (f"... ({len(diff) - lines} more lines)\n" if len(diff) > lines else "")


def write_full_render(stack: str, render: FullRender) -> None:
    """Rewrite full-render/<stack>/ whole (files of installs that are gone go too)."""
    folder = FULL_RENDERS / stack
    for old in folder.rglob("*.yaml") if folder.is_dir() else ():
        old.unlink()
    files = snapshot(render)
    for name, objects in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(file_text(objects))
    (folder / INDEX).write_text(yaml.safe_dump(index(files, render), sort_keys=False, width=200))


def counts_text(renders: dict[str, FullRender]) -> str:
    return yaml.safe_dump({stack: counts(renders[stack]) for stack in COUNTED_STACKS}, sort_keys=True)


def main() -> int:
    from stackmodel.config import load
    from tests.support import mirror, renders
    from tests.support.fixtures import use_fixture_stacks
    from tooling import render_cache
    from tooling.plan import evaluate

    use_fixture_stacks()  # the snapshots are of the fixtures, whatever stacks/ holds
    if not mirror.FOUND:
        raise SystemExit(mirror.MISSING)
    PLANS.mkdir(parents=True, exist_ok=True)
    FULL_RENDERS.mkdir(parents=True, exist_ok=True)
    rendered = {}
    # The golden renders from helm and kustomize themselves: no render cache read or written.
    with render_cache.disabled():
        for stack in STACKS:
            (PLANS / f"{stack}.json").write_text(plan_text(evaluate(load(stack), stack)))
            rendered[stack] = renders.rendered(stack)
            write_full_render(stack, rendered[stack])
            print(f"wrote {PLANS.name}/{stack}.json and {FULL_RENDERS.name}/{stack}/")
    OBJECT_COUNTS.write_text(counts_text(rendered))
    print(f"wrote {OBJECT_COUNTS.name}; review the change: git diff {ROOT.relative_to(ROOT.parents[1])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
