"""The composition: every component of the stack's list (stackmodel/registry.py) installed by
its own Installation (plumbing/installation.py), each after what its spec says it needs; then
what ties two components, the training runtimes and the teams. It names no component of the
list itself, except where two meet (the Ties) and the rooms above the components (runtimes/,
components/profiles/).

Each installer gets what earlier ones made ready (a typed Readiness: asking for a component not
installed yet is an error at plan time) and the composition records what it returns. Every wait
between two components is a `Need` of the waiting one's spec that names what it is for: its
CRDs, its webhooks, its namespaces. Objects that need two components (a monitor of one in the
other's kind, a route of one through the other's gateway) are Ties, made last: nothing waits for
them, so neither component's whole install waits for the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

import pulumi

from components import dcgm, kueue, monitoring
from components.dashboards.serving import monitoring_objects as serving_monitoring
from components.dcgm import DcgmExporter, DcgmExporterArgs
from components.gateway import HttpsGateway
from components.kueue import Kueue, KueueArgs
from components.monitoring import Monitoring, MonitoringArgs
from components.profiles.args import TeamArgs, teams_args
from components.profiles.team import install_teams
from components.serving import ServingArgs, keda_to_prometheus_policy
from components.trainer import TrainerInstallArgs
from facts.image_refs import ImagePolicy
from infra.args import ClusterArgs, cluster_args
from infra.cluster import Cluster
from infra.component import type_token
from plumbing.base import HELM_CHART_TYPE, InstallRecord, transform_every_object
from plumbing.images import image_transform
from plumbing.installation import ComponentArgs, Secrets, installation
from plumbing.readiness import Need, Readiness, What, WiringError
from plumbing.ties import Tie, TieArgs, Tied
from runtimes.component import TrainingRuntimes
from stackmodel.components.dcgm import DCGM_EXPORTER
from stackmodel.components.istio import ISTIO
from stackmodel.components.kubeflow_parts import KUBEFLOW_HTTPS_GATEWAY
from stackmodel.components.kueue import KUEUE
from stackmodel.components.monitoring import MONITORING, MetricsBackend
from stackmodel.components.serving import SERVING
from stackmodel.components.spec import ComponentSpec
from stackmodel.components.trainer import TRAINER
from stackmodel.stack import PlatformConfig

T = TypeVar("T")


@dataclass(frozen=True)
class PlatformArgs:
    cluster: ClusterArgs
    specs: tuple[ComponentSpec[Any], ...]
    """Every component of the stack's list, in install order (stackmodel/components/spec.py install_order)."""
    components: tuple[ComponentArgs, ...]
    """The components the stack installs here, in install order, each with its Args."""
    teams: tuple[TeamArgs, ...]
    images: ImagePolicy
    """Where every object's images are pulled from (`mlplatform:images`, retired registries)."""

    def of(self, spec: ComponentSpec[Any], kind: type[T]) -> T | None:
        """The Args of `spec`'s component, None when the stack does not install it here."""
        for component in self.components:
            if component.spec is spec:
                if not isinstance(component.args, kind):
                    raise TypeError(f"{spec.name}'s Args are {type(component.args).__name__}, not {kind.__name__}")
                return component.args
        return None


def platform_args(config: PlatformConfig, secrets: Secrets) -> PlatformArgs:
    """The Args of the whole platform: the cluster's, each component's the stack installs (cut
    by the builder its Installation names, in install order), the teams' and the image policy."""
    order = config.components.installed_in_order()
    components = []
    for spec in order:
        if config.enabled(spec):
            built = installation(spec).args(config, secrets)
            if built is not None:
                components.append(ComponentArgs(spec, built))
    return PlatformArgs(
        cluster=cluster_args(config),
        specs=order,
        components=tuple(components),
        teams=teams_args(config),
        images=ImagePolicy(mirror=config.images.mirror),
    )


RUNTIMES_NEEDS = (Need(TRAINER, What.CRDS), Need(TRAINER, What.WEBHOOKS))
"""Our ClusterTrainingRuntimes (not the chart's hook) are Trainer's kind, checked by its webhook."""
MONITORS = Need(MONITORING, What.CRDS)
"""A ServiceMonitor is a kind of the Prometheus Operator's."""


def _ties(args: PlatformArgs, cluster: Cluster, ready: Readiness) -> None:
    """Objects that need two components, each tie after both (what it needs of each)."""
    labels = dict(monitoring.SCRAPE_LABELS)
    kueue_args = args.of(KUEUE, KueueArgs)
    if kueue_args is not None and kueue_args.service_monitor:
        # Until this release the chart rendered it: moved from the Kueue chart's children.
        moved = (type_token(Kueue), HELM_CHART_TYPE)
        tied = Tied(kueue.service_monitor(labels), kueue.SERVICE_MONITOR, moved, f"kueue:{kueue.NAMESPACE}/{kueue.SERVICE_MONITOR}")
        needs = (Need(KUEUE, What.NAMESPACE), MONITORS)
        Tie("kueue-metrics", TieArgs((tied,)), cluster, ready.resources(needs, "Kueue's ServiceMonitor"))
    dcgm_args = args.of(DCGM_EXPORTER, DcgmExporterArgs)
    if dcgm_args is not None and dcgm_args.service_monitor:
        moved = (type_token(DcgmExporter), HELM_CHART_TYPE)
        name = f"{dcgm.NAMESPACE}/{dcgm.RELEASE}"
        tied = Tied(dcgm.service_monitor(labels), dcgm.RELEASE, moved, f"{dcgm.RELEASE}:{name}")
        needs = (Need(DCGM_EXPORTER, What.NAMESPACE), MONITORS)
        Tie("dcgm-exporter-metrics", TieArgs((tied,)), cluster, ready.resources(needs, "the DCGM exporter's ServiceMonitor"))
    monitoring_args = args.of(MONITORING, MonitoringArgs)
    prometheus = monitoring_args is not None and monitoring_args.settings.backend is MetricsBackend.KUBE_PROMETHEUS_STACK
    if args.of(SERVING, ServingArgs) is not None and prometheus:
        # KEDA's prometheus triggers query Prometheus (components/serving.py keda_to_prometheus_policy).
        named = [*serving_monitoring(monitoring.NAMESPACE, labels, dict(monitoring.DASHBOARD_LABEL))]
        named.append(("serving-keda-queries-prometheus", keda_to_prometheus_policy(monitoring.NAMESPACE, monitoring.PROMETHEUS_PORT)))
        objects = tuple(Tied(obj, name) for name, obj in named)
        # All in the monitoring namespace, none of serving's kinds: nothing of serving to wait for.
        Tie("serving-metrics", TieArgs(objects), cluster, ready.resources((MONITORS,), "serving's monitors and dashboard, and KEDA's way to Prometheus"))
    if monitoring_args is not None and monitoring_args.kubeflow:
        # Until this release children of the Monitoring component, under the same names.
        was = (type_token(Monitoring),)
        objects = tuple(Tied(obj, name, was, name) for name, obj in monitoring.grafana_gateway_objects(monitoring_args.settings.grafana_admins))
        needs = (Need(MONITORING, What.NAMESPACE), Need(ISTIO, What.CRDS))
        Tie("grafana-gateway", TieArgs(objects), cluster, ready.resources(needs, "Grafana's route"))


@dataclass(frozen=True)
class Installed:
    """What the composition made: each component's readiness, what the program exports, and
    the record of its charts and trees that the offline tools read (InstallRecord)."""

    ready: Readiness
    https_gateway: HttpsGateway | None
    """On GKE behind an Ingress: its address is the A record auth.hostname needs."""
    record: InstallRecord
    """Every component's charts and trees (transforms, moves, kept objects, prepared trees), the
    transforms of every object, the keys handed to teams: program.build returns it."""


def install(args: PlatformArgs, cluster: Cluster) -> Installed:
    record = InstallRecord()
    # Before any object: every image of every object, ours and the charts' and trees', goes
    # through the stack's image policy (retired registries, floating upstream tags, the mirror).
    transform_every_object(record, image_transform(args.images))
    ready = Readiness()
    installing = {c.spec: c.args for c in args.components}
    # What the stack does not install is ready as nothing: an optional need of it is met by nothing.
    for spec in args.specs:
        if spec not in installing:
            for key in (spec, *spec.parts):
                ready.record(key, None)
    for spec, component_args in installing.items():
        prepare = installation(spec).prepare
        prepared = prepare(component_args, cluster, ready) if prepare is not None else None
        if prepared is not None:
            record.add(prepared.installs)
    for spec, component_args in installing.items():
        component = installation(spec).install(component_args, cluster, ready)
        ready.record(spec, component.ready if component is not None else None)
        if component is not None:
            record.add(component.installs)
    trainer = args.of(TRAINER, TrainerInstallArgs)
    if trainer is not None:
        runtimes_opts = pulumi.ResourceOptions(providers=[cluster.provider])
        TrainingRuntimes("runtimes", trainer.runtimes, ready.resources(RUNTIMES_NEEDS, "the training runtimes"), runtimes_opts)
    _ties(args, cluster, ready)
    # Teams last: each team object waits only for what it needs (components/profiles/team.py NEEDS).
    for team in install_teams(args.teams, cluster, ready, record.team_keys):
        record.add(team.installs)  # a team's own trees (its Model Registry)
    gateway = ready.get(KUBEFLOW_HTTPS_GATEWAY)
    if gateway is not None and not isinstance(gateway, HttpsGateway):
        raise WiringError(f"{KUBEFLOW_HTTPS_GATEWAY} recorded {type(gateway).__name__}, not the HttpsGateway")
    return Installed(ready, gateway, record)
