"""The quota never refuses what the queue admits, on the real API server: in the dev fixture's
cohort team `nlp` (its namespace, LimitRange and the ResourceQuota the profile controller makes
from its Profile), the pods of workloads Kueue admitted up to the team queue's nominal quota plus
what the cohort lends, on every flavor, and the platform's own pods Kueue does not count (the
notebooks and pipeline steps the Profile keeps room for, the mesh sidecars of the Ray pods) are
all created; one more notebook is refused, so the quota is no larger than that.

There is no scheduler or kubelet: a pod is only created. That is all a ResourceQuota judges (its
admission plugin counts a pod's requests when it is created, after the LimitRanger plugin gave its
containers their defaults), so it is what this test needs. The controller manager runs the
resourcequota controller, without which the plugin refuses every pod ("status unknown for quota").
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from kubernetes.client import ApiException

from components.kueue import DEFAULT_FLAVOR
from facts.node_labels import GPU_RESOURCE
from facts.pod_overhead import pipeline_step_pods
from facts.pod_resources import as_kueue_counts, pod_requests
from stackmodel import quantity
from tests.envtest.conftest import kept
from tests.support.apiserver import Cluster, api_message
from tests.support.profile_controller import profile_quota
from tests.support.renders import rendered
from tooling import admission
from tooling.waiting import wait_for

TEAM = "nlp"
"""In cohort `research` with team research, which lends it its own quota of each flavor."""
PODS = f"/api/v1/namespaces/{TEAM}/pods"


def _obj(objects: list[dict[str, Any]], kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    (found,) = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name and o["metadata"].get("namespace") == namespace]
    return found


def _pod(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    spec = copy.deepcopy(spec)
    for container in [*(spec.get("initContainers") or []), *spec["containers"]]:
        container.setdefault("image", "registry.example/any:1")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": TEAM}, "spec": spec}


def _sized(template: dict[str, Any], requests: dict[str, Any]) -> dict[str, Any]:
    """A runtime's pod spec with its `node` container at `requests` (the SDK's resources_per_node
    sets requests and limits alike)."""
    spec = copy.deepcopy(template["spec"])
    node = next(c for c in spec["containers"] if c["name"] == "node")
    node["resources"] = {"requests": dict(requests), "limits": dict(requests)}
    return spec


@pytest.fixture(scope="module")
def world(cluster: Cluster) -> Iterator[dict[str, Any]]:
    render = rendered("dev")
    objects = [o.obj for o in render.objects]
    namespace = _obj(objects, "Namespace", TEAM)
    quota = profile_quota(_obj(objects, "Profile", TEAM))
    limit_range = _obj(objects, "LimitRange", "container-defaults", TEAM)
    # No controller makes them here: the namespace's own and the profile controller's (Ray pods and notebooks run as it).
    accounts = [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": TEAM}} for name in ("default", "default-editor")]
    # The runtimes' pods name it, and the API server's Priority plugin refuses a pod naming none that exists.
    priority = _obj(objects, "PriorityClass", "batch")
    with kept(cluster, [namespace, *accounts, limit_range, quota, priority]):

        def pending() -> list[str]:
            status = cluster.request("GET", f"/api/v1/namespaces/{TEAM}/resourcequotas/{quota['metadata']['name']}").get("status") or {}
            return [] if status.get("hard") and "used" in status else ["the resourcequota controller has not counted the namespace yet"]

        wait_for("the team's ResourceQuota", pending, timeout=60, interval=0.2)
        yield {"render": render, "objects": objects, "limit_ranges": [limit_range]}


def flavor_for(queue: admission.Queue, resource: str, pool: str | None) -> str:
    """The flavor a pod on `pool` (None: none) takes `resource` from: its pool's where the resource's
    group has it, else the group's first, `default` (components/profiles/queues.py: with a
    topology-aware pool one group, otherwise CPU and memory on `default` alone)."""
    group = next(g for g in queue.groups if resource in g.covered)
    return pool if pool in group.flavors else group.flavors[0]


def admitted_pods(render: Any, limit_ranges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pods of workloads Kueue admits up to the team queue's reach on every flavor: the team
    RayCluster at its largest (KubeRay's autoscaler beside the head, the mesh sidecar the injector
    adds to each Ray pod, which Kueue does not count), then two TrainJob pods on the l4 variant that
    take the rest of the pool's GPUs (and, where CPU and memory are split among flavors, the rest of
    its CPU and memory), then one on the base runtime that takes the rest of `default`, as Kueue
    counts them, whichever shape the queue has."""
    kueue = admission.kueue_of(render)
    queue = kueue.queues[TEAM]
    left = dict(queue.reach)
    workloads = {w.name: w for w in admission.workloads(render, kueue, TEAM)}
    sidecar = admission._sidecar(render.objects)
    assert sidecar is not None
    pods: list[dict[str, Any]] = []

    def take(spec: dict[str, Any], pool: str | None) -> None:
        for name, value in pod_requests(as_kueue_counts(spec, limit_ranges)).items():
            left[(flavor_for(queue, name, pool), name)] -= value

    ray = workloads["RayCluster ray (workers at maxReplicas)"]
    for pod_set, pool in zip(ray.pod_sets, (None, "l4"), strict=True):
        for i in range(pod_set.count):
            spec = copy.deepcopy(pod_set.template["spec"])  # LimitRange-defaulted as Kueue counts it; the API server adds the same
            take(spec, pool)
            spec["containers"].append(copy.deepcopy(sidecar))
            pods.append(_pod(f"ray-{pod_set.name}-{i}", spec))
    runtimes = {o.key[3]: o.obj for o in render.objects if o.key[1] == "ClusterTrainingRuntime"}
    for pool, runtime, pods_of in (("l4", "torch-distributed-l4", 2), (None, "torch-distributed", 1)):
        ((_, _, template),) = admission.trainjob_pod_sets(runtimes[runtime], admission.trainjob(runtimes[runtime]))
        # What is left of the resources this runtime's pods take from its own flavor (`default` for the base runtime).
        own = pool or DEFAULT_FLAVOR
        per_pod = {
            name: left[(own, name)] / pods_of
            for name in ("cpu", "memory", GPU_RESOURCE)
            if flavor_for(queue, name, pool) == own and left.get((own, name), Decimal(0)) > 0
        }
        requests = {name: quantity.text(value) if name != "nvidia.com/gpu" else str(int(value)) for name, value in per_pod.items()}
        for i in range(pods_of):
            spec = _sized(template, requests)
            take(spec, pool)
            pods.append(_pod(f"trainjob-{pool or 'default'}-{i}", spec))
    assert all(value >= 0 for value in left.values()), left  # Kueue would admit every one of them
    assert {k: v for k, v in left.items() if v > 0} == {}, left  # and the team's queue is full
    return pods


def platform_pods(render: Any) -> list[dict[str, Any]]:
    """The pods Kueue does not count that the Profile keeps room for: quota.notebooks (2) CPU
    notebooks at the form's default with their mesh sidecars, quota.pipelineSteps (2) CPU steps,
    each its driver and executor pods with Argo's executor containers as the render sizes them,
    and the pods of the render's own workloads in the namespace (the team's Model Registry)."""
    config = next(o.obj for o in render.objects if o.key[1] == "ConfigMap" and o.key[3] == admission.WORKFLOW_CONTROLLER_CONFIG)
    executor = (admission.yaml.safe_load(config["data"][admission.EXECUTOR_KEY]) or {}).get("resources")
    notebook = admission.notebook_pod(admission._form(render.objects), admission._sidecar(render.objects), None)
    pods = [_pod(f"notebook-{i}", notebook) for i in range(2)]
    for step in range(2):
        pods += [_pod(f"step-{step}-{name}", spec) for name, spec in pipeline_step_pods(executor).items()]
    # The render's own workloads in the namespace (the team's Model Registry: its server with the
    # mesh sidecar, its MySQL without), as their Deployments make them.
    sidecar = admission._sidecar(render.objects)
    for o in render.objects:
        if o.key[1] != "Deployment" or o.key[2] != TEAM:
            continue
        template = o.obj["spec"]["template"]
        spec = copy.deepcopy(template["spec"])
        spec.pop("serviceAccountName", None)  # not in this world; the quota counts containers only
        if (template.get("metadata") or {}).get("labels", {}).get("sidecar.istio.io/inject") != "false" and sidecar is not None:
            spec["containers"].append(copy.deepcopy(sidecar))
        pods += [_pod(f"{o.key[3]}-{i}", spec) for i in range(int(o.obj["spec"].get("replicas", 1)))]
    return pods


def test_the_pods_of_the_teams_full_admitted_quota_and_its_platform_pods_are_all_created(cluster: Cluster, world: dict[str, Any]) -> None:
    pods = admitted_pods(world["render"], world["limit_ranges"]) + platform_pods(world["render"])
    refused = []
    created = []
    try:
        for pod in pods:
            try:
                cluster.request("POST", PODS, pod)
                created.append(pod)
            except ApiException as error:
                refused.append(f"{pod['metadata']['name']}: {api_message(error)}")
        assert refused == []
        # Tight, not generous: one more notebook than the Profile keeps room for is refused.
        extra = _pod("notebook-one-too-many", admission.notebook_pod(admission._form(world["render"].objects), admission._sidecar(world["render"].objects), None))
        with pytest.raises(ApiException) as caught:
            cluster.request("POST", PODS, extra)
        assert "exceeded quota: kf-resource-quota" in api_message(caught.value)
        used = cluster.request("GET", f"/api/v1/namespaces/{TEAM}/resourcequotas/kf-resource-quota")["status"]["used"]
        hard = _obj(world["objects"], "Profile", TEAM)["spec"]["resourceQuotaSpec"]["hard"]
        assert {name: quantity.parse(used[name]) for name in ("cpu", "memory")} == {name: quantity.parse(hard[name]) for name in ("cpu", "memory")}
    finally:
        cluster.remove(created)

