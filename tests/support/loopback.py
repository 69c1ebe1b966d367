"""The upstreams of the pin table served on loopback from a mirror directory: what `make mirror`
fetches from where there is no network (tests/test_mirror.py, `make fork-trial` with
`--loopback`).

- One HTTP chart repository: the mirror's archive of every pinned chart, indexed by `helm repo
  index`, served by Python's http.server on 127.0.0.1 at a free port. Charts published to an OCI
  registry come from it too, through the documented redirect of `make mirror --sources`
  (tooling/mirror.py): there is no OCI registry here.
- One git repository per git upstream (the Kubeflow release; each remote kustomize base),
  committed from the mirror's copy and tagged with the pinned ref, cloned through `file://`. The
  Kubeflow repository also holds the aggregated-role files at their paths in the release.

`serving()` yields the `--sources` mapping (pinned location -> loopback location) for them all.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from facts.versions import KUBEFLOW_MANIFESTS
from plumbing.sources import MIRROR_CHARTS, MIRROR_MANIFESTS, MIRROR_RELEASE_MANIFESTS, MIRROR_REMOTE
from tooling import tools
from tooling.mirror import LICENSE, ROLES, Request, role_file_name

CHARTS = "charts"
"""The served chart repository, under the working directory."""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No line per request on stderr."""


def _git(git_dir: Path, work_tree: Path, *args: str) -> str:
    command = ["git", f"--git-dir={git_dir}", f"--work-tree={work_tree}", "-c", "user.name=loopback", "-c", "user.email=loopback@127.0.0.1"]
    return subprocess.run([*command, *args], capture_output=True, text=True, check=True).stdout.strip()


def git_remote(tree: Path, ref: str, git_dir: Path, paths: Iterable[str] = (".",), extra: Mapping[str, Path] | None = None) -> str:
    """A repository whose commit tagged `ref` holds `paths` of `tree` (ignored files too) and each
    `extra` file at its path; its `file://` URL. Packed uncompressed: a clone of it is a copy."""
    subprocess.run(["git", "init", "--quiet", "--bare", str(git_dir)], check=True)
    _git(git_dir, tree, "config", "pack.compression", "0")
    _git(git_dir, tree, "add", "--all", "--force", "--", *[p for p in paths if (tree / p).exists()])
    for path, source in (extra or {}).items():
        blob = _git(git_dir, tree, "hash-object", "-w", str(source))
        _git(git_dir, tree, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    _git(git_dir, tree, "commit", "--quiet", "--no-verify", "-m", f"{ref}, from the mirror")
    _git(git_dir, tree, "tag", ref)
    return git_dir.as_uri()


def chart_repository(mirror: Path, request: Request, directory: Path) -> Path:
    """The mirror's archive of each requested chart, with the index `helm repo index` writes; a
    chart the mirror lacks is not in the index, as in a company's repository that does not carry
    it (a fork's mirror holds no dra-driver-nvidia-gpu: `make mirror` leaves it out where no
    stack needs it, tooling/mirror.py)."""
    directory.mkdir(parents=True)
    for pin in request.charts:
        name = f"{pin.name}-{pin.version}.tgz"
        if (mirror / MIRROR_CHARTS / name).is_file():
            (directory / name).write_bytes((mirror / MIRROR_CHARTS / name).read_bytes())
    subprocess.run([tools.find(tools.HELM), "repo", "index", str(directory)], capture_output=True, check=True)
    return directory


@contextmanager
def serving(mirror: Path, request: Request | None = None, work: Path | None = None) -> Iterator[dict[str, str]]:
    """Loopback servers of `request`'s upstreams made from `mirror`, while the block runs;
    yields the `make mirror --sources` mapping to them. Default: every upstream of the pin table."""
    request = request or Request()
    with tempfile.TemporaryDirectory(prefix="mlplatform-loopback-", dir=work) as scratch:
        root = Path(scratch)
        charts = chart_repository(mirror, request, root / CHARTS)
        server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(charts)))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            repository = f"http://127.0.0.1:{server.server_address[1]}"
            sources = {pin.location: repository for pin in request.charts}
            if request.kubeflow_folders or request.role_files:
                tag = KUBEFLOW_MANIFESTS.version
                roles = {path: mirror / ROLES / role_file_name(path) for path in request.role_files}
                folders = (LICENSE, *request.kubeflow_folders)
                sources[KUBEFLOW_MANIFESTS.location] = git_remote(mirror / MIRROR_MANIFESTS / tag, tag, root / "kubeflow.git", folders, roles)
            for base in request.remote_bases:
                tree = mirror / MIRROR_REMOTE / base.repository / base.pin.version
                sources[base.pin.location] = git_remote(tree, base.pin.version, root / f"{base.repository.replace('/', '_')}.git")
            for manifest in request.release_manifests:
                # Read in place through file:// (`<commit>/<path>` under the repository's folder);
                # a mirror without them (../shared/upstream) serves none: each file is named, and
                # left out where optional (tooling/mirror.py).
                sources[manifest.pin.location] = (mirror / MIRROR_RELEASE_MANIFESTS / manifest.repository).absolute().as_uri()
            yield sources
        finally:
            server.shutdown()
            server.server_close()
            thread.join()
