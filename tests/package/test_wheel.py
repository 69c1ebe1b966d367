"""The package installs: the wheel built from the working tree, installed alone into a clean
virtualenv, imports every module it ships and runs `mlplatform`. The editable install of
the checkout cannot show this (it maps the source folders whatever pyproject.toml lists).

Nothing is downloaded: the wheel is built with this virtualenv's setuptools (no build
isolation) and installed without dependencies; the clean virtualenv reads those (pulumi,
pydantic, ...) from this one's site-packages through a .pth file, which adds the directory
without running its .pth files, so the checkout's editable finder stays out."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

from tests.support.checkout import REPO, copy_working_tree

PACKAGES = ("components", "facts", "infra", "mlplatform", "plumbing", "policy", "runtimes", "stackmodel", "tooling")
"""The top-level packages of the design's layout (and of pyproject.toml's packages.find)."""

IMPORT_ALL = """
import importlib, json, pkgutil, sys
names = ["program"]
for top in sys.argv[1:]:
    names.append(top)
    package = importlib.import_module(top)
    # __main__ modules are entry points: importing one runs it.
    names += [m.name for m in pkgutil.walk_packages(package.__path__, top + ".") if not m.name.endswith(".__main__")]
print(json.dumps({name: importlib.import_module(name).__file__ for name in names}))
"""


def _run(*args: str | Path, cwd: Path) -> str:
    result = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{' '.join(map(str, args))}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _source_modules() -> set[str]:
    """Every module of the shipped packages in the checkout, found by file, not by import."""
    found = {"program"}
    for top in PACKAGES:
        for path in (REPO / top).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            if parts[-1] == "__main__":
                continue
            found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def test_the_wheel_installs_alone_and_imports_every_module(tmp_path: Path) -> None:
    source = copy_working_tree(tmp_path / "source")  # the build writes build/ and *.egg-info beside the sources
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--no-build-isolation", "--quiet", "-w", dist, cwd=source)
    (wheel,) = dist.glob("mlplatform-*.whl")

    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=tmp_path).strip())
    (site / "_mlplatform_test_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    _run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "--quiet", wheel, cwd=tmp_path)

    # -I: no current directory or PYTHON* variables on the path; the run starts outside the checkout.
    imported = json.loads(_run(python, "-I", "-c", IMPORT_ALL, *PACKAGES, cwd=tmp_path))
    assert set(imported) == _source_modules(), "the wheel ships other modules than the checkout has"
    outside = sorted(name for name, file in imported.items() if not Path(file).is_relative_to(site))
    assert outside == [], f"imported from elsewhere than the installed wheel: {outside}"

    usage = _run(venv / "bin" / "mlplatform", "--help", cwd=tmp_path)
    assert usage.startswith("usage: python -m mlplatform") and " plan " in usage and " check " in usage
    # The version from the installed metadata (no pyproject.toml beside the installed tooling/).
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert _run(venv / "bin" / "mlplatform", "--version", cwd=tmp_path) == f"mlplatform {version}\n"
