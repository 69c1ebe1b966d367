"""The whole platform as the cluster will receive it: every chart rendered by helm v4 and
every Kubeflow tree built by kustomize the way pulumi-kubernetes does it, put through the
program's own transforms, plus the objects we author.

What pulumi-kubernetes does, read in its provider sources (provider/pkg/provider/helm/v4/
chart.go, kustomize/v2/directory.go, yaml/v2/yaml.go):
- helm.v4.Chart: `helm template` with the release named after the resource (or `name`),
  `--namespace`, CRDs included, hooks dropped (`DisableHooks`, hooks are never applied),
  the cluster's version and API versions as capabilities;
- kustomize.v2.Directory: krusty with no load restrictions and no reordering;
- yaml.v2.ConfigFile: the file's documents as they are (read here from the mirror only: a
  render never fetches; one the mirror lacks is refused, or left out and listed with
  `allow_unmirrored`);
- all three: a namespaced object without a namespace gets the install's namespace (or the
  provider's default, `default`), then the resource transforms run on each object.
Capabilities offline: the pinned Kubernetes version, and the API versions a first
`pulumi up` would find, i.e. the CRDs of the installs this one depends on.

Long by design: the one place that reproduces what pulumi-kubernetes renders (installs, the
scheduling of helm and kustomize, normalization, transforms, aliases of moved objects).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache, partial
from pathlib import Path
from typing import Any

import pulumi
import yaml

from facts.resource_types import HELM_CHART, KUSTOMIZE
from facts.support import minor, minor_label
from facts.versions import RELEASE_MANIFESTS
from plumbing import postrender
from plumbing.base import child_name, child_type, moved_aliases, transform_name
from plumbing.postrender import PostRenderer
from plumbing.sources import PREPARED_TREES, PreparedTree, is_local, is_prepared, prepared_tree, remote_bases_of
from plumbing.trees import PrepareError, prepare, prepare_all
from stackmodel.schema import Sources
from stackmodel.stack import PlatformConfig
from tooling import cluster_version, render_cache, tools
from tooling.plan import SECRET, Plan, Recorded, few_collections, uncollected, waiting_for
from tooling.render import (
    APPLY_ORDER,
    CONFIG_FILE,
    HELM_RELEASE,
    authored_objects,
    component_name,
    dump_all,
    is_authored_object,
    manifest,
    ordered,
)
from tooling.render_cache import Digests
from tooling.schemas import Validator, crd_scopes, is_builtin, parsed_output, schemas_of, scopes_of
from tooling.unknowns import null_sites, placeholder, with_placeholders

REPO = Path(__file__).resolve().parents[1]
DEFAULT_NAMESPACE = "default"
# Cluster-scoped built-in kinds (kubectl api-resources --namespaced=false, Kubernetes 1.34). The
# kinds 1.35 and 1.36 add are alpha or beta (DeviceTaintRule, StorageVersionMigration,
# scheduling's Workload and PodGroup; kubernetes-validate's 1.36 schemas) and no install renders one.
CLUSTER_SCOPED = frozenset(
    {
        "APIService",
        "CertificateSigningRequest",
        "ClusterRole",
        "ClusterRoleBinding",
        "ComponentStatus",
        "CSIDriver",
        "CSINode",
        "CustomResourceDefinition",
        "FlowSchema",
        "IngressClass",
        "IPAddress",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
        "MutatingWebhookConfiguration",
        "Namespace",
        "Node",
        "PersistentVolume",
        "PriorityClass",
        "PriorityLevelConfiguration",
        "RuntimeClass",
        "ServiceCIDR",
        "StorageClass",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
        "VolumeAttachment",
        "DeviceClass",
        "ResourceSlice",
    }
)
# Applied last: a webhook registered before its Service is up rejects what follows it.
APPLY_LAST = ("APIService", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
UNKNOWN = "[unknown]"


class RenderError(Exception):
    """helm or kustomize failed on an install; the message names the install and the tool's error."""


class Unmirrored(RenderError):
    """Release manifests the render cannot read: not in the mirror (the message names each and `make mirror`)."""


@dataclass(frozen=True)
class Install:
    """One chart or tree of the plan, with what helm or kustomize needs to render it."""

    resource: Recorded
    component: str
    kind: str
    """helm, kustomize or manifest"""
    target: str
    """chart reference, kustomize directory, or a release manifest's file (URL or path)"""
    namespace: str | None
    release: str = ""
    version: str | None = None
    repo: str | None = None
    values: dict[str, Any] = field(default_factory=dict)
    post_renderer: PostRenderer | None = None
    """A chart's post-renderer (plumbing/postrender.py), run on helm's output as pulumi up runs it."""

    @property
    def label(self) -> str:
        return f"{self.component}/{self.resource.name}" if self.component else self.resource.name


@dataclass(frozen=True)
class Rendered:
    """One object the cluster receives and where it comes from."""

    obj: dict[str, Any]
    source: str
    """`<component>/<install>` for upstream objects, `<component>` for ours"""
    urn: str
    """the plan resource that creates it (the install, or our own resource)"""
    upstream: bool
    original: dict[str, Any] | None = None
    """upstream objects: as the chart or tree had it, before our transforms"""
    resource_urn: str = ""
    """the URN of the Pulumi resource that is this object (a chart's or tree's child, or ours)"""
    aliases: tuple[str, ...] = ()
    """the URNs it had before (a move between installs, a rename), as `aliases` give them"""
    kept: bool = False
    """protected and retained: Pulumi never deletes it on its own (plumbing.base.keep)"""

    @property
    def key(self) -> tuple[str, str, str, str]:
        """(group, kind, namespace, name): what the API server keys the object by."""
        return object_key(self.obj)


@dataclass(frozen=True)
class Unknown:
    """A value of one of our objects that only the cloud knows (an output Pulumi's mocks do not
    fake): the render writes a typed placeholder there (tooling/unknowns.py)."""

    key: tuple[str, str, str, str]
    """(group, kind, namespace, name) of the object"""
    api_version: str
    field: str
    placeholder: Any


@dataclass(frozen=True)
class Timing:
    """Where an install's time went (the benchmark prints it)."""

    tool: float
    """seconds helm or kustomize ran (0: reused)"""
    parse: float
    """seconds its documents took to parse, or to read back from the render cache"""
    reused: bool
    """its output came from the render cache, not from the tool"""


@dataclass
class FullRender:
    stack: str
    plan: Plan
    installs: list[Install]
    objects: list[Rendered]
    unknowns: list[Unknown] = field(default_factory=list)
    """Where the render wrote a placeholder for a value only the cloud knows."""
    left_out: list[Install] = field(default_factory=list)
    """Release manifests the mirror does not hold, left out of the render (`allow_unmirrored`)."""
    timings: dict[str, Timing] = field(default_factory=dict)
    """Per install label: the tool's and the parse's seconds, and whether the render cache had it."""

    def by_urn(self, urn: str) -> list[Rendered]:
        return [o for o in self.objects if o.urn == urn]


def object_key(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    api_version = obj.get("apiVersion", "")
    group = api_version.split("/")[0] if "/" in api_version else ""
    meta = obj.get("metadata") or {}
    return (group, obj.get("kind", ""), meta.get("namespace") or "", meta.get("name", ""))


def installs(plan: Plan) -> list[Install]:
    """Every chart and tree in the plan, in URN order."""
    found = []
    for resource in plan.resources:
        install = install_of(resource, component_name(plan, resource))
        if install is not None:
            found.append(install)
        elif resource.type == HELM_RELEASE:
            raise RenderError(f"{resource.name}: {resource.type} is not rendered offline; install it as a Chart or Directory")
    return found


def install_of(resource: Recorded, component: str) -> Install | None:
    """The chart or tree a recorded resource is; None for any other resource."""
    inputs = resource.inputs
    namespace = inputs.get("namespace") or None
    if resource.type == HELM_CHART:
        return Install(
            resource,
            component,
            "helm",
            inputs["chart"],
            namespace,
            release=inputs.get("name") or resource.name,
            version=inputs.get("version"),
            repo=(inputs.get("repositoryOpts") or {}).get("repo"),
            values=inputs.get("values") or {},
            post_renderer=_post_renderer(inputs.get("postRenderer")),
        )
    if resource.type == KUSTOMIZE:
        return Install(resource, component, "kustomize", inputs["directory"], namespace)
    if resource.type == CONFIG_FILE:
        return Install(resource, component, "manifest", inputs["file"], None)
    return None


def _post_renderer(recorded: Any) -> PostRenderer | None:
    """The Chart's `postRenderer` input as the plan recorded it."""
    if not isinstance(recorded, dict) or not recorded.get("command"):
        return None
    return PostRenderer(str(recorded["command"]), tuple(str(a) for a in recorded.get("args") or ()))


# --- release manifests ------------------------------------------------------------------


def manifest_path(install: Install) -> Path | None:
    """The local file a release manifest install reads, if it is one that exists; None when its
    source is a URL (the stack's own sources, no mirror) or the mirror lacks it."""
    if not is_local(install.target):
        return None
    path = REPO / install.target
    return path if path.is_file() else None


def read_manifest(install: Install) -> str:
    """The manifest's text, checked against its pin's sha256 (facts/versions.py RELEASE_MANIFESTS)."""
    path = manifest_path(install)
    assert path is not None, install
    data = path.read_bytes()
    pinned = [m for m in RELEASE_MANIFESTS if install.target.endswith("/" + m.mirror_path)]
    actual = hashlib.sha256(data).hexdigest()
    if pinned and pinned[0].sha256 != actual:
        raise RenderError(
            f"{install.label}: {install.target} has sha256 {actual}, the pin table says {pinned[0].sha256} "
            f"({pinned[0].url}); `make mirror` fetches the pinned file"
        )
    return data.decode()


def manifest_output(install: Install) -> Output:
    """A release manifest's text as an Output (its documents come from the render cache's parses)."""
    text = read_manifest(install)
    return Output(render_cache.digest(text.encode()), text)


def unmirrored_message(left_out: Iterable[Install]) -> str:
    """What the render cannot read, each by install and where it looked, and how to get it."""
    lines = [f"{i.label}: {i.target}" for i in left_out]
    return (
        "release manifests not in the mirror (a render never fetches them):\n  " + "\n  ".join(lines) + "\n"
        "`make mirror` fetches them into the clone's mirror (docs/offline.md); --allow-unmirrored renders the rest "
        "and lists what it left out"
    )


# --- running helm and kustomize ---------------------------------------------------------


def _cores() -> int:
    """The cores this process may run on (a container's CPU set, not the machine's)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


TOOLS = max(4, _cores())
"""helm and kubectl processes at once in this process, those started while the plan is
evaluated and the full render's together, as each pool runs them: one per core, at least four
(on two cores, four keep both busy while the plan and the parsing take their turns; eight took
the cores from the thread that parses their output, which the render waits for)."""
TOOLS_AT_ONCE = threading.BoundedSemaphore(TOOLS)


GO_GC_PERCENT = "400"
"""GOGC for helm and kubectl, unless the environment sets one: their Go collector, run at its
default (100) through processes that live a second, took 30% of their CPU (dev's 27 installs,
one at a time: 4.5 s of CPU, 3.2 s at 400, 3.1 s with it off); at 400 the largest of them
(kubectl building the notebook controller's tree) peaks at 190 MB instead of 125 (off: 390)."""


def _run(args: list[str], what: str) -> str:
    env = {**os.environ}
    # helm keeps its repository cache and config apart from the user's.
    home = tools.cache_dir().parent / "helm"
    env.update(HELM_CACHE_HOME=str(home / "cache"), HELM_CONFIG_HOME=str(home / "config"), HELM_DATA_HOME=str(home / "data"))
    env.setdefault("GOGC", GO_GC_PERCENT)
    with TOOLS_AT_ONCE:
        result = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RenderError(f"{what}: {' '.join(args[:2])} failed:\n{result.stderr.strip()}")
    return result.stdout


def _plain(value: Any) -> Any:
    """Values for YAML: Pulumi Outputs (secrets from transforms) become SECRET."""
    if isinstance(value, pulumi.Output):
        return SECRET
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def api_versions(objects: Iterable[dict[str, Any]]) -> list[str]:
    """helm `--api-versions` entries (`group/version` and `group/version/Kind`) of the CRDs among `objects`."""
    found: set[str] = set()
    for obj in objects:
        if obj.get("kind") != "CustomResourceDefinition":
            continue
        spec = obj.get("spec") or {}
        for version in spec.get("versions") or []:
            group_version = f"{spec.get('group')}/{version.get('name')}"
            found |= {group_version, f"{group_version}/{(spec.get('names') or {}).get('kind')}"}
    return sorted(found)


@dataclass(frozen=True)
class Output:
    """What helm or kustomize printed for an install (or a release manifest holds)."""

    digest: str
    """sha256 of the text: where the render cache keeps it and its documents"""
    text: str | None
    """None when read from the render cache: only a parse the cache lacks reads it"""
    seconds: float = 0.0
    """the tool's time; 0 when reused"""
    reused: bool = False
    """from the render cache (or this process's earlier render), no tool run"""


_OUTPUTS: dict[str, Output] = {}
"""This process's outputs by output_key: a chart or tree that several stacks (or tests) render
with the same inputs runs once per process, even with the render cache off."""


@cache
def _code() -> str:
    """Our code that runs the tools: an edit of it (another flag, another environment) makes new keys."""
    return render_cache.code_version(sys.modules[__name__], render_cache)


def output_key(install: Install, capabilities: list[str], kube_version: str, sources: Sources, digests: Digests) -> str | None:
    """A digest of everything the install's output depends on, the key of the render cache: the
    tool binary, our code that runs it and, for a chart, the archive's bytes, release, namespace,
    values, version, capabilities and Kubernetes version; for a tree, every file of the checkout it
    lies in. None where that cannot be known offline (a chart from a repository or registry, a tree
    kustomize fetches parts of): such an install is rendered every time."""
    if install.kind == "helm":
        archive = REPO / install.target
        if install.repo is not None or not is_local(install.target) or not archive.exists():
            return None
        tool = tools.find(tools.HELM)
        inputs = [install.release, install.target, install.version, install.namespace, _plain(install.values), install.post_renderer]
        inputs += [capabilities, kube_version, digests.of(archive)]
    elif install.kind == "kustomize":
        root = tree_root(install.target, sources)
        if root is None:
            return None
        tool = tools.find(tools.KUBECTL)
        inputs = [install.target, str(root), digests.of(root)]
    else:
        return None
    inputs = [install.kind, render_cache.binary_identity(tool), _code(), *inputs]
    return render_cache.digest(json.dumps(inputs, sort_keys=True, default=str).encode())


def tree_root(target: str, sources: Sources) -> Path | None:
    """The folder every file a local tree reads lies in: its prepared copy (which holds its remote
    bases), else the stack's local checkout of the Kubeflow release, for a tree that names no
    remote base (kustomize would fetch those). The pinned trees name no path outside the release
    (the mirror holds only its folders, and they build there). None for anything else."""
    if is_prepared(target):
        return REPO / PREPARED_TREES / Path(target).relative_to(PREPARED_TREES).parts[0]
    manifests = sources.kubeflow_manifests
    if manifests is None or not is_local(manifests) or not is_local(target):
        return None
    root, path = (REPO / manifests).resolve(), (REPO / target).resolve()
    if not path.is_relative_to(root) or remote_bases_of(path.relative_to(root).as_posix()):
        return None
    return root


def render_output(install: Install, capabilities: list[str], kube_version: str, sources: Sources, digests: Digests) -> Output:
    """The install's output: this process's, else the render cache's, else helm's or kustomize's
    (then kept in both)."""
    key = output_key(install, capabilities, kube_version, sources, digests)
    cache_ = render_cache.current()
    if key is not None:
        found = _OUTPUTS.get(key)
        if found is not None:
            return replace(found, seconds=0.0, reused=True)
        recorded = cache_.output(key) if cache_ is not None else None
        if recorded is not None:
            _OUTPUTS[key] = Output(recorded, None, reused=True)
            return _OUTPUTS[key]
    start = time.perf_counter()
    if install.kind == "kustomize":
        text = _run([tools.find(tools.KUBECTL), "kustomize", "--load-restrictor", "LoadRestrictionsNone", install.target], install.label)
    else:
        text = helm_template(install, capabilities, kube_version)
    output = Output(render_cache.digest(text.encode()), text, time.perf_counter() - start)
    if key is not None:
        _OUTPUTS[key] = replace(output, seconds=0.0)
        if cache_ is not None:
            cache_.record(key, text)
    return output


def documents(output: Output) -> tuple[dict[str, Any], ...]:
    """The output's documents (tooling.schemas.parsed), read from the render cache where it has them."""
    cache_ = render_cache.current()
    return parsed_output(output.digest, lambda: output.text if output.text is not None else cache_.text(output.digest) if cache_ else None)


def helm_template(install: Install, capabilities: list[str], kube_version: str) -> str:
    """`helm template` of the chart, run now; a chart archive of the mirror that is not there is
    an error naming the chart and `make mirror` (a chart a release adds is in no older mirror)."""
    archive = install.target if install.repo is None else None
    if archive is not None and archive.endswith(".tgz") and not (REPO / archive).is_file():
        raise RenderError(
            f"{install.label}: chart {Path(archive).name} is not in the mirror ({archive}); `make mirror` fetches every "
            "pinned chart into the clone's mirror (docs/development.md, \"The upstream mirror\")"
        )
    with tempfile.NamedTemporaryFile("w", suffix=".json") as values:
        json.dump(install.values, values)
        values.flush()
        args = [tools.find(tools.HELM), "template", install.release, install.target]
        args += ["--namespace", install.namespace or DEFAULT_NAMESPACE, "--include-crds", "--no-hooks"]
        args += ["--kube-version", kube_version, "-f", values.name]
        if install.version:
            args += ["--version", install.version]
        if install.repo:
            args += ["--repo", install.repo]
        for capability in capabilities:
            args += ["--api-versions", capability]
        text = _run(args, install.label)
    if install.post_renderer is None:
        return text
    try:
        return postrender.run(install.post_renderer, text)
    except postrender.PostRenderError as error:
        raise RenderError(f"{install.label}: its post-renderer failed: {error}") from None


def _early_key(install: Install, capabilities: list[str], kube_version: str) -> str:
    """Which early render an install of the full render takes: a tree's directory, a chart's inputs."""
    if install.kind == "kustomize":
        return install.target
    inputs = [install.release, install.target, install.version, install.repo, install.namespace, _plain(install.values), install.post_renderer]
    inputs += [capabilities, kube_version]
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()


_EARLY: dict[str, Future[Output]] = {}
"""The renders started while the plan is evaluated, by _early_key; the full render takes them."""
_EARLY_LOCK = threading.Lock()


@dataclass
class _Session:
    """What the early renders of a plan leave for the full render that follows them: the file
    and folder digests they computed, the prepared trees they wrote."""

    digests: Digests = field(default_factory=Digests)
    prepared: set[PreparedTree] = field(default_factory=set)


_SESSION: _Session | None = None
"""The session of the plan evaluated last under rendering_early, until its full render takes it."""


@contextmanager
def rendering_early(config: PlatformConfig) -> Iterator[Callable[[Recorded], None]]:
    """For a plan's evaluation (`evaluate(config, ..., on_record=<what this yields>)`): each
    install starts rendering the moment the program registers it (from the render cache when it
    holds its output), TOOLS at a time in the background, while the plan's Python runs on. A tree's
    output depends on its directory alone. A chart is rendered with no capabilities, its
    render kept under the inputs it had: the full render takes it only where the chart's
    capabilities turn out to be none (it waits for no other install's CRDs), and renders the
    rest itself. full_render takes the results; a failure is raised there, where the install
    is rendered. A chart that waits for an install registered before it (the program registers
    what it needs first) is left to the full render: it would see that install's CRDs, and its
    render without them would be thrown away."""
    global _SESSION
    kube_version = cluster_version.kubernetes_version(config)
    session = _SESSION = _Session()
    with _EARLY_LOCK:  # a plan that failed before its full render left its renders: none of ours
        _EARLY.clear()
    registered: dict[str, Recorded] = {}
    child_urns: dict[str, list[str]] = {}

    def start(resource: Recorded) -> None:
        install = install_of(resource, "")
        with _EARLY_LOCK:
            registered[resource.urn] = resource
            if resource.parent:
                child_urns.setdefault(resource.parent, []).append(resource.urn)
            if install is None or install.kind == "manifest":
                return
            render = partial(render_output, install, [], kube_version, config.sources, session.digests)
            if install.kind == "kustomize" and is_prepared(install.target):
                # A prepared tree (remote bases from a mirror) is written first (the full render
                # finds it current); one whose copy this cannot tell is left to the full render.
                tree = _prepared_tree(install.target, config.sources)
                if tree is None:
                    return
                render = partial(_prepared_then, tree, render, session)
            if install.kind == "helm":
                waits = waiting_for(resource.dependencies, registered, child_urns)
                if any(registered[urn].type in (HELM_CHART, KUSTOMIZE) for urn in waits if urn in registered):
                    return
            key = _early_key(install, [], kube_version)
            if key not in _EARLY:
                _EARLY[key] = pool.submit(render)

    pool = ThreadPoolExecutor(max_workers=TOOLS)
    # The checkout the trees are in, digested while the plan's Python runs (its first install
    # registers a second in), not when its first tree waits for it.
    manifests = config.sources.kubeflow_manifests
    if manifests is not None and is_local(manifests) and (REPO / manifests).is_dir():
        pool.submit(session.digests.of, (REPO / manifests).resolve())
    try:
        yield start
    except BaseException:
        _SESSION = None  # no full render follows this plan
        raise
    finally:
        pool.shutdown(wait=False)


def _prepared_tree(directory: str, sources: Sources) -> PreparedTree | None:
    """The prepared copy a kustomize directory is read from (`.mlplatform/trees/<copy>/<path>`),
    as the program named it (plumbing.sources.kubeflow_tree); None if the sources name no such copy."""
    parts = directory.split("/", 3)
    if len(parts) < 4:
        return None
    tree = prepared_tree(parts[3], sources)
    return tree if tree is not None and tree.path(parts[3]) == directory else None


def _prepared_then(tree: PreparedTree, render: Callable[[], Output], session: _Session) -> Output:
    try:
        prepare(tree, REPO)
    except PrepareError as err:
        raise RenderError(f"preparing the Kubeflow trees that name remote bases: {err}") from err
    session.prepared.add(tree)
    return render()


def is_namespaced(obj: dict[str, Any], custom: dict[tuple[str, str], bool]) -> bool | None:
    """Whether the kind is namespaced; None when no CRD in the render says."""
    group, kind, _, _ = object_key(obj)
    if is_builtin(obj):
        return kind not in CLUSTER_SCOPED
    return custom.get((group, kind))


def normalized(obj: dict[str, Any], namespace: str, custom: dict[tuple[str, str], bool]) -> dict[str, Any]:
    """`obj` with the install's namespace when its kind is namespaced and it names none (a new dict)."""
    meta = obj.get("metadata") or {}
    if meta.get("namespace") or not is_namespaced(obj, custom):
        return obj
    return {**obj, "metadata": {**meta, "namespace": namespace}}


def _apply_rank(rendered: Rendered) -> tuple[int, str, str, str, str, str]:
    obj = rendered.obj
    kind = obj.get("kind", "")
    if kind in APPLY_ORDER:
        rank = APPLY_ORDER.index(kind)
    elif kind in APPLY_LAST:
        rank = len(APPLY_ORDER) + 1 + APPLY_LAST.index(kind)
    else:
        rank = len(APPLY_ORDER)
    group, _, namespace, name = rendered.key
    return (rank, group, kind, namespace, name, rendered.source)


def full_render(plan: Plan, progress: Callable[[str], None] | None = None, allow_unmirrored: bool = False) -> FullRender:
    """Render every install of `plan` and add our own objects; raises RenderError (Unmirrored
    when a release manifest is not in the mirror, unless `allow_unmirrored`: then the rest is
    rendered and FullRender.left_out lists it).
    `progress` hears one line per install as it is done (a large stack takes a while).
    Parsing the output builds millions of objects: the collector runs rarely meanwhile."""
    with few_collections():
        return _full_render(plan, progress, allow_unmirrored)


def _full_render(plan: Plan, progress: Callable[[str], None] | None, allow_unmirrored: bool) -> FullRender:
    found = installs(plan)
    left_out = [i for i in found if i.kind == "manifest" and manifest_path(i) is None]
    if left_out and not allow_unmirrored:
        raise Unmirrored(unmirrored_message(left_out))
    found = [i for i in found if i not in left_out]
    raw: dict[str, tuple[dict[str, Any], ...]] = {}
    global _SESSION
    session, _SESSION = _SESSION or _Session(), None
    # Trees whose remote bases a local mirror holds are read from their prepared copies:
    # written here (unless the plan's early renders did), as `python -m stacks prepare` does
    # before `pulumi up` (plumbing/trees.py).
    try:
        prepare_all((t for t in plan.record.prepared_trees.values() if t not in session.prepared), REPO)
    except PrepareError as err:
        raise RenderError(f"preparing the Kubeflow trees that name remote bases: {err}") from err

    def done(install: Install) -> None:
        if progress:
            reused = " (cached)" if timings[install.label].reused else ""
            progress(f"[{len(raw)}/{len(found)}] {install.kind} {install.label}: {len(raw[install.resource.urn])} objects{reused}")

    # A chart sees the CRDs of the installs it waits for as capabilities, so it renders once
    # they are parsed; a tree needs nothing. helm and kubectl run TOOLS at a time, each install
    # as soon as what it needs is there; their output is parsed here, in one thread, as each
    # finishes (parsing in worker threads was GIL-bound and slower). Charts also see the
    # Kubernetes version the stack's cluster is created at. Every chart's kubeVersion
    # (Chart.yaml) admits 1.35 and 1.36: cert-manager v1.21.1 ">= 1.22.0-0", dcgm-exporter
    # 4.8.2 ">= 1.19.0-0", kube-prometheus-stack 88.5.3 ">=1.25.0-0", grafana 12.11.1 (and
    # its copy inside kube-prometheus-stack) "^1.25.0-0"; JobSet, Trainer, KubeRay and Kueue
    # state none. The "-0" admits GKE's `-gke.<build>` pre-release form.
    kube_version = cluster_version.kubernetes_version(plan.config)
    sources = plan.config.sources if plan.config is not None else Sources()
    digests = session.digests
    urns = {i.resource.urn for i in found}
    needs = {i.resource.urn: plan.waits_for(i.resource) & urns if i.kind == "helm" else frozenset() for i in found}
    pending = {i.resource.urn: i for i in found}
    timings: dict[str, Timing] = {}
    with ThreadPoolExecutor(max_workers=TOOLS) as pool:
        # An install started while the plan was evaluated is waited for where it runs, not
        # from a worker of this pool: the pool runs what is left, a chart the moment
        # what it needs is parsed.
        running: dict[Future[Output], list[Install]] = {}

        scheduled: set[Future[Output]] = set()

        def start(install: Install, render: Callable[[], Output], early_key: str | None) -> None:
            with _EARLY_LOCK:
                future = _EARLY.get(early_key) if early_key is not None else None
                # One the early pool has not started is this pool's to schedule (a heavy tree the
                # plan registered last waited behind the early queue otherwise). One this pool
                # scheduled already serves every install of the same key (a tree installed once
                # per team): cancelling it would cancel the install that scheduled it.
                if future is None or (future not in scheduled and future.cancel()):
                    future = pool.submit(render)
                    scheduled.add(future)
                    if early_key is not None:
                        _EARLY[early_key] = future
            running.setdefault(future, []).append(install)

        def start_what_can_run() -> None:
            for urn, install in list(pending.items()):
                if needs[urn] <= raw.keys():
                    del pending[urn]
                    if install.kind == "manifest":
                        start(install, partial(manifest_output, install), None)
                        continue
                    capabilities = api_versions(o for dependency in needs[urn] for o in raw[dependency])
                    render = partial(render_output, install, capabilities, kube_version, sources, digests)
                    start(install, render, _early_key(install, capabilities, kube_version))

        try:
            start_what_can_run()
            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                # What a waiting chart needs is parsed first, and the chart started right after.
                needed = {urn for waiting in pending for urn in needs[waiting]}
                ready = sorted(
                    ((future, install) for future in finished for install in running.pop(future)),
                    key=lambda f: (f[1].resource.urn not in needed, f[1].resource.urn),
                )
                for future, install in ready:
                    output = future.result()  # a failure is raised here, naming the install
                    parse_start = time.perf_counter()
                    with uncollected():
                        raw[install.resource.urn] = documents(output)
                    timings[install.label] = Timing(output.seconds, time.perf_counter() - parse_start, output.reused)
                    done(install)
                    start_what_can_run()
        finally:
            with _EARLY_LOCK:  # taken, or of another render: never read again
                _EARLY.clear()
    if pending:
        raise RenderError("charts depend on each other in a cycle: " + ", ".join(i.label for i in pending.values()))
    cache_ = render_cache.current()
    if cache_ is not None:
        cache_.prune()

    everything = [o for objects in raw.values() for o in objects] + authored_objects(plan)
    custom = scopes_of(everything)
    # Only a chart's or tree's object that names no namespace needs its kind's scope (normalized);
    # the pinned upstream CRDs (megabytes to parse) are read only for one whose CRD is elsewhere.
    unscoped = (o for objects in raw.values() for o in objects if not (o.get("metadata") or {}).get("namespace"))
    if any(is_namespaced(o, custom) is None for o in unscoped):
        custom = crd_scopes() | custom
    rendered: list[Rendered] = []
    unmatched: list[str] = []
    for install in found:
        key = (install.resource.type, install.resource.name)
        transforms, moves = plan.record.transforms.get(key, ()), plan.record.moves.get(key, ())
        kept = plan.record.kept.get(key)
        stack, project, parent_type, _ = install.resource.urn.removeprefix("urn:pulumi:").split("::")
        matched: set[int] = set()
        for original in raw[install.resource.urn]:
            obj = normalized(original, install.namespace or DEFAULT_NAMESPACE, custom)
            final = obj
            for number, transform in enumerate(transforms):
                result = transform(final)
                if result is not None:
                    final = result
                    matched.add(number)
            # Then the stack's transforms, which concern every object (the engine's order:
            # the install's own, then the stack's; plumbing.base.InstallRecord.platform_transforms).
            for transform in plan.record.platform_transforms:
                result = transform(final)
                if result is not None:
                    final = result
            type_, name = child_type(obj), child_name(install.resource.name, obj)
            urn = f"urn:pulumi:{stack}::{project}::{parent_type}${type_}::{name}"
            aliases = tuple(moved_aliases(moves, obj, type_, name, stack, project))
            keep = kept is not None and kept(obj)
            rendered.append(Rendered(_plain(final) if final is not obj else obj, install.label, install.resource.urn, True, original, urn, aliases, keep))
        unmatched += [
            f"{install.label}: transform {transform_name(t)} changes none of its {len(raw[install.resource.urn])} objects"
            for number, t in enumerate(transforms)
            if number not in matched
        ]
    if unmatched:
        raise RenderError(
            "transforms written for upstream objects that the pinned release no longer renders (renamed or moved "
            "upstream?); fix the transform's target:\n  " + "\n  ".join(unmatched)
        )
    ours = [
        Rendered(manifest(r), component_name(plan, r), r.urn, False, None, r.urn, r.aliases, r.protect and r.retain_on_delete)
        for r in plan.resources
        if is_authored_object(r)
    ]
    validator = Validator(schemas_of(everything), minor_label(minor(kube_version)))
    unknowns: list[Unknown] = []
    for o in ours:
        sites = null_sites(o.obj, validator)
        if sites:
            unknowns += [Unknown(o.key, o.obj.get("apiVersion", ""), site.field, placeholder(site, o.obj)) for site in sites]
            o = replace(o, obj=with_placeholders(o.obj, sites))
        rendered.append(o)
    rendered.sort(key=_apply_rank)
    return FullRender(stack=plan.stack, plan=plan, installs=found, objects=rendered, unknowns=unknowns, left_out=left_out, timings=timings)


# --- files ------------------------------------------------------------------------------


def index(render: FullRender) -> list[dict[str, str]]:
    return [
        {"apiVersion": o.obj.get("apiVersion", ""), "kind": o.obj.get("kind", ""), "namespace": o.key[2], "name": o.key[3], "source": o.source}
        for o in render.objects
    ]


def counts(render: FullRender) -> dict[str, int]:
    """Objects per install (upstream) and per component (ours), for the reviewed snapshot."""
    result: dict[str, int] = {}
    for o in render.objects:
        label = o.source if o.upstream else f"{o.source} (ours)"
        result[label] = result.get(label, 0) + 1
    return dict(sorted(result.items()))


def unknown_index(render: FullRender) -> list[dict[str, Any]]:
    """Each value only the cloud knows, and the placeholder the render wrote for it."""
    return [
        {"apiVersion": u.api_version, "kind": u.key[1], "namespace": u.key[2], "name": u.key[3], "field": u.field, "placeholder": u.placeholder}
        for u in render.unknowns
    ]


def write(render: FullRender, out: Path) -> list[Path]:
    """DIR/platform.yaml (every object, in apply order) and DIR/index.yaml (each object's
    source, the values only the cloud knows and their placeholders, the counts)."""
    out.mkdir(parents=True, exist_ok=True)
    platform, index_path = out / "platform.yaml", out / "index.yaml"
    platform.write_text(dump_all([ordered(o.obj) for o in render.objects]))
    contents: dict[str, Any] = {"stack": render.stack, "objects": index(render), "unknown": unknown_index(render), "counts": counts(render)}
    if render.left_out:
        contents["leftOut"] = [{"install": i.label, "file": i.target} for i in render.left_out]
    index_path.write_text(yaml.safe_dump(contents, sort_keys=False))
    return [platform, index_path]
