"""Args of the in-cluster components and the training runtimes, cut from the stack model.

Secrets arrive as Pulumi secrets read once at the edge (program.py), never read here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pulumi

from args.fabric import fabric_pools
from args.infra import image_registry_args
from facts.image_set import LOCAL_REGISTRY, notebook_image
from stackmodel.components.cert_manager import CERT_MANAGER
from stackmodel.components.dcgm import DCGM_EXPORTER, DcgmSource
from stackmodel.components.dra import NVIDIA_DRA_DRIVER
from stackmodel.components.idle_reclaim import IDLE_RECLAIM, IdleReclaimConfig
from stackmodel.components.jobset import JOBSET
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.kuberay import KUBERAY, RaySource
from stackmodel.components.kueue import KUEUE, WaitForPodsReady
from stackmodel.components.monitoring import MONITORING, MetricsBackend, MonitoringConfig
from stackmodel.components.pipelines import PIPELINES, PipelinesCloudSql, PipelinesConfig
from stackmodel.components.trainer import TRAINER
from stackmodel.schema import GkeClusterConfig, GpuPool, KubeflowAuth, Sources
from stackmodel.secrets import DEX_PASSWORD_HASHES, IAP_CLIENT_SECRET, OIDC_CLIENT_SECRET, SecretKey
from stackmodel.stack import PlatformConfig

Secrets = Mapping[SecretKey, pulumi.Output[Any]]
"""The secrets a stack needs (stackmodel.secrets.required_secrets), each a Pulumi secret; a
component fails on a secret it needs but did not get."""
NO_SECRETS: Secrets = MappingProxyType({})
"""What a component that reads no secret is handed by default."""


def gpu_pools(config: PlatformConfig) -> tuple[GpuPool, ...]:
    """The stack's GPU pools; a kind cluster has none."""
    return tuple(config.cluster.gpu_pools) if isinstance(config.cluster, GkeClusterConfig) else ()


def service_monitor_enabled(config: PlatformConfig) -> bool:
    """Whether ServiceMonitors work here: they need the Prometheus Operator's CRDs and a
    Prometheus that scrapes them, i.e. monitoring on with kube-prometheus-stack."""
    monitoring = config.components[MONITORING]
    return monitoring.enabled and monitoring.backend is MetricsBackend.KUBE_PROMETHEUS_STACK


def behind_gke_ingress(config: PlatformConfig) -> bool:
    """Whether Kubeflow's gateway has a public hostname behind a GKE Ingress (HttpsGateway)."""
    return isinstance(config.cluster, GkeClusterConfig) and bool(config.components[KUBEFLOW].auth.hostname)


@dataclass(frozen=True)
class UpstreamArgs:
    """What every component that installs upstream software needs."""

    sources: Sources
    """Where its charts and Kubeflow trees come from (`mlplatform:sources`)."""


@dataclass(frozen=True)
class ChartArgs(UpstreamArgs):
    """A component installed from a Helm chart."""

    values: Mapping[str, Any] = field(default_factory=dict, kw_only=True)
    """The stack's overlay of the chart's values (`mlplatform:components.<name>.values`),
    merged over the platform's last (components/base.py overlay_values)."""


@dataclass(frozen=True)
class CertManagerArgs(ChartArgs):
    pass


@dataclass(frozen=True)
class KubeflowNamespacesArgs(UpstreamArgs):
    pass


@dataclass(frozen=True)
class JobSetArgs(ChartArgs):
    pass


@dataclass(frozen=True)
class TrainerArgs(ChartArgs):
    pass


@dataclass(frozen=True)
class KubeRayArgs(ChartArgs):
    pass


@dataclass(frozen=True)
class IstioArgs(UpstreamArgs):
    gke: bool
    """On GKE (its CNI bin directory)."""
    gke_ingress: bool
    """The ingress gateway Service is the backend of a GKE Ingress (see behind_gke_ingress)."""


@dataclass(frozen=True)
class RayDashboard:
    """A team's Ray cluster, linked in the Kubeflow menu."""

    team: str
    cluster: str


@dataclass(frozen=True)
class NotebookImages:
    """The platform's notebook images the Jupyter web app offers (facts/image_set.py)."""

    cpu: str
    """The default."""
    gpu: str


@dataclass(frozen=True)
class KubeflowArgs(UpstreamArgs):
    auth: KubeflowAuth
    ray_dashboards: tuple[RayDashboard, ...]
    grafana: bool
    """Monitoring is installed: Grafana gets a menu entry."""
    notebook_images: NotebookImages = NotebookImages(
        cpu=notebook_image(LOCAL_REGISTRY), gpu=notebook_image(LOCAL_REGISTRY, gpu=True)
    )
    gpu_pools: tuple[GpuPool, ...] = ()
    """The notebook form's node choices: one per GPU pool."""
    pipelines: bool = False
    """Kubeflow Pipelines is installed: its section in the menu."""
    https: bool = False
    """The gateway is reached over HTTPS only (behind_gke_ingress): sign-in cookies are Secure."""
    dex_password_hashes: pulumi.Output[Any] | None = None
    """Dex static users: e-mail -> bcrypt hash."""
    oidc_client_secret: pulumi.Output[Any] | None = None
    """An OIDC connector's client secret."""


@dataclass(frozen=True)
class HttpsGatewayArgs:
    project: str | None
    auth: KubeflowAuth
    """With a hostname (behind_gke_ingress)."""
    deletion_protection: bool
    iap_client_secret: pulumi.Output[Any] | None = None


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


@dataclass(frozen=True)
class MonitoringArgs(UpstreamArgs):
    """Its charts' overlays are in `settings` (values: kube-prometheus-stack, grafanaValues: Grafana)."""

    settings: MonitoringConfig
    project: str | None
    cluster_name: str
    """Names the managed-Prometheus query frontend's Google service account."""
    kubeflow: bool
    """Kubeflow is installed: Grafana is served through its gateway."""
    gpu_metrics: bool
    """GPU metrics are collected (DCGM exporter or GKE's managed DCGM): NVIDIA's dashboard."""
    notebook_metrics: bool = False
    """The idle reclaim runs: kube-state-metrics exports what it did to Notebooks."""


@dataclass(frozen=True)
class IdleReclaimArgs:
    """The idle reclaim (components/idle_reclaim.py): the stack's period, where Prometheus is,
    which namespaces it judges and the idle threshold it shares with the idle-GPU alert."""

    settings: IdleReclaimConfig
    backend: MetricsBackend
    namespaces: tuple[str, ...]
    threshold: int


@dataclass(frozen=True)
class DcgmExporterArgs(ChartArgs):
    service_monitor: bool
    gpu_pools: tuple[GpuPool, ...] = ()
    """The exporter runs on every GPU node: it tolerates each pool's taints."""


@dataclass(frozen=True)
class KubeflowInstallArgs:
    """What installing Kubeflow takes: its namespaces (made before every component), the core,
    and on GKE behind an Ingress its HTTPS gateway."""

    namespaces: KubeflowNamespacesArgs
    kubeflow: KubeflowArgs
    https_gateway: HttpsGatewayArgs | None


@dataclass(frozen=True)
class TrainerInstallArgs:
    """What installing Trainer takes: the controller, and our training runtimes after it."""

    trainer: TrainerArgs
    runtimes: TrainingRuntimesArgs


@dataclass(frozen=True)
class Tied:
    """One object that ties two components, and where an earlier release of the program made it."""

    manifest: Mapping[str, Any]
    name: str
    """Its Pulumi resource name."""
    was_under: tuple[str, ...] = ()
    """The type tokens of the parents it had before (outermost first: a component, maybe a
    chart of it), when it moved here; its old name is `was_named`."""
    was_named: str = ""


@dataclass(frozen=True)
class TieArgs:
    """Objects that tie two components (a monitor of one component's metrics, in the other's
    custom kind; a route of one through the other's gateway), built by those components' pure
    functions in the composition."""

    objects: tuple[Tied, ...]


@dataclass(frozen=True)
class CloudSqlArgs:
    """GKE: the pipelines database on Cloud SQL for MySQL, in the cluster's VPC."""

    project: str | None
    region: str
    instance: str
    """The instance's name (`<cluster>-pipelines`); a name is not reusable for a week after deletion."""
    settings: PipelinesCloudSql
    deletion_protection: bool
    private_service_access: bool
    """Create the network's Private Service Access (PipelinesCloudSql.private_service_access resolved)."""


@dataclass(frozen=True)
class PipelinesArgs(UpstreamArgs):
    settings: PipelinesConfig
    artifacts_in_cluster: bool
    """Teams keep their artifacts in the in-cluster object store (kind, existingContext; on GKE
    their buckets): its team identities are kept to `in_cluster_teams`, none left of teams gone."""
    in_cluster_teams: tuple[str, ...]
    """Teams whose artifacts live in the in-cluster object store: each gets an identity of its own
    there, limited to its prefix."""
    cloud_sql: CloudSqlArgs | None = None
    """gke: the database is Cloud SQL (else the tree's in-cluster MySQL)."""


@dataclass(frozen=True)
class PipelineKeysArgs:
    """The teams whose artifacts live in the in-cluster object store (PipelinesArgs.in_cluster_teams)."""

    teams: tuple[str, ...]
    was_in: str = "pipelines"
    """The name of the Pipelines component that made the keys until now (their names' prefix)."""


@dataclass(frozen=True)
class RuntimeFabric:
    """One pool's GPUDirect network as its training runtimes see it (runtimes/fabric.py)."""

    pool: str
    network: str
    """tcpxo or rdma (facts/gpu_fabric.py)"""
    nics: tuple[tuple[str, str], ...]
    """(pod interface name, Kubernetes Network name) of each NIC a training pod attaches, in NIC order."""


@dataclass(frozen=True)
class TrainingRuntimesArgs:
    gpu_pools: tuple[GpuPool, ...]
    """One variant of each runtime per pool."""
    kueue: bool = False
    """Kueue queues the TrainJobs: its accounting gap on the GPU variants is guarded (runtimes/kueue_guard.py)."""
    fabrics: tuple[RuntimeFabric, ...] = ()
    """The GPUDirect network of each fabric pool, which its variants attach to (runtimes/fabric.py)."""


def cert_manager_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> CertManagerArgs:
    return CertManagerArgs(sources=config.sources, values=config.components[CERT_MANAGER].values)


def kubeflow_namespaces_args(config: PlatformConfig) -> KubeflowNamespacesArgs:
    return KubeflowNamespacesArgs(sources=config.sources)


def jobset_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> JobSetArgs:
    return JobSetArgs(sources=config.sources, values=config.components[JOBSET].values)


def trainer_args(config: PlatformConfig) -> TrainerArgs:
    return TrainerArgs(sources=config.sources, values=config.components[TRAINER].values)


def kuberay_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> KubeRayArgs | None:
    """None with GKE's managed Ray operator: an add-on of the cluster (infra/gke.py)."""
    settings = config.components[KUBERAY]
    if settings.source is RaySource.GKE_ADDON:
        return None
    return KubeRayArgs(sources=config.sources, values=settings.values)


def istio_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> IstioArgs:
    return IstioArgs(
        sources=config.sources, gke=isinstance(config.cluster, GkeClusterConfig), gke_ingress=behind_gke_ingress(config)
    )


def notebook_registry(config: PlatformConfig) -> str:
    """Where the stack's notebook images come from: `kubeflow.notebookRegistry`, else the
    stack's Artifact Registry repository, else (kind) the local name `make notebook-images`
    loads into the cluster. A gke stack with neither is refused (stackmodel/rules.py)."""
    explicit = config.components[KUBEFLOW].notebook_registry
    if explicit:
        return explicit
    registry = image_registry_args(config)
    return registry.path if registry else LOCAL_REGISTRY


def notebook_images(config: PlatformConfig) -> NotebookImages:
    registry = notebook_registry(config)
    return NotebookImages(cpu=notebook_image(registry), gpu=notebook_image(registry, gpu=True))


def kubeflow_args(config: PlatformConfig, secrets: Secrets) -> KubeflowArgs:
    return KubeflowArgs(
        sources=config.sources,
        auth=config.components[KUBEFLOW].auth,
        ray_dashboards=tuple(RayDashboard(team=t.name, cluster=t.ray.name) for t in config.teams if t.ray),
        grafana=config.components[MONITORING].enabled,
        notebook_images=notebook_images(config),
        gpu_pools=gpu_pools(config),
        pipelines=config.components[PIPELINES].enabled,
        https=behind_gke_ingress(config),
        dex_password_hashes=secrets.get(DEX_PASSWORD_HASHES),
        oidc_client_secret=secrets.get(OIDC_CLIENT_SECRET),
    )


def https_gateway_args(config: PlatformConfig, secrets: Secrets) -> HttpsGatewayArgs:
    auth = config.components[KUBEFLOW].auth
    return HttpsGatewayArgs(
        project=config.project,
        auth=auth,
        deletion_protection=config.deletion_protection,
        iap_client_secret=secrets.get(IAP_CLIENT_SECRET),
    )


def kueue_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> KueueArgs:
    return KueueArgs(
        sources=config.sources,
        gpu_pools=gpu_pools(config),
        service_monitor=service_monitor_enabled(config),
        wait_for_pods_ready=config.components[KUEUE].wait_for_pods_ready,
        kuberay_chart=kuberay_args(config) is not None,
        values=config.components[KUEUE].values,
    )


def monitoring_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> MonitoringArgs:
    return MonitoringArgs(
        sources=config.sources,
        settings=config.components[MONITORING],
        project=config.project,
        cluster_name=config.cluster.name,
        kubeflow=config.components[KUBEFLOW].enabled,
        gpu_metrics=config.enabled(DCGM_EXPORTER),
        notebook_metrics=config.enabled(IDLE_RECLAIM),
    )


def idle_reclaim_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> IdleReclaimArgs:
    return IdleReclaimArgs(
        settings=config.components[IDLE_RECLAIM],
        backend=config.components[MONITORING].backend,
        namespaces=tuple(t.name for t in config.teams),
        threshold=config.components[MONITORING].idle_gpu_threshold,
    )


def dcgm_exporter_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> DcgmExporterArgs | None:
    """None with GKE's managed DCGM metrics: GKE runs the exporter (infra/gke.py)."""
    if config.components[DCGM_EXPORTER].source is DcgmSource.GKE_MANAGED:
        return None
    return DcgmExporterArgs(
        sources=config.sources,
        service_monitor=service_monitor_enabled(config),
        gpu_pools=gpu_pools(config),
        values=config.components[DCGM_EXPORTER].values,
    )


def training_runtimes_args(config: PlatformConfig) -> TrainingRuntimesArgs:
    fabrics = tuple(
        RuntimeFabric(p.pool, p.kind, tuple((nic.interface, nic.network) for nic in p.pod_nics)) for p in fabric_pools(config)
    )
    return TrainingRuntimesArgs(gpu_pools=gpu_pools(config), kueue=config.enabled(KUEUE), fabrics=fabrics)


def pipelines_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> PipelinesArgs:
    cluster = config.cluster
    gke = isinstance(cluster, GkeClusterConfig)
    sql = config.components[PIPELINES].cloud_sql
    cloud_sql = (
        CloudSqlArgs(
            project=config.project,
            region=cluster.region,
            instance=f"{cluster.name}-pipelines",
            settings=sql,
            deletion_protection=config.deletion_protection,
            private_service_access=sql.private_service_access if sql.private_service_access is not None else cluster.network.existing is None,
        )
        if isinstance(cluster, GkeClusterConfig)
        else None
    )
    return PipelinesArgs(
        sources=config.sources,
        settings=config.components[PIPELINES],
        artifacts_in_cluster=not gke,
        in_cluster_teams=() if gke else tuple(t.name for t in config.teams),
        cloud_sql=cloud_sql,
    )


def kubeflow_install_args(config: PlatformConfig, secrets: Secrets) -> KubeflowInstallArgs:
    return KubeflowInstallArgs(
        namespaces=kubeflow_namespaces_args(config),
        kubeflow=kubeflow_args(config, secrets),
        https_gateway=https_gateway_args(config, secrets) if behind_gke_ingress(config) else None,
    )


def trainer_install_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> TrainerInstallArgs:
    return TrainerInstallArgs(trainer=trainer_args(config), runtimes=training_runtimes_args(config))


@dataclass(frozen=True)
class NvidiaDraDriverArgs(ChartArgs):
    dra_pools: tuple[GpuPool, ...]
    """The pools whose nodes run the driver's kubelet plugin: it tolerates their taints."""


def nvidia_dra_driver_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> NvidiaDraDriverArgs:
    return NvidiaDraDriverArgs(
        sources=config.sources,
        dra_pools=tuple(p for p in gpu_pools(config) if p.dra),
        values=config.components[NVIDIA_DRA_DRIVER].values,
    )
