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

from args.components import KubeRayArgs, kuberay_args
from components.base import PlatformComponent
from components.installation import ChartValues, Installation, built_by
from components.readiness import Readiness
from components.roles import VERBS_READ, Rule, cluster_role
from facts.versions import KUBERAY_CHART
from infra.cluster import Cluster
from stackmodel.components.kuberay import KUBERAY

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

    def __init__(self, name: str, args: KubeRayArgs, cluster: Cluster, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, args.sources)
        namespace = self.create_namespace(NAMESPACE)
        self.ready = self.chart(
            "kuberay-operator", KUBERAY_CHART, namespace.metadata.name, kuberay_values(), [namespace], overlay=args.values
        )
        child = self.child()
        cluster_role("kubeflow-kuberay-admin", ("kubeflow-admin",), opts=child)
        cluster_role("kubeflow-kuberay-edit", ("kubeflow-edit", "kubeflow-admin"), EDIT_RULES, opts=child)
        cluster_role("kubeflow-kuberay-view", ("kubeflow-view",), VIEW_RULES, opts=child)
        self.namespace = namespace.metadata.apply(lambda m: m.name or NAMESPACE)
        self.register_outputs({"namespace": self.namespace, "ready": self.ready.urn})


def _install(args: KubeRayArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return KubeRay("kuberay", args, cluster)


# With GKE's managed operator (source gke-addon) kuberay_args gives None: infra/gke.py turns the add-on on.
INSTALLATION = Installation(
    KUBERAY,
    kuberay_args,
    _install,
    charts=(ChartValues("values", KUBERAY_CHART, lambda args: kuberay_values(), lambda args: args.values, built_by(kuberay_values)),),
)
