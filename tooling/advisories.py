"""The advisory rule of `python -m stacks check` and what `check` notes without failing. The
rule: no upstream in the request path runs a release below the fix of an advisory published
by the check date (facts/advisories.py). The notes: advisories of upstreams outside the request
path, and a Kubeflow release whose own support window has lapsed, with the parts the platform
patches itself (facts/versions.py Pin.patch). The versions are the ones the render deploys, as
the support rules read them (tooling/support.py `deployed`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date, timedelta

from facts import advisories
from facts.support import EXPECTED_GRACE_DAYS, upstream_of_pin
from facts.versions import PINS, Pin
from tooling.support import Deployed, Finding

KUBEFLOW = "Kubeflow"
"""The facts/support.py upstream of the Kubeflow release the platform is built on."""
PATCH_DOC = 'docs/upgrading.md, "A security patch"'


def open_advisories(found: Iterable[Deployed], on: date) -> Iterator[Finding]:
    """Every request-path upstream below the fix of an advisory published by `on`."""
    for item in found:
        for advisory, fixed in advisories.of(item.upstream.name, item.version, on):
            if advisory.request_path:
                yield (
                    item.label,
                    item.where,
                    f"{advisory.describe()}; in the request path and below its fix {fixed}: move {item.upstream.name} to "
                    f"{fixed} or later (its pin in facts/versions.py; images ahead of the chart or tree: Pin.patch, "
                    f"{PATCH_DOC}) — source: {advisory.source}",
                )


def notes(found: Iterable[Deployed], on: date) -> list[str]:
    """What `check` says on `on` without failing: advisories outside the request path, and the
    Kubeflow release's lapsed support window with what the platform patches itself."""
    found = list(found)
    lines = [
        f"{item.label} ({item.where}): {advisory.describe()}; below its fix {fixed}, not in the request path "
        f"(`python -m stacks outdated` lists it) — source: {advisory.source}"
        for item in found
        for advisory, fixed in advisories.of(item.upstream.name, item.version, on)
        if not advisory.request_path
    ]
    return lines + list(kubeflow_support(found, on))


def kubeflow_support(found: Iterable[Deployed], on: date) -> Iterator[str]:
    """The Kubeflow release past its support window (its estimate counts as a `support`
    violation only EXPECTED_GRACE_DAYS later), and the patches that stand in for its own."""
    for item in found:
        if item.upstream.name != KUBEFLOW:
            continue
        line = item.upstream.line_of(item.version)
        lapsed = line.ends.lapsed(on) if line else None
        if line is None or lapsed is None:
            continue
        fails = line.ends.on or lapsed + timedelta(days=EXPECTED_GRACE_DAYS)
        patched = "; ".join(patch_summary(pin, on) for pin in PINS if pin.patch is not None)
        yield (
            f"{KUBEFLOW} {line.line} ({item.version}): its support window ({line.ends.when}) lapsed {lapsed.isoformat()}, "
            f"and the `support` rule fails it from {fails.isoformat()}. The platform patches itself: {patched} "
            f"(docs/versions.md, \"Patches\"); the rest of the release runs as it ships — source: {line.source}"
        )


def patch_summary(pin: Pin, on: date) -> str:
    """`istio 1.30.1 -> 1.30.5 (ISTIO-SECURITY-2026-005, ...)`: a patched pin and the advisories
    published by `on` that it closes: the release its chart or tree ships is below their fix, the
    release it runs is not (one it runs below a fix is the `advisory` rule's, not a closed one)."""
    upstream = upstream_of_pin(pin.name)
    fixes: list[str] = []
    if upstream is not None:
        still_open = {a.id for a, _ in advisories.of(upstream.name, pin.runs, on)}
        fixes = [a.id for a, _ in advisories.of(upstream.name, pin.version, on) if a.id not in still_open]
    return f"{pin.name} {pin.version} -> {pin.runs}" + (f" ({', '.join(fixes)})" if fixes else "")
