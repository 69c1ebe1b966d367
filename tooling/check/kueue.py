"""Kueue: the objects it manages obey its rules, each team's quota admits what its queue may admit,
every workload the platform offers is admissible."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import yaml

from components import kueue_owners
from components.argo import EXECUTOR_KEY, WORKFLOW_CONTROLLER_CONFIG
from components.kueue import CONFIG_MAP as KUEUE_CONFIG_MAP
from components.kueue import CONFIG_MAP_KEY as KUEUE_CONFIG_KEY
from components.kueue import NAMESPACE as KUEUE_NAMESPACE
from components.kueue_pods import MUTATING_CONFIGURATION, POD_FRAMEWORK, POD_WEBHOOKS
from components.spark import GPU_DRIVER_POLICY
from facts.labels import KUEUE_DEFAULT_LOCAL_QUEUE as LOCAL_QUEUE
from facts.labels import KUEUE_ELASTIC_JOB_ANNOTATION, KUEUE_QUEUE_LABEL, NAMESPACE_NAME_LABEL
from facts.node_labels import GPU_RESOURCE
from facts.pod_overhead import pipeline_step_pods
from facts.pod_resources import as_admitted, pod_requests
from facts.priorities import PRIORITY_LABEL
from stackmodel import quantity
from tooling import admission
from tooling.check.platform import Platform, Violation, check_rule, label, selects
from tooling.fullrender import Rendered

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
GUARDED_AFTER_KUEUE = {"spark-operator-webhook": GPU_DRIVER_POLICY}
"""Pod-mutating webhook configurations that sort after Kueue's, and the ValidatingAdmissionPolicy
that refuses what they could add to a team's pods unseen by Kueue (the Spark operator's: GPUs of
spec.executor.gpu, sidecars, init containers; components/spark.py GPU_DRIVER_POLICY)."""
HARMLESS_AFTER_KUEUE = {
    "lws-mutating-webhook-configuration": "LWS's pod webhook adds labels, annotations, env, a subdomain and pod (anti-)affinity, "
    "never a container, resource or toleration (lws v0.8.0 pkg/webhooks/pod_webhook.go Default), to pods Kueue counts from the "
    "LeaderWorkerSet's templates (kueue v0.19.2 leaderworkerset_reconciler.go podSets); LWS's certificate rotation patches "
    "it by this name (pkg/cert/cert.go), so it cannot be renamed to sort first",
}
"""Pod-mutating webhook configurations that sort after Kueue's and add nothing Kueue counts, and why."""


def _mutates_pod_creation(webhook: dict[str, Any]) -> bool:
    for rule in webhook.get("rules") or []:
        groups, resources, operations = (
            rule.get("apiGroups") or [],
            rule.get("resources") or [],
            rule.get("operations") or [],
        )
        if {"", "*"} & set(groups) and {"pods", "*"} & set(resources) and {"CREATE", "*"} & set(operations):
            return True
    return False


def pod_webhooks_after_kueue(platform: Platform) -> Iterator[Violation]:
    """No webhook changes a team's pods after Kueue's pod webhook has decided whether to queue them
    unless a policy refuses what it could add there (GUARDED_AFTER_KUEUE). The API server calls
    mutating webhook configurations in the order of their names (k8s.io/apiserver pkg/admission/
    configuration/mutating_webhook_manager.go, sorted ByName) and Kueue's `mpod.kb.io` once
    (reinvocationPolicy Never): GPUs a later webhook adds run outside the team's queue, and the
    team's quota has no GPU line under Kueue."""
    configurations = platform.of_kind("MutatingWebhookConfiguration")
    # By its configuration's name: LeaderWorkerSet's pod webhook is named `mpod.kb.io` too.
    kueue = next(
        (o for o in configurations if o.key[3] == MUTATING_CONFIGURATION and any(w.get("name") == POD_WEBHOOKS[0] for w in o.obj.get("webhooks") or [])),
        None,
    )
    if kueue is None:
        return
    teams = [ns for ns in platform.namespaces if gpu_pods_queued(platform, ns)]
    policies = {o.key[3] for o in platform.of_kind("ValidatingAdmissionPolicy")}
    for o in configurations:
        if o.key[3] <= kueue.key[3] or policies & {GUARDED_AFTER_KUEUE.get(o.key[3], "")} or o.key[3] in HARMLESS_AFTER_KUEUE:
            continue
        for webhook in o.obj.get("webhooks") or []:
            reached = [ns for ns in teams if selects(webhook.get("namespaceSelector") or {}, platform.namespaces[ns])]
            if _mutates_pod_creation(webhook) and reached:
                yield Violation(
                    "kueue",
                    label(o),
                    o.source,
                    f"webhook {webhook.get('name')} changes pods of {', '.join(sorted(reached))} after Kueue's pod webhook "
                    f"{POD_WEBHOOKS[0]} (the API server calls configurations in name order, Kueue's once): GPUs it adds are "
                    "never queued; refuse them with a ValidatingAdmissionPolicy and name it in tooling/check/kueue.py "
                    "GUARDED_AFTER_KUEUE, or keep the webhook out of the team namespaces",
                )


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
    yield from pod_webhooks_after_kueue(platform)
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
    config = kueue_configuration(platform)
    if config is None:
        return False
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


def namespace_workloads(platform: Platform, namespace: str, sidecar: dict[str, Decimal]) -> dict[str, Decimal]:
    """CPU and memory of the pods the render's own workloads run in a team namespace (a team's
    Model Registry server and MySQL: components/model_registry.py), each replica with the mesh
    sidecar unless it opts out: always running, and never queued."""
    total = {name: Decimal(0) for name in ("cpu", "memory")}
    for o in platform.of_kind("Deployment", "StatefulSet"):
        if o.key[2] != namespace:
            continue
        spec = o.obj.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        template = spec.get("template") or {}
        labels = {**((template.get("metadata") or {}).get("labels") or {}), **((template.get("metadata") or {}).get("annotations") or {})}
        pod = [_requests(c.get("resources") or {}) for c in (template.get("spec") or {}).get("containers") or []]
        if str(labels.get("sidecar.istio.io/inject", "")).lower() != "false":
            pod.append(sidecar)
        for name in total:
            total[name] += replicas * sum((r.get(name, Decimal(0)) for r in pod), Decimal(0))
    return total


@check_rule("quota-admits-queue", "every team namespace's quota admits what its queue may admit and what Kueue does not count")
def quota_admits_queue(platform: Platform) -> Iterator[Violation]:
    """A team namespace's ResourceQuota (its Profile's resourceQuotaSpec) admits everything its
    ClusterQueue may admit at once (nominal quota and what it may borrow) plus what Kueue does
    not count: the mesh sidecar the injector adds to each queued Ray pod, one notebook at
    the form's default with its sidecar (CPU-only notebooks are not queued; GPU ones wait at
    Kueue's gate already created) and, with Pipelines, one CPU-only pipeline step with its driver
    pod and Argo's executor containers at the render's size, and the pods of the render's own
    workloads in the namespace (a team's Model Registry). A job Kueue admits whose pods the ResourceQuota refuses
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
            own = namespace_workloads(platform, team, sidecar)
            unqueued = pods_with_sidecars * sidecar.get(resource, Decimal(0)) + notebook.get(resource, Decimal(0)) + step.get(resource, Decimal(0))
            unqueued += own.get(resource, Decimal(0))
            need = admits.get(resource, Decimal(0)) + unqueued
            have = _amount(have_text) if have_text is not None else None
            if have is not None and have < need:
                yield Violation(
                    "quota-admits-queue", label(o), o.source,
                    f"its namespace's ResourceQuota admits {resource} {have_text}, but ClusterQueue {queue} may admit "
                    f"{quantity.text(admits.get(resource, Decimal(0)))} (nominal and borrowed) and Kueue does not count "
                    f"{quantity.text(unqueued)} (a notebook at the form's default, a CPU pipeline step with its driver, mesh sidecars, the namespace's own workloads): a job admitted then has "
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


def kueue_configuration(platform: Platform) -> dict[str, Any] | None:
    """Kueue's manager configuration as the render gives it (components/kueue.py manager_config);
    None without Kueue."""
    config_map = next((o.obj for o in platform.of_kind("ConfigMap") if o.key[2:] == (KUEUE_NAMESPACE, KUEUE_CONFIG_MAP)), None)
    if config_map is None:
        return None
    return yaml.safe_load((config_map.get("data") or {}).get(KUEUE_CONFIG_KEY) or "") or {}


def _flavor_quotas(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for group in spec.get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for resource in flavor.get("resources") or []:
                yield str(flavor.get("name")), str(resource.get("name")), resource


@check_rule("cohort-sharing", "team queues take back what they lend, borrow no more than their cohort lends, and carry weights only where Kueue shares fairly")
def cohort_sharing(platform: Platform) -> Iterator[Violation]:
    """What the ClusterQueues of a cohort say about sharing is what Kueue v0.19.2 will do with it
    (docs/teams.md, "Sharing GPUs"):

    - a queue in a cohort reclaims what it lends (`preemption.reclaimWithinCohort` not Never,
      its default: apis/kueue/v1beta2/clusterqueue_types.go ClusterQueuePreemption), or a team
      that lent its GPUs waits for the borrower's job to end, which may be days;
    - `fairSharing.weight` only where Kueue's configuration has `fairSharing` (cmd/kueue/main.go:346;
      clusterqueue_types.go `fairSharing`: "only relevant if FairSharing is enabled"), and
      `borrowWithinCohort` only where it has not (clusterqueue_types.go BorrowWithinCohort: "only
      works with Classical Preemption"; pkg/scheduler/preemption/preemption.go getTargets takes the
      fair-sharing path alone): either would otherwise be silently nothing;
    - a `borrowingLimit` only in a cohort (pkg/webhooks/clusterqueue_webhook.go validateLimit
      refuses it without one; its test "flavor quota with lendingLimit and empty cohort"), and no
      larger than what the cohort's other queues lend of that flavor and resource (their
      lendingLimit, else nominalQuota: tooling/admission.py queue_reach): the namespace's quota is
      sized to it (quota-admits-queue), so room beyond the cohort is room Kueue never fills."""
    config = kueue_configuration(platform)
    if config is None:
        return
    fair = config.get("fairSharing") is not None
    queues = platform.of_kind("ClusterQueue")
    for queue in queues:
        spec = queue.obj.get("spec") or {}
        cohort = spec.get("cohortName")
        preemption = spec.get("preemption") or {}

        def found(message: str, queue: Rendered = queue) -> Violation:
            return Violation("cohort-sharing", label(queue), queue.source, message)

        if cohort and preemption.get("reclaimWithinCohort", "Never") == "Never":
            yield found(
                f"it lends its quota to cohort {cohort} and never takes it back (preemption.reclaimWithinCohort Never): "
                "a borrower's job keeps the team's GPUs until it ends; set reclaimWithinCohort (components/profiles/queues.py preemption)"
            )
        weight = (spec.get("fairSharing") or {}).get("weight")
        if weight is not None and not fair:
            yield found(
                f"fairSharing.weight {weight}, and Kueue's configuration has no fairSharing: Kueue ignores the weight; "
                "turn fair sharing on (mlplatform:components.kueue.fairSharing) or leave the weight out"
            )
        if fair and ((preemption.get("borrowWithinCohort") or {}).get("policy") or "Never") != "Never":
            yield found(
                "preemption.borrowWithinCohort works only with Kueue's classic preemption, and its configuration has "
                "fairSharing: Kueue ignores it; leave it out under fair sharing"
            )
        peers = [(p.obj.get("spec") or {}) for p in queues if p is not queue and cohort and (p.obj.get("spec") or {}).get("cohortName") == cohort]
        for flavor, resource, quota in _flavor_quotas(spec):
            if "borrowingLimit" not in quota:
                continue
            if not cohort:
                yield found(f"flavor {flavor} {resource}: a borrowingLimit without a cohort, which Kueue's webhook refuses; remove it")
                continue
            lent = sum(
                (_amount(q.get("lendingLimit", q.get("nominalQuota", 0))) for peer in peers for f, r, q in _flavor_quotas(peer) if (f, r) == (flavor, resource)),
                Decimal(0),
            )
            if _amount(quota["borrowingLimit"]) > lent:
                yield found(
                    f"flavor {flavor} {resource}: borrowingLimit {quota['borrowingLimit']} is more than the other queues of cohort "
                    f"{cohort} lend ({quantity.text(lent)}): the namespace's quota, sized to it, holds room Kueue never fills; "
                    "lower it to what the cohort lends (components/profiles/queues.py borrowing_limits)"
                )


def _named_classes(obj: Any) -> Iterator[tuple[str, str]]:
    """("label", class) for every `kueue.x-k8s.io/priority-class` an object's labels name, at any
    depth (metadata, pod templates, a PodDefault's labels), and ("priorityClassName", class) for
    every pod spec's PriorityClass."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key == PRIORITY_LABEL and isinstance(value, str):
                yield "label", value
            elif key == "priorityClassName" and isinstance(value, str):
                yield "priorityClassName", value
            else:
                yield from _named_classes(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from _named_classes(item)


BUILTIN_PRIORITY_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})
"""What every Kubernetes API server creates (k8s.io/kubernetes pkg/apis/scheduling SystemPriorityClasses)."""


@check_rule("priority-classes", "every priority class a workload names exists")
def priority_classes(platform: Platform) -> Iterator[Violation]:
    """With Kueue, every `kueue.x-k8s.io/priority-class` the render gives a workload (a RayCluster,
    a PodDefault's labels, Argo's workflowDefaults for pipeline steps) names a WorkloadPriorityClass
    of the render: Kueue makes no Workload for a job naming none (kueue v0.19.2
    pkg/util/priority/priority.go GetPriorityFromWorkloadPriorityClass returns the NotFound error),
    so it never starts. And every `priorityClassName` names a PriorityClass of the render or a
    built-in one: the API server's Priority admission plugin refuses a pod naming another."""
    workload_classes = {o.key[3] for o in platform.of_kind("WorkloadPriorityClass")}
    pod_classes = {o.key[3] for o in platform.of_kind("PriorityClass")} | BUILTIN_PRIORITY_CLASSES
    kueue_installed = kueue_configuration(platform) is not None
    for o in platform.objects:
        named = list(_named_classes(o.obj))
        if o.key[1] == "ConfigMap" and o.key[3] == WORKFLOW_CONTROLLER_CONFIG:
            named += _named_classes(yaml.safe_load((o.obj.get("data") or {}).get("workflowDefaults") or "") or {})
        for where, name in dict.fromkeys(named):
            if where == "label" and kueue_installed and name not in workload_classes:
                yield Violation(
                    "priority-classes", label(o), o.source,
                    f"labels its workloads {PRIORITY_LABEL}: {name}, a WorkloadPriorityClass the platform does not have "
                    f"(it has {', '.join(sorted(workload_classes)) or 'none'}): Kueue makes no Workload for them and they never start",
                )
            elif where == "priorityClassName" and name not in pod_classes:
                yield Violation(
                    "priority-classes", label(o), o.source,
                    f"its pods name PriorityClass {name}, which the platform does not create: the API server refuses them",
                )
