"""The upstreams on the check's day: inside their support windows, the cluster's Kubernetes inside
each one's range, no request-path component below an advisory's fix."""

from __future__ import annotations

from collections.abc import Iterator

from tooling import advisories, support
from tooling.check.platform import Platform, Violation, check_rule


def deployed(platform: Platform) -> list[support.Deployed]:
    """The upstream versions the render deploys (facts/support.py), from its images (each as
    its upstream source, wherever the stack's mirror pulls it from) and its installs."""
    references = []
    for o, site in platform.image_sites:
        if not site.hub:
            source = platform.source_of(site.reference)
            references.append((o.source, str(source) if source else site.reference))
    return support.deployed(references, platform.render.installs)


@check_rule("support", "every component and kind's Kubernetes inside its support window on the check date")
def support_ended(platform: Platform) -> Iterator[Violation]:
    """Every component, and kind's Kubernetes, inside its support window on the check date."""
    for obj, where, message in support.ended(deployed(platform), platform.config, platform.on):
        yield Violation("support", obj, where, message)


@check_rule("kubernetes-range", "the cluster's Kubernetes minor inside every component's supported range")
def kubernetes_range(platform: Platform) -> Iterator[Violation]:
    """The cluster's Kubernetes minor inside every deployed component's supported range."""
    for obj, where, message in support.out_of_range(deployed(platform), platform.config, platform.on):
        yield Violation("kubernetes-range", obj, where, message)


@check_rule("advisory", "no request-path component below the fix of an advisory known on the check date")
def advisories_fixed(platform: Platform) -> Iterator[Violation]:
    """No upstream in the request path below the fix of an advisory known on the check date."""
    for obj, where, message in advisories.open_advisories(deployed(platform), platform.on):
        yield Violation("advisory", obj, where, message)
