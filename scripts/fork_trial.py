"""A fork's first CI run, rehearsed: `make test` in a fresh clone of this checkout whose stacks/
holds only one new stack file (tests/data/fork/Pulumi.staging.yaml, another company's GKE
stack, none of acme's). It passes only if nothing the suite, the golden snapshots, the
architecture diagram or the workflows' tests compare against reads stacks/, and then
`make check-stacks` renders and checks the new stack like any other.

    python scripts/fork_trial.py          # what `make fork-trial` runs; exits with make test's code
    python scripts/fork_trial.py --keep   # and leaves the copy behind, to look at

The clone is of HEAD (commit what you want tried), into a temporary directory. It reuses this
checkout's virtualenv (`make test VENV=... -o VENV/.installed`, no install into it: the copy's own modules come first
on the path, which is checked before anything runs), and the upstream mirror and CRDs the tools
find from here (MLPLATFORM_MIRROR, CRD_DIR, KUBEBUILDER_ASSETS): it takes as long as `make test`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FORK_STACK = REPO / "tests" / "data" / "fork" / "Pulumi.staging.yaml"
VENV = REPO / ".venv"

sys.path.insert(0, str(REPO))


def clone(destination: Path) -> None:
    """A fresh clone of this checkout's HEAD into `destination`, as a fork starts from."""
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(destination)], check=True)


def as_a_fork(copy: Path) -> None:
    """stacks/ with the fork's one stack file instead of acme's examples."""
    for example in (copy / "stacks").glob("Pulumi.*.yaml"):
        example.unlink()
    shutil.copy(FORK_STACK, copy / "stacks" / FORK_STACK.name)


def environment() -> dict[str, str]:
    """This checkout's mirror, CRD folders and envtest binaries, which the copy (elsewhere) would
    not find beside it."""
    from tests.support import envtest
    from tooling.cli import MIRROR_ENV, mirror_for
    from tooling.schemas import crd_roots

    env = dict(os.environ)
    mirror = mirror_for(None)
    if mirror is not None:
        env[MIRROR_ENV] = str(mirror.resolve())
    env["CRD_DIR"] = os.pathsep.join(str(root.resolve()) for root in crd_roots() if root.is_dir())
    if envtest.missing() is None:
        env[envtest.ASSETS_ENV] = str(envtest.assets().resolve())
    return env


def imports_its_own_modules(copy: Path, env: dict[str, str]) -> bool:
    """Whether the virtualenv's Python, run in the copy, imports the copy's `stacks` (not this
    checkout's, which the editable install points at)."""
    found = subprocess.run(
        [str(VENV / "bin" / "python"), "-c", "import stacks.config as c; print(c.__file__)"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return Path(found).resolve().is_relative_to(copy.resolve())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", action="store_true", help="leave the copy in place and print where it is")
    args = parser.parse_args()
    if not (VENV / ".installed").exists():
        print(f"fork-trial: no virtualenv at {VENV}; run `make .venv/.installed` first", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="mlplatform-fork-"))
    copy = work / "repo"
    try:
        clone(copy)
        as_a_fork(copy)
        env = environment()
        if not imports_its_own_modules(copy, env):
            print("fork-trial: the virtualenv imports this checkout's modules, not the copy's", file=sys.stderr)
            return 2
        stacks = sorted(p.name for p in (copy / "stacks").glob("Pulumi.*.yaml"))
        print(f"fork-trial: {copy} with stacks/ holding only {', '.join(stacks)}; make test", flush=True)
        # -o: the clone's files are newer than this virtualenv's stamp; make must not reinstall
        # into it (its editable install would point at the clone, deleted afterwards).
        installed = VENV / ".installed"
        command = ["make", "test", f"VENV={VENV}", "-o", str(installed)]
        return subprocess.run(command, cwd=copy, env=env, check=False).returncode
    finally:
        if args.keep:
            print(f"fork-trial: the copy stays at {copy}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
