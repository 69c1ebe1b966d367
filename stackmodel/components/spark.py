"""The stack file's Spark operator (components/spark.py): Spark jobs in team namespaces."""

from __future__ import annotations

from facts import versions
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.spec import ComponentSpec, Need, Toggle, What


class SparkConfig(Toggle):
    """The Spark operator: SparkApplications (the Kubeflow SDK's SparkClient) in team namespaces,
    run as the team's Spark service account; GPU executors wait in the team's Kueue queue."""


SPARK = ComponentSpec(
    "spark",
    SparkConfig,
    "The Spark operator; needs kubeflow.",
    needs=(Need(KUBEFLOW, What.CONTROLLER),),  # its objects live in Kubeflow's namespace; team namespaces are profiles
    pins=(versions.SPARK_OPERATOR,),
)
