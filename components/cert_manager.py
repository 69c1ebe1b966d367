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

from facts.versions import CERT_MANAGER as CHART
from infra.cluster import Cluster
from infra.component import type_token
from plumbing.base import KUSTOMIZE_TYPE, ChartArgs, Moved, PlatformComponent, install_child_urn
from plumbing.charts import ChartValues, Hint, Relied, built_by, empty, without_flag
from plumbing.installation import Installation, chart_args
from plumbing.readiness import Readiness
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

    def __init__(self, name: str, args: ChartArgs, cluster: Cluster, opts: pulumi.ResourceOptions | None = None):
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


def _install(args: ChartArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return CertManager("cert-manager", args, cluster)


# What the platform needs of the chart's values beyond what it sets (plumbing/charts.py): the
# keys it relies on, each read in the chart at its pinned version, and why it sets the keys it sets.
# cert-manager's flags and configuration read in its own source at tag v1.21.1:
# cmd/controller/app/options/options.go, cmd/cainjector/app/options/options.go and
# pkg/apis/config/{controller,cainjector}/v1alpha1/types.go (`namespace`).
RELIED = (
    Relied(("namespace",), empty, "namespace left empty (the release's, cert-manager)", "values.yaml `namespace`",
           "the Kubeflow issuer's tree and cert-manager's NetworkPolicies are written for namespace cert-manager (components/cert_manager.py)"),
    Relied(("config", "namespace"), empty, "the controller watching every namespace",
           f"values.yaml `config` (the ControllerConfiguration; cert-manager {CHART.version} pkg/apis/config/controller/v1alpha1/types.go `namespace`: "
           "one namespace, ClusterIssuers disabled)",
           "Kubeflow's webhooks get their certificates from the ClusterIssuer kubeflow-self-signing-issuer, in their own namespaces"),
    Relied(("extraArgs",), without_flag("--namespace"), "no --namespace flag",
           f"values.yaml `extraArgs` (its source at {CHART.version}: cmd/controller/app/options/options.go: --namespace limits it to one namespace, ClusterIssuers disabled)",
           "Kubeflow's webhooks get their certificates from the ClusterIssuer kubeflow-self-signing-issuer, in their own namespaces"),
    Relied(("cainjector", "extraArgs"), without_flag("--namespace"), "no --namespace flag",
           f"values.yaml `cainjector.extraArgs` (its source at {CHART.version}: cmd/cainjector/app/options/options.go: --namespace limits cainjector to one namespace)",
           "cainjector writes the CA bundles of the webhooks of every namespace (Kubeflow's, Trainer's)"),
    Relied(("cainjector", "config", "namespace"), empty, "cainjector watching every namespace",
           f"values.yaml `cainjector.config` (its source at {CHART.version}: pkg/apis/config/cainjector/v1alpha1/types.go `namespace`)",
           "cainjector writes the CA bundles of the webhooks of every namespace (Kubeflow's, Trainer's)"),
)
HINTS = (
    Hint(("crds", "enabled"), "the chart installs cert-manager's CRDs only so (templates/crd-*.yaml), and Kubeflow's webhook "
         "Certificates and its ClusterIssuer are of those kinds"),
)


INSTALLATION = Installation(
    CERT_MANAGER,
    chart_args(CERT_MANAGER),
    _install,
    charts=(ChartValues("values", CHART, lambda args: cert_manager_values(), lambda args: args.values, built_by(cert_manager_values), relied=RELIED, hints=HINTS),),
)
