"""The Spark operator 2.5.0, from the pinned Kubeflow tree's own entry (kubeflow/community-
distribution 26.03.1-rc.2 `applications/spark/spark-operator/overlays/kubeflow`, what its
example/kustomization.yaml installs: the chart spark-operator 2.5.0 rendered into the `kubeflow`
namespace, its controller watching every namespace (`--namespaces=""`), its webhook on port 9443
with certificates it makes itself, and the aggregated roles kubeflow-spark-admin/edit/view).
Installed as Kubeflow ships it: nothing of the tree changes. What a team namespace needs to run
Spark jobs (the Spark service account the Kubeflow SDK names, its rights and, on GKE, its Google
identity) is the team's: components/profiles/spark.py. With Kueue, an admission policy keeps GPU
executors in the team's queue (GPU_DRIVER_POLICY). docs/spark.md."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from facts.admission import deny_binding, fail_closed_policy
from facts.labels import KUEUE_QUEUE_LABEL, PROFILE_NAMESPACE_LABEL
from facts.node_labels import GPU_RESOURCE
from infra.cluster import Cluster
from plumbing.base import PlatformComponent, UpstreamArgs, apply_manifest
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.readiness import Readiness
from stackmodel.components.kueue import KUEUE
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


GPU_DRIVER_POLICY = "mlplatform-spark-driver-without-gpus"
"""With Kueue: a SparkApplication's driver asks for no GPU and names no queue. Kueue's pod webhook
leaves a pod whose controlling owner is a pod Kueue manages to that owner (kueue v0.19.2
pkg/controller/jobs/pod/pod_webhook.go Default, jobframework.FindAncestorJobManagedByKueue; a Pod is a
known owner of the `pod` integration), and Spark makes the driver its executors' controlling owner
(its BasicExecutorFeatureStep): a driver Kueue queues (one asking for GPUs, or naming a queue) would
take its GPU executors past the team's queue, and the team quota has no GPU line under Kueue."""


@dataclass(frozen=True)
class SparkArgs(UpstreamArgs):
    kueue: bool = False
    """Kueue queues the team namespaces' GPU pods: the GPU-driver policy is in force."""


def gpu_driver_policy() -> list[dict[str, Any]]:
    """The policy and its binding to every team namespace."""
    driver = "object.spec.driver"
    policy = fail_closed_policy(
        GPU_DRIVER_POLICY,
        [{"apiGroups": ["sparkoperator.k8s.io"], "apiVersions": ["v1beta2"], "operations": ["CREATE", "UPDATE"], "resources": ["sparkapplications"]}],
        [],
        [
            {
                "expression": f"!has({driver}.gpu) || {driver}.gpu.quantity <= 0",
                "message": f"spec.driver.gpu: the driver of a Spark job asks for no GPU here (Kueue would let its executors' "
                f"{GPU_RESOURCE} past the team's queue); give the GPUs to the executors (spec.executor.gpu or "
                "spark.executor.resource.gpu.amount)",
                "reason": "Invalid",
            },
            {
                "expression": f"!has({driver}.labels) || !('{KUEUE_QUEUE_LABEL}' in {driver}.labels)",
                "message": f"spec.driver.labels: the driver names no Kueue queue ({KUEUE_QUEUE_LABEL}): queued, it would "
                "take its executors past the team's queue; GPU executors wait in the queue by themselves",
                "reason": "Invalid",
            },
        ],
    )
    key, value = PROFILE_NAMESPACE_LABEL
    binding = deny_binding(GPU_DRIVER_POLICY, GPU_DRIVER_POLICY, {"matchLabels": {key: value}})
    return [policy, binding]


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

    def __init__(self, name: str, args: SparkArgs, cluster: Cluster, needs: list[pulumi.Resource], opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, args.sources)
        own = [apply_manifest(SPARK_ROLE, spark_role(), self.child(needs))]
        if args.kueue:
            own += [apply_manifest(o["metadata"]["name"] + ("-binding" if o["kind"].endswith("Binding") else ""), o, self.child(needs)) for o in gpu_driver_policy()]
        self.ready = self.kustomize(INSTALL, TREE, depends_on=[*needs, *own])
        self.register_outputs({"ready": self.ready.urn})


def spark_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> SparkArgs:
    return SparkArgs(sources=config.sources, kueue=config.enabled(KUEUE))


def _install(args: SparkArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return SparkOperator("spark-operator", args, cluster, ready.resources(SPARK.needs, "the Spark operator"))


INSTALLATION = Installation(SPARK, spark_args, _install)
