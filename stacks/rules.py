"""Rules across parts of a stack file, as a table (the way policy/rules.py holds the
plan's guardrails): the schema types each part on its own, these judge how the parts
fit together (pools vs autoprovisioning, components vs the cluster kind, teams vs pools).

Each rule is a small function with a name and a one-line description, yielding
(config path, message) per problem. `cross_checks` runs them all once every part has
its type, so a stack file's problems are reported together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

from facts.gpu_catalog import ACCELERATORS
from facts.naming import kfam_binding_name
from stacks import quantity
from stacks.schema import (
    RESERVED_POOL_NAMES,
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


def _team_ray_pool_exists(config: PlatformConfig, i: int) -> Found:
    ray, pools = config.teams[i].ray, _pools(config)
    if ray and ray.pool and ray.pool not in {p.name for p in pools}:
        known = ", ".join(p.name for p in pools) or "none (this stack has no GPU pools)"
        yield f"{_team(i)}.ray.pool", f"no GPU pool named {ray.pool!r}; use one of: {known}"


def _team_ray_needs_kuberay(config: PlatformConfig, i: int) -> Found:
    if config.teams[i].ray and not config.components.kuberay.enabled:
        yield f"{_team(i)}.ray", "a team Ray cluster needs the kuberay component; enable it"


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
    TeamRule("team-names-unique", "No two teams share a name.", _team_names_unique),
    TeamRule("team-gpus-provided", "A team's GPU quota names accelerators a GPU pool or autoprovisioning provides.", _team_gpus_provided),
    TeamRule("contributor-binding-names-unique", "No two contributors of a team get one KFAM binding name.", _contributor_binding_names_unique),
    TeamRule("team-bucket-on-gke", "Team buckets (GCS) only on GKE.", _team_bucket_on_gke),
    TeamRule("team-ray-pool-exists", "A team Ray cluster's pool is one of the stack's GPU pools.", _team_ray_pool_exists),
    TeamRule("team-ray-needs-kuberay", "A team Ray cluster needs the kuberay component.", _team_ray_needs_kuberay),
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
