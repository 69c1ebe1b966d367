"""What our tooling relies on in the Pulumi SDKs, each asserted in the exact shape we use it.

pyproject.toml pins pulumi, pulumi-policy and the provider SDKs as ranges (the lock files,
`make lock`, hold exact versions). The offline plan (tooling/plan.py) uses Pulumi's public
mocks (`set_mocks` with a monitor of ours, `runtime.test`, `configure`/`Settings`,
`get_root_resource`); its one reach past the public API, for speed, is
tooling/sdk_adapter.py, which checks the SDK's shape and otherwise leaves it alone (the plan
is the same, slower). The stack config reader (stackmodel/config.py) reads the config's context
variable, and the policy pack (policy/pack.py) pulumi_policy's proxies and deserializer. On an
SDK upgrade (`make lock` after moving a range): run this file first, and for each failure read
the named SDK source at the new version and adapt the code the message names (then the golden
plans must stay byte-identical).
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import threading
import tomllib
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import pulumi
import pulumi.runtime
import pytest
from google.protobuf import json_format, struct_pb2
from packaging.requirements import Requirement
from pulumi.runtime import config as runtime_config
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime.proto import alias_pb2, resource_pb2

from facts.resource_types import STACK
from tooling import sdk_adapter

# The wire form of a secret (pulumi/pulumi sdk/go/common/resource/properties.go).
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
UPGRADE = "On an SDK upgrade, read {source} at the new version and adapt {user}; then re-lock."
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
SDKS = ("pulumi", "pulumi-policy", "pulumi-kubernetes", "pulumi-gcp", "pulumi-command", "pulumi-random")


def _why(source: str, user: str) -> str:
    return UPGRADE.format(source=source, user=user)


def _params(function: Any) -> list[str]:
    return list(inspect.signature(function).parameters)


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    return json_format.ParseDict(value, struct_pb2.Struct())


def _isolated(test: Callable[..., None]) -> Callable[..., None]:
    """Run a test that sets Pulumi's runtime state (settings, root stack, config: context
    variables) in a context of its own, so the tests after it see the state as it was."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        contextvars.Context().run(test, *args, **kwargs)

    return run


# --- the pins themselves ------------------------------------------------------------------


def _declared() -> dict[str, Requirement]:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    requirements = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    return {(r := Requirement(line)).name: r for line in requirements}


@pytest.mark.parametrize("package", SDKS)
def test_each_sdk_is_pinned_as_a_range_and_installed_inside_it(package: str) -> None:
    """A range, so that a fork bumps an SDK by `make lock`, not by a code change; the lock
    files hold the exact versions this suite ran on."""
    requirement = _declared()[package]
    assert not any(spec.operator == "==" for spec in requirement.specifier), f"{package} is pinned exactly in pyproject.toml: give a range"
    assert requirement.specifier.contains(metadata.version(package)), f"{package} {metadata.version(package)} is outside {requirement.specifier}"


# --- pulumi: the mock monitor the offline plan records through (tooling/plan.py) ----------


class _Spy(mocks.Mocks):
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any], int]] = []

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str | None, dict[Any, Any]]:
        self.calls.append((args.typ, args.name, args.inputs, threading.get_ident()))
        return "id-1", {**args.inputs, "out": 1}

    def call(self, args: mocks.MockCallArgs) -> tuple[dict[Any, Any], list[tuple[str, str]] | None]:
        return {}, None


class _Monitor(mocks.MockMonitor):
    def make_urn(self, parent: str, type_: str, name: str) -> str:
        return f"urn:test::{parent}::{type_}::{name}"


def test_mock_monitor_keeps_its_mocks_and_names_urns_through_make_urn() -> None:
    why = _why("pulumi/runtime/mocks.py MockMonitor", "tooling/plan.py _RecordingMonitor (make_urn override, monitor.mocks)")
    spy = _Spy()
    monitor = _Monitor(spy)
    assert monitor.mocks is spy, why
    assert _params(mocks.MockMonitor.make_urn) == ["self", "parent", "type_", "name"], why
    request = resource_pb2.RegisterResourceRequest(type="test:index:Thing", name="a", parent="p", custom=True)
    assert monitor.RegisterResource(request).urn == "urn:test::p::test:index:Thing::a", why


def test_mock_monitor_register_resource_hands_the_deserialized_inputs_to_new_resource_on_the_calling_thread() -> None:
    """The recorder reads the inputs new_resource just saw from a thread-local: the call must
    happen synchronously, in RegisterResource's thread, with secrets still wrapped."""
    why = _why("pulumi/runtime/mocks.py MockMonitor.RegisterResource", "tooling/plan.py _Mocks.new_resource / RegisterResource")
    spy = _Spy()
    secret = {SIG_KEY: SECRET_SIG, "value": "s3cr3t"}
    request = resource_pb2.RegisterResourceRequest(
        type="test:index:Thing", name="a", custom=True, object=_struct({"k": "v", "s": secret})
    )
    response = _Monitor(spy).RegisterResource(request)
    assert spy.calls == [("test:index:Thing", "a", {"k": "v", "s": secret}, threading.get_ident())], why
    assert response.id == "id-1", why


def test_mock_monitor_answers_the_root_stack_without_asking_the_mocks() -> None:
    why = _why("pulumi/runtime/mocks.py MockMonitor.RegisterResource", "tooling/plan.py _RecordingMonitor (skips STACK_TYPE)")
    spy = _Spy()
    response = _Monitor(spy).RegisterResource(resource_pb2.RegisterResourceRequest(type=STACK, name="s"))
    assert (response.urn, spy.calls) == (f"urn:test::::{STACK}::s", []), why


def test_register_resource_request_carries_the_fields_the_recorder_reads() -> None:
    why = _why(
        "pulumi/runtime/proto/resource_pb2 RegisterResourceRequest and alias_pb2 Alias",
        "tooling/plan.py _RecordingMonitor (Recorded fields, _alias_urns)",
    )
    fields = resource_pb2.RegisterResourceRequest.DESCRIPTOR.fields_by_name
    assert {"type", "name", "parent", "provider", "dependencies", "custom", "protect", "ignoreChanges", "aliases", "object"} <= set(fields), why
    assert fields["aliases"].message_type is alias_pb2.Alias.DESCRIPTOR, why
    alias = alias_pb2.Alias(spec=alias_pb2.Alias.Spec(name="old", noParent=True))
    assert alias.WhichOneof("alias") == "spec", why
    assert {"name", "type", "stack", "project", "parentUrn", "noParent"} <= set(alias_pb2.Alias.Spec.DESCRIPTOR.fields_by_name), why
    assert alias_pb2.Alias(urn="urn:x").WhichOneof("alias") == "urn", why


@_isolated
def test_set_mocks_takes_our_monitor() -> None:
    why = _why("pulumi/runtime/mocks.py set_mocks", "tooling/plan.py evaluate (set_mocks(..., monitor=monitor))")
    assert {"mocks", "project", "stack", "preview", "monitor"} <= set(_params(pulumi.runtime.set_mocks)), why
    monitor = _Monitor(_Spy())
    pulumi.runtime.set_mocks(monitor.mocks, project="p", stack="s", preview=False, monitor=monitor)
    assert settings.get_monitor() is monitor, why


@_isolated
def test_set_mocks_makes_a_root_stack_per_context_whose_outputs_exports_fill() -> None:
    """evaluate reads the program's exports from the root stack set_mocks made, and runs each
    program in a fresh context: a root stack of its own, never another run's."""
    why = _why("pulumi/runtime/mocks.py set_mocks, pulumi/runtime/stack.py Stack.output, pulumi/resource.py export", "tooling/plan.py evaluate (exports)")
    pulumi.runtime.set_mocks(_Spy(), project="p", stack="s", preview=False)
    root = pulumi.runtime.get_root_resource()
    assert root is not None, why
    pulumi.export("answer", 42)
    assert getattr(root, "outputs", None) == {"answer": 42}, why
    assert contextvars.Context().run(pulumi.runtime.get_root_resource) is None, why


def test_settings_made_in_a_context_are_that_contexts_own() -> None:
    """Evaluations at once each configure a Settings bag in their context: its tasks, RPC
    manager and lock must not be another context's (runtime.test clears and awaits them)."""
    why = _why("pulumi/runtime/settings.py Settings, configure; pulumi/_utils.py contextproperty", "tooling/plan.py under_mocks")

    def fresh() -> tuple[Any, ...]:
        pulumi.runtime.configure(pulumi.runtime.Settings(project="p", stack="s", dry_run=False))
        return (settings.SETTINGS.outputs, settings.SETTINGS.rpc_manager, settings.SETTINGS.lock)

    first, second = contextvars.Context().run(fresh), contextvars.Context().run(fresh)
    assert all(a is not b for a, b in zip(first, second, strict=True)), why


def test_rpc_secret_helpers_read_the_wire_form() -> None:
    why = _why("pulumi/runtime/rpc.py is_rpc_secret, unwrap_rpc_secret", "tooling/plan.py mask_secrets")
    wrapped = {SIG_KEY: SECRET_SIG, "value": {"a": 1}}
    assert rpc.is_rpc_secret(wrapped) and not rpc.is_rpc_secret({"value": 1}), why
    assert rpc.unwrap_rpc_secret(wrapped) == {"a": 1}, why


@_isolated
def test_set_all_config_fills_the_config_context_variable_read_by_the_stack_reader() -> None:
    why = _why(
        "pulumi/runtime/config.py CONFIG, set_all_config, get_config_env",
        "stackmodel/config.py read_pulumi_config and tooling/plan.py evaluate (set_all_config)",
    )
    assert isinstance(runtime_config.CONFIG, contextvars.ContextVar), why
    assert _params(pulumi.runtime.set_all_config) == ["config", "secret_keys"], why
    pulumi.runtime.set_all_config({"mlplatform:x": "1"}, secret_keys=["mlplatform:x"])
    assert runtime_config.CONFIG.get() == {"mlplatform:x": "1"}, why
    assert isinstance(runtime_config.get_config_env(), dict), why


# --- pulumi: internals the tests use ---------------------------------------------------------


def test_the_resource_module_registry_names_each_types_python_module() -> None:
    why = _why("pulumi/runtime/rpc.py get_resource_module", "tests/test_plan.py (ignore_changes check)")
    import pulumi_gcp  # noqa: F401  (registers its resource modules)
    from pulumi_gcp.container import ClusterArgs

    registered = rpc.get_resource_module("gcp", "container/cluster", "")
    assert registered is not None, why
    assert getattr(registered, "mod_info")["fqn"] == "pulumi_gcp.container", why  # noqa: B009 (not in ResourceModule's type)
    assert "node_pools" in inspect.signature(ClusterArgs.__init__).parameters, why


# --- pulumi: the adapter (tooling/sdk_adapter.py) -----------------------------------------


class _Positions(mocks.MockMonitor):
    """Records whether each registration came with a source position."""

    def __init__(self) -> None:
        super().__init__(_Spy())
        self.positions: list[bool] = []

    def RegisterResource(self, request: Any) -> Any:
        if request.type != STACK:
            self.positions.append(request.HasField("sourcePosition"))
        return super().RegisterResource(request)


class _Thing(pulumi.CustomResource):
    """A resource class of a provider SDK's shape (the SDK takes the position of its caller)."""

    def __init__(self, name: str) -> None:
        super().__init__("test:index:Thing", name, {})


def _positions(hooked: bool) -> list[bool]:
    from tooling.plan import under_mocks

    monitor = _Positions()

    def program() -> None:
        _Thing("a")

    if hooked:
        under_mocks(monitor, "s", program)  # bulk_registration: no_source_positions
    else:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sdk_adapter, "source_positions_hook_fits", lambda: False)
            under_mocks(monitor, "s", program)
    return monitor.positions


def test_the_source_positions_hook_fits_this_sdk_and_takes_the_positions_away() -> None:
    """On the SDK the lock installs the hook is on: a plan sends no source position. Where it
    does not fit (an SDK whose internals moved), the SDK is left alone and sends them."""
    why = _why("pulumi/runtime/resource.py register_resource, _get_stack_trace", "tooling/sdk_adapter.py no_source_positions")
    assert sdk_adapter.source_positions_hook_fits(), why
    assert _positions(hooked=True) == [False], why
    assert _positions(hooked=False) == [True], why


def test_a_plan_is_the_same_with_the_adapter_and_without(shipped_plan: Callable[[str], Any]) -> None:
    """The fallback stays correct: with the hook off, the plan of a stack is the same."""
    from stackmodel.config import load
    from tooling.cli import plan_json
    from tooling.plan import evaluate

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sdk_adapter, "source_positions_hook_fits", lambda: False)
        without = evaluate(load("kind"), "kind")
    assert plan_json(without) == plan_json(shipped_plan("kind"))


def test_the_hook_is_given_back_when_the_last_plan_ends() -> None:
    """Plans at once or inside one another share it; the SDK's own capture is back after the last."""
    with sdk_adapter.no_source_positions() as outer:
        with sdk_adapter.no_source_positions() as inner:
            assert outer and inner
        assert _positions(hooked=False) == [False], "still off: the outer plan goes on"
    assert _positions(hooked=False) == [True]


# --- pulumi-policy: the policy pack's adapter (policy/pack.py) ------------------------------


def test_policy_preview_unknowns_are_the_sdks_sentinels() -> None:
    why = _why("pulumi_policy/proxy.py UNKNOWN_*_VALUE, _is_unknown", "policy/pack.py PREVIEW_UNKNOWNS (UNKNOWN leaves)")
    from pulumi_policy import proxy

    from policy.pack import PREVIEW_UNKNOWNS, is_unknown

    declared = {value for name, value in vars(proxy).items() if name.startswith("UNKNOWN_") and name.endswith("_VALUE")}
    assert declared == PREVIEW_UNKNOWNS and len(declared) == 7, why
    assert proxy.UNKNOWN_STRING_VALUE == "04da6b54-80e4-46f7-96ec-b56ff0331ba9", why + " (tests/test_policy_pack.py sends it)"
    others: list[Any] = ["", "x", 0, None, [], {}]
    assert not any(is_unknown(v) for v in others), why


def test_policy_proxies_hand_out_their_target() -> None:
    why = _why("pulumi_policy/proxy.py _DictProxy, _ListProxy, unknown_checking_proxy", "policy/pack.py _raw (proxy['__target'])")
    from pulumi_policy.proxy import unknown_checking_proxy

    proxied: Any = unknown_checking_proxy({"a": [1, {"b": 2}]})
    assert not isinstance(proxied, dict), "a proxy, not the dict: " + why
    target = proxied["__target"]
    assert isinstance(target, dict) and list(target) == ["a"], why
    inner = target["a"]
    assert not isinstance(inner, list) and inner["__target"][0] == 1, "nested values are proxies too: " + why


def test_policy_deserializer_is_a_module_global_that_can_keep_secrets_marked() -> None:
    why = _why(
        "pulumi_policy/policy.py (AnalyzeStack's call to deserialize_properties) and deserialize.py",
        "policy/pack.py keep_secrets_marked (patches policy.deserialize_properties with proxy_secrets=True)",
    )
    from pulumi_policy import deserialize
    from pulumi_policy import policy as policy_module
    from pulumi_policy.secret import Secret

    current = policy_module.deserialize_properties  # ours, once policy/pack.py keep_secrets_marked has run
    assert current is deserialize.deserialize_properties or getattr(current, "func", None) is deserialize.deserialize_properties, why
    assert "proxy_secrets" in _params(deserialize.deserialize_properties), why
    marked: Any = deserialize.deserialize_properties({"k": {SIG_KEY: SECRET_SIG, "value": "x"}}, proxy_secrets=True)
    # A proxy that reads secrets as plain values; the mark is on the value under `__target`.
    assert marked["k"] == "x", why
    secret = marked["__target"]["k"]
    assert isinstance(secret, Secret) and secret.value == "x", why
    assert "deserialize_properties(" in inspect.getsource(policy_module._PolicyAnalyzerServicer.AnalyzeStack), why


def test_policy_analyzer_stack_calls_the_patched_deserializer(monkeypatch: pytest.MonkeyPatch) -> None:
    why = _why("pulumi_policy/policy.py _PolicyAnalyzerServicer", "policy/pack.py keep_secrets_marked and tests/test_policy_pack.py analyze")
    from pulumi.runtime import proto
    from pulumi_policy import EnforcementLevel, StackValidationPolicy
    from pulumi_policy import policy as policy_module

    seen: list[dict[str, Any]] = []
    original = policy_module.deserialize_properties

    def spy(props: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        seen.append(props)
        return original(props, *args, **kwargs)

    monkeypatch.setattr(policy_module, "deserialize_properties", spy)
    policy = StackValidationPolicy(name="p", description="d", validate=lambda args, report: None)
    assert _params(policy_module._PolicyAnalyzerServicer.__init__)[1:5] == [
        "name",
        "version",
        "policies",
        "enforcement_level",
    ], why
    service = policy_module._PolicyAnalyzerServicer("pack", "0.1.0", [policy], EnforcementLevel.MANDATORY)
    resource = proto.AnalyzerResource(urn="urn:x", type="t:i:T", name="x", properties=_struct({"a": 1}))
    service.AnalyzeStack(proto.AnalyzeStackRequest(resources=[resource]), None)
    assert seen == [{"a": 1}], why
