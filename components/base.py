"""Plumbing shared by every in-cluster component: the provider once, children parented,
and installing upstream software the way its maintainers publish it (pinned)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.sources import chart_source, kubeflow_tree
from facts import resource_types
from facts.versions import Pin
from infra.cluster import Cluster
from infra.component import Component
from stacks.schema import Sources

PropsTransform = Callable[[dict[str, Any]], "dict[str, Any] | None"]
"""A change to one rendered object, on plain data: the object's properties in, the changed
properties out, or None to leave it alone. `pulumi up` applies it as a resource transform
to every object a chart or tree renders; the offline full render applies the same function."""

HELM_CHART_TYPE = resource_types.HELM_CHART
KUSTOMIZE_TYPE = resource_types.KUSTOMIZE

INSTALL_TRANSFORMS: dict[tuple[str, str], tuple[PropsTransform, ...]] = {}
"""(resource type, name) of each tree -> its transforms, as the program registered them; the
offline plan (tooling/plan.py) takes them for the full render. Charts take none of their own:
what every object needs is a platform transform."""
PLATFORM_TRANSFORMS: list[PropsTransform] = []
"""Transforms of every Kubernetes object the stack installs: each chart's and tree's objects
and our own (the image rewrite, components/images.py), in the order registered. `pulumi up`
runs them as stack transforms; the offline plan records our objects through them and the
full render applies them to every rendered object, after an install's own transforms (the
engine's order: a resource's own transforms, its parents', then the stack's; pulumi/pulumi
pkg/resource/deploy/source_eval.go RegisterResource)."""


def apply_transforms(props: dict[str, Any], transforms: Sequence[PropsTransform]) -> dict[str, Any] | None:
    """`props` after every transform in order; None when none of them changed it."""
    changed = False
    for transform in transforms:
        result = transform(props)
        if result is not None:
            props, changed = result, True
    return props if changed else None


def resource_transform(transforms: Sequence[PropsTransform], objects_only: bool = False) -> pulumi.ResourceTransform:
    """The pure transforms as one Pulumi resource transform; `objects_only`: of Kubernetes
    objects alone (is_object), leaving every other registration as it is."""

    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        if objects_only and not is_object(args.type_, dict(args.props)):
            return None
        props = apply_transforms(dict(args.props), transforms)
        return pulumi.ResourceTransformResult(props=props, opts=args.opts) if props is not None else None

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


def transform_every_object(transform: PropsTransform) -> None:
    """Apply `transform` to every Kubernetes object of the stack from here on: a stack
    transform for `pulumi up` (it reaches the children of charts and trees too), and
    PLATFORM_TRANSFORMS for the offline plan and render. Call it before any object is
    registered (components/platform.py does, first)."""
    PLATFORM_TRANSFORMS.append(transform)
    pulumi.runtime.register_resource_transform(resource_transform([transform], objects_only=True))


def matches(props: dict[str, Any], kind: str, name: str) -> bool:
    """Whether `props` are the object `kind`/`name` (any namespace)."""
    return (props.get("kind"), (props.get("metadata") or {}).get("name")) == (kind, name)


def apply_manifest(name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> pulumi.Resource:
    """The typed resource for a built-in kind, a CustomResource for everything else."""
    meta = obj["metadata"]
    kind = obj["kind"]
    if kind == "Namespace":
        return k8s.core.v1.Namespace(name, metadata=meta, opts=opts)
    if kind == "RoleBinding":
        return k8s.rbac.v1.RoleBinding(name, metadata=meta, role_ref=obj["roleRef"], subjects=obj["subjects"], opts=opts)
    if kind == "NetworkPolicy":
        return k8s.networking.v1.NetworkPolicy(name, metadata=meta, spec=obj["spec"], opts=opts)
    if kind == "Service":
        return k8s.core.v1.Service(name, metadata=meta, spec=obj["spec"], opts=opts)
    if kind == "ServiceAccount":
        return k8s.core.v1.ServiceAccount(name, metadata=meta, opts=opts)
    if kind == "LimitRange":
        return k8s.core.v1.LimitRange(name, metadata=meta, spec=obj["spec"], opts=opts)
    if kind == "ConfigMap":
        return k8s.core.v1.ConfigMap(name, metadata=meta, data=obj["data"], opts=opts)
    if kind == "ValidatingAdmissionPolicy":
        return k8s.admissionregistration.v1.ValidatingAdmissionPolicy(name, metadata=meta, spec=obj["spec"], opts=opts)
    if kind == "ValidatingAdmissionPolicyBinding":
        return k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(name, metadata=meta, spec=obj["spec"], opts=opts)
    return k8s.apiextensions.CustomResource(
        name, api_version=obj["apiVersion"], kind=kind, metadata=meta, spec=obj.get("spec"), opts=opts
    )


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
    (stacks.secrets.required_secrets), so a None here is a bug in that list."""
    if secret is None:
        raise ValueError(f"{what} was not read; stacks.secrets.required_secrets must list it")
    return secret


class PlatformComponent(Component):
    """An in-cluster component: its children reach the cluster through one provider, and it
    installs upstream charts and trees from the stack's sources."""

    sources: Sources

    def __init__(
        self,
        name: str,
        cluster: Cluster,
        opts: pulumi.ResourceOptions | None = None,
        sources: Sources | None = None,
    ):
        self.sources = sources or Sources()
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

    def chart(
        self,
        name: str,
        pin: Pin,
        namespace: pulumi.Input[str],
        values: dict[str, Any],
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> k8s.helm.v4.Chart:
        """A pinned Helm chart from its public repository or the stack's mirror (chart_source,
        which the offline render reads too), in `namespace`, its release named after the resource."""
        source = chart_source(pin, self.sources)
        args = k8s.helm.v4.ChartArgs(
            chart=source.chart,
            version=source.version,
            repository_opts=k8s.helm.v4.RepositoryOptsArgs(repo=source.repo) if source.repo else None,
            namespace=namespace,
            values=values,
        )
        return k8s.helm.v4.Chart(name, args, opts=self.child(depends_on))

    def kustomize(
        self,
        name: str,
        path: str,
        depends_on: Sequence[pulumi.Resource] = (),
        transforms: Sequence[PropsTransform] = (),
    ) -> k8s.kustomize.v2.Directory:
        """A kustomize tree of the pinned Kubeflow release; `transforms` change its objects
        (recorded in INSTALL_TRANSFORMS for the offline render)."""
        INSTALL_TRANSFORMS[(KUSTOMIZE_TYPE, name)] = tuple(transforms)
        options = {"transforms": [resource_transform(transforms)]} if transforms else {}
        return k8s.kustomize.v2.Directory(
            name,
            k8s.kustomize.v2.DirectoryArgs(directory=kubeflow_tree(path, self.sources)),
            opts=self.child(depends_on, **options),
        )
