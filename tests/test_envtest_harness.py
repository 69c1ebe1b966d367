"""The envtest harness's binaries (tests/support/envtest.py): found by controller-runtime's
`KUBEBUILDER_ASSETS`, else unpacked from the shared data's xz files into a cache, each checked
against the sums the shared data lists; what is missing said with the way to get it. The
control plane itself runs in `make envtest` (tests/envtest/)."""

from __future__ import annotations

import hashlib
import lzma
import os
from pathlib import Path

import pytest

from tests.support.envtest import ASSETS_ENV, BINARIES, EnvtestError, assets, missing, unpacked


def shared_data(folder: Path) -> dict[str, bytes]:
    """A folder laid out as ../shared/envtest: NAME.xz of small scripts, SHA256SUMS, SHA256SUMS.xz."""
    folder.mkdir()
    contents = {name: f"#!/bin/sh\necho {name}\n".encode() for name in BINARIES}
    for name, data in contents.items():
        (folder / f"{name}.xz").write_bytes(lzma.compress(data))
    (folder / "SHA256SUMS").write_text("".join(f"{hashlib.sha256(d).hexdigest()}  {n}\n" for n, d in contents.items()))
    xz_sums = "".join(f"{hashlib.sha256((folder / f'{n}.xz').read_bytes()).hexdigest()}  {n}.xz\n" for n in contents)
    (folder / "SHA256SUMS.xz").write_text(xz_sums)
    return contents


def test_the_binaries_are_unpacked_once_into_the_cache_and_checked(tmp_path: Path) -> None:
    contents = shared_data(tmp_path / "shared")
    into = unpacked(tmp_path / "shared", tmp_path / "cache")
    assert into.parent == tmp_path / "cache"
    for name, data in contents.items():
        assert (into / name).read_bytes() == data and os.access(into / name, os.X_OK)
    (into / "etcd").write_bytes(b"damaged")  # a binary that lost its sum is unpacked again
    assert (unpacked(tmp_path / "shared", tmp_path / "cache") / "etcd").read_bytes() == contents["etcd"]


def test_damaged_shared_data_is_refused_naming_the_file(tmp_path: Path) -> None:
    shared_data(tmp_path / "shared")
    (tmp_path / "shared" / "kube-apiserver.xz").write_bytes(lzma.compress(b"something else"))
    with pytest.raises(EnvtestError, match=r"kube-apiserver\.xz: sha256 differs from SHA256SUMS\.xz"):
        unpacked(tmp_path / "shared", tmp_path / "cache")


def test_kubebuilder_assets_is_used_as_it_is_and_must_hold_all_three(tmp_path: Path) -> None:
    for name in BINARIES[:2]:  # setup-envtest's etcd and kube-apiserver, no controller manager
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    problem = missing({ASSETS_ENV: str(tmp_path)})
    assert problem is not None and problem.startswith(f"{ASSETS_ENV}={tmp_path} has no executable kube-controller-manager")
    assert "setup-envtest use 1.36.x" in problem
    (tmp_path / "kube-controller-manager").write_text("#!/bin/sh\n")
    (tmp_path / "kube-controller-manager").chmod(0o755)
    assert missing({ASSETS_ENV: str(tmp_path)}) is None
    assert assets({ASSETS_ENV: str(tmp_path)}) == tmp_path
