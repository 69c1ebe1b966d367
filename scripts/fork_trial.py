"""A fork's first CI run, rehearsed: in a fresh clone of this checkout whose stacks/ holds only
one new stack file (tests/data/fork/Pulumi.staging.yaml, another company's GKE stack, none of
acme's), `make mirror` then `make test` with CI=true. It passes only if nothing the suite, the
golden snapshots, the architecture diagram or the workflows' tests compare against reads
stacks/, and if the clone builds every upstream it renders from itself: no ../shared beside
it, no MLPLATFORM_MIRROR, so the render tests and `make check-stacks` read the mirror
`make mirror` built inside the clone (.mlplatform/upstream).

    python scripts/fork_trial.py             # what `make fork-trial` runs: the mirror from the public upstreams
    python scripts/fork_trial.py --loopback  # no network: from loopback servers of this checkout's mirror
    python scripts/fork_trial.py --keep      # and leaves the copy behind, to look at

`--loopback` serves the pin table's upstreams on 127.0.0.1 out of the mirror the tools find
from here (tests/support/loopback.py: an HTTP chart repository, which also stands in for the
OCI registries, and a git repository per git upstream, tagged at its pin) and points the
clone's `make mirror` at them (MIRROR_SOURCES): the clone reads nothing of this checkout's
mirror but what it fetches through helm and git.

The clone is of HEAD (commit what you want tried), into a temporary directory. It reuses this
checkout's virtualenv (`make ... VENV=... INSTALLED=<a stamp of its own>`, no install into it: the copy's own
modules come first on the path, which is checked before anything runs), and the CRDs the tools
find from here (CRD_DIR; `make crds` downloads them where there is network) and the envtest
binaries found from here (KUBEBUILDER_ASSETS: the shared data unpacked, where a fork's CI
points it at setup-envtest's and a kube-controller-manager). It takes as long as `make test`
and `make mirror`.
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
    """What a fork's CI has: CI=true, no mirror given from outside (the clone builds its own),
    and this checkout's CRD folders and envtest binaries, which the copy (elsewhere) would not
    find beside it."""
    from tests.support import envtest
    from tooling.mirror import MIRROR_ENV
    from tooling.schemas import crd_roots

    env = dict(os.environ)
    env.pop(MIRROR_ENV, None)
    env["CI"] = "true"
    env["CRD_DIR"] = os.pathsep.join(str(root.resolve()) for root in crd_roots() if root.is_dir())
    if envtest.missing() is None:
        env[envtest.ASSETS_ENV] = str(envtest.assets().resolve())
    return env


def make(target: str, copy: Path, env: dict[str, str], *variables: str) -> int:
    """`make <target>` in the copy with this checkout's virtualenv. The clone's files are newer
    than the virtualenv's stamp, and make must not reinstall into it (its editable install would
    point at the clone, deleted afterwards): INSTALLED names a stamp of the copy's own, written
    after the clone. A variable, not `-o`, which make does not hand to the `make check-stacks`
    that `make test` runs."""
    stamp = copy.parent / "installed"
    if not stamp.exists():
        stamp.touch()
    command = ["make", target, f"VENV={VENV}", f"INSTALLED={stamp}", *variables]
    return subprocess.run(command, cwd=copy, env=env, check=False).returncode


def build_mirror(copy: Path, env: dict[str, str], loopback: bool, work: Path) -> int:
    """`make mirror` in the copy: from the public upstreams, or from loopback servers of the
    mirror this checkout finds."""
    if not loopback:
        return make("mirror", copy, env)
    import yaml

    from tests.support.loopback import serving
    from tooling.mirror import mirror_for

    served = mirror_for(None)
    if served is None or not served.is_dir():
        print("fork-trial: --loopback needs a mirror here to serve (make mirror, MLPLATFORM_MIRROR or ../shared/upstream)", file=sys.stderr)
        return 2
    with serving(served, work=work) as sources:
        sources_file = work / "sources.yaml"
        sources_file.write_text(yaml.safe_dump(sources))
        print(f"fork-trial: the upstreams on loopback, from {served}: {sources_file}", flush=True)
        return make("mirror", copy, env, f"MIRROR_SOURCES={sources_file}")


def imports_its_own_modules(copy: Path, env: dict[str, str]) -> bool:
    """Whether the virtualenv's Python, run in the copy, imports the copy's `stackmodel` (not this
    checkout's, which the editable install points at)."""
    found = subprocess.run(
        [str(VENV / "bin" / "python"), "-c", "import stackmodel.config as c; print(c.__file__)"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return Path(found).resolve().is_relative_to(copy.resolve())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loopback", action="store_true", help="build the clone's mirror from loopback servers of this checkout's mirror (no network)")
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
        if (copy.parent / "shared").exists() or (copy / ".mlplatform").exists():
            print(f"fork-trial: {copy} must start with no mirror beside or inside it", file=sys.stderr)
            return 2
        stacks = sorted(p.name for p in (copy / "stacks").glob("Pulumi.*.yaml"))
        print(f"fork-trial: {copy} with stacks/ holding only {', '.join(stacks)}, no mirror; make mirror, then make test", flush=True)
        built = build_mirror(copy, env, args.loopback, work)
        if built != 0:
            print("fork-trial: make mirror failed", file=sys.stderr)
            return built
        return make("test", copy, env)
    finally:
        if args.keep:
            print(f"fork-trial: the copy stays at {copy}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
