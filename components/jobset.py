"""JobSet, installed once for the whole cluster (Trainer's bundled copy is switched off)."""

from __future__ import annotations

import pulumi

from facts.versions import JOBSET_CHART
from infra.cluster import Cluster
from plumbing.base import ChartArgs, PlatformComponent
from plumbing.charts import ChartValues, Relied, exactly
from plumbing.installation import Installation, chart_args
from plumbing.readiness import Readiness
from stackmodel.components.jobset import JOBSET

NAMESPACE = "jobset-system"


class JobSet(PlatformComponent):
    """JobSet, once for the cluster: Trainer runs every TrainJob as a JobSet."""

    ready: pulumi.Resource
    """Done when the controller and its webhook are ready."""
    namespace: pulumi.Output[str]

    def __init__(self, name: str, args: ChartArgs, cluster: Cluster, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, args.sources)
        self.ready, self.namespace = self.chart_in_its_namespace(NAMESPACE, "jobset", JOBSET_CHART, {}, args.values)
        self.register_outputs({"namespace": self.namespace, "ready": self.ready.urn})


def _install(args: ChartArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return JobSet("jobset", args, cluster)


# What the platform needs of the chart's values beyond what it sets (plumbing/charts.py): the
# keys it relies on, each read in the chart at its pinned version, and why it sets the keys it sets.
RELIED = (
    Relied(("certManager", "enable"), exactly(False), "certManager.enable false, the chart's default",
           "values.yaml, templates/certmanager/certificate.yaml (an Issuer and Certificates, kinds of cert-manager's)",
           "JobSet is installed without waiting for cert-manager; its controller makes its own webhook certificate (templates/internalcert/secret.yaml)"),
    Relied(("prometheus", "enable"), exactly(False), "prometheus.enable false, the chart's default",
           "values.yaml, templates/prometheus/monitor.yaml (a ServiceMonitor, a kind of Monitoring's)",
           "JobSet is installed without waiting for Monitoring, so its first install would fail on a kind not served yet"),
)


INSTALLATION = Installation(
    JOBSET,
    chart_args(JOBSET),
    _install,
    charts=(ChartValues("values", JOBSET_CHART, lambda args: {}, lambda args: args.values, "components/jobset.py: no values of its own", relied=RELIED),),
)
