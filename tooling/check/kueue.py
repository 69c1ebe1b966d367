"""Kueue: the objects it manages obey its rules, each team's quota admits what its queue may admit,
every workload the platform offers is admissible."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import yaml

from components import kueue_owners
from components.kueue import CONFIG_MAP as KUEUE_CONFIG_MAP
from components.kueue import CONFIG_MAP_KEY as KUEUE_CONFIG_KEY
from components.kueue import NAMESPACE as KUEUE_NAMESPACE
from components.kueue_pods import POD_FRAMEWORK, POD_WEBHOOKS
from components.pipelines import EXECUTOR_KEY, WORKFLOW_CONTROLLER_CONFIG
from facts.labels import KUEUE_DEFAULT_LOCAL_QUEUE as LOCAL_QUEUE
from facts.labels import KUEUE_ELASTIC_JOB_ANNOTATION, KUEUE_QUEUE_LABEL, NAMESPACE_NAME_LABEL
from facts.node_labels import GPU_RESOURCE
from facts.pod_overhead import pipeline_step_pods
from facts.pod_resources import as_admitted, pod_requests
from stackmodel import quantity
from tooling import admission
from tooling.check.platform import Platform, Violation, check_rule, label, selects

OWNER_GUARD_CONTROLLERS = ("jobset/jobset", "kuberay/kuberay-operator", "trainer/kubeflow-trainer", "lws/lws")
"""The installs whose controllers make objects owned by jobs Kueue queues (components/kueue_owners.py)."""
GUARDED_CONTROLLERS = {
    kueue_owners.OWNED_GPU_PODS: (
        OWNER_GUARD_CONTROLLERS,
        "does not let make pods and workloads owned by jobs Kueue queues (components/kueue_owners.py): its jobs' pods would be refused",
    ),
    kueue_owners.ADMISSION_GATE: (
        ("kueue/kueue",),
        "does not let lift Kueue's scheduling gate (components/kueue_owners.py): no pod Kueue queues would ever start",
    ),
}
"""Each guard and the installs whose controllers it lets through by their service accounts' names."""


def owner_guard_controllers(platform: Platform) -> Iterator[Violation]:
    """The owner guard lets the JobSet, KubeRay and Trainer controllers make what it refuses to
    others, and the gate guard lets Kueue's controller lift its gate, by their service accounts'
    names: a controller running as another account (an overlay renamed it) would be refused."""
    for name, (sources, refused) in GUARDED_CONTROLLERS.items():
        guard = next((o for o in platform.of_kind("ValidatingAdmissionPolicy") if o.key[3] == name), None)
        if guard is None:
            continue
        allowed = " ".join(str(v.get("expression", "")) for v in (guard.obj.get("spec") or {}).get("validations") or [])
        for deployment in platform.of_kind("Deployment"):
            if deployment.source not in sources:
                continue
            pod = ((deployment.obj.get("spec") or {}).get("template") or {}).get("spec") or {}
            account = f"system:serviceaccount:{deployment.key[2]}:{pod.get('serviceAccountName') or 'default'}"
            if f"'{account}'" not in allowed:
                yield Violation(
                    "kueue",
                    label(deployment),
                    deployment.source,
                    f"runs as {account}, which ValidatingAdmissionPolicy {name} {refused}; keep the chart's service account name",
                )


def resource_group_problems(groups: list[dict[str, Any]]) -> Iterator[str]:
    """What Kueue v0.19.2's ClusterQueue webhook refuses of the resource groups (pkg/webhooks/
    clusterqueue_webhook.go `validateResourceGroups`: a resource or a flavor in two groups is a
    duplicate; `validateFlavorQuotas`: each flavor names the group's covered resources, in
    order: "must match the name in coveredResources"); the CRD's own rule (a flavor lists as
    many resources as the group covers) the API server evaluates."""
    resources: set[str] = set()
    named: set[str] = set()
    for i, group in enumerate(groups):
        covered = list(group.get("coveredResources") or [])
        for name in covered:
            if name in resources:
                yield f"resourceGroups[{i}]: resource {name} is covered by another group too (Kueue refuses a duplicate)"
            resources.add(name)
        for flavor in group.get("flavors") or []:
            if flavor.get("name") in named:
                yield f"resourceGroups[{i}]: flavor {flavor.get('name')} is in another group too (Kueue refuses a duplicate)"
            named.add(flavor.get("name"))
            listed = [r.get("name") for r in flavor.get("resources") or []]
            if listed != covered:
                yield f"resourceGroups[{i}]: flavor {flavor.get('name')} lists {listed}, not the group's coveredResources {covered} in order"


@check_rule("kueue", "objects Kueue manages obey its rules")
def kueue_rules(platform: Platform) -> Iterator[Violation]:
    """Objects Kueue manages obey Kueue v0.19.2's rules: every queue and flavor named exists,
    and a managed RayCluster does not autoscale (its webhook rejects that unless it is an
    elastic job)."""
    flavors = {o.key[3] for o in platform.of_kind("ResourceFlavor")}
    cluster_queues = {o.key[3] for o in platform.of_kind("ClusterQueue")}
    checks = {o.key[3] for o in platform.of_kind("AdmissionCheck")}
    local_queues: dict[str, set[str]] = {}
    for queue in platform.of_kind("LocalQueue"):
        local_queues.setdefault(queue.key[2], set()).add(queue.key[3])
        target = (queue.obj.get("spec") or {}).get("clusterQueue")
        if target not in cluster_queues:
            yield Violation("kueue", label(queue), queue.source, f"ClusterQueue {target} does not exist")
    for queue in platform.of_kind("ClusterQueue"):
        spec = queue.obj.get("spec") or {}
        for group in spec.get("resourceGroups") or []:
            for flavor in group.get("flavors") or []:
                if flavor.get("name") not in flavors:
                    yield Violation("kueue", label(queue), queue.source, f"ResourceFlavor {flavor.get('name')} does not exist")
        for problem in resource_group_problems(spec.get("resourceGroups") or []):
            yield Violation("kueue", label(queue), queue.source, problem)
        strategy = (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []
        for check in list(spec.get("admissionChecks") or []) + [c.get("name") for c in strategy]:
            if check not in checks:
                yield Violation("kueue", label(queue), queue.source, f"AdmissionCheck {check} does not exist")
    yield from owner_guard_controllers(platform)
    for cluster in platform.of_kind("RayCluster"):
        meta = cluster.obj.get("metadata") or {}
        queue_name = (meta.get("labels") or {}).get(KUEUE_QUEUE_LABEL)
        managed = queue_name is not None or LOCAL_QUEUE in local_queues.get(cluster.key[2], set())
        autoscaling = (cluster.obj.get("spec") or {}).get("enableInTreeAutoscaling")
        elastic = (meta.get("annotations") or {}).get(KUEUE_ELASTIC_JOB_ANNOTATION) == "true"
        if managed and autoscaling and not elastic:
            yield Violation("kueue", label(cluster), cluster.source, "Kueue manages this RayCluster, and a Kueue-managed RayCluster can use autoscaling only as an elastic job")


def _amount(value: Any) -> Decimal:
    return quantity.parse(str(value))


def queue_limits(platform: Platform) -> dict[str, dict[str, Decimal]]:
    """ClusterQueue -> resource -> the most it admits at once, over its flavors: nominal quota
    plus what it may borrow (tooling/admission.py queue_reach, per flavor)."""
    reach = admission.queue_reach({o.key[3]: o.obj.get("spec") or {} for o in platform.of_kind("ClusterQueue")})
    limits: dict[str, dict[str, Decimal]] = {}
    for name, per_flavor in reach.items():
        total: dict[str, Decimal] = {}
        for (_, resource), value in per_flavor.items():
            total[resource] = total.get(resource, Decimal(0)) + value
        limits[name] = total
    return limits


def _requests(resources: Any) -> dict[str, Decimal]:
    return {k: _amount(v) for k, v in ((resources or {}).get("requests") or {}).items() if k in ("cpu", "memory")}


def gpu_pods_queued(platform: Platform, namespace: str) -> bool:
    """Whether Kueue admits every GPU pod of `namespace`, as the render configures it: its
    manager configuration runs the `pod` integration there (frameworks, managedJobsNamespaceSelector)
    and its pod webhook is called there and may not be skipped (failurePolicy Fail); which pods
    it is called for (the GPU matchCondition, components/kueue_pods.py) the tests evaluate."""
    config_map = next((o.obj for o in platform.of_kind("ConfigMap") if o.key[2:] == (KUEUE_NAMESPACE, KUEUE_CONFIG_MAP)), None)
    if config_map is None:
        return False
    config = yaml.safe_load((config_map.get("data") or {}).get(KUEUE_CONFIG_KEY) or "") or {}
    labels = platform.namespaces.get(namespace, {NAMESPACE_NAME_LABEL: namespace})
    managed = config.get("managedJobsNamespaceSelector")
    if POD_FRAMEWORK not in ((config.get("integrations") or {}).get("frameworks") or []) or (managed is not None and not selects(managed, labels)):
        return False
    webhook = next(
        (
            w
            for o in platform.of_kind("MutatingWebhookConfiguration")
            for w in o.obj.get("webhooks") or []
            if w.get("name") == POD_WEBHOOKS[0]
        ),
        None,
    )
    return webhook is not None and webhook.get("failurePolicy") == "Fail" and selects(webhook.get("namespaceSelector") or {}, labels)


def argo_executor(platform: Platform) -> dict[str, Any] | None:
    """The resources Argo gives its executor containers, as the render configures them
    (components/pipelines.py); None without Pipelines, {} when unset."""
    config = next((o.obj for o in platform.of_kind("ConfigMap") if o.key[3] == WORKFLOW_CONTROLLER_CONFIG), None)
    if config is None:
        return None
    return (yaml.safe_load((config.get("data") or {}).get(EXECUTOR_KEY) or "") or {}).get("resources") or {}


def pipeline_step(platform: Platform, namespace: str, executor: dict[str, Any]) -> dict[str, Decimal]:
    """CPU and memory of one CPU-only pipeline step in `namespace` with its driver pod (facts/
    pod_overhead.py pipeline_step_pods), the namespace's LimitRanges applied as the API server does."""
    limit_ranges = [o.obj for o in platform.of_kind("LimitRange") if o.key[2] == namespace]
    total: dict[str, Decimal] = {}
    for spec in pipeline_step_pods(executor).values():
        for name, value in pod_requests(as_admitted(spec, limit_ranges)).items():
            total[name] = total.get(name, Decimal(0)) + value
    return total


@check_rule("quota-admits-queue", "every team namespace's quota admits what its queue may admit and what Kueue does not count")
def quota_admits_queue(platform: Platform) -> Iterator[Violation]:
    """A team namespace's ResourceQuota (its Profile's resourceQuotaSpec) admits everything its
    ClusterQueue may admit at once (nominal quota and what it may borrow) plus what Kueue does
    not count: the mesh sidecar the injector adds to each queued Ray pod, one notebook at
    the form's default with its sidecar (CPU-only notebooks are not queued; GPU ones wait at
    Kueue's gate already created) and, with Pipelines, one CPU-only pipeline step with its driver
    pod and Argo's executor containers at the render's size. A job Kueue admits whose pods the ResourceQuota refuses
    never becomes ready and is requeued for ever.

    GPUs: where Kueue queues the namespace's GPU pods (gpu_pods_queued) the ResourceQuota must
    have no GPU line: pods waiting at Kueue's gate count against it from their creation, and
    would hold room Kueue gives to the next admitted workload. Elsewhere its GPU line must admit
    what the queue may admit."""
    injector = next((o.obj for o in platform.of_kind("ConfigMap") if o.key[2:] == ("istio-system", "istio-sidecar-injector")), None)
    values = json.loads((injector or {}).get("data", {}).get("values") or "{}")
    sidecar = _requests(((values.get("global") or {}).get("proxy") or {}).get("resources"))
    form: dict[str, Any] = next(
        (yaml.safe_load(o.obj["data"][key]) for o in platform.of_kind("ConfigMap") for key in (o.obj.get("data") or {}) if key == "spawner_ui_config.yaml"),
        {},
    )
    defaults = (form or {}).get("spawnerFormDefaults") or {}
    notebook = {name: _amount(str(defaults[name]["value"])) for name in ("cpu", "memory") if name in defaults}
    executor = argo_executor(platform)
    limits = queue_limits(platform)
    for o in platform.of_kind("Profile"):
        team = o.key[3]
        queue = next(
            (q.key[3] for q in platform.of_kind("ClusterQueue") if selects((q.obj.get("spec") or {}).get("namespaceSelector") or {"matchLabels": {"x": "none"}}, platform.namespaces.get(team, {NAMESPACE_NAME_LABEL: team}))),
            None,
        )
        if queue is None:
            continue
        pods_with_sidecars = 1  # the notebook
        for ray in platform.of_kind("RayCluster"):
            if ray.key[2] != team:
                continue
            spec = ray.obj.get("spec") or {}
            templates = [((spec.get("headGroupSpec") or {}).get("template") or {}, 1)]
            templates += [((g.get("template") or {}), int(g.get("maxReplicas", g.get("replicas", 0)))) for g in spec.get("workerGroupSpecs") or []]
            for template, count in templates:
                meta = template.get("metadata") or {}
                if str({**(meta.get("labels") or {}), **(meta.get("annotations") or {})}.get("sidecar.istio.io/inject", "")).lower() != "false":
                    pods_with_sidecars += count
        hard = (((o.obj.get("spec") or {}).get("resourceQuotaSpec") or {}).get("hard")) or {}
        admits = limits[queue]
        gpus_queued = gpu_pods_queued(platform, team)
        for resource in ("cpu", "memory", GPU_RESOURCE):
            have_text = hard.get(resource, hard.get(f"requests.{resource}"))
            if resource == GPU_RESOURCE and gpus_queued:
                if have_text is not None:
                    yield Violation(
                        "quota-admits-queue", label(o), o.source,
                        f"its namespace's ResourceQuota limits {resource} to {have_text}, but Kueue admits every GPU pod there "
                        "and a pod waiting at its gate counts against the ResourceQuota from its creation: waiting pods would "
                        "hold room Kueue gives to the next admitted workload, whose pods are then refused; leave GPUs to the "
                        "queue (components/profiles/namespace.py profile)",
                    )
                continue
            if resource == GPU_RESOURCE and have_text is None and admits.get(resource, Decimal(0)) > 0:
                yield Violation(
                    "quota-admits-queue", label(o), o.source,
                    f"neither its namespace's ResourceQuota nor Kueue limits its GPU pods: Kueue's pod integration does not "
                    f"run there (frameworks, managedJobsNamespaceSelector, webhook mpod.kb.io), so a notebook or pipeline "
                    f"step takes GPUs ClusterQueue {queue} counts as free; queue GPU pods (components/kueue_pods.py) or "
                    f"give the Profile requests.{GPU_RESOURCE}",
                )
                continue
            step = pipeline_step(platform, team, executor) if executor is not None else {}
            unqueued = pods_with_sidecars * sidecar.get(resource, Decimal(0)) + notebook.get(resource, Decimal(0)) + step.get(resource, Decimal(0))
            need = admits.get(resource, Decimal(0)) + unqueued
            have = _amount(have_text) if have_text is not None else None
            if have is not None and have < need:
                yield Violation(
                    "quota-admits-queue", label(o), o.source,
                    f"its namespace's ResourceQuota admits {resource} {have_text}, but ClusterQueue {queue} may admit "
                    f"{quantity.text(admits.get(resource, Decimal(0)))} (nominal and borrowed) and Kueue does not count "
                    f"{quantity.text(unqueued)} (a notebook at the form's default, a CPU pipeline step with its driver, mesh sidecars): a job admitted then has "
                    f"its pods refused; give the Profile at least {quantity.text(need)} (components/profiles/namespace.py profile)",
                )


@check_rule("admissible", "every workload the platform offers each team is admissible by Kueue's own rules")
def admissible(platform: Platform) -> Iterator[Violation]:
    """Every workload the platform offers each team can be admitted by Kueue v0.19.2's own rules,
    built as the controllers build it (tooling/admission.py), and none that asks for no GPUs can be
    given a GPU pool's flavor; a team without quota of what a workload asks for is listed, not refused."""
    queues = {o.key[3]: o for o in platform.of_kind("ClusterQueue")}
    for verdict in platform.verdicts:
        queue = queues[verdict.queue]
        if verdict.status is admission.Status.REFUSED:
            yield Violation("admissible", label(queue), queue.source, f"{verdict.workload} of team {verdict.team} is never admitted: {verdict.detail}")
        elif verdict.status is admission.Status.ON_GPU_NODES:
            yield Violation("admissible", label(queue), queue.source, f"{verdict.workload} of team {verdict.team} can be admitted onto GPU nodes: {verdict.detail}")
