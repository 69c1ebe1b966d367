"""What the upstream mirror's fetchers share (tooling/mirror.py, mirror_charts.py,
mirror_manifests.py): their errors, which tell a source that did not serve a piece from one that
served the wrong thing, and running a tool."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any


class MirrorError(Exception):
    """An upstream could not be fetched or is not what the pin says; the message names both."""


class Unavailable(MirrorError):
    """A source that could not be fetched at all (a 404, a refused connection, a chart its
    repository's index lacks), as against one fetched and found wrong: the first may be
    tolerated for a pin no stack needs (tooling/mirror.py optional_pins), the second never."""


def run_tool(args: list[str], what: str, env: Mapping[str, str] | None = None, failed: type[MirrorError] = MirrorError) -> bytes:
    """The command's output; `failed` (with what it said) where it exits non-zero."""
    try:
        result = subprocess.run(args, capture_output=True, env=env, check=False, timeout=600)
    except OSError as err:
        raise MirrorError(f"{what}: {args[0]}: {err}") from None
    except subprocess.TimeoutExpired:
        raise MirrorError(f"{what}: `{' '.join(args[:3])} ...` took over 10 minutes") from None
    if result.returncode != 0:
        said = (result.stderr or result.stdout).decode(errors="replace").strip()
        raise failed(f"{what}: `{' '.join(args)}` failed: {said}")
    return result.stdout + result.stderr


def sha256(path: Path) -> str:
    """The file's sha256, hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tried(fetch: Callable[[], dict[str, Any]]) -> dict[str, Any] | Unavailable:
    """What `fetch` returns, or the Unavailable it raised (any other error is raised)."""
    try:
        return fetch()
    except Unavailable as err:
        return err
