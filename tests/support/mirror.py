"""The upstream mirror the tests render from, found the way the tools find it
(tooling/cli.py `mirror_for`: $MLPLATFORM_MIRROR, else ../shared/upstream beside the repo).

Outside CI a checkout without the mirror skips the tests that need it, each saying why; under
CI=true that is an error before any test runs (tests/conftest.py), so CI can never pass by
skipping every render test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooling.cli import MIRROR_ENV, SHARED_MIRROR, mirror_for

MIRROR: Path = mirror_for(None) or SHARED_MIRROR
"""The mirror directory (it may be missing: see FOUND)."""
FOUND = MIRROR.is_dir()
MISSING = (
    f"no upstream mirror at {MIRROR}: set {MIRROR_ENV} to its directory, or put the shared data at "
    f"{SHARED_MIRROR} beside the repo"
)
needed = pytest.mark.skipif(not FOUND, reason=MISSING)
"""Mark of a test (or, as `pytestmark`, a module) that reads the mirror."""

