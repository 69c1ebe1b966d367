"""The render cache: what helm and kustomize printed for an install's inputs, and the documents
each output parses to, kept between runs in the clone (`.mlplatform/cache/`, git-ignored), so a
`check` after an edit of the stack file runs the tools only for the installs whose inputs changed.

Entries, each content-addressed or keyed by a digest of all it depends on, never rewritten with
other bytes:
- `installs/<key>`: the digest of the output of the install whose inputs digest to `key`
  (tooling/fullrender.py `output_key` says what goes in: the chart's or tree's bytes, the values,
  release, namespace, capabilities and Kubernetes version, the tool binary, our code that runs it);
- `outputs/<digest>.yaml`: that output, stored once whichever installs printed it;
- `parsed/<digest>-<parser>.marshal`: its documents as `tooling.schemas.parsed` builds them, for
  one version of the parser (`PARSER`: its code, PyYAML's, the interpreter's marshal format).
Transforms are not cached: they run on every render, on the documents read back.

Each file is written whole (a partial file of its own, renamed into place: tooling.tools.write_whole),
so a process reading while another writes sees a whole entry or none, and two processes writing
one entry write the same bytes (the tests' two workers share a cache so). A cache that cannot be
read or written is a miss, never an error. `--no-cache` (check, render --full, images) neither
reads nor writes it; `MLPLATFORM_CACHE=DIR` puts it elsewhere (the tests: a directory of their
run). Entries unused for KEEP_DAYS days are removed, at most once a day, after a render.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from tooling.tools import write_whole

REPO = Path(__file__).resolve().parents[1]
DEFAULT_ROOT = REPO / ".mlplatform" / "cache"
ENV = "MLPLATFORM_CACHE"
KEEP_DAYS = 30
DAY = 24 * 3600

_DISABLED = False
"""Set by `--no-cache` (`disabled()`): this process neither reads nor writes the cache."""


@contextmanager
def disabled() -> Iterator[None]:
    """`--no-cache`: what runs inside renders every install and keeps nothing on disk."""
    global _DISABLED
    before, _DISABLED = _DISABLED, True
    try:
        yield
    finally:
        _DISABLED = before


def current() -> RenderCache | None:
    """The cache this process uses: `$MLPLATFORM_CACHE`, else the clone's; None inside `disabled()`."""
    if _DISABLED:
        return None
    return RenderCache(Path(os.environ.get(ENV) or DEFAULT_ROOT))


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def code_version(*modules: ModuleType) -> str:
    """A digest of the source of `modules`: an edit of the code that makes an entry makes new keys."""
    found = hashlib.sha256()
    for module in modules:
        assert module.__file__ is not None, module
        found.update(Path(module.__file__).read_bytes())
    return found.hexdigest()


def binary_identity(path: str) -> str:
    """The tool binary that runs: its real path and its file's identity (size, times, inode). A
    replaced binary, even one copied with its old times, has another change time (ctime), which
    no program can set."""
    real = os.path.realpath(path)
    stat = os.stat(real)
    return f"{real}:{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}:{stat.st_ino}"


@dataclass
class Digests:
    """Digests of files and folders for one render (the plan's early renders and the full render
    after it), each computed once: a folder of the mirror (16 MB of Kubeflow's trees) takes ~50 ms."""

    _found: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def of(self, path: Path) -> str:
        """The digest of a file's bytes, or of a folder's files (names and bytes, every file under it).
        One at a time: the early renders of a plan's trees all ask for the same folder at once."""
        with self._lock:
            name = str(path)
            if name not in self._found:
                self._found[name] = _folder_digest(path) if path.is_dir() else digest(path.read_bytes())
            return self._found[name]


def _folder_digest(root: Path) -> str:
    found = hashlib.sha256()
    for directory, folders, files in os.walk(root, followlinks=True):
        folders.sort()
        for name in sorted(files):
            path = os.path.join(directory, name)
            found.update(os.path.relpath(path, root).encode() + b"\0")
            with open(path, "rb") as handle:
                found.update(digest(handle.read()).encode())
    return found.hexdigest()


def parser_version(parser: ModuleType) -> str:
    """What a parse depends on besides the text: the parser's code, PyYAML's version and whether it
    has libyaml, and the interpreter's marshal format (documents are kept as marshal data)."""
    libyaml = getattr(yaml, "__with_libyaml__", False)
    return digest(f"{code_version(parser)}:{yaml.__version__}:{libyaml}:{sys.version_info[:2]}:{marshal.version}".encode())[:16]


@dataclass(frozen=True)
class RenderCache:
    """A cache directory (the module's docstring says what it holds)."""

    root: Path

    def output(self, key: str) -> str | None:
        """The digest of the output recorded for `key`, if its text is there too."""
        entry = self.root / "installs" / key
        try:
            found = entry.read_text().strip()
        except OSError:
            return None
        try:  # marked used (prune keeps what runs use); gone: a miss
            os.utime(self.root / "outputs" / f"{found}.yaml")
        except OSError:
            return None
        _touch(entry)
        return found

    def text(self, output: str) -> str | None:
        try:
            return (self.root / "outputs" / f"{output}.yaml").read_text()
        except OSError:
            return None

    def record(self, key: str, text: str) -> str:
        """Keep `text` as the output for `key`; returns its digest."""
        found = digest(text.encode())
        outputs = self.root / "outputs" / f"{found}.yaml"
        if not outputs.is_file():
            _write(outputs, text.encode())
        _write(self.root / "installs" / key, found.encode())
        return found

    def documents(self, output: str, parser: str) -> tuple[dict[str, Any], ...] | None:
        entry = self.root / "parsed" / f"{output}-{parser}.marshal"
        try:
            docs: tuple[dict[str, Any], ...] = marshal.loads(entry.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            return None
        _touch(entry)
        return docs

    def keep_documents(self, output: str, parser: str, docs: tuple[dict[str, Any], ...]) -> None:
        try:
            # Format 2: no back-references, 2.5x faster to write than 4 (YAML's repeated scalars
            # are then stored each time, 12% more bytes); read as fast.
            data = marshal.dumps(docs, 2)
        except ValueError:  # a YAML timestamp (datetime) is not marshal data: parsed on every run
            return
        _write(self.root / "parsed" / f"{output}-{parser}.marshal", data)

    def prune(self, now: float | None = None) -> list[Path]:
        """Remove the entries not used for KEEP_DAYS days and partial files a killed process left;
        at most once a day (a stamp file). Returns what it removed."""
        now = time.time() if now is None else now
        stamp = self.root / ".pruned"
        try:
            if now - stamp.stat().st_mtime < DAY:
                return []
        except OSError:
            pass
        removed = []
        for path in _files(self.root, ("installs", "outputs", "parsed")):
            try:
                age = now - path.stat().st_mtime
                if age > KEEP_DAYS * DAY or (path.name.endswith(".partial") and age > DAY):
                    path.unlink()
                    removed.append(path)
            except OSError:
                continue
        _write(stamp, b"")
        return removed


def _files(root: Path, folders: Iterable[str]) -> list[Path]:
    found = []
    for folder in folders:
        try:
            found += [p for p in (root / folder).iterdir() if p.is_file()]
        except OSError:
            continue
    return found


def _touch(path: Path) -> None:
    """Mark an entry used (prune keeps what runs use)."""
    with contextlib.suppress(OSError):
        os.utime(path)


def _write(path: Path, data: bytes) -> None:
    # A read-only clone, a full disk: the render goes on without keeping it.
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_whole(path, data)
