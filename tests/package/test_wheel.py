"""The package installs: the wheel built from the working tree, installed into a clean virtualenv
that holds exactly the distributions the wheel declares, imports every module it ships (the
policy pack too: `pulumi preview --policy-pack policy` is part of the product) and runs
`mlplatform`. The editable install of the checkout cannot show this (it maps the source folders
whatever pyproject.toml lists), nor a virtualenv that borrows this one's site-packages (a module
importing a package only the test extra brings would pass).

Nothing is downloaded: the wheel is built with this virtualenv's setuptools (no build isolation)
and installed without dependencies; its dependencies are the distributions its metadata requires
(Requires-Dist, then theirs, markers evaluated), linked file by file from this virtualenv, which
the lock files make (`make lock`). `pip check` then holds them to every requirement, versions
included, and a test-only package (pytest) must not import."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from collections.abc import Iterable
from email.parser import Parser
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

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


def _run(*args: str | Path, cwd: Path, ok: bool = True) -> str:
    result = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, check=False)
    assert (result.returncode == 0) == ok, f"{' '.join(map(str, args))} (exit {result.returncode}):\n{result.stdout}\n{result.stderr}"
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


def declared(requirements: Iterable[str], extras: Iterable[str] = ("",)) -> list[Requirement]:
    """The requirements that apply here (markers evaluated for this interpreter and `extras`)."""
    found = []
    for text in requirements:
        requirement = Requirement(text)
        if requirement.marker is None or any(requirement.marker.evaluate({"extra": e}) for e in extras):
            found.append(requirement)
    return found


def dependencies(requirements: Iterable[str]) -> dict[str, metadata.Distribution]:
    """Every distribution `requirements` need, transitively, as this virtualenv has it; each must
    satisfy its requirement's version range (the lock files make it so)."""
    found: dict[str, metadata.Distribution] = {}
    queue = declared(requirements)
    while queue:
        requirement = queue.pop()
        name = canonicalize_name(requirement.name)
        distribution = metadata.distribution(name)
        assert requirement.specifier.contains(distribution.version, prereleases=True), f"{requirement}: installed {distribution.version}"
        if name not in found:
            found[name] = distribution
            queue += declared(distribution.requires or [], ("", *requirement.extras))
        elif requirement.extras:
            queue += declared(distribution.requires or [], requirement.extras)
    return found


def recorded(distribution: metadata.Distribution) -> list[str]:
    """The files a distribution installed (its RECORD), relative to site-packages."""
    return [row[0] for row in csv.reader((distribution.read_text("RECORD") or "").splitlines()) if row]


def link(distributions: Iterable[metadata.Distribution], site: Path, into: Path) -> None:
    """The files of `distributions` (their RECORD) under `site` linked into `into`: a top-level
    entry only they own as a whole, one that other distributions share (a namespace package
    such as google/) file by file. Scripts outside site-packages and bytecode are left out."""
    chosen = list(distributions)
    owners: dict[str, set[str]] = {}
    for distribution in metadata.distributions(path=[str(site)]):
        for top in {file.split("/")[0] for file in recorded(distribution)}:
            owners.setdefault(top, set()).add(canonicalize_name(distribution.metadata["Name"]))
    names = {canonicalize_name(d.metadata["Name"]) for d in chosen}
    for distribution in chosen:
        for file in recorded(distribution):
            top = file.split("/")[0]
            if top in ("..", "__pycache__"):
                continue
            relative = top if owners[top] <= names else file
            target = into / relative
            if not target.is_symlink():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(site / relative)


def test_the_wheel_installs_with_what_it_declares_and_imports_every_module(tmp_path: Path) -> None:
    source = copy_working_tree(tmp_path / "source")  # the build writes build/ and *.egg-info beside the sources
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--no-build-isolation", "--quiet", "-w", dist, cwd=source)
    (wheel,) = dist.glob("mlplatform-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        info = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        requires = Parser().parsestr(archive.read(info).decode()).get_all("Requires-Dist") or []
    assert "pulumi-policy" in {canonicalize_name(r.name) for r in declared(requires)}, "the policy pack's SDK is declared"

    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=tmp_path).strip())
    needed = dependencies(requires)
    link(needed.values(), Path(sysconfig.get_path("purelib")), site)
    _run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "--quiet", wheel, cwd=tmp_path)
    _run(sys.executable, "-m", "pip", "--python", python, "check", cwd=tmp_path)
    installed = _run(sys.executable, "-m", "pip", "--python", python, "list", "--format", "json", cwd=tmp_path)
    assert {canonicalize_name(d["name"]) for d in json.loads(installed)} == {*needed, "mlplatform"}

    # -I: no current directory or PYTHON* variables on the path; the run starts outside the checkout.
    imported = json.loads(_run(python, "-I", "-c", IMPORT_ALL, *PACKAGES, cwd=tmp_path))
    assert set(imported) == _source_modules(), "the wheel ships other modules than the checkout has"
    assert "policy.pack" in imported
    outside = sorted(name for name, file in imported.items() if not Path(file).is_relative_to(site))
    assert outside == [], f"imported from elsewhere than the installed wheel: {outside}"
    _run(python, "-I", "-c", "import pytest", cwd=tmp_path, ok=False)  # only what the package declares

    usage = _run(venv / "bin" / "mlplatform", "--help", cwd=tmp_path)
    assert usage.startswith("usage: python -m mlplatform") and " plan " in usage and " check " in usage
    # The version from the installed metadata (no pyproject.toml beside the installed tooling/).
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert _run(venv / "bin" / "mlplatform", "--version", cwd=tmp_path) == f"mlplatform {version}\n"
