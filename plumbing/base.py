"""Plumbing shared by every in-cluster component: the provider once, children parented,
and installing upstream software the way its maintainers publish it (pinned)."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from facts import resource_types
from facts.versions import Pin, ReleaseManifest
from infra.cluster import Cluster
from infra.component import Component
from plumbing.postrender import omitting
from plumbing.sources import PreparedTree, chart_source, kubeflow_tree, prepared_tree, release_manifest_source
from stackmodel.schema import Sources

PropsTransform = Callable[[dict[str, Any]], "dict[str, Any] | None"]
"""A change to one rendered object, on plain data: the object's properties in, the changed
properties out, or None to leave it alone. `pulumi up` applies it as a resource transform
to every object a chart or tree renders; the offline full render applies the same function,
and fails when one of them changes no object at all (the upstream object it was written for
is gone or renamed). Give it a name: a named function, or a `functools.partial` of one."""

HELM_CHART_TYPE = resource_types.HELM_CHART
KUSTOMIZE_TYPE = resource_types.KUSTOMIZE
CONFIG_FILE_TYPE = resource_types.CONFIG_FILE


@dataclass(frozen=True)
class UpstreamArgs:
    """What every component that installs upstream software needs."""

    sources: Sources
    """Where its charts and Kubeflow trees come from (`mlplatform:sources`)."""


@dataclass(frozen=True)
class ChartArgs(UpstreamArgs):
    """A component installed from a Helm chart: the Args of one that needs nothing else
    (cert-manager, JobSet, KubeRay, Trainer's chart), the base of the others'."""

    values: Mapping[str, Any] = field(default_factory=dict, kw_only=True)
    """The stack's overlay of the chart's values (`mlplatform:components.<name>.values`),
    merged over the platform's last (overlay_values)."""


@dataclass(frozen=True)
class ObjectStoreKeys:
    """A team's key pair for an object store a component keeps for the teams (Pipelines' in-cluster
    store: components/pipelines.py makes them, the team's namespace holds them), Pulumi secrets."""

    access_key: pulumi.Input[str]
    secret_key: pulumi.Input[str]


def overlay_values(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """A chart's values with the stack's overlay (`mlplatform:components.<name>.values`) over
    them, last: mappings merge key by key, all the way down; anything else the overlay gives
    (a list, a string, a number, a boolean) replaces the value whole. The schema refuses
    null (stackmodel/schema.py CHART_VALUES_RULE)."""
    merged = dict(base)
    for key, value in overlay.items():
        below = merged.get(key)
        if isinstance(value, Mapping) and isinstance(below, Mapping):
            merged[key] = overlay_values(below, value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def transform_name(transform: Callable[..., Any]) -> str:
    """The transform's name for messages: the function's, through any `functools.partial`."""
    while isinstance(transform, partial):
        transform = transform.func
    return getattr(transform, "__name__", repr(transform))


def everything(props: dict[str, Any]) -> bool:
    return True


@dataclass(frozen=True)
class Moved:
    """Objects an install renders that an earlier release of this program created as children
    of another install (another tree or chart, maybe under another component): Pulumi adopts
    each under its new URN through an alias (the old URN), instead of creating it anew, which
    would collide with the live object (AlreadyExists), and deleting the old one, which for a
    CRD deletes every object of its kind. The live objects keep their Kubernetes names."""

    component: str
    """Type token of the component that held the old install (a child of the stack)."""
    install_type: str
    """KUSTOMIZE_TYPE or HELM_CHART_TYPE: what the old install was."""
    install: str
    """The old install's resource name, which prefixed its children's names."""
    objects: Callable[[dict[str, Any]], bool] = everything
    """Which of the install's objects moved (their properties as rendered)."""
    renamed: tuple[tuple[str, str], ...] = ()
    """(name as rendered, name it had) of objects the old install rendered under another
    `metadata.name` (a transform keeps the old name on the live object)."""


def nothing(props: dict[str, Any]) -> bool:
    return False


def keep() -> pulumi.ResourceOptions:
    """The resource options of what holds data Pulumi must never delete on its own (volumes of a
    database, an object store, checkpoints): protected, kept in the cluster when its resource goes."""
    return pulumi.ResourceOptions(protect=True, retain_on_delete=True)


def child_type(props: dict[str, Any]) -> str:
    """The Pulumi type of an object a chart or tree renders: `kubernetes:<group>/<version>:<Kind>`,
    the core group as `core` (pulumi-kubernetes yaml/v2 RegisterResource)."""
    api_version = props.get("apiVersion", "")
    return f"kubernetes:{api_version if '/' in api_version else f'core/{api_version}'}:{props.get('kind', '')}"


def child_name(prefix: str, props: dict[str, Any]) -> str:
    """The resource name pulumi-kubernetes gives an object of a chart or tree: `<prefix>:<namespace>/<name>`,
    cluster-scoped `<prefix>:<name>`; the prefix is the install's name (provider/pkg/provider/yaml/v2/yaml.go
    `register`, 4.x)."""
    meta = props.get("metadata") or {}
    name = f"{meta['namespace']}/{meta.get('name', '')}" if meta.get("namespace") else meta.get("name", "")
    return f"{prefix}:{name}"


def install_child_urn(stack: str, project: str, component: str, install_type: str, type_: str, name: str) -> str:
    """The URN of a child of an install under a component that is a child of the stack
    (the engine qualifies a type with its ancestors' types, the stack excepted)."""
    return f"urn:pulumi:{stack}::{project}::{component}${install_type}${type_}::{name}"


def component_child_urn(component: str, type_: str, name: str) -> str:
    """The URN of a resource of this stack whose parent is a component (type token `component`)
    that is a child of the stack: what the engine makes of `pulumi.Alias(name=...)` for it. An
    alias given as this string reaches the engine as it is; an Alias costs the SDK a chain of
    Outputs per resource (a tenth of the plan of a stack of many teams)."""
    return f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{component}${type_}::{name}"


def moved_aliases(moves: Sequence[Moved], props: dict[str, Any], type_: str, name: str, stack: str, project: str) -> list[str]:
    """The old URNs of one object an install renders (`name`: its resource name, `<prefix>:<rest>`)."""
    rest = name.split(":", 1)[1] if ":" in name else name
    urns = []
    for move in moves:
        if not move.objects(props):
            continue
        namespace, _, own = rest.rpartition("/")
        own = dict(move.renamed).get(own, own)
        urns.append(install_child_urn(stack, project, move.component, move.install_type, type_, f"{move.install}:{f'{namespace}/' if namespace else ''}{own}"))
    return urns


@dataclass
class InstallRecord:
    """What installing the platform hands the offline tools besides the resources it registers:
    `pulumi up` gives the engine each install's transforms, aliases and options, the mocks see
    none of them, so the full render takes them from here. Each PlatformComponent records its
    own installs (`PlatformComponent.installs`); the composition gathers them into one record
    (components/platform.py install), `program.build` returns it, the offline plan keeps it
    (tooling/plan.py Plan.record) and the full render reads it (tooling/fullrender.py). One per
    evaluation, passed by value: two evaluations never see each other's."""

    transforms: dict[tuple[str, str], tuple[PropsTransform, ...]] = field(default_factory=dict)
    """(resource type, name) of each chart or tree -> its transforms, as the program gave them."""
    moves: dict[tuple[str, str], tuple[Moved, ...]] = field(default_factory=dict)
    """(resource type, name) of each chart or tree -> where its objects were before (Moved)."""
    kept: dict[tuple[str, str], Callable[[dict[str, Any]], bool]] = field(default_factory=dict)
    """(resource type, name) of each chart or tree -> which of its objects get `keep()`."""
    prepared_trees: dict[str, PreparedTree] = field(default_factory=dict)
    """Directory of each prepared tree an install reads (plumbing/sources.py PreparedTree) -> what
    it is prepared from; the offline render writes them before it builds (plumbing/trees.py)."""
    platform_transforms: list[PropsTransform] = field(default_factory=list)
    """Transforms of every Kubernetes object the stack installs: each chart's and tree's objects
    and our own (the image rewrite, plumbing/images.py), in the order registered. `pulumi up`
    runs them as stack transforms; the offline plan records our objects through them and the
    full render applies them to every rendered object, after an install's own transforms (the
    engine's order: a resource's own transforms, its parents', then the stack's; pulumi/pulumi
    pkg/resource/deploy/source_eval.go RegisterResource). Unlike an install's own, one that
    changes nothing in an install is fine: they are for whatever object needs them."""
    team_keys: dict[str, ObjectStoreKeys] = field(default_factory=dict)
    """Per team, its key pair of the in-cluster object store (components/pipelines.py), handed
    to the team's namespace (components/profiles)."""

    def install(self, type_: str, name: str, transforms: Sequence[PropsTransform], moves: Sequence[Moved], kept: Callable[[dict[str, Any]], bool]) -> None:
        """One chart or tree: what its objects go through, where they were before, which hold data."""
        key = (type_, name)
        if key in self.transforms:
            raise ValueError(f"two installs {type_} named {name!r}: the offline render could not tell their transforms apart")
        self.transforms[key], self.moves[key], self.kept[key] = tuple(transforms), tuple(moves), kept

    def add(self, other: InstallRecord) -> None:
        """Gather `other` (a component's own record) into this one."""
        for key in other.transforms:
            self.install(*key, other.transforms[key], other.moves[key], other.kept[key])
        self.prepared_trees.update(other.prepared_trees)
        self.platform_transforms += other.platform_transforms
        self.team_keys.update(other.team_keys)


def apply_transforms(props: dict[str, Any], transforms: Sequence[PropsTransform]) -> dict[str, Any] | None:
    """`props` after every transform in order; None when none of them changed it."""
    changed = False
    for transform in transforms:
        result = transform(props)
        if result is not None:
            props, changed = result, True
    return props if changed else None


def resource_transform(
    transforms: Sequence[PropsTransform],
    moves: Sequence[Moved] = (),
    objects_only: bool = False,
    kept: Callable[[dict[str, Any]], bool] = nothing,
) -> pulumi.ResourceTransform:
    """The pure transforms, and the aliases of moved objects, as one Pulumi resource transform;
    `objects_only`: of Kubernetes objects alone (is_object), every other registration left as it is;
    `kept`: which objects (as rendered) hold data, and get `keep()`."""

    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        if objects_only and not is_object(args.type_, dict(args.props)):
            return None
        props = apply_transforms(dict(args.props), transforms)
        aliases = moved_aliases(moves, dict(args.props), args.type_, args.name, pulumi.get_stack(), pulumi.get_project())
        holds_data = kept(dict(args.props))
        if props is None and not aliases and not holds_data:
            return None
        opts = args.opts
        if aliases:
            opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(aliases=aliases))
        if holds_data:
            opts = pulumi.ResourceOptions.merge(opts, keep())
        return pulumi.ResourceTransformResult(props=props if props is not None else args.props, opts=opts)

    return transform


def is_object(resource_type: str, props: dict[str, Any]) -> bool:
    """Whether a registration is a Kubernetes object (typed, or a chart's or tree's child),
    not a provider, chart, tree or any other resource."""
    return (
        resource_type.startswith("kubernetes:")
        and resource_type not in resource_types.UPSTREAM_INSTALLS
        and "kind" in props
        and "apiVersion" in props
    )


def transform_every_object(record: InstallRecord, transform: PropsTransform) -> None:
    """Apply `transform` to every Kubernetes object of the stack from here on: a stack
    transform for `pulumi up` (it reaches the children of charts and trees too), and in
    `record` (InstallRecord.platform_transforms) for the offline plan and render. Call it
    before any object is registered (components/platform.py does, first)."""
    record.platform_transforms.append(transform)
    pulumi.runtime.register_resource_transform(resource_transform([transform], objects_only=True))


def matches(props: dict[str, Any], kind: str, name: str) -> bool:
    """Whether `props` are the object `kind`/`name` (any namespace)."""
    return (props.get("kind"), (props.get("metadata") or {}).get("name")) == (kind, name)


CONFIG_DIGEST_ANNOTATION = "mlplatform.io/config-digest"
"""On a pod template: a digest of the configuration the program writes into ConfigMaps and
Secrets that the pod's processes read only at start. Kubernetes rolls a workload only when
its pod template changes, and a ConfigMap keeps the name kustomize hashed from the release's
content whatever we write into it: the digest is what makes a change reach the pods
(`python -m stacks check` rule config-rolls requires it)."""


def _digest(values: Sequence[Any]) -> str:
    return hashlib.sha256(json.dumps(list(values), sort_keys=True, default=str).encode()).hexdigest()[:16]


def config_digest(*inputs: Any) -> Any:
    """A short digest of `inputs` (plain data, or Pulumi Outputs such as generated passwords):
    a string when every input is plain, else an Output that is not secret (16 hex characters
    of a SHA-256 reveal nothing of the values, and a secret annotation would hide the whole
    workload's diff in `pulumi preview`)."""
    if not any(isinstance(value, pulumi.Output) for value in inputs):
        return _digest(inputs)
    return pulumi.Output.unsecret(pulumi.Output.all(*inputs).apply(_digest))


def with_config_digest(props: dict[str, Any], workloads: tuple[tuple[str, str], ...], digest: Any) -> dict[str, Any] | None:
    """Each of `workloads` ((kind, name) pairs) with `digest` (config_digest) on its pod template."""
    if not any(matches(props, kind, name) for kind, name in workloads):
        return None
    template = props["spec"]["template"]
    meta = template.get("metadata") or {}
    annotations = {**(meta.get("annotations") or {}), CONFIG_DIGEST_ANNOTATION: digest}
    return {**props, "spec": {**props["spec"], "template": {**template, "metadata": {**meta, "annotations": annotations}}}}


SPEC_KINDS: dict[str, Any] = {
    kind.__name__: kind for kind in (
        *(k8s.networking.v1.NetworkPolicy, k8s.core.v1.Service, k8s.core.v1.LimitRange, k8s.core.v1.PersistentVolume),
        *(k8s.core.v1.PersistentVolumeClaim, k8s.apps.v1.Deployment, k8s.batch.v1.CronJob),
        *(k8s.admissionregistration.v1.ValidatingAdmissionPolicy, k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding),
    )
}
"""Built-in kinds whose content is their `spec`: each made as its typed resource."""


def apply_manifest(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> pulumi.Resource:
    """The typed resource for a built-in kind, a CustomResource for everything else."""
    meta, kind = obj["metadata"], obj["kind"]
    if kind in SPEC_KINDS:
        return SPEC_KINDS[kind](name, metadata=meta, spec=obj["spec"], opts=opts)
    if kind == "Namespace":
        return k8s.core.v1.Namespace(name, metadata=meta, opts=opts)
    if kind == "RoleBinding":
        return k8s.rbac.v1.RoleBinding(name, metadata=meta, role_ref=obj["roleRef"], subjects=obj["subjects"], opts=opts)
    if kind == "ServiceAccount":
        return k8s.core.v1.ServiceAccount(name, metadata=meta, opts=opts)
    if kind == "ConfigMap":
        return k8s.core.v1.ConfigMap(name, metadata=meta, data=obj["data"], opts=opts)
    if kind == "ClusterRole":
        return k8s.rbac.v1.ClusterRole(name, metadata=meta, rules=obj["rules"], aggregation_rule=obj.get("aggregationRule"), opts=opts)
    if kind == "EndpointSlice":
        return k8s.discovery.v1.EndpointSlice(name, metadata=meta, address_type=obj["addressType"], ports=obj.get("ports"), endpoints=obj["endpoints"], opts=opts)
    if kind == "Role":
        return k8s.rbac.v1.Role(name, metadata=meta, rules=obj["rules"], opts=opts)
    if kind == "Secret":
        return k8s.core.v1.Secret(name, metadata=meta, string_data=obj.get("stringData"), type=obj.get("type"), opts=opts)
    return k8s.apiextensions.CustomResource(name, api_version=obj["apiVersion"], kind=kind, metadata=meta, spec=obj.get("spec"), opts=opts)


def workload_identity_account(
    name: str,
    project: str,
    account_id: str,
    display_name: str,
    kubernetes_service_account: tuple[str, str],
    opts: pulumi.ResourceOptions,
) -> gcp.serviceaccount.Account:
    """A Google service account that a Kubernetes service account (namespace, name) acts as
    through Workload Identity (cloud.google.com/kubernetes-engine/docs/how-to/workload-identity:
    roles/iam.workloadIdentityUser for `<project>.svc.id.goog[<namespace>/<name>]`)."""
    account = gcp.serviceaccount.Account(
        name,
        gcp.serviceaccount.AccountArgs(project=project, account_id=account_id, display_name=display_name),
        opts=opts,
    )
    namespace, service_account = kubernetes_service_account
    gcp.serviceaccount.IAMMember(
        f"{name}-workload-identity",
        gcp.serviceaccount.IAMMemberArgs(
            service_account_id=account.name,
            role="roles/iam.workloadIdentityUser",
            member=f"serviceAccount:{project}.svc.id.goog[{namespace}/{service_account}]",
        ),
        opts=opts,
    )
    return account


def required(secret: pulumi.Output[Any] | None, what: str) -> pulumi.Output[Any]:
    """A secret the component needs. program.py reads every secret the stack's choices need
    (stackmodel.secrets.required_secrets), so a None here is a bug in that list."""
    if secret is None:
        raise ValueError(f"{what} was not read; stackmodel.secrets.required_secrets must list it")
    return secret


class PlatformComponent(Component):
    """An in-cluster component: its children reach the cluster through one provider, and it
    installs upstream charts and trees from the stack's sources."""

    sources: Sources
    installs: InstallRecord
    """What its charts and trees hand the offline tools; the composition gathers it (InstallRecord)."""
    ready: pulumi.Resource
    """Done when the component is ready for what waits for it (plumbing/readiness.py): set by
    every component an installer of components/platform.py returns."""

    def __init__(
        self,
        name: str,
        cluster: Cluster,
        opts: pulumi.ResourceOptions | None = None,
        sources: Sources | None = None,
    ):
        self.sources = sources or Sources()
        self.installs = InstallRecord()
        super().__init__(name, pulumi.ResourceOptions.merge(pulumi.ResourceOptions(providers=[cluster.provider]), opts))

    def child(self, depends_on: Sequence[pulumi.Resource] = (), **options: Any) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, depends_on=list(depends_on), **options)

    def create_namespace(self, name: str, labels: dict[str, str] | None = None, **options: Any) -> k8s.core.v1.Namespace:
        """`options`: resource options, e.g. protect for a namespace that holds data."""
        return k8s.core.v1.Namespace(
            name,
            metadata=k8s.meta.v1.ObjectMetaArgs(name=name, labels=labels),
            opts=self.child(**options),
        )

    def chart_in_its_namespace(
        self, namespace: str, release: str, pin: Pin, values: dict[str, Any], overlay: Mapping[str, Any]
    ) -> tuple[k8s.helm.v4.Chart, pulumi.Output[str]]:
        """A pinned chart in a namespace of its own, which is made first: the chart (what waits
        for the component waits for it), and the namespace's name as an output."""
        created = self.create_namespace(namespace)
        chart = self.chart(release, pin, created.metadata.name, values, [created], overlay=overlay)
        return chart, created.metadata.apply(lambda m: m.name or namespace)

    def _install_options(
        self,
        type_: str,
        name: str,
        transforms: Sequence[PropsTransform],
        moves: Sequence[Moved],
        kept: Callable[[dict[str, Any]], bool] = nothing,
    ) -> dict[str, Any]:
        """Record the install's transforms, moves and kept objects for the offline render; the resource option for them."""
        self.installs.install(type_, name, transforms, moves, kept)
        if not transforms and not moves and kept is nothing:
            return {}
        return {"transforms": [resource_transform(transforms, moves, kept=kept)]}

    def chart(
        self,
        name: str,
        pin: Pin,
        namespace: pulumi.Input[str],
        values: dict[str, Any],
        depends_on: Sequence[pulumi.Resource] = (),
        transforms: Sequence[PropsTransform] = (),
        moves: Sequence[Moved] = (),
        overlay: Mapping[str, Any] | None = None,
        omit: Sequence[str] = (),
    ) -> k8s.helm.v4.Chart:
        """A pinned Helm chart from its public repository or the stack's mirror (chart_source,
        which the offline render reads too), in `namespace`, its release named after the resource;
        `overlay`: the stack's values over ours (overlay_values); `transforms` change its objects,
        `moves` say where some were before; `omit`: its templates left out (plumbing/postrender.py)."""
        source = chart_source(pin, self.sources)
        args = k8s.helm.v4.ChartArgs(
            chart=source.chart,
            version=source.version,
            repository_opts=k8s.helm.v4.RepositoryOptsArgs(repo=source.repo) if source.repo else None,
            namespace=namespace,
            values=overlay_values(values, overlay) if overlay else values,
            post_renderer=omitting(omit).chart_args() if omit else None,
        )
        options = self._install_options(HELM_CHART_TYPE, name, transforms, moves)
        return k8s.helm.v4.Chart(name, args, opts=self.child(depends_on, **options))

    def kustomize(
        self,
        name: str,
        path: str,
        depends_on: Sequence[pulumi.Resource] = (),
        transforms: Sequence[PropsTransform] = (),
        moves: Sequence[Moved] = (),
        kept: Callable[[dict[str, Any]], bool] = nothing,
        namespace: str | None = None,
    ) -> k8s.kustomize.v2.Directory:
        """A kustomize tree of the pinned Kubeflow release; `transforms` change its objects, `moves` say where some of them were before, `kept` which hold data (`keep()`), `namespace` where its unnamespaced objects go."""
        options = self._install_options(KUSTOMIZE_TYPE, name, transforms, moves, kept)
        directory = kubeflow_tree(path, self.sources)
        prepared = prepared_tree(path, self.sources)
        if prepared is not None:
            self.installs.prepared_trees[directory] = prepared
        return k8s.kustomize.v2.Directory(
            name,
            k8s.kustomize.v2.DirectoryArgs(directory=directory, namespace=namespace),
            opts=self.child(depends_on, **options),
        )

    def release_manifest(
        self,
        name: str,
        manifest: ReleaseManifest,
        depends_on: Sequence[pulumi.Resource] = (),
        transforms: Sequence[PropsTransform] = (),
    ) -> k8s.yaml.v2.ConfigFile:
        """A pinned upstream manifest applied as published (../shared/DESIGN.md: release
        manifests with `yaml.v2.ConfigFile` from a pinned URL), from its raw URL at the pinned
        commit or the stack's mirror (release_manifest_source, which the offline render reads
        too); `transforms` change its objects."""
        options = self._install_options(CONFIG_FILE_TYPE, name, transforms, ())
        return k8s.yaml.v2.ConfigFile(
            name,
            k8s.yaml.v2.ConfigFileArgs(file=release_manifest_source(manifest, self.sources)),
            opts=self.child(depends_on, **options),
        )
