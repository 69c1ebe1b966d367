"""The upstream mirror the tests render from, found the way the tools find it
(tooling/mirror.py `mirror_for`: the clone's own `.mlplatform/upstream` that `make mirror`
builds, else $MLPLATFORM_MIRROR, else ../shared/upstream beside the repo).

Outside CI a checkout without the mirror skips the tests that need it, each saying why; under
CI=true that is an error before any test runs (tests/conftest.py), so CI can never pass by
skipping every render test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooling.mirror import LOCAL_MIRROR, MIRROR_ENV, SHARED_MIRROR, mirror_for

MIRROR: Path = mirror_for(None) or SHARED_MIRROR
"""The mirror directory (it may be missing: see FOUND)."""
FOUND = MIRROR.is_dir()
MISSING = (
    f"no upstream mirror at {MIRROR}: set {MIRROR_ENV} to its directory, build the clone's own at {LOCAL_MIRROR} "
    f"with `make mirror`, or put the shared data at {SHARED_MIRROR} beside the repo"
)
needed = pytest.mark.skipif(not FOUND, reason=MISSING)
"""Mark of a test (or, as `pytestmark`, a module) that reads the mirror."""

