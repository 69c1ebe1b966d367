"""Warnings: what may be meant but usually is not; printed with the path, exit 0."""

from __future__ import annotations

from facts.dra import DCGM_DRA_RESOURCE_SLICES
from facts.limits import QUEUED_POOL_READY_MIN_SECONDS
from stackmodel.components.dcgm import DCGM_EXPORTER
from stackmodel.components.idle_reclaim import IDLE_RECLAIM
from stackmodel.components.kueue import KUEUE
from stackmodel.rules.rule import ENABLED, POOLS, TEAMS, Found, gpu_pools_of, team_path, warning_rule
from stackmodel.schema import Provisioning
from stackmodel.schema.common import duration_seconds
from stackmodel.stack import PlatformConfig


@warning_rule("cohort-shared", "A team's Kueue cohort is named by another team too.", reads=(TEAMS,))
def _cohort_shared(config: PlatformConfig) -> Found:
    """A Kueue cohort lends and borrows between the teams in it: one team alone in it gets nothing."""
    named: dict[str, list[int]] = {}
    for i, team in enumerate(config.teams):
        if team.cohort:
            named.setdefault(team.cohort, []).append(i)
    for cohort, teams in named.items():
        if len(teams) == 1:
            i = teams[0]
            yield (
                f"{team_path(i)}.cohort",
                f"no other team names cohort {cohort!r}, so team {config.teams[i].name} borrows from and lends to nobody "
                "(a typo of another team's cohort?)",
            )


@warning_rule("queued-pools-can-get-ready", "Kueue's pods-ready timeout leaves a queued pool's nodes time to come up.", reads=(POOLS, KUEUE.path))
def _queued_pools_can_get_ready(config: PlatformConfig) -> Found:
    """A queued pool's nodes come up only after Kueue admits the workload (facts/limits.py)."""
    queued = [p.name for p in gpu_pools_of(config) if p.provisioning is Provisioning.QUEUED]
    kueue = config.components[KUEUE]
    if not queued or not kueue.enabled:
        return
    timeout = kueue.wait_for_pods_ready.timeout
    if duration_seconds(timeout) < QUEUED_POOL_READY_MIN_SECONDS:
        yield (
            f"{KUEUE.path}.waitForPodsReady.timeout",
            f"{timeout} is shorter than a queued pool ({', '.join(queued)}) can have its pods ready: its nodes boot, "
            f"install the GPU driver and pull images only after Kueue admits the workload, and cluster autoscaler alone "
            f"gives its pods {QUEUED_POOL_READY_MIN_SECONDS // 60}m; such workloads would be evicted again and again",
        )


@warning_rule("topology-labels-unused", "A GPU pool whose nodes carry GKE's topology labels is one Kueue can place by them.", reads=(POOLS, KUEUE.path))
def _topology_labels_unused(config: PlatformConfig) -> Found:
    """A pool whose machines GKE labels with their block and sub-block, but that Kueue cannot
    place by them (GpuPool.topology_aware, facts/topology.py): said, as the stack may mean it."""
    if not config.components[KUEUE].enabled:
        return
    for i, pool in enumerate(gpu_pools_of(config)):
        if pool.topology_labelled and not pool.topology_aware:
            yield (
                f"{POOLS}[{i}]",
                f"pool {pool.name}'s {pool.machine_type} nodes carry GKE's topology labels, but its nodes come only for pods "
                "Kueue has admitted and Kueue's topology-aware scheduling counts only nodes that exist: its jobs are placed "
                "without topology. For block and sub-block placement set min equal to max (a fixed pool, e.g. on a "
                "reservation) or provisioning: queued",
            )


@warning_rule("ray-gpu-workers-scale-to-zero", "With the idle reclaim on, team Ray clusters let idle GPU workers go.", reads=(TEAMS, ENABLED[0]))
def _ray_gpu_workers_scale_to_zero(config: PlatformConfig) -> Found:
    """With the idle reclaim on, GPUs are given back when idle; a team Ray cluster gives its GPU
    workers back through its autoscaler (components/profiles/ray.py RAY_IDLE_TIMEOUT_SECONDS),
    down to minWorkers only."""
    if not config.enabled(IDLE_RECLAIM):
        return
    for i, team in enumerate(config.teams):
        if team.ray and team.ray.pool and team.ray.min_workers > 0:
            yield (
                f"{team_path(i)}.ray.minWorkers",
                f"team {team.name}'s Ray cluster keeps {team.ray.min_workers} GPU worker(s) of pool {team.ray.pool} even when "
                "idle, while the idle reclaim gives idle notebook GPUs back; set minWorkers: 0 for its autoscaler to remove "
                "idle GPU workers (Ray then starts them again for the next task)",
            )


@warning_rule("gpu-metrics-of-dra-pools-carry-no-team", "A DRA pool's GPU metrics carry no pod or team at the pinned DCGM exporter.", reads=ENABLED)
def _gpu_metrics_of_dra_pools_carry_no_team(config: PlatformConfig) -> Found:
    """At the pinned DCGM exporter the GPUs of a DRA pool get no pod attribution (facts/dra.py
    DCGM_DRA_ATTRIBUTION_OFF): their metrics reach Prometheus without pod or team, so the per-team
    dashboards, GPU-hours and the idle-GPU alert leave them out. Said, as the pools still work."""
    if not config.enabled(DCGM_EXPORTER):
        return
    for i, pool in enumerate(gpu_pools_of(config)):
        if pool.dra:
            yield (
                f"{POOLS}[{i}].gpuAllocation",
                f"pool {pool.name}'s GPUs are given through DRA, and the DCGM exporter of this release attributes DRA GPUs to "
                f"pods only through {DCGM_DRA_RESOURCE_SLICES} ResourceSlices, which GKE does not serve: their metrics carry "
                "no pod or team, so per-team dashboards, GPU-hours and the idle-GPU alert leave this pool's work out "
                "(docs/observability.md, \"GPUs through DRA\"); use gpuAllocation: device-plugin where that matters",
            )
