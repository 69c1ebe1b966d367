"""Container image references: how they parse, where they are pulled from, and which tags
float. Pure naming helpers on strings, used by the image rewrite (plumbing/images.py),
the stack schema (the mirror's form) and the checks (tooling/check/images.py).

The grammar is the one container runtimes resolve (distribution/reference `normalize.go`,
`splitDockerDomain`): `[registry/]path[:tag][@digest]`; the first path component is a
registry when it contains `.` or `:` or is `localhost`, otherwise the image is on Docker Hub
(`docker.io`), and a one-component Docker Hub name is an official image under `library/`
(`busybox` is `docker.io/library/busybox`).

The mirror path scheme (`mlplatform:images.mirror`): an image is pulled from
`<mirror>/<registry>/<path>` with the tag or digest it had, the source registry kept in the
path so two registries never collide (`docker.io/istio/pilot:1.28.0` ->
`<mirror>/docker.io/istio/pilot:1.28.0`), Docker Hub names normalised first
(`rayproject/ray:2.58.0-py312` -> `<mirror>/docker.io/rayproject/ray:2.58.0-py312`). An image
hub (a registry prefix images are named under, Istio's `global.hub`) maps the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from facts.registries import RETIRED_REGISTRIES, RetiredRegistry
from facts.versions import PATCHED_TAGS, UPSTREAM_FLOATING_IMAGES, Pin, image

DOCKER_HUB = "docker.io"
DOCKER_HUB_ALIASES = ("index.docker.io", "registry-1.docker.io")
"""Names Docker Hub is also written as; references normalise them to DOCKER_HUB."""
OFFICIAL_IMAGES = "library"
LOCALHOST = "localhost"
DIGEST = re.compile(r"^[a-z0-9]+([+._-][a-z0-9]+)*:[0-9a-fA-F]{32,}$")
TAG = re.compile(r"^[\w][\w.-]{0,127}$")
PATH_COMPONENT = re.compile(r"^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$")
HOST = re.compile(r"^([a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*(:[0-9]+)?$")

FLOATING_TAGS = frozenset({"latest", "main", "master", "nightly", "edge", "dev", "stable"})
"""Tags that move by design: a pod started tomorrow may run other code than one started today."""
BARE_VERSION = re.compile(r"^v?[0-9]+(\.[0-9]+)?$")
"""`2`, `v1`, `1.28`: a bare major or major.minor, which upstreams move to each new patch
(Docker's official images do; so do most projects that publish such tags at all)."""


@dataclass(frozen=True)
class ImageRef:
    """One parsed image reference."""

    registry: str | None
    """As written; None when the reference names none (Docker Hub)."""
    path: str
    tag: str | None = None
    digest: str | None = None

    @property
    def host(self) -> str:
        """The registry the image is pulled from (Docker Hub's aliases as `docker.io`)."""
        if self.registry is None or self.registry in DOCKER_HUB_ALIASES:
            return DOCKER_HUB
        return self.registry

    @property
    def repository(self) -> str:
        """The path under the registry, official Docker Hub images under `library/`: what
        identifies the image wherever it is mirrored (`istio/pilot`, `library/busybox`)."""
        if self.host == DOCKER_HUB and "/" not in self.path:
            return f"{OFFICIAL_IMAGES}/{self.path}"
        return self.path

    @property
    def name(self) -> str:
        """`<registry>/<repository>`, normalised (`docker.io/library/busybox`)."""
        return f"{self.host}/{self.repository}"

    @property
    def suffix(self) -> str:
        """`:tag`, `@digest` or both, as written."""
        return (f":{self.tag}" if self.tag else "") + (f"@{self.digest}" if self.digest else "")

    def normalized(self) -> str:
        """The full reference a runtime pulls (`docker.io/library/busybox:1.28.4`)."""
        return f"{self.name}{self.suffix}"

    def __str__(self) -> str:
        return f"{self.registry + '/' if self.registry else ''}{self.path}{self.suffix}"


def is_registry(component: str) -> bool:
    """Whether the first component of a name is a registry host (distribution/reference)."""
    return component == LOCALHOST or (("." in component or ":" in component) and HOST.match(component) is not None)


def is_local(host: str) -> bool:
    """`localhost` or `localhost:<port>`: images loaded into the nodes or served on them
    (`kind load`, a kind-local registry), never pulled through a mirror."""
    return host.split(":", 1)[0] == LOCALHOST


def parse(reference: str) -> ImageRef:
    """`reference` parsed; a ValueError says what is not an image reference about it."""
    if not reference or reference != reference.strip() or any(c.isspace() for c in reference):
        raise ValueError(f"{reference!r} is not an image reference (empty or with spaces)")
    rest, _, digest = reference.partition("@")
    if digest and not DIGEST.match(digest):
        raise ValueError(f"{reference!r}: {digest!r} is not a digest (algorithm:hex)")
    name, tag = rest, None
    last = rest.rsplit("/", 1)[-1]
    if ":" in last:
        name, tag = rest.rsplit(":", 1)
        if not TAG.match(tag):
            raise ValueError(f"{reference!r}: {tag!r} is not a tag")
    first, slash, remainder = name.partition("/")
    registry, path = (first, remainder) if slash and is_registry(first) else (None, name)
    if not path or not all(PATH_COMPONENT.match(part) for part in path.split("/")):
        raise ValueError(f"{reference!r}: {path!r} is not a repository path (lowercase components separated by '/')")
    return ImageRef(registry=registry, path=path, tag=tag, digest=digest or None)


def parses(reference: str) -> bool:
    try:
        parse(reference)
    except ValueError:
        return False
    return True


def floating(ref: ImageRef) -> str | None:
    """Why the reference may pull other bytes tomorrow, or None: a digest pins it whatever
    its tag; otherwise no tag, a floating tag, or a bare major or major.minor."""
    if ref.digest:
        return None
    if not ref.tag:
        return "has no tag (the runtime pulls latest)"
    if ref.tag in FLOATING_TAGS:
        return f"is on the floating tag {ref.tag!r}"
    if BARE_VERSION.match(ref.tag):
        return f"is on {ref.tag!r}, a bare version the upstream moves with each release"
    return None


def retired_registry(name: str) -> RetiredRegistry | None:
    """The retired registry a normalised image name or hub lives in, if any."""
    for retired in RETIRED_REGISTRIES:
        if name == retired.prefix or name.startswith(retired.prefix + "/"):
            return retired
    return None


def normalized_hub(hub: str) -> str:
    """A hub (`<registry>[/<path>]`, no image name) with its registry written out:
    `istio` is `docker.io/istio`."""
    first = hub.split("/", 1)[0]
    if is_registry(first):
        return DOCKER_HUB + hub[len(first):] if first in DOCKER_HUB_ALIASES else hub
    return f"{DOCKER_HUB}/{hub}"


def _replace_prefix(name: str, retired: RetiredRegistry) -> str:
    return retired.successor + name[len(retired.prefix):]


@dataclass(frozen=True)
class ImagePolicy:
    """Where the platform pulls every image from: upstream's floating references replaced by
    their pins, a patched pin's images at the release it runs instead of the one its chart or
    tree names, retired registries by their successors, and, with a mirror, everything
    through the mirror (the path scheme in the module docstring). Pure and idempotent:
    applied twice, or to what it already rewrote, it changes nothing."""

    mirror: str | None = None
    """`mlplatform:images.mirror`: a registry prefix, no scheme, no tag."""
    retired: tuple[RetiredRegistry, ...] = RETIRED_REGISTRIES
    floating_pins: dict[str, Pin] = field(default_factory=lambda: dict(UPSTREAM_FLOATING_IMAGES))
    patched: dict[str, dict[str, str]] = field(default_factory=lambda: dict(PATCHED_TAGS))
    """Repository -> {tag a chart or tree names: the patch release's tag} (facts/versions.py
    Pin.patch): wherever the image is pulled from, by tag, never by digest."""

    def in_mirror(self, reference: str) -> bool:
        return self.mirror is not None and reference.startswith(self.mirror + "/")

    def source(self, reference: str) -> str:
        """Where `reference` is pulled from without a mirror: the pinned image for a floating
        upstream reference, a patched pin's release for the tag its chart or tree names, the
        successor for a retired registry; otherwise as written."""
        if not parses(reference) or self.in_mirror(reference):
            return reference
        ref = parse(reference)
        pin = self.floating_pins.get(f"{ref.name}:{ref.tag}" if ref.tag else ref.name) if not ref.digest else None
        if pin is not None:
            return image(pin)
        for retired in self.retired:
            if ref.name.startswith(retired.prefix + "/"):
                moved = _replace_prefix(ref.name, retired) + ref.suffix
                return self._patched(parse(moved)) or moved
        return self._patched(ref) or reference

    def _patched(self, ref: ImageRef) -> str | None:
        """`ref` at its patch release, if it names a patched pin's image by the tag its chart
        or tree ships; else None."""
        release = self.patched.get(ref.repository, {}).get(ref.tag or "") if not ref.digest else None
        return str(ImageRef(registry=ref.registry, path=ref.path, tag=release)) if release is not None else None

    def image(self, reference: str) -> str:
        """What the cluster pulls for `reference` (unchanged when it does not parse, is under
        the mirror already, or is a `localhost/` image that is loaded into nodes, not pulled)."""
        source = self.source(reference)
        if self.mirror is None or not parses(source) or self.in_mirror(source):
            return source
        ref = parse(source)
        if is_local(ref.host):
            return source
        return f"{self.mirror}/{ref.normalized()}"

    def hub(self, hub: str) -> str:
        """What an image hub (`gcr.io/istio-release`) becomes: its successor, through the mirror."""
        if not hub or self.in_mirror(hub + "/"):
            return hub
        name = normalized_hub(hub)
        for retired in self.retired:
            if name == retired.prefix or name.startswith(retired.prefix + "/"):
                name = _replace_prefix(name, retired)
                break
        else:
            name = hub
        if self.mirror is None or is_local(name.split("/", 1)[0]):
            return name
        return f"{self.mirror}/{normalized_hub(name)}"

    def origin(self, reference: str) -> str | None:
        """The source a mirrored reference is copied from (`<mirror>/docker.io/istio/pilot:1.28.0`
        -> `docker.io/istio/pilot:1.28.0`); None when it is not a mirror copy (no mirror, not
        under it, or put there directly: the path after the mirror names no registry)."""
        if self.mirror is None or not self.in_mirror(reference):
            return None
        rest = reference[len(self.mirror) + 1 :]
        first = rest.split("/", 1)[0]
        return rest if "/" in rest and is_registry(first) and parses(rest) else None
