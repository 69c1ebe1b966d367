"""The bundle's own version: one home (pyproject.toml), shown by `python -m stacks --version`,
and the newest section of CHANGELOG.md is that version."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tooling.cli import main

REPO = Path(__file__).resolve().parents[1]
RELEASE = re.compile(r"^## \[(?P<version>[^\]]+)\] - (?P<date>\d{4}-\d{2}-\d{2}|Unreleased)$", re.MULTILINE)


def version() -> str:
    found: str = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    return found


def test_version_prints_pyprojects_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"mlplatform {version()}"


def test_the_newest_changelog_section_is_the_bundle_version() -> None:
    releases = list(RELEASE.finditer((REPO / "CHANGELOG.md").read_text()))
    assert releases, "CHANGELOG.md has no `## [x.y.z] - YYYY-MM-DD` (or `- Unreleased`) section"
    assert releases[0]["version"] == version()
    assert all(r["date"] != "Unreleased" for r in releases[1:]), "only the newest section may be unreleased"


def test_the_coming_release_lists_its_breaking_changes_first() -> None:
    text = (REPO / "CHANGELOG.md").read_text()
    newest = text[RELEASE.search(text).end():]  # type: ignore[union-attr]
    newest = newest[: newest.find("\n## [")]
    headings = re.findall(r"^### (\w+)", newest, re.MULTILINE)
    assert headings and headings[0] == "Breaking"
