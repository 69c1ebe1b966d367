"""A copy of this checkout's working tree (what git tracks, and new files it does not ignore),
for a test that must build or run the repository somewhere else: without the virtualenv,
the caches and the upstream mirror that the checkout's own directory holds."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def copy_working_tree(destination: Path) -> Path:
    """The working tree's files (uncommitted changes included) copied into `destination`."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if not source.is_file():  # deleted in the working tree, not yet in the index
            continue
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return destination
