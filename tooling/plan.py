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
import contextlib
import contextvars
import gc
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import mocks, rpc

from facts import resource_types
from plumbing.base import InstallRecord
from policy.rules import SECRET  # the plan masks secrets with the leaf the policy rules read
from stackmodel.stack import PlatformConfig
from tooling.sdk_adapter import no_source_positions

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
    record: InstallRecord = field(default_factory=InstallRecord)
    """What the program's install returned besides its resources: each chart's and tree's
    transforms, moves and kept objects, the transforms of every object, the prepared trees
    (plumbing.base.InstallRecord); the full render reads it."""
    config: PlatformConfig | None = None
    """The validated config the program ran with."""

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
    def __init__(self, project: str, cloud_identity: GroupMembers | None = None, on_record: Callable[[Recorded], None] | None = None):
        self.recording_mocks = _Mocks(project, cloud_identity)
        self.on_record = on_record
        super().__init__(self.recording_mocks)
        self.records: list[Recorded] = []
        self.urns: set[str] = set()
        self.urns_lock = threading.Lock()  # registrations arrive on several threads
        self.duplicate: DuplicateUrnError | None = None
        self.thread_loops: set[asyncio.AbstractEventLoop] = set()
        """The event loops the SDK's mock monitor makes, one per executor thread it answers on
        (pulumi/runtime/mocks.py: `_ensure_event_loop`), closed with the plan's own."""

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
        if self.on_record is not None:
            self.on_record(record)

    def RegisterResource(self, request: Any) -> Any:
        # The root stack (set_mocks registers it) is the plan's frame, not one of its resources.
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
    """Registration tuned for thousands of resources in one go, offline: no source positions
    where the SDK allows it (tooling/sdk_adapter.py), and no collection while it lasts
    (few_collections, uncollected). Each registration leaves some 3,500 more tracked objects
    (the SDK's Outputs, futures, tasks and their frames); collecting every 50,000 of them cost
    about 40% of a plan's CPU at 1,000 teams (rarer collections cost the same: each traverses
    what is new since the last, and most of it survives until the run ends). Without them the
    run's cyclic garbage waits until after it (few_collections unfreezes it): 1,000 teams peak
    at 1.12 GB instead of 0.97 GB (docs/benchmarks.md)."""
    with no_source_positions(), few_collections(), uncollected():
        yield


def evaluate(
    config: PlatformConfig,
    stack: str,
    build: Callable[[PlatformConfig], InstallRecord | None] | None = None,
    cloud_identity: GroupMembers | None = None,
    on_record: Callable[[Recorded], None] | None = None,
) -> Plan:
    """Run `build` (default: the real program) for `config` under mocks (under_mocks); return what
    it registered and the install's record it returned. Cloud Identity answers each cloudIdentity
    group with its people in `cloud_identity` (none when not given: offline nobody knows them).
    `on_record` hears each resource as it is recorded, on the registering thread (the full render
    starts helm and kustomize meanwhile). Raises DuplicateUrnError where the engine would stop on
    a duplicate URN."""
    from stackmodel.secrets import offline_config

    if build is None:
        import program

        build = program.build
    monitor = _RecordingMonitor(config.project or "kind-local", cloud_identity, on_record)
    record: list[InstallRecord | None] = []
    exports: dict[str, Any] = {}

    def run() -> pulumi.Output[None]:
        record.append(build(config))
        # set_mocks made the root stack (one per context); pulumi.export filled its outputs.
        root = pulumi.runtime.get_root_resource()
        outputs: dict[str, Any] = dict(getattr(root, "outputs", None) or {})
        return pulumi.Output.from_input(_resolved_exports(outputs, exports))

    try:
        under_mocks(monitor, stack, run, config=offline_config(), thread_loops=monitor.thread_loops)
    except Exception:
        if monitor.duplicate is None:
            raise
    if monitor.duplicate is not None:
        monitor.duplicate.__traceback__ = None  # its frames hold the run's objects
        raise monitor.duplicate from None
    return Plan(stack=stack, resources=monitor.records, outputs=exports, record=record[0] or InstallRecord(), config=config)


def under_mocks(
    monitor: mocks.MockMonitor,
    stack: str,
    program: Callable[[], Any],
    config: Mapping[str, str] | None = None,
    thread_loops: Iterable[asyncio.AbstractEventLoop] = (),
) -> None:
    """Run `program` as Pulumi's unit tests run one (`pulumi.runtime.set_mocks` with `monitor`,
    `pulumi.runtime.test`), in bulk_registration, with `config` as the stack's config (all of it
    secret). It runs in a thread of its own, in a fresh context (contextvars) with an event loop
    of its own, closed before this returns with the loops the mock monitor made on its executor's
    threads (`thread_loops`): the SDK keeps its settings, root stack and config in context
    variables, so runs may go on at once or inside one another (a program may evaluate another),
    and none sees another's resources or exports. Raises what the program raised."""
    failed: list[BaseException] = []

    def run() -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        loop.set_exception_handler(_unless_duplicate)
        try:
            # A settings bag of this context's own (tasks, RPCs, lock), then the mocks over it.
            pulumi.runtime.configure(pulumi.runtime.Settings(project=PROJECT, stack=stack, dry_run=False))
            pulumi.runtime.set_mocks(monitor.mocks, project=PROJECT, stack=stack, preview=False, monitor=monitor)
            pulumi.runtime.set_all_config(dict(config or {}), secret_keys=list(config or {}))
            with bulk_registration():
                pulumi.runtime.test(program)()
        except BaseException as err:  # handed to the caller's thread
            failed.append(err)
        finally:
            _close(loop, thread_loops)

    thread = threading.Thread(target=lambda: contextvars.Context().run(run), name=f"pulumi program of {stack}", daemon=True)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]


async def _resolved_exports(outputs: dict[str, Any], into: dict[str, Any]) -> None:
    """The stack's exports as the engine stores them, into `into`: secret ones masked (SECRET
    leaves), numbers as the cluster would read them."""
    for name, value in sorted(outputs.items()):
        output = pulumi.Output.from_input(value)
        plain = whole_numbers(await output.future())
        into[name] = _mask_leaves(plain) if await output.is_secret() else plain


def _close(loop: asyncio.AbstractEventLoop, thread_loops: Iterable[asyncio.AbstractEventLoop]) -> None:
    """Close the plan's loop as asyncio.run closes its own (what is still pending cancelled:
    registrations after a duplicate URN; async generators and the executor finished), then
    the loops the mock monitor made on the executor's threads, now ended."""
    try:
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        asyncio.set_event_loop(None)
        loop.close()
        for other in thread_loops:
            if not other.is_running():
                other.close()
