"""LeaderWorkerSet (kubernetes-sigs/lws v0.8.0), once for the cluster: KServe's LLM controller
runs a multi-node LLM replica as one LeaderWorkerSet group (docs/serving.md, "LLMs"), and Kueue
admits each group whole (components/kueue.py, its `leaderworkerset.x-k8s.io/leaderworkerset`
integration).

Read at the tag (charts/lws): the CRD comes from the chart's crds/, its conversion webhook
naming `lws-webhook-service` in `lws-system` (crds/leaderworkerset.x-k8s.io_leaderworkersets.yaml
is not templated, so the release must be in that namespace); the webhooks answer on 9443
(values.yaml service.port; infra/gke.py opens 9443 to the control plane). The certificates are
the controller's own (templates/manager/configmap.yaml `internalCertManagement.enable: not
enableCertManager`, the chart's default): with `enableCertManager` the chart makes an Issuer and
Certificates, but its webhook configurations and CRD carry no `cert-manager.io/inject-ca-from`
(templates/webhook/webhook.yaml), so nothing would give the API server their CA. The namespace
is the platform's own, without Istio's injection, so no sidecar stands before the webhook port.
"""

from __future__ import annotations

import pulumi

from facts.versions import LWS_CHART
from infra.cluster import Cluster
from plumbing.base import ChartArgs, PlatformComponent
from plumbing.charts import ChartValues, Relied, exactly
from plumbing.installation import Installation, chart_args
from plumbing.readiness import Readiness
from stackmodel.components.leader_worker_set import LEADER_WORKER_SET

NAMESPACE = "lws-system"
"""The namespace the chart's CRD names for its conversion webhook (see above)."""


class LeaderWorkerSet(PlatformComponent):
    """LeaderWorkerSet's CRD, controller and webhooks, in lws-system."""

    ready: pulumi.Resource
    """Done when the controller and its webhooks are ready."""
    namespace: pulumi.Output[str]

    def __init__(self, name: str, args: ChartArgs, cluster: Cluster, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, args.sources)
        self.ready, self.namespace = self.chart_in_its_namespace(NAMESPACE, "lws", LWS_CHART, {}, args.values)
        self.register_outputs({"namespace": self.namespace, "ready": self.ready.urn})


def _install(args: ChartArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return LeaderWorkerSet("lws", args, cluster)


# What the platform needs of the chart's values beyond what it sets (plumbing/charts.py).
RELIED = (
    Relied(("enableCertManager",), exactly(False), "enableCertManager false, the chart's default",
           "values.yaml, templates/manager/configmap.yaml (internalCertManagement), templates/webhook/webhook.yaml",
           "with cert-manager's certificates nothing injects their CA into the chart's webhook configurations or its "
           "CRD's conversion webhook (no cert-manager.io/inject-ca-from at the pinned release); the controller's own certificates do"),
    Relied(("enablePrometheus",), exactly(False), "enablePrometheus false, the chart's default",
           "values.yaml, templates/prometheus/monitor.yaml (a ServiceMonitor, a kind of Monitoring's)",
           "LeaderWorkerSet is installed without waiting for Monitoring, so its first install would fail on a kind not served yet"),
)

INSTALLATION = Installation(
    LEADER_WORKER_SET,
    chart_args(LEADER_WORKER_SET),
    _install,
    charts=(ChartValues("values", LWS_CHART, lambda args: {}, lambda args: args.values, "components/leader_worker_set.py: no values of its own", relied=RELIED),),
)
