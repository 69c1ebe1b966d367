"""The upstream mirror, built from the pin table alone (`make mirror`, `python -m tooling.mirror`),
and where the tools and tests find one.

What a mirror holds, laid out as ../shared/upstream is (plumbing/sources.py), each piece
fetched with the tool its upstream publishes for and checked:
- `charts/<chart>-<version>.tgz`: every Helm chart of the pin table at its pinned version, by
  `helm pull` (helm v4, tooling/tools.py) from its HTTP chart repository (the archive's sha256
  must be the repository index's `digest`; helm does not compare them) or its OCI registry
  (helm checks the blob against the registry's digest); its Chart.yaml must name the pin
  (tooling/mirror_charts.py);
- `kubeflow-manifests/<tag>/`: the folders of the pinned Kubeflow release the installs read
  (facts/versions.py KUBEFLOW_FOLDERS) and its LICENSE, and `kubeflow-roles/` the aggregated
  roles the tests evaluate (KUBEFLOW_ROLE_FILES), from a shallow git clone of the tag;
- `remote/<host>/<owner>/<repo>/<ref>/`: every remote kustomize base those trees name
  (REMOTE_BASES; the paths as the trees' kustomizations name them), from a clone at its ref;
- `manifests/<owner>/<repo>/<commit>/<path>`: every release manifest (RELEASE_MANIFESTS), by
  HTTPS from raw.githubusercontent.com at its pinned commit, its sha256 the pin table's
  (tooling/mirror_manifests.py).
Git checks every object it fetches by its id; the files are `git archive`d at the pinned ref.
`mirror.json` records what was asked (the pins) and where each piece came from (commits, tree
ids, digests); `SHA256SUMS` every file (`sha256sum -c SHA256SUMS` in the mirror checks it). A
mirror is built beside its target and moved into place whole; `make mirror` leaves one alone
that is of today's pins and matches its sums.

Required and optional: a pin that belongs only to components (ComponentSpec.pins) no stack of
stacks/ enables is optional (optional_pins, the one place that decides): its charts and release
manifests are tried, and one its source does not serve (a 404, a refused connection, a chart
not in the repository's index) is left out, named with why, and recorded under `notFetched` in
mirror.json; a stack that enables its component stops at render naming the file and `make
mirror`, which then needs it. Everything else is required, a failure stops the build: the
Kubeflow release's folders and role files and its remote bases (clones the tests read whole),
charts of no component, and every pin of a component some stack enables. A piece fetched but
not what its pin says (a digest, a sha256, a Chart.yaml) stops the build either way. A stack of
stacks/ that does not load stops it too: which pins it needs is then unknown.

Where a mirror is found (mirror_for), first to last: `--mirror DIR` of a command; the clone's
own, LOCAL_MIRROR (`.mlplatform/upstream/`, git-ignored, what `make mirror` writes);
`$MLPLATFORM_MIRROR`; `../shared/upstream` beside the clone.

Where each upstream is fetched from may be redirected (`--sources FILE`, `make mirror
MIRROR_SOURCES=FILE`): a YAML mapping of a pin's location, as facts/versions.py writes it, to
the place to fetch it from instead. For a chart, a chart repository as
`mlplatform:sources.charts` takes one: an http(s) repository, or an `oci://` registry path the
chart lies under (`<path>/<chart>`); for a git upstream, any URL `git clone` takes. A company's
mirror (Artifactory, an internal Git host), or loopback servers in a test (tests/support/
loopback.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from facts.versions import (
    KUBEFLOW_FOLDERS,
    KUBEFLOW_MANIFESTS,
    KUBEFLOW_ROLE_FILES,
    PINS,
    RELEASE_MANIFESTS,
    REMOTE_BASES,
    Pin,
    PinKind,
    ReleaseManifest,
    RemoteBase,
)
from plumbing.sources import (
    MIRROR_CHARTS,
    MIRROR_MANIFESTS,
    MIRROR_RELEASE_MANIFESTS,
    MIRROR_REMOTE,
    is_local,
)
from plumbing.trees import PrepareError, references
from stackmodel.components.spec import ComponentSpec
from stackmodel.config import STACKS_DIR, ConfigError, load_stack
from stackmodel.registry import COMPONENTS
from tooling import tools
from tooling.mirror_charts import fetch_charts
from tooling.mirror_fetch import MirrorError, Unavailable, run_tool, sha256, tried
from tooling.mirror_manifests import fetch_release_manifest

REPO = Path(__file__).resolve().parents[1]
LOCAL_MIRROR = REPO / ".mlplatform" / "upstream"
"""The clone's own mirror: what `make mirror` builds, the first place the tools look."""
MIRROR_ENV = "MLPLATFORM_MIRROR"
SHARED_MIRROR = REPO.parent / "shared" / "upstream"
MANIFEST = "mirror.json"
SUMS = "SHA256SUMS"
ROLES = "kubeflow-roles"
"""The folder of KUBEFLOW_ROLE_FILES, each named by its path with `/` as `_`."""
LICENSE = "LICENSE"
"""Copied with every git upstream's paths, where the repository has one at its root."""
FORMAT = 1
"""Of mirror.json; a mirror of another format is rebuilt."""


def mirror_for(option: Path | None) -> Path | None:
    """The mirror directory the full render reads (the order in the module's docstring); None:
    the stack's own sources."""
    if option is not None:
        return option
    if (LOCAL_MIRROR / MANIFEST).is_file():
        return LOCAL_MIRROR
    if os.environ.get(MIRROR_ENV):
        return Path(os.environ[MIRROR_ENV])
    return SHARED_MIRROR if SHARED_MIRROR.is_dir() else None


def role_file_name(path: str) -> str:
    """`common/kubeflow-roles/base/cluster-roles.yaml` -> `common_kubeflow-roles_base_cluster-roles.yaml`."""
    return path.replace("/", "_")


@dataclass(frozen=True)
class Request:
    """What a mirror holds: by default, every upstream the pin table installs from."""

    charts: tuple[Pin, ...] = tuple(p for p in PINS if p.kind is PinKind.HELM)
    kubeflow_folders: tuple[str, ...] = KUBEFLOW_FOLDERS
    role_files: tuple[str, ...] = KUBEFLOW_ROLE_FILES
    remote_bases: tuple[RemoteBase, ...] = REMOTE_BASES
    release_manifests: tuple[ReleaseManifest, ...] = RELEASE_MANIFESTS
    optional: Mapping[Pin, tuple[str, ...]] = field(default_factory=dict)
    """Pins whose charts and release manifests may be left out where their source does not serve
    them, each with the components it belongs to (optional_pins); not part of the pins recorded."""

    def as_json(self) -> dict[str, Any]:
        """The pins as mirror.json records them: a mirror of other pins is out of date."""
        return {
            "charts": [{"name": p.name, "version": p.version, "location": p.location} for p in self.charts],
            "kubeflow": {
                "location": KUBEFLOW_MANIFESTS.location,
                "ref": KUBEFLOW_MANIFESTS.version,
                "folders": list(self.kubeflow_folders),
                "roles": list(self.role_files),
            },
            "remoteBases": [
                {"location": b.pin.location, "ref": b.pin.version, "namedBy": b.named_by} for b in self.remote_bases
            ],
            "releaseManifests": [
                {"location": m.pin.location, "ref": m.pin.version, "path": m.path, "sha256": m.sha256} for m in self.release_manifests
            ],
        }

    def by_pin(self) -> tuple[Pin, ...]:
        """The pins whose pieces are fetched one by one, each of which may be optional: the charts'
        and the release manifests'. (The Kubeflow release and its remote bases are clones the
        tests read whole: required.)"""
        return tuple(dict.fromkeys([*self.charts, *(m.pin for m in self.release_manifests)]))

    def locations(self) -> set[str]:
        return (
            {p.location for p in self.charts}
            | {KUBEFLOW_MANIFESTS.location}
            | {b.pin.location for b in self.remote_bases}
            | {m.pin.location for m in self.release_manifests}
        )


# --- required and optional ---------------------------------------------------------------


def optional_pins(pins: Iterable[Pin], specs: Iterable[ComponentSpec[Any]], enabled: Collection[str]) -> dict[Pin, tuple[str, ...]]:
    """Of `pins` (Request.by_pin), those a mirror may go without, each with the components that
    name it (ComponentSpec.pins): the pins named only by components not in `enabled` (those some
    stack installs). A pin no component names is required."""
    owners: dict[Pin, list[str]] = {pin: [] for pin in pins}
    for spec in specs:
        for pin in spec.pins:
            if pin in owners:
                owners[pin].append(spec.name)
    return {pin: tuple(names) for pin, names in owners.items() if names and not set(names) & set(enabled)}


def enabled_components(stacks: Path) -> set[str]:
    """The components some stack file of `stacks` installs. A stack that does not load is an
    error naming it: which upstreams it needs is then unknown."""
    if not stacks.is_dir():
        raise MirrorError(f"--stacks {stacks}: no such directory")
    enabled: set[str] = set()
    broken: list[str] = []
    for path in sorted(stacks.glob("Pulumi.*.yaml")):
        try:
            config = load_stack(str(path)).config
        except ConfigError as err:
            broken.append(str(err))
            continue
        enabled |= {name for name, on in config.enabled_components().items() if on}
    if broken:
        raise MirrorError(
            "which upstreams the stacks need is unknown while a stack does not load (fix it; `python -m stacks check "
            "<stack>` says the same):\n" + "\n".join(broken)
        )
    return enabled


# --- git upstreams ---------------------------------------------------------------------


def _redirected(location: str, sources: Mapping[str, str]) -> str:
    return sources.get(location, location)


@dataclass(frozen=True)
class _Clone:
    """A shallow clone of one git upstream at its pinned ref."""

    directory: Path
    url: str
    ref: str

    def git(self, what: str, *args: str) -> bytes:
        return run_tool(["git", "-C", str(self.directory), *args], what)

    def has(self, path: str) -> bool:
        found = subprocess.run(["git", "-C", str(self.directory), "cat-file", "-e", f"HEAD:{path}"], capture_output=True, check=False)
        return found.returncode == 0

    def object_id(self, path: str = "") -> str:
        return self.git(f"{self.url} at {self.ref}", "rev-parse", f"HEAD:{path}" if path else "HEAD").decode().strip()

    def extract(self, paths: Iterable[str], into: Path) -> dict[str, Any]:
        """`paths` (folders or files) as `git archive` writes them, into `into`; returns what
        mirror.json records: the commit, and each path's git object id."""
        wanted = [LICENSE] if self.has(LICENSE) else []
        wanted += [p for p in paths if p not in wanted]
        missing = [p for p in wanted if not self.has(p)]
        if missing:
            raise MirrorError(f"{self.url} at {self.ref} has no {', '.join(missing)}: the pin table names a path the release does not have")
        tar = self.git(f"{self.url} at {self.ref}", "archive", "--format=tar", "HEAD", "--", *wanted)
        into.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
            if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later: no links or paths out of `into`
                archive.extractall(into, filter="data")
            else:
                archive.extractall(into)
        return {"from": self.url, "ref": self.ref, "commit": self.object_id(), "objects": {p: self.object_id(p) for p in wanted}}


def _clone(url: str, ref: str, sources: Mapping[str, str], scratch: Path) -> _Clone:
    origin = _redirected(url, sources)
    directory = Path(tempfile.mkdtemp(prefix="clone-", dir=scratch))
    run_tool(["git", "clone", "--quiet", "--depth", "1", "--branch", ref, "--no-checkout", origin, str(directory)], f"{url} at {ref}")
    return _Clone(directory, origin, ref)


def remote_base_paths(base: RemoteBase, folder: Path) -> list[str]:
    """The paths of `base` the kustomizations under `folder` (a mirrored Kubeflow folder) name."""
    try:
        found = references(folder)
    except PrepareError as err:
        raise MirrorError(str(err)) from None
    return sorted({r.path for refs in found.values() for _, r in refs if r.base == base})


# --- building and checking ---------------------------------------------------------------


NOT_FETCHED = "notFetched"
"""The key of mirror.json listing the optional pieces the build could not fetch."""


def build(root: Path, request: Request = Request(), sources: Mapping[str, str] | None = None, progress: Callable[[str], None] = print) -> None:
    """The mirror of `request` into the empty directory `root`, with mirror.json and SHA256SUMS.
    `sources`: pinned location -> where to fetch it from instead (the module's docstring)."""
    sources = dict(sources or {})
    unknown = sorted(set(sources) - request.locations())
    if unknown:
        raise MirrorError(f"sources: {', '.join(unknown)} is the location of no pin; the pins' locations: {', '.join(sorted(request.locations()))}")
    for base in request.remote_bases:
        if base.named_by not in request.kubeflow_folders:
            raise MirrorError(f"{base.pin.label} is named by {base.named_by}, a folder the mirror does not hold (facts/versions.py KUBEFLOW_FOLDERS)")
    fetched: list[dict[str, Any]] = []
    not_fetched: list[dict[str, Any]] = []

    def done(records: list[dict[str, Any]]) -> None:
        fetched.extend(records)
        for record in records:
            progress(f"  {record['path']} from {record['from']} ({record.get('digest') or record.get('commit')})")

    def settle(pin: Pin, path: str, outcome: dict[str, Any] | Unavailable) -> None:
        """A piece fetched, or not: left out if its pin is optional, else the build stops."""
        if not isinstance(outcome, Unavailable):
            return done([outcome])
        components = request.optional.get(pin)
        if components is None:
            raise outcome
        not_fetched.append({"path": path, "pin": pin.label, "location": pin.location, "components": list(components), "why": str(outcome)})
        progress(
            f"  {path}: not fetched: {outcome}. Optional: no stack enables {' or '.join(components)}; a stack that "
            "does stops at render naming this file and `make mirror`"
        )

    with tempfile.TemporaryDirectory(prefix="mlplatform-mirror-") as work:
        scratch = Path(work)
        for pin, outcome in fetch_charts(request.charts, sources, root / MIRROR_CHARTS, scratch):
            settle(pin, f"{MIRROR_CHARTS}/{pin.name}-{pin.version}.tgz", outcome)
        if request.kubeflow_folders or request.role_files:
            done(_kubeflow(request, sources, root, scratch))
        for base in request.remote_bases:
            paths = remote_base_paths(base, root / MIRROR_MANIFESTS / KUBEFLOW_MANIFESTS.version / base.named_by)
            clone = _clone(base.pin.location, base.pin.version, sources, scratch)
            target = root / MIRROR_REMOTE / base.repository / base.pin.version
            done([{"path": str(target.relative_to(root)), **clone.extract(paths, target)}])
        for manifest in request.release_manifests:
            fetch = partial(fetch_release_manifest, manifest, sources, root / MIRROR_RELEASE_MANIFESTS)
            settle(manifest.pin, f"{MIRROR_RELEASE_MANIFESTS}/{manifest.mirror_path}", tried(fetch))
    recorded = {"format": FORMAT, "request": request.as_json(), "fetched": fetched, NOT_FETCHED: not_fetched}
    (root / MANIFEST).write_text(json.dumps(recorded, indent=2) + "\n")
    write_sums(root)


def _kubeflow(request: Request, sources: Mapping[str, str], root: Path, scratch: Path) -> list[dict[str, Any]]:
    """The Kubeflow release's folders and role files; what mirror.json records of them."""
    tag = KUBEFLOW_MANIFESTS.version
    kubeflow = _clone(KUBEFLOW_MANIFESTS.location, tag, sources, scratch)
    manifests = root / MIRROR_MANIFESTS / tag
    fetched = [{"path": str(manifests.relative_to(root)), **kubeflow.extract(request.kubeflow_folders, manifests)}]
    missing = [path for path in request.role_files if not kubeflow.has(path)]
    if missing:
        raise MirrorError(f"{kubeflow.url} at {tag} has no {', '.join(missing)} (facts/versions.py KUBEFLOW_ROLE_FILES)")
    roles = root / ROLES
    roles.mkdir()
    for path in request.role_files:
        (roles / role_file_name(path)).write_bytes(kubeflow.git(path, "cat-file", "blob", f"HEAD:{path}"))
    objects = {p: kubeflow.object_id(p) for p in request.role_files}
    fetched.append({"path": ROLES, "from": kubeflow.url, "ref": tag, "commit": kubeflow.object_id(), "objects": objects})
    return fetched


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.relative_to(root) != Path(SUMS))


def write_sums(root: Path) -> None:
    """SHA256SUMS of every file of the mirror, in `sha256sum` format."""
    (root / SUMS).write_text("".join(f"{sha256(root / name)}  {name}\n" for name in _files(root)))


def verify(root: Path) -> list[str]:
    """Every way the mirror's files differ from its SHA256SUMS (a file changed, missing, or not listed)."""
    sums = root / SUMS
    if not sums.is_file():
        return [f"{sums}: no such file"]
    listed = {name: digest for digest, _, name in (line.partition("  ") for line in sums.read_text().splitlines() if line)}
    problems = [f"{name}: missing" for name in sorted(set(listed) - set(_files(root)))]
    problems += [f"{name}: not in {SUMS}" for name in sorted(set(_files(root)) - set(listed))]
    problems += [f"{name}: sha256 differs from {SUMS}" for name in sorted(set(listed) & set(_files(root))) if sha256(root / name) != listed[name]]
    return problems


def outdated(root: Path, request: Request = Request()) -> str | None:
    """Why the mirror at `root` is not of `request`'s pins; None when it is (or is not one of ours:
    a mirror without mirror.json, such as ../shared/upstream, is taken as it is)."""
    manifest = root / MANIFEST
    if not manifest.is_file():
        return None
    recorded = json.loads(manifest.read_text())
    if recorded.get("format") != FORMAT or recorded.get("request") != request.as_json():
        return f"the mirror at {root} was built from other pins than facts/versions.py has now"
    return None


def not_fetched(root: Path) -> list[dict[str, Any]]:
    """The optional pieces the mirror at `root` was built without (mirror.json `notFetched`)."""
    manifest = root / MANIFEST
    return list(json.loads(manifest.read_text()).get(NOT_FETCHED, [])) if manifest.is_file() else []


def state(root: Path, request: Request = Request()) -> str | None:
    """Why `make mirror` must build `root`; None when it holds `request` and matches its sums,
    but for pieces left out that are still optional (not_fetched)."""
    if not (root / MANIFEST).is_file():
        return f"no mirror at {root}"
    problems = verify(root)
    if problems:
        return f"{root} does not match its {SUMS}: " + "; ".join(problems[:5]) + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else "")
    why = outdated(root, request)
    if why is not None:
        return why
    optional = {pin.label for pin in request.optional}
    needed = [f"{piece['path']} ({' or '.join(piece['components'])})" for piece in not_fetched(root) if piece["pin"] not in optional]
    if needed:
        return f"the mirror at {root} was built without {', '.join(needed)}, which a stack now needs"
    return None


def _without(root: Path, stacks: Path) -> str:
    """The end of a summary line that names the optional pieces the mirror lacks."""
    missing = not_fetched(root)
    if not missing:
        return ""
    listed = "; ".join(f"{piece['path']} ({' or '.join(piece['components'])})" for piece in missing)
    return f"; but not these optional pieces its sources did not serve, their components enabled by no stack of {_shown(stacks)}: {listed}"


def _shown(path: Path) -> str:
    path = path.resolve()
    return f"{path.relative_to(REPO)}/" if path.is_relative_to(REPO) else str(path)


def replace(root: Path, built: Path) -> None:
    """`built` moved to `root`, the mirror there before (if any) removed after."""
    old = root.with_name(f".{root.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if root.exists():
        root.rename(old)
    built.rename(root)
    shutil.rmtree(old, ignore_errors=True)


def load_sources(path: Path) -> dict[str, str]:
    """The `--sources` file: a YAML mapping of pinned location -> where to fetch it from."""
    try:
        loaded = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise MirrorError(f"--sources {path}: {err}") from None
    if not isinstance(loaded, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in loaded.items()):
        raise MirrorError(f"--sources {path}: give a mapping of pinned location to location, e.g. `oci://registry.k8s.io/kueue/charts/kueue: https://charts.acme.internal`")
    bad = [k for k, v in loaded.items() if is_local(v)]
    if bad:
        raise MirrorError(f"--sources {path}: {', '.join(bad)}: a source is a URL (https://, oci://, file://, ...), not a path")
    return loaded


def main(argv: list[str] | None = None, request: Request = Request()) -> int:
    """`make mirror`: build the mirror unless it holds `request` (the whole pin table; optional
    what the stacks of `--stacks` do not need) and matches its sums."""
    parser = argparse.ArgumentParser(prog="python -m tooling.mirror", description=__doc__.split("\n\n")[0])
    parser.add_argument("--into", type=Path, default=LOCAL_MIRROR, help=f"the mirror directory (default {LOCAL_MIRROR.relative_to(REPO)})")
    parser.add_argument("--sources", type=Path, help="a YAML mapping of pinned location to where to fetch it from instead")
    parser.add_argument("--force", action="store_true", help="build even when the mirror is up to date")
    parser.add_argument("--verify", action="store_true", help="only check the mirror against its SHA256SUMS and the pins")
    parser.add_argument("--stacks", type=Path, default=STACKS_DIR, help="the stack files whose components' pins are required (default stacks/)")
    args = parser.parse_args(argv)
    root: Path = args.into.resolve()
    try:
        request = dataclasses.replace(request, optional=optional_pins(request.by_pin(), COMPONENTS, enabled_components(args.stacks)))
    except MirrorError as err:
        print(f"mirror: error: {err}", file=sys.stderr)
        return 1
    why = state(root, request)
    if args.verify or (why is None and not args.force):
        if why is None:
            print(f"mirror: {root} holds the pinned upstreams and matches its {SUMS} ({len(_files(root))} files){_without(root, args.stacks)}")
            return 0
        print(f"mirror: {why}; `make mirror` builds it", file=sys.stderr)
        return 1
    print(f"mirror: building {root} from the pin table ({why or '--force'})", flush=True)
    if request.optional:
        listed = ", ".join(f"{pin.label} ({' or '.join(components)})" for pin, components in request.optional.items())
        print(f"mirror: optional, of components no stack of {_shown(args.stacks)} enables (tried; left out where not served): {listed}", flush=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    built = Path(tempfile.mkdtemp(prefix=f".{root.name}-", dir=root.parent))
    try:
        sources = load_sources(args.sources) if args.sources else None
        build(built, request, sources, progress=lambda line: print(line, flush=True))
        problems = verify(built)
        if problems:
            raise MirrorError(f"the mirror just built does not match its {SUMS}: {'; '.join(problems)}")
        replace(root, built)
    except (MirrorError, tools.ToolError) as err:
        print(f"mirror: error: {err}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(built, ignore_errors=True)
    print(f"mirror: {root}: {len(_files(root))} files, each in {SUMS}{_without(root, args.stacks)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
