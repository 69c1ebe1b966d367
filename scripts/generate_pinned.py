"""Write the files generated from the pin table: the notebook image's Dockerfile and the
examples' requirements (facts/image_set.py). `--check` only compares, exit 1 if one is stale.
Tests fail when they drift; run this to fix them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from facts.image_set import DOCKERFILE, REQUIREMENTS, dockerfile, requirements

REPO = Path(__file__).resolve().parents[1]


def generated() -> dict[Path, str]:
    return {REPO / DOCKERFILE: dockerfile(), REPO / REQUIREMENTS: requirements()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 if a file is not current")
    args = parser.parse_args()
    stale = [path for path, text in generated().items() if not path.is_file() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(REPO)} is not current: run python scripts/generate_pinned.py", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(generated()[path])
        print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
