#!/usr/bin/env python3
"""queue-status: where your job waits in your team's queue, and why.

    queue-status NAME          # a TrainJob, a notebook, a RayCluster or a serving replica's pod
    queue-status               # everything of your namespace that Kueue queues

Prints, for each Kueue Workload of NAME in your namespace: its priority class, whether it runs,
its place in your team's queue (Kueue's visibility API: `positionInLocalQueue` among your team's
pending work, `positionInClusterQueue` in your team's ClusterQueue, both from 0) and why it waits
(Kueue's own message: the quota, the flavor, how much more it needs), or that it was preempted,
why and by whom. A job preempted by another team reclaiming the GPUs it lent yours names that
team's queue (Kueue writes it in your Workload), never its jobs.

It reads only your namespace, with the notebook's own service account: its Workloads and the
pending workloads of its `default` LocalQueue (`localqueues/pendingworkloads` in
`visibility.kueue.x-k8s.io`), which team members may read. Outside a notebook it uses your
kubeconfig and its current namespace, or `--namespace`.

Kueue v0.19.2, read there: the Workload's conditions (apis/kueue/v1beta2/workload_types.go:
QuotaReserved, Admitted, Evicted, Preempted and their reasons), the preemption message
(pkg/scheduler/preemption/preemption.go preemptionMessage: "Preempted to accommodate a workload
(UID: ..., JobUID: ...) due to REASON; preemptor path: /COHORT/QUEUE; ..."), the pending
workloads of a LocalQueue (pkg/visibility/storage/pending_workloads_lq.go: that LocalQueue's
own, in the ClusterQueue's order).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
LOCAL_QUEUE = "default"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")

PREEMPTED_BECAUSE = {
    "InClusterQueue": "work of a higher priority class in your team's queue",
    "InCohortReclamation": "another team of your cohort taking back quota it had lent yours",
    "InCohortFairSharing": "fair sharing: another team of your cohort was below its share of the idle quota",
    "InCohortReclaimWhileBorrowing": "another team of your cohort taking back quota while itself borrowing",
}
"""The Preempted condition's reasons (apis/kueue/v1beta2/workload_types.go:1035-1049)."""
PREEMPTOR = re.compile(r"JobUID: (?P<uid>[^,)]+)\).*preemptor path: (?P<path>\S+?);")


def condition(workload: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The workload's condition of type `kind` when it is True."""
    for found in (workload.get("status") or {}).get("conditions") or []:
        if found.get("type") == kind and found.get("status") == "True":
            return dict(found)
    return None


def pending_condition(workload: dict[str, Any]) -> dict[str, Any] | None:
    for found in (workload.get("status") or {}).get("conditions") or []:
        if found.get("type") == "QuotaReserved" and found.get("status") == "False":
            return dict(found)
    return None


def owners(workload: dict[str, Any]) -> list[tuple[str, str]]:
    return [(ref.get("kind", ""), ref.get("name", "")) for ref in (workload.get("metadata") or {}).get("ownerReferences") or []]


def belongs_to(workload: dict[str, Any], name: str) -> bool:
    """The workload is NAME's: Kueue's owner reference names the job (a TrainJob, a RayCluster), or
    one of its pods (a notebook's pod `NAME-0`, a serving replica's `NAME-...`)."""
    return any(owner == name or (kind == "Pod" and owner.startswith(f"{name}-")) for kind, owner in owners(workload))


def priority(workload: dict[str, Any]) -> str:
    spec = workload.get("spec") or {}
    ref = spec.get("priorityClassRef") or {}
    value = spec.get("priority", 0)
    return f"{ref['name']} ({value})" if ref.get("name") else f"no class ({value})"


def preempted_by(found: dict[str, Any], namespace_workloads: Iterable[dict[str, Any]]) -> str:
    """Why and by whom, from the Preempted condition: a workload of your own namespace by its job's
    name; another team by its queue's name only."""
    why = PREEMPTED_BECAUSE.get(found.get("reason", ""), found.get("reason", "unknown"))
    match = PREEMPTOR.search(found.get("message", ""))
    if match is None:
        return why
    for other in namespace_workloads:
        if ((other.get("metadata") or {}).get("labels") or {}).get(JOB_UID_LABEL) == match["uid"]:
            names = ", ".join(f"{kind} {owner}" for kind, owner in owners(other)) or other["metadata"]["name"]
            return f"{why}: {names}"
    queue = match["path"].rstrip("/").rsplit("/", 1)[-1]
    return f"{why}: a workload of queue {queue}"


def describe(workload: dict[str, Any], pending: list[dict[str, Any]], namespace_workloads: list[dict[str, Any]]) -> list[str]:
    """What a data scientist reads about one Workload."""
    meta = workload.get("metadata") or {}
    status = workload.get("status") or {}
    job = ", ".join(f"{kind} {owner}" for kind, owner in owners(workload)) or meta.get("name", "")
    lines = [f"{job}: workload {meta.get('name')}, priority {priority(workload)}"]
    if condition(workload, "Finished"):
        return [*lines, "  finished"]
    preempted = condition(workload, "Preempted")
    if preempted and not condition(workload, "Admitted"):
        lines.append(f"  preempted at {preempted.get('lastTransitionTime', '?')} by {preempted_by(preempted, namespace_workloads)}")
        lines.append("  queued again: it resumes from its newest checkpoint once admitted")
    if condition(workload, "Admitted"):
        flavors = sorted({f for a in (status.get("admission") or {}).get("podSetAssignments") or [] for f in (a.get("flavors") or {}).values()})
        return [*lines, f"  admitted (running) on {', '.join(flavors) or 'its flavors'}"]
    if condition(workload, "QuotaReserved"):
        checks = [f"{c.get('name')}: {c.get('state')} {c.get('message', '')}".rstrip() for c in status.get("admissionChecks") or []]
        return [*lines, "  quota reserved; waiting for its admission checks" + (": " + "; ".join(checks) if checks else "")]
    place = next((p for p in pending if (p.get("metadata") or {}).get("name") == meta.get("name")), None)
    if place is not None:
        ahead = place.get("positionInLocalQueue", 0)
        lines.append(
            f"  pending: {ahead} of your team's workloads ahead of it in its LocalQueue, "
            f"{place.get('positionInClusterQueue', 0)} in your team's ClusterQueue"
        )
    else:
        lines.append("  pending (not in the queue's list yet: Kueue has not considered it, or it is inactive)")
    waiting = pending_condition(workload)
    if waiting and waiting.get("message"):
        lines.append(f"  waits because: {waiting['message']}")
    return lines


def report(name: str | None, workloads: list[dict[str, Any]], pending: list[dict[str, Any]], namespace: str) -> list[str]:
    mine = [w for w in workloads if name is None or belongs_to(w, name)]
    if not mine:
        what = f"{name!r}" if name else "anything"
        return [
            f"Kueue queues nothing of {what} in namespace {namespace}: it runs without waiting (CPU-only notebooks and "
            "pipeline steps are not queued), it has finished and its workload is gone, or the name is another's."
        ]
    lines: list[str] = []
    for workload in sorted(mine, key=lambda w: (w.get("metadata") or {}).get("name", "")):
        lines += describe(workload, pending, workloads)
    return lines


def current_namespace(given: str | None) -> str:
    if given:
        return given
    if SERVICE_ACCOUNT_NAMESPACE.is_file():
        return SERVICE_ACCOUNT_NAMESPACE.read_text().strip()
    from kubernetes import config

    _, context = config.list_kube_config_contexts()
    return str((context or {}).get("context", {}).get("namespace") or "default")


def fetch(namespace: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The namespace's Workloads and its LocalQueue's pending workloads, as the caller may read them."""
    from kubernetes import client, config

    try:
        config.load_incluster_config()
    except config.ConfigException:
        config.load_kube_config()
    api = client.ApiClient()
    workloads = client.CustomObjectsApi(api).list_namespaced_custom_object(GROUP, VERSION, namespace, "workloads")["items"]
    path = f"/apis/{VISIBILITY_GROUP}/{VERSION}/namespaces/{namespace}/localqueues/{LOCAL_QUEUE}/pendingworkloads"
    summary, _, _ = api.call_api(path, "GET", response_type="object", auth_settings=["BearerToken"], _return_http_data_only=False)
    return workloads, list((summary or {}).get("items") or [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", nargs="?", help="a TrainJob, notebook, RayCluster or serving replica; none: all")
    parser.add_argument("--namespace", "-n", help="default: the notebook's namespace (or your kubeconfig's)")
    args = parser.parse_args(argv)
    namespace = current_namespace(args.namespace)
    try:
        workloads, pending = fetch(namespace)
    except Exception as error:  # a person reads this: one line, no traceback
        print(f"queue-status: cannot read namespace {namespace}'s queue: {error}", file=sys.stderr)
        return 1
    print("\n".join(report(args.name, workloads, pending, namespace)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
