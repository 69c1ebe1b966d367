"""The GKE stacks in stacks/, whatever a fork named them, for a workflow's matrix: one line
`gke=["dev","prod"]` (GitHub Actions' $GITHUB_OUTPUT format); `gke=[]` when there is none
(the workflows then skip their GKE jobs). A stack file that does not load stops it (exit 2).

    python scripts/gke_stacks.py >> "$GITHUB_OUTPUT"
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stackmodel.config import ConfigError, load, stack_names
from stackmodel.schema import GkeClusterConfig


def gke_stacks() -> list[str]:
    """The names of the stacks in stacks/ whose cluster is a GKE cluster."""
    return [name for name in stack_names() if isinstance(load(name).cluster, GkeClusterConfig)]


def main() -> int:
    try:
        names = gke_stacks()
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    print(f"gke={json.dumps(names, separators=(',', ':'))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
