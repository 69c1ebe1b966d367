"""JobSet, installed once for the whole cluster (Trainer's bundled copy is switched off)."""

from __future__ import annotations

import pulumi

from args.components import JobSetArgs
from components.base import PlatformComponent
from facts.versions import JOBSET_CHART
from infra.cluster import Cluster

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
