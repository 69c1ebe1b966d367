"""The offline plan does what the engine does where Pulumi's mock monitor does not: the
engine's URNs, a duplicate URN stops the run, and the options the engine acts on
(ignore_changes, aliases) name what they mean to."""

from __future__ import annotations

import asyncio
import importlib
import logging
import re
import typing
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from pulumi.runtime import rpc

from stackmodel.config import load
from tests.conftest import base_kind, with_changes
from tooling.plan import DuplicateUrnError, Plan, _unless_duplicate, evaluate

SHIPPED = ["kind", "dev", "prod"]


def _evaluate(build: Callable[[], None]) -> Plan:
    return evaluate(load("kind"), "test", lambda _config: build())


class _Box(pulumi.ComponentResource):
    def __init__(self, type_: str, name: str, opts: pulumi.ResourceOptions | None = None):
        super().__init__(type_, name, None, opts)


def test_a_duplicate_urn_stops_evaluate_with_the_engines_message(caplog: pytest.LogCaptureFixture) -> None:
    def build() -> None:
        k8s.core.v1.Namespace("team", metadata={"name": "a"})
        k8s.core.v1.Namespace("team", metadata={"name": "b"})

    with pytest.raises(DuplicateUrnError) as raised:
        _evaluate(build)
    urn = "urn:pulumi:test::mlplatform::kubernetes:core/v1:Namespace::team"
    # pulumi/pulumi sdk/go/common/diag/errors.go GetDuplicateResourceURNError (error 2001)
    assert str(raised.value) == f"Duplicate resource URN '{urn}'; try giving it a unique name"
    assert raised.value.urn == urn
    # Raised once: the registrations it failed, collected later, are not reported again by
    # the SDK's event loop (a full test run printed each at its end); other errors still are.
    loop = asyncio.new_event_loop()
    try:
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            _unless_duplicate(loop, {"message": "Future exception was never retrieved", "exception": raised.value})
            assert caplog.text == ""
            _unless_duplicate(loop, {"message": "Future exception was never retrieved", "exception": ValueError("other")})
        assert "ValueError: other" in caplog.text
    finally:
        loop.close()


def test_each_evaluation_runs_on_a_loop_of_its_own_closed_when_it_returns() -> None:
    """Not the caller's: a plan leaves no event loop set or open behind it, even one that stops
    on a duplicate URN (an open loop was finalised at interpreter exit, in arbitrary order,
    with a traceback), and a transform (the SDK's callbacks server) changes nothing to that."""
    loops: list[asyncio.AbstractEventLoop] = []

    def build() -> None:
        loops.append(asyncio.get_event_loop())
        k8s.core.v1.Namespace("team", metadata={"name": "a"}, opts=pulumi.ResourceOptions(transforms=[lambda _args: None]))
        k8s.core.v1.Namespace("team", metadata={"name": "b"})

    with pytest.raises(DuplicateUrnError):
        _evaluate(build)
    _evaluate(lambda: loops.append(asyncio.get_event_loop()))
    assert len(loops) == 2 and loops[0] is not loops[1]
    assert all(loop.is_closed() for loop in loops)


def test_what_a_parse_builds_is_kept_out_of_later_collections() -> None:
    """tooling.plan.uncollected: inside few_collections, no collection during the step and
    what it built frozen after (few_collections unfreezes it); outside, nothing is frozen."""
    import gc

    from tooling.plan import few_collections, uncollected

    with few_collections():
        frozen = gc.get_freeze_count()
        with uncollected():
            assert not gc.isenabled()
            built = [{"n": [n]} for n in range(1000)]
        assert gc.isenabled() and gc.get_freeze_count() >= frozen + 2000
    assert gc.get_freeze_count() == 0 and built
    with uncollected():
        more = [[n] for n in range(100)]
    assert gc.isenabled() and gc.get_freeze_count() == 0 and more


COLLECTOR_CHECK = """
import gc, weakref
import pulumi_kubernetes as k8s
from stackmodel.config import load
from tooling.plan import evaluate

seen, cycles = [], []

class Node:
    pass

def build(_config):
    seen.append(gc.isenabled())
    node = Node()
    node.self = node  # a cycle only the collector frees
    cycles.append(weakref.ref(node))
    k8s.core.v1.Namespace("team", metadata={"name": "a"})

assert gc.isenabled()
plan = evaluate(load("tests/stacks/Pulumi.kind.yaml"), "test", build)
assert seen == [False] and [r.name for r in plan.resources] == ["team"], (seen, plan.resources)
assert gc.isenabled() and gc.get_freeze_count() == 0
gc.collect()
assert cycles[0]() is None
print("ok")
"""


def test_a_plan_registers_without_the_collector_and_collects_its_garbage_after() -> None:
    """tooling.plan.bulk_registration: no collection while the program and its registrations
    run (they were a third of a plan's CPU), the collector back on after, nothing left frozen,
    and the run's cyclic garbage collectable then (not kept alive by the freeze). In a process
    of its own: the full collection that shows the last costs seconds in a test worker, which
    keeps hundreds of plans and renders alive."""
    import subprocess
    import sys
    from pathlib import Path

    result = subprocess.run(
        [sys.executable, "-c", COLLECTOR_CHECK], cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stdout.strip()) == (0, "ok"), result.stderr


EXIT_CHECK = """
import asyncio, atexit, sys

made = []
new_event_loop = asyncio.new_event_loop
asyncio.new_event_loop = lambda: made.append(new_event_loop()) or made[-1]


@atexit.register  # registered first, so it runs last: after the plans' own exit handler
def every_loop_closed():
    if not made or any(not loop.is_closed() for loop in made):
        print(f"{sum(not loop.is_closed() for loop in made)} of {len(made)} event loops open at exit", file=sys.stderr)


import pulumi, pulumi_kubernetes as k8s
from stackmodel.config import load
from tooling.plan import DuplicateUrnError, evaluate

def duplicate(_config):
    k8s.core.v1.Namespace("team", metadata={"name": "a"}, opts=pulumi.ResourceOptions(transforms=[lambda _args: None]))
    k8s.core.v1.Namespace("team", metadata={"name": "b"})

try:
    evaluate(load("tests/stacks/Pulumi.kind.yaml"), "kind", duplicate)
except DuplicateUrnError:
    pass
print(len(evaluate(load("tests/stacks/Pulumi.kind.yaml"), "kind").resources))
"""


def test_nothing_is_printed_at_interpreter_exit_after_plans() -> None:
    """Every loop the plans used (their own and the mock monitor's, one per executor thread)
    is closed at exit, before the interpreter tears objects down: an open one is finalised
    later, in arbitrary order (the traceback of a self-pipe closed first), and a pending
    registration prints "Task was destroyed but it is pending"."""
    import subprocess
    import sys
    from pathlib import Path

    result = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-c", EXIT_CHECK],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert int(result.stdout) > 50


def test_urns_carry_the_whole_parent_type_and_no_root_stack() -> None:
    def build() -> None:
        outer = _Box("test:index:Outer", "outer")
        inner = _Box("test:index:Inner", "inner", pulumi.ResourceOptions(parent=outer))
        k8s.core.v1.Namespace("ns", metadata={"name": "a"}, opts=pulumi.ResourceOptions(parent=inner))

    plan = _evaluate(build)
    assert plan.one("test:index:Outer", "outer").urn == "urn:pulumi:test::mlplatform::test:index:Outer::outer"
    assert plan.one("kubernetes:core/v1:Namespace", "ns").urn == (
        "urn:pulumi:test::mlplatform::test:index:Outer$test:index:Inner$kubernetes:core/v1:Namespace::ns"
    )


def test_one_name_under_two_parent_chains_is_no_duplicate() -> None:
    """The mock monitor keeps only the parent's own type, so these two would share a URN there;
    the engine keeps the whole chain and accepts them."""

    def build() -> None:
        for outer_type in ("test:index:A", "test:index:B"):
            outer = _Box(outer_type, outer_type.rsplit(":", 1)[-1].lower())
            inner = _Box("test:index:Inner", f"inner-{outer_type[-1]}", pulumi.ResourceOptions(parent=outer))
            k8s.core.v1.Namespace("ns", metadata={"name": "a"}, opts=pulumi.ResourceOptions(parent=inner))

    assert len(_evaluate(build).of_type("kubernetes:core/v1:Namespace")) == 2


def _input_types(annotation: Any) -> list[type]:
    """The input types (`*Args` classes of the provider SDKs) inside an annotation such as
    Optional[Input[XArgs]]."""
    if isinstance(annotation, type) and annotation.__name__.endswith("Args") and annotation.__module__.startswith("pulumi_"):
        return [annotation]
    return [found for arg in typing.get_args(annotation) for found in _input_types(arg)]


def _input_properties(args_class: type) -> dict[str, Any]:
    """An `*Args` class's inputs as the engine names them (camelCase, as ignore_changes takes
    them) -> their types: its constructor's keyword arguments, which the SDKs name in
    snake_case after the schema's camelCase names."""
    hints = typing.get_type_hints(vars(args_class)["__init__"])
    return {re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name): hint for name, hint in hints.items() if name != "return"}


def _args_class(type_: str) -> type:
    """The `*Args` class of a provider resource type, found through the package's own
    registry of resource modules (`gcp:container/cluster:Cluster` -> pulumi_gcp.container.ClusterArgs)."""
    package, module, name = type_.split(":")
    registered = rpc.get_resource_module(package, module, "")
    assert registered is not None, f"no Python module registered for {type_}"
    fqn = getattr(registered, "mod_info")["fqn"]  # noqa: B009 (not in ResourceModule's type)
    return typing.cast(type, getattr(importlib.import_module(fqn), f"{name}Args"))


def _unknown_input(type_: str, path: str) -> str | None:
    """None when `path` (an ignore_changes entry) names an input property of `type_`, else why not."""
    current: type | None = _args_class(type_)
    for segment in [s for s in re.split(r"\.|\[[^\]]*\]", path) if s]:
        if current is None:
            return f"{path}: nothing to descend into before {segment!r}"
        properties = _input_properties(current)
        if segment not in properties:
            return f"{path}: {current.__name__} has no input {segment!r}"
        nested = _input_types(properties[segment])
        current = nested[0] if nested else None
    return None


@pytest.mark.parametrize("stack", SHIPPED)
def test_every_ignore_changes_entry_names_an_input_of_its_resource(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    """An entry that names no input ignores nothing, silently (the GKE cluster's `nodePool`
    did: the input is `nodePools`)."""
    plan = shipped_plan(stack)
    wrong = [
        f"{r.type} {r.name}: {problem}"
        for r in plan.resources
        for path in r.ignore_changes
        if (problem := _unknown_input(r.type, path))
    ]
    assert wrong == []


def test_the_ignore_changes_check_sees_the_gke_entries(shipped_plan: Callable[[str], Plan]) -> None:
    cluster = shipped_plan("dev").one("gcp:container/cluster:Cluster", "ml-dev")
    assert set(cluster.ignore_changes) == {"nodeConfig", "initialNodeCount", "nodePools"}
    assert _unknown_input(cluster.type, "nodePool") == "nodePool: ClusterArgs has no input 'nodePool'"
    assert _unknown_input("gcp:container/nodePool:NodePool", "nodeConfig.kubeletConfig") is None
    assert _unknown_input("gcp:container/nodePool:NodePool", "nodeConfig.kubeletConfg") is not None


def _alias_clashes(plan: Plan) -> list[str]:
    """Aliases the engine would refuse once the state holds the aliased URN
    (step_generator.go getOldResource: errors 2008 and 2016)."""
    urns = {r.urn for r in plan.resources}
    claimed: dict[str, str] = {}
    clashes = []
    for r in plan.resources:
        for alias in r.aliases:
            if alias in urns:
                clashes.append(f"{r.urn} aliases {alias}, which another resource has")
            elif alias in claimed:
                clashes.append(f"{r.urn} and {claimed[alias]} both alias {alias}")
            claimed[alias] = r.urn
    return clashes


@pytest.mark.parametrize("stack", SHIPPED)
def test_no_alias_claims_a_urn_another_resource_has_or_claims(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    assert _alias_clashes(shipped_plan(stack)) == []


def test_teams_whose_old_names_collided_plan_without_alias_clashes(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    """Their headless Services had one name (`a-service-x-service-y-headless`): only the first
    keeps it as an alias, as only the first can have reached the state."""
    teams = [
        {"name": "a", "owner": "o@x.com", "ray": {"name": "x-service-y"}},
        {"name": "a-service-x", "owner": "o@x.com", "ray": {"name": "y"}},
    ]
    plan = plan_of(with_changes(base_kind(), {"mlplatform:teams": teams}))
    first, second = (plan.one("kubernetes:core/v1:Service", n) for n in ("a/x-service-y-headless", "a-service-x/y-headless"))
    assert [a.rsplit("::", 1)[-1] for a in first.aliases] == ["a-service-x-service-y-headless"]
    assert second.aliases == ()
    assert _alias_clashes(plan) == []


def _floats(value: object, path: str = "") -> list[str]:
    if isinstance(value, float):
        return [f"{path}: {value}"]
    if isinstance(value, dict):
        return [f for k, v in value.items() for f in _floats(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [f for i, v in enumerate(value) for f in _floats(v, f"{path}[{i}]")]
    return []


@pytest.mark.parametrize("stack", ["kind", "dev", "prod"])
def test_integers_stay_integers_in_the_plan(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    """The wire format makes every number a double; the plan shows what the cluster receives
    (`port: 6380`, `replicas: 1`). No value of our objects is a float at all."""
    found = [f"{r.type} {r.name}{f}" for r in shipped_plan(stack).resources for f in _floats(r.inputs)]
    assert found == []


def test_whole_numbers_keep_fractions_and_strings() -> None:
    from tooling.plan import whole_numbers

    assert whole_numbers({"port": 6380.0, "ratio": 0.5, "items": [1.0, "1.0"], "on": True}) == {
        "port": 6380, "ratio": 0.5, "items": [1, "1.0"], "on": True,
    }


def test_installs_start_rendering_while_the_plan_is_evaluated(monkeypatch: pytest.MonkeyPatch) -> None:
    """rendering_early: each kustomize tree the program registers is handed to kustomize
    (or the render cache) at once, and each chart that waits for no other install to helm, with
    no capabilities; the full render takes an early result where its own inputs are the same
    (fullrender._early_key), and renders the rest itself."""
    import threading

    from stackmodel.config import load
    from tooling import cluster_version, fullrender

    started: list[tuple[str, str, tuple[str, ...], str]] = []
    lock = threading.Lock()

    def render_output(install: Any, capabilities: list[str], kube_version: str, sources: Any, digests: Any) -> Any:
        with lock:
            started.append((install.kind, install.target, tuple(capabilities), kube_version))
        return fullrender.Output("0" * 64, f"# {install.label}\n")

    monkeypatch.setattr(fullrender, "render_output", render_output)
    monkeypatch.setattr(fullrender, "_EARLY", {})
    monkeypatch.setattr(fullrender, "_SESSION", None)  # what this plan's early renders leave for a full render
    config = load("kind")
    kube_version = cluster_version.kubernetes_version(config)
    with fullrender.rendering_early(config) as early:
        plan = evaluate(config, "kind", on_record=early)
    futures = list(fullrender._EARLY.values())
    for future in futures:
        future.result()
    trees = [i for i in fullrender.installs(plan) if i.kind == "kustomize"]
    installs = {i.resource.urn for i in fullrender.installs(plan)}
    # A chart that waits for another install (Trainer for JobSet's CRDs, Grafana for Istio's, the
    # LLM controller for KServe's LLM CRDs and the gateway's, its presets for the controller)
    # would see its CRDs: it is left to the full render, its render without them never made.
    waiting = [i for i in fullrender.installs(plan) if i.kind == "helm" and plan.waits_for(i.resource) & installs]
    charts = [i for i in fullrender.installs(plan) if i.kind == "helm" and i not in waiting]
    assert {i.label for i in waiting} == {
        "trainer/kubeflow-trainer", "monitoring/grafana", "serving/kserve-resources", "serving/kserve-runtime-configs", "serving/keda",
        "serving/kserve-llmisvc-resources",
    }
    assert all(fullrender._early_key(i, [], kube_version) not in fullrender._EARLY for i in waiting)
    assert trees and charts and len(futures) == len({i.target for i in trees}) + len(charts)
    expected = [("kustomize", t, (), kube_version) for t in {i.target for i in trees}] + [("helm", i.target, (), kube_version) for i in charts]
    assert sorted(started) == sorted(expected), "each tree and each chart that waits for nothing started once, early"
    # A chart's early render serves the full render's where it asks for no capabilities, at the
    # same Kubernetes version; never one with other capabilities or another version.
    assert fullrender._early_key(charts[0], [], kube_version) in fullrender._EARLY
    assert fullrender._early_key(charts[0], ["x.io/v1"], kube_version) not in fullrender._EARLY
    assert fullrender._early_key(charts[0], [], "1.35.0") not in fullrender._EARLY


def _evaluation(plan: Plan) -> tuple[Any, ...]:
    """What one evaluation gave, comparable: its resources and exports, and its install's record
    (each install's transforms by name, moves and kept objects, the prepared trees, the
    transforms of every object, the teams given keys)."""
    from plumbing.base import transform_name
    from tooling.cli import plan_json

    record = plan.record
    return (
        plan_json(plan),
        {key: [transform_name(t) for t in transforms] for key, transforms in record.transforms.items()},
        {key: len(moves) for key, moves in record.moves.items()},
        {key: transform_name(kept) for key, kept in record.kept.items()},
        sorted(record.prepared_trees),
        [transform_name(t) for t in record.platform_transforms],
        sorted(record.team_keys),
    )


def test_evaluations_at_once_or_inside_one_another_keep_their_own_resources_and_records() -> None:
    """Nothing of an evaluation is in a module global: the program hands its record back
    (program.build -> components.platform.install -> InstallRecord) and the SDK's state is
    the evaluation's context's. Two stacks with different installs, evaluated inside one
    another and at once (both programs running between two barriers), give what each gives
    alone."""
    import threading

    import program
    from stackmodel.config import validate

    monitored = with_changes(base_kind(), {"mlplatform:components.kueue": {"enabled": False}, "mlplatform:components.monitoring": {"enabled": True}})
    stacks = {"small": validate(base_kind(), "small"), "monitored": validate(monitored, "monitored")}
    alone = {name: _evaluation(evaluate(config, name)) for name, config in stacks.items()}
    assert alone["small"][1].keys() != alone["monitored"][1].keys(), "two stacks with different installs"

    inner: list[Plan] = []

    def evaluating_another(config: Any) -> Any:
        inner.append(evaluate(stacks["small"], "small"))
        return program.build(config)

    outer = evaluate(stacks["monitored"], "monitored", evaluating_another)
    assert (_evaluation(outer), _evaluation(inner[0])) == (alone["monitored"], alone["small"])

    both = threading.Barrier(2, timeout=120)

    def side_by_side(config: Any) -> Any:
        both.wait()
        record = program.build(config)
        both.wait()
        return record

    plans: dict[str, Plan] = {}
    threads = [threading.Thread(target=lambda n=name: plans.update({n: evaluate(stacks[n], n, side_by_side)})) for name in stacks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {name: _evaluation(plan) for name, plan in plans.items()} == alone
