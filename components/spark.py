"""The Spark operator 2.5.0, from the pinned Kubeflow tree's own entry (kubeflow/community-
distribution 26.03.1-rc.2 `applications/spark/spark-operator/overlays/kubeflow`, what its
example/kustomization.yaml installs: the chart spark-operator 2.5.0 rendered into the `kubeflow`
namespace, its controller watching every namespace (`--namespaces=""`), its webhook on port 9443
with certificates it makes itself, and the aggregated roles kubeflow-spark-admin/edit/view).
Installed as Kubeflow ships it: nothing of the tree changes. What a team namespace needs to run
Spark jobs (the Spark service account the Kubeflow SDK names, its rights and, on GKE, its Google
identity; the admission policy that keeps GPU executors in the team's queue) is the team's:
components/profiles/spark.py. docs/spark.md."""

from __future__ import annotations

import pulumi

from infra.cluster import Cluster
from plumbing.base import PlatformComponent, UpstreamArgs, apply_manifest
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.readiness import Readiness
from stackmodel.components.spark import SPARK
from stackmodel.stack import PlatformConfig

TREE = "applications/spark/spark-operator/overlays/kubeflow"
INSTALL = "spark-operator"
SPARK_SERVICE_ACCOUNT = "spark-operator-spark"
"""The driver's account in every job the Kubeflow SDK 0.5.0 submits (kubeflow/spark/backends/
kubernetes/constants.py DEFAULT_SERVICE_ACCOUNT); each team namespace has it (components/profiles/spark.py)."""
SPARK_ROLE = "mlplatform-spark-job"
SPARK_RULES = (
    {
        "apiGroups": [""],
        "resources": ["pods", "configmaps", "persistentvolumeclaims", "services"],
        "verbs": ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"],
    },
)
"""The chart's Role for a job namespace's Spark account (kubeflow/spark-operator v2.5.0
charts/spark-operator-chart/templates/spark/rbac.yaml): the driver makes its executors, their
Service, ConfigMaps and claims. One ClusterRole, bound in each team namespace."""


def spark_role() -> dict[str, object]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": SPARK_ROLE},
        "rules": [dict(rule) for rule in SPARK_RULES],
    }


class SparkOperator(PlatformComponent):
    """The Spark operator, for SparkApplications in every team namespace."""

    ready: pulumi.Resource
    """Done when the tree (its controller and webhook among it) is ready."""

    def __init__(self, name: str, args: UpstreamArgs, cluster: Cluster, needs: list[pulumi.Resource], opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, args.sources)
        role = apply_manifest(SPARK_ROLE, spark_role(), self.child(needs))
        self.ready = self.kustomize(INSTALL, TREE, depends_on=[*needs, role])
        self.register_outputs({"ready": self.ready.urn})


def spark_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> UpstreamArgs:
    return UpstreamArgs(sources=config.sources)


def _install(args: UpstreamArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return SparkOperator("spark-operator", args, cluster, ready.resources(SPARK.needs, "the Spark operator"))


INSTALLATION = Installation(SPARK, spark_args, _install)
