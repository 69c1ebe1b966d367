"""Typed wiring (plumbing/readiness.py): every wait between components is a Need naming what
it is for, a component asked for before it is installed is an error at plan time, and so is a
team object whose kind says nothing about what it waits for."""

from __future__ import annotations

from collections.abc import Callable

import pulumi
import pytest

from components.profiles import team
from plumbing.readiness import Need, Readiness, What, WiringError
from stackmodel.components.cert_manager import CERT_MANAGER
from stackmodel.components.istio import ISTIO, IstioConfig
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.kuberay import KUBERAY
from stackmodel.components.spec import ComponentSpec, install_order
from stackmodel.registry import COMPONENTS
from tooling.plan import Plan


class _Done(pulumi.CustomResource):
    def __init__(self) -> None:  # never registered: only compared
        pass


def test_a_component_asked_for_before_it_is_installed_is_an_error() -> None:
    ready = Readiness()
    ready.record(CERT_MANAGER, None)
    with pytest.raises(WiringError, match=r"^istio is needed before it is installed \(installed so far: certManager\); name it in the needs"):
        ready.get(ISTIO)


def test_a_required_need_of_a_component_the_stack_lacks_is_an_error_an_optional_one_is_met_by_nothing() -> None:
    ready = Readiness()
    ready.record(KUBERAY, None)
    assert ready.resources([Need(KUBERAY, What.CRDS, optional=True)], "a RayCluster") == []
    with pytest.raises(WiringError, match=r"^a RayCluster needs kuberay \(its CRDs\), which this stack does not install$"):
        ready.resources([Need(KUBERAY, What.CRDS)], "a RayCluster")


def test_readiness_is_recorded_once_and_each_resource_waited_for_once() -> None:
    ready = Readiness()
    done = _Done()
    ready.record(ISTIO, done)
    with pytest.raises(WiringError, match="recorded twice"):
        ready.record(ISTIO, None)
    assert ready.resources([Need(ISTIO, What.CRDS), Need(ISTIO, What.WEBHOOKS)], "x") == [done]


def test_the_install_order_follows_the_needs_whatever_the_list_says() -> None:
    """Kubeflow after Istio and cert-manager, Trainer after JobSet, Pipelines after Kubeflow: from
    the specs' needs, also when the list says otherwise."""
    for listed in (COMPONENTS, tuple(reversed(COMPONENTS))):
        order = install_order(listed)
        assert set(order) == set(COMPONENTS)
        early = {spec: {n.on for n in spec.needs} & set(order[: order.index(spec)]) for spec in order}
        assert all({n.on for n in spec.needs if n.on in order} <= early[spec] for spec in order)


def test_components_that_need_each_other_cannot_be_installed() -> None:
    a = ComponentSpec("a", IstioConfig, "A.", installed_by="x:A", needs=(Need(ISTIO, What.CRDS),))
    loop = ComponentSpec("istio", IstioConfig, "Istio again.", installed_by="x:B", needs=(Need(a, What.CRDS),))
    with pytest.raises(ValueError, match=r"need each other cannot be installed in any order: a -> istio -> a"):
        install_order((a, loop))


def test_a_team_object_of_a_kind_without_needs_is_an_error() -> None:
    with pytest.raises(WiringError, match=r"team object Job x: its kind has no entry in OBJECT_NEEDS"):
        team.needs_of({"kind": "Job", "metadata": {"name": "x"}})
    assert team.needs_of({"kind": "Profile", "metadata": {"name": "x"}}) == (Need(KUBEFLOW, What.CRDS),)


def test_every_kind_a_shipped_team_renders_says_what_it_waits_for(shipped_plan: Callable[[str], Plan]) -> None:
    from stackmodel.config import load
    from tooling.render import authored_objects

    for stack in ("kind", "dev", "prod"):
        teams = {t.name for t in load(stack).teams}
        kinds = {o["kind"] for o in authored_objects(shipped_plan(stack)) if o["metadata"].get("namespace", o["metadata"]["name"]) in teams}
        assert kinds and kinds <= set(team.OBJECT_NEEDS), kinds - set(team.OBJECT_NEEDS)


def test_every_edge_between_components_names_its_need() -> None:
    """The waits between components are their specs' Needs, and the composition's (platform.*_NEEDS), not bare keys."""
    from components import platform

    edges = [spec.needs for spec in COMPONENTS] + [v for name, v in vars(platform).items() if name.endswith("_NEEDS")]
    assert edges and all(isinstance(n, Need) and isinstance(n.what, What) for group in edges for n in group)
