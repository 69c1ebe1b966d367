"""A team's Spark: the service account the Kubeflow SDK's Spark jobs run as, with the rights a
Spark driver needs in the namespace, and on GKE the team's Google identity (docs/spark.md).

The Kubeflow SDK 0.5.0 names the driver's service account `spark-operator-spark` in every job it
submits (kubeflow/spark/backends/kubernetes/constants.py DEFAULT_SERVICE_ACCOUNT) and takes no
other; Kubeflow's overlay of the operator makes none (it renders the chart for every namespace,
`spark.jobNamespaces: [""]`, where the chart makes the account only per named namespace:
kubeflow/spark-operator v2.5.0 charts/spark-operator-chart/templates/spark/serviceaccount.yaml,
rbac.yaml). So each team namespace gets it, bound to the chart's rules for a job namespace (one
ClusterRole, components/spark.py, bound in the namespace only); executors
run as the driver's account (Spark on Kubernetes: spark.kubernetes.authenticate.executor.
serviceAccountName falls back to the driver's)."""

from __future__ import annotations

from typing import Any

import pulumi

from components.profiles.namespace import RBAC
from components.spark import SPARK_ROLE, SPARK_SERVICE_ACCOUNT
from facts.labels import WORKLOAD_IDENTITY_ANNOTATION
from stackmodel.schema import Team as TeamConfig


def spark_objects(team: TeamConfig, gcp_service_account: pulumi.Input[str] | None) -> list[dict[str, Any]]:
    """The team's Spark account and its RoleBinding to the Spark role; on GKE the account acts as the
    team's Google service account (the binding is made with the team's identity, components/profiles/google.py)."""
    meta: dict[str, Any] = {"name": SPARK_SERVICE_ACCOUNT, "namespace": team.name}
    if gcp_service_account:
        meta["annotations"] = {WORKLOAD_IDENTITY_ANNOTATION: gcp_service_account}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "RoleBinding",
            "metadata": {"name": SPARK_SERVICE_ACCOUNT, "namespace": team.name},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": SPARK_ROLE},
            "subjects": [{"kind": "ServiceAccount", "name": SPARK_SERVICE_ACCOUNT, "namespace": team.name}],
        },
    ]
