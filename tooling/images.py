"""`python -m stacks images <stack>`: every image the platform runs or hands an operator to
run, read from the full render through the one image inventory (plumbing/images.py), as
a list, as `source destination` pairs that fill the stack's mirror (`--copy-list`), or as
JSON for tools (`--json`)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from facts.image_refs import ImagePolicy
from plumbing.images import image_sites
from tooling.check import label
from tooling.fullrender import FullRender


@dataclass(frozen=True)
class PlatformImage:
    """One image, where it is named, and (with a mirror) what is copied into it."""

    image: str
    """As the cluster pulls it (through the mirror when the stack has one)."""
    objects: tuple[str, ...]
    """`<kind> <namespace>/<name>` of every object that names it."""
    source: str | None = None
    """With a mirror: what the mirror copy is made from; None when the image is not a copy
    (no mirror; or put into the mirror directly, or loaded into the nodes)."""


def policy_of(render: FullRender) -> ImagePolicy:
    config = render.plan.config
    return ImagePolicy(mirror=config.images.mirror if config else None)


def platform_images(render: FullRender) -> list[PlatformImage]:
    """Every image of the render once, sorted; hubs are not images (their images are listed)."""
    policy = policy_of(render)
    named: dict[str, list[str]] = {}
    for o in render.objects:
        for site in image_sites(o.obj):
            if not site.hub:
                objects = named.setdefault(site.reference, [])
                if label(o) not in objects:
                    objects.append(label(o))
    return [PlatformImage(image, tuple(sorted(objects)), policy.origin(image)) for image, objects in sorted(named.items())]


def copy_list(render: FullRender) -> list[tuple[str, str]]:
    """`(source, destination)` for every image the mirror must hold, once each."""
    return [(i.source, i.image) for i in platform_images(render) if i.source is not None]


def as_json(render: FullRender) -> str:
    images = [
        {"image": i.image, "source": i.source, "destination": i.image if i.source else None, "objects": list(i.objects)}
        for i in platform_images(render)
    ]
    return json.dumps({"stack": render.stack, "mirror": policy_of(render).mirror, "images": images}, indent=2)
