"""The envtest session: one control plane (tests/support/envtest.py) for the whole run, every
stack's full render applied to it once, and a line per stack at the end saying what the API
server made of it. Outside CI, a checkout without the binaries skips the suite and says why;
under CI=true that stops the run before any test (tests/conftest.py `refusals`)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from stackmodel.config import stack_names
from tests.support import envtest
from tests.support.apiserver import Applied, Cluster
from tests.support.profile_controller import profile_bindings, profile_owners
from tests.support.renders import rendered
from tooling.fullrender import FullRender

APPLIED: dict[str, Applied] = {}
"""What each stack's render gave, by the id the tests name it by (for the summary)."""
TIMES: dict[str, float] = {}


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A running control plane, its administrator's view; stopped at the end of the run."""
    missing = envtest.missing()
    if missing:
        pytest.skip(missing)
    start = time.monotonic()
    # clusterrole-aggregation: Kubeflow's aggregated roles (test_access.py); resourcequota: the
    # quota plugin admits no pod of a namespace whose quota it has not counted (test_quota_admits_queue.py).
    with envtest.running(tmp_path_factory.mktemp("envtest"), controllers=("clusterrole-aggregation", "resourcequota")) as plane:
        TIMES["control plane ready"] = time.monotonic() - start
        yield Cluster(plane)


@pytest.fixture(scope="session", autouse=True)
def crds_early(cluster: Cluster) -> None:
    """The first fixture's CRDs stored while the first tests run: the API server's 20 s or so
    of judging 70 CRDs would otherwise be spent waiting in the first apply."""
    cluster.store_crds_soon(rendered(stack_names()[0]))


@contextmanager
def kept(cluster: Cluster, objects: Sequence[dict[str, Any]]) -> Iterator[None]:
    """`objects` stored in the control plane for a test module (its world), ClusterRoles
    aggregated by the controller manager before it starts; what was created removed after."""
    created = cluster.keep(objects)
    try:
        if any(o["kind"] == "ClusterRole" for o in objects):
            cluster.wait_aggregated()
        yield
    finally:
        cluster.remove(created)


def rbac_of(objects: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Namespaces and RBAC of a render's objects, with the bindings the profile controller
    adds at run time: what the RBAC authorizer decides by."""
    kinds = ("Namespace", "ClusterRole", "Role", "RoleBinding", "ClusterRoleBinding")
    return [o for o in objects if o["kind"] in kinds] + profile_bindings(profile_owners(list(objects)))


_BY_RENDER: dict[int, Applied] = {}


def applied(cluster: Cluster, name: str, render: FullRender) -> Applied:
    """`render` applied once per run (renders are cached for the run: a shipped stack that says
    what its fixture says has the fixture's render, and shares its result)."""
    if id(render) not in _BY_RENDER:
        start = time.monotonic()
        _BY_RENDER[id(render)] = cluster.apply_render(render)
        TIMES[name] = time.monotonic() - start
    APPLIED[name] = _BY_RENDER[id(render)]
    return APPLIED[name]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not APPLIED:
        return
    terminalreporter.section("envtest: what the API server made of each render")
    if "control plane ready" in TIMES:
        terminalreporter.write_line(f"control plane ready in {TIMES['control plane ready']:.1f}s")
    for name, result in APPLIED.items():
        ours = len(result.applied) - len(result.provided)
        took = f", {TIMES[name]:.1f}s" if name in TIMES else " (the same render as its fixture)"
        terminalreporter.write_line(
            f"{name}: {ours} objects applied ({len(result.stored_before)} CRDs stored and {len(result.judged_before)} objects judged "
            f"before, as they are), {len(result.rejected)} rejected, "
            f"{len(result.duplicates)} duplicates, {len(result.set_aside)} set aside{took}"
            + (f"; left out, not in the mirror: {', '.join(result.left_out)}" if result.left_out else "")
        )
    stacks = list(APPLIED)
    aside: dict[str, list[str]] = {}
    for name, result in APPLIED.items():
        for line in result.set_aside:
            aside.setdefault(line, []).append(name)
    terminalreporter.write_line("set aside (they would call a pod; none runs here):")
    for line, where in aside.items():
        terminalreporter.write_line(f"  {line}" + ("" if where == stacks else f" [{', '.join(where)}]"))
