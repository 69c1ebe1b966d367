"""Where a stack takes its notebook images from: `cpu=<ref>`, `gpu=<ref>` and
`registry=<host>` lines (GitHub Actions' $GITHUB_OUTPUT format), or one reference with
`--ref cpu|gpu`. The references are the ones the stack's notebook form offers
(components/kubeflow.py notebook_images): the tag carries a digest of images/notebook/Dockerfile.

    python scripts/notebook_image.py dev              # what CI pushes for the dev stack
    python scripts/notebook_image.py kind --ref cpu   # what `make notebook-images` builds
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.kubeflow import notebook_images
from stackmodel.config import ConfigError, load


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stack", help="a shipped stack name or a stack file")
    parser.add_argument("--ref", choices=("cpu", "gpu"), help="print only this image's reference")
    args = parser.parse_args()
    try:
        images = notebook_images(load(args.stack))
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    if args.ref:
        print(images.cpu if args.ref == "cpu" else images.gpu)
        return 0
    print(f"cpu={images.cpu}\ngpu={images.gpu}\nregistry={images.cpu.split('/', 1)[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
