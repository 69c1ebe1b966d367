"""The release manifests of the upstream mirror (tooling/mirror.py): each file of
facts/versions.py RELEASE_MANIFESTS fetched by HTTPS from its raw URL at the pinned commit (or
where `--sources` redirects its repository) into `manifests/<owner>/<repo>/<commit>/<path>`,
its sha256 the pin table's."""

from __future__ import annotations

import hashlib
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from facts.versions import GITHUB_RAW, ReleaseManifest
from tooling.mirror_fetch import MirrorError, Unavailable


def release_manifest_origin(manifest: ReleaseManifest, sources: Mapping[str, str]) -> str:
    """The URL a release manifest is fetched from: raw.githubusercontent.com at the pinned commit,
    or `<redirect>/<commit>/<path>` where `sources` redirects its repository (a location under
    which the repository's files lie by commit, as on raw.githubusercontent.com)."""
    base = sources.get(manifest.pin.location, f"{GITHUB_RAW}/{manifest.repository}")
    return f"{base.rstrip('/')}/{manifest.pin.version}/{manifest.path}"


def fetch_release_manifest(manifest: ReleaseManifest, sources: Mapping[str, str], into: Path) -> dict[str, Any]:
    """The release manifest into `into/<owner>/<repo>/<commit>/<path>`, its sha256 the pin's;
    what mirror.json records of it."""
    origin = release_manifest_origin(manifest, sources)
    try:
        with urllib.request.urlopen(origin, timeout=120) as response:
            data = response.read()
    except OSError as err:  # urllib's HTTPError (a 404) and URLError (refused, no such file) among them
        raise Unavailable(f"{manifest.path} at {manifest.pin.version[:8]}: fetching {origin} failed: {err}") from None
    except ValueError as err:
        raise MirrorError(f"{manifest.path} at {manifest.pin.version[:8]}: fetching {origin} failed: {err}") from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != manifest.sha256:
        raise MirrorError(
            f"{origin} has sha256 {actual}, the pin table says {manifest.sha256} (facts/versions.py): "
            "not the pinned file (a redirect to another commit, or a proxy's error page?)"
        )
    target = into / manifest.mirror_path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return {"path": str(target.relative_to(into.parent)), "from": origin, "digest": f"sha256:{actual}"}
