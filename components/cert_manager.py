"""cert-manager, from the pinned Kubeflow release (the version Kubeflow tests with), and
the `kubeflow-self-signing-issuer` Kubeflow's webhooks get their certificates from."""

from __future__ import annotations

import pulumi

from components.base import PlatformComponent
from infra.cluster import Cluster

# kubeflow/manifests 26.03 README, "cert-manager".
BASE = "common/cert-manager/base"
KUBEFLOW_ISSUER = "common/cert-manager/kubeflow-issuer/base"


class CertManager(PlatformComponent):
    ready: pulumi.Resource
    """Done when cert-manager's webhook is ready and the Kubeflow issuer exists."""

    def __init__(self, name: str, cluster: Cluster, opts: pulumi.ResourceOptions | None = None):
        super().__init__("CertManager", name, cluster, opts)
        base = self.kustomize("cert-manager", BASE)
        # The issuer is a custom resource: cert-manager's CRDs and webhook first.
        self.ready = self.kustomize("kubeflow-issuer", KUBEFLOW_ISSUER, depends_on=[base])
        self.register_outputs({})
