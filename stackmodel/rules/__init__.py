"""Rules across parts of a stack file, each beside its subject: the schema types each part on
its own, these judge how the parts fit together (pools vs autoprovisioning, components vs the
cluster kind, teams vs pools). One module per area, each rule a function declared with its ID,
its description and the config paths it reads (rule.py `stack_rule`, `team_rule`,
`warning_rule`):

- components.py: what each component needs, where it runs, what its settings reach;
- pools.py: the GPU pools beside autoprovisioning, drivers, DRA, Kueue and the fabric;
- cluster.py: the cluster and its landing zone (prod's protections, places, versions, network);
- auth.py: who may sign in, the groups and where their members come from;
- teams.py, team_ray.py: each team, and a team's Ray cluster;
- warning_rules.py: what may be meant but usually is not (exit 0).

Here they are gathered into the tables the loader runs (RULES, WARNINGS) and run:
`cross_checks` runs every rule once every part has its type, so a stack file's problems are
reported together.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any

from stackmodel.rules import auth, cluster, components, pools, team_ray, teams, warning_rules
from stackmodel.rules.auth import with_read_members
from stackmodel.rules.rule import AUTH, CLUSTER, DECLARED, Rule, TeamRule, overlaps
from stackmodel.stack import PlatformConfig

AREAS: tuple[ModuleType, ...] = (components, pools, cluster, auth, teams, team_ray, warning_rules)
"""The modules that hold the rules, in the order a rule none of REPORTED lists is reported in."""
REPORTED: tuple[str, ...] = (
    "component-needs", "pool-names-free", "autoprovisioning-covers-gpus", "autoprovisioning-covers-pools",
    "gpu-pools-scale-to-zero", "dra-pools-as-gke-allows", "gpu-drivers-installed", "gpu-drivers-fit-the-gke-version",
    "dra-driver-has-dra-pools", "prod-cluster-private", "prod-deletion-protected", "regions-known",
    "provider-defaults-in-cluster-region", "machine-types-known", "oidc-issuer-as-published",
    "identities-spelled-alike", "prod-on-gke", "queued-pools-need-kueue", "ray-addon-on-gke", "dcgm-on-gke",
    "managed-dcgm-needs-managed-prometheus", "managed-backend-needs-managed-prometheus",
    "gpu-metrics-reach-prometheus", "idle-reclaim-can-judge", "idle-reclaim-period-within-retention",
    "idle-reclaim-reads-mig-slices", "gateway-exposed-on-gke", "teams-need-kubeflow", "teams-need-kueue",
    "service-account-ids-unique", "team-names-unique", "team-gpus-provided", "contributor-binding-names-unique",
    "contributor-groups-defined", "member-binding-names-unique", "member-binding-names-free",
    "stack-groups-not-also-googles", "groups-can-be-supplied", "team-bucket-on-gke",
    "team-pipelines-need-bucket-on-gke", "team-default-bucket-name-valid", "team-bucket-names-unique",
    "contributor-binding-names-fit", "team-ray-fits-a-node", "team-ray-head-within-quota",
    "team-ray-worker-within-quota", "team-ray-pool-exists", "team-ray-pool-advertises-gpus",
    "team-ray-pool-not-topology-aware", "team-ray-needs-kuberay", "gpu-fabric-installed",
    "gpu-fabric-has-fabric-pools", "grafana-signs-in-through-kubeflow", "dex-has-static-users",
    "dex-password-envs-unique", "grafana-admins-can-sign-in", "team-people-can-sign-in",
    "team-container-defaults-fit-quota", "notebook-images-have-a-registry", "team-push-images-needs-registry",
    "secrets-key-in-cluster-region", "host-project-is-another-project", "chart-values-reach-a-chart", "zones-known",
    "gke-version-offered", "pipelines-database-of-the-target", "volumes-fit-the-storage-class",
    "network-holds-the-pools", "people-not-groups", "team-ray-name-free", "notebook-registry-reachable",
    "cohort-shared", "topology-labels-unused", "queued-pools-can-get-ready", "ray-gpu-workers-scale-to-zero",
    "gpu-metrics-of-dra-pools-carry-no-team",
)
"""The order the rules' problems are reported in: the order of the one table the rules were
before they moved beside their subjects (users, scripts and tests read the problems so). A new
rule is reported after these, in the order of AREAS and of its module."""


def _declared() -> tuple[list[Rule | TeamRule], list[Rule]]:
    """Every rule declared in the AREAS' modules, and every warning, in REPORTED's order."""
    found: list[tuple[Rule | TeamRule, bool]] = []
    for module in AREAS:
        found += [getattr(value, DECLARED) for value in vars(module).values() if callable(value) and hasattr(value, DECLARED)]
    place = {name: i for i, name in enumerate(REPORTED)}
    stale = sorted(set(place) - {rule.name for rule, _ in found})
    if stale:
        raise ValueError(f"stackmodel/rules/__init__.py REPORTED names rules no module declares: {', '.join(stale)}")
    found.sort(key=lambda declared: place.get(declared[0].name, len(place)))
    rules = [rule for rule, warning in found if not warning]
    warns = [rule for rule, warning in found if warning and isinstance(rule, Rule)]
    return rules, warns


_RULES, _WARNINGS = _declared()
RULES: tuple[Rule | TeamRule, ...] = tuple(_RULES)
"""Every rule of the loader (exit 2: config path and fix)."""
WARNINGS: tuple[Rule, ...] = tuple(_WARNINGS)
"""Every warning (exit 0, printed with the path)."""
__all__ = ["AUTH", "RULES", "WARNINGS", "Rule", "TeamRule", "cross_checks", "missing_keys", "overlaps", "warnings", "with_read_members"]


def warnings(config: PlatformConfig) -> list[tuple[str, str]]:
    """What may be meant but usually is not: (path, message) of every warning rule, for a stack that validated."""
    return [found for rule in WARNINGS for found in rule.check(config)]


def cross_checks(config: PlatformConfig, unparsed: Sequence[str] = ()) -> list[tuple[str, str]]:
    """Every problem of every rule, as (path, message): the stack's rules in table order,
    then team by team, each team's rules in table order. `unparsed`: config paths the schema
    refused (and `config` has at their defaults): a rule that reads any of them is skipped."""
    rules = [rule for rule in RULES if not any(overlaps(read, path) for read in rule.reads for path in unparsed)]
    problems = [found for rule in rules if isinstance(rule, Rule) for found in rule.check(config)]
    for i in range(len(config.teams)):
        problems += [found for rule in rules if isinstance(rule, TeamRule) for found in rule.check(config, i)]
    return problems


def missing_keys(raw: dict[str, Any]) -> list[tuple[str, str]]:
    """Keys one part of the stack makes required elsewhere; checked on the raw file, before
    the schema, so they are reported together with every type error."""
    cluster = raw.get(CLUSTER)
    if isinstance(cluster, dict) and cluster.get("kind") == "gke" and not raw.get("gcp:project"):
        return [("gcp:project", "a gke cluster needs the GCP project; set gcp:project")]
    return []
