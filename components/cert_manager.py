"""cert-manager, from the pinned Kubeflow release (the version Kubeflow tests with), and
the `kubeflow-self-signing-issuer` Kubeflow's webhooks get their certificates from.

kubeflow/manifests 26.03 installs both as one tree, `common/cert-manager/overlays/kubeflow`
(example/kustomization.yaml): the base, the ClusterIssuer and cert-manager's
NetworkPolicies (the old `kubeflow-issuer/base` was moved there by kubeflow/manifests#3342).
"""

from __future__ import annotations

from typing import Any

import pulumi

from args.components import CertManagerArgs
from components.base import PlatformComponent, matches
from infra.cluster import Cluster

TREE = "common/cert-manager/overlays/kubeflow"
NAMESPACE = "cert-manager"
ISSUER = "kubeflow-self-signing-issuer"
WEBHOOK = "cert-manager-webhook"
# Pulumi applies an object after those its `config.kubernetes.io/depends-on` annotation
# names, and waits for a Deployment to be ready (pulumi-kubernetes yaml/v2 Register:
# cli-utils dependency graph). The issuer is validated by cert-manager's webhook.
DEPENDS_ON = "config.kubernetes.io/depends-on"


def issuer_after_webhook(props: dict[str, Any]) -> dict[str, Any] | None:
    """The ClusterIssuer, created only once cert-manager's webhook Deployment is ready."""
    if not matches(props, "ClusterIssuer", ISSUER):
        return None
    metadata = props.get("metadata") or {}
    annotations = {**(metadata.get("annotations") or {}), DEPENDS_ON: f"apps/namespaces/{NAMESPACE}/Deployment/{WEBHOOK}"}
    return {**props, "metadata": {**metadata, "annotations": annotations}}


class CertManager(PlatformComponent):
    """cert-manager and the ClusterIssuer Kubeflow's webhooks get their certificates from."""

    ready: pulumi.Resource
    """Done when cert-manager's webhook is ready and the Kubeflow issuer exists."""
    namespace: pulumi.Output[str]
    issuer: pulumi.Output[str]
    """The ClusterIssuer's name."""

    def __init__(self, name: str, args: CertManagerArgs, cluster: Cluster, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, args.sources)
        self.ready = self.kustomize("cert-manager", TREE, transforms=(issuer_after_webhook,))
        self.namespace = pulumi.Output.from_input(NAMESPACE)
        self.issuer = pulumi.Output.from_input(ISSUER)
        self.register_outputs({"namespace": self.namespace, "issuer": self.issuer, "ready": self.ready.urn})
