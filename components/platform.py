"""The composition: which component module installs which key of `mlplatform:components`,
and the order the graph cannot see by itself (CRDs and webhooks before what uses them).

Installers run in the order of INSTALLERS; each gets what earlier ones made ready, and
installs nothing when the stack's PlatformArgs have no Args for its component.
"""

from __future__ import annotations

from collections.abc import Callable

import pulumi

from args.platform import PlatformArgs
from components.base import transform_every_object
from components.cert_manager import CertManager
from components.dcgm import DcgmExporter
from components.gateway import HttpsGateway
from components.images import image_transform
from components.istio import Istio
from components.jobset import JobSet
from components.kubeflow import Kubeflow, KubeflowNamespaces
from components.kuberay import KubeRay
from components.kueue import Kueue
from components.monitoring import Monitoring
from components.pipelines import Pipelines
from components.profiles import POD_DEFAULTS, install_teams
from components.team_pipelines import ObjectStoreKeys
from components.trainer import Trainer
from infra.cluster import Cluster
from runtimes.component import TrainingRuntimes

Ready = dict[str, pulumi.Resource]
"""Component key -> the resource that is done when that component is ready."""
KUBEFLOW_NAMESPACES = "kubeflowNamespaces"
"""Ready key of Kubeflow's namespace tree, installed first when Kubeflow is on."""
PIPELINE_KEYS: dict[str, ObjectStoreKeys] = {}
"""Per team, its key pair of the in-cluster object store (Pipelines.team_keys), for its namespace."""
HTTPS_GATEWAY = "httpsGateway"
"""Key of the HttpsGateway, when the stack has one (its address is a stack output)."""
Installer = Callable[[PlatformArgs, Cluster, Ready], pulumi.Resource | None]


def _needs(ready: Ready, *keys: str) -> list[pulumi.Resource]:
    return [ready[k] for k in keys if k in ready]


def _cert_manager(args: PlatformArgs, cluster: Cluster, ready: Ready) -> pulumi.Resource | None:
    if args.cert_manager is None:
        return None
    return CertManager("cert-manager", args.cert_manager, cluster).ready


def _istio(args: PlatformArgs, cluster: Cluster, ready: Ready) -> pulumi.Resource | None:
    if args.istio is None:
        return None
    # Istio's Kubeflow install puts Sidecars into the `kubeflow` namespace.
    return Istio("istio", args.istio, cluster, _needs(ready, KUBEFLOW_NAMESPACES)).ready


def _kubeflow(args: PlatformArgs, cluster: Cluster, ready: Ready) -> pulumi.Resource | None:
    if args.kubeflow is None:
        return None
    kubeflow = Kubeflow("kubeflow", args.kubeflow, cluster, _needs(ready, KUBEFLOW_NAMESPACES, "certManager", "istio"))
    ready[POD_DEFAULTS] = kubeflow.pod_defaults  # the teams' PodDefaults need its CRD
    if args.https_gateway is not None:
        ready[HTTPS_GATEWAY] = HttpsGateway(
            "kubeflow-https", args.https_gateway, cluster, [*_needs(ready, "istio"), kubeflow.ready]
        )
    return kubeflow.ready


def _jobset(args: PlatformArgs, cluster: Cluster, ready: Ready) -> pulumi.Resource | None:
    if args.jobset is None:
        return None
    return JobSet("jobset", args.jobset, cluster).ready


def _trainer(args: PlatformArgs, cluster: Cluster, ready: Ready) -> pulumi.Resource | None:
    if args.trainer is None:
        return None
    trainer = Trainer("trainer", args.trainer, cluster, _needs(ready, "jobset"), namespace=ready.get(KUBEFLOW_NAMESPACES))
    if args.training_runtimes is not None:
        # Our runtimes, not the chart's hook: after the CRDs and the validating webhook are up.
        runtimes_opts = pulumi.ResourceOptions(providers=[cluster.provider])
        TrainingRuntimes("runtimes", args.training_runtimes, [trainer.ready], runtimes_opts)
    return trainer.ready


def _kuberay(args: PlatformArgs, cluster: Cluster, ready: Ready) -> pulumi.Resource | None:
    if args.kuberay is None:
        return None  # off, or GKE's managed operator: an add-on of the cluster (infra/gke.py)
    return KubeRay("kuberay", args.kuberay, cluster).ready


def _kueue(args: PlatformArgs, cluster: Cluster, ready: Ready) -> pulumi.Resource | None:
    if args.kueue is None:
        return None
    # No edge to Trainer/JobSet/KubeRay: Kueue defers an integration until its CRD appears
    # (kubernetes-sigs/kueue pkg/controller/jobframework/setup.go, "deferring setting up controller").
    # Its ServiceMonitor needs the Prometheus Operator's CRDs.
    monitoring = _needs(ready, "monitoring") if args.kueue.service_monitor else []
    return Kueue("kueue", args.kueue, cluster, monitoring).ready


def _pipelines(args: PlatformArgs, cluster: Cluster, ready: Ready) -> pulumi.Resource | None:
    if args.pipelines is None:
        return None
    # Its objects live in Kubeflow's namespace, its cache webhook's certificate is cert-manager's,
    # its routes and policies are Istio's; the teams' objects wait for it (PIPELINE_KEYS).
    pipelines = Pipelines("pipelines", args.pipelines, cluster, _needs(ready, "kubeflow", "certManager", "istio"))
    PIPELINE_KEYS.update(pipelines.team_keys)
    return pipelines.ready


def _monitoring(args: PlatformArgs, cluster: Cluster, ready: Ready) -> pulumi.Resource | None:
    if args.monitoring is None:
        return None
    return Monitoring("monitoring", args.monitoring, cluster, istio=ready.get("istio"))


def _dcgm_exporter(args: PlatformArgs, cluster: Cluster, ready: Ready) -> pulumi.Resource | None:
    if args.dcgm_exporter is None:
        return None  # off, or GKE runs the exporter (infra/gke.py enables the DCGM monitoring package)
    # The chart's ServiceMonitor needs the Prometheus Operator CRDs of the Monitoring component.
    monitoring = ready.get("monitoring") if args.dcgm_exporter.service_monitor else None
    return DcgmExporter("dcgm-exporter", args.dcgm_exporter, cluster, monitoring=monitoring)


INSTALLERS: dict[str, Installer] = {
    "certManager": _cert_manager,
    "istio": _istio,
    "kubeflow": _kubeflow,
    "jobset": _jobset,
    "trainer": _trainer,
    "kuberay": _kuberay,
    "pipelines": _pipelines,
    "monitoring": _monitoring,
    "kueue": _kueue,  # after monitoring: see _kueue
    "dcgmExporter": _dcgm_exporter,  # after monitoring: see _dcgm_exporter
}


def install(args: PlatformArgs, cluster: Cluster) -> Ready:
    # Before any object: every image of every object, ours and the charts' and trees', goes
    # through the stack's image policy (retired registries, floating upstream tags, the mirror).
    transform_every_object(image_transform(args.images))
    ready: Ready = {}
    PIPELINE_KEYS.clear()
    if args.kubeflow_namespaces is not None:
        ready[KUBEFLOW_NAMESPACES] = KubeflowNamespaces("kubeflow-namespaces", args.kubeflow_namespaces, cluster).ready
    for key, installer in INSTALLERS.items():
        done = installer(args, cluster, ready)
        if done is not None:
            ready[key] = done
    # Teams last: profiles need the profile controller, queues Kueue, Ray clusters KubeRay,
    # Istio policies Istio's CRDs; each team object waits only for its own (profiles.OBJECT_NEEDS).
    install_teams(args.teams, cluster, ready, PIPELINE_KEYS)
    return ready
