"""The support rules of `python -m stacks check`: every upstream the full render deploys, and
the cluster's Kubernetes itself, inside its support window on the check date (`--on`), and
the cluster's Kubernetes minor inside every component's supported range. The facts are
facts/support.py; the versions are the ones the render really deploys (an upstream's image
tag, its chart or tree), not what a pin's name says.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from facts.support import (
    EXPECTED_GRACE_DAYS,
    KUBERNETES,
    UPSTREAMS,
    Line,
    Upstream,
    minor,
    minor_label,
    upstream_of_pin,
)
from stackmodel.schema import KindClusterConfig
from stackmodel.stack import PlatformConfig
from tooling.cluster_version import ClusterMinor, cluster_minors

if TYPE_CHECKING:
    from tooling.fullrender import Install

Finding = tuple[str, str, str]
"""(object, where, message) of one violation; tooling/check/upstreams.py names the rule."""


@dataclass(frozen=True)
class Deployed:
    """One upstream at one version in the render, and where that was read."""

    upstream: Upstream
    version: str
    where: str
    """the install or component the version comes from"""
    evidence: str
    """the image reference, chart or tree that carries the version"""

    @property
    def label(self) -> str:
        return f"{self.upstream.name} {self.version}"


def _tag(reference: str) -> str | None:
    name = reference.split("@", 1)[0]
    head, _, tag = name.rpartition(":")
    return tag if head and "/" not in tag else None


def deployed(references: Iterable[tuple[str, str]], installs: Iterable[Install]) -> list[Deployed]:
    """Every (upstream, version) of facts/support.py UPSTREAMS the render deploys, from its
    (source, image reference) pairs and its installs (charts and trees)."""
    found: dict[tuple[str, str], Deployed] = {}
    references, installs = list(references), list(installs)

    def add(upstream: Upstream, version: str, where: str, evidence: str) -> None:
        found.setdefault((upstream.name, version), Deployed(upstream, version, where, evidence))

    for upstream in UPSTREAMS:
        if upstream.image:
            pattern = re.compile(upstream.image)
            for source, reference in references:
                tag = _tag(reference)
                if tag and pattern.search(reference):
                    add(upstream, tag, source, reference)
        for install in installs:
            if upstream.tree and install.kind == "kustomize":
                match = re.search(upstream.tree, install.target)
                if match:
                    add(upstream, match.group("version"), f"kustomize trees, e.g. {install.label}", install.target)
            if upstream.chart and install.kind == "helm":
                packaged = re.fullmatch(rf"{re.escape(upstream.chart)}-(\d[^/]*)\.tgz", Path(install.target).name)
                if packaged:
                    add(upstream, packaged.group(1), install.label, install.target)
                elif install.version and install.target.rstrip("/").endswith(upstream.chart):
                    add(upstream, install.version, install.label, f"{install.target} {install.version}")
    return sorted(found.values(), key=lambda d: (d.upstream.name, d.version))


def _supports_all(line: Line, minors: Iterable[ClusterMinor]) -> bool:
    return all(line.supports(m.minor) is not False for m in minors)


def successor(upstream: Upstream, on: date, minors: Iterable[ClusterMinor] = ()) -> str:
    """What to move to: the newest release line of `upstream` with a fact, supported on `on`
    and on every cluster minor (as far as its facts say)."""
    minors = list(minors)
    for line in upstream.lines:
        if line.line != "*" and line.ends.violated(on) is None and _supports_all(line, minors):
            return f"move to {upstream.name} {line.line} ({line.range_label()}, {line.ends.describe()})"
    return f"no {upstream.name} release line in facts/support.py is supported then: read upstream's support page and add it"


def kubernetes_successor(on: date, lines: Iterable[Line]) -> str:
    """The newest Kubernetes minor still supported on `on` that every deployed release line supports."""
    lines = list(lines)
    for line in KUBERNETES.lines:
        wanted = minor(line.line)
        if line.ends.violated(on) is None and all(other.supports(wanted) is not False for other in lines):
            return f"move to Kubernetes {line.line} ({line.ends.describe()}; every component's range includes it)"
    return "no Kubernetes minor in facts/support.py is supported then and inside every component's range"


def _missing(upstream: Upstream, version: str) -> str:
    return f"no support fact for {upstream.name} {version} in facts/support.py: read upstream's support page at that release and add its line"


def without_facts(config: PlatformConfig | None) -> Iterator[Finding]:
    """Every pin of a component the stack installs (its spec's `pins`) that no upstream of
    facts/support.py names: nothing could say whether it is supported."""
    if config is None:
        return
    for spec in config.components.specs:
        if config.enabled(spec):
            for pin in spec.pins:
                if upstream_of_pin(pin.name) is None:
                    yield (
                        pin.label,
                        spec.path,
                        f"no support facts for {pin.label} in facts/support.py: add its upstream with its release lines, "
                        "each with where it was read (or that upstream publishes none), and name the pin in its `pins`",
                    )


def ended(found: list[Deployed], config: PlatformConfig | None, on: date) -> Iterator[Finding]:
    """No component, and no kind cluster's Kubernetes, past its end of support on `on`; no pin
    of an installed component without support facts."""
    yield from without_facts(config)
    minors = cluster_minors(config)
    for item in found:
        line = item.upstream.line_of(item.version)
        if line is None:
            yield item.label, item.where, _missing(item.upstream, item.version)
            continue
        end = line.ends.violated(on)
        if end is not None:
            yield item.label, item.where, _ended(item.upstream.name, line, end, on, successor(item.upstream, on, minors))
    if config is not None and isinstance(config.cluster, KindClusterConfig):
        for m in minors:
            label = minor_label(m.minor)
            line = KUBERNETES.line_of(label)
            if line is None:
                yield f"Kubernetes {label}", m.label, _missing(KUBERNETES, label)
                continue
            end = line.ends.violated(on)
            if end is not None:
                lines = [d.upstream.line_of(d.version) for d in found]
                move = kubernetes_successor(on, [x for x in lines if x is not None])
                how = "a kindest/node image of that minor from the kind release's pre-built images (KIND_NODE_IMAGE with KIND_VERSION)"
                yield f"Kubernetes {label}", m.label, _ended("Kubernetes", line, end, on, f"{move}: {how}")


def _ended(name: str, line: Line, ended: date, on: date, move: str) -> str:
    estimate = "" if line.ends.on else f" (upstream's estimate: {line.ends.when}; counted {EXPECTED_GRACE_DAYS} days later)"
    return f"{name} {line.line} support ended {ended.isoformat()}{estimate}, {(on - ended).days} days before {on.isoformat()}; {move} — source: {line.source}"


def out_of_range(found: list[Deployed], config: PlatformConfig | None, on: date) -> Iterator[Finding]:
    """The cluster's Kubernetes minor (kind's node image, GKE's pinned minimum and channel
    default) inside every deployed component's supported range."""
    minors = cluster_minors(config)
    for item in found:
        line = item.upstream.line_of(item.version)
        if line is None or line.kubernetes is None:
            continue
        for m in minors:
            if line.supports(m.minor) is False:
                yield (
                    item.label,
                    item.where,
                    f"{item.upstream.name} {line.line} supports {line.range_label()}; the cluster runs "
                    f"{minor_label(m.minor)} ({m.label}; source: {m.source}); "
                    f"{successor(item.upstream, on, minors)} — source: {line.source}",
                )
