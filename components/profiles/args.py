"""Args of one team's profile: the team, and what of the cluster its objects depend on."""

from __future__ import annotations

from dataclasses import dataclass

from components.inference_gateway import gke_gateway_network
from components.model_registry import TeamRegistry, team_registry_args
from components.team_pipelines import TeamPipelines
from facts.naming import team_bucket_name
from stackmodel.components.idle_reclaim import IDLE_RECLAIM
from stackmodel.components.katib import KATIB, KatibRoom
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.kueue import KUEUE
from stackmodel.components.pipelines import PIPELINES
from stackmodel.components.serving import SERVING
from stackmodel.components.spark import SPARK
from stackmodel.schema import GkeClusterConfig, GpuPool, GroupSource, KubeflowAuth, Role, Team
from stackmodel.stack import PlatformConfig


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
class TeamGroup:
    """A group contributor of the team: its role, where its membership comes from, and its
    members as the stack lists them (all of a stack group; those known at `pulumi up` of a
    provider group)."""

    name: str
    role: Role
    source: GroupSource
    members: tuple[str, ...]

    @property
    def live(self) -> bool:
        """The token's groups claim says who is in it now (the gateway follows it)."""
        return self.source is GroupSource.PROVIDER


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
    groups: tuple[TeamGroup, ...] = ()
    """The team's group contributors, in the stack's order."""
    cohort_peers: tuple[Team, ...] = ()
    """The other teams of its Kueue cohort: what its ClusterQueue may borrow."""
    idle_reclaim: bool = False
    """The idle reclaim runs: its job may read and stop the namespace's notebooks."""
    katib: KatibRoom | None = None
    """Katib is installed: the namespace takes its metrics collectors, and its quota keeps this
    room for Katib's pods beside the trials (components/katib.py, docs/katib.md)."""
    spark: bool = False
    """The Spark operator is installed: the namespace gets the Spark service account the Kubeflow
    SDK's jobs run as (components/profiles/spark.py)."""
    model_registry: TeamRegistry | None = None
    """The Model Registry is installed: the team's own registry, in its namespace."""
    fair_sharing: bool = True
    """Kueue's fair sharing is on: the team's queue carries its weight in the cohort."""
    serving: TeamServing | None = None
    """Serving is installed: the team's models have their path, router, tokens and model store."""


@dataclass(frozen=True)
class TeamServing:
    """A team's share of serving (components/profiles/serving.py)."""

    bucket: str | None
    """On GKE with a team bucket: the bucket its model store reads."""
    llm: bool = False
    """KServe's LLM controller is installed (`serving.llm`): the team's LLM config and the gateway's
    check of its LLM prefixes."""
    gke_gateway_sources: tuple[str, ...] = ()
    """With LLMs behind GKE Inference Gateway: the ranges its load balancer reaches the team's model
    servers and endpoint pickers from (components/inference_gateway.py GkeGatewayNetwork.sources)."""


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
    if config.components[PIPELINES].enabled:
        bucket = (team.bucket.name or team_bucket_name(config.project, team.name)) if google and team.bucket else None
        pipelines = TeamPipelines(bucket=bucket)
    auth = config.components[KUBEFLOW].auth
    llm = config.components[SERVING].llm
    gke_gateway = gke_gateway_network(config) if llm else None
    return TeamArgs(
        team=team,
        gpu_pools=config.gpu_pools,
        kueue=config.enabled(KUEUE),
        google=google,
        pipelines=pipelines,
        groups=team_groups(auth, team),
        cohort_peers=tuple(t for t in config.teams if team.cohort and t.cohort == team.cohort and t.name != team.name),
        idle_reclaim=config.enabled(IDLE_RECLAIM),
        katib=config.components[KATIB].room if config.enabled(KATIB) else None,
        spark=config.enabled(SPARK),
        model_registry=team_registry_args(config, team.name),
        fair_sharing=config.components[KUEUE].fair_sharing,
        serving=TeamServing(
            bucket=(team.bucket.name or team_bucket_name(config.project, team.name)) if google and team.bucket and google.gcs_fuse else None,
            llm=llm,
            gke_gateway_sources=gke_gateway.sources if gke_gateway else (),
        )
        if config.enabled(SERVING)
        else None,
    )


def team_groups(auth: KubeflowAuth, team: Team) -> tuple[TeamGroup, ...]:
    """The team's group contributors with their definitions (stackmodel/rules/ makes every group
    one auth.groups defines)."""
    defined = {g.name: g for g in auth.groups}
    return tuple(
        TeamGroup(name=group.name, role=entry.role, source=group.source, members=tuple(str(m) for m in group.members))
        for entry in team.groups
        for group in (defined[str(entry.group)],)
    )


def teams_args(config: PlatformConfig) -> tuple[TeamArgs, ...]:
    return tuple(team_args(config, team) for team in config.teams)
