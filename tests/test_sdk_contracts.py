"""The SDK internals our tooling relies on, each asserted in the exact shape we use it.

pyproject.toml pins pulumi, pulumi-policy and the provider SDKs exactly because the offline
plan (tooling/plan.py), the stack config reader (stacks/config.py), the policy pack
(policy/pack.py) and some tests reach past the SDKs' public API. On an SDK upgrade: bump the
pin, run this file first, and for each failure read the named SDK source at the new version
and adapt the tooling code the message names (then the golden plans must stay byte-identical).
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import threading
from collections.abc import Callable
from importlib import metadata
from typing import Any

import pulumi
import pulumi.runtime
import pytest
from google.protobuf import json_format, struct_pb2
from pulumi.runtime import config as runtime_config
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime.proto import alias_pb2, resource_pb2
from pulumi.runtime.stack import Stack

from facts.resource_types import STACK

# The wire form of a secret (pulumi/pulumi sdk/go/common/resource/properties.go).
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
UPGRADE = "On an SDK upgrade, read {source} at the new version and adapt {user}; then re-pin."


def _why(source: str, user: str) -> str:
    return UPGRADE.format(source=source, user=user)


def _params(function: Any) -> list[str]:
    return list(inspect.signature(function).parameters)


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    return json_format.ParseDict(value, struct_pb2.Struct())


def _isolated(test: Callable[..., None]) -> Callable[..., None]:
    """Run a test that sets Pulumi's runtime state (settings, root stack, config: context
    variables) in a copy of the context, so the tests after it see the state as it was."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        contextvars.copy_context().run(test, *args, **kwargs)

    return run


# --- the pins themselves ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("package", "version"),
    [
        ("pulumi", "3.272.0"),
        ("pulumi-policy", "1.21.0"),
        ("pulumi-kubernetes", "4.34.2"),
        ("pulumi-gcp", "10.2.0"),
        ("pulumi-command", "1.2.1"),
        ("pulumi-random", "4.21.4"),
    ],
)
def test_the_installed_sdk_is_the_one_these_contracts_were_read_in(package: str, version: str) -> None:
    assert metadata.version(package) == version, (
        f"{package} {metadata.version(package)} is installed, pyproject.toml pins {version}: reinstall (`pip install -e .[test]`), "
        "or, upgrading, re-read every internal this file names and update the pins here and in pyproject.toml"
    )


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


def test_mock_monitor_register_resource_outputs_takes_the_request() -> None:
    why = _why("pulumi/runtime/mocks.py MockMonitor.RegisterResourceOutputs", "tooling/plan.py _RecordingMonitor.RegisterResourceOutputs")
    assert _params(mocks.MockMonitor.RegisterResourceOutputs) == ["self", "request"], why
    _Monitor(_Spy()).RegisterResourceOutputs(resource_pb2.RegisterResourceOutputsRequest(urn="u"))


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


def test_register_resource_takes_its_stack_trace_from_a_module_global() -> None:
    """bulk_registration swaps _get_stack_trace for an empty StackTrace while a plan runs: the
    SDK must look the function up at each registration and read an empty trace as no position."""
    why = _why(
        "pulumi/runtime/resource.py _get_stack_trace, _get_source_position, register_resource",
        "tooling/plan.py bulk_registration (source positions)",
    )
    from pulumi.runtime import resource
    from pulumi.runtime.proto import source_pb2

    assert _params(resource._get_stack_trace) == [], why
    assert isinstance(resource._get_stack_trace(), source_pb2.StackTrace), why
    assert "_get_stack_trace()" in inspect.getsource(resource.register_resource), why
    assert resource._get_source_position(source_pb2.StackTrace()) is None, why


@_isolated
def test_set_mocks_takes_our_monitor() -> None:
    why = _why("pulumi/runtime/mocks.py set_mocks", "tooling/plan.py evaluate (set_mocks(..., monitor=monitor))")
    assert {"mocks", "project", "stack", "preview", "monitor"} <= set(_params(pulumi.runtime.set_mocks)), why
    monitor = _Monitor(_Spy())
    pulumi.runtime.set_mocks(monitor.mocks, project="p", stack="s", preview=False, monitor=monitor)
    assert settings.get_monitor() is monitor, why


@_isolated
def test_settings_root_is_the_context_variable_of_the_root_stack() -> None:
    """evaluate clears it so that a fresh Stack(func) may register (one root at a time)."""
    why = _why("pulumi/runtime/settings.py ROOT, get_root_resource", "tooling/plan.py evaluate, benchmarks/plan_scaling.py")
    assert isinstance(settings.ROOT, contextvars.ContextVar), why
    pulumi.runtime.set_mocks(_Spy(), project="p", stack="s", preview=False)
    assert settings.get_root_resource() is not None, "set_mocks registers a root stack of its own; " + why
    settings.ROOT.set(None)
    assert settings.get_root_resource() is None, why


@_isolated
def test_stack_runs_the_program_it_is_given() -> None:
    why = _why("pulumi/runtime/stack.py Stack", "tooling/plan.py evaluate (Stack(lambda: build(config)))")
    assert _params(Stack.__init__) == ["self", "func"], why
    ran: list[bool] = []
    pulumi.runtime.set_mocks(_Spy(), project="p", stack="s", preview=False)
    settings.ROOT.set(None)

    @pulumi.runtime.test
    def run() -> None:
        Stack(lambda: ran.append(True))

    run()
    assert ran == [True], why


def test_rpc_secret_helpers_read_the_wire_form() -> None:
    why = _why("pulumi/runtime/rpc.py is_rpc_secret, unwrap_rpc_secret", "tooling/plan.py mask_secrets")
    wrapped = {SIG_KEY: SECRET_SIG, "value": {"a": 1}}
    assert rpc.is_rpc_secret(wrapped) and not rpc.is_rpc_secret({"value": 1}), why
    assert rpc.unwrap_rpc_secret(wrapped) == {"a": 1}, why


def test_rpc_deserialize_properties_keeps_secrets_wrapped() -> None:
    why = _why("pulumi/runtime/rpc.py deserialize_properties", "tooling/plan.py _RecordingMonitor.RegisterResourceOutputs")
    assert _params(rpc.deserialize_properties)[0] == "props_struct", why
    found = rpc.deserialize_properties(_struct({"kubeconfig": {SIG_KEY: SECRET_SIG, "value": "x"}, "n": 1}))
    assert found == {"kubeconfig": {SIG_KEY: SECRET_SIG, "value": "x"}, "n": 1}, why


@_isolated
def test_set_all_config_fills_the_config_context_variable_read_by_the_stack_reader() -> None:
    why = _why(
        "pulumi/runtime/config.py CONFIG, set_all_config, get_config_env",
        "stacks/config.py read_pulumi_config and tooling/plan.py evaluate (set_all_config)",
    )
    assert isinstance(runtime_config.CONFIG, contextvars.ContextVar), why
    assert _params(pulumi.runtime.set_all_config) == ["config", "secret_keys"], why
    pulumi.runtime.set_all_config({"mlplatform:x": "1"}, secret_keys=["mlplatform:x"])
    assert runtime_config.CONFIG.get() == {"mlplatform:x": "1"}, why
    assert isinstance(runtime_config.get_config_env(), dict), why


# --- pulumi: internals the tests use ---------------------------------------------------------


def test_input_type_helpers_and_the_resource_module_registry() -> None:
    why = _why("pulumi/_types.py is_input_type, input_type_types; pulumi/runtime/rpc.py get_resource_module", "tests/test_plan.py (ignore_changes check)")
    import pulumi_gcp  # noqa: F401  (registers its resource modules)
    from pulumi import _types
    from pulumi_gcp.container import ClusterArgs

    assert _types.is_input_type(ClusterArgs) and not _types.is_input_type(dict), why
    assert "nodePools" in _types.input_type_types(ClusterArgs), why
    registered = rpc.get_resource_module("gcp", "container/cluster", "")
    assert registered is not None, why
    assert getattr(registered, "mod_info")["fqn"] == "pulumi_gcp.container", why  # noqa: B009 (not in ResourceModule's type)


# --- pulumi-policy: the policy pack's adapter (policy/pack.py) ------------------------------


def test_policy_is_unknown_recognises_every_preview_sentinel() -> None:
    why = _why("pulumi_policy/proxy.py _is_unknown", "policy/pack.py to_plain (UNKNOWN leaves)")
    from pulumi_policy import proxy

    sentinels = [
        proxy.UNKNOWN_BOOLEAN_VALUE,
        proxy.UNKNOWN_NUMBER_VALUE,
        proxy.UNKNOWN_STRING_VALUE,
        proxy.UNKNOWN_ARRAY_VALUE,
        proxy.UNKNOWN_ASSET_VALUE,
        proxy.UNKNOWN_ARCHIVE_VALUE,
        proxy.UNKNOWN_OBJECT_VALUE,
    ]
    assert proxy.UNKNOWN_STRING_VALUE == "04da6b54-80e4-46f7-96ec-b56ff0331ba9", why + " (tests/test_policy_pack.py sends it)"
    assert all(proxy._is_unknown(s) for s in sentinels), why
    others: list[Any] = ["", "x", 0, None, [], {}]
    assert not any(proxy._is_unknown(v) for v in others), why


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
