"""A team's Ray cluster: its pool, its size against the nodes and the team's quota, its operator
and its token's name."""

from __future__ import annotations

from decimal import Decimal

from facts.allocatable import allocatable
from facts.naming import TEAM_NAMESPACE_SECRETS
from facts.versions import KUEUE_CHART
from stackmodel import quantity, team_quota
from stackmodel.components.kuberay import KUBERAY
from stackmodel.components.kueue import KUEUE
from stackmodel.rules.rule import CLUSTER, KIND, POOLS, TEAMS, Found, gke_cluster, gpu_pools_of, team_path, team_rule
from stackmodel.stack import PlatformConfig


@team_rule("team-ray-pool-exists", "A team Ray cluster's pool is one of the stack's GPU pools.", reads=(TEAMS, KIND, POOLS))
def _team_ray_pool_exists(config: PlatformConfig, i: int) -> Found:
    ray, pools = config.teams[i].ray, gpu_pools_of(config)
    if ray and ray.pool and ray.pool not in {p.name for p in pools}:
        known = ", ".join(p.name for p in pools) or "none (this stack has no GPU pools)"
        yield f"{team_path(i)}.ray.pool", f"no GPU pool named {ray.pool!r}; use one of: {known}"


@team_rule("team-ray-pool-advertises-gpus", "A team Ray cluster's pool gives GPUs through the device plugin its workers ask (not DRA).", reads=(TEAMS, KIND, POOLS))
def _team_ray_pool_serves_gpus(config: PlatformConfig, i: int) -> Found:
    """A team Ray cluster's GPU workers request `nvidia.com/gpu` (components/profiles/ray.py), which
    a DRA pool's nodes do not advertise (GKE's device plugin is off there:
    `gke-no-default-nvidia-gpu-device-plugin`, facts/node_labels.py DRA_NODE_LABELS): the workers
    would never be scheduled."""
    ray = config.teams[i].ray
    pool = next((p for p in gpu_pools_of(config) if ray and p.name == ray.pool), None)
    if ray and pool is not None and pool.dra:
        others = ", ".join(p.name for p in gpu_pools_of(config) if not p.dra) or "none in this stack"
        yield (
            f"{team_path(i)}.ray.pool",
            f"pool {pool.name} gives its GPUs through DRA claims, and the Ray workers ask for nvidia.com/gpu, which its "
            f"nodes do not advertise (GKE's device plugin is off on a DRA pool): they would never start; use a pool with "
            f"gpuAllocation: device-plugin ({others})",
        )


@team_rule("team-ray-pool-not-topology-aware", "A team Ray cluster's workers are not on a pool Kueue places by topology.", reads=(TEAMS, KIND, POOLS, KUEUE.path))
def _team_ray_pool_not_topology_aware(config: PlatformConfig, i: int) -> Found:
    """Kueue admits the team RayCluster as an elastic job (components/profiles/ray.py), and a
    topology-aware pool's flavor takes only pod sets that ask for a topology
    (kueue v0.19.2 pkg/scheduler/flavorassigner/tas_flavorassigner.go checkPodSetAndFlavorMatchForTAS,
    "supports only TopologyAwareScheduling"); elastic jobs with a topology need Kueue's
    ElasticJobsViaWorkloadSlicesWithTAS, alpha and off in 0.19.2 (pkg/features/kube_features.go:716-718):
    its workers would never be admitted."""
    ray = config.teams[i].ray
    pool = next((p for p in gpu_pools_of(config) if ray and p.name == ray.pool), None)
    if pool is not None and pool.topology_aware and config.enabled(KUEUE):
        yield (
            f"{team_path(i)}.ray.pool",
            f"Kueue places pool {pool.name}'s {pool.machine_type} nodes by GKE's topology (docs/gke-cluster.md, "
            f"Topology-aware scheduling), and Kueue {KUEUE_CHART.version} admits an elastic RayCluster's workers there only with an alpha "
            "feature the platform leaves off: they would wait for ever; pick a pool Kueue does not place by topology",
        )


@team_rule("team-ray-needs-kuberay", "A team Ray cluster needs the kuberay component.", reads=(TEAMS, KUBERAY.path))
def _team_ray_needs_kuberay(config: PlatformConfig, i: int) -> Found:
    if config.teams[i].ray and not config.components[KUBERAY].enabled:
        yield f"{team_path(i)}.ray", "a team Ray cluster needs the kuberay component; enable it"


def _worker_size(config: PlatformConfig, i: int) -> tuple[Decimal, Decimal] | None:
    ray = config.teams[i].ray
    return (quantity.parse(ray.worker_cpu), quantity.parse(ray.worker_memory)) if ray else None


def _gib(size: Decimal) -> str:
    return f"{(size / 2**30).quantize(Decimal('0.1'))}Gi"


@team_rule("team-ray-fits-a-node", "A team Ray worker fits the allocatable CPU and memory of a node it can land on.", reads=(TEAMS, CLUSTER))
def _team_ray_fits_a_node(config: PlatformConfig, i: int) -> Found:
    """A Ray worker is one pod: it must fit the allocatable CPU and memory of one node it
    may land on: its GPU pool's machine, else (CPU workers) the system pool's, or with
    autoprovisioning the cluster-wide cpu and memory limits."""
    ray, gke, size = config.teams[i].ray, gke_cluster(config), _worker_size(config, i)
    if ray is None or gke is None or size is None:
        return
    pool = next((p for p in gke.gpu_pools if p.name == ray.pool), None)
    cpu, memory = size
    ray_path = f"{team_path(i)}.ray"
    if pool is None and ray.pool is None and gke.autoprovisioning.enabled:
        limits = gke.autoprovisioning.limits
        if cpu > limits.get("cpu", cpu):
            yield f"{ray_path}.workerCpu", f"a Ray worker of {cpu} CPUs exceeds autoprovisioning's cluster-wide limit of {limits['cpu']}; lower workerCpu"
        if memory > limits.get("memory", 0) * 2**30:
            yield f"{ray_path}.workerMemory", f"a Ray worker of {_gib(memory)} exceeds autoprovisioning's cluster-wide limit of {limits['memory']}Gi; lower workerMemory"
        return
    if pool is None and ray.pool is not None:
        return  # team-ray-pool-exists reports it
    machine, where = (pool.machine_type, f"pool {pool.name}") if pool else (gke.system_pool.machine_type, "the system pool")
    room = allocatable(machine)
    if room is None:
        return  # a machine type facts/prices.py has no shape for: not judged
    if cpu > room.cpu:
        yield (
            f"{ray_path}.workerCpu",
            f"a Ray worker of {cpu} CPUs never fits a {machine} node of {where}: GKE leaves {room.cpu.normalize()} "
            "of its CPUs to pods; lower workerCpu or use a larger machine type",
        )
    if memory > room.memory:
        yield (
            f"{ray_path}.workerMemory",
            f"a Ray worker of {_gib(memory)} never fits a {machine} node of {where}: GKE leaves {_gib(room.memory)} "
            "of its memory to pods; lower workerMemory or use a larger machine type",
        )


def _quota_reach(config: PlatformConfig, i: int, pool: str | None) -> tuple[dict[str, Decimal], str]:
    """The most CPU and memory one pod of team `i` may take, and what that is, for the output:
    with Kueue, the part of the team's quota on the flavor the pod gets (`pool`'s, else the
    default flavor's: stackmodel/team_quota.py) and what its cohort may lend of that part; without
    Kueue, the team's whole quota (its namespace's ResourceQuota)."""
    team = config.teams[i]
    if not config.enabled(KUEUE):
        return {"cpu": quantity.parse(team.quota.cpu), "memory": quantity.parse(team.quota.memory)}, "the team's whole quota"
    pools = gpu_pools_of(config)
    peers = [t for t in config.teams if team.cohort and t.cohort == team.cohort and t.name != team.name]
    reach = {name: Decimal(0) for name in team_quota.RESOURCES}
    for member in (team, *peers):
        shares = team_quota.shares(member, pools)
        part = shares.of(shares.cpu_flavor(pool if pool in {p.name for p in pools} else None))
        for name in team_quota.RESOURCES:
            reach[name] += part[name]
    flavor = f"flavor {pool}" if pool and team_quota.split_by_pool(pools) else "default flavor"
    return reach, f"the team's quota on Kueue's {flavor}{' with what its cohort lends' if peers else ''} (stackmodel/team_quota.py)"


@team_rule("team-ray-head-within-quota", "The team's quota admits the Ray head (CPU, memory) on its flavor.", reads=(TEAMS, POOLS, KUEUE.path))
def _team_ray_head_within_quota(config: PlatformConfig, i: int) -> Found:
    """The head is a pod of the namespace too: a head larger than the quota Kueue gives it (the
    default flavor's part) or, without Kueue, than the namespace's ResourceQuota, never starts
    the cluster."""
    team = config.teams[i]
    if team.ray is None:
        return
    cpu, memory = quantity.parse(team.ray.head_cpu), quantity.parse(team.ray.head_memory)
    reach, what = _quota_reach(config, i, None)
    ray_path = f"{team_path(i)}.ray"
    if cpu > reach["cpu"]:
        yield f"{ray_path}.headCpu", f"a Ray head of {cpu} CPUs is more than {what}, {quantity.text(reach['cpu'])}; lower headCpu or raise quota.cpu"
    if memory > reach["memory"]:
        yield f"{ray_path}.headMemory", f"a Ray head of {_gib(memory)} is more than {what}, {_gib(reach['memory'])}; lower headMemory or raise quota.memory"


@team_rule("team-ray-worker-within-quota", "The team's quota admits one Ray worker (CPU, memory, the GPUs of a node) on its flavor.", reads=(TEAMS, KIND, POOLS, KUEUE.path))
def _team_ray_worker_within_quota(config: PlatformConfig, i: int) -> Found:
    """The team's quota must admit one worker (on its pool's flavor with Kueue, stacks/
    team_quota.py; the namespace's ResourceQuota without), or the Ray cluster never grows."""
    team, size = config.teams[i], _worker_size(config, i)
    if team.ray is None or size is None:
        return
    cpu, memory = size
    ray_path = f"{team_path(i)}.ray"
    reach, what = _quota_reach(config, i, team.ray.pool)
    if team.ray.pool is not None and reach["cpu"] == 0:
        reach = {}  # the team has no GPUs of the pool: the pool's own problem below says so
    pool_node = next((allocatable(p.machine_type) for p in gpu_pools_of(config) if p.name == team.ray.pool), None)
    if reach and pool_node is not None and (cpu > pool_node.cpu or memory > pool_node.memory):
        reach = {}  # larger than a node of its pool: team-ray-fits-a-node says so (a part is at most its nodes)
    if reach and cpu > reach["cpu"]:
        yield f"{ray_path}.workerCpu", f"a Ray worker of {cpu} CPUs is more than {what}, {quantity.text(reach['cpu'])}; lower workerCpu or raise quota.cpu"
    if reach and memory > reach["memory"]:
        yield f"{ray_path}.workerMemory", f"a Ray worker of {_gib(memory)} is more than {what}, {_gib(reach['memory'])}; lower workerMemory or raise quota.memory"
    pool = next((p for p in gpu_pools_of(config) if p.name == team.ray.pool), None)
    if pool is None:
        return
    gpus = team.quota.gpus.get(pool.accelerator, 0)
    if pool.accelerator not in team.quota.gpus:
        yield (
            f"{ray_path}.pool",
            f"a Ray worker on pool {pool.name} takes {pool.gpus_per_node} {pool.accelerator} GPUs, and the team's quota "
            f"has none of that accelerator (quota.gpus: {', '.join(sorted(team.quota.gpus)) or 'empty'}), so no worker "
            f"is ever admitted; add quota.gpus.{pool.accelerator} or pick a pool of an accelerator the team has",
        )
    elif pool.gpus_per_node > gpus:
        yield (
            f"{ray_path}.pool",
            f"a Ray worker on pool {pool.name} takes all {pool.gpus_per_node} GPUs of a node, more than the "
            f"team's {pool.accelerator} quota of {gpus}; raise quota.gpus.{pool.accelerator} or pick another pool",
        )


@team_rule("team-ray-name-free", "A team Ray cluster's token Secret is not one the platform writes into the namespace.", reads=(TEAMS,))
def _team_ray_name_free(config: PlatformConfig, i: int) -> Found:
    """KubeRay names the cluster's token Secret after the cluster: not a Secret the platform already writes there."""
    ray = config.teams[i].ray
    if ray is not None and ray.name in TEAM_NAMESPACE_SECRETS:
        yield (
            f"{team_path(i)}.ray.name",
            f"KubeRay names the Ray cluster's token Secret after the cluster, and {ray.name!r} is "
            f"{TEAM_NAMESPACE_SECRETS[ray.name]} in every team namespace: one would overwrite the other; pick another "
            "name, e.g. ray",
        )
