"""The full render of a shipped stack, once per test run: in memory per process, and shared
by pytest-xdist's workers through a file in the run's temporary directory (the pattern of
pytest-xdist's docs, "Making session-scoped fixtures execute only once"), so two test files
on two workers do not both spend half a minute rendering the same stack; beneath it, the run's
own render cache."""

from __future__ import annotations

import copy
import os
import pickle
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from filelock import FileLock

from facts.versions import RELEASE_MANIFESTS
from plumbing.base import InstallRecord
from plumbing.sources import MIRROR_RELEASE_MANIFESTS, mirror_sources
from stackmodel.config import load
from stackmodel.schema import Images
from tests.support.fixtures import fixture
from tests.support.mirror import MIRROR
from tooling import check, fullrender, render_cache
from tooling.cli import stack_name
from tooling.fullrender import FullRender, Rendered
from tooling.plan import evaluate

REPO = Path(__file__).resolve().parents[2]
SHARED: Path | None = None
"""The run's temporary directory all workers share (pytest cleans it up: it keeps the last
three runs); set by tests/conftest.py when pytest-xdist runs the suite, else None."""


def share_between_workers(root: Path) -> None:
    """Every render of the run reads and writes the render cache in `root` (the run's temporary
    directory: the clone's own cache stays out of the tests), so two stacks rendered on two
    workers run each common chart and tree once and parse its output once (tooling/render_cache.py).
    The processes the tests start inherit it. Workers also share whole renders there (`rendered`)."""
    global SHARED
    SHARED = root if os.environ.get("PYTEST_XDIST_WORKER") else None
    os.environ[render_cache.ENV] = str(root / "render-cache")


IMAGE_MIRROR = "europe-docker.pkg.dev/acme-ml/mirror"
"""The image mirror of the copy of a shipped stack that `rendered(stack, image_mirror=True)` renders."""


def _render(stack: str, image_mirror: bool) -> FullRender:
    """Release manifests the test mirror lacks are left out (../shared/upstream holds none: the
    GPU fabric fixture's NCCL installers), never fetched: `left_out` lists them, and what reads
    the render holds it to exactly those (unmirrored_release_manifests)."""
    config = load(stack)
    update: dict[str, object] = {"sources": mirror_sources(MIRROR)}
    if image_mirror:
        update["images"] = Images(mirror=IMAGE_MIRROR)
    return fullrender.full_render(evaluate(config.model_copy(update=update), stack), allow_unmirrored=True)


def unmirrored_release_manifests(render: FullRender) -> list[str]:
    """What the render left out that is not a pinned release manifest missing from the test
    mirror: nothing else may be left out."""
    pinned = {f"{MIRROR}/{MIRROR_RELEASE_MANIFESTS}/{m.mirror_path}" for m in RELEASE_MANIFESTS}
    return [i.target for i in render.left_out if i.target not in pinned or Path(i.target).is_file()]


@cache
def rendered_project(path: Path) -> FullRender:
    """The full render of one of the project's own stack files (stacks/, whatever a fork put
    there) from the mirror: the fixture's render where the file says what the fixture of its
    name says (acme's examples in stacks/ are the fixtures' copies), else its own."""
    name = stack_name(str(path))
    config = load(str(path))
    if fixture(name).is_file() and load(name) == config:
        return rendered(name)
    return fullrender.full_render(evaluate(config.model_copy(update={"sources": mirror_sources(MIRROR)}), name), allow_unmirrored=True)


@cache
def rendered(stack: str, image_mirror: bool = False) -> FullRender:
    """The full render of the stack named `stack` (a fixture of tests/stacks/ in the tests) from the mirror (with `image_mirror`, of a
    copy that sets `mlplatform:images.mirror: IMAGE_MIRROR`). A render read back from another
    worker has an empty record in its plan but for its prepared trees (transforms, moves and
    kept objects are functions; nothing reads them after the render)."""
    if SHARED is None:
        return _render(stack, image_mirror)
    path = SHARED / f"full-render-{stack}{'-image-mirror' if image_mirror else ''}.pickle"
    with FileLock(str(path) + ".lock"):
        if path.exists():
            render: FullRender = pickle.loads(path.read_bytes())
            return render
        render = _render(stack, image_mirror)
        plain = replace(render.plan, record=InstallRecord(prepared_trees=render.plan.record.prepared_trees))
        path.write_bytes(pickle.dumps(replace(render, plan=plain)))
        return render


def with_objects(render: FullRender, change: Callable[[list[Rendered]], list[Rendered]]) -> FullRender:
    return replace(render, objects=change(list(render.objects)))


def edited(render: FullRender, kind: str, name: str, edit: Callable[[dict[str, Any]], None]) -> FullRender:
    """`render` with one object changed by `edit` (on a copy)."""

    def change(objects: list[Rendered]) -> list[Rendered]:
        result = []
        for o in objects:
            if o.obj.get("kind") == kind and o.key[3] == name:
                obj = copy.deepcopy(o.obj)
                edit(obj)
                o = replace(o, obj=obj)
            result.append(o)
        return result

    return with_objects(render, change)


def violations(render: FullRender, rule: str) -> list[check.Violation]:
    chosen = [r for r in check.RULES if r.name == rule]
    assert chosen, rule
    return check.check(render, chosen)
