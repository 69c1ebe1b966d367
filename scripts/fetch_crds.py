"""Download the upstream CRDs the schema checks validate against, at the pinned refs.

For forks without the shared data beside the repo: `make crds` fills the cache that
tooling/schemas.py looks in (or the folder given as the first argument), one folder per pin
(`<project>-<version>`), the only folders the loader reads. Every tag, commit and URL comes
from the pin table (facts/versions.py `CRD_SOURCES`). A multi-document source (Istio's) is
kept whole; the loader reads every CustomResourceDefinition document in a file.
"""

from __future__ import annotations

import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facts.versions import CRD_SOURCES, CrdFiles
from tooling.schemas import CACHE


def downloads(target: Path, sources: tuple[CrdFiles, ...] = CRD_SOURCES) -> list[tuple[str, Path]]:
    """(URL, destination) of every file to fetch: `<folder>/<owner>_<name>_<file name>`."""
    return [
        (url, target / files.folder / f"{files.repository.replace('/', '_')}_{Path(path).name}")
        for files in sources
        for path, url in zip(files.paths, files.urls(), strict=True)
    ]


def main(target: Path) -> int:
    for url, destination in downloads(target):
        destination.parent.mkdir(parents=True, exist_ok=True)
        print(f"{url} -> {destination}")
        with urllib.request.urlopen(url, timeout=60) as response:
            destination.write_bytes(response.read())
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else CACHE))
