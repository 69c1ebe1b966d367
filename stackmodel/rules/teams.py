"""The teams: what they need installed, their names, contributors and groups, buckets, Google
identities, quotas and images."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from facts.gpu_catalog import ACCELERATORS
from facts.naming import (
    PUBLISHED_PREFIX,
    bucket_name_problem,
    contributor_binding_name,
    gmp_service_account_id,
    node_service_account_id,
    team_bucket_name,
    team_service_account_id,
)
from stackmodel import quantity
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.kueue import KUEUE
from stackmodel.components.monitoring import MONITORING, MetricsBackend
from stackmodel.components.pipelines import PIPELINES
from stackmodel.components.serving import SERVING
from stackmodel.rules.auth import sign_in_problem
from stackmodel.rules.rule import (
    AUTH,
    CLUSTER,
    KIND,
    NAP,
    POOLS,
    PROJECT,
    REGISTRY,
    TEAMS,
    Found,
    gke_cluster,
    gpu_pools_of,
    stack_rule,
    team_path,
    team_rule,
)
from stackmodel.schema import DNS_SUBDOMAIN_MAX, GroupDefinition, GroupSource
from stackmodel.stack import PlatformConfig


@stack_rule("teams-need-kubeflow", "Teams are Kubeflow profiles, so they need the kubeflow component.", reads=(TEAMS, KUBEFLOW.path))
def _teams_need_kubeflow(config: PlatformConfig) -> Found:
    if config.teams and not config.components[KUBEFLOW].enabled:
        yield "mlplatform:teams", "teams are Kubeflow profiles; enable kubeflow or remove the teams"


@stack_rule("teams-need-kueue", "Teams get Kueue queues, so they need the kueue component.", reads=(TEAMS, KUEUE.path))
def _teams_need_kueue(config: PlatformConfig) -> Found:
    if config.teams and not config.components[KUEUE].enabled:
        yield (
            f"{KUEUE.path}.enabled",
            "every team gets a Kueue ClusterQueue and a `default` LocalQueue, which need Kueue; "
            "enable kueue or remove the teams",
        )


def _service_account_ids(config: PlatformConfig) -> Iterator[tuple[str, str, Callable[[], str]]]:
    """(config path, whose, id) of every Google service account the stack creates."""
    gke = gke_cluster(config)
    if gke is None:
        return
    yield f"{CLUSTER}.name", "the nodes' account", partial(node_service_account_id, gke.name)
    monitoring = config.components[MONITORING]
    if monitoring.enabled and monitoring.backend is MetricsBackend.GKE_MANAGED:
        yield f"{MONITORING.path}.backend", "the managed-Prometheus query account", partial(gmp_service_account_id, gke.name)
    named = set()
    for i, team in enumerate(config.teams):
        if team.name not in named:  # two teams of one name: team-names-unique says so
            named.add(team.name)
            yield f"{team_path(i)}.name", f"team {team.name}'s account", partial(team_service_account_id, team.name)


@stack_rule("service-account-ids-unique", "Every Google service account the stack creates gets a valid id of its own.", reads=(KIND, f"{CLUSTER}.name", MONITORING.path, TEAMS))
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


@team_rule("team-names-unique", "No two teams share a name.", reads=(TEAMS,))
def _team_names_unique(config: PlatformConfig, i: int) -> Found:
    team = config.teams[i]
    if team.name in {earlier.name for earlier in config.teams[:i]}:
        yield f"{team_path(i)}.name", f"duplicate team {team.name!r}; team names must be unique"


@team_rule("team-gpus-provided", "A team's GPU quota names accelerators a GPU pool or autoprovisioning provides.", reads=(TEAMS, KIND, POOLS, NAP))
def _team_gpus_provided(config: PlatformConfig, i: int) -> Found:
    known = {p.accelerator for p in gpu_pools_of(config)}
    gke = gke_cluster(config)
    if gke and gke.autoprovisioning.enabled:
        known |= {k for k in gke.autoprovisioning.limits if k in ACCELERATORS}
    for acc in config.teams[i].quota.gpus:
        if acc not in known:
            have = ", ".join(sorted(known)) or "none (this stack has no GPU pools)"
            yield (
                f"{team_path(i)}.quota.gpus.{acc}",
                f"no GPU pool or autoprovisioning limit provides {acc}; use one of: {have}",
            )


@team_rule("contributor-binding-names-unique", "No two contributors of a team get one KFAM binding name.", reads=(TEAMS,))
def _contributor_binding_names_unique(config: PlatformConfig, i: int) -> Found:
    """ana.b@x.com and ana-b@x.com with one role get one RoleBinding and
    AuthorizationPolicy name from KFAM: one object, so only one of them has access. Groups
    likewise (`group-<group>-clusterrole-<role>`, kubeflow/dashboard PR #317)."""
    first: dict[str, tuple[int, str]] = {}
    for j, entry in enumerate(config.teams[i].contributors):
        name = contributor_binding_name(entry.who, entry.role.value, entry.key)
        if name not in first:
            first[name] = (j, entry.who)
            continue
        k, other = first[name]
        yield (
            f"{team_path(i)}.contributors[{j}].{entry.key}",
            f"{entry.who} and {other} (contributors[{k}]) get one Kubeflow binding name {name!r} "
            "(KFAM turns every run of characters other than letters and digits into '-'); "
            "keep one of them, or give them different roles",
        )


def _groups(config: PlatformConfig) -> dict[str, tuple[int, GroupDefinition]]:
    return {g.name: (k, g) for k, g in enumerate(config.components[KUBEFLOW].auth.groups)}


@team_rule("contributor-groups-defined", "A team's group contributor is a group the stack defines (auth.groups).", reads=(TEAMS, f"{KUBEFLOW.path}.auth"))
def _contributor_groups_defined(config: PlatformConfig, i: int) -> Found:
    """A group contributor is one the stack says where it comes from: nothing else resolves it."""
    defined = _groups(config)
    for j, entry in enumerate(config.teams[i].contributors):
        if entry.group is None or entry.group in defined:
            continue
        alike = [name for name in defined if name.lower() == entry.group.lower()]
        hint = f"; the stack defines {alike[0]} (group names are compared exactly)" if alike else ""
        yield (
            f"{team_path(i)}.contributors[{j}].group",
            f"group {entry.group} is defined nowhere, so nothing resolves its members: add it to {AUTH}.groups with "
            f"its source (stack: its members listed; provider: the identity provider's groups claim){hint}",
        )


@team_rule("member-binding-names-free", "A group member's binding is not also a person contributor's (one name, one role).", reads=(TEAMS, f"{KUBEFLOW.path}.auth"))
def _member_binding_collisions(config: PlatformConfig, i: int) -> Found:
    """A group's members get a KFAM binding each, `user-<e-mail>-clusterrole-<role>` (the web
    apps and Pipelines review the person only): a person the team also lists with that role
    would have the very same RoleBinding and AuthorizationPolicy, written twice."""
    team, defined = config.teams[i], _groups(config)
    people = {contributor_binding_name(str(p.email), p.role.value): j for j, p in enumerate(team.contributors) if p.email}
    for j, entry in enumerate(team.contributors):
        if entry.group is None or entry.group not in defined:
            continue
        if defined[entry.group][1].source is GroupSource.CLOUD_IDENTITY:
            continue  # read at `pulumi up`, not the stack's to edit: the person's own binding is kept
        for member in defined[entry.group][1].members:
            name = contributor_binding_name(member, entry.role.value)
            if name in people:
                k = people[name]
                yield (
                    f"{team_path(i)}.contributors[{j}].group",
                    f"{member} is a member of group {entry.group} ({entry.role.value}) and listed as a person with that "
                    f"role (contributors[{k}]): both would be the binding {name!r}; remove the person's entry (the group "
                    "grants it), or give the group or the person another role",
                )


@team_rule("member-binding-names-unique", "No two members of a team's groups get one KFAM binding name.", reads=(TEAMS, f"{KUBEFLOW.path}.auth"))
def _member_binding_names_unique(config: PlatformConfig, i: int) -> Found:
    """Two members of the team's groups with one role whose e-mails differ only in what KFAM
    turns into '-' (ana.b@ and ana-b@) would get one binding name: one object, and a duplicate
    resource that stops `pulumi up`. Checked again once cloudIdentity groups are read (program.py)."""
    defined = _groups(config)
    first: dict[str, tuple[str, str]] = {}
    for j, entry in enumerate(config.teams[i].contributors):
        if entry.group is None or entry.group not in defined:
            continue
        for member in defined[entry.group][1].members:
            name = contributor_binding_name(member, entry.role.value)
            other, other_group = first.setdefault(name, (member, entry.group))
            if other != member:
                yield (
                    f"{team_path(i)}.contributors[{j}].group",
                    f"{member} (group {entry.group}) and {other} (group {other_group}) get one Kubeflow binding name "
                    f"{name!r} (KFAM turns every run of characters other than letters and digits into '-'); keep one "
                    "of them in the group, or give the groups different roles",
                )


@team_rule("team-bucket-on-gke", "Team buckets (GCS) only on GKE.", reads=(TEAMS, KIND))
def _team_bucket_on_gke(config: PlatformConfig, i: int) -> Found:
    if config.teams[i].bucket and gke_cluster(config) is None:
        yield f"{team_path(i)}.bucket", "buckets are GCS buckets; only gke stacks have them"


@team_rule("team-pipelines-need-bucket-on-gke", "On GKE a team that runs pipelines has a bucket: its pipeline root.", reads=(TEAMS, KIND, f"{PIPELINES.path}"))
def _team_pipelines_need_bucket_on_gke(config: PlatformConfig, i: int) -> Found:
    """On GKE a team's pipeline root is its bucket (components/team_pipelines.py): runs write
    their artifacts there as the team's Google account, which no other team's can read."""
    team = config.teams[i]
    if gke_cluster(config) and config.components[PIPELINES].enabled and team.bucket is None:
        yield (
            f"{team_path(i)}.bucket",
            f"team {team.name} runs pipelines, whose artifacts go to the team's own bucket on gke; add `bucket: {{}}` "
            f"to the team (or disable {PIPELINES.path})",
        )


def _bucket_of(config: PlatformConfig, i: int) -> tuple[str, str] | None:
    """(config path, name) of team i's bucket; None without a bucket or a known name."""
    team = config.teams[i]
    if team.bucket is None or gke_cluster(config) is None:
        return None
    if team.bucket.name:
        return f"{team_path(i)}.bucket.name", team.bucket.name
    if config.project is None:
        return None  # reported as missing, or it comes from an ESC environment
    return f"{team_path(i)}.bucket", team_bucket_name(config.project, team.name)


@team_rule("team-default-bucket-name-valid", "A team bucket's default name, <project>-<team>, is a valid Cloud Storage name.", reads=(TEAMS, KIND, PROJECT))
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


@team_rule("team-bucket-names-unique", "No two teams get one bucket name (bucket names are global).", reads=(TEAMS, KIND, PROJECT))
def _team_bucket_names_unique(config: PlatformConfig, i: int) -> Found:
    bucket = _bucket_of(config, i)
    if bucket is None:
        return
    for j in range(i):
        earlier = _bucket_of(config, j)
        if earlier and earlier[1] == bucket[1] and config.teams[j].name != config.teams[i].name:
            yield (
                bucket[0],
                f"bucket {bucket[1]!r} is also team {config.teams[j].name}'s ({team_path(j)}); bucket names are "
                "global, so each team needs its own: change bucket.name",
            )
            return


@team_rule("contributor-binding-names-fit", "KFAM's binding name of every contributor is a valid Kubernetes name (at most 253 characters).", reads=(TEAMS,))
def _contributor_binding_names_fit(config: PlatformConfig, i: int) -> Found:
    """KFAM's binding name is also an AuthorizationPolicy's, a custom resource, so a DNS
    subdomain of at most 253 characters (apiextensions-apiserver customresource validator:
    NameIsDNSSubdomain). A group's name is `group-<group>-clusterrole-<role>`."""
    for j, entry in enumerate(config.teams[i].contributors):
        name = contributor_binding_name(entry.who, entry.role.value, entry.key)
        if len(name) > DNS_SUBDOMAIN_MAX:
            yield (
                f"{team_path(i)}.contributors[{j}].{entry.key}",
                f"KFAM names this contributor's RoleBinding and AuthorizationPolicy {'user-<e-mail>' if entry.email else 'group-<group>'}"
                f"-clusterrole-<role>: {len(name)} characters, and Kubernetes allows {DNS_SUBDOMAIN_MAX}; use a shorter "
                f"{'address' if entry.email else 'group name'}",
            )


@team_rule("team-people-can-sign-in", "A team's owner and contributors are people the stack lets sign in.", reads=(TEAMS, KUBEFLOW.path))
def _team_people_can_sign_in(config: PlatformConfig, i: int) -> Found:
    if not config.components[KUBEFLOW].enabled:
        return
    team = config.teams[i]
    found = sign_in_problem(config, team.owner)
    if found:
        yield f"{team_path(i)}.owner", found
    for j, person in enumerate(team.contributors):
        found = sign_in_problem(config, person.email) if person.email else None
        if found:
            yield f"{team_path(i)}.contributors[{j}].email", found


@team_rule("team-container-defaults-fit-quota", "A team's default container requests fit in its quota.", reads=(TEAMS,))
def _team_container_defaults_fit_quota(config: PlatformConfig, i: int) -> Found:
    team = config.teams[i]
    defaults, quota = team.container_defaults, team.quota
    for key, request, hard in (("cpu", defaults.cpu, quota.cpu), ("memory", defaults.memory, quota.memory)):
        if quantity.parse(request) > quantity.parse(hard):
            yield (
                f"{team_path(i)}.containerDefaults.{key}",
                f"the default {key} request {request} is above the team's {key} quota {hard}, so no container "
                f"without requests could start; lower it or raise quota.{key}",
            )


@team_rule("team-push-images-needs-registry", "A team pushes images only to a gke stack's Artifact Registry repository.", reads=(TEAMS, KIND, REGISTRY))
def _team_push_images_needs_registry(config: PlatformConfig, i: int) -> Found:
    gke = gke_cluster(config)
    if config.teams[i].push_images and not (gke and gke.image_registry.enabled):
        yield (
            f"{team_path(i)}.pushImages",
            "pushImages grants push to the stack's Artifact Registry repository, which only a gke stack with "
            "cluster.imageRegistry enabled has; remove it or enable the registry",
        )


@team_rule(
    "llm-team-not-publishers",
    "With LLM serving, no team is named like the prefix of every team's published models.",
    reads=(TEAMS, f"{SERVING.path}.llm"),
)
def _llm_team_not_publishers(config: PlatformConfig, i: int) -> Found:
    """A team's LLM routes may match paths under /<team>/ (components/serving_llm.py, the route
    policy): a team named `publishers` would own /publishers/, where every team's models are
    published (/publishers/<team>/models/<model>/..., facts/naming.py PUBLISHED_PREFIX), and could
    route another team's."""
    if config.enabled(SERVING) and config.components[SERVING].llm and config.teams[i].name == PUBLISHED_PREFIX:
        yield (
            f"{team_path(i)}.name",
            f"{PUBLISHED_PREFIX!r} is the path prefix of every team's published LLMs (/{PUBLISHED_PREFIX}/<team>/models/...): "
            "a team of that name could route another team's models; rename the team",
        )


@team_rule("team-weight-needs-fair-sharing", "A team's fair-share weight is set only where Kueue's fair sharing is on.", reads=(TEAMS, KUEUE.path))
def _team_weight_needs_fair_sharing(config: PlatformConfig, i: int) -> Found:
    """Kueue reads a ClusterQueue's fairSharing.weight only with fair sharing on in its configuration
    (kueue v0.19.2 apis/kueue/v1beta2/clusterqueue_types.go `fairSharing`: "only relevant if
    FairSharing is enabled in the Kueue configuration"): a weight without it is silently nothing."""
    team = config.teams[i]
    if team.weight != 1 and not config.components[KUEUE].fair_sharing:
        yield (
            f"{team_path(i)}.weight",
            f"weight {team.weight} shares the cohort's idle quota by weight, which only Kueue's fair sharing does; "
            f"set {KUEUE.path}.fairSharing true or remove the weight",
        )


@team_rule("team-weight-needs-cohort", "A team's fair-share weight is set only where the team shares a cohort.", reads=(TEAMS,))
def _team_weight_needs_cohort(config: PlatformConfig, i: int) -> Found:
    """A weight orders teams competing for a cohort's idle quota (kueue v0.19.2 pkg/cache/scheduler/
    fair_sharing.go dominantResourceShare: 0 for a queue without a parent cohort)."""
    team = config.teams[i]
    if team.weight != 1 and not team.cohort:
        yield (
            f"{team_path(i)}.weight",
            f"weight {team.weight} weighs the team against the other teams of its cohort, and it has no cohort; "
            "set cohort or remove the weight",
        )
