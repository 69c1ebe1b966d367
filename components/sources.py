"""Where each pinned chart and Kubeflow tree is fetched from: the public upstream of the pin
table, or the stack's mirror (`mlplatform:sources`). Pure functions: `pulumi up` passes
their results to helm.v4.Chart / kustomize.v2.Directory, and the offline full render
hands the very same strings to helm and kustomize.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from facts.versions import KUBEFLOW_MANIFESTS, Pin, PinKind
from stacks.schema import Sources

MIRROR_CHARTS = "charts"
MIRROR_MANIFESTS = "kubeflow-manifests"
"""The layout of a mirror directory (as ../shared/upstream/README.md describes it):
`charts/<chart>-<version>.tgz` and `kubeflow-manifests/<tag>/<path>`."""


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


def kubeflow_tree(path: str, sources: Sources) -> str:
    """A kustomize target inside the pinned Kubeflow release: a remote git target (kustomize
    remoteBuild syntax, `<repo>//<path>?ref=<tag>`) or a path in a local checkout of the tag."""
    mirror = sources.kubeflow_manifests
    if mirror is not None and is_local(mirror):
        return f"{mirror}/{path}"
    return f"{mirror or KUBEFLOW_MANIFESTS.location}//{path}?ref={KUBEFLOW_MANIFESTS.version}"


def mirror_sources(directory: Path | str) -> Sources:
    """The Sources of a mirror directory laid out as MIRROR_CHARTS / MIRROR_MANIFESTS."""
    root = str(directory).rstrip("/")
    return Sources(
        charts=f"{root}/{MIRROR_CHARTS}",
        kubeflow_manifests=f"{root}/{MIRROR_MANIFESTS}/{KUBEFLOW_MANIFESTS.version}",
    )
