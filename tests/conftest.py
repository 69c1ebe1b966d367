"""Shared fixtures: stack configs to start from, and plans of them under Pulumi's mocks."""

from __future__ import annotations

import copy
import gc
import os
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# The program and the tooling are imported where used: pytest-xdist's controller, which runs
# no test, loads this file too, and the workers start only once it has (1.5 s sooner).
if TYPE_CHECKING:
    from stackmodel.stack import PlatformConfig
    from tooling.plan import Plan


# tests/examples/ runs in the examples' own virtualenv (`make examples`: Ray, JAX, MLX, ...; this
# one cannot hold Ray, pulumi pins protobuf 5), with no conftest: here it would only skip.
collect_ignore = ["examples"]

UPDATE_SNAPSHOTS_SET = (
    "UPDATE_SNAPSHOTS is set, but no test writes its own expectation: rewrite the golden snapshots with "
    "`make snapshots` (tests/support/snapshots.py) and review the diff, then run the tests without it"
)


def refusals(environ: Mapping[str, str]) -> list[str]:
    """Why a run in this environment could pass without testing: a set UPDATE_SNAPSHOTS, and
    under CI=true a missing upstream mirror or missing envtest binaries (their tests would skip)."""
    found = [UPDATE_SNAPSHOTS_SET] if environ.get("UPDATE_SNAPSHOTS") else []
    if environ.get("CI", "").lower() in ("true", "1"):
        from tests.support import envtest, mirror  # the tools' lookup (0.7 s of imports): only where it matters

        if not mirror.FOUND:
            found.append(f"CI=true and {mirror.MISSING}; in CI every test that renders must run, not skip")
        missing = envtest.missing(environ)
        if missing:
            found.append(f"CI=true and {missing}; in CI the envtest suite (`make envtest`) must run, not skip")
    return found


ENVTEST_SUITE = Path(__file__).resolve().parent / "envtest"
"""The tests against a real API server: `make envtest` (`pytest tests/envtest`), which `make test` runs too."""
PACKAGE_SUITE = Path(__file__).resolve().parent / "package"
"""The package built and installed as a user would: `make wheel-test` (`pytest tests/package`),
which `make test` runs too."""


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A run over the whole of tests/ (the unit suite, `pytest -n 2`) leaves tests/envtest/ and
    tests/package/ to their own targets, which keeps the unit suite's time; named on the command
    line, they run."""
    return True if collection_path in (ENVTEST_SUITE, PACKAGE_SUITE) else None


def pytest_configure(config: pytest.Config) -> None:
    """Refuse a run that could pass without testing (refusals), before any test. Then: a test
    process keeps hundreds of plans and the full renders alive; with Python's default
    thresholds every full collection rescans them all (25 s of a 60 s run per worker). From
    collection on, each process collects garbage as a plan does, and a stack name means a
    fixture of tests/stacks/ (tests/support/fixtures.py); not xdist's controller, which runs
    no test."""
    problems = refusals(os.environ)
    if problems:
        raise pytest.UsageError("\n".join(problems))
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    from tests.support.fixtures import use_fixture_stacks
    from tooling.plan import BULK_GC_THRESHOLDS

    use_fixture_stacks()
    gc.set_threshold(*BULK_GC_THRESHOLDS)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """What the session built stays out of the collector's view from here: pytest's own full
    collections at exit (looking for unraisable exceptions in garbage) and the interpreter's
    then skip every render and plan kept, instead of spending 2-5 s per process rescanning
    them while the run waits. Tests still report their unraisable exceptions as they end."""
    gc.freeze()


# The people of the small test stacks: Dex static users (Dex without any lets nobody sign in).
TEST_USERS = [
    *("a@acme.com", "b@acme.com", "lead@acme.com", "ana@acme.com", "bo@acme.com", "eve@acme.com"),
    *("Ana.Li@acme.com", "ana.b@x.com", "ana-b@x.com", "o@x.com"),
]
# Monitoring and Pipelines are off in the small test stacks (smaller plans; a GKE team that runs
# pipelines needs a bucket); tests that need them turn them on.
COMPONENTS_OFF = {
    **{key: {"enabled": False} for key in ("monitoring", "dcgmExporter", "pipelines")},
    "kubeflow": {"auth": {"staticUsers": TEST_USERS}},
}


def base_gke() -> dict[str, Any]:
    """A small valid GKE stack, as a stack file's `config:` mapping."""
    return {
        "mlplatform:components": COMPONENTS_OFF,
        "gcp:project": "acme-test",
        "mlplatform:cluster": {
            "kind": "gke",
            "name": "ml-test",
            "location": "us-central1",
            "gpuPools": [
                {"name": "l4", "accelerator": "nvidia-l4", "machineType": "g2-standard-24", "max": 2},
            ],
            # Cluster-wide: the system pool (3 x 3 e2-standard-8) and l4 (2 x 3 g2-standard-24) take 216
            # vCPUs and 864 GiB at full size.
            "autoprovisioning": {"enabled": True, "limits": {"cpu": 256, "memory": 1024, "nvidia-l4": 12}},
        },
    }


def base_kind() -> dict[str, Any]:
    return {"mlplatform:cluster": {"kind": "kind", "name": "ml-test"}, "mlplatform:components": COMPONENTS_OFF}


def with_changes(config: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """A copy of `config` with dotted paths set (`mlplatform:cluster.gpuPools.0.max`); None deletes.
    The changes are copied too, so a later change never edits a caller's constant."""
    result = copy.deepcopy(config)
    changes = copy.deepcopy(changes)
    for path, value in changes.items():
        top, *rest = path.split(".")
        keys: list[Any] = [top] + [int(k) if k.isdigit() else k for k in rest]
        node: Any = result
        for key in keys[:-1]:
            node = node[key]
        if value is None:
            del node[keys[-1]]
        else:
            node[keys[-1]] = value
    return result


_EVALUATED: dict[tuple[str, str], Plan] = {}


def evaluated(config: PlatformConfig, stack: str) -> Plan:
    """`tooling.plan.evaluate`, once per process for each stack name and validated config: the
    plan depends on nothing else, so a project stack that says what a fixture says (acme's
    examples in stacks/ are the fixtures' copies) is planned once for both."""
    from tooling.plan import evaluate

    key = (stack, config.model_dump_json())
    if key not in _EVALUATED:
        _EVALUATED[key] = evaluate(config, stack)
    return _EVALUATED[key]


@cache
def _shipped(name: str) -> Plan:
    from stackmodel.config import load

    return evaluated(load(name), name)


@pytest.fixture
def shipped_plan() -> Callable[[str], Plan]:
    """The plan of a fixture stack (tests/stacks/Pulumi.<name>.yaml), evaluated once per session."""
    return _shipped


def _project(path: Path) -> Plan:
    from stackmodel.config import load
    from tooling.cli import stack_name

    return evaluated(load(str(path)), stack_name(str(path)))


@pytest.fixture
def project_plan() -> Callable[[Path], Plan]:
    """The plan of one of the project's own stack files (stacks/, whatever a fork put there)."""
    return _project


@pytest.fixture
def plan_of() -> Callable[[dict[str, Any]], Plan]:
    """The plan of a raw stack config."""
    from stackmodel.config import validate
    from tooling.plan import evaluate

    return lambda raw: evaluate(validate(raw, "test"), "test")


@pytest.fixture(scope="session", autouse=True)
def _share_full_renders(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Workers of one run share full renders and a render cache (tests/support/renders.py) in the
    run's temp root (xdist's workers each have a folder of their own beneath it)."""
    from tests.support import renders

    base = tmp_path_factory.getbasetemp()
    renders.share_between_workers(base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base)
