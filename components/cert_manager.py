"""cert-manager from its own chart, and on top of it what Kubeflow adds: the
`kubeflow-self-signing-issuer` its webhooks get their certificates from and cert-manager's
NetworkPolicies.

Kubeflow 26.03.1 ships cert-manager v1.20.2 as a static render (`common/cert-manager/base`);
cert-manager supports its two newest minors only, so the chart is pinned on its own
(facts/versions.py CERT_MANAGER). `common/cert-manager/overlays/kubeflow` no longer includes
that base (kubeflow/manifests#3462): it is exactly the issuer and the two policies.

Until this release both came from the 26.03 overlay, which included the base, as one tree
named `cert-manager`: every object now in the chart, the issuer, the policies and the
namespace were its children. They keep their live objects through aliases (`moved_from_tree`);
deleting the old cert-manager CRDs would delete every Certificate in the cluster.
"""

from __future__ import annotations

from typing import Any

import pulumi

from args.components import CertManagerArgs, cert_manager_args
from components.base import KUSTOMIZE_TYPE, Moved, PlatformComponent, install_child_urn
from components.installation import ChartValues, Installation, built_by
from components.readiness import Readiness
from facts.versions import CERT_MANAGER as CHART
from infra.cluster import Cluster
from infra.component import type_token
from stackmodel.components.cert_manager import CERT_MANAGER

NAMESPACE = "cert-manager"
RELEASE = "cert-manager"
"""The chart's release, named like cert-manager's static manifests: its Deployments' selectors
(`app.kubernetes.io/instance: <release>`) are the ones the live Deployments have."""
KUBEFLOW_TREE = "common/cert-manager/overlays/kubeflow"
KUBEFLOW_INSTALL = "kubeflow-issuer"
ISSUER = "kubeflow-self-signing-issuer"
# kubeflow/community-distribution 26.03.1-rc.2 common/cert-manager/base/namespace-patch.yaml:
# the namespace as Kubeflow labels it.
NAMESPACE_LABELS = {"pod-security.kubernetes.io/enforce": "restricted"}
OLD_TREE = "cert-manager"
"""The 26.03 tree every cert-manager object was a child of (a kustomize Directory)."""


def cert_manager_values() -> dict[str, Any]:
    """Chart values (deploy/charts/cert-manager/values.yaml at v1.21.1): the CRDs come with the
    chart, as templates behind `crds.enabled` (default false); `crds.keep` (default true) keeps
    them on a Helm uninstall, and Pulumi never deletes them on this move (moved_from_tree)."""
    return {"crds": {"enabled": True}}


class CertManager(PlatformComponent):
    """cert-manager and the ClusterIssuer Kubeflow's webhooks get their certificates from."""

    ready: pulumi.Resource
    """Done when cert-manager (its webhook among it) is ready and the Kubeflow issuer exists."""
    namespace: pulumi.Output[str]
    issuer: pulumi.Output[str]
    """The ClusterIssuer's name."""

    def __init__(self, name: str, args: CertManagerArgs, cluster: Cluster, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, args.sources)
        moved = moved_from_tree()
        old_namespace = install_child_urn(
            pulumi.get_stack(), pulumi.get_project(), moved.component, KUSTOMIZE_TYPE, "kubernetes:core/v1:Namespace", f"{OLD_TREE}:{NAMESPACE}"
        )
        namespace = self.create_namespace(NAMESPACE, NAMESPACE_LABELS, aliases=[old_namespace])
        chart = self.chart(
            RELEASE, CHART, NAMESPACE, cert_manager_values(), [namespace], moves=[moved], overlay=args.values
        )
        # The issuer is validated by cert-manager's webhook: the tree waits for the whole chart,
        # so for the webhook's Deployment to be ready.
        self.ready = self.kustomize(KUBEFLOW_INSTALL, KUBEFLOW_TREE, depends_on=[chart], moves=[moved])
        self.namespace = pulumi.Output.from_input(NAMESPACE)
        self.issuer = pulumi.Output.from_input(ISSUER)
        self.register_outputs({"namespace": self.namespace, "issuer": self.issuer, "ready": self.ready.urn})



def moved_from_tree() -> Moved:
    """Where cert-manager's objects were until 26.03: children of the tree OLD_TREE of this component."""
    return Moved(type_token(CertManager), KUSTOMIZE_TYPE, OLD_TREE)


def _install(args: CertManagerArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return CertManager("cert-manager", args, cluster)


INSTALLATION = Installation(
    CERT_MANAGER,
    cert_manager_args,
    _install,
    charts=(ChartValues("values", CHART, lambda args: cert_manager_values(), lambda args: args.values, built_by(cert_manager_values)),),
)
