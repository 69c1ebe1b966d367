"""The composition: which component module installs which key of `mlplatform:components`,
and the order the graph cannot see by itself (CRDs and webhooks before what uses them).

Installers run in the order of INSTALLERS; each gets what earlier ones made ready.
"""

from __future__ import annotations

from typing import Callable

import pulumi

from components.cert_manager import CertManager
from components.dcgm import DcgmExporter
from components.gateway import HttpsGateway
from components.istio import Istio, istio_settings
from components.jobset import JobSet
from components.kuberay import KubeRay
from components.kubeflow import Kubeflow, KubeflowNamespaces, kubeflow_settings
from components.kueue import Kueue
from components.monitoring import Monitoring, service_monitor_enabled
from components.profiles import install_teams
from components.trainer import Trainer
from infra.cluster import Cluster
from runtimes.component import TrainingRuntimes
from stacks.schema import DcgmSource, GkeClusterConfig, PlatformConfig, RaySource

Ready = dict[str, pulumi.Resource]
"""Component key -> the resource that is done when that component is ready."""
KUBEFLOW_NAMESPACES = "kubeflowNamespaces"
"""Ready key of Kubeflow's namespace tree, installed first when Kubeflow is on."""
Installer = Callable[[PlatformConfig, Cluster, Ready], pulumi.Resource | None]


def _needs(ready: Ready, *keys: str) -> list[pulumi.Resource]:
    return [ready[k] for k in keys if k in ready]


def _cert_manager(config: PlatformConfig, cluster: Cluster, ready: Ready) -> pulumi.Resource:
    return CertManager("cert-manager", cluster, sources=config.sources).ready


def _istio(config: PlatformConfig, cluster: Cluster, ready: Ready) -> pulumi.Resource:
    # Istio's Kubeflow install puts Sidecars into the `kubeflow` namespace.
    return Istio("istio", istio_settings(config), cluster, sources=config.sources, needs=_needs(ready, KUBEFLOW_NAMESPACES)).ready


def _kubeflow(config: PlatformConfig, cluster: Cluster, ready: Ready) -> pulumi.Resource:
    kubeflow = Kubeflow(
        "kubeflow",
        kubeflow_settings(config),
        cluster,
        _needs(ready, KUBEFLOW_NAMESPACES, "certManager", "istio"),
        sources=config.sources,
    )
    if isinstance(config.cluster, GkeClusterConfig) and config.components.kubeflow.auth.hostname:
        HttpsGateway("kubeflow-https", config, cluster, _needs(ready, "istio") + [kubeflow.ready])
    return kubeflow.ready


def _jobset(config: PlatformConfig, cluster: Cluster, ready: Ready) -> pulumi.Resource:
    return JobSet("jobset", cluster, sources=config.sources).ready


def _trainer(config: PlatformConfig, cluster: Cluster, ready: Ready) -> pulumi.Resource:
    trainer = Trainer(
        "trainer", cluster, _needs(ready, "jobset"), sources=config.sources, namespace=ready.get(KUBEFLOW_NAMESPACES)
    )
    # Our runtimes, not the chart's hook: after the CRDs and the validating webhook are up.
    TrainingRuntimes("runtimes", config, [trainer.ready], pulumi.ResourceOptions(providers=[cluster.provider]))
    return trainer.ready


def _kuberay(config: PlatformConfig, cluster: Cluster, ready: Ready) -> pulumi.Resource | None:
    if config.components.kuberay.source is RaySource.GKE_ADDON:
        return None  # GKE's managed operator: an add-on of the cluster (infra/gke.py)
    return KubeRay("kuberay", cluster, sources=config.sources).ready


def _kueue(config: PlatformConfig, cluster: Cluster, ready: Ready) -> pulumi.Resource:
    # No edge to Trainer/JobSet/KubeRay: Kueue defers an integration until its CRD appears
    # (kubernetes-sigs/kueue pkg/controller/jobframework/setup.go, "deferring setting up controller").
    # Its ServiceMonitor needs the Prometheus Operator's CRDs.
    monitoring = _needs(ready, "monitoring") if service_monitor_enabled(config) else []
    return Kueue("kueue", config, cluster, monitoring, sources=config.sources).ready


def _monitoring(config: PlatformConfig, cluster: Cluster, ready: Ready) -> pulumi.Resource:
    return Monitoring("monitoring", config, cluster, istio=ready.get("istio"), sources=config.sources)


def _dcgm_exporter(config: PlatformConfig, cluster: Cluster, ready: Ready) -> pulumi.Resource | None:
    if config.components.dcgm_exporter.source is DcgmSource.GKE_MANAGED:
        return None  # GKE runs the exporter (infra/gke.py enables the DCGM monitoring package)
    # The chart's ServiceMonitor needs the Prometheus Operator CRDs of the Monitoring component.
    monitoring = ready.get("monitoring") if service_monitor_enabled(config) else None
    return DcgmExporter("dcgm-exporter", config, cluster, monitoring=monitoring, sources=config.sources)


INSTALLERS: dict[str, Installer] = {
    "certManager": _cert_manager,
    "istio": _istio,
    "kubeflow": _kubeflow,
    "jobset": _jobset,
    "trainer": _trainer,
    "kuberay": _kuberay,
    "monitoring": _monitoring,
    "kueue": _kueue,  # after monitoring: see _kueue
    "dcgmExporter": _dcgm_exporter,  # after monitoring: see _dcgm_exporter
}


def install(config: PlatformConfig, cluster: Cluster) -> Ready:
    ready: Ready = {}
    enabled = config.enabled_components()
    if enabled.get("kubeflow"):
        ready[KUBEFLOW_NAMESPACES] = KubeflowNamespaces("kubeflow-namespaces", cluster, sources=config.sources).ready
    for key, installer in INSTALLERS.items():
        if enabled.get(key):
            done = installer(config, cluster, ready)
            if done is not None:
                ready[key] = done
    # Teams last: profiles need the profile controller, queues Kueue, Ray clusters KubeRay,
    # Istio policies Istio's CRDs; each team object waits only for its own (profiles.OBJECT_NEEDS).
    install_teams(config, cluster, ready)
    return ready
