"""The cluster a stack asks for, and the one Kubernetes provider every in-cluster component uses."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s
import yaml

from infra.args import ClusterArgs, GkeClusterArgs
from infra.network import ClusterNetwork
from infra.registry import ImageRegistry

# GKE's kubectl auth plugin (cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl).
GKE_AUTH_PLUGIN = "gke-gcloud-auth-plugin"


@dataclass(frozen=True)
class Cluster:
    """What the in-cluster layers get from infra: a provider, and the kubeconfig (secret)."""

    name: str
    provider: k8s.Provider
    kubeconfig: pulumi.Output[str]
    image_registry: ImageRegistry | None = None
    """A gke stack's Artifact Registry repository (teams that push get write access on it)."""
    network: ClusterNetwork | None = None
    """A gke stack's VPC network (kind: none)."""


def gke_kubeconfig(name: str, endpoint: str, ca_certificate: str) -> str:
    """A kubeconfig that authenticates through gke-gcloud-auth-plugin (no static credentials)."""
    context = f"gke-{name}"
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": context, "cluster": {"server": f"https://{endpoint}", "certificate-authority-data": ca_certificate}}
        ],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        "current-context": context,
        "users": [
            {
                "name": context,
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": GKE_AUTH_PLUGIN,
                        "provideClusterInfo": True,
                        "installHint": "gcloud components install gke-gcloud-auth-plugin",
                    }
                },
            }
        ],
    }
    return yaml.safe_dump(document, sort_keys=False)


def build_cluster(args: ClusterArgs) -> Cluster:
    """The cluster of the stack (GKE, a new kind cluster, or an existing context) and its provider."""
    from infra.gke import GkeCluster
    from infra.kind import KindCluster

    provider_args: k8s.ProviderArgs
    kubeconfig: pulumi.Output[str]
    name = args.cluster.name
    registry: ImageRegistry | None = None
    network: ClusterNetwork | None = None
    if isinstance(args, GkeClusterArgs):
        gke = GkeCluster(name, args)
        network = gke.network
        if args.image_registry is not None:
            registry = ImageRegistry(f"{name}-images", args.image_registry, gke.node_service_account)
        plain: pulumi.Output[str] = pulumi.Output.all(gke.endpoint, gke.ca_certificate).apply(
            lambda parts: gke_kubeconfig(name, parts[0], parts[1])
        )
        kubeconfig = pulumi.Output.secret(plain)
        provider_args = k8s.ProviderArgs(kubeconfig=kubeconfig)
    elif args.cluster.existing_context:
        # The provider reads the user's own kubeconfig; nothing of it enters the state.
        kubeconfig = pulumi.Output.secret("")
        provider_args = k8s.ProviderArgs(context=args.cluster.existing_context)
    else:
        kind = KindCluster(name, args)
        kubeconfig = kind.kubeconfig
        # `kind delete cluster` (or a Docker restart) can take the cluster away behind
        # Pulumi's back; deleteUnreachable lets refresh and destroy drop its objects from the
        # state instead of failing on every one (ProviderArgs `delete_unreachable` in the
        # pulumi-kubernetes 4.34.2 we install; Read and Delete in provider/pkg/provider/
        # provider.go, v4.32.0). Only for the cluster we create: a GKE cluster or someone's
        # context is unreachable for other reasons, and its objects must stay in the state.
        provider_args = k8s.ProviderArgs(kubeconfig=kubeconfig, delete_unreachable=True)
    provider = k8s.Provider("k8s", provider_args)
    return Cluster(name=name, provider=provider, kubeconfig=kubeconfig, image_registry=registry, network=network)
