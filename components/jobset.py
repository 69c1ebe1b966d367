"""JobSet, installed once for the whole cluster (Trainer's bundled copy is switched off)."""

from __future__ import annotations

import pulumi

from args.components import JobSetArgs, jobset_args
from components.base import PlatformComponent
from components.installation import ChartValues, Installation
from components.readiness import Readiness
from facts.versions import JOBSET_CHART
from infra.cluster import Cluster
from stackmodel.components.jobset import JOBSET

NAMESPACE = "jobset-system"


class JobSet(PlatformComponent):
    """JobSet, once for the cluster: Trainer runs every TrainJob as a JobSet."""

    ready: pulumi.Resource
    """Done when the controller and its webhook are ready."""
    namespace: pulumi.Output[str]

    def __init__(self, name: str, args: JobSetArgs, cluster: Cluster, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, args.sources)
        namespace = self.create_namespace(NAMESPACE)
        self.ready = self.chart(
            "jobset", JOBSET_CHART, namespace.metadata.name, {}, depends_on=[namespace], overlay=args.values
        )
        self.namespace = namespace.metadata.apply(lambda m: m.name or NAMESPACE)
        self.register_outputs({"namespace": self.namespace, "ready": self.ready.urn})


def _install(args: JobSetArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return JobSet("jobset", args, cluster)


INSTALLATION = Installation(
    JOBSET,
    jobset_args,
    _install,
    charts=(ChartValues("values", JOBSET_CHART, lambda args: {}, lambda args: args.values, "components/jobset.py: no values of its own"),),
)
