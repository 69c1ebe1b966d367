"""Where each pinned chart and Kubeflow tree is fetched from: the public upstream of the pin
table, or the stack's mirror (`mlplatform:sources`). Pure functions: `pulumi up` passes
their results to helm.v4.Chart / kustomize.v2.Directory, and the offline full render
hands the very same strings to helm and kustomize.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from facts.versions import KUBEFLOW_MANIFESTS, REMOTE_BASES, Pin, PinKind, ReleaseManifest, RemoteBase
from stackmodel.schema import Sources

MIRROR_CHARTS = "charts"
MIRROR_MANIFESTS = "kubeflow-manifests"
MIRROR_REMOTE = "remote"
MIRROR_RELEASE_MANIFESTS = "manifests"
"""The layout of a mirror directory (as ../shared/upstream/README.md describes it):
`charts/<chart>-<version>.tgz`, `kubeflow-manifests/<tag>/<path>`, the remote kustomize
bases those trees name, `remote/<host>/<owner>/<repo>/<ref>/<path>`, and the release manifests,
`manifests/<owner>/<repo>/<commit>/<path>` (which ../shared/upstream does not hold)."""
PREPARED_TREES = ".mlplatform/trees"
"""Where `python -m stacks prepare` (tooling/trees.py) writes, relative to the project directory,
the Kubeflow trees of a local mirror with their remote bases pointing at the mirror's copies."""


def is_prepared(directory: str) -> bool:
    """Whether a kustomize directory is a prepared copy (PreparedTree), written before it is read."""
    return directory.startswith(f"{PREPARED_TREES}/")


@dataclass(frozen=True)
class ChartSource:
    """helm's view of a chart: a reference (OCI ref, chart name in `repo`, or a local archive)."""

    chart: str
    version: str
    repo: str | None = None


def is_local(location: str) -> bool:
    return "://" not in location


def chart_source(pin: Pin, sources: Sources) -> ChartSource:
    """`pin` from the stack's chart mirror if it has one, else from the pin's own repository."""
    assert pin.kind is PinKind.HELM, pin
    mirror = sources.charts
    if mirror is None:
        if pin.location.startswith("oci://"):
            return ChartSource(chart=pin.location, version=pin.version)
        return ChartSource(chart=pin.name, version=pin.version, repo=pin.location)
    if mirror.startswith("oci://"):
        return ChartSource(chart=f"{mirror}/{pin.name}", version=pin.version)
    if not is_local(mirror):
        return ChartSource(chart=pin.name, version=pin.version, repo=mirror)
    return ChartSource(chart=f"{mirror}/{pin.name}-{pin.version}.tgz", version=pin.version)


@dataclass(frozen=True)
class PreparedTree:
    """A folder of the pinned Kubeflow release copied from a local checkout, its kustomizations'
    remote bases rewritten to relative paths into copies of the local remote-base mirror: what
    kustomize reads offline. The program may write no file, so it only names the copy;
    `python -m stacks prepare` writes it before `pulumi up`, and the offline render writes it
    itself (tooling/trees.py)."""

    folder: str
    """The folder of the release (`applications/pipeline`), copied whole."""
    manifests: str
    """The local checkout of the pinned tag it is copied from (`mlplatform:sources.kubeflowManifests`)."""
    remote_bases: str
    """The local mirror of the remote bases (`mlplatform:sources.remoteBases`)."""

    @property
    def root(self) -> str:
        """`.mlplatform/trees/<tag>-<digest of the two sources>`: one copy per mirror, and the
        same stack file names the same directory (a deterministic plan)."""
        digest = hashlib.sha256(f"{self.manifests}\n{self.remote_bases}".encode()).hexdigest()[:12]
        return f"{PREPARED_TREES}/{KUBEFLOW_MANIFESTS.version}-{digest}"

    def path(self, path: str) -> str:
        """Where kustomize reads `path` (inside `folder`) of the copy."""
        return f"{self.root}/{path}"


def remote_bases_of(path: str) -> tuple[RemoteBase, ...]:
    """The remote bases the release's trees under `path` name (facts/versions.py REMOTE_BASES)."""
    return tuple(b for b in REMOTE_BASES if path == b.named_by or path.startswith(b.named_by + "/"))


def prepared_tree(path: str, sources: Sources) -> PreparedTree | None:
    """The prepared copy `path` is read from: with a local remote-base mirror, for a tree that
    names remote bases; None otherwise (the tree is read where it is, and kustomize fetches its
    remote bases from GitHub at the refs the tree names)."""
    bases = remote_bases_of(path)
    manifests, remote = sources.kubeflow_manifests, sources.remote_bases
    if not bases or remote is None or manifests is None or not is_local(manifests):
        return None
    return PreparedTree(folder=bases[0].named_by, manifests=manifests, remote_bases=remote)


def kubeflow_tree(path: str, sources: Sources) -> str:
    """A kustomize target inside the pinned Kubeflow release: a remote git target (kustomize
    remoteBuild syntax, `<repo>//<path>?ref=<tag>`), a path in a local checkout of the tag,
    or in its prepared copy when the tree names remote bases the stack mirrors (PreparedTree)."""
    prepared = prepared_tree(path, sources)
    if prepared is not None:
        return prepared.path(path)
    mirror = sources.kubeflow_manifests
    if mirror is not None and is_local(mirror):
        return f"{mirror}/{path}"
    return f"{mirror or KUBEFLOW_MANIFESTS.location}//{path}?ref={KUBEFLOW_MANIFESTS.version}"


@dataclass(frozen=True)
class RemoteReference:
    """A remote kustomize base as a kustomization names it, resolved against the pin table."""

    base: RemoteBase
    path: str
    """Inside the base's repository (`manifests/base/workflow-controller`)."""
    ref: str

    @property
    def mirror_path(self) -> str:
        """Where a mirror holds it: `<host>/<owner>/<repo>/<ref>/<path>`."""
        return f"{self.base.repository}/{self.ref}/{self.path}"


def remote_reference(entry: str) -> RemoteReference | None:
    """A kustomization entry (`https://github.com/argoproj/argo-workflows/manifests/base/crds/minimal?ref=v3.7.3`)
    as a pinned remote base; None for a local path or a URL of no pinned base. The ref must be the
    pin's: a tree that names another ref than the pin table says raises, naming both."""
    for base in REMOTE_BASES:
        prefix = base.pin.location + "/"
        if not entry.startswith(prefix):
            continue
        path, _, query = entry[len(prefix) :].partition("?")
        ref = dict(p.partition("=")[::2] for p in query.split("&") if p).get("ref", "")
        if ref != base.pin.version:
            raise ValueError(
                f"{entry} names {base.pin.name} at {ref or 'no ref'}, the pin table at {base.pin.version}: "
                "bump the pin (facts/versions.py) with the Kubeflow release"
            )
        return RemoteReference(base=base, path=path.strip("/"), ref=ref)
    return None


def release_manifest_source(manifest: ReleaseManifest, sources: Sources) -> str:
    """Where `pulumi up` (kubernetes.yaml.v2.ConfigFile `files`) and the offline render read a
    release manifest: its raw URL at the pinned commit, or the stack's mirror of them
    (`mlplatform:sources.releaseManifests`, `<owner>/<repo>/<commit>/<path>` under it)."""
    mirror = sources.release_manifests
    return manifest.url if mirror is None else f"{mirror}/{manifest.mirror_path}"


def mirror_sources(directory: Path | str) -> Sources:
    """The Sources of a mirror directory laid out as MIRROR_CHARTS / MIRROR_MANIFESTS / MIRROR_REMOTE /
    MIRROR_RELEASE_MANIFESTS."""
    root = str(directory).rstrip("/")
    return Sources(
        charts=f"{root}/{MIRROR_CHARTS}",
        kubeflow_manifests=f"{root}/{MIRROR_MANIFESTS}/{KUBEFLOW_MANIFESTS.version}",
        remote_bases=f"{root}/{MIRROR_REMOTE}",
        release_manifests=f"{root}/{MIRROR_RELEASE_MANIFESTS}",
    )
