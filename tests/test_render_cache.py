"""The render cache (tooling/render_cache.py): a second render runs no tool; an edit of any input
of an install (values, chart bytes, pin, tree files, Kubernetes version, namespace, release, the
tool, our code) renders that install again and only it; transforms run on every render; entries
are written whole by processes side by side; `--no-cache` neither reads nor writes; old entries
go. Each test renders a small plan of its own (a local chart and tree, helm and kustomize for
real) into a cache of its own, never the clone's nor the run's."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from facts.resource_types import HELM_CHART, KUSTOMIZE
from plumbing.base import InstallRecord
from stackmodel.config import load
from stackmodel.schema import Sources
from tests.support.checkout import REPO
from tooling import fullrender, render_cache, schemas
from tooling.fullrender import FullRender, Install, full_render, output_key
from tooling.plan import Plan, Recorded
from tooling.render_cache import Digests, RenderCache

PARENT = "urn:pulumi:dev::mlplatform::mlplatform:components:Probe"
CHART_URN = f"{PARENT}$kubernetes:helm.sh/v4:Chart::probe"
TREE_URN = f"{PARENT}$kubernetes:kustomize/v2:Directory::tree"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RenderCache:
    """A cache of the test's own, and this process's memory of outputs and parses forgotten."""
    monkeypatch.setenv(render_cache.ENV, str(tmp_path / "cache"))
    forget(monkeypatch)
    monkeypatch.setattr(fullrender, "_SESSION", None)
    found = render_cache.current()
    assert found is not None
    return found


def forget(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a new process starts with: no output or parse in memory (the cache on disk stays)."""
    monkeypatch.setattr(fullrender, "_OUTPUTS", {})
    monkeypatch.setattr(schemas, "_PARSED", {})


def write_chart(root: Path, version: str = "0.1.0", template: str = "answer: {{ .Values.answer | quote }}") -> Path:
    """A local chart: one ConfigMap with its release, namespace, chart version and a value."""
    chart = root / "chart"
    (chart / "templates").mkdir(parents=True, exist_ok=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: probe\nversion: {version}\n")
    (chart / "values.yaml").write_text("answer: 42\n")
    (chart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: probe}\ndata:\n"
        "  release: {{ .Release.Name }}\n  namespace: {{ .Release.Namespace }}\n  version: {{ .Chart.Version | quote }}\n"
        "  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n"
        f"  {template}\n"
    )
    return chart


def write_tree(release: Path, data: str = "one") -> Path:
    """A kustomize tree in a local checkout of a release: one ConfigMap."""
    tree = release / "apps" / "tree"
    tree.mkdir(parents=True, exist_ok=True)
    (tree / "kustomization.yaml").write_text("resources: [cm.yaml]\n")
    (tree / "cm.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: tree, namespace: trees}}\ndata: {{value: {data}}}\n")
    return tree


def probe_plan(root: Path, values: dict[str, Any] | None = None, **chart: Any) -> Plan:
    """The dev stack's config with the release checkout at root/release, a chart and a tree."""
    chart_dir, tree = write_chart(root) if not (root / "chart").exists() else root / "chart", root / "release" / "apps" / "tree"
    if not tree.exists():
        write_tree(root / "release")
    inputs = {"chart": str(chart_dir), "namespace": "probe", "values": values or {}, **chart}
    resources = [
        Recorded(HELM_CHART, "probe", CHART_URN, None, None, (), inputs, False),
        Recorded(KUSTOMIZE, "tree", TREE_URN, None, None, (), {"directory": str(tree)}, False),
    ]
    config = load("dev")
    config = config.model_copy(update={"sources": Sources(kubeflow_manifests=str(root / "release"))})
    return Plan("dev", resources, config=config)


def rendered_by_tools(render: FullRender) -> set[str]:
    """The installs helm or kustomize ran for (the rest came from the cache)."""
    return {label for label, timing in render.timings.items() if not timing.reused}


def data(render: FullRender, name: str) -> dict[str, str]:
    (found,) = [o.obj["data"] for o in render.objects if o.key[3] == name]
    return dict(found)


def test_a_second_render_runs_no_tool_and_gives_the_same_objects(tmp_path: Path, cache: RenderCache, monkeypatch: pytest.MonkeyPatch) -> None:
    first = full_render(probe_plan(tmp_path))
    assert rendered_by_tools(first) == {"probe", "tree"}
    assert len(list((cache.root / "installs").iterdir())) == 2
    forget(monkeypatch)
    monkeypatch.setattr(fullrender, "_run", lambda args, what: pytest.fail(f"ran {args[:2]} for {what}"))
    monkeypatch.setattr(schemas, "load_all", lambda text: pytest.fail("parsed again"))
    second = full_render(probe_plan(tmp_path))
    assert rendered_by_tools(second) == set()
    assert [o.obj for o in second.objects] == [o.obj for o in first.objects]


def _values(root: Path) -> Plan:
    return probe_plan(root, values={"answer": 43})


def _chart_bytes(root: Path) -> Plan:
    write_chart(root, template="answer: {{ .Values.answer | quote }}\n  edited: 'yes'")
    return probe_plan(root)


def _pin(root: Path) -> Plan:
    """A pin bump: the chart's version (a mirror's archive of it has another name too)."""
    write_chart(root, version="0.2.0")
    return probe_plan(root, version="0.2.0")


def _namespace(root: Path) -> Plan:
    return probe_plan(root, namespace="elsewhere")


def _release(root: Path) -> Plan:
    return probe_plan(root, name="renamed")


def _kubernetes_version(root: Path) -> Plan:
    plan = probe_plan(root)
    assert plan.config is not None
    cluster = plan.config.cluster.model_copy(update={"min_master_version": "1.36"})
    return replace(plan, config=plan.config.model_copy(update={"cluster": cluster}))


def _tree_file(root: Path) -> Plan:
    write_tree(root / "release", data="two")
    return probe_plan(root)


def _file_beside_the_tree(root: Path) -> Plan:
    """A file of the release checkout the tree could name (kustomize reads across the checkout)."""
    (root / "release" / "common.yaml").write_text("kind: Elsewhere\n")
    return probe_plan(root)


EDITS: dict[str, tuple[Callable[[Path], Plan], set[str], Callable[[FullRender], bool]]] = {
    "values": (_values, {"probe"}, lambda r: data(r, "probe")["answer"] == "43"),
    "chart bytes": (_chart_bytes, {"probe"}, lambda r: data(r, "probe")["edited"] == "yes"),
    "pin": (_pin, {"probe"}, lambda r: data(r, "probe")["version"] == "0.2.0"),
    "namespace": (_namespace, {"probe"}, lambda r: data(r, "probe")["namespace"] == "elsewhere"),
    "release name": (_release, {"probe"}, lambda r: data(r, "probe")["release"] == "renamed"),
    "kubernetes version": (_kubernetes_version, {"probe"}, lambda r: data(r, "probe")["kube"] == "v1.36.0"),
    "tree file": (_tree_file, {"tree"}, lambda r: data(r, "tree")["value"] == "two"),
    "file beside the tree": (_file_beside_the_tree, {"tree"}, lambda r: data(r, "tree")["value"] == "one"),
}


@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_an_edited_input_renders_its_install_again_and_only_it(
    tmp_path: Path, cache: RenderCache, monkeypatch: pytest.MonkeyPatch, edit: tuple[Callable[[Path], Plan], set[str], Callable[[FullRender], bool]]
) -> None:
    change, again, shows = edit
    full_render(probe_plan(tmp_path))
    forget(monkeypatch)  # a new process: only the cache on disk
    render = full_render(change(tmp_path))
    assert rendered_by_tools(render) == again
    assert shows(render), "the render shows the edit"


@pytest.mark.parametrize("tool", ["helm", "kubectl"])
def test_another_tool_binary_renders_what_it_runs_again(tmp_path: Path, cache: RenderCache, monkeypatch: pytest.MonkeyPatch, tool: str) -> None:
    """A replaced helm or kubectl (another version on PATH, `$MLPLATFORM_HELM`): its file's identity changes."""
    full_render(probe_plan(tmp_path))
    forget(monkeypatch)
    identity = render_cache.binary_identity
    monkeypatch.setattr(render_cache, "binary_identity", lambda path: identity(path) + ("-replaced" if Path(path).name == tool else ""))
    assert rendered_by_tools(full_render(probe_plan(tmp_path))) == {"helm": {"probe"}, "kubectl": {"tree"}}[tool]


def test_a_replaced_binary_has_another_identity(tmp_path: Path) -> None:
    binary = tmp_path / "helm"
    binary.write_bytes(b"one")
    before = render_cache.binary_identity(str(binary))
    stat = binary.stat()
    binary.write_bytes(b"two")  # same size, the old times put back: only the change time says so
    os.utime(binary, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert render_cache.binary_identity(str(binary)) != before


def test_an_edit_of_our_code_that_runs_the_tools_renders_everything_again(tmp_path: Path, cache: RenderCache, monkeypatch: pytest.MonkeyPatch) -> None:
    full_render(probe_plan(tmp_path))
    forget(monkeypatch)
    monkeypatch.setattr(fullrender, "_code", lambda: "edited")
    assert rendered_by_tools(full_render(probe_plan(tmp_path))) == {"probe", "tree"}


def test_our_codes_version_is_its_source(tmp_path: Path) -> None:
    source = tmp_path / "runner.py"
    source.write_text("FLAGS = ['--include-crds']\n")
    runner = types.ModuleType("runner")
    runner.__file__ = str(source)
    before = render_cache.code_version(runner)
    source.write_text("FLAGS = ['--include-crds', '--skip-tests']\n")
    assert render_cache.code_version(runner) != before


def test_transforms_run_on_every_render_on_what_the_cache_gives(tmp_path: Path, cache: RenderCache, monkeypatch: pytest.MonkeyPatch) -> None:
    """Transforms are not cached: an edit of one shows at once, with no tool run."""

    def with_transform(value: str) -> Plan:
        plan = probe_plan(tmp_path)
        marked = lambda obj: {**obj, "data": {**obj["data"], "transformed": value}} if obj.get("kind") == "ConfigMap" else None  # noqa: E731
        return replace(plan, record=InstallRecord(transforms={(HELM_CHART, "probe"): (marked,)}))

    assert data(full_render(with_transform("first")), "probe")["transformed"] == "first"
    forget(monkeypatch)
    render = full_render(with_transform("edited"))
    assert rendered_by_tools(render) == set() and data(render, "probe")["transformed"] == "edited"


def test_an_install_rendered_early_is_not_rendered_again(tmp_path: Path, cache: RenderCache, monkeypatch: pytest.MonkeyPatch) -> None:
    """rendering_early's renders, started as the plan registers each install, are what the full
    render takes (and they fill the cache)."""
    ran: list[str] = []
    run = fullrender._run

    def counted(args: list[str], what: str) -> str:
        ran.append(what)
        return run(args, what)

    monkeypatch.setattr(fullrender, "_run", counted)
    plan = probe_plan(tmp_path)
    assert plan.config is not None
    with fullrender.rendering_early(plan.config) as early:
        for resource in plan.resources:
            early(resource)
    render = full_render(plan)
    assert sorted(ran) == ["probe", "tree"] and rendered_by_tools(render) == {"probe", "tree"}
    assert len(list((cache.root / "installs").iterdir())) == 2


def test_a_plan_that_fails_leaves_nothing_for_the_next_render(tmp_path: Path, cache: RenderCache, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its early renders and digests are of files as they were: the next render, after an edit,
    computes its own."""
    plan = probe_plan(tmp_path)
    assert plan.config is not None
    config = plan.config

    def failing_plan() -> None:
        with fullrender.rendering_early(config) as early:
            for resource in plan.resources:
                early(resource)
            raise RuntimeError("the program stopped")

    with pytest.raises(RuntimeError, match="the program stopped"):
        failing_plan()
    assert fullrender._SESSION is None
    write_tree(tmp_path / "release", data="edited")
    with fullrender.rendering_early(plan.config):
        assert not fullrender._EARLY
    assert data(full_render(plan), "tree")["value"] == "edited"


def test_no_cache_neither_reads_nor_writes_it(tmp_path: Path, cache: RenderCache, monkeypatch: pytest.MonkeyPatch) -> None:
    full_render(probe_plan(tmp_path))
    before = sorted(p.relative_to(cache.root) for p in cache.root.rglob("*"))
    forget(monkeypatch)
    with render_cache.disabled():
        render = full_render(probe_plan(tmp_path, values={"answer": 7}))
    assert rendered_by_tools(render) == {"probe", "tree"}
    assert sorted(p.relative_to(cache.root) for p in cache.root.rglob("*")) == before
    assert render_cache.current() is not None, "only what ran inside"


def test_what_cannot_be_known_offline_is_rendered_every_time(tmp_path: Path) -> None:
    """A chart from a repository or registry, a tree outside the release checkout, a tree that
    names remote bases kustomize fetches: no key."""
    plan = probe_plan(tmp_path)
    assert plan.config is not None
    chart, tree = sorted(fullrender.installs(plan), key=lambda i: i.kind)
    sources, digests = plan.config.sources, Digests()
    assert output_key(chart, [], "v1.36.0", sources, digests) is not None
    assert output_key(tree, [], "v1.36.0", sources, digests) is not None
    assert output_key(replace(chart, target="kueue", repo="oci://registry.k8s.io/kueue/charts"), [], "v1.36.0", sources, digests) is None
    assert output_key(replace(chart, target="oci://registry.k8s.io/kueue/charts/kueue"), [], "v1.36.0", sources, digests) is None
    elsewhere = write_tree(tmp_path / "elsewhere")
    assert output_key(replace(tree, target=str(elsewhere)), [], "v1.36.0", sources, digests) is None
    remote = replace(tree, target=f"{tmp_path / 'release'}/applications/pipeline/upstream")
    assert output_key(remote, [], "v1.36.0", sources, digests) is None, "Pipelines names Argo's remote bases"
    assert output_key(replace(tree, target="https://github.com/kubeflow/manifests//common?ref=v1"), [], "v1.36.0", sources, digests) is None


@pytest.mark.parametrize(
    "change",
    [
        {"capabilities": ["x.io/v1"]},
        {"kube_version": "v1.35.0"},
        {"install": {"values": {"answer": 1}}},
        {"install": {"namespace": "other"}},
        {"install": {"release": "other"}},
        {"install": {"version": "0.2.0"}},
        {"install": {"target": "ELSEWHERE"}},
    ],
)
def test_every_input_of_a_chart_is_in_its_key(tmp_path: Path, change: dict[str, Any]) -> None:
    plan = probe_plan(tmp_path)
    assert plan.config is not None
    chart: Install = next(i for i in fullrender.installs(plan) if i.kind == "helm")
    (tmp_path / "elsewhere").symlink_to(tmp_path / "chart")
    edits: dict[str, Any] = {k: str(tmp_path / "elsewhere") if v == "ELSEWHERE" else v for k, v in change.get("install", {}).items()}
    changed = replace(chart, **edits)
    capabilities: list[str] = change.get("capabilities", [])
    kube_version: str = change.get("kube_version", "v1.36.0")
    key = output_key(chart, [], "v1.36.0", plan.config.sources, Digests())
    assert key is not None and output_key(changed, capabilities, kube_version, plan.config.sources, Digests()) not in (key, None)


WRITER = """
import sys
from pathlib import Path
from tooling.render_cache import RenderCache
cache, text = RenderCache(Path(sys.argv[1])), "x: " + "y" * 2_000_000 + "\\n"
for _ in range(15):
    digest = cache.record("key", text)
    cache.keep_documents(digest, "parser", ({"x": "y" * 2_000_000},))
"""


def test_processes_writing_one_entry_at_once_never_show_a_part_of_it(tmp_path: Path) -> None:
    """Two processes write the same entries over and over while this one reads: every read is
    the whole entry or none, and no partial file stays."""
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], cwd=REPO) for _ in range(2)]
    cache, text, reads = RenderCache(tmp_path), "x: " + "y" * 2_000_000 + "\n", 0
    while any(w.poll() is None for w in writers):
        output = cache.output("key")
        if output is not None:
            assert cache.text(output) == text
            docs = cache.documents(output, "parser")
            assert docs is None or docs == ({"x": "y" * 2_000_000},)
            reads += 1
    assert [w.returncode for w in writers] == [0, 0]
    assert reads > 0 and not list(tmp_path.rglob("*.partial"))


def test_entries_unused_for_a_month_go_at_most_once_a_day(tmp_path: Path) -> None:
    cache = RenderCache(tmp_path)
    output = cache.record("old", "a: 1\n")
    cache.record("new", "b: 2\n")
    month_ago = time.time() - 31 * render_cache.DAY
    for path in (tmp_path / "installs" / "old", tmp_path / "outputs" / f"{output}.yaml"):
        os.utime(path, (month_ago, month_ago))
    assert sorted(p.name for p in cache.prune()) == sorted(["old", f"{output}.yaml"])
    assert cache.output("old") is None and cache.output("new") is not None
    os.utime(tmp_path / "installs" / "new", (month_ago, month_ago))
    assert cache.prune() == [], "pruned today already"
    assert cache.prune(now=time.time() + render_cache.DAY + 1) != []


@pytest.fixture(autouse=True)
def _no_stray_early_renders() -> Iterator[None]:
    yield
    assert not fullrender._EARLY
