"""NVIDIA DCGM exporter: GPU metrics per node and per pod, from NVIDIA's Helm chart, set up
for GKE's Google-installed driver. With `source: gke-managed` GKE runs the exporter itself
(managed Prometheus' DCGM package, enabled by infra/gke.py) and nothing is installed here.

Chart keys: NVIDIA/dcgm-exporter deployment/values.yaml and templates/daemonset.yaml,
templates/service-monitor.yaml. The GKE recipe (driver host path, library path, GPU-node
affinity) follows GoogleCloudPlatform/prometheus-engine examples/nvidia-dcgm/exporter.yaml,
which cloud.google.com/stackdriver/docs/managed-prometheus/exporters/nvidia-dcgm points to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from facts.dra import DCGM_DRA_ATTRIBUTION_OFF
from facts.node_labels import ACCELERATOR_LABEL, GPU_TAINT, pool_taints
from facts.versions import DCGM_EXPORTER as CHART
from infra.cluster import Cluster
from plumbing.base import ChartArgs, PlatformComponent
from plumbing.charts import ChartValues, Hint, Relied, built_by, empty
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.readiness import Readiness
from stackmodel.components.dcgm import DCGM_EXPORTER, DcgmSource
from stackmodel.components.monitoring import service_monitor_enabled
from stackmodel.schema import GpuPool
from stackmodel.stack import PlatformConfig

NAMESPACE = "dcgm-exporter"
RELEASE = "dcgm-exporter"
# Where GKE's driver installer puts the NVIDIA libraries and tools on the node, and where
# the exporter expects them (GKE docs "Install NVIDIA GPU device drivers"; Google's example).
GKE_NVIDIA_HOST_PATH = "/home/kubernetes/bin/nvidia"
NVIDIA_MOUNT_PATH = "/usr/local/nvidia"
NVIDIA_LIBRARY_PATH = f"{NVIDIA_MOUNT_PATH}/lib64"
NVIDIA_VOLUME = "nvidia-install-dir-host"
COLLECT_INTERVAL_SECONDS = 30
"""How often the exporter reads DCGM: its default, which neither the chart (values.yaml
`arguments`) nor these values change (dcgm-exporter 4.5.3-4.8.2 pkg/cmd/app.go:138-142,
CLICollectInterval, 30000 ms, env DCGM_EXPORTER_INTERVAL). The idle reclaim's and GPU-hours'
windows hold at least one collection each."""
# The chart's default metrics list (values.yaml extraConfigMapVolumes/extraVolumeMounts);
# repeated because setting extraVolumeMounts replaces the chart's list.
METRICS_VOLUME_MOUNT = {
    "name": "exporter-metrics-volume",
    "mountPath": "/etc/dcgm-exporter/default-counters.csv",
    "subPath": "default-counters.csv",
}


@dataclass(frozen=True)
class DcgmExporterArgs(ChartArgs):
    service_monitor: bool
    gpu_pools: tuple[GpuPool, ...] = ()
    """The exporter runs on every GPU node: it tolerates each pool's taints."""


def gpu_node_tolerations(pools: Sequence[GpuPool]) -> list[dict[str, str]]:
    """Tolerations of every taint a GPU node of the stack may carry, each once: the platform's
    (also on nodes NAP creates) and each pool's own."""
    taints = [GPU_TAINT, *(taint for pool in pools for taint in pool_taints(pool))]
    return [t.toleration() for t in dict.fromkeys(taints)]


def dcgm_exporter_values(args: DcgmExporterArgs) -> dict[str, Any]:
    """dcgm-exporter chart values for GKE nodes with Google-installed drivers."""
    return {
        # Off: the chart's ServiceMonitor (templates/service-monitor.yaml) is a kind of Monitoring's
        # and would make the whole chart wait for it; `service_monitor` is ours, tied to both.
        "serviceMonitor": {"enabled": False},
        # GKE taints GPU nodes nvidia.com/gpu=present:NoSchedule; the stack's pools may carry
        # taints of their own, and the exporter belongs on every GPU node.
        "tolerations": gpu_node_tolerations(args.gpu_pools),
        # Only GPU nodes: GKE labels each with its accelerator.
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": ACCELERATOR_LABEL, "operator": "Exists"}]}]
                }
            }
        },
        # The driver's libraries (libnvidia-ml) from the node, on the library path.
        "extraHostVolumes": [{"name": NVIDIA_VOLUME, "hostPath": GKE_NVIDIA_HOST_PATH}],
        "extraVolumeMounts": [
            METRICS_VOLUME_MOUNT,
            {"name": NVIDIA_VOLUME, "mountPath": NVIDIA_MOUNT_PATH, "readOnly": True},
        ],
        "extraEnv": [
            {"name": "LD_LIBRARY_PATH", "value": NVIDIA_LIBRARY_PATH},
            # Match GPUs to pods by device name, as GKE's device plugin reports them.
            {"name": "DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE", "value": "device-name"},
        ],
        # Pod attribution (namespace/pod/container labels) is on by default
        # (DCGM_EXPORTER_KUBERNETES=true in the DaemonSet); it reads the kubelet's
        # pod-resources socket the chart mounts from kubeletPath.
        "kubeletPath": "/var/lib/kubelet/pod-resources",
        "priorityClassName": PRIORITY_CLASS,
        # Off, and an overlay may not switch it on: facts/dra.py DCGM_DRA_ATTRIBUTION_OFF (chart 4.8.2
        # templates/daemonset.yaml:159 sets KUBERNETES_ENABLE_DRA from it, clusterrole.yaml:1 adds
        # list/watch of pods and resourceslices).
        "kubernetesDRA": {"enabled": False},
    }


SELECTOR_LABELS = {"app.kubernetes.io/name": RELEASE, "app.kubernetes.io/instance": RELEASE, "app.kubernetes.io/component": RELEASE}
"""The exporter Service's selector labels (templates/_helpers.tpl dcgm-exporter.selectorLabels,
release and chart name `dcgm-exporter`), which it carries too (templates/service.yaml)."""


def service_monitor(labels: dict[str, str]) -> dict[str, Any]:
    """The exporter's ServiceMonitor as the chart writes it (templates/service-monitor.yaml at
    4.8.2, its `serviceMonitor` values at their defaults but for these), ours: every 15 s;
    honorLabels false (the chart's default), so the workload's namespace/pod/container labels
    arrive as exported_namespace/exported_pod/exported_container and a GPU no pod holds has
    none (dashboards and alerts rely on that); the node the GPU is on, for joining with
    kube-state-metrics' node labels (pools). `labels`: what the Prometheus selects monitors by."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": RELEASE, "namespace": NAMESPACE, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(SELECTOR_LABELS)},
            "namespaceSelector": {"matchNames": [NAMESPACE]},
            "endpoints": [
                {
                    "port": "metrics",
                    "path": "/metrics",
                    "interval": "15s",
                    "scrapeTimeout": "10s",
                    "honorLabels": False,
                    "relabelings": [{"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node"}],
                    "metricRelabelings": [],
                }
            ],
        },
    }


PRIORITY_CLASS = "system-node-critical"
CRITICAL_QUOTA = "critical-pods"


def critical_pods_quota() -> k8s.core.v1.ResourceQuotaSpecArgs:
    """GKE admits pods of the system-critical priority classes outside kube-system only in a
    namespace whose ResourceQuota is scoped to them (GKE docs, "Manage the GPU Stack with the
    NVIDIA GPU Operator": ResourceQuota with scopeSelector PriorityClass In
    [system-node-critical, system-cluster-critical]); one exporter pod per GPU node."""
    return k8s.core.v1.ResourceQuotaSpecArgs(
        hard={"pods": "100"},
        scope_selector=k8s.core.v1.ScopeSelectorArgs(
            match_expressions=[
                k8s.core.v1.ScopedResourceSelectorRequirementArgs(
                    scope_name="PriorityClass", operator="In", values=[PRIORITY_CLASS]
                )
            ]
        ),
    )


class DcgmExporter(PlatformComponent):
    """GPU metrics per node and per pod: NVIDIA's DCGM exporter on every GPU node."""

    ready: pulumi.Resource
    """Done when the exporter's DaemonSet and Service exist (in its namespace)."""
    namespace: pulumi.Output[str]
    """The exporter's namespace."""

    def __init__(
        self,
        name: str,
        args: DcgmExporterArgs,
        cluster: Cluster,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(name, cluster, opts, args.sources)
        ns = self.create_namespace(NAMESPACE)
        quota = k8s.core.v1.ResourceQuota(
            CRITICAL_QUOTA,
            metadata=k8s.meta.v1.ObjectMetaArgs(name=CRITICAL_QUOTA, namespace=NAMESPACE),
            spec=critical_pods_quota(),
            opts=self.child([ns]),
        )
        self.ready = self.chart(RELEASE, CHART, NAMESPACE, dcgm_exporter_values(args), [ns, quota], overlay=args.values)
        self.namespace = ns.metadata.apply(lambda m: m.name or NAMESPACE)
        self.register_outputs({"namespace": self.namespace, "ready": self.ready.urn})


def dcgm_exporter_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> DcgmExporterArgs | None:
    """None with GKE's managed DCGM metrics: GKE runs the exporter (infra/gke.py)."""
    if config.components[DCGM_EXPORTER].source is DcgmSource.GKE_MANAGED:
        return None
    return DcgmExporterArgs(
        sources=config.sources,
        service_monitor=service_monitor_enabled(config),
        gpu_pools=config.gpu_pools,
        values=config.components[DCGM_EXPORTER].values,
    )


def _install(args: DcgmExporterArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return DcgmExporter("dcgm-exporter", args, cluster)


# What the platform needs of the chart's values beyond what it sets (plumbing/charts.py): the
# keys it relies on, each read in the chart at its pinned version, and why it sets the keys it sets.
RELIED = (
    Relied(("namespaceOverride",), empty, "namespaceOverride empty (the release's namespace, dcgm-exporter)", "templates/_helpers.tpl dcgm-exporter.namespace",
           "GKE admits the exporter's critical pods only under the ResourceQuota of namespace dcgm-exporter, and the platform's monitor reads that namespace"),
    Relied(("nameOverride",), empty, "nameOverride empty, the chart's default", "templates/_helpers.tpl dcgm-exporter.selectorLabels",
           "the platform's ServiceMonitor selects the exporter's Service by app.kubernetes.io/name dcgm-exporter (components/dcgm.py)"),
)
HINTS = (
    Hint(("tolerations",), "the exporter belongs on every GPU node, whatever its pool's taints", "mlplatform:cluster.gpuPools[].taints"),
    Hint(("serviceMonitor",), "the chart's ServiceMonitor is a kind of Monitoring's and would make the exporter wait for it; the "
         "platform's own monitor ties the two"),
    Hint(("affinity",), "the exporter runs on GPU nodes only"),
    Hint(("extraHostVolumes",), "GKE's NVIDIA libraries come from the node's /home/kubernetes/bin/nvidia"),
    Hint(("extraVolumeMounts",), "GKE's NVIDIA libraries and the chart's metrics list are mounted so"),
    Hint(("extraEnv",), "the exporter finds GKE's NVIDIA libraries and matches GPUs to pods by device name so"),
    Hint(("kubeletPath",), "pod attribution reads the kubelet's pod-resources socket there"),
    Hint(("priorityClassName",), "GKE admits the exporter's pods under the namespace's critical-pods quota"),
    Hint(("kubernetesDRA",), DCGM_DRA_ATTRIBUTION_OFF),
)


# With GKE's managed DCGM metrics dcgm_exporter_args gives None: infra/gke.py enables GKE's exporter.
INSTALLATION = Installation(
    DCGM_EXPORTER,
    dcgm_exporter_args,
    _install,
    charts=(ChartValues("values", CHART, dcgm_exporter_values, lambda args: args.values, built_by(dcgm_exporter_values), relied=RELIED, hints=HINTS),),
)
