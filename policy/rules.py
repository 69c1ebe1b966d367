"""The platform's guardrails as pure functions over a neutral resource list.

One rule code path, two callers: `policy/__main__.py` wraps each rule as a Pulumi
StackValidationPolicy (`pulumi preview --policy-pack policy`), and `policy/offline.py`
feeds the same rules the resources of an offline plan (`python -m stacks policy`, tests).
Both adapters hand over property names as the engine sees them (camelCase), secrets
replaced by SECRET leaves and values unknown during preview by UNKNOWN.

The environment (prod or not) is read from the resources: the GKE cluster carries the
GCP label `mlplatform-environment: <env>`; a stack without a GKE cluster (kind) is never prod.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from facts.labels import KUEUE_DEFAULT_LOCAL_QUEUE, PROFILE_NAMESPACE_LABEL
from facts.node_labels import GPU_TAINT, POOL_LABEL
from facts.resource_types import CLOUD_SQL_INSTANCE, CONFIG_FILE, CONFIG_GROUP, HELM_CHART, HELM_RELEASE, KUSTOMIZE
from facts.resource_types import GKE_CLUSTER as CLUSTER
from facts.resource_types import GKE_NODE_POOL as NODE_POOL

SECRET = "[secret]"
"""A leaf inside a Pulumi secret (the offline plan's mask; the live adapter writes the same)."""
UNKNOWN = "[unknown]"
"""A value not known until the update runs (preview); rules never fail on it."""

# Contracts with the program; tests/test_policy.py keeps them equal to infra/gke.py and
# components/profiles/namespace.py (imported there, not here, so the pack needs no cloud SDKs).
ENVIRONMENT_LABEL = "mlplatform-environment"
PROD = "prod"
LOCAL_QUEUE = KUEUE_DEFAULT_LOCAL_QUEUE
QUOTA_KEYS = ("cpu", "memory")
GPU_QUOTA_KEY = "requests.nvidia.com/gpu"
"""Required of a team namespace without Kueue's `default` LocalQueue: with it, the team's
ClusterQueue admits every GPU pod and the ResourceQuota has no GPU line (components/profiles/
namespace.py profile)."""

# Git refs and URL segments that move: not pins.
MOVING_REFS = frozenset({"main", "master", "head", "latest", "develop", "trunk"})
VERSION_SEGMENT = re.compile(r"(^|[/@:=_-])v?[0-9]+\.[0-9]+([.][0-9A-Za-z-]+)*($|[/._-])|[0-9a-f]{40}")
SECRET_NAME = re.compile(r"kubeconfig|password|passwd|secret|token|credential|private.?key", re.IGNORECASE)
SECRET_CONTENT = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"client-key-data:\s*\S"),
    re.compile(r"\$2[aby]\$[0-9]{2}\$[./A-Za-z0-9]{53}"),  # bcrypt hash
)


@dataclass(frozen=True)
class Resource:
    """One resource as a rule sees it, whichever engine produced it."""

    type: str
    name: str
    urn: str
    props: Mapping[str, Any]
    protect: bool = False


@dataclass(frozen=True)
class StackView:
    """Every resource of a stack, and its outputs."""

    resources: Sequence[Resource]
    outputs: Mapping[str, Any] = field(default_factory=dict)
    live: bool = False
    """Props are what Pulumi hands stack policies: each resource's outputs. Remote
    components (Helm v4 charts, kustomize and yaml v2) then show no inputs at all."""

    def of_type(self, *types: str) -> list[Resource]:
        return [r for r in self.resources if r.type in types]

    def of_kind(self, kind: str) -> list[Resource]:
        """Kubernetes objects of a kind, typed resources and CustomResources alike."""
        return [r for r in self.resources if r.type.startswith("kubernetes:") and r.type.rsplit(":", 1)[-1] == kind]


@dataclass(frozen=True)
class Violation:
    rule: str
    resource: str
    """The resource's URN, or `stack` for the stack as a whole."""
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.resource}: {self.message}"


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    check: Callable[[StackView], Iterator[tuple[str, str]]]
    """Yields (resource URN or `stack`, message) per problem."""

    def __call__(self, stack: StackView) -> list[Violation]:
        return [Violation(self.name, where, message) for where, message in self.check(stack)]


# --- helpers --------------------------------------------------------------------------


def get(value: Any, path: str) -> Any:
    """`value` at a dotted path (`nodeConfig.labels`), None where any step is missing."""
    for key in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def unknown(value: Any) -> bool:
    return value == UNKNOWN


def environment(stack: StackView) -> str | None:
    """The stack's environment from its GKE cluster label; None when a cluster has none."""
    clusters = stack.of_type(CLUSTER)
    if not clusters:
        return "kind"
    labels = [get(c.props, "resourceLabels") or {} for c in clusters]
    values = {labels_.get(ENVIRONMENT_LABEL) for labels_ in labels}
    return PROD if PROD in values else next(iter(values)) if len(values) == 1 else None


def gpu_pools(stack: StackView) -> Iterator[tuple[Resource, list[Mapping[str, Any]]]]:
    """Node pools with GPUs, and their guest accelerators."""
    for pool in stack.of_type(NODE_POOL):
        accelerators = get(pool.props, "nodeConfig.guestAccelerators") or []
        if accelerators:
            yield pool, accelerators


def pool_name(pool: Resource) -> str:
    name = pool.props.get("name")
    return name if isinstance(name, str) else pool.name


def team_namespaces(stack: StackView) -> dict[str, str]:
    """Team namespace -> URN to blame: every Profile, and every namespace labelled as a profile's."""
    found: dict[str, str] = {}
    key, value = PROFILE_NAMESPACE_LABEL
    for ns in stack.of_kind("Namespace"):
        if (get(ns.props, "metadata.labels") or {}).get(key) == value:
            found[str(get(ns.props, "metadata.name"))] = ns.urn
    for profile in stack.of_kind("Profile"):
        found[str(get(profile.props, "metadata.name"))] = profile.urn
    return found


# --- rules ----------------------------------------------------------------------------


def _gpu_pool_nodes(stack: StackView) -> Iterator[tuple[str, str]]:
    taint = {"key": GPU_TAINT.key, "value": GPU_TAINT.value, "effect": GPU_TAINT.gke_effect}
    flavors = {str(get(f.props, "metadata.name")): f for f in stack.of_kind("ResourceFlavor")}
    for pool, _ in gpu_pools(stack):
        name = pool_name(pool)
        labels = get(pool.props, "nodeConfig.labels") or {}
        if not unknown(labels) and labels.get(POOL_LABEL) != name:
            yield pool.urn, f"pool {name}: nodes need label {POOL_LABEL}={name} (Kueue flavors and runtimes select it)"
        taints = get(pool.props, "nodeConfig.taints") or []
        if not unknown(taints) and taint not in taints:
            yield pool.urn, (
                f"pool {name}: nodes need taint {GPU_TAINT.key}={GPU_TAINT.value}:{GPU_TAINT.effect} "
                "(runtimes tolerate exactly it, Kueue flavors list it)"
            )
        if flavors:  # Kueue is installed: each GPU pool needs its flavor, matching the nodes
            flavor = flavors.get(name)
            if flavor is None:
                yield pool.urn, f"pool {name}: Kueue has no ResourceFlavor {name!r}; its GPUs cannot be admitted"
                continue
            selected = get(flavor.props, "spec.nodeLabels") or {}
            if not unknown(selected) and selected.get(POOL_LABEL) != name:
                yield flavor.urn, f"flavor {name}: nodeLabels must select {POOL_LABEL}={name}"
            # Kueue keeps a pod set off a flavor only by a taint neither the pod nor the flavor
            # tolerates: a flavor tolerating the GPU taint takes CPU-only jobs onto GPU nodes,
            # except a topology-aware one (components/kueue.py flavor_tolerations).
            gpu_taint = {"key": GPU_TAINT.key, "value": GPU_TAINT.value, "effect": GPU_TAINT.effect}
            flavor_taints = get(flavor.props, "spec.nodeTaints") or []
            if not unknown(flavor_taints) and gpu_taint not in flavor_taints:
                yield flavor.urn, f"flavor {name}: nodeTaints must list {GPU_TAINT.key}={GPU_TAINT.value}:{GPU_TAINT.effect}, or Kueue gives it CPU-only jobs"
            tolerated = get(flavor.props, "spec.tolerations") or []
            topology = get(flavor.props, "spec.topologyName")
            if not unknown(tolerated) and not unknown(topology) and not topology and GPU_TAINT.toleration() in tolerated:
                yield flavor.urn, f"flavor {name}: must not tolerate {GPU_TAINT.key}={GPU_TAINT.value}:{GPU_TAINT.effect}, or Kueue gives it CPU-only jobs"


def _environment_known(stack: StackView) -> Iterator[tuple[str, str]]:
    for cluster in stack.of_type(CLUSTER):
        labels = get(cluster.props, "resourceLabels") or {}
        if not unknown(labels) and not labels.get(ENVIRONMENT_LABEL):
            yield cluster.urn, f"cluster has no {ENVIRONMENT_LABEL} label; the prod rules cannot tell if they apply"


def _prod_cluster_hardened(stack: StackView) -> Iterator[tuple[str, str]]:
    """What the program decides for a prod cluster beyond the stack file (which the loader holds
    to private nodes, authorized networks and deletion protection: stackmodel/rules/)."""
    for cluster in stack.of_type(CLUSTER):
        if (get(cluster.props, "resourceLabels") or {}).get(ENVIRONMENT_LABEL) != PROD:
            continue
        shielded = cluster.props.get("enableShieldedNodes")
        if shielded is not True and not unknown(shielded):
            yield cluster.urn, "prod cluster needs shielded nodes"


def _databases_kept(stack: StackView) -> Iterator[tuple[str, str]]:
    """Cloud SQL (the pipelines database): private, backed up with binary logs (point-in-time
    recovery), as the program always makes it. Its deletion protection follows the stack's
    (the loader keeps it on in prod: stackmodel/rules/ prod-deletion-protected)."""
    for instance in stack.of_type(CLOUD_SQL_INSTANCE):
        settings = instance.props.get("settings") or {}
        checks: list[tuple[Any, Any, str]] = [
            (get(settings, "ipConfiguration.ipv4Enabled"), False, "no public IP (ipConfiguration.ipv4Enabled: false)"),
            (get(settings, "backupConfiguration.enabled"), True, "automated backups"),
            (get(settings, "backupConfiguration.binaryLogEnabled"), True, "binary logs for point-in-time recovery"),
        ]
        for value, wanted, what in checks:
            if value is not wanted and not unknown(value):
                yield instance.urn, f"database instance {instance.props.get('name')} needs {what}"


def _team_quota(stack: StackView) -> Iterator[tuple[str, str]]:
    profiles = {str(get(p.props, "metadata.name")): p for p in stack.of_kind("Profile")}
    queued = {str(get(q.props, "metadata.namespace")) for q in stack.of_kind("LocalQueue") if get(q.props, "metadata.name") == LOCAL_QUEUE}
    for namespace, urn in sorted(team_namespaces(stack).items()):
        profile = profiles.get(namespace)
        if profile is None:
            yield urn, f"team namespace {namespace} has no Profile, so no ResourceQuota"
            continue
        hard = get(profile.props, "spec.resourceQuotaSpec.hard") or {}
        if unknown(hard):
            continue
        missing = [k for k in (*QUOTA_KEYS, *(() if namespace in queued else (GPU_QUOTA_KEY,))) if k not in hard]
        if missing:
            yield profile.urn, f"team {namespace}: resourceQuotaSpec.hard lacks {', '.join(missing)}"


def _team_default_queue(stack: StackView) -> Iterator[tuple[str, str]]:
    queues = {
        str(get(q.props, "metadata.namespace"))
        for q in stack.of_kind("LocalQueue")
        if get(q.props, "metadata.name") == LOCAL_QUEUE and get(q.props, "spec.clusterQueue")
    }
    for namespace, urn in sorted(team_namespaces(stack).items()):
        if namespace not in queues:
            yield urn, f"team {namespace} has no LocalQueue {LOCAL_QUEUE!r}; its jobs would bypass Kueue"


def _team_no_allow_all(stack: StackView) -> Iterator[tuple[str, str]]:
    teams = team_namespaces(stack)
    for policy in stack.of_kind("AuthorizationPolicy"):
        namespace = get(policy.props, "metadata.namespace")
        if namespace not in teams:
            continue
        spec = policy.props.get("spec") or {}
        if spec.get("action", "ALLOW") != "ALLOW":
            continue
        for i, rule in enumerate(spec.get("rules") or []):
            if isinstance(rule, Mapping) and not any(rule.get(k) for k in ("from", "to", "when")):
                name = get(policy.props, "metadata.name")
                yield policy.urn, f"AuthorizationPolicy {namespace}/{name}: rules[{i}] has no from/to/when and allows everyone"


def _remote(location: str) -> bool:
    return "://" in location or location.startswith(("github.com/", "git@", "gitlab.com/"))


def _upstream_pinned(stack: StackView) -> Iterator[tuple[str, str]]:
    def hidden(resource: Resource, key: str) -> bool:
        """A component's inputs are not among its outputs: nothing to check live (CI checks offline)."""
        return stack.live and resource.type != HELM_RELEASE and key not in resource.props

    for chart in stack.of_type(HELM_CHART, HELM_RELEASE):
        if hidden(chart, "version"):
            continue
        version = chart.props.get("version")
        if not unknown(version) and (not version or str(version).lower() in MOVING_REFS):
            yield chart.urn, f"Helm chart {chart.props.get('chart')!r} has no pinned version; set version"
    for tree in stack.of_type(KUSTOMIZE):
        if hidden(tree, "directory"):
            continue
        directory = str(tree.props.get("directory") or "")
        if unknown(directory) or not _remote(directory):
            continue
        ref = re.search(r"[?&]ref=([^&]*)", directory)
        if ref is None or not ref.group(1) or ref.group(1).lower() in MOVING_REFS:
            yield tree.urn, f"kustomize directory {directory!r} needs ?ref=<tag or commit>"
    for manifest in stack.of_type(CONFIG_FILE, CONFIG_GROUP):
        if hidden(manifest, "file") and hidden(manifest, "files"):
            continue
        files = manifest.props.get("files") or [manifest.props.get("file")]
        for url in [f for f in files if isinstance(f, str) and _remote(f)]:
            segments = {s.lower() for s in re.split(r"[/?#]", url)}
            if segments & MOVING_REFS or not VERSION_SEGMENT.search(url):
                yield manifest.urn, f"manifest URL {url!r} is not versioned; use a release tag or commit URL"


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _no_plain_secret_outputs(stack: StackView) -> Iterator[tuple[str, str]]:
    for name, value in sorted(stack.outputs.items()):
        plain = [leaf for leaf in _leaves(value) if leaf not in (SECRET, UNKNOWN)]
        if SECRET_NAME.search(name) and any(leaf not in (None, "") for leaf in plain):
            yield "stack", f"output {name!r} names a secret but is exported in plain text; wrap it in pulumi.Output.secret"
        elif any(isinstance(leaf, str) and any(p.search(leaf) for p in SECRET_CONTENT) for leaf in plain):
            yield "stack", f"output {name!r} carries credentials in plain text; wrap it in pulumi.Output.secret"


RULES: tuple[Rule, ...] = (
    Rule("gpu-pool-nodes", "GPU pools carry the label and taint runtimes and Kueue expect, and each has its Kueue flavor.", _gpu_pool_nodes),
    Rule("environment-known", f"Every GKE cluster says its environment (label {ENVIRONMENT_LABEL}).", _environment_known),
    Rule("prod-cluster-hardened", "Prod clusters run shielded nodes.", _prod_cluster_hardened),
    Rule("databases-kept", "Cloud SQL instances: private, backed up with binary logs.", _databases_kept),
    Rule("team-quota", "Every team namespace has a ResourceQuota (Profile resourceQuotaSpec.hard: cpu, memory; GPUs where no Kueue queue admits them).", _team_quota),
    Rule("team-default-queue", f"Every team namespace has a Kueue LocalQueue named {LOCAL_QUEUE!r}.", _team_default_queue),
    Rule("team-no-allow-all", "No AuthorizationPolicy in a team namespace allows everyone.", _team_no_allow_all),
    Rule("upstream-pinned", "Helm charts, kustomize trees and manifest URLs are pinned.", _upstream_pinned),
    Rule("no-plain-secret-outputs", "No secret reaches a stack output in plain text.", _no_plain_secret_outputs),
)


def check(stack: StackView, rules: Sequence[Rule] = RULES) -> list[Violation]:
    """Every violation of every rule, in rule order."""
    return [v for rule in rules for v in rule(stack)]
