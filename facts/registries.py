"""Container registries that are retired or retiring, each with its successor, the date it
stops serving and where that was announced. Imports nothing.

The platform never sends an image from one of these to the cluster: every image and image
hub in every object it installs is rewritten to the successor (plumbing/images.py, the
same on `pulumi up` and in the offline render), and `python -m stacks check` fails on any
that is left (rule `retired-registry`). A registry that is announced for retirement goes
here the day it is announced, with the announcement as its source; the rewrite and the
check follow from the table alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class RetiredRegistry:
    """A registry prefix (`host[/path]`) that stops serving images, and the one that keeps them."""

    prefix: str
    """The retired registry, as image references name it (`gcr.io/istio-release`)."""
    successor: str
    """Where the same repositories and tags are published (`docker.io/istio`)."""
    retires: date
    """The first day it may no longer serve images (the announced date, or the end of the
    announced period)."""
    source: str


RETIRED_REGISTRIES: tuple[RetiredRegistry, ...] = (
    RetiredRegistry(
        prefix="gcr.io/istio-release",
        successor="docker.io/istio",
        retires=date(2027, 1, 1),
        source="istio.io blog \"Istio is Migrating Container Registries\" (2026-03-23, istio/istio.io "
        "content/en/blog/2026/retirement-of-gcr.io/index.md): images no longer available at "
        "gcr.io/istio-release starting January 1st, 2027; \"An Update on Our Container Registry Migration\" "
        "(2026-07-23, .../retirement-of-gcr.io-follow-up/index.md): images stay published on docker.io/istio",
    ),
    RetiredRegistry(
        prefix="registry.istio.io/release",
        successor="docker.io/istio",
        retires=date(2027, 1, 1),
        source="istio.io blog \"An Update on Our Container Registry Migration\" (2026-07-23, istio/istio.io "
        "content/en/blog/2026/retirement-of-gcr.io-follow-up/index.md): registry.istio.io/release, the "
        "default hub of Istio 1.30, is hosted until late 2026 and retired; images stay on docker.io/istio",
    ),
    RetiredRegistry(
        prefix="k8s.gcr.io",
        successor="registry.k8s.io",
        retires=date(2023, 4, 3),
        source="kubernetes.io blog \"k8s.gcr.io image registry will be frozen from the 3rd of April 2023\" "
        "(2023-02-06, kubernetes/website content/en/blog/_posts/2023-02-06-k8s-gcr-io-freeze-announcement.md): "
        "frozen on 2023-04-03, registry.k8s.io replaced it; newer releases exist only there",
    ),
)
