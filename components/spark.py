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

from components.kueue_pods import names_gpus
from facts.admission import fail_closed_policy, teams_binding
from facts.labels import KUEUE_QUEUE_LABEL
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
"""With Kueue: a SparkApplication's GPUs are the executors', asked for where Kueue sees them.

- The driver asks for no GPU and names no queue. Kueue's pod webhook leaves a pod whose
  controlling owner is a pod Kueue manages to that owner (kueue v0.19.2
  pkg/controller/jobs/pod/pod_webhook.go Default, jobframework.FindAncestorJobManagedByKueue; a
  Pod is a known owner of the `pod` integration), and Spark makes the driver its executors'
  controlling owner (its BasicExecutorFeatureStep): a driver Kueue queues (one asking for GPUs,
  in spec.driver.gpu, its template or sidecars or sparkConf `spark.driver.resource.gpu.amount`, or
  naming a queue, in spec.driver.labels or sparkConf `spark.kubernetes.driver.label.*`) would take
  its GPU executors past the team's queue, and the team quota has no GPU line under Kueue.
- The executors ask for GPUs in sparkConf (`spark.executor.resource.gpu.amount`, vendor
  `nvidia.com`), which Spark writes into each executor pod it creates, not in spec.executor.gpu,
  sidecars or init containers: those the operator's pod webhook adds (kubeflow/spark-operator
  v2.5.0 internal/webhook/sparkpod_defaulter.go addGPU, addSidecarContainers,
  addInitContainers), and it runs after Kueue's. The API server calls mutating webhooks in the
  order of their configurations' names (k8s.io/apiserver pkg/admission/configuration
  mutating_webhook_manager.go, sorted ByName: `kueue-mutating-webhook-configuration` before
  `spark-operator-webhook`) and calls Kueue's again for nobody (its `mpod.kb.io`
  reinvocationPolicy Never), so Kueue's GPU match condition (components/kueue_pods.py) has
  already let the pod through without a queue."""
SPARK_GPU_CONF = "spark.{role}.resource.gpu.amount"
"""Spark's resource scheduling: a GPU (`resource.gpu`, vendor nvidia.com -> nvidia.com/gpu) per
driver or executor pod, written into the pod's limits by Spark itself."""
SPARK_LABEL_CONF = "spark.kubernetes.driver.label."
"""Spark on Kubernetes: sparkConf `spark.kubernetes.driver.label.<name>` labels the driver pod."""


@dataclass(frozen=True)
class SparkArgs(UpstreamArgs):
    kueue: bool = False
    """Kueue queues the team namespaces' GPU pods: the GPU-driver policy is in force."""


def _container_gpus(containers: str) -> str:
    """CEL: a list of containers (optional field) of which one asks for nvidia.com/gpu."""
    return f"(has({containers}) && {names_gpus(containers)})"


def gpu_driver_policy() -> list[dict[str, Any]]:
    """The policy and its binding to every team namespace."""
    driver, executor, conf = "object.spec.driver", "object.spec.executor", "object.spec.sparkConf"
    driver_gpu_conf, executor_gpu_conf = SPARK_GPU_CONF.format(role="driver"), SPARK_GPU_CONF.format(role="executor")
    in_conf = f"(has({conf}) && '{driver_gpu_conf}' in {conf})"
    driver_gpus = " || ".join(
        [
            f"(has({driver}.gpu) && {driver}.gpu.quantity > 0)",
            _container_gpus(f"{driver}.sidecars"),
            _container_gpus(f"{driver}.initContainers"),
            f"(has({driver}.template) && has({driver}.template.spec) && {_container_gpus(f'{driver}.template.spec.containers')})",
            in_conf,
        ]
    )
    executor_gpus = " || ".join(
        [
            f"(has({executor}.gpu) && {executor}.gpu.quantity > 0)",
            _container_gpus(f"{executor}.sidecars"),
            _container_gpus(f"{executor}.initContainers"),
        ]
    )
    queue_conf = f"{SPARK_LABEL_CONF}{KUEUE_QUEUE_LABEL}"
    where = (
        f"sparkConf {executor_gpu_conf} and spark.executor.resource.gpu.vendor=nvidia.com (with a discovery script, "
        "spark.executor.resource.gpu.discoveryScript), which Spark writes into each executor pod, where Kueue queues it"
    )
    policy = fail_closed_policy(
        GPU_DRIVER_POLICY,
        [{"apiGroups": ["sparkoperator.k8s.io"], "apiVersions": ["v1beta2"], "operations": ["CREATE", "UPDATE"], "resources": ["sparkapplications"]}],
        [],
        [
            {
                "expression": f"!({driver_gpus})",
                "message": f"spec.driver.gpu: the driver of a Spark job asks for no GPU here (spec.driver.gpu, its sidecars, "
                f"init containers or template, sparkConf {driver_gpu_conf}): Kueue would let its executors' {GPU_RESOURCE} past "
                f"the team's queue; give the GPUs to the executors through {where}",
                "reason": "Invalid",
            },
            {
                "expression": f"(!has({driver}.labels) || !('{KUEUE_QUEUE_LABEL}' in {driver}.labels)) && !(has({conf}) && '{queue_conf}' in {conf})",
                "message": f"spec.driver.labels: the driver names no Kueue queue ({KUEUE_QUEUE_LABEL}, nor sparkConf {queue_conf}): "
                "queued, it would take its executors past the team's queue; GPU executors wait in the queue by themselves",
                "reason": "Invalid",
            },
            {
                "expression": f"!({executor_gpus})",
                "message": f"spec.executor.gpu: the Spark operator's webhook adds these GPUs (and a sidecar's or init container's) "
                "to the executor pods after Kueue's webhook has let them through unqueued, so they would run outside the team's "
                f"queue; ask for them in {where}",
                "reason": "Invalid",
            },
        ],
    )
    return [policy, teams_binding(GPU_DRIVER_POLICY)]


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
