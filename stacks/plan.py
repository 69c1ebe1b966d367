"""Offline planning: run the real program for a stack under Pulumi's mocks and record
every resource it registers (type, name, parent, provider, inputs, dependencies).

No CLI, credentials or network: the mocks answer each registration with the inputs
plus a few deterministic stand-ins for values only a cloud knows (endpoints, e-mails).
The same recorder backs `python -m stacks plan|render` and the test suite.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import pulumi
from pulumi.runtime import mocks, rpc
from pulumi.runtime.stack import Stack

from stacks.schema import PlatformConfig

PROJECT = "mlplatform"
SECRET = "[secret]"
STACK_TYPE = "pulumi:pulumi:Stack"


@dataclass(frozen=True)
class Recorded:
    """One registered resource as the engine would have seen it. Secrets are masked."""

    type: str
    name: str
    urn: str
    parent: str | None
    provider: str | None
    dependencies: tuple[str, ...]
    inputs: dict[str, Any]
    custom: bool
    protect: bool = False
    """Pulumi's `protect` option: the engine refuses to delete the resource."""

    @property
    def provider_urn(self) -> str | None:
        """The provider reference without its `::<id>` suffix."""
        return self.provider.rsplit("::", 1)[0] if self.provider else None


@dataclass
class Plan:
    """Everything one evaluation of the program registered, in a deterministic order."""

    stack: str
    resources: list[Recorded]
    outputs: dict[str, Any] = field(default_factory=dict)
    transforms: dict[tuple[str, str], tuple[Callable[[dict[str, Any]], Any], ...]] = field(default_factory=dict)
    """(type, name) of each chart or tree -> the transforms the program gave it (components.base)."""
    config: PlatformConfig | None = None
    """The validated config the program ran with."""

    def __post_init__(self) -> None:
        self.resources.sort(key=lambda r: r.urn)
        self._by_urn = {r.urn: r for r in self.resources}

    def get(self, urn: str) -> Recorded:
        return self._by_urn[urn]

    def of_type(self, type_: str) -> list[Recorded]:
        return [r for r in self.resources if r.type == type_]

    def one(self, type_: str, name: str) -> Recorded:
        found = [r for r in self.resources if r.type == type_ and r.name == name]
        if len(found) != 1:
            names = sorted(r.name for r in self.of_type(type_))
            raise LookupError(f"{len(found)} resources {type_} named {name!r}; have: {names}")
        return found[0]

    def children(self, parent: Recorded | None) -> list[Recorded]:
        key = parent.urn if parent else None
        return sorted(
            (r for r in self.resources if r.parent == key or (key is None and r.parent not in self._by_urn)),
            key=lambda r: (r.type, r.name),
        )

    def ancestors(self, resource: Recorded) -> Iterator[Recorded]:
        parent = resource.parent
        while parent in self._by_urn:
            node = self._by_urn[parent]
            yield node
            parent = node.parent

    def counts(self) -> dict[str, int]:
        result: dict[str, int] = {}
        for r in self.resources:
            result[r.type] = result.get(r.type, 0) + 1
        return dict(sorted(result.items()))


def _mask_leaves(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _mask_leaves(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_leaves(v) for v in value]
    return SECRET


def mask_secrets(value: Any) -> Any:
    """Replace every value inside a secret with SECRET, keeping its shape (keys stay
    readable and the object stays schema-valid); keep the rest."""
    if rpc.is_rpc_secret(value):
        return _mask_leaves(rpc.unwrap_rpc_secret(value))
    if isinstance(value, dict):
        return {k: mask_secrets(v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_secrets(v) for v in value]
    return value


def _fake_outputs(type_: str, name: str, inputs: dict[str, Any], project: str) -> dict[str, Any]:
    """Values a real provider would compute, so `apply`s downstream of them run under mocks."""
    if type_ == "gcp:container/cluster:Cluster":
        return {"endpoint": "203.0.113.10", "masterAuth": {"clusterCaCertificate": "bW9jay1jYQ=="}}
    if type_ == "gcp:serviceaccount/account:Account":
        return {"email": f"{inputs.get('accountId', name)}@{project}.iam.gserviceaccount.com"}
    if type_ == "random:index/randomPassword:RandomPassword":
        return {"result": "mock-random-password"}  # a secret output (pulumi-random marks it so)
    if type_ == "command:local:Command":
        return {"stdout": "apiVersion: v1\nkind: Config\n# kubeconfig of the mocked command\n", "stderr": ""}
    return {}


class _Mocks(mocks.Mocks):
    def __init__(self, project: str):
        self.project = project
        # The inputs the mock monitor just deserialized, per registering thread: the
        # recorder reuses them instead of deserializing every request a second time.
        self.last = threading.local()

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str | None, dict[Any, Any]]:
        self.last.inputs = args.inputs
        outputs = {**args.inputs, **_fake_outputs(args.typ, args.name, args.inputs, self.project)}
        outputs.setdefault("name", args.name)
        return f"{args.name}-id", outputs

    def call(self, args: mocks.MockCallArgs) -> tuple[dict[Any, Any], list[tuple[str, str]] | None]:
        return {}, None


class _RecordingMonitor(mocks.MockMonitor):
    def __init__(self, project: str):
        self.recording_mocks = _Mocks(project)
        super().__init__(self.recording_mocks)
        self.records: list[Recorded] = []
        self.outputs: dict[str, Any] = {}

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        if request.type != STACK_TYPE:
            self.records.append(
                Recorded(
                    type=request.type,
                    name=request.name,
                    urn=response.urn,
                    parent=request.parent or None,
                    provider=request.provider or None,
                    dependencies=tuple(sorted(set(request.dependencies))),
                    inputs=mask_secrets(self.recording_mocks.last.inputs),
                    custom=bool(request.custom),
                    protect=bool(request.protect),
                )
            )
        return response

    def RegisterResourceOutputs(self, request: Any) -> Any:
        if request.urn.split("::")[2] == STACK_TYPE:
            self.outputs = mask_secrets(rpc.deserialize_properties(request.outputs))
        return super().RegisterResourceOutputs(request)


@contextmanager
def bulk_registration() -> Iterator[None]:
    """Garbage collection tuned for registering thousands of resources in one go.

    Python's default thresholds collect the young generation every 700 allocations and
    rescan everything alive, which made plan time grow faster than the number of teams
    (benchmarks/plan_scaling.py). Objects alive before the run are frozen out of the
    collector's view and collections run 70x less often; settings are restored after.
    """
    thresholds = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def evaluate(config: PlatformConfig, stack: str, build: Callable[[PlatformConfig], None] | None = None) -> Plan:
    """Run `build` (default: the real program) for `config` under mocks; return what it registered."""
    if build is None:
        import program

        build = program.build
    monitor = _RecordingMonitor(config.project or "kind-local")
    pulumi.runtime.set_mocks(monitor.mocks, project=PROJECT, stack=stack, preview=False, monitor=monitor)
    # A fresh root stack per evaluation, so two plans in one process never share state;
    # Stack(func) runs the program and registers its exports as the engine would.
    pulumi.runtime.settings.ROOT.set(None)
    from components.secrets import offline_config

    from components.base import INSTALL_TRANSFORMS

    INSTALL_TRANSFORMS.clear()
    placeholders = offline_config()
    pulumi.runtime.set_all_config(placeholders, secret_keys=list(placeholders))

    @pulumi.runtime.test
    def run() -> None:
        Stack(lambda: build(config))

    with bulk_registration():
        run()
    return Plan(
        stack=stack, resources=monitor.records, outputs=monitor.outputs, transforms=dict(INSTALL_TRANSFORMS), config=config
    )
