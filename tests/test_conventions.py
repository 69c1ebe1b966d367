"""Repository conventions the design relies on, checked on the source itself."""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
CODE = [p for d in ("components", "infra", "plumbing", "runtimes", "stackmodel", "policy") for p in (REPO / d).rglob("*.py")]
CODE.append(REPO / "program.py")
VERSION = re.compile(r"(?<![\d.])v?\d+\.\d+\.\d+(?![\d.])")


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings or bare string statements (comments)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }


def test_no_version_literal_outside_the_pin_table() -> None:
    found = []
    for path in CODE:
        if path.name == "versions.py" and path.parent.name == "components":
            continue
        tree = ast.parse(path.read_text())
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in skip:
                continue
            if VERSION.search(node.value):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value!r}")
    assert found == [], "versions belong in facts/versions.py"


def test_gcp_resources_are_built_from_typed_args() -> None:
    """`gcp.<module>.<Resource>(name, <Args>)`: the second argument is a typed *Args object
    (or a function returning one, named *_args), never keyword bags or dicts."""
    found = []
    for path in CODE:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            chain = ast.unparse(node.func)
            name = node.func.attr
            if not chain.startswith("gcp.") or name.endswith("Args") or not name[:1].isupper():
                continue
            args = node.args[1] if len(node.args) > 1 else None
            callee = ast.unparse(args.func) if isinstance(args, ast.Call) else ""
            if not callee.endswith(("Args", "_args")):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {chain}")
    assert found == []


def test_every_component_of_the_list_has_its_installation() -> None:
    """A component the schema offers but nothing installs would be a silent no-op."""
    from plumbing.installation import installation
    from stackmodel.registry import COMPONENTS

    assert [installation(spec).spec for spec in COMPONENTS] == list(COMPONENTS)


def test_each_component_is_two_modules_of_one_name() -> None:
    """Its settings and spec in stackmodel/components/<name>.py, its Installation in
    components/<name>.py: who installs a component is the module of its settings' name."""
    from plumbing.installation import installation
    from stackmodel.registry import COMPONENTS

    for spec in COMPONENTS:
        settings = spec.model.__module__
        assert settings.startswith("stackmodel.components."), f"{spec.name}'s settings are in {settings}"
        assert any(value is spec for value in vars(importlib.import_module(settings)).values()), f"{spec.name}'s spec is not beside its settings"
        installer = settings.removeprefix("stackmodel.")
        assert spec.installed_by == f"{installer}:INSTALLATION"
        assert importlib.import_module(installer).INSTALLATION is installation(spec)


def test_every_pin_a_component_names_is_in_the_pin_table() -> None:
    """`make mirror`, the version table and `outdated` read PINS: a pin left out of it would be
    installed but never mirrored, listed or watched."""
    from facts.versions import PINS
    from stackmodel.registry import COMPONENTS

    assert [f"{spec.name}: {pin.label}" for spec in COMPONENTS for pin in spec.pins if pin not in PINS] == []


def test_a_spec_outside_stackmodel_components_names_its_installation() -> None:
    from stackmodel.components.spec import ComponentSpec
    from stackmodel.schema import Model

    class Elsewhere(Model):
        pass

    with pytest.raises(ValueError, match=r"^component elsewhere: its settings are in tests.test_conventions, not in stackmodel/components/: name the module that installs it \(installed_by\)$"):
        ComponentSpec("elsewhere", Elsewhere, "Somewhere else.")
    assert ComponentSpec("elsewhere", Elsewhere, "Somewhere else.", installed_by="tests.x:INSTALLATION").installed_by == "tests.x:INSTALLATION"


def _floor(specifiers: SpecifierSet) -> Version:
    """The lowest version a requirement admits (`==x` or `>=x`)."""
    (floor,) = [Version(s.version) for s in specifiers if s.operator in ("==", ">=")]
    return floor


def _requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = [r for group in project["optional-dependencies"].values() for r in group]
    return [Requirement(r) for r in project["dependencies"] + extras]


def _dependency(name: str) -> Requirement:
    return next(r for r in _requirements() if r.name == name)


def test_the_policy_pack_runs_on_the_sdks_the_lock_holds() -> None:
    """The pack's own virtualenv (policy/requirements.txt, made by the Pulumi CLI) takes pulumi
    and pulumi-policy exactly at the versions of the lock, the ones the contracts were run on
    (tests/test_sdk_contracts.py): policy/pack.py reads pulumi-policy's proxies."""
    def requirements(name: str) -> dict[str, Requirement]:
        lines = (REPO / name).read_text().splitlines()
        return {r.name: r for r in (Requirement(line.split("#")[0]) for line in lines if line.strip() and not line.startswith("#"))}

    pack, locked = requirements("policy/requirements.txt"), requirements("requirements-test.txt")
    for name in ("pulumi", "pulumi-policy"):
        assert str(pack[name].specifier) == str(locked[name].specifier) and str(pack[name].specifier).startswith("=="), name


def test_required_pulumi_version_admits_the_pinned_sdk_and_the_cli_ci_runs() -> None:
    """CI runs the CLI at the SDK's version (.ci/install-tools), so the SDK range must sit
    inside the CLI range Pulumi.yaml asks for."""
    required = yaml.safe_load((REPO / "Pulumi.yaml").read_text())["requiredPulumiVersion"]
    # blang/semver range syntax: comparators separated by spaces are AND-ed.
    cli = SpecifierSet(",".join(required.split()))
    assert Version(metadata.version("pulumi")) in cli
    assert _floor(cli) >= Version("3.219.0")  # the first CLI that reads requiredPulumiVersion
    assert _floor(_dependency("pulumi").specifier) in cli


def test_pulumi_kubernetes_floor_fails_on_objects_that_already_exist() -> None:
    """Before 4.29.0 the provider took over an object that already existed in the cluster."""
    assert _floor(_dependency("pulumi-kubernetes").specifier) >= Version("4.29")


def test_ci_tool_installer_reads_versions_that_exist() -> None:
    """.ci/install-tools asks the repo for the versions it installs; each question must run."""
    import subprocess
    import sys

    snippets = re.findall(r"\.venv/bin/python -c '([^']*)'", (REPO / ".ci" / "install-tools").read_text())
    assert len(snippets) == 2
    for code in snippets:
        result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=False)
        assert result.returncode == 0 and result.stdout.strip(), (code, result.stderr)
