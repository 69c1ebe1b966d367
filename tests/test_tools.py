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
