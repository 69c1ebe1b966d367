"""Typed wiring (components/readiness.py): every wait between components is a Need naming what
it is for, a component asked for before it is installed is an error at plan time, and so is a
team object whose kind says nothing about what it waits for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pytest

from components import platform
from components.profiles import team
from components.readiness import Need, Readiness, Ready, What, WiringError
from tests.conftest import base_kind
from tooling.plan import Plan


class _Done(pulumi.CustomResource):
    def __init__(self) -> None:  # never registered: only compared
        pass


def test_a_component_asked_for_before_it_is_installed_is_an_error() -> None:
    ready = Readiness()
    ready.record(Ready.CERT_MANAGER, None)
    with pytest.raises(WiringError, match=r"^istio is needed before it is installed \(installed so far: certManager\); install it earlier"):
        ready.get(Ready.ISTIO)


def test_a_required_need_of_a_component_the_stack_lacks_is_an_error_an_optional_one_is_met_by_nothing() -> None:
    ready = Readiness()
    ready.record(Ready.KUBERAY, None)
    assert ready.resources([Need(Ready.KUBERAY, What.CRDS, optional=True)], "a RayCluster") == []
    with pytest.raises(WiringError, match=r"^a RayCluster needs kuberay \(its CRDs\), which this stack does not install$"):
        ready.resources([Need(Ready.KUBERAY, What.CRDS)], "a RayCluster")


def test_readiness_is_recorded_once_and_each_resource_waited_for_once() -> None:
    ready = Readiness()
    done = _Done()
    ready.record(Ready.ISTIO, done)
    with pytest.raises(WiringError, match="recorded twice"):
        ready.record(Ready.ISTIO, None)
    assert ready.resources([Need(Ready.ISTIO, What.CRDS), Need(Ready.ISTIO, What.WEBHOOKS)], "x") == [done]


def test_installers_in_the_wrong_order_fail_the_plan(monkeypatch: pytest.MonkeyPatch, plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    """Kubeflow before Istio: it needs Istio's CRDs, which nothing has recorded yet."""
    order = [Ready.CERT_MANAGER, Ready.KUBEFLOW, Ready.ISTIO] + [k for k in platform.INSTALLERS if k not in (Ready.CERT_MANAGER, Ready.KUBEFLOW, Ready.ISTIO)]
    monkeypatch.setattr(platform, "INSTALLERS", {k: platform.INSTALLERS[k] for k in order})
    with pytest.raises(Exception, match="istio is needed before it is installed"):
        plan_of(base_kind())


def test_a_team_object_of_a_kind_without_needs_is_an_error() -> None:
    with pytest.raises(WiringError, match=r"team object Job x: its kind has no entry in OBJECT_NEEDS"):
        team.needs_of({"kind": "Job", "metadata": {"name": "x"}})
    assert team.needs_of({"kind": "Profile", "metadata": {"name": "x"}}) == (Need(Ready.KUBEFLOW, What.CRDS),)


def test_every_kind_a_shipped_team_renders_says_what_it_waits_for(shipped_plan: Callable[[str], Plan]) -> None:
    from stacks.config import load
    from tooling.render import authored_objects

    for stack in ("kind", "dev", "prod"):
        teams = {t.name for t in load(stack).teams}
        kinds = {o["kind"] for o in authored_objects(shipped_plan(stack)) if o["metadata"].get("namespace", o["metadata"]["name"]) in teams}
        assert kinds and kinds <= set(team.OBJECT_NEEDS), kinds - set(team.OBJECT_NEEDS)


def test_every_edge_between_components_names_its_need() -> None:
    """The composition's waits are Needs (platform.*_NEEDS), not bare keys."""
    edges = [v for name, v in vars(platform).items() if name.endswith("_NEEDS")]
    assert edges and all(isinstance(n, Need) and isinstance(n.what, What) for group in edges for n in group)
