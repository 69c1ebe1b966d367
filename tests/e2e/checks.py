"""What "ready", "done" and "stuck" mean for the objects the e2e suite looks at, as pure
functions of the objects' JSON (the Kubernetes client's `sanitize_for_serialization`),
plus the workloads it submits. Each `*_pending` returns a readable reason, or None when
the object is where it should be; the waiters poll them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from components import jobset, kubeflow, kuberay, kueue, trainer
from stackmodel import quantity
from tooling.smoke import State, true_condition

Obj = Mapping[str, Any]

COMPONENT_NAMESPACES: dict[str, tuple[str, ...]] = {
    "certManager": ("cert-manager",),
    # istio-cni-node runs in kube-system (kubeflow/manifests common/istio).
    "istio": ("istio-system", "kube-system"),
    "kubeflow": ("kubeflow", kubeflow.DEX_NAMESPACE, "oauth2-proxy"),
    "jobset": (jobset.NAMESPACE,),
    "trainer": (trainer.NAMESPACE,),
    "kuberay": (kuberay.NAMESPACE,),
    "kueue": (kueue.NAMESPACE,),
}
"""Namespaces whose Deployments and DaemonSets a component brings, by component key."""

COMPONENT_CRDS: dict[str, tuple[str, ...]] = {
    "certManager": ("certificates.cert-manager.io", "issuers.cert-manager.io", "clusterissuers.cert-manager.io"),
    "istio": (
        "gateways.networking.istio.io",
        "virtualservices.networking.istio.io",
        "authorizationpolicies.security.istio.io",
        "requestauthentications.security.istio.io",
    ),
    "kubeflow": ("profiles.kubeflow.org", "poddefaults.kubeflow.org", "notebooks.kubeflow.org"),
    "jobset": ("jobsets.jobset.x-k8s.io",),
    "trainer": (
        "trainjobs.trainer.kubeflow.org",
        "trainingruntimes.trainer.kubeflow.org",
        "clustertrainingruntimes.trainer.kubeflow.org",
    ),
    "kuberay": ("rayclusters.ray.io", "rayjobs.ray.io"),
    "kueue": (
        "clusterqueues.kueue.x-k8s.io",
        "localqueues.kueue.x-k8s.io",
        "resourceflavors.kueue.x-k8s.io",
        "workloads.kueue.x-k8s.io",
    ),
    # Argo's (its minimal CRDs, from the remote bases) and KFP's own.
    "pipelines": ("workflows.argoproj.io", "scheduledworkflows.kubeflow.org", "viewers.kubeflow.org"),
}
"""CRDs each component must have established, by component key."""

QUOTA = "kf-resource-quota"
"""The ResourceQuota the Kubeflow profile controller keeps in a profile's namespace."""
DEFAULT_QUEUE = "default"
NO_SIDECAR = {"sidecar.istio.io/inject": "false"}


def _enabled(enabled: Mapping[str, bool], table: Mapping[str, tuple[str, ...]]) -> list[str]:
    return sorted({item for key, items in table.items() if enabled.get(key) for item in items})


def component_namespaces(enabled: Mapping[str, bool]) -> list[str]:
    return _enabled(enabled, COMPONENT_NAMESPACES)


def component_crds(enabled: Mapping[str, bool]) -> list[str]:
    return _enabled(enabled, COMPONENT_CRDS)


def _name(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind', '?')} {where}{meta.get('name')}"


def _observed(obj: Obj) -> bool:
    generation = (obj.get("metadata") or {}).get("generation", 0)
    return bool((obj.get("status") or {}).get("observedGeneration", 0) >= generation)


def deployment_pending(deployment: Obj) -> str | None:
    want = (deployment.get("spec") or {}).get("replicas", 1)
    status = deployment.get("status") or {}
    if not _observed(deployment):
        return f"{_name(deployment)}: new spec not observed yet"
    available, updated = status.get("availableReplicas", 0), status.get("updatedReplicas", 0)
    if available < want or updated < want:
        return f"{_name(deployment)}: {available}/{want} available, {updated}/{want} updated"
    return None


def daemonset_pending(daemonset: Obj) -> str | None:
    status = daemonset.get("status") or {}
    desired = status.get("desiredNumberScheduled", 0)
    ready, updated = status.get("numberReady", 0), status.get("updatedNumberScheduled", 0)
    if not _observed(daemonset):
        return f"{_name(daemonset)}: new spec not observed yet"
    if ready < desired or updated < desired:
        return f"{_name(daemonset)}: {ready}/{desired} ready, {updated}/{desired} updated"
    return None


def crds_pending(crds: Iterable[Obj], expected: Iterable[str]) -> list[str]:
    """Expected CRDs that are missing, and any CRD not Established (with its reason)."""
    by_name = {(c.get("metadata") or {}).get("name"): c for c in crds}
    pending = [f"CRD {name}: missing" for name in expected if name not in by_name]
    for name, crd in sorted(by_name.items(), key=lambda item: str(item[0])):
        if true_condition(crd, "Established") is None:
            pending.append(f"CRD {name}: not established")
    return pending


def localqueue_pending(queue: Obj | None, namespace: str) -> str | None:
    if queue is None:
        return f"LocalQueue {namespace}/{DEFAULT_QUEUE}: missing"
    if true_condition(queue, "Active") is None:
        return f"{_name(queue)}: not Active"
    return None


def quota_problems(quota: Obj | None, namespace: str, cpu: str, memory: str) -> list[str]:
    """What the team namespace's quota lacks of the team's cpu and memory (any of the
    `cpu`, `requests.cpu`, `limits.cpu` spellings counts), compared by value: the API
    server returns quantities in canonical form (0.5 comes back as 500m)."""
    if quota is None:
        return [f"ResourceQuota {namespace}/{QUOTA}: missing"]
    hard: Mapping[str, str] = (quota.get("spec") or {}).get("hard") or {}
    problems = []
    for resource, want in (("cpu", cpu), ("memory", memory)):
        got = {key: value for key, value in hard.items() if key == resource or key.endswith(f".{resource}")}
        if quantity.parse(want) not in {quantity.parse(value) for value in got.values()}:
            problems.append(f"ResourceQuota {namespace}/{QUOTA}: no {resource} limit of {want} (hard: {dict(hard)})")
    return problems


def terminating(namespaces: Iterable[Obj]) -> list[str]:
    """Namespaces in phase Terminating, each with the conditions that say what holds it."""
    stuck = []
    for ns in namespaces:
        status = ns.get("status") or {}
        if status.get("phase") == "Terminating":
            reasons = [c.get("message", c.get("type")) for c in status.get("conditions") or [] if c.get("status") == "True"]
            stuck.append(f"{(ns.get('metadata') or {}).get('name')}: {'; '.join(reasons) or 'terminating'}")
    return stuck


def unhealthy_pods(pods: Iterable[Obj]) -> list[tuple[str, str, list[str]]]:
    """(namespace, pod, containers) of pods worth the logs after a failure: failed, stuck
    pending, restarted, or running but not ready."""
    found = []
    for pod in pods:
        meta, status = pod.get("metadata") or {}, pod.get("status") or {}
        phase = status.get("phase")
        statuses = (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or [])
        running_unready = phase == "Running" and not all(s.get("ready") for s in status.get("containerStatuses") or [])
        if phase in ("Failed", "Pending", "Unknown") or running_unready or any(s.get("restartCount", 0) for s in statuses):
            containers = [c["name"] for c in (pod.get("spec") or {}).get("initContainers") or []]
            containers += [c["name"] for c in (pod.get("spec") or {}).get("containers") or []]
            found.append((meta.get("namespace", ""), meta.get("name", ""), containers))
    return found


def owned_by(obj: Obj, uid: str) -> bool:
    return any(ref.get("uid") == uid for ref in (obj.get("metadata") or {}).get("ownerReferences") or [])


def admitted(workload: Obj) -> bool:
    """Kueue admitted the Workload (its condition, or the admission it recorded)."""
    return true_condition(workload, "Admitted") is not None or bool((workload.get("status") or {}).get("admission"))


# --- the Ray workload ------------------------------------------------------------------

RAY_CHECK = (
    "import ray; ray.init(); resources = ray.cluster_resources(); "
    "print('cluster_resources', resources); "
    "assert resources.get('CPU', 0) >= 2, f'head and worker should bring 2 CPUs: {resources}'"
)


def _ray_container(name: str, image: str, cpu: str, memory: str) -> dict[str, Any]:
    limits = {"cpu": cpu, "memory": memory}
    return {"name": name, "image": image, "resources": {"requests": dict(limits), "limits": limits}}


def rayjob_manifest(name: str, namespace: str, image: str) -> dict[str, Any]:
    """A RayJob with a 1-CPU head and one 1-CPU worker whose entrypoint asserts that
    `ray.cluster_resources()` sees both. No Istio sidecars (Ray's ports are not meshed)."""

    def template(container: dict[str, Any], **spec: Any) -> dict[str, Any]:
        return {"metadata": {"labels": dict(NO_SIDECAR)}, "spec": {"containers": [container], **spec}}

    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "entrypoint": f'python -c "{RAY_CHECK}"',
            "shutdownAfterJobFinishes": True,
            "ttlSecondsAfterFinished": 300,
            "activeDeadlineSeconds": 1800,
            "rayClusterSpec": {
                "headGroupSpec": {"rayStartParams": {}, "template": template(_ray_container("ray-head", image, "1", "2Gi"))},
                "workerGroupSpecs": [
                    {
                        "groupName": "workers",
                        "replicas": 1,
                        "minReplicas": 1,
                        "maxReplicas": 1,
                        "rayStartParams": {},
                        "template": template(_ray_container("ray-worker", image, "1", "1Gi")),
                    }
                ],
            },
            "submitterPodTemplate": template(
                _ray_container("ray-job-submitter", image, "500m", "512Mi"), restartPolicy="Never"
            ),
        },
    }


def rayjob_state(rayjob: Obj) -> tuple[State, str]:
    status = rayjob.get("status") or {}
    job, deployment = status.get("jobStatus", ""), status.get("jobDeploymentStatus", "")
    detail = f"deployment {deployment or '-'}, job {job or '-'}"
    if job == "SUCCEEDED":
        return "succeeded", detail
    if job in ("FAILED", "STOPPED") or deployment == "Failed":
        return "failed", f"{detail}: {status.get('message', '')}".rstrip(": ")
    return "pending", detail
