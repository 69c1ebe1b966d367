"""The Args of the whole platform: one per component the stack installs, None for the rest."""

from __future__ import annotations

from dataclasses import dataclass

from args.components import (
    CertManagerArgs,
    DcgmExporterArgs,
    HttpsGatewayArgs,
    IdleReclaimArgs,
    IstioArgs,
    JobSetArgs,
    KubeflowArgs,
    KubeflowNamespacesArgs,
    KubeRayArgs,
    KueueArgs,
    MonitoringArgs,
    PipelinesArgs,
    Secrets,
    TrainerArgs,
    TrainingRuntimesArgs,
    behind_gke_ingress,
    cert_manager_args,
    dcgm_exporter_args,
    https_gateway_args,
    idle_reclaim_args,
    istio_args,
    jobset_args,
    kubeflow_args,
    kubeflow_namespaces_args,
    kuberay_args,
    kueue_args,
    monitoring_args,
    pipelines_args,
    trainer_args,
    training_runtimes_args,
)
from args.infra import ClusterArgs, cluster_args
from args.teams import TeamArgs, teams_args
from facts.image_refs import ImagePolicy
from stacks.schema import DcgmSource, PlatformConfig, RaySource


@dataclass(frozen=True)
class PlatformArgs:
    cluster: ClusterArgs
    cert_manager: CertManagerArgs | None
    istio: IstioArgs | None
    kubeflow_namespaces: KubeflowNamespacesArgs | None
    """With Kubeflow: its namespaces, installed before everything else."""
    kubeflow: KubeflowArgs | None
    https_gateway: HttpsGatewayArgs | None
    """With Kubeflow behind a GKE Ingress."""
    jobset: JobSetArgs | None
    trainer: TrainerArgs | None
    training_runtimes: TrainingRuntimesArgs | None
    """With Trainer."""
    kuberay: KubeRayArgs | None
    """None also with GKE's Ray operator add-on (GkeClusterArgs.ray_operator)."""
    kueue: KueueArgs | None
    monitoring: MonitoringArgs | None
    dcgm_exporter: DcgmExporterArgs | None
    """None also with GKE's managed DCGM metrics (GkeClusterArgs.managed_dcgm)."""
    pipelines: PipelinesArgs | None
    idle_reclaim: IdleReclaimArgs | None
    teams: tuple[TeamArgs, ...]
    images: ImagePolicy
    """Where every object's images are pulled from (`mlplatform:images`, retired registries)."""


def platform_args(config: PlatformConfig, secrets: Secrets) -> PlatformArgs:
    on = config.enabled_components()
    components = config.components
    kubeflow = on["kubeflow"]
    return PlatformArgs(
        cluster=cluster_args(config),
        cert_manager=cert_manager_args(config) if on["certManager"] else None,
        istio=istio_args(config) if on["istio"] else None,
        kubeflow_namespaces=kubeflow_namespaces_args(config) if kubeflow else None,
        kubeflow=kubeflow_args(config, secrets) if kubeflow else None,
        https_gateway=https_gateway_args(config, secrets) if kubeflow and behind_gke_ingress(config) else None,
        jobset=jobset_args(config) if on["jobset"] else None,
        trainer=trainer_args(config) if on["trainer"] else None,
        training_runtimes=training_runtimes_args(config) if on["trainer"] else None,
        kuberay=kuberay_args(config) if on["kuberay"] and components.kuberay.source is not RaySource.GKE_ADDON else None,
        kueue=kueue_args(config) if on["kueue"] else None,
        monitoring=monitoring_args(config) if on["monitoring"] else None,
        dcgm_exporter=(
            dcgm_exporter_args(config)
            if on["dcgmExporter"] and components.dcgm_exporter.source is not DcgmSource.GKE_MANAGED
            else None
        ),
        pipelines=pipelines_args(config) if on["pipelines"] else None,
        idle_reclaim=idle_reclaim_args(config) if on["idleReclaim"] else None,
        teams=teams_args(config),
        images=ImagePolicy(mirror=config.images.mirror),
    )
