"""KubeRay operator from its Helm chart, with Kubeflow role aggregation; or nothing here
when the stack uses GKE's managed Ray operator add-on (infra/gke.py turns that on).

Under Istio the operator must not inject its wait-for-GCS init container (it cannot
reach the GCS before the sidecar is up): `ENABLE_INIT_CONTAINER_INJECTION=false`
(ray-project/kuberay helm-chart/kuberay-operator/values.yaml, `env`). The chart's CRDs
are large: the provider applies them server-side (pulumi-kubernetes v4 default).
Roles: kubeflow/manifests experimental/ray/kuberay-operator/base/aggregated-roles.yaml.
"""

from __future__ import annotations

from typing import Any

import pulumi

from facts.versions import KUBERAY_CHART
from infra.cluster import Cluster
from plumbing.base import ChartArgs, PlatformComponent
from plumbing.charts import ChartValues, Hint, Relied, built_by, empty, exactly
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.readiness import Readiness
from plumbing.roles import VERBS_READ, Rule, cluster_role
from stackmodel.components.kuberay import KUBERAY, RaySource
from stackmodel.stack import PlatformConfig

NAMESPACE = "kuberay-system"


def kuberay_values() -> dict[str, Any]:
    return {"env": [{"name": "ENABLE_INIT_CONTAINER_INJECTION", "value": "false"}]}


RAY = ("ray.io",)
EDIT_RULES = (Rule(RAY, ("*",), ("get", "list", "watch", "create", "update", "patch", "delete")),)
VIEW_RULES = (Rule(RAY, ("*",), VERBS_READ),)


class KubeRay(PlatformComponent):
    """The KubeRay operator, so the teams' RayClusters run, and the roles profile members use them with."""

    ready: pulumi.Resource
    """Done when the operator is ready (the Ray CRDs exist)."""
    namespace: pulumi.Output[str]

    def __init__(self, name: str, args: ChartArgs, cluster: Cluster, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, args.sources)
        self.ready, self.namespace = self.chart_in_its_namespace(NAMESPACE, "kuberay-operator", KUBERAY_CHART, kuberay_values(), args.values)
        child = self.child()
        cluster_role("kubeflow-kuberay-admin", ("kubeflow-admin",), opts=child)
        cluster_role("kubeflow-kuberay-edit", ("kubeflow-edit", "kubeflow-admin"), EDIT_RULES, opts=child)
        cluster_role("kubeflow-kuberay-view", ("kubeflow-view",), VIEW_RULES, opts=child)
        self.register_outputs({"namespace": self.namespace, "ready": self.ready.urn})


def kuberay_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> ChartArgs | None:
    """None with GKE's managed Ray operator: an add-on of the cluster (infra/gke.py)."""
    settings = config.components[KUBERAY]
    if settings.source is RaySource.GKE_ADDON:
        return None
    return ChartArgs(sources=config.sources, values=settings.values)


def _install(args: ChartArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return KubeRay("kuberay", args, cluster)


# What the platform needs of the chart's values beyond what it sets (plumbing/charts.py): the
# keys it relies on, each read in the chart at its pinned version, and why it sets the keys it sets.
RAY_TEAMS = "the teams' RayClusters and RayJobs live in their profile namespaces, which the operator must watch"

RELIED = (
    Relied(("singleNamespaceInstall",), exactly(False), "singleNamespaceInstall false, the chart's default",
           "values.yaml, templates/deployment.yaml (--watch-namespace: the release's namespace)", RAY_TEAMS),
    Relied(("watchNamespace",), empty, "watchNamespace unset, the chart's default",
           "values.yaml, templates/deployment.yaml (--watch-namespace)", RAY_TEAMS),
    Relied(("rbacEnable",), exactly(True), "rbacEnable true, the chart's default",
           "values.yaml (false: no ClusterRole, no RoleBinding)", "the operator creates the teams' Ray pods and Services with these rights"),
)
HINTS = (
    Hint(("env",), "under Istio the operator must not inject its wait-for-GCS init container (ENABLE_INIT_CONTAINER_INJECTION=false)"),
)


# With GKE's managed operator (source gke-addon) kuberay_args gives None: infra/gke.py turns the add-on on.
INSTALLATION = Installation(
    KUBERAY,
    kuberay_args,
    _install,
    charts=(ChartValues("values", KUBERAY_CHART, lambda args: kuberay_values(), lambda args: args.values, built_by(kuberay_values), relied=RELIED, hints=HINTS),),
)
