"""Offline planning: run the real program for a stack under Pulumi's mocks and record
every resource it registers (type, name, parent, provider, inputs, dependencies).

No CLI, credentials or network: the mocks answer each registration with the inputs
plus a few deterministic stand-ins for values only a cloud knows (endpoints, e-mails).
The same recorder backs `python -m stacks plan|render` and the test suite.

Where Pulumi's mock monitor and the engine differ, the recorder does what the engine
does: URNs carry the parent's whole qualified type and no root-stack prefix
(pkg/resource/deploy/deployment.go `generateURN`, sdk/go/common/resource/urn/urn.go
`New`), and a second registration of one URN stops the run with the engine's error 2001
(pkg/resource/deploy/step_generator.go `generateURN`, sdk/go/common/diag/errors.go
`GetDuplicateResourceURNError`). Read in pulumi/pulumi v3.259.0, the newest tag we could
read (the 3.272.0 we install was not there); both are the same in v3.0.0 and v3.200.0.

Long by design: the offline engine in one place (the mocks, the recorder, the plan and its
lookups, the collector settings of a bulk run), each part small, all of it read together.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import _callbacks, mocks, rpc
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.stack import Stack

from facts import resource_types
from policy.rules import SECRET  # the plan masks secrets with the leaf the policy rules read
from stacks.schema import PlatformConfig

PROJECT = "mlplatform"
STACK_TYPE = resource_types.STACK


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
    retain_on_delete: bool = False
    """Pulumi's `retainOnDelete` option: a delete only drops it from the state; the object stays."""
    delete_before_replace: bool = False
    """Pulumi's `deleteBeforeReplace` option: a replacement deletes the old resource first."""
    ignore_changes: tuple[str, ...] = ()
    """Pulumi's `ignore_changes` option, as the engine receives it (input property paths)."""
    aliases: tuple[str, ...] = ()
    """The URNs this resource had before a rename (`aliases` option), as the engine resolves them."""

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
    moves: dict[tuple[str, str], tuple[Any, ...]] = field(default_factory=dict)
    """(type, name) of each chart or tree -> where its objects were before (components.base.Moved)."""
    kept: dict[tuple[str, str], Callable[[dict[str, Any]], bool]] = field(default_factory=dict)
    """(type, name) of each chart or tree -> which of its objects are protected and retained (components.base.keep)."""
    platform_transforms: tuple[Callable[[dict[str, Any]], Any], ...] = ()
    """The transforms of every object (components.base.PLATFORM_TRANSFORMS): the recorded
    inputs of our objects have been through them; the full render applies them to the rest."""
    config: PlatformConfig | None = None
    """The validated config the program ran with."""
    prepared_trees: dict[str, Any] = field(default_factory=dict)
    """Directory of each prepared Kubeflow tree an install reads -> its components.sources.PreparedTree."""

    def __post_init__(self) -> None:
        self.resources.sort(key=lambda r: r.urn)
        self._by_urn = {r.urn: r for r in self.resources}
        self._child_urns: dict[str, list[str]] = {}
        for r in self.resources:
            if r.parent:
                self._child_urns.setdefault(r.parent, []).append(r.urn)
        self._waits_for: dict[str, frozenset[str]] = {}

    def waits_for(self, resource: Recorded) -> frozenset[str]:
        """URNs `resource` waits for in Pulumi's graph: its dependencies and theirs, a
        component standing for everything under it (Pulumi waits for a component's children)."""
        if resource.urn not in self._waits_for:
            self._waits_for[resource.urn] = waiting_for(resource.dependencies, self._by_urn, self._child_urns)
        return self._waits_for[resource.urn]

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


def waiting_for(dependencies: Iterable[str], by_urn: Mapping[str, Recorded], child_urns: Mapping[str, list[str]]) -> frozenset[str]:
    """The URNs a resource with these dependencies waits for, among the resources `by_urn`
    (with their children, `child_urns`): each dependency and theirs, a component standing
    for everything under it."""
    seen: set[str] = set()
    pending = list(dependencies)
    while pending:
        urn = pending.pop()
        if urn in seen:
            continue
        seen.add(urn)
        pending += child_urns.get(urn, [])
        if urn in by_urn:
            pending += by_urn[urn].dependencies
    return frozenset(seen)


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


def whole_numbers(value: Any) -> Any:
    """Integral floats as ints. Pulumi's wire format (a protobuf Struct) carries every number
    as a double, so `port: 6380` reaches the mocks as 6380.0; the providers send it on as
    JSON, where Go writes a whole float64 without a fraction (encoding/json), so the cluster
    receives 6380. The plan and render show what the cluster receives."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole_numbers(v) for v in value]
    return value


def _fake_outputs(type_: str, name: str, inputs: dict[str, Any], project: str) -> dict[str, Any]:
    """Values a real provider would compute, so `apply`s downstream of them run under mocks."""
    if type_ == resource_types.GKE_CLUSTER:
        return {"endpoint": "203.0.113.10", "masterAuth": {"clusterCaCertificate": "bW9jay1jYQ=="}}
    if type_ == resource_types.GCP_GLOBAL_ADDRESS:
        return {"address": "203.0.113.20"}  # TEST-NET-3 (RFC 5737): the gateway's static IP
    if type_ == resource_types.GCP_SERVICE_ACCOUNT:
        return {"email": f"{inputs.get('accountId', name)}@{project}.iam.gserviceaccount.com"}
    if type_ == resource_types.RANDOM_PASSWORD:
        return {"result": "mock-random-password"}  # a secret output (pulumi-random marks it so)
    if type_ == resource_types.LOCAL_COMMAND:
        return {"stdout": "apiVersion: v1\nkind: Config\n# kubeconfig of the mocked command\n", "stderr": ""}
    return {}


MOCK_PROJECT_NUMBER = "123456789012"
"""What `gcp.organizations.get_project` answers under the mocks."""


GroupMembers = Mapping[str, Sequence[str]]
"""A Google group's e-mail -> its people's e-mails: what the mocks answer for Cloud Identity."""


def recorded_memberships(members: GroupMembers, group: str) -> list[dict[str, Any]]:
    """searchTransitiveMemberships' answer (pulumi_gcp/cloudidentity/outputs.py) for `group`
    whose people are `members[group]`: one direct membership each; none for a group not given."""
    return [
        {"member": f"users/{n}", "preferredMemberKeys": [{"id": email, "namespace": ""}], "relationType": "DIRECT", "roles": [{"role": "MEMBER"}]}
        for n, email in enumerate(members.get(group, ()))
    ]


CLOUD_IDENTITY_GROUP = "groups/"
"""Offline, a group's resource name is this and its e-mail (Cloud Identity's is `groups/<id>`)."""


class _Mocks(mocks.Mocks):
    def __init__(self, project: str, cloud_identity: GroupMembers | None = None):
        self.project = project
        self.cloud_identity = cloud_identity or {}
        # The inputs the mock monitor just deserialized, per registering thread: the
        # recorder reuses them instead of deserializing every request a second time.
        self.last = threading.local()
        self.stack_transforms: list[pulumi.ResourceTransform] = []

    def register_transform(self, transform: pulumi.ResourceTransform) -> None:
        """A stack transform (`pulumi.runtime.register_resource_transform`): the mock monitor
        runs none; the engine runs it on every later registration, and so does this recorder."""
        self.stack_transforms.append(transform)

    def _transformed(self, args: mocks.MockResourceArgs) -> dict[str, Any]:
        props = args.inputs
        for transform in self.stack_transforms:
            result = transform(
                pulumi.ResourceTransformArgs(
                    custom=bool(args.custom), type_=args.typ, name=args.name, props=props, opts=pulumi.ResourceOptions()
                )
            )
            if isinstance(result, pulumi.ResourceTransformResult):
                props = dict(result.props)
        return props

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str | None, dict[Any, Any]]:
        inputs = self._transformed(args) if self.stack_transforms else args.inputs
        self.last.inputs = inputs
        outputs = {**inputs, **_fake_outputs(args.typ, args.name, inputs, self.project)}
        outputs.setdefault("name", args.name)
        return f"{args.name}-id", outputs

    def call(self, args: mocks.MockCallArgs) -> tuple[dict[Any, Any], list[tuple[str, str]] | None]:
        if args.token == resource_types.GCP_GET_PROJECT:
            # A project's number names its service agents (infra/gke.py); the docs' example number.
            return {"projectId": args.args.get("projectId", self.project), "number": MOCK_PROJECT_NUMBER}, []
        if args.token == resource_types.GCP_GROUP_LOOKUP:
            key = args.args["groupKey"]
            return {"groupKey": key, "id": f"{CLOUD_IDENTITY_GROUP}{key['id']}", "name": f"{CLOUD_IDENTITY_GROUP}{key['id']}"}, []
        if args.token == resource_types.GCP_GROUP_TRANSITIVE_MEMBERSHIPS:
            group = args.args["group"]
            memberships = recorded_memberships(self.cloud_identity, group.removeprefix(CLOUD_IDENTITY_GROUP))
            return {"group": group, "id": group, "memberships": memberships}, []
        return {}, []  # no failures (the mock monitor iterates them: None would raise)


class DuplicateUrnError(RuntimeError):
    """Two resources registered with one URN. The engine stops the deployment there, with
    this message (error 2001, sdk/go/common/diag/errors.go); so does `evaluate`."""

    def __init__(self, urn: str):
        self.urn = urn
        super().__init__(f"Duplicate resource URN '{urn}'; try giving it a unique name")


def engine_urn(stack: str, project: str, parent: str, type_: str, name: str) -> str:
    """The URN the engine gives a resource: its parent's whole qualified type (not only the
    parent's own type, as the mock monitor has it), none for children of the root stack."""
    parent_type = parent.split("::")[2] if parent else ""
    qualified = type_ if parent_type in ("", STACK_TYPE) else f"{parent_type}${type_}"
    return f"urn:pulumi:{stack}::{project}::{qualified}::{name}"


class _RecordingMonitor(mocks.MockMonitor):
    def __init__(self, project: str, cloud_identity: GroupMembers | None = None):
        self.recording_mocks = _Mocks(project, cloud_identity)
        super().__init__(self.recording_mocks)
        self.records: list[Recorded] = []
        self.outputs: dict[str, Any] = {}
        self.urns: set[str] = set()
        self.urns_lock = threading.Lock()  # registrations arrive on several threads
        self.duplicate: DuplicateUrnError | None = None
        self.thread_loops: set[asyncio.AbstractEventLoop] = set()
        """The event loops the SDK's mock monitor makes, one per executor thread it answers on
        (pulumi/runtime/mocks.py: `_ensure_event_loop`), closed at exit with the plan's own."""

    def _note_loop(self) -> None:
        with contextlib.suppress(RuntimeError):  # none made on this thread: it failed before it needed one
            self.thread_loops.add(asyncio.get_event_loop())

    def Invoke(self, request: Any) -> Any:
        try:
            return super().Invoke(request)
        finally:
            self._note_loop()

    def ReadResource(self, request: Any) -> Any:
        try:
            return super().ReadResource(request)
        finally:
            self._note_loop()

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        return engine_urn(pulumi.get_stack(), pulumi.get_project(), parent, type_, name)

    def _claim(self, urn: str) -> None:
        with self.urns_lock:
            if urn in self.urns:
                # The engine answers the registration with this error and bails out.
                self.duplicate = self.duplicate or DuplicateUrnError(urn)
                raise self.duplicate
            self.urns.add(urn)

    def _alias_urns(self, request: Any) -> tuple[str, ...]:
        """Each alias as a URN, filled in from the resource as the engine does
        (pkg/resource/deploy/step_generator.go `collapseAliasToUrn`)."""
        urns = []
        for alias in request.aliases:
            if alias.WhichOneof("alias") == "urn":
                urns.append(alias.urn)
                continue
            spec = alias.spec
            parent = "" if spec.noParent else spec.parentUrn or request.parent
            urns.append(
                engine_urn(
                    spec.stack or pulumi.get_stack(),
                    spec.project or pulumi.get_project(),
                    parent,
                    spec.type or request.type,
                    spec.name or request.name,
                )
            )
        return tuple(sorted(urns))

    def _recorded(self, record: Recorded) -> None:
        self.records.append(record)
        for hook in RECORDED_HOOKS:
            hook(record)

    def RegisterResource(self, request: Any) -> Any:
        # `set_mocks` registers a root stack of its own before `evaluate` starts a fresh
        # one (pulumi/runtime/mocks.py); the engine only ever sees the program's.
        if request.type != STACK_TYPE:
            self._claim(self.make_urn(request.parent, request.type, request.name))
        response = super().RegisterResource(request)
        self._note_loop()
        if request.type != STACK_TYPE:
            self._recorded(
                Recorded(
                    type=request.type,
                    name=request.name,
                    urn=response.urn,
                    parent=request.parent or None,
                    provider=request.provider or None,
                    dependencies=tuple(sorted(set(request.dependencies))),
                    inputs=whole_numbers(mask_secrets(self.recording_mocks.last.inputs)),
                    custom=bool(request.custom),
                    protect=bool(request.protect),
                    retain_on_delete=bool(request.retainOnDelete),
                    delete_before_replace=bool(request.deleteBeforeReplace),
                    ignore_changes=tuple(request.ignoreChanges),
                    aliases=self._alias_urns(request),
                )
            )
        return response

    def RegisterResourceOutputs(self, request: Any) -> Any:
        if request.urn.split("::")[2] == STACK_TYPE:
            self.outputs = whole_numbers(mask_secrets(rpc.deserialize_properties(request.outputs)))
        return super().RegisterResourceOutputs(request)


RECORDED_HOOKS: list[Callable[[Recorded], None]] = []
"""Called with each resource as the plan records it (on the registering thread): the full
render starts building kustomize trees while the rest of the plan is evaluated."""


def _unless_duplicate(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's handler for errors nobody awaited: a duplicate URN fails every registration
    after it, and evaluate raises it once; the rest is reported as asyncio would."""
    if not isinstance(context.get("exception"), DuplicateUrnError):
        loop.default_exception_handler(context)


BULK_GC_THRESHOLDS = (50_000, 20, 100)
"""Collector thresholds for a process that builds and keeps many objects: collections run
70x less often than Python's default (700, 10, 10)."""


@contextmanager
def few_collections() -> Iterator[None]:
    """Garbage collection for a step that builds and keeps many objects (a plan, a full
    render's parsed YAML, a check). Python's default thresholds collect the young generation
    every 700 allocations and rescan everything alive, which made plan time grow faster than
    the number of teams (benchmarks/plan_scaling.py) and made parsing a render's 17 MB of YAML
    next to a plan take 4x as long as parsing it alone. Objects alive before the step are
    frozen out of the collector's view and collections run 70x less often; settings are
    restored after. No collection runs first: in a process holding much (the test suite keeps
    full renders) a full collection per step cost more than the step; what garbage is frozen
    with the rest is collected after the unfreeze. Nested uses keep the outer settings."""
    if _collecting_rarely:
        yield
        return
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*BULK_GC_THRESHOLDS)
    _collecting_rarely.append(True)
    try:
        yield
    finally:
        _collecting_rarely.pop()
        gc.set_threshold(*thresholds)
        gc.unfreeze()


@contextmanager
def uncollected() -> Iterator[None]:
    """For a step inside few_collections that builds many objects and no garbage (parsing
    YAML: trees of fresh nodes, dicts and lists): no collection meanwhile, and what it built
    frozen after, with what was alive before the outer step (few_collections unfreezes it),
    so no later collection traverses it either. Parsing dev's 17 MB of helm and kustomize
    output spent 3.5 s in collections that freed nothing, twice the parse itself; left in
    the young generation, the whole parse was traversed by the first collection after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _collecting_rarely:
            gc.freeze()
        if enabled:
            gc.enable()


_collecting_rarely: list[bool] = []
"""Non-empty inside few_collections (an inner use must not unfreeze what the outer froze)."""


@contextmanager
def bulk_registration() -> Iterator[None]:
    """Registration tuned for thousands of resources in one go, offline: few_collections, and
    no source positions. The SDK captures the Python stack of every resource it registers, for
    the engine's diagnostics (pulumi/runtime/resource.py register_resource). Offline nothing
    reads them; the capture was a sixth of a plan's time. Each registration gets an empty
    stack trace instead, which the SDK reads as "no source position".
    """
    capture = sdk_resource._get_stack_trace
    sdk_resource._get_stack_trace = source_pb2.StackTrace
    try:
        with few_collections():
            yield
    finally:
        sdk_resource._get_stack_trace = capture


def _release_callbacks(servers: list[weakref.ref[Any]]) -> None:
    """Free the SDK's callbacks servers (grpc.aio servers that carry the program's
    transforms; `servers`: weak references to those this run made) while their event loop
    is still open.

    The SDK stops each server at the end of the run but keeps the objects: its settings hold
    the last one as a context-variable default (pulumi/_utils.py ContextProperty.fset keeps
    a value set where none was as the default), and each servicer and its server refer to
    each other (the server's handlers are the servicer's methods). grpc shuts its asyncio
    machinery down only when a server object is freed, so it lived until interpreter exit,
    where the order in which objects die is arbitrary: a poller socket already closed made
    grpc's `loop.remove_reader` raise `ValueError: Invalid file descriptor: -1` ("Exception
    ignored in ...", with a traceback) at the end of long runs. Setting the property again
    from this context clears that default; dropping each servicer's reference to its
    (stopped) server frees the server at once. Where one is still held (after a failed
    registration, the failing frames in the futures' tracebacks), a collection of this
    run's objects frees it: the heap before it is frozen (bulk_registration), but it still
    scans everything the run imported and built (0.4 s on dev), so only then."""
    settings = pulumi.runtime.settings.SETTINGS
    settings.callbacks = None
    # The run's tasks and RPCs, as the SDK's own `test` wrapper drops them before the next
    # run: after a failed registration their futures keep the failing frames (and the
    # server) in their tracebacks.
    settings.outputs.clear()
    settings.rpc_manager.clear()
    for servicer in list(_SERVICERS):
        servicer._server = None
    _SERVICERS.clear()
    if any(server() is not None for server in servers):
        gc.collect()


_SERVICERS: weakref.WeakSet[Any] = weakref.WeakSet()
"""The SDK's callback servicers made during the current evaluation (_noting_servers)."""


@contextmanager
def _noting_servers() -> Iterator[list[weakref.ref[Any]]]:
    """Weak references to the grpc servers of the callback servicers the SDK makes meanwhile
    (it may make several in one run: concurrent registrations each start one)."""
    servers: list[weakref.ref[Any]] = []
    make = _callbacks._CallbackServicer.__init__

    def noting(servicer: Any, monitor: Any) -> None:
        make(servicer, monitor)
        _SERVICERS.add(servicer)
        servers.append(weakref.ref(servicer._server))

    _callbacks._CallbackServicer.__init__ = noting  # type: ignore[method-assign,assignment]
    try:
        yield servers
    finally:
        _callbacks._CallbackServicer.__init__ = make  # type: ignore[method-assign]


_LOOPS: list[asyncio.AbstractEventLoop] = []
"""Every event loop a plan ran on or the mock monitor made, closed at exit (_close_loops)."""


def _current_loop() -> asyncio.AbstractEventLoop | None:
    """The thread's current event loop, without making one (asyncio.get_event_loop makes one
    in the main thread when none is set, with a DeprecationWarning from Python 3.12); None
    when there is none or it cannot be told."""
    local = getattr(asyncio.get_event_loop_policy(), "_local", None)
    loop = getattr(local, "_loop", None)
    return loop if isinstance(loop, asyncio.AbstractEventLoop) else None


def _plan_loop() -> asyncio.AbstractEventLoop:
    """The loop a plan runs on: the thread's current one (as the SDK's own `test` wrapper
    would use, with whatever a caller's set_mocks left on it), or a new one made current;
    either is closed at exit."""
    loop = _current_loop()
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
    _close_at_exit(loop)
    return loop


def _close_at_exit(loop: asyncio.AbstractEventLoop) -> None:
    if not _LOOPS:
        atexit.register(_close_loops)
    if loop not in _LOOPS:
        _LOOPS.append(loop)


def _close_loops() -> None:
    """Close every loop plans used, as asyncio.run closes its own: what is still pending
    cancelled (registrations after a duplicate URN, a root stack a caller's set_mocks left),
    async generators and the default executor finished. It runs at exit, before the
    interpreter tears objects down: a loop left open is closed by its finaliser then, in
    arbitrary order and possibly after its self-pipe socket, which printed `ValueError:
    Invalid file descriptor: -1` with a traceback (and pending tasks print "Task was
    destroyed but it is pending")."""
    for loop in _LOOPS:
        if loop.is_closed() or loop.is_running():
            continue
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
    _LOOPS.clear()


def evaluate(
    config: PlatformConfig,
    stack: str,
    build: Callable[[PlatformConfig], None] | None = None,
    cloud_identity: GroupMembers | None = None,
) -> Plan:
    """Run `build` (default: the real program) for `config` under mocks; return what it registered.
    Cloud Identity answers each cloudIdentity group with its people in `cloud_identity` (none
    when not given: offline nobody knows them). Raises DuplicateUrnError where the engine would
    stop on a duplicate URN."""
    if build is None:
        import program

        build = program.build
    monitor = _RecordingMonitor(config.project or "kind-local", cloud_identity)

    @pulumi.runtime.test
    def run() -> None:
        asyncio.get_running_loop().set_exception_handler(_unless_duplicate)
        Stack(lambda: build(config))

    _plan_loop()
    pulumi.runtime.set_mocks(monitor.mocks, project=PROJECT, stack=stack, preview=False, monitor=monitor)
    # A fresh root stack per evaluation, so two plans in one process never share state;
    # Stack(func) runs the program and registers its exports as the engine would.
    pulumi.runtime.settings.ROOT.set(None)
    from components.base import INSTALL_KEPT, INSTALL_MOVES, INSTALL_TRANSFORMS, PLATFORM_TRANSFORMS, PREPARED_TREES
    from stacks.secrets import offline_config

    INSTALL_TRANSFORMS.clear()
    INSTALL_MOVES.clear()
    INSTALL_KEPT.clear()
    PLATFORM_TRANSFORMS.clear()
    PREPARED_TREES.clear()
    placeholders = offline_config()
    pulumi.runtime.set_all_config(placeholders, secret_keys=list(placeholders))
    with bulk_registration(), _noting_servers() as servers:
        try:
            run()
        except Exception:
            if monitor.duplicate is None:
                raise
        finally:
            if monitor.duplicate is not None:
                # Its traceback (the registrations' frames) holds the callbacks server.
                monitor.duplicate.__traceback__ = None
            _release_callbacks(servers)
            for loop in monitor.thread_loops:
                _close_at_exit(loop)
    if monitor.duplicate is not None:
        raise monitor.duplicate from None
    return Plan(
        stack=stack,
        resources=monitor.records,
        outputs=monitor.outputs,
        transforms=dict(INSTALL_TRANSFORMS),
        moves=dict(INSTALL_MOVES),
        kept=dict(INSTALL_KEPT),
        platform_transforms=tuple(PLATFORM_TRANSFORMS),
        prepared_trees=dict(PREPARED_TREES),
        config=config,
    )
