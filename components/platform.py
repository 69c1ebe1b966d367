"""The composition: which component module installs which key of `mlplatform:components`,
and the order the graph cannot see by itself (CRDs and webhooks before what uses them).

Installers run in the order of INSTALLERS; each gets what earlier ones made ready (a typed
Readiness: asking for a component not installed yet is an error at plan time), records its
own, and installs nothing when the stack's PlatformArgs have no Args for its component.
Every wait between two components is a `Need` that names what it is for: its CRDs, its
webhooks, its namespaces. Objects that need two components (a monitor of one in the other's
kind, a route of one through the other's gateway) are Ties, made last: nothing waits for
them, so neither component's whole install waits for the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pulumi

from args.components import PipelineKeysArgs, TieArgs, Tied
from args.platform import PlatformArgs
from components import dcgm, kueue, monitoring
from components.base import HELM_CHART_TYPE, transform_every_object
from components.cert_manager import CertManager
from components.dcgm import DcgmExporter
from components.gateway import HttpsGateway
from components.idle_reclaim import IdleReclaim
from components.images import image_transform
from components.istio import Istio
from components.jobset import JobSet
from components.kubeflow import Kubeflow, KubeflowNamespaces
from components.kuberay import KubeRay
from components.kueue import Kueue
from components.monitoring import Monitoring
from components.pipelines import PipelineKeys, Pipelines
from components.profiles import install_teams
from components.readiness import Need, Readiness, Ready, What
from components.team_pipelines import ObjectStoreKeys
from components.ties import Tie
from components.trainer import Trainer
from infra.cluster import Cluster
from infra.component import type_token
from runtimes.component import TrainingRuntimes

Installer = Callable[[PlatformArgs, Cluster, Readiness], pulumi.Resource | None]

# The edges between components, each with its reason.
ISTIO_NEEDS = (Need(Ready.KUBEFLOW_NAMESPACES, What.NAMESPACE, optional=True),)
"""Istio's Kubeflow install puts Sidecars into the `kubeflow` namespace."""
KUBEFLOW_NEEDS = (
    Need(Ready.KUBEFLOW_NAMESPACES, What.NAMESPACE),
    Need(Ready.CERT_MANAGER, What.CRDS),  # the webhooks' Certificates and the Kubeflow Issuer
    Need(Ready.ISTIO, What.CRDS),  # its Gateways, VirtualServices, AuthorizationPolicies
)
HTTPS_GATEWAY_NEEDS = (Need(Ready.ISTIO, What.CONTROLLER), Need(Ready.KUBEFLOW, What.CONTROLLER))
"""The Ingress sends to Istio's ingress gateway, which serves Kubeflow's sign-in."""
TRAINER_NEEDS = (Need(Ready.JOBSET, What.CRDS),)
"""Trainer's controller runs TrainJobs as JobSets: it watches that kind from its start."""
TRAINER_NAMESPACE = Need(Ready.KUBEFLOW_NAMESPACES, What.NAMESPACE, optional=True)
"""Trainer runs in kubeflow-system, Kubeflow's namespace tree's when Kubeflow is on."""
RUNTIMES_NEEDS = (Need(Ready.TRAINER, What.CRDS), Need(Ready.TRAINER, What.WEBHOOKS))
"""Our ClusterTrainingRuntimes (not the chart's hook) are Trainer's kind, checked by its webhook."""
GRAFANA_NEEDS = (Need(Ready.ISTIO, What.WEBHOOKS, optional=True),)
"""Grafana's pods get their sidecar from Istio's injection webhook (components/monitoring.py)."""
# No edge from Kueue to Trainer/JobSet/KubeRay: Kueue defers an integration until its CRD
# appears (kubernetes-sigs/kueue pkg/controller/jobframework/setup.go, "deferring setting up
# controller"). Nothing waits for Monitoring: its monitors of others are Ties.
PIPELINES_NEEDS = (
    Need(Ready.KUBEFLOW, What.CONTROLLER),  # its objects live in Kubeflow's namespace, beside its profile controller
    Need(Ready.CERT_MANAGER, What.CRDS),  # its cache webhook's certificate
    Need(Ready.ISTIO, What.CRDS),  # its routes and policies
)
PIPELINE_KEYS: dict[str, ObjectStoreKeys] = {}
"""Per team, its key pair of the in-cluster object store (Pipelines.team_keys), for its namespace."""


def _cert_manager(args: PlatformArgs, cluster: Cluster, ready: Readiness) -> pulumi.Resource | None:
    if args.cert_manager is None:
        return None
    return CertManager("cert-manager", args.cert_manager, cluster).ready


def _istio(args: PlatformArgs, cluster: Cluster, ready: Readiness) -> pulumi.Resource | None:
    if args.istio is None:
        return None
    return Istio("istio", args.istio, cluster, ready.resources(ISTIO_NEEDS, "Istio")).ready


def _kubeflow(args: PlatformArgs, cluster: Cluster, ready: Readiness) -> pulumi.Resource | None:
    if args.kubeflow is None:
        ready.record(Ready.KUBEFLOW_POD_DEFAULTS, None)
        return None
    kubeflow = Kubeflow("kubeflow", args.kubeflow, cluster, ready.resources(KUBEFLOW_NEEDS, "Kubeflow"))
    ready.record(Ready.KUBEFLOW_POD_DEFAULTS, kubeflow.pod_defaults)  # the teams' PodDefaults need its CRD
    return kubeflow.ready


def _jobset(args: PlatformArgs, cluster: Cluster, ready: Readiness) -> pulumi.Resource | None:
    if args.jobset is None:
        return None
    return JobSet("jobset", args.jobset, cluster).ready


def _trainer(args: PlatformArgs, cluster: Cluster, ready: Readiness) -> pulumi.Resource | None:
    if args.trainer is None:
        return None
    return Trainer("trainer", args.trainer, cluster, ready.resources(TRAINER_NEEDS, "Trainer"), namespace=ready.get(TRAINER_NAMESPACE.on)).ready


def _kuberay(args: PlatformArgs, cluster: Cluster, ready: Readiness) -> pulumi.Resource | None:
    if args.kuberay is None:
        return None  # off, or GKE's managed operator: an add-on of the cluster (infra/gke.py)
    return KubeRay("kuberay", args.kuberay, cluster).ready


def _kueue(args: PlatformArgs, cluster: Cluster, ready: Readiness) -> pulumi.Resource | None:
    if args.kueue is None:
        return None
    return Kueue("kueue", args.kueue, cluster).ready


def _pipelines(args: PlatformArgs, cluster: Cluster, ready: Readiness) -> pulumi.Resource | None:
    if args.pipelines is None:
        return None
    # The teams' keys apart: a team's Secret and Pipelines' identities read them, neither waits for the other.
    teams = args.pipelines.in_cluster_teams
    keys = PipelineKeys("pipeline-keys", PipelineKeysArgs(teams)).keys if teams else {}
    pipelines = Pipelines("pipelines", args.pipelines, cluster, ready.resources(PIPELINES_NEEDS, "Kubeflow Pipelines"), keys)
    PIPELINE_KEYS.update(pipelines.team_keys)
    return pipelines.ready


def _monitoring(args: PlatformArgs, cluster: Cluster, ready: Readiness) -> pulumi.Resource | None:
    if args.monitoring is None:
        return None
    return Monitoring("monitoring", args.monitoring, cluster, ready.resources(GRAFANA_NEEDS, "Grafana")).ready


def _dcgm_exporter(args: PlatformArgs, cluster: Cluster, ready: Readiness) -> pulumi.Resource | None:
    if args.dcgm_exporter is None:
        return None  # off, or GKE runs the exporter (infra/gke.py enables the DCGM monitoring package)
    return DcgmExporter("dcgm-exporter", args.dcgm_exporter, cluster).ready


IDLE_RECLAIM_NEEDS = (Need(Ready.MONITORING, What.NAMESPACE),)
"""The idle reclaim runs in the monitoring namespace, beside the Prometheus it reads."""


def _idle_reclaim(args: PlatformArgs, cluster: Cluster, ready: Readiness) -> pulumi.Resource | None:
    if args.idle_reclaim is None:
        return None
    return IdleReclaim("idle-reclaim", args.idle_reclaim, cluster, ready.resources(IDLE_RECLAIM_NEEDS, "the idle reclaim")).ready


INSTALLERS: dict[Ready, Installer] = {
    Ready.CERT_MANAGER: _cert_manager,
    Ready.ISTIO: _istio,
    Ready.KUBEFLOW: _kubeflow,
    Ready.JOBSET: _jobset,
    Ready.TRAINER: _trainer,
    Ready.KUBERAY: _kuberay,
    Ready.PIPELINES: _pipelines,
    Ready.KUEUE: _kueue,
    Ready.MONITORING: _monitoring,
    Ready.DCGM_EXPORTER: _dcgm_exporter,
    Ready.IDLE_RECLAIM: _idle_reclaim,
}

MONITORS = Need(Ready.MONITORING, What.CRDS)
"""A ServiceMonitor is a kind of the Prometheus Operator's."""


def _ties(args: PlatformArgs, cluster: Cluster, ready: Readiness) -> None:
    """Objects that need two components, each tie after both (what it needs of each)."""
    labels = dict(monitoring.SCRAPE_LABELS)
    if args.kueue is not None and args.kueue.service_monitor:
        # Until this release the chart rendered it: moved from the Kueue chart's children.
        moved = (type_token(Kueue), HELM_CHART_TYPE)
        tied = Tied(kueue.service_monitor(labels), kueue.SERVICE_MONITOR, moved, f"kueue:{kueue.NAMESPACE}/{kueue.SERVICE_MONITOR}")
        needs = (Need(Ready.KUEUE, What.NAMESPACE), MONITORS)
        Tie("kueue-metrics", TieArgs((tied,)), cluster, ready.resources(needs, "Kueue's ServiceMonitor"))
    if args.dcgm_exporter is not None and args.dcgm_exporter.service_monitor:
        moved = (type_token(DcgmExporter), HELM_CHART_TYPE)
        name = f"{dcgm.NAMESPACE}/{dcgm.RELEASE}"
        tied = Tied(dcgm.service_monitor(labels), dcgm.RELEASE, moved, f"{dcgm.RELEASE}:{name}")
        needs = (Need(Ready.DCGM_EXPORTER, What.NAMESPACE), MONITORS)
        Tie("dcgm-exporter-metrics", TieArgs((tied,)), cluster, ready.resources(needs, "the DCGM exporter's ServiceMonitor"))
    if args.monitoring is not None and args.monitoring.kubeflow:
        # Until this release children of the Monitoring component, under the same names.
        was = (type_token(Monitoring),)
        objects = tuple(Tied(obj, name, was, name) for name, obj in monitoring.grafana_gateway_objects(args.monitoring.settings.grafana_admins))
        needs = (Need(Ready.MONITORING, What.NAMESPACE), Need(Ready.ISTIO, What.CRDS))
        Tie("grafana-gateway", TieArgs(objects), cluster, ready.resources(needs, "Grafana's route"))


@dataclass(frozen=True)
class Installed:
    """What the composition made: each component's readiness, and what the program exports."""

    ready: Readiness
    https_gateway: HttpsGateway | None
    """On GKE behind an Ingress: its address is the A record auth.hostname needs."""


def install(args: PlatformArgs, cluster: Cluster) -> Installed:
    # Before any object: every image of every object, ours and the charts' and trees', goes
    # through the stack's image policy (retired registries, floating upstream tags, the mirror).
    transform_every_object(image_transform(args.images))
    ready = Readiness()
    PIPELINE_KEYS.clear()
    namespaces = args.kubeflow_namespaces
    ready.record(Ready.KUBEFLOW_NAMESPACES, KubeflowNamespaces("kubeflow-namespaces", namespaces, cluster).ready if namespaces else None)
    gateway = None
    for key, installer in INSTALLERS.items():
        ready.record(key, installer(args, cluster, ready))
        if key is Ready.KUBEFLOW and args.https_gateway is not None:
            gateway = HttpsGateway("kubeflow-https", args.https_gateway, cluster, ready.resources(HTTPS_GATEWAY_NEEDS, "the HTTPS gateway"))
        if key is Ready.TRAINER and args.training_runtimes is not None:
            runtimes_opts = pulumi.ResourceOptions(providers=[cluster.provider])
            TrainingRuntimes("runtimes", args.training_runtimes, ready.resources(RUNTIMES_NEEDS, "the training runtimes"), runtimes_opts)
    _ties(args, cluster, ready)
    # Teams last: each team object waits only for what it needs (components/profiles/team.py NEEDS).
    install_teams(args.teams, cluster, ready, PIPELINE_KEYS)
    return Installed(ready, gateway)
