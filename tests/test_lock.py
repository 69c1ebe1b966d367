"""The lock files are what every install uses (`make`, `.ci/run`, `pulumi install`): each
dependency of pyproject.toml is pinned in them at a version its range allows, the program's
lock agrees with the test lock, and no machine's own index or wheel folder leaks into them."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
PIN = re.compile(r"^([A-Za-z0-9._-]+)==(\S+)")


def pins(name: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in (REPO / name).read_text().splitlines():
        match = PIN.match(line)
        if match:
            found[canonicalize_name(match[1])] = match[2]
    return found


def unpinned(requirements: list[str], locked: dict[str, str]) -> list[str]:
    """Each requirement whose package is missing from the lock or locked outside its range."""
    wrong = []
    for text in requirements:
        requirement = Requirement(text)
        version = locked.get(canonicalize_name(requirement.name))
        if version is None or not requirement.specifier.contains(version, prereleases=True):
            wrong.append(f"{text} (locked: {version})")
    return wrong


def test_every_program_dependency_is_locked_within_its_range() -> None:
    assert unpinned(PYPROJECT["project"]["dependencies"], pins("requirements.txt")) == []


def test_every_test_dependency_is_locked_within_its_range() -> None:
    extra = PYPROJECT["project"]["optional-dependencies"]["test"]
    assert unpinned(PYPROJECT["project"]["dependencies"] + extra, pins("requirements-test.txt")) == []


def test_the_program_lock_agrees_with_the_test_lock() -> None:
    test = pins("requirements-test.txt")
    assert {n: v for n, v in pins("requirements.txt").items() if test.get(n) != v} == {}


def test_tests_take_the_cpu_build_of_torch() -> None:
    """PyPI's Linux torch is the CUDA build with GBs of nvidia-* wheels; the lock has none."""
    test = pins("requirements-test.txt")
    assert test["torch"].endswith("+cpu")
    assert [n for n in test if n.startswith("nvidia-")] == []


@pytest.mark.parametrize("name", ["requirements.txt", "requirements-test.txt"])
def test_a_lock_names_no_machines_own_index_or_wheel_folder(name: str) -> None:
    options = [line for line in (REPO / name).read_text().splitlines() if line.startswith("-")]
    assert options == []


def test_pulumi_install_uses_the_program_lock_in_the_makefiles_virtualenv() -> None:
    """`pulumi install` on a fresh clone: the pip toolchain reads requirements.txt into the
    virtualenv Pulumi.yaml names, the one `make` builds too."""
    import yaml

    options = yaml.safe_load((REPO / "Pulumi.yaml").read_text())["runtime"]["options"]
    assert options == {"toolchain": "pip", "virtualenv": ".venv"}
    assert (REPO / "requirements.txt").is_file()
    assert "VENV := .venv" in (REPO / "Makefile").read_text()


def test_the_tests_torch_is_the_torch_runtime_images() -> None:
    """The examples' --local runs use the torch the cluster's torch runtime image runs."""
    from facts.versions import TORCH_RUNTIME_IMAGE

    runtime_torch = TORCH_RUNTIME_IMAGE.version.split("-")[0]
    assert pins("requirements-test.txt")["torch"].split("+")[0] == runtime_torch
    assert f"torch=={runtime_torch}" in PYPROJECT["project"]["optional-dependencies"]["test"]
