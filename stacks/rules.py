"""Rules across parts of a stack file, as a table (the way policy/rules.py holds the
plan's guardrails): the schema types each part on its own, these judge how the parts
fit together (pools vs autoprovisioning, components vs the cluster kind, teams vs pools).

Each rule is a small function with a name and a one-line description, yielding
(config path, message) per problem. `cross_checks` runs them all once every part has
its type, so a stack file's problems are reported together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from typing import Any

from facts.allocatable import allocatable
from facts.gpu_catalog import ACCELERATORS
from facts.naming import (
    bucket_name_problem,
    gmp_service_account_id,
    kfam_binding_name,
    node_service_account_id,
    team_bucket_name,
    team_service_account_id,
)
from stacks import quantity
from stacks.schema import (
    DNS_SUBDOMAIN_MAX,
    RESERVED_POOL_NAMES,
    AuthKind,
    DcgmSource,
    Environment,
    GkeClusterConfig,
    GpuPool,
    MetricsBackend,
    PlatformConfig,
    Provisioning,
    RaySource,
)

Found = Iterator[tuple[str, str]]
"""(config path, message) per problem, the path as the stack file spells it."""

CLUSTER = "mlplatform:cluster"
COMPONENTS = "mlplatform:components"


@dataclass(frozen=True)
class Rule:
    """A rule over the whole stack."""

    name: str
    description: str
    check: Callable[[PlatformConfig], Found]

    def problems(self, config: PlatformConfig) -> list[tuple[str, str]]:
        return list(self.check(config))


@dataclass(frozen=True)
class TeamRule:
    """A rule over one team, `check(config, i)` for mlplatform:teams[i]; the team's
    place in the stack is passed because rules compare it with the teams before it."""

    name: str
    description: str
    check: Callable[[PlatformConfig, int], Found]

    def problems(self, config: PlatformConfig) -> list[tuple[str, str]]:
        return [found for i in range(len(config.teams)) for found in self.check(config, i)]


# --- helpers --------------------------------------------------------------------------


def _gke(config: PlatformConfig) -> GkeClusterConfig | None:
    return config.cluster if isinstance(config.cluster, GkeClusterConfig) else None


def _pools(config: PlatformConfig) -> list[GpuPool]:
    gke = _gke(config)
    return gke.gpu_pools if gke else []


def _team(i: int) -> str:
    return f"mlplatform:teams[{i}]"


# --- the stack ------------------------------------------------------------------------


def _pool_names_free(config: PlatformConfig) -> Found:
    for i, pool in enumerate(_pools(config)):
        if pool.name in RESERVED_POOL_NAMES:
            yield (
                f"{CLUSTER}.gpuPools[{i}].name",
                f"{pool.name!r} is {RESERVED_POOL_NAMES[pool.name]}; pick another pool name",
            )


def _autoprovisioning_covers_gpus(config: PlatformConfig) -> Found:
    gke = _gke(config)
    if gke is None or not gke.autoprovisioning.enabled:
        return
    needed: dict[str, int] = {}
    for pool in gke.gpu_pools:
        gpus = pool.max * pool.gpus_per_node * gke.zone_count(pool.zones)
        needed[pool.accelerator] = needed.get(pool.accelerator, 0) + gpus
    for acc, gpus in needed.items():
        limit = gke.autoprovisioning.limits.get(acc)
        if limit is None or limit < gpus:
            yield (
                f"{CLUSTER}.autoprovisioning.limits.{acc}",
                f"the GPU pools can grow to {gpus} {acc} GPUs but the limit is "
                f"{limit if limit is not None else 'missing'}; set it to at least {gpus}",
            )


def _prod_on_gke(config: PlatformConfig) -> Found:
    if config.environment is Environment.PROD and _gke(config) is None:
        yield "mlplatform:environment", "a kind cluster is never prod; use dev, staging or ci, or a gke cluster"


def _queued_pools_need_kueue(config: PlatformConfig) -> Found:
    if config.components.kueue.enabled:
        return
    for i, pool in enumerate(_pools(config)):
        if pool.provisioning is Provisioning.QUEUED:
            yield (
                f"{CLUSTER}.gpuPools[{i}].provisioning",
                "queued pools get nodes only through ProvisioningRequests, which Kueue creates; "
                "enable the kueue component or use provisioning: flex-start",
            )


def _ray_addon_on_gke(config: PlatformConfig) -> Found:
    if config.components.kuberay.source is RaySource.GKE_ADDON and _gke(config) is None:
        yield f"{COMPONENTS}.kuberay.source", "gke-addon is GKE's managed Ray operator; on kind use source: operator"


def _dcgm_on_gke(config: PlatformConfig) -> Found:
    if config.components.dcgm_exporter.enabled and _gke(config) is None:
        yield f"{COMPONENTS}.dcgmExporter.enabled", "kind clusters have no GPUs; remove dcgmExporter.enabled"


def _managed_dcgm_needs_managed_prometheus(config: PlatformConfig) -> Found:
    gke, dcgm = _gke(config), config.components.dcgm_exporter
    if gke and dcgm.enabled is not False and dcgm.source is DcgmSource.GKE_MANAGED and not gke.managed_prometheus:
        yield (
            f"{COMPONENTS}.dcgmExporter.source",
            "GKE's managed DCGM metrics need cluster.managedPrometheus: true; set it or use source: chart",
        )


def _managed_backend_needs_managed_prometheus(config: PlatformConfig) -> Found:
    monitoring = config.components.monitoring
    if not (monitoring.enabled and monitoring.backend is MetricsBackend.GKE_MANAGED):
        return
    gke = _gke(config)
    if gke is None:
        yield (
            f"{COMPONENTS}.monitoring.backend",
            "gke-managed is GKE's managed Prometheus; on kind use backend: kube-prometheus-stack",
        )
    elif not gke.managed_prometheus:
        yield (
            f"{COMPONENTS}.monitoring.backend",
            "backend gke-managed needs cluster.managedPrometheus: true; set it or use backend: kube-prometheus-stack",
        )


def _gpu_metrics_reach_prometheus(config: PlatformConfig) -> Found:
    dcgm, monitoring = config.components.dcgm_exporter, config.components.monitoring
    if not (monitoring.enabled and config.enabled_components()["dcgmExporter"]):
        return
    managed_dcgm = dcgm.source is DcgmSource.GKE_MANAGED
    managed_backend = monitoring.backend is MetricsBackend.GKE_MANAGED
    if managed_dcgm and not managed_backend:
        yield (
            f"{COMPONENTS}.dcgmExporter.source",
            "GKE's managed DCGM metrics go to managed Prometheus, which kube-prometheus-stack does not read; "
            "use source: chart or monitoring.backend: gke-managed",
        )
    if managed_backend and not managed_dcgm:
        yield (
            f"{COMPONENTS}.dcgmExporter.source",
            "with monitoring.backend gke-managed use source: gke-managed "
            "(the chart's ServiceMonitor is for kube-prometheus-stack)",
        )


def _gateway_exposed_on_gke(config: PlatformConfig) -> Found:
    auth = config.components.kubeflow.auth
    if _gke(config) is None and (auth.hostname or auth.iap):
        yield f"{COMPONENTS}.kubeflow.auth", "hostname and iap expose the gateway on GKE; on kind remove them"


def _teams_need_kubeflow(config: PlatformConfig) -> Found:
    if config.teams and not config.components.kubeflow.enabled:
        yield "mlplatform:teams", "teams are Kubeflow profiles; enable kubeflow or remove the teams"


def _notebook_images_have_a_registry(config: PlatformConfig) -> Found:
    gke, kubeflow = _gke(config), config.components.kubeflow
    if gke and kubeflow.enabled and not gke.image_registry.enabled and not kubeflow.notebook_registry:
        yield (
            f"{COMPONENTS}.kubeflow.notebookRegistry",
            "the notebook images need a registry the nodes pull from; set notebookRegistry, or leave "
            "cluster.imageRegistry enabled to use the stack's Artifact Registry repository",
        )


# --- each team ------------------------------------------------------------------------


def _team_names_unique(config: PlatformConfig, i: int) -> Found:
    team = config.teams[i]
    if team.name in {earlier.name for earlier in config.teams[:i]}:
        yield f"{_team(i)}.name", f"duplicate team {team.name!r}; team names must be unique"


def _team_gpus_provided(config: PlatformConfig, i: int) -> Found:
    known = {p.accelerator for p in _pools(config)}
    gke = _gke(config)
    if gke and gke.autoprovisioning.enabled:
        known |= {k for k in gke.autoprovisioning.limits if k in ACCELERATORS}
    for acc in config.teams[i].quota.gpus:
        if acc not in known:
            have = ", ".join(sorted(known)) or "none (this stack has no GPU pools)"
            yield (
                f"{_team(i)}.quota.gpus.{acc}",
                f"no GPU pool or autoprovisioning limit provides {acc}; use one of: {have}",
            )


def _contributor_binding_names_unique(config: PlatformConfig, i: int) -> Found:
    """ana.b@x.com and ana-b@x.com with one role get one RoleBinding and
    AuthorizationPolicy name from KFAM: one object, so only one of them has access."""
    first: dict[str, tuple[int, str]] = {}
    for j, person in enumerate(config.teams[i].contributors):
        name = kfam_binding_name(person.email, person.role.value)
        if name not in first:
            first[name] = (j, person.email)
            continue
        k, other = first[name]
        yield (
            f"{_team(i)}.contributors[{j}].email",
            f"{person.email} and {other} (contributors[{k}]) get one Kubeflow binding name {name!r} "
            "(KFAM turns every run of characters other than letters and digits into '-'); "
            "keep one of them, or give them different roles",
        )


def _team_bucket_on_gke(config: PlatformConfig, i: int) -> Found:
    if config.teams[i].bucket and _gke(config) is None:
        yield f"{_team(i)}.bucket", "buckets are GCS buckets; only gke stacks have them"


def _team_pipelines_need_bucket_on_gke(config: PlatformConfig, i: int) -> Found:
    """On GKE a team's pipeline root is its bucket (components/team_pipelines.py): runs write
    their artifacts there as the team's Google account, which no other team's can read."""
    team = config.teams[i]
    if _gke(config) and config.components.pipelines.enabled and team.bucket is None:
        yield (
            f"{_team(i)}.bucket",
            f"team {team.name} runs pipelines, whose artifacts go to the team's own bucket on gke; add `bucket: {{}}` "
            f"to the team (or disable {COMPONENTS}.pipelines)",
        )


def _team_ray_pool_exists(config: PlatformConfig, i: int) -> Found:
    ray, pools = config.teams[i].ray, _pools(config)
    if ray and ray.pool and ray.pool not in {p.name for p in pools}:
        known = ", ".join(p.name for p in pools) or "none (this stack has no GPU pools)"
        yield f"{_team(i)}.ray.pool", f"no GPU pool named {ray.pool!r}; use one of: {known}"


def _team_ray_needs_kuberay(config: PlatformConfig, i: int) -> Found:
    if config.teams[i].ray and not config.components.kuberay.enabled:
        yield f"{_team(i)}.ray", "a team Ray cluster needs the kuberay component; enable it"


# --- what the stack derives: physical names, sign-in, sizes ----------------------------


def _teams_need_kueue(config: PlatformConfig) -> Found:
    if config.teams and not config.components.kueue.enabled:
        yield (
            f"{COMPONENTS}.kueue.enabled",
            "every team gets a Kueue ClusterQueue and a `default` LocalQueue, which need Kueue; "
            "enable kueue or remove the teams",
        )


def _service_account_ids(config: PlatformConfig) -> Iterator[tuple[str, str, Callable[[], str]]]:
    """(config path, whose, id) of every Google service account the stack creates."""
    gke = _gke(config)
    if gke is None:
        return
    yield f"{CLUSTER}.name", "the nodes' account", partial(node_service_account_id, gke.name)
    monitoring = config.components.monitoring
    if monitoring.enabled and monitoring.backend is MetricsBackend.GKE_MANAGED:
        yield f"{COMPONENTS}.monitoring.backend", "the managed-Prometheus query account", partial(gmp_service_account_id, gke.name)
    named = set()
    for i, team in enumerate(config.teams):
        if team.name not in named:  # two teams of one name: team-names-unique says so
            named.add(team.name)
            yield f"{_team(i)}.name", f"team {team.name}'s account", partial(team_service_account_id, team.name)


def _service_account_ids_unique(config: PlatformConfig) -> Found:
    """Google service-account ids are unique in the project: the second create fails (or,
    with an id already there, two parts of the platform would share one identity)."""
    first: dict[str, tuple[str, str]] = {}
    for path, whose, derive in _service_account_ids(config):
        try:
            account_id = derive()
        except ValueError as err:
            yield path, f"{whose} would get an invalid Google service-account id: {err}; pick another name"
            continue
        if account_id in first:
            other_path, other = first[account_id]
            yield (
                path,
                f"{whose} would get the Google service-account id {account_id!r}, which {other} ({other_path}) "
                "already has; rename one of them",
            )
        else:
            first[account_id] = (path, whose)


def _bucket_of(config: PlatformConfig, i: int) -> tuple[str, str] | None:
    """(config path, name) of team i's bucket; None without a bucket or a known name."""
    team = config.teams[i]
    if team.bucket is None or _gke(config) is None:
        return None
    if team.bucket.name:
        return f"{_team(i)}.bucket.name", team.bucket.name
    if config.project is None:
        return None  # reported as missing, or it comes from an ESC environment
    return f"{_team(i)}.bucket", team_bucket_name(config.project, team.name)


def _team_default_bucket_name_valid(config: PlatformConfig, i: int) -> Found:
    bucket = _bucket_of(config, i)
    if bucket is None or bucket[0].endswith(".name"):
        return  # a name written out is judged where it is declared (schema.TeamBucket)
    reason = bucket_name_problem(bucket[1])
    if reason:
        yield (
            bucket[0],
            f"the default bucket name {bucket[1]!r} (<project>-<team>) is not a valid Cloud Storage name: "
            f"{reason}; set bucket.name",
        )


def _team_bucket_names_unique(config: PlatformConfig, i: int) -> Found:
    bucket = _bucket_of(config, i)
    if bucket is None:
        return
    for j in range(i):
        earlier = _bucket_of(config, j)
        if earlier and earlier[1] == bucket[1] and config.teams[j].name != config.teams[i].name:
            yield (
                bucket[0],
                f"bucket {bucket[1]!r} is also team {config.teams[j].name}'s ({_team(j)}); bucket names are "
                "global, so each team needs its own: change bucket.name",
            )
            return


def _contributor_binding_names_fit(config: PlatformConfig, i: int) -> Found:
    """KFAM's binding name is also an AuthorizationPolicy's, a custom resource, so a DNS
    subdomain of at most 253 characters (apiextensions-apiserver customresource validator:
    NameIsDNSSubdomain)."""
    for j, person in enumerate(config.teams[i].contributors):
        name = kfam_binding_name(person.email, person.role.value)
        if len(name) > DNS_SUBDOMAIN_MAX:
            yield (
                f"{_team(i)}.contributors[{j}].email",
                f"KFAM names this contributor's RoleBinding and AuthorizationPolicy user-<e-mail>-clusterrole-<role>: "
                f"{len(name)} characters, and Kubernetes allows {DNS_SUBDOMAIN_MAX}; use a shorter address",
            )


def _worker_size(config: PlatformConfig, i: int) -> tuple[Decimal, Decimal] | None:
    ray = config.teams[i].ray
    return (quantity.parse(ray.worker_cpu), quantity.parse(ray.worker_memory)) if ray else None


def _gib(size: Decimal) -> str:
    return f"{(size / 2**30).quantize(Decimal('0.1'))}Gi"


def _team_ray_fits_a_node(config: PlatformConfig, i: int) -> Found:
    """A Ray worker is one pod: it must fit the allocatable CPU and memory of one node it
    may land on: its GPU pool's machine, else (CPU workers) the system pool's, or with
    autoprovisioning the cluster-wide cpu and memory limits."""
    ray, gke, size = config.teams[i].ray, _gke(config), _worker_size(config, i)
    if ray is None or gke is None or size is None:
        return
    pool = next((p for p in gke.gpu_pools if p.name == ray.pool), None)
    cpu, memory = size
    ray_path = f"{_team(i)}.ray"
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


def _team_ray_worker_within_quota(config: PlatformConfig, i: int) -> Found:
    """The namespace's ResourceQuota (the Profile's, a hard limit: no borrowing) must admit
    one worker, or the Ray cluster never grows."""
    team, size = config.teams[i], _worker_size(config, i)
    if team.ray is None or size is None:
        return
    cpu, memory = size
    ray_path = f"{_team(i)}.ray"
    if cpu > quantity.parse(team.quota.cpu):
        yield f"{ray_path}.workerCpu", f"a Ray worker of {cpu} CPUs is more than the team's whole quota.cpu {team.quota.cpu}; lower workerCpu or raise the quota"
    if memory > quantity.parse(team.quota.memory):
        yield f"{ray_path}.workerMemory", f"a Ray worker of {_gib(memory)} is more than the team's whole quota.memory {team.quota.memory}; lower workerMemory or raise the quota"
    pool = next((p for p in _pools(config) if p.name == team.ray.pool), None)
    gpus = sum(team.quota.gpus.values())
    if pool is not None and pool.gpus_per_node > gpus:
        yield (
            f"{ray_path}.pool",
            f"a Ray worker on pool {pool.name} takes all {pool.gpus_per_node} GPUs of a node, more than the "
            f"team's GPU quota of {gpus}; raise quota.gpus.{pool.accelerator} or pick another pool",
        )


# --- who may sign in -----------------------------------------------------------------

AUTH = f"{COMPONENTS}.kubeflow.auth"


def _sign_in_problem(config: PlatformConfig, email: str) -> str | None:
    """Why `email` could never sign in to this stack, or None (it can, or the stack does not
    say who may: Dex without static users)."""
    auth = config.components.kubeflow.auth
    address = email.lower()
    if auth.kind is AuthKind.OIDC:
        if address in {e.lower() for e in auth.allowed_emails} or address.rsplit("@", 1)[-1] in auth.allowed_domains:
            return None
        return f"{email} cannot sign in: its domain is not in {AUTH}.allowedDomains and it is not in allowedEmails; add one of them, or correct the address"
    if auth.static_users and address not in {u.lower() for u in auth.static_users}:
        return f"{email} cannot sign in: it is not one of {AUTH}.staticUsers; add it there (with its hash in mlplatform:dexPasswordHashes), or correct the address"
    return None


def _grafana_admins_can_sign_in(config: PlatformConfig) -> Found:
    if not config.components.kubeflow.enabled:
        return
    for i, email in enumerate(config.components.monitoring.grafana_admins):
        found = _sign_in_problem(config, email)
        if found:
            yield f"{COMPONENTS}.monitoring.grafanaAdmins[{i}]", found


def _grafana_signs_in_through_kubeflow(config: PlatformConfig) -> Found:
    if config.components.monitoring.enabled and not config.components.kubeflow.enabled:
        yield (
            f"{COMPONENTS}.monitoring.enabled",
            "Grafana signs people in with the identity the Kubeflow gateway asserts and has no login of its own; "
            "enable kubeflow or disable monitoring",
        )


def _team_people_can_sign_in(config: PlatformConfig, i: int) -> Found:
    if not config.components.kubeflow.enabled:
        return
    team = config.teams[i]
    found = _sign_in_problem(config, team.owner)
    if found:
        yield f"{_team(i)}.owner", found
    for j, person in enumerate(team.contributors):
        found = _sign_in_problem(config, person.email)
        if found:
            yield f"{_team(i)}.contributors[{j}].email", found


def _team_container_defaults_fit_quota(config: PlatformConfig, i: int) -> Found:
    team = config.teams[i]
    defaults, quota = team.container_defaults, team.quota
    for key, request, hard in (("cpu", defaults.cpu, quota.cpu), ("memory", defaults.memory, quota.memory)):
        if quantity.parse(request) > quantity.parse(hard):
            yield (
                f"{_team(i)}.containerDefaults.{key}",
                f"the default {key} request {request} is above the team's {key} quota {hard}, so no container "
                f"without requests could start; lower it or raise quota.{key}",
            )


def _team_push_images_needs_registry(config: PlatformConfig, i: int) -> Found:
    gke = _gke(config)
    if config.teams[i].push_images and not (gke and gke.image_registry.enabled):
        yield (
            f"{_team(i)}.pushImages",
            "pushImages grants push to the stack's Artifact Registry repository, which only a gke stack with "
            "cluster.imageRegistry enabled has; remove it or enable the registry",
        )


RULES: tuple[Rule | TeamRule, ...] = (
    Rule("pool-names-free", "No GPU pool takes the system pool's name or Kueue's CPU flavor name.", _pool_names_free),
    Rule("autoprovisioning-covers-gpus", "With autoprovisioning on, its limits cover every GPU pool at full size.", _autoprovisioning_covers_gpus),
    Rule("prod-on-gke", "A prod stack runs on a GKE cluster, never kind.", _prod_on_gke),
    Rule("queued-pools-need-kueue", "Queued GPU pools need Kueue, which creates their ProvisioningRequests.", _queued_pools_need_kueue),
    Rule("ray-addon-on-gke", "KubeRay from GKE's Ray add-on only on GKE.", _ray_addon_on_gke),
    Rule("dcgm-on-gke", "The DCGM exporter is switched on only on GKE (kind has no GPUs).", _dcgm_on_gke),
    Rule("managed-dcgm-needs-managed-prometheus", "GKE's managed DCGM metrics need managed Prometheus on the cluster.", _managed_dcgm_needs_managed_prometheus),
    Rule("managed-backend-needs-managed-prometheus", "The gke-managed monitoring backend needs a GKE cluster with managed Prometheus.", _managed_backend_needs_managed_prometheus),
    Rule("gpu-metrics-reach-prometheus", "GPU metrics go to the Prometheus that dashboards and alerts read.", _gpu_metrics_reach_prometheus),
    Rule("gateway-exposed-on-gke", "A public hostname and IAP for the Kubeflow gateway only on GKE.", _gateway_exposed_on_gke),
    Rule("teams-need-kubeflow", "Teams are Kubeflow profiles, so they need the kubeflow component.", _teams_need_kubeflow),
    Rule("teams-need-kueue", "Teams get Kueue queues, so they need the kueue component.", _teams_need_kueue),
    Rule("service-account-ids-unique", "Every Google service account the stack creates gets a valid id of its own.", _service_account_ids_unique),
    TeamRule("team-names-unique", "No two teams share a name.", _team_names_unique),
    TeamRule("team-gpus-provided", "A team's GPU quota names accelerators a GPU pool or autoprovisioning provides.", _team_gpus_provided),
    TeamRule("contributor-binding-names-unique", "No two contributors of a team get one KFAM binding name.", _contributor_binding_names_unique),
    TeamRule("team-bucket-on-gke", "Team buckets (GCS) only on GKE.", _team_bucket_on_gke),
    TeamRule("team-pipelines-need-bucket-on-gke", "On GKE a team that runs pipelines has a bucket: its pipeline root.", _team_pipelines_need_bucket_on_gke),
    TeamRule("team-default-bucket-name-valid", "A team bucket's default name, <project>-<team>, is a valid Cloud Storage name.", _team_default_bucket_name_valid),
    TeamRule("team-bucket-names-unique", "No two teams get one bucket name (bucket names are global).", _team_bucket_names_unique),
    TeamRule("contributor-binding-names-fit", "KFAM's binding name of every contributor is a valid Kubernetes name (at most 253 characters).", _contributor_binding_names_fit),
    TeamRule("team-ray-fits-a-node", "A team Ray worker fits the allocatable CPU and memory of a node it can land on.", _team_ray_fits_a_node),
    TeamRule("team-ray-worker-within-quota", "The team's quota admits one Ray worker (CPU, memory, the GPUs of a node).", _team_ray_worker_within_quota),
    TeamRule("team-ray-pool-exists", "A team Ray cluster's pool is one of the stack's GPU pools.", _team_ray_pool_exists),
    TeamRule("team-ray-needs-kuberay", "A team Ray cluster needs the kuberay component.", _team_ray_needs_kuberay),
    Rule("grafana-signs-in-through-kubeflow", "Grafana trusts the Kubeflow gateway's identity, so monitoring needs kubeflow.", _grafana_signs_in_through_kubeflow),
    Rule("grafana-admins-can-sign-in", "Every Grafana admin is someone the stack lets sign in.", _grafana_admins_can_sign_in),
    TeamRule("team-people-can-sign-in", "A team's owner and contributors are people the stack lets sign in.", _team_people_can_sign_in),
    TeamRule("team-container-defaults-fit-quota", "A team's default container requests fit in its quota.", _team_container_defaults_fit_quota),
    Rule("notebook-images-have-a-registry", "A gke stack's notebook images come from its Artifact Registry repository or a named registry.", _notebook_images_have_a_registry),
    TeamRule("team-push-images-needs-registry", "A team pushes images only to a gke stack's Artifact Registry repository.", _team_push_images_needs_registry),
)


def cross_checks(config: PlatformConfig) -> list[tuple[str, str]]:
    """Every problem of every rule, as (path, message): the stack's rules in table order,
    then team by team, each team's rules in table order."""
    problems = [found for rule in RULES if isinstance(rule, Rule) for found in rule.check(config)]
    for i in range(len(config.teams)):
        problems += [found for rule in RULES if isinstance(rule, TeamRule) for found in rule.check(config, i)]
    return problems


def missing_keys(raw: dict[str, Any]) -> list[tuple[str, str]]:
    """Keys one part of the stack makes required elsewhere; checked on the raw file, before
    the schema, so they are reported together with every type error."""
    cluster = raw.get(CLUSTER)
    if isinstance(cluster, dict) and cluster.get("kind") == "gke" and not raw.get("gcp:project"):
        return [("gcp:project", "a gke cluster needs the GCP project; set gcp:project")]
    return []
