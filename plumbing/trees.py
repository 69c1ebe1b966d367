"""Write the prepared copies of Kubeflow trees that name remote kustomize bases (components/
sources.py PreparedTree): the folder from the stack's local checkout of the pinned tag, every
remote base it names from the stack's local remote-base mirror, and each remote entry of its
kustomizations rewritten to the relative path of that copy. Kustomize then builds the tree
with no network, as ../shared/upstream/README.md (next version set, section 2, "Offline build")
does by hand; kustomize refuses absolute paths there, hence relative ones.

The program may write no file while it is evaluated, so it only names the copy. `python -m
stacks prepare <stack>` writes it before `pulumi up` (`pulumi up` stops with that command when
the copy is missing or stale: `unprepared`, read by __main__.py), and the offline render writes
it itself. A copy is rewritten only when its sources changed (a digest of every file it is made
of), under a lock, so renders running side by side share it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

import yaml

from plumbing.sources import MIRROR_REMOTE, PreparedTree, RemoteReference, remote_reference

REPO = Path(__file__).resolve().parents[1]
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
"""The file names kustomize reads a kustomization from (sigs.k8s.io/kustomize/api konfig.RecognizedKustomizationFileNames)."""
ENTRY_LISTS = ("resources", "bases", "components")
"""The lists of a kustomization that name other kustomizations, remote ones included."""
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""yaml.safe_load's loader on libyaml's parser where PyYAML has it: the same documents (every
kustomization of the mirror reads alike), 10x faster; every render reads each tree's kustomizations."""
STAMP = ".prepared"
"""In a copy: the digest of the files it was made from."""


class PrepareError(Exception):
    """A tree cannot be prepared; the message names the file, the entry and the fix."""


def kustomizations(root: Path) -> list[Path]:
    return sorted(p for name in KUSTOMIZATION_FILES for p in root.rglob(name) if p.is_file())


def remote_entries(kustomization: Path) -> list[str]:
    """The entries of one kustomization that are URLs (`https://...`, `git@...`, `github.com/...`)."""
    document = yaml.load(kustomization.read_text(), Loader=SAFE_LOADER) or {}
    entries = [e for key in ENTRY_LISTS for e in document.get(key) or [] if isinstance(e, str)]
    return [e for e in entries if "://" in e or e.startswith(("git@", "github.com/"))]


def references(folder: Path) -> dict[Path, list[tuple[str, RemoteReference]]]:
    """Per kustomization under `folder`: each remote entry and the pinned base it names. Raises
    PrepareError for a URL no pin names, or at another ref than its pin."""
    found: dict[Path, list[tuple[str, RemoteReference]]] = {}
    problems: list[str] = []
    for kustomization in kustomizations(folder):
        for entry in remote_entries(kustomization):
            try:
                reference = remote_reference(entry)
            except ValueError as err:
                problems.append(f"{kustomization}: {err}")
                continue
            if reference is None:
                problems.append(
                    f"{kustomization}: {entry} is a remote base the pin table does not list; add it to "
                    "facts/versions.py REMOTE_BASES and mirror it under remote/"
                )
                continue
            found.setdefault(kustomization, []).append((entry, reference))
    if problems:
        raise PrepareError("\n".join(problems))
    return found


def _files(root: Path) -> Iterator[Path]:
    yield from sorted(p for p in root.rglob("*") if p.is_file())


def source_digest(tree: PreparedTree, project: Path = REPO) -> str:
    """A digest of every file the copy is made of: the folder and the remote bases it names."""
    folder = project / tree.manifests / tree.folder
    remote = project / tree.remote_bases
    digest = hashlib.sha256()
    sources = [folder, *sorted({remote / r.mirror_path for refs in references(folder).values() for _, r in refs})]
    for source in sources:
        for path in _files(source):
            digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def rewritten(text: str, replacements: Iterable[tuple[str, str]]) -> str:
    """The kustomization text with each remote entry (a whole list item) replaced by its local path."""
    lines = text.splitlines(keepends=True)
    for entry, local in replacements:
        hits = [i for i, line in enumerate(lines) if line.strip() in (f"- {entry}", f"- '{entry}'", f'- "{entry}"')]
        if not hits:
            raise PrepareError(f"{entry} is not a list item of its own line; rewrite it by hand")
        for i in hits:
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            lines[i] = f"{indent}- {local}\n"
    return "".join(lines)


def _copy(source: Path, target: Path) -> None:
    """`source` copied to `target`, writable by its owner (mirrors are often read-only: the copy
    is rewritten, and replaced later)."""
    shutil.copytree(source, target, copy_function=shutil.copyfile)
    for path in (target, *target.rglob("*")):
        path.chmod(path.stat().st_mode | 0o200)


def _build(tree: PreparedTree, project: Path, into: Path) -> None:
    folder = project / tree.manifests / tree.folder
    if not folder.is_dir():
        raise PrepareError(f"{folder}: no such directory; mlplatform:sources.kubeflowManifests must be a checkout of the pinned tag")
    _copy(folder, into / tree.folder)
    remote = project / tree.remote_bases
    for kustomization, found in references(folder).items():
        copy = into / tree.folder / kustomization.relative_to(folder)
        replacements = []
        for entry, reference in found:
            source = remote / reference.mirror_path
            if not source.is_dir():
                raise PrepareError(
                    f"{kustomization}: {entry} is not in the remote-base mirror ({source}: no such directory); "
                    f"copy {reference.base.pin.location} at {reference.ref}, path {reference.path}, there "
                    "(../shared/upstream/README.md, \"Refresh\", remote bases)"
                )
            target = into / MIRROR_REMOTE / reference.mirror_path
            if not target.exists():
                _copy(source, target)
            local = PurePosixPath(os.path.relpath(target, copy.parent))
            replacements.append((entry, str(local)))
        copy.write_text(rewritten(copy.read_text(), replacements))


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def is_current(tree: PreparedTree, project: Path = REPO) -> bool:
    stamp = project / tree.root / STAMP
    return stamp.is_file() and stamp.read_text() == source_digest(tree, project)


def prepare(tree: PreparedTree, project: Path = REPO) -> tuple[Path, bool]:
    """Write the copy (unless it is current); returns its directory and whether it was written."""
    target = project / tree.root
    with _locked(target.with_name(target.name + ".lock")):
        digest = source_digest(tree, project)
        stamp = target / STAMP
        if stamp.is_file() and stamp.read_text() == digest:
            return target, False
        scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            _build(tree, project, scratch)
            (scratch / STAMP).write_text(digest)
            if target.exists():
                shutil.rmtree(target)
            scratch.rename(target)
        finally:
            if scratch.exists():
                shutil.rmtree(scratch)
        return target, True


def prepare_all(trees: Iterable[PreparedTree], project: Path = REPO) -> list[tuple[Path, bool]]:
    return [prepare(tree, project) for tree in dict.fromkeys(trees)]


def unprepared(trees: Iterable[PreparedTree], project: Path = REPO) -> list[str]:
    """Why `pulumi up` cannot read each tree it names (missing or stale copy, or a source it
    cannot prepare from), as messages naming the fix; empty when every copy is current."""
    problems = []
    for tree in dict.fromkeys(trees):
        try:
            if is_current(tree, project):
                continue
            state = "is stale (its sources changed)" if (project / tree.root).is_dir() else "does not exist"
            problems.append(f"{tree.root}, the prepared copy of {tree.folder}, {state}; run: python -m stacks prepare <stack>")
        except PrepareError as err:
            problems.append(str(err))
    return problems
