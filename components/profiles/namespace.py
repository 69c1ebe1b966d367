"""A team's namespace and what makes it a Kubeflow profile: the Namespace, the Profile (owner,
quota), the LimitRange, and each contributor's RoleBinding and AuthorizationPolicy written
exactly as KFAM writes them.

Upstream facts (kubeflow/dashboard v2 code line, same in kubeflow/kubeflow v1.10):
- KFAM binding names and objects: components/access-management/kfam/bindings.go
  (`[^a-zA-Z0-9]+` -> '-', `User-<email>-ClusterRole-<role>`, lowercased; the function is
  in facts/naming.py, where the schema reads it too) and kfam/api_default.go
  (AuthorizationPolicy of the same name, header kubeflow-userid).
- What the profile controller makes: components/profile-controller/controllers/
  profile_controller.go (ResourceQuota kf-resource-quota from resourceQuotaSpec, the
  `owner` namespace annotation it accepts, labels it only adds when absent).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from components.access import GATEWAY_PRINCIPAL, KFP_UI_PRINCIPAL, USER_HEADER
from components.katib import INJECTION_LABEL as KATIB_INJECTION_LABEL
from components.katib import POD_REQUESTS as KATIB_POD_REQUESTS
from components.model_registry import DATABASE_RESOURCES, REGISTRY_RESOURCES
from components.profiles.args import TeamArgs
from components.profiles.queues import queue_admits
from components.serving import ROUTER_RESOURCES
from facts.labels import PROFILE_NAMESPACE_LABEL
from facts.naming import kfam_binding_name
from facts.node_labels import GPU_RESOURCE
from facts.pod_overhead import (
    ARGO_EXECUTOR_RESOURCES,
    ISTIO_SIDECAR_REQUESTS,
    NOTEBOOK_FORM_REQUESTS,
    pipeline_step_pods,
)
from facts.pod_resources import as_admitted, pod_requests
from stackmodel import quantity
from stackmodel.schema import Role
from stackmodel.schema import Team as TeamConfig

CLUSTER_ROLES = {"admin": "kubeflow-admin", "edit": "kubeflow-edit", "view": "kubeflow-view"}
EDITOR_SA = "default-editor"
"""The namespace's service account the profile controller binds kubeflow-edit to: notebooks,
Ray pods and the team's Google identity run as it."""
RBAC = "rbac.authorization.k8s.io"
# Profile namespaces run training images as root: the Pod Security level is ours, set here (the
# profile controller's `kubeflow` overlay sets none; its `kubeflow-pss` overlay would add
# `enforce: baseline`, applications/dashboard/upstream/profile-controller/overlays/kubeflow-pss).
NAMESPACE_LABELS = {
    "istio-injection": "enabled",
    PROFILE_NAMESPACE_LABEL[0]: PROFILE_NAMESPACE_LABEL[1],
    "pod-security.kubernetes.io/enforce": "baseline",
    "pod-security.kubernetes.io/warn": "baseline",
}


def pipeline_step_requests(team: TeamConfig) -> dict[str, Decimal]:
    """CPU and memory of one running CPU-only pipeline step in the team's namespace: its driver pod
    and its executor pod with Argo's executor containers at the platform's size and its own
    container at the namespace's container defaults (facts/pod_overhead.py pipeline_step_pods;
    the LimitRange as the API server applies it, facts/pod_resources.py)."""
    total = {name: Decimal(0) for name in ("cpu", "memory")}
    for spec in pipeline_step_pods(ARGO_EXECUTOR_RESOURCES).values():
        requests = pod_requests(as_admitted(spec, [limit_range(team)]))
        total = {name: total[name] + requests.get(name, Decimal(0)) for name in total}
    return total


def katib_requests(args: TeamArgs) -> dict[str, Decimal]:
    """CPU and memory of what Katib runs beside the trials Kueue admits, at the room the stack
    keeps (katib.room): a suggestion pod per running search, the metrics collector of each running
    trial's first pod (Katib v0.19.0 pkg/apis/config/v1beta1/defaults.go: 50m and 10Mi each; the
    suggestion pods carry no mesh sidecar, pkg/controller.v1beta1/util/labels.go SuggestionLabels)."""
    room = args.katib
    if room is None:
        return {"cpu": Decimal(0), "memory": Decimal(0)}
    return {name: (room.searches + room.trials) * quantity.parse(KATIB_POD_REQUESTS[name]) for name in ("cpu", "memory")}


def registry_requests(args: TeamArgs) -> dict[str, Decimal]:
    """CPU and memory of the team's Model Registry: its server with the mesh sidecar and, in the
    cluster, its MySQL (no sidecar: the tree's label), at the sizes components/model_registry.py gives them."""
    registry = args.model_registry
    if registry is None:
        return {"cpu": Decimal(0), "memory": Decimal(0)}
    pods = [REGISTRY_RESOURCES["requests"], ISTIO_SIDECAR_REQUESTS]
    if registry.cloud_sql is None:
        pods.append(DATABASE_RESOURCES["requests"])
    return {name: sum((quantity.parse(p[name]) for p in pods), Decimal(0)) for name in ("cpu", "memory")}


def serving_requests(args: TeamArgs) -> dict[str, Decimal]:
    """CPU and memory of the team's model router (components/profiles/serving.py, one replica with
    the mesh sidecar) where serving is on: a pod of the namespace Kueue never sees."""
    if args.serving is None:
        return {"cpu": Decimal(0), "memory": Decimal(0)}
    pods = [ROUTER_RESOURCES["requests"], ISTIO_SIDECAR_REQUESTS]
    return {name: sum((quantity.parse(p[name]) for p in pods), Decimal(0)) for name in ("cpu", "memory")}


def unqueued_requests(args: TeamArgs) -> dict[str, Decimal]:
    """CPU and memory the team's pods request beyond what its queue admits: the mesh sidecar of
    every queued Ray pod (injected when the pod is created; runtimes opt out), the room for
    `quota.notebooks` notebooks at the form's default size with their sidecars, with
    Pipelines, for `quota.pipelineSteps` CPU-only steps (pipeline_step_requests), with Katib, for
    its own pods (katib_requests), with the Model Registry, for the team's registry (registry_requests),
    with serving, for the team's model router (serving_requests) (facts/pod_overhead.py): CPU-only notebooks and steps, which Kueue does not queue, and GPU
    ones while they wait at Kueue's gate (a pod counts against the ResourceQuota from its creation)."""
    team = args.team
    sidecars = (1 + team.ray.max_workers if team.ray else 0) + team.quota.notebooks
    steps = team.quota.pipeline_steps if args.pipelines is not None else 0
    step = pipeline_step_requests(team)
    katib, registry, serving = katib_requests(args), registry_requests(args), serving_requests(args)
    return {
        name: sidecars * quantity.parse(ISTIO_SIDECAR_REQUESTS[name])
        + team.quota.notebooks * quantity.parse(NOTEBOOK_FORM_REQUESTS[name])
        + steps * step[name]
        + katib[name]
        + registry[name]
        + serving[name]
        for name in ("cpu", "memory")
    }


def profile(args: TeamArgs) -> dict[str, Any]:
    """The Profile, whose resourceQuotaSpec the profile controller makes the namespace's
    ResourceQuota `kf-resource-quota`: room for everything the team's ClusterQueue may admit at
    once (its nominal quota and what it may borrow: a job admitted on borrowed quota must not
    have its pods refused here) and for what Kueue does not queue (unqueued_requests).

    GPUs: with Kueue, every GPU pod of the namespace is admitted by the team's ClusterQueue
    (jobs through their integrations, notebooks and pipeline steps as plain pods,
    components/kueue_pods.py), so the queue is what limits them, and the ResourceQuota has no
    GPU line: a GPU pod waiting at Kueue's scheduling gate already exists, and Kubernetes'
    quota admission counts it from its creation, so a GPU line would let waiting pods hold room
    that Kueue gives to the next admitted workload, whose pods would then be refused. Without
    Kueue the line is the team's GPU quota."""
    team = args.team
    admits = queue_admits(args)
    extra = unqueued_requests(args)
    hard = {name: quantity.text(admits[name] + extra[name]) for name in ("cpu", "memory")}
    if not args.kueue:
        hard[f"requests.{GPU_RESOURCE}"] = str(int(admits.get(GPU_RESOURCE, 0)))
    spec: dict[str, Any] = {
        "owner": {"apiGroup": RBAC, "kind": "User", "name": team.owner},
        "resourceQuotaSpec": {"hard": hard},
    }
    return {"apiVersion": "kubeflow.org/v1", "kind": "Profile", "metadata": {"name": team.name}, "spec": spec}


def namespace(team: TeamConfig, katib: bool = False) -> dict[str, Any]:
    """Created by us (so our objects can land in it at once) the way the controller accepts it;
    with Katib, labelled for its metrics collectors (components/katib.py INJECTION_LABEL)."""
    labels = dict(NAMESPACE_LABELS)
    if katib:
        labels[KATIB_INJECTION_LABEL[0]] = KATIB_INJECTION_LABEL[1]
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": team.name, "labels": labels, "annotations": {"owner": team.owner}},
    }


LIMIT_RANGE = "container-defaults"


def limit_range(team: TeamConfig) -> dict[str, Any]:
    """Requests and limits for containers that name none. The profile's ResourceQuota
    (cpu, memory) refuses a pod whose containers have no requests, so without this a
    TrainJob submitted without `resources_per_node` never starts; with it the pod is admitted
    and counted. Kueue counts a workload's containers the same way (kubernetes-sigs/kueue
    v0.19.2 pkg/workload/resources.go applies the namespace's LimitRanges before admission)."""
    defaults = team.container_defaults
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": LIMIT_RANGE, "namespace": team.name},
        "spec": {
            "limits": [
                {
                    "type": "Container",
                    "defaultRequest": {"cpu": defaults.cpu, "memory": defaults.memory},
                    "default": {"cpu": defaults.cpu_limit, "memory": defaults.memory_limit},
                }
            ]
        },
    }


def contributor_objects(team: TeamConfig, email: str, role: Role) -> list[dict[str, Any]]:
    """The RoleBinding and AuthorizationPolicy KFAM writes when the owner adds a contributor."""
    name = kfam_binding_name(email, role.value)
    meta = {"name": name, "namespace": team.name, "annotations": {"user": email, "role": role.value}}
    return [
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "RoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": CLUSTER_ROLES[role.value]},
            "subjects": [{"apiGroup": RBAC, "kind": "User", "name": email}],
        },
        {
            "apiVersion": "security.istio.io/v1beta1",
            "kind": "AuthorizationPolicy",
            "metadata": meta,
            "spec": {
                "rules": [
                    {
                        "from": [{"source": {"principals": [GATEWAY_PRINCIPAL, KFP_UI_PRINCIPAL]}}],
                        "when": [{"key": f"request.headers[{USER_HEADER}]", "values": [email]}],
                    }
                ]
            },
        },
    ]
