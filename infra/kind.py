"""A local kind cluster, created and deleted through pulumi-command.

The cluster follows Kubeflow's own kind setup (kubeflow/community-distribution README,
"Install with a single command"): the API server issues service-account tokens as
`https://kubernetes.default.svc`, which Kubeflow's m2m oauth2-proxy overlay relies on.
Kubeflow on kind also needs more inotify watches on the *host* than Linux defaults;
the README's "Local cluster" section gives the two sysctls (they cannot be set from here).
"""

from __future__ import annotations

import pulumi
import pulumi_command as command
import yaml

from facts.versions import KIND_NODE_IMAGE, image
from infra.args import KindClusterArgs
from infra.component import Component
from stackmodel.schema import KindClusterConfig

# The patch names no apiVersion on purpose: kind then applies it to whichever kubeadm API
# it generates (v1beta3 below Kubernetes 1.36, v1beta4 from 1.36: kind commit 22573271) and
# turns this map form of extraArgs into v1beta4's list of {name, value}
# (kind pkg/internal/patch/kubeadm_merge.go, mergeExtraArgs, at v0.33.0-alpha).
API_SERVER_PATCH = """kind: ClusterConfiguration
apiServer:
  extraArgs:
    "service-account-issuer": "https://kubernetes.default.svc"
    "service-account-signing-key-file": "/etc/kubernetes/pki/sa.key"
"""


def kind_config(cluster: KindClusterConfig) -> str:
    """The kind cluster config: one control plane and `workers` workers on the pinned image."""
    node_image = image(KIND_NODE_IMAGE)
    nodes: list[dict[str, object]] = [
        {"role": "control-plane", "image": node_image, "kubeadmConfigPatches": [API_SERVER_PATCH]}
    ]
    nodes += [{"role": "worker", "image": node_image} for _ in range(cluster.workers)]
    document = {"kind": "Cluster", "apiVersion": "kind.x-k8s.io/v1alpha4", "name": cluster.name, "nodes": nodes}
    return yaml.safe_dump(document, sort_keys=False)


def create_command(cluster: KindClusterConfig) -> str:
    # `kind create` logs to stderr; stdout carries only the kubeconfig of `kind get`.
    return (
        f"kind create cluster --name {cluster.name} --config - --wait 5m 1>&2"
        f" && kind get kubeconfig --name {cluster.name}"
    )


def delete_command(cluster: KindClusterConfig) -> str:
    return f"kind delete cluster --name {cluster.name}"


class KindCluster(Component):
    """A local cluster for development and CI: created on `pulumi up`, deleted on `pulumi destroy`."""

    kubeconfig: pulumi.Output[str]
    """The new cluster's kubeconfig (a secret)."""

    def __init__(self, name: str, args: KindClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts)
        cluster = args.cluster
        config = kind_config(cluster)
        created = command.local.Command(
            name,
            command.local.CommandArgs(
                create=create_command(cluster),
                delete=delete_command(cluster),
                stdin=config,
                triggers=[config],  # a new node image or topology recreates the cluster
                logging=command.local.Logging.STDERR,  # stdout is the kubeconfig: never log it
            ),
            # kind names a cluster once per host: the new cluster can only be created after
            # `kind delete cluster` of the old one (Pulumi's default creates first).
            opts=pulumi.ResourceOptions(parent=self, additional_secret_outputs=["stdout"], delete_before_replace=True),
        )
        self.kubeconfig = pulumi.Output.secret(created.stdout)
        self.register_outputs({"kubeconfig": self.kubeconfig})
