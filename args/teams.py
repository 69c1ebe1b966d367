"""Args of one team's profile: the team, and what of the cluster its objects depend on."""

from __future__ import annotations

from dataclasses import dataclass

from args.components import gpu_pools
from facts.naming import team_bucket_name
from stacks.schema import GkeClusterConfig, GpuPool, PlatformConfig, Team


@dataclass(frozen=True)
class GoogleCloud:
    """Where a team's Google service account and bucket live (GKE stacks)."""

    project: str | None
    region: str
    """The bucket's default location."""
    deletion_protection: bool
    gcs_fuse: bool = True
    """GKE's GCS Fuse CSI driver is on: the team's PodDefault mounts its bucket."""


@dataclass(frozen=True)
class TeamPipelines:
    """The team runs Kubeflow Pipelines (components/team_pipelines.py): where its artifacts go."""

    bucket: str | None
    """gke: the team's own bucket, its pipeline root (stacks/rules.py makes every such team have
    one); None: the team's prefix of the in-cluster object store."""


@dataclass(frozen=True)
class TeamArgs:
    team: Team
    gpu_pools: tuple[GpuPool, ...]
    """Quota per pool flavor; the Ray cluster's pool."""
    kueue: bool
    """Kueue is installed: the Ray cluster is a Kueue elastic job."""
    google: GoogleCloud | None
    """On GKE: the team gets a Google identity (Workload Identity) and its bucket."""
    pipelines: TeamPipelines | None = None
    """Kubeflow Pipelines is installed: the team's namespace runs pipelines."""


def team_args(config: PlatformConfig, team: Team) -> TeamArgs:
    cluster = config.cluster
    google = (
        GoogleCloud(
            project=config.project,
            region=cluster.region,
            deletion_protection=config.deletion_protection,
            gcs_fuse=cluster.gcs_fuse,
        )
        if isinstance(cluster, GkeClusterConfig)
        else None
    )
    pipelines = None
    if config.components.pipelines.enabled:
        bucket = (team.bucket.name or team_bucket_name(config.project, team.name)) if google and team.bucket else None
        pipelines = TeamPipelines(bucket=bucket)
    return TeamArgs(
        team=team, gpu_pools=gpu_pools(config), kueue=config.enabled_components()["kueue"], google=google, pipelines=pipelines
    )


def teams_args(config: PlatformConfig) -> tuple[TeamArgs, ...]:
    return tuple(team_args(config, team) for team in config.teams)
