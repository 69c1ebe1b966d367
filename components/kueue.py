"""Kueue with the TrainJob, JobSet and Ray integrations and plain pods that ask for GPUs
(components/kueue_pods.py: GPU notebooks and pipeline steps), and one ResourceFlavor per GPU
pool derived from the pool's own node labels and taints (facts/node_labels.py), so a
flavor cannot drift from its pool. Team ClusterQueues/LocalQueues come with the teams.

Queued (DWS) pools: GKE gives their nodes only to ProvisioningRequests, so each such pool
gets a ProvisioningRequestConfig (class `queued-provisioning.gke.io`, managed resource
nvidia.com/gpu) and an AdmissionCheck of Kueue's ProvisioningRequest controller, and every
team ClusterQueue runs that check on the pool's flavor (components/profiles/queues.py). Manifests
as in GKE's Kueue + DWS examples (guide: cloud.google.com/kubernetes-engine/docs/how-to/
provisioningrequest; GoogleCloudPlatform/ai-on-gke tutorials-and-examples/
workflow-orchestration/dws-examples/dws-queues.yaml and dws_and_reservation.yaml, the
per-flavor check), written in Kueue's v1beta2 API.

Configuration layout and framework names: kubernetes-sigs/kueue charts/kueue values.yaml
(`managerConfig.controllerManagerConfigYaml`, config.kueue.x-k8s.io/v1beta2) and the
Kueue integrations reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import yaml

from components import kueue_owners
from components.kuberay import kuberay_args
from components.kueue_owners import LWS_FRAMEWORK
from components.kueue_pods import POD_FRAMEWORK, managed_namespaces, with_gpu_pods_only
from facts.dra import DEVICE_CLASS
from facts.node_labels import GPU_RESOURCE, GPU_TAINT, pool_selector, pool_taints
from facts.priorities import CLASSES as PRIORITY_CLASSES
from facts.topology import LEVELS, TOPOLOGY_NAME
from facts.versions import KUEUE_CHART
from infra.cluster import Cluster
from plumbing.base import ChartArgs, PlatformComponent, apply_manifest
from plumbing.charts import ChartValues, Hint, Relied, built_by, empty, exactly
from plumbing.custom_object import CustomObject
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.readiness import Readiness
from plumbing.roles import VERBS_READ, Rule, cluster_role
from stackmodel.components.kueue import KUEUE, WaitForPodsReady
from stackmodel.components.leader_worker_set import LEADER_WORKER_SET
from stackmodel.components.monitoring import service_monitor_enabled
from stackmodel.schema import GpuPool, Provisioning
from stackmodel.stack import PlatformConfig

NAMESPACE = "kueue-system"
CONFIG_MAP = "kueue-manager-config"
CONFIG_MAP_KEY = "controller_manager_config.yaml"
"""Where the chart writes `managerConfig.controllerManagerConfigYaml`, release `kueue`
(charts/kueue/templates/manager/manager-config.yaml); the manager reads it from there."""
FRAMEWORKS = (
    "batch/job",
    "jobset.x-k8s.io/jobset",
    "trainer.kubeflow.org/trainjob",
    "ray.io/rayjob",
    "ray.io/raycluster",
    POD_FRAMEWORK,
)


def frameworks(leader_worker_set: bool) -> tuple[str, ...]:
    """Kueue's integrations: FRAMEWORKS, and LeaderWorkerSet's where it is installed (an LLM
    replica across nodes is one group, admitted whole: components/leader_worker_set.py)."""
    return (*FRAMEWORKS, LWS_FRAMEWORK) if leader_worker_set else FRAMEWORKS


DEFAULT_FLAVOR = "default"
"""CPU-only nodes (kind, the system pool): no labels, no taints."""
API_GROUP = "kueue.x-k8s.io"
API_VERSION = f"{API_GROUP}/v1beta2"
# Kueue v0.19.2 apis/kueue/v1beta2/provisioningrequestconfig_types.go
# (ProvisioningRequestControllerName). The controller needs no feature gate: ProvisioningACC
# went GA, locked on, in 0.14 and was removed in 0.15 (pkg/features/kube_features.go at
# v0.14.0 and v0.19.2); cmd/kueue/main.go (setupControllers) starts it whenever the API
# server serves autoscaling.x-k8s.io ProvisioningRequests, as GKE does.
PROVISIONING_REQUEST_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
# GKE's provisioning class for queued provisioning (the GKE guide above).
QUEUED_PROVISIONING_CLASS = "queued-provisioning.gke.io"


# All-or-nothing admission, Kueue v0.19.2 (8eab6877): apis/config/v1beta2/configuration_types.go
# `waitForPodsReady` {timeout, blockAdmission, recoveryTimeout, requeuingStrategy {timestamp,
# backoffLimitCount, backoffBaseSeconds, backoffMaxSeconds}} and site/content/en/docs/tasks/
# manage/setup_wait_for_pods_ready.md. v1beta2 has no `enable`: since 0.19 the defaults
# (apis/config/v1beta2/defaults.go) switch it on with a 30m timeout (kueue#11855); we write it
# out with our timeout so the stack says what the cluster does. recoveryTimeout (a running
# workload that lost a pod) defaults to the timeout. The `Eviction` timestamp puts an
# evicted workload behind the ones that waited meanwhile.
REQUEUE_TIMESTAMP = "Eviction"


@dataclass(frozen=True)
class KueueArgs(ChartArgs):
    gpu_pools: tuple[GpuPool, ...]
    """One ResourceFlavor each; queued pools also an admission check."""
    service_monitor: bool
    wait_for_pods_ready: WaitForPodsReady
    """All-or-nothing admission, in Kueue's manager configuration."""
    kuberay_chart: bool
    """The KubeRay operator is our chart's (not GKE's add-on): the owner guard knows its identity
    (components/kueue_owners.py)."""
    fair_sharing: bool = True
    """Kueue's fair sharing (FAIR_SHARING) in its configuration."""
    leader_worker_set: bool = False
    """LeaderWorkerSet is installed: Kueue admits each of its groups whole."""


def wait_for_pods_ready(settings: WaitForPodsReady) -> dict[str, Any]:
    strategy: dict[str, Any] = {"timestamp": REQUEUE_TIMESTAMP}
    if settings.backoff_limit_count is not None:
        strategy["backoffLimitCount"] = settings.backoff_limit_count
    return {"timeout": settings.timeout, "blockAdmission": settings.block_admission, "requeuingStrategy": strategy}


def device_class_mappings(pools: Sequence[GpuPool]) -> list[dict[str, Any]]:
    """With a DRA pool: Kueue counts each device a pod claims of the NVIDIA DRA driver's GPU class
    as one `nvidia.com/gpu`, the resource team quotas name on every GPU pool's flavor (the
    ResourceClaimTemplate path, KueueDRAIntegration beta and on since 0.18: kueue@v0.19.2
    site/content/en/docs/tasks/manage/setup_dra.md, apis/config/v1beta2/configuration_types.go
    `resources.deviceClassMappings`, pkg/features/kube_features.go:745-747)."""
    if not any(pool.dra for pool in pools):
        return []
    return [{"name": GPU_RESOURCE, "deviceClassNames": [DEVICE_CLASS]}]


# Fair sharing, Kueue v0.19.2: on when the Configuration has `fairSharing` (apis/config/v1beta2/
# configuration_types.go FairSharing; v1beta1's `enable` is gone, apis/config/v1beta1/
# configuration_conversion.go:44-46), whose preemptionStrategies must be one of three lists
# (pkg/config/validation.go:385-426 validStrategySets). Both, in the order Kueue's fair-sharing doc
# configures them (site/content/en/docs/concepts/preemption.md, "Fair Sharing"): a preemption must
# leave the preempting queue's share at most the target's (LessThanOrEqualToFinalShare), and only
# if that finds nothing, below the target's share before it (LessThanInitialShare). What each
# team queue's preemption does with it: components/profiles/queues.py.
FAIR_SHARING = {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}


def manager_config(pods_ready: WaitForPodsReady | None = None, pools: Sequence[GpuPool] = (), fair_sharing: bool = True, leader_worker_set: bool = False) -> str:
    config = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443", "enableClusterQueueResources": True},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "internalCertManagement": {"enable": True},
        "waitForPodsReady": wait_for_pods_ready(pods_ready or WaitForPodsReady()),
        # Only team namespaces: pods elsewhere never reach Kueue (components/kueue_pods.py).
        "managedJobsNamespaceSelector": managed_namespaces(),
        "integrations": {"frameworks": list(frameworks(leader_worker_set))},
    }
    if fair_sharing:
        config["fairSharing"] = FAIR_SHARING
    mappings = device_class_mappings(pools)
    if mappings:
        config["resources"] = {"deviceClassMappings": mappings}
    return yaml.safe_dump(config, sort_keys=False)


def kueue_values(pods_ready: WaitForPodsReady | None = None, pools: Sequence[GpuPool] = (), fair_sharing: bool = True, leader_worker_set: bool = False) -> dict[str, Any]:
    """`enablePrometheus` stays off: it would render the chart's ServiceMonitor (charts/kueue/
    templates/prometheus/monitor.yaml), whose CRD is Monitoring's, and so make the whole chart
    wait for Monitoring; `service_monitor` is ours instead, tied to both (plumbing/ties.py).
    It also renders a Role and RoleBinding for kube-prometheus' `prometheus-k8s` and
    `prometheus-operator` accounts (templates/prometheus/role.yaml), which kube-prometheus-stack
    does not have: its Prometheus discovers targets through its own ClusterRole."""
    return {"managerConfig": {"controllerManagerConfigYaml": manager_config(pods_ready, pools, fair_sharing, leader_worker_set)}, "enablePrometheus": False}


METRICS_SERVICE_LABELS = {
    "app.kubernetes.io/name": "kueue",
    "app.kubernetes.io/instance": "kueue",
    "app.kubernetes.io/component": "metrics-service",
}
"""The stable labels of the chart's metrics Service (templates/_helpers.tpl
kueue.metricsService.labels, release `kueue`), without the chart-version ones."""
SERVICE_MONITOR = "kueue-controller-manager-metrics-monitor"
"""The name the chart gives its own (monitor.yaml): the live object keeps it."""


def service_monitor(labels: dict[str, str]) -> dict[str, Any]:
    """What the chart's ServiceMonitor scrapes, as ours (charts/kueue/templates/prometheus/
    monitor.yaml at 0.19.2, `metrics.serviceMonitor.tlsConfig` at its default): the metrics
    Service's `https` port with the scraper's service-account token. `labels`: what the
    Prometheus selects monitors by."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": SERVICE_MONITOR, "namespace": NAMESPACE, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(METRICS_SERVICE_LABELS)},
            "endpoints": [
                {
                    "path": "/metrics",
                    "port": "https",
                    "scheme": "https",
                    "bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
                    "tlsConfig": {"insecureSkipVerify": True},
                }
            ],
        },
    }


def topologies(pools: Sequence[GpuPool]) -> list[dict[str, Any]]:
    """GKE's Topology (facts/topology.py), when a pool is placed by it; none otherwise (kind has
    no GPU pools and its nodes none of GKE's labels). Its levels are immutable (Topology CRD)."""
    if not any(pool.topology_aware for pool in pools):
        return []
    return [
        {
            "apiVersion": API_VERSION,
            "kind": "Topology",
            "metadata": {"name": TOPOLOGY_NAME},
            "spec": {"levels": [{"nodeLabel": label} for label in LEVELS]},
        }
    ]


def flavor_tolerations(pool: GpuPool) -> list[dict[str, str]]:
    """What a pool's flavor tolerates for the pods Kueue admits to it: the pool's own taints, but
    on a pool Kueue does not place by topology not the GPU taint. Kueue lets a pod set take a
    flavor whose taints it or the flavor's tolerations tolerate (kueue v0.19.2 pkg/scheduler/
    flavorassigner/flavorassigner.go:1239 checkFlavorForPodSets) and adds those tolerations and the
    flavor's node labels to its pods (pkg/podset/podset.go:78-91 FromAssignment); every flavor of a
    team queue holds CPU and memory (components/profiles/queues.py), and a queue goes on to the next
    flavor when the default one is full (flavorFungibility whenCanPreempt: TryNextFlavor by default,
    apis/kueue/v1beta2/clusterqueue_types.go:471-479). So a flavor tolerating the GPU taint put a
    CPU-only job on the pool's GPU nodes. GPU pods tolerate it themselves: the runtimes and Ray
    workers (pool_taints), the notebook form's toleration group, and GKE adds it to any pod asking
    for nvidia.com/gpu (its ExtendedResourceToleration admission plugin). A topology-aware pool's
    flavor keeps it: it takes only pod sets that ask for a topology (tas_flavorassigner.go:199-200),
    and the CRD keeps a TAS flavor's tolerations as they are (resourceflavor_types.go:50)."""
    return [t.toleration() for t in pool_taints(pool) if pool.topology_aware or t != GPU_TAINT]


def resource_flavors(pools: Sequence[GpuPool]) -> list[dict[str, Any]]:
    """The default flavor plus one per GPU pool, as manifests (kueue.x-k8s.io/v1beta2); a
    topology-aware pool's names GKE's Topology (its nodeLabels, the pool selector, are never
    empty, as the CRD asks of a TAS flavor). The CRD lets an update add topologyName but not
    remove it, and keeps nodeLabels and tolerations as they are once it is set: a pool that
    stops being topology-aware needs its flavor deleted first (docs/gke-cluster.md). Each
    flavor's taints are its pool's, its tolerations `flavor_tolerations`."""
    flavors: list[dict[str, Any]] = [
        {"apiVersion": API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": DEFAULT_FLAVOR}, "spec": {}}
    ]
    for pool in pools:
        spec: dict[str, Any] = {
            "nodeLabels": pool_selector(pool),
            "nodeTaints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in pool_taints(pool)],
        }
        tolerations = flavor_tolerations(pool)
        if tolerations:
            spec["tolerations"] = tolerations
        if pool.topology_aware:
            spec["topologyName"] = TOPOLOGY_NAME
        flavors.append({"apiVersion": API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": pool.name}, "spec": spec})
    return flavors


def queued_pools(pools: Sequence[GpuPool]) -> list[GpuPool]:
    return [p for p in pools if p.provisioning is Provisioning.QUEUED]


def admission_check_name(pool: GpuPool) -> str:
    """The AdmissionCheck (and its ProvisioningRequestConfig) of one queued pool."""
    return f"{pool.name}-dws"


def provisioning_admission_checks(pools: Sequence[GpuPool]) -> list[dict[str, Any]]:
    """Per queued pool, a ProvisioningRequestConfig and the AdmissionCheck that uses it."""
    objects: list[dict[str, Any]] = []
    for pool in queued_pools(pools):
        name = admission_check_name(pool)
        objects += [
            {
                "apiVersion": API_VERSION,
                "kind": "ProvisioningRequestConfig",
                "metadata": {"name": name},
                "spec": {"provisioningClassName": QUEUED_PROVISIONING_CLASS, "managedResources": [GPU_RESOURCE]},
            },
            {
                "apiVersion": API_VERSION,
                "kind": "AdmissionCheck",
                "metadata": {"name": name},
                "spec": {
                    "controllerName": PROVISIONING_REQUEST_CONTROLLER,
                    "parameters": {"apiGroup": API_GROUP, "kind": "ProvisioningRequestConfig", "name": name},
                },
            },
        ]
    return objects


def workload_priority_classes() -> list[dict[str, Any]]:
    """The platform's WorkloadPriorityClasses (facts/priorities.py: interactive, batch, preemptible):
    what a job names with `kueue.x-k8s.io/priority-class`, and what each kind of workload gets
    when it names none (kueue v0.19.2 apis/kueue/v1beta2/workloadpriorityclass_types.go)."""
    return [
        {"apiVersion": API_VERSION, "kind": "WorkloadPriorityClass", "metadata": {"name": c.name}, "value": c.value, "description": c.description}
        for c in PRIORITY_CLASSES
    ]


WORKLOAD_READER = "kubeflow-kueue-view"
"""Aggregated into kubeflow-view, so into -edit and -admin too (plumbing/roles.py): team members read
their namespace's Workloads and LocalQueue, where Kueue says why a notebook or job waits (the
Workload's `QuotaReserved` condition and `Pending` events), and the LocalQueue's pending workloads
from Kueue's visibility API, their place in the queue (`queue-status` in the notebook image). Bound
in a team namespace only (the profile's RoleBindings), so a member sees their own namespace's and
nothing of another team's: the LocalQueue endpoint lists only that LocalQueue's workloads (kueue
v0.19.2 pkg/visibility/storage/pending_workloads_lq.go Get: namespace and queue name must match),
and `clusterqueues/pendingworkloads`, cluster-scoped, no RoleBinding can grant. The chart's own
viewer roles aggregate into Kubernetes' view/edit/admin, which profile members are not bound to."""
VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
"""Kueue's visibility API (apis/visibility/v1beta2, VisibilityOnDemand, beta and on since 0.9:
pkg/features/kube_features.go:663-666), served by the manager on 8082 behind the chart's
APIService v1beta2.visibility.kueue.x-k8s.io (infra/gke.py opens the port on private clusters)."""
READ_RULES = (
    Rule((API_GROUP,), ("workloads", "localqueues"), VERBS_READ),
    Rule((VISIBILITY_GROUP,), ("localqueues/pendingworkloads",), ("get",)),
)


class Kueue(PlatformComponent):
    """Kueue: admits the teams' workloads against their quotas, with one flavor per GPU pool."""

    ready: pulumi.Resource
    """Done when the controller and its webhooks are ready."""
    flavors: list[pulumi.Resource]
    namespace: pulumi.Output[str]
    flavor_names: pulumi.Output[list[str]]
    """The ResourceFlavors, the default one first: what team ClusterQueues name."""

    def __init__(
        self,
        name: str,
        args: KueueArgs,
        cluster: Cluster,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__(name, cluster, opts, args.sources)
        namespace = self.create_namespace(NAMESPACE)
        values = kueue_values(args.wait_for_pods_ready, args.gpu_pools, args.fair_sharing, args.leader_worker_set)
        self.ready = self.chart(
            "kueue", KUEUE_CHART, namespace.metadata.name, values, [namespace], transforms=(with_gpu_pods_only,), overlay=args.values
        )
        cluster_role(WORKLOAD_READER, ("kubeflow-view",), READ_RULES, opts=self.child())
        placed = [apply_manifest(f"topology-{t['metadata']['name']}", t, self.child([self.ready])) for t in topologies(args.gpu_pools)]
        flavors = resource_flavors(args.gpu_pools)
        self.flavors = [
            apply_manifest(f"flavor-{flavor['metadata']['name']}", flavor, self.child([self.ready, *placed])) for flavor in flavors
        ]
        # Cluster-wide, in force where a team namespace binds them (components/profiles/queues.py).
        for obj in kueue_owners.policies(frameworks(args.leader_worker_set), args.kuberay_chart):
            apply_manifest(obj['metadata']['name'], obj, self.child())
        for obj in workload_priority_classes():
            CustomObject(f"priority-{obj['metadata']['name']}", obj, self.child([self.ready]))
        for obj in provisioning_admission_checks(args.gpu_pools):
            apply_manifest(f"{obj['kind'].lower()}-{obj['metadata']['name']}", obj, self.child([self.ready]))
        self.namespace = namespace.metadata.apply(lambda m: m.name or NAMESPACE)
        self.flavor_names = pulumi.Output.from_input([flavor["metadata"]["name"] for flavor in flavors])
        self.register_outputs({"namespace": self.namespace, "flavors": self.flavor_names, "ready": self.ready.urn})


def kueue_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> KueueArgs:
    return KueueArgs(
        sources=config.sources,
        gpu_pools=config.gpu_pools,
        service_monitor=service_monitor_enabled(config),
        wait_for_pods_ready=config.components[KUEUE].wait_for_pods_ready,
        kuberay_chart=kuberay_args(config) is not None,
        fair_sharing=config.components[KUEUE].fair_sharing,
        leader_worker_set=config.enabled(LEADER_WORKER_SET),
        values=config.components[KUEUE].values,
    )


def _install(args: KueueArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return Kueue("kueue", args, cluster)


# What the platform needs of the chart's values beyond what it sets (plumbing/charts.py): the
# keys it relies on, each read in the chart at its pinned version, and why it sets the keys it sets.
RELIED = (
    Relied(("enableCertManager",), exactly(False), "enableCertManager false, the chart's default",
           "values.yaml, templates/certmanager/certificate.yaml, templates/manager/manager-config.yaml",
           "Kueue makes its own webhook certificate (internalCertManagement in the platform's configuration) and is installed "
           "without waiting for cert-manager"),
    Relied(("enableKueueViz",), exactly(False), "enableKueueViz false, the chart's default",
           "templates/kueueviz/clusterrole.yaml, cluster-role-binding.yaml; cmd/kueueviz/backend/handlers/workloads.go, middleware/auth.go",
           "KueueViz's backend reads every namespace's Workloads with its own cluster-wide role and takes the namespace from the "
           "request, its TokenReview mode only authenticates: exposed, it would show every team's queue to any member. Teams see "
           "their own with queue-status (docs/teams.md, \"Your queue\")"),
    Relied(("nameOverride",), empty, "nameOverride empty, the chart's default",
           "templates/_helpers.tpl kueue.name (app.kubernetes.io/name)",
           "the platform's ServiceMonitor selects Kueue's metrics Service by app.kubernetes.io/name kueue (components/kueue.py)"),
)
HINTS = (
    Hint(("managerConfig", "controllerManagerConfigYaml"), "the platform writes Kueue's controller configuration"),
    Hint(("managerConfig", "controllerManagerConfigYaml", "waitForPodsReady"), "Kueue's all-or-nothing admission: a multi-node "
         "job starts whole or is evicted and requeued", f"{KUEUE.path}.waitForPodsReady"),
    Hint(("managerConfig", "controllerManagerConfigYaml", "integrations"), "Kueue admits TrainJobs, JobSets, Ray workloads and GPU "
         "pods (notebooks, pipeline steps) only through these integrations (add frameworks if you like, keep the platform's)"),
    Hint(("managerConfig", "controllerManagerConfigYaml", "managedJobsNamespaceSelector"), "GPU pods are queued in the team "
         "namespaces alone; elsewhere Kueue's pod webhook must not hold pods back"),
    Hint(("managerConfig", "controllerManagerConfigYaml", "internalCertManagement"), "Kueue makes its own webhook certificate"),
    Hint(("managerConfig", "controllerManagerConfigYaml", "metrics"), "the dashboards read Kueue's cluster-queue metrics from this endpoint"),
    Hint(("managerConfig", "controllerManagerConfigYaml", "fairSharing"), "Kueue's fair sharing: teams share a cohort's idle quota "
         "by weight", f"{KUEUE.path}.fairSharing"),
    Hint(("enablePrometheus",), "the chart's ServiceMonitor is a kind of Monitoring's and would make Kueue wait for it; the platform's "
         "own monitor ties the two (plumbing/ties.py)"),
)
# kueue 0.19.2 templates/manager/manager-config.yaml: `controllerManagerConfigYaml | fromYaml`,
# the whole Configuration in one string.
DOCUMENTS = frozenset({("managerConfig", "controllerManagerConfigYaml")})


INSTALLATION = Installation(
    KUEUE,
    kueue_args,
    _install,
    charts=(
        ChartValues(
            "values",
            KUEUE_CHART,
            lambda args: kueue_values(args.wait_for_pods_ready, args.gpu_pools, args.fair_sharing, args.leader_worker_set),
            lambda args: args.values,
            built_by(kueue_values),
            relied=RELIED,
            hints=HINTS,
            documents=DOCUMENTS,
        ),
    ),
)
