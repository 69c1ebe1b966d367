"""The charts of the upstream mirror (tooling/mirror.py): each pinned chart by `helm pull` (helm
v4, tooling/tools.py) from its HTTP chart repository, the archive's sha256 checked against the
repository index's `digest` (helm does not compare them), or from its OCI registry (helm checks
the blob against the registry's digest); its Chart.yaml must name the pin. A repository or chart
its source does not serve is Unavailable, a chart that is not the pinned one a MirrorError."""

from __future__ import annotations

import os
import re
import shutil
import tarfile
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from facts.versions import Pin
from plumbing.sources import ChartSource, chart_source
from stackmodel.schema import Sources
from tooling import tools
from tooling.mirror_fetch import MirrorError, Unavailable, run_tool, sha256, tried


@dataclass
class _Helm:
    """helm v4 with a configuration and caches of its own (the user's repositories untouched)."""

    home: Path
    binary: str = field(default_factory=lambda: tools.find(tools.HELM))
    repositories: dict[str, str] = field(default_factory=dict)
    """Repository URL -> the name it was added under."""

    @property
    def env(self) -> dict[str, str]:
        homes = {f"HELM_{kind}_HOME": str(self.home / kind.lower()) for kind in ("CACHE", "CONFIG", "DATA")}
        return {**os.environ, **homes}

    def run(self, what: str, *args: str, failed: type[MirrorError] = MirrorError) -> str:
        return run_tool([self.binary, *args], what, self.env, failed).decode(errors="replace")

    def add(self, repository: str) -> None:
        """`helm repo add` (it downloads the index), once per repository, before any pull from it."""
        name = self.repositories[repository] = f"repository{len(self.repositories)}"
        self.run(f"the chart repository {repository}", "repo", "add", name, repository, failed=Unavailable)

    def pull_from_repository(self, pin: Pin, repository: str, into: Path) -> str:
        """The chart from an HTTP repository (added), checked against the index's digest; returns it."""
        what = f"{pin.label} from {repository}"
        name = self.repositories[repository]
        self.run(what, "pull", f"{name}/{pin.name}", "--version", pin.version, "--destination", str(into), failed=Unavailable)
        archive = _one_archive(into, what)
        index = yaml.load((self.home / "cache" / "repository" / f"{name}-index.yaml").read_bytes(), Loader=_LOADER)
        listed = [e for e in (index.get("entries") or {}).get(pin.name) or [] if str(e.get("version")) == pin.version]
        digest = listed[0].get("digest") if listed else None
        actual = sha256(archive)
        if digest != actual:
            raise MirrorError(f"{what}: {archive.name} has sha256 {actual}, the repository index says {digest or 'no digest'}")
        return f"sha256:{actual}"

    def pull_from_registry(self, pin: Pin, reference: str, into: Path) -> str:
        """The chart from an OCI registry (helm checks its blob); returns the registry's digest."""
        what = f"{pin.label} from {reference}"
        said = self.run(what, "pull", reference, "--version", pin.version, "--destination", str(into), failed=Unavailable)
        found = re.search(r"Digest: (sha256:[0-9a-f]{64})", said)
        return found[1] if found else "(no digest printed)"


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser where PyYAML has it: public repository indexes run to tens of megabytes."""


def _one_archive(directory: Path, what: str) -> Path:
    found = sorted(directory.glob("*.tgz"))
    if len(found) != 1:
        raise MirrorError(f"{what}: helm wrote {[p.name for p in found]}, expected one chart archive")
    return found[0]


def chart_metadata(archive: Path) -> dict[str, Any]:
    """The archive's own Chart.yaml (`<chart>/Chart.yaml`)."""
    with tarfile.open(archive) as tar:
        member = next((m for m in tar.getmembers() if m.name.count("/") == 1 and m.name.endswith("/Chart.yaml")), None)
        handle = tar.extractfile(member) if member is not None else None
        if handle is None:
            raise MirrorError(f"{archive}: no Chart.yaml at the top of the archive")
        metadata: dict[str, Any] = yaml.safe_load(handle.read()) or {}
    return metadata


def _chart_source(pin: Pin, sources: Mapping[str, str]) -> ChartSource:
    """Where `pin` is pulled from: its own location, or the chart repository `sources` gives for it."""
    redirect = sources.get(pin.location)
    try:
        source = chart_source(pin, Sources(charts=redirect) if redirect else Sources())
    except ValueError as err:  # pydantic's ValidationError: a location mlplatform:sources.charts refuses
        raise MirrorError(f"{pin.label}: {redirect} is no chart repository: {err}") from None
    if source.repo is None and not source.chart.startswith("oci://"):
        raise MirrorError(f"{pin.label}: {redirect} is no chart repository: give an http(s) repository or an oci:// registry path")
    return source


def _chart(helm: _Helm, pin: Pin, source: ChartSource, charts: Path, scratch: Path) -> dict[str, str]:
    """`pin`'s archive into charts/<chart>-<version>.tgz; returns what mirror.json records of it."""
    into = scratch / f"{pin.name}-{pin.version}"
    into.mkdir(parents=True)
    if source.repo is not None:
        origin, digest = source.repo, helm.pull_from_repository(pin, source.repo, into)
    else:
        origin, digest = source.chart, helm.pull_from_registry(pin, source.chart, into)
    archive = _one_archive(into, f"{pin.label} from {origin}")
    metadata = chart_metadata(archive)
    if (metadata.get("name"), str(metadata.get("version"))) != (pin.name, pin.version):
        raise MirrorError(
            f"{pin.label} from {origin}: the archive's Chart.yaml says {metadata.get('name')} {metadata.get('version')}"
        )
    target = charts / f"{pin.name}-{pin.version}.tgz"
    shutil.move(archive, target)
    return {"path": str(target.relative_to(charts.parent)), "from": origin, "digest": digest}


def fetch_charts(pins: Iterable[Pin], sources: Mapping[str, str], charts: Path, scratch: Path) -> list[tuple[Pin, dict[str, Any] | Unavailable]]:
    """Every chart of `pins` into `charts`: each pin with what mirror.json records of its chart,
    or why its source did not serve it."""
    chosen = {pin: _chart_source(pin, sources) for pin in pins}
    if not chosen:
        return []
    charts.mkdir(parents=True, exist_ok=True)
    helm = _Helm(scratch / "helm")
    unserved: dict[str | None, Unavailable] = {}
    for repository in dict.fromkeys(s.repo for s in chosen.values() if s.repo is not None):
        try:
            helm.add(repository)
        except Unavailable as err:
            unserved[repository] = err

    def one(pin: Pin) -> dict[str, Any] | Unavailable:
        source = chosen[pin]
        if source.repo in unserved:
            return Unavailable(f"{pin.label}: {unserved[source.repo]}")
        return tried(partial(_chart, helm, pin, source, charts, scratch))

    with ThreadPoolExecutor(max_workers=4) as pool:  # helm processes, mostly waiting on the network
        return list(zip(chosen, pool.map(one, chosen), strict=True))
