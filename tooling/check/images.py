"""Images: every image on a release tag or digest, pinned upstreams on the images their pins say,
no retired registry, the mirror where the stack has one."""

from __future__ import annotations

from collections.abc import Iterator

from facts.image_refs import FLOATING_TAGS, floating, is_local, normalized_hub, parse, retired_registry
from facts.versions import PINS, Pin, PinKind
from tooling.check.platform import Platform, Violation, check_rule, image_site_label, label


@check_rule("image-tag", "every image on a release tag or digest, never a floating one")
def image_tags(platform: Platform) -> Iterator[Violation]:
    """Every image names a release: a digest, or a tag that is neither absent, floating
    (`latest`, `main`, `master`, ...), nor a bare major or major.minor, unless the pin table
    pins that very tag (a project that numbers its releases major.minor, such as SeaweedFS 4.00:
    the pin's source says so)."""
    pinned = pinned_tags()
    for o, site in platform.image_sites:
        if site.hub:
            continue
        try:
            ref = parse(site.reference)
            why = floating(ref)
        except ValueError as err:
            yield Violation("image-tag", label(o), o.source, f"{image_site_label(site)} is not an image reference ({err}); name one such as registry/path:tag")
            continue
        identity = platform.source_of(site.reference)
        if why and ref.tag and identity is not None and ref.tag in pinned.get(identity.repository, {}) and ref.tag not in FLOATING_TAGS:
            why = None
        if why:
            yield Violation("image-tag", label(o), o.source, f"{image_site_label(site)} {why}; pin a release tag, or a digest (@sha256:...) for a tag that moves")


@check_rule("image-pin", "pinned upstreams run the images their pins say")
def image_pins(platform: Platform) -> Iterator[Violation]:
    """The images of pinned upstreams carry the versions the pin table says (facts/versions.py:
    each IMAGE pin's version, each chart's and tree's `deploys`), so the pin tells what runs;
    and a pin's deployed images are all there, or none (its install is off)."""
    wanted = pinned_tags()
    seen: set[str] = set()
    for o, site in platform.image_sites:
        if site.hub:
            continue
        identity = platform.source_of(site.reference)
        if identity is None or identity.repository not in wanted:
            continue
        seen.add(identity.repository)
        tags = wanted[identity.repository]
        if identity.tag not in tags:
            pins = ", ".join(sorted({f"{pin.name} {pin.version} ({tag})" for tag, pin in tags.items()}))
            yield Violation(
                "image-pin",
                label(o),
                o.source,
                f"{image_site_label(site)} is not at the pinned tag {' or '.join(sorted(tags))} (pin table: {pins}); "
                "bump the pin in facts/versions.py with the install, or the install with the pin",
            )
    for pin in PINS:
        repositories = set(pin.image_tags())
        missing = sorted(repositories - seen)
        if missing and repositories & seen:
            yield Violation(
                "image-pin",
                f"pin {pin.name} {pin.version}",
                "facts/versions.py",
                f"deploys {', '.join(missing)}, which nothing in the render runs (renamed or dropped upstream?); "
                "make the pin's `deploys` say what the install runs",
            )


@check_rule("retired-registry", "no image or hub from a retired registry")
def no_retired_registry(platform: Platform) -> Iterator[Violation]:
    """No image or hub from a retired registry (facts/registries.py): the image rewrite
    (plumbing/images.py) replaces them, so one that is left escaped it."""
    for o, site in platform.image_sites:
        try:
            name = normalized_hub(site.reference) if site.hub else parse(site.reference).name
        except ValueError:
            continue
        retired = retired_registry(name)
        if retired:
            yield Violation(
                "retired-registry",
                label(o),
                o.source,
                f"{image_site_label(site)} is from {retired.prefix}, which stops serving images on {retired.retires}; "
                f"use {retired.successor} (the same images), which the platform's image rewrite does for every "
                "object it installs: this one bypassed it",
            )


@check_rule("image-mirror", "with an image mirror, every image pulled through it")
def images_mirrored(platform: Platform) -> Iterator[Violation]:
    """With `mlplatform:images.mirror`, every image and hub is pulled through the mirror
    (`localhost/` images excepted: they are loaded into the nodes, never pulled)."""
    mirror = platform.images.mirror
    if mirror is None:
        return
    for o, site in platform.image_sites:
        reference = site.reference
        if platform.images.in_mirror(reference if not site.hub else reference + "/"):
            continue
        try:
            if not site.hub and is_local(parse(reference).host):
                continue
        except ValueError:
            pass
        yield Violation(
            "image-mirror",
            label(o),
            o.source,
            f"{image_site_label(site)} is not pulled through the mirror {mirror}; it should be "
            f"{platform.images.hub(reference) if site.hub else platform.images.image(reference)!r} "
            "(the platform's image rewrite, plumbing/images.py, does this for every object it installs)",
        )


def pinned_tags() -> dict[str, dict[str, Pin]]:
    """Repository -> {tag: pin} of every image the pin table pins: IMAGE pins at their
    version, charts and trees at the tags of their `deploys`."""
    found: dict[str, dict[str, Pin]] = {}
    for pin in PINS:
        if pin.kind is PinKind.IMAGE:
            found.setdefault(parse(pin.location).repository, {})[pin.version] = pin
        for repository, tag in pin.image_tags().items():
            found.setdefault(repository, {})[tag] = pin
    return found
