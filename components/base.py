"""Plumbing shared by every in-cluster component: the provider once, children parented,
and installing upstream software the way its maintainers publish it (pinned)."""

from __future__ import annotations

from typing import Any, Sequence

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.versions import KUBEFLOW_MANIFESTS, Pin, PinKind
from infra.cluster import Cluster


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
    return k8s.apiextensions.CustomResource(
        name, api_version=obj["apiVersion"], kind=kind, metadata=meta, spec=obj.get("spec"), opts=opts
    )


def kubeflow_path(path: str) -> str:
    """A kustomize remote target inside the pinned Kubeflow release (kustomize remoteBuild syntax)."""
    return f"{KUBEFLOW_MANIFESTS.location}//{path}?ref={KUBEFLOW_MANIFESTS.version}"


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


class PlatformComponent(pulumi.ComponentResource):
    """A ComponentResource whose children reach the cluster through one provider."""

    def __init__(self, kind: str, name: str, cluster: Cluster, opts: pulumi.ResourceOptions | None = None):
        super().__init__(
            f"mlplatform:components:{kind}",
            name,
            None,
            pulumi.ResourceOptions.merge(pulumi.ResourceOptions(providers=[cluster.provider]), opts),
        )

    def child(self, depends_on: Sequence[pulumi.Resource] = (), **options: Any) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, depends_on=list(depends_on), **options)

    def create_namespace(self, name: str, labels: dict[str, str] | None = None) -> k8s.core.v1.Namespace:
        return k8s.core.v1.Namespace(
            name,
            metadata=k8s.meta.v1.ObjectMetaArgs(name=name, labels=labels),
            opts=self.child(),
        )

    def chart(
        self,
        name: str,
        pin: Pin,
        namespace: pulumi.Input[str],
        values: dict[str, Any],
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> k8s.helm.v4.Chart:
        """A pinned Helm chart: OCI references are the chart itself, others a repository + chart name."""
        assert pin.kind is PinKind.HELM, pin
        oci = pin.location.startswith("oci://")
        return k8s.helm.v4.Chart(
            name,
            k8s.helm.v4.ChartArgs(
                chart=pin.location if oci else pin.name,
                version=pin.version,
                repository_opts=None if oci else k8s.helm.v4.RepositoryOptsArgs(repo=pin.location),
                namespace=namespace,
                values=values,
            ),
            opts=self.child(depends_on),
        )

    def kustomize(
        self,
        name: str,
        path: str,
        depends_on: Sequence[pulumi.Resource] = (),
        transforms: Sequence[pulumi.ResourceTransform] = (),
    ) -> k8s.kustomize.v2.Directory:
        """A kustomize tree of the pinned Kubeflow release."""
        return k8s.kustomize.v2.Directory(
            name,
            k8s.kustomize.v2.DirectoryArgs(directory=kubeflow_path(path)),
            opts=self.child(depends_on, transforms=list(transforms) or None),
        )
