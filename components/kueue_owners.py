"""Kueue leaves alone a pod whose owner it manages; only that owner's controller may make one.

Kueue's pod webhook does not queue a pod whose chain of controller owners reaches a job Kueue
manages (kubernetes-sigs/kueue v0.19.2 pkg/controller/jobs/pod/pod_webhook.go `Default` ->
pkg/controller/jobframework/reconciler.go `FindAncestorJobManagedByKueue`): a TrainJob's, a
JobSet's or a RayCluster's pods are counted by that job's own Workload. The walk follows
`metav1.GetControllerOf` (the ownerReference with `controller: true`) through every kind of a
registered integration and ReplicaSet (integrationmanager.go `isKnownOwner`), checks each
owner's UID, and stops at the first owner that is an enabled framework with a queue name. Who
wrote the ownerReference is never asked ("same-namespace ownership spoofing is out of scope",
reconciler.go). Nor does the API server ask for a right on the owner: its
OwnerReferencesPermissionEnforcement plugin, where it is on at all, wants `delete` on the object
whose ownerReferences are set (which whoever may create pods has) and a right on the owner only
for `blockOwnerDeletion: true` (kubernetes/kubernetes plugin/pkg/admission/gc/gc_admission.go
`isChangingOwnerReference`, `blockingOwnerRefs`; a stored copy, read 2026-12-04).

So a team member who may create pods (kubeflow-edit) could name the team's running RayCluster as
the controller of a pod asking for GPUs: Kueue would not gate it, the team's ClusterQueue would
not count it, and the namespace's ResourceQuota has no GPU line (components/profiles/namespace.py):
GPUs outside every quota. The same through a ReplicaSet, Deployment, StatefulSet or Job of one's
own naming such an owner (Kueue walks through them; their controllers then make the pods).

Two ValidatingAdmissionPolicies, bound in each team namespace (components/profiles/queues.py):
- OWNED_GPU_PODS: a pod asking for GPUs (any container or init container, requests or limits,
  or a DRA resource claim: components/kueue_pods.py asks_for_gpus) whose controller is of a kind
  Kueue manages here (MANAGED_KINDS: the frameworks of
  components/kueue.py);
- OWNED_WORKLOADS: a Deployment, ReplicaSet, StatefulSet, Job, JobSet, RayCluster, RayJob,
  RayService or TrainJob (the kinds Kueue walks through that a team namespace can hold) whose
  controller is such a kind;
both on CREATE, and on UPDATE when a controller reference to such an owner is new, unless the
request comes from a controller that makes these objects (CONTROLLERS). Without Kueue-managed
owners nothing changes: a CPU-only pod is never Kueue's (components/kueue_pods.py), and the
references nobody forges (a pipeline step's Workflow, a notebook's StatefulSet) are not matched.

A third, ADMISSION_GATE: a GPU pod Kueue queues (a notebook's, a pipeline step's) waits behind
the scheduling gate `kueue.x-k8s.io/admission` until Kueue admits it. Kubernetes lets whoever
may update the pod remove a scheduling gate (kubeflow-edit grants `update` and `patch` on pods),
and Kueue's pod webhook does not refuse it (kueue v0.19.2 pkg/controller/jobs/pod/pod_webhook.go
`ValidateUpdate`, lines 218-242: queue name, prebuilt workload, group name and annotations, never
spec.schedulingGates): the pod would start on GPUs while its Workload still waits. So an UPDATE
of a pod that drops that gate is refused unless it comes from Kueue's controller (KUEUE_CONTROLLER).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components import jobset, kuberay, leader_worker_set, trainer
from components.kueue_pods import POD_FRAMEWORK, asks_for_gpus
from facts.admission import cel_list, fail_closed_policy, team_binding


@dataclass(frozen=True)
class Kind:
    group: str
    """"" for the core group."""
    kind: str
    resource: str


JOB, POD = Kind("batch", "Job", "jobs"), Kind("", "Pod", "pods")
JOBSET = Kind("jobset.x-k8s.io", "JobSet", "jobsets")
TRAINJOB = Kind("trainer.kubeflow.org", "TrainJob", "trainjobs")
RAYJOB, RAYCLUSTER, RAYSERVICE = Kind("ray.io", "RayJob", "rayjobs"), Kind("ray.io", "RayCluster", "rayclusters"), Kind("ray.io", "RayService", "rayservices")
LEADERWORKERSET = Kind("leaderworkerset.x-k8s.io", "LeaderWorkerSet", "leaderworkersets")
LWS_FRAMEWORK = "leaderworkerset.x-k8s.io/leaderworkerset"
"""kueue v0.19.2 pkg/controller/jobs/leaderworkerset/leaderworkerset_controller.go FrameworkName: one
Workload per group, pod sets `leader` (1) and `worker` (size-1) (leaderworkerset_reconciler.go podSets)."""

FRAMEWORK_KINDS = {
    "batch/job": JOB,
    "jobset.x-k8s.io/jobset": JOBSET,
    "trainer.kubeflow.org/trainjob": TRAINJOB,
    "ray.io/rayjob": RAYJOB,
    "ray.io/raycluster": RAYCLUSTER,
    "ray.io/rayservice": RAYSERVICE,
    LWS_FRAMEWORK: LEADERWORKERSET,
    POD_FRAMEWORK: POD,
}
"""Kueue's framework names and the kind each manages (kueue v0.19.2 pkg/controller/jobs/*/
*_controller.go `gvk`). Kueue compares an owner's exact apiVersion; we compare its group, so an
owner of another version of the kind is refused too."""

WALKED_KINDS = (
    Kind("apps", "Deployment", "deployments"),
    Kind("apps", "ReplicaSet", "replicasets"),
    Kind("apps", "StatefulSet", "statefulsets"),
    JOB,
    JOBSET,
    RAYCLUSTER,
    RAYJOB,
    RAYSERVICE,
    TRAINJOB,
)
"""The kinds Kueue walks through (integrationmanager.go isKnownOwner: every registered
integration, and ReplicaSet) of which the platform serves the API, LeaderWorkerSet too where it is
installed (walked_kinds); Kueue's other integrations (AppWrapper, MPIJob, Kubeflow's v1 jobs,
SparkApplication) have no CRD here."""


def walked_kinds(frameworks: tuple[str, ...]) -> tuple[Kind, ...]:
    return (*WALKED_KINDS, LEADERWORKERSET) if LWS_FRAMEWORK in frameworks else WALKED_KINDS

KUBE_CONTROLLER_MANAGER = "system:kube-controller-manager"
"""kube-controller-manager's own identity: its controllers use it when it runs without
--use-service-account-credentials (kubeadm, so kind, sets the flag: each controller then has
its own service account, kubernetes/kubernetes cmd/kube-controller-manager/app
ClientBuilder.ClientOrDie("job-controller"))."""
JOB_CONTROLLER = "system:serviceaccount:kube-system:job-controller"
"""Creates the pods of Jobs (a JobSet's, a RayJob's submitter)."""


def _account(namespace: str, name: str) -> str:
    return f"system:serviceaccount:{namespace}:{name}"


JOBSET_CONTROLLER = _account(jobset.NAMESPACE, "jobset-controller")
"""Creates a JobSet's Jobs (jobset chart 0.12.0 templates/controller/deployment.yaml
serviceAccountName, release `jobset`: the dev render's Deployment jobset-controller)."""
KUBERAY_OPERATOR = _account(kuberay.NAMESPACE, "kuberay-operator")
"""Creates a RayCluster's pods, a RayJob's and RayService's RayClusters, a RayJob's submitter Job
(kuberay-operator chart 1.7.0 templates/deployment.yaml serviceAccountName, release
`kuberay-operator`)."""
TRAINER_CONTROLLER = _account(trainer.NAMESPACE, "kubeflow-trainer-controller-manager")
"""Creates a TrainJob's JobSet (kubeflow-trainer chart 2.3.0 templates/manager/deployment.yaml
serviceAccountName, release `kubeflow-trainer`)."""

LWS_CONTROLLER = _account(leader_worker_set.NAMESPACE, "lws-controller-manager")
"""Creates a LeaderWorkerSet's leader StatefulSet (owner: the LeaderWorkerSet) and each group's
worker StatefulSet (owner: the leader pod) (lws chart v0.8.0 templates/rbac/serviceaccount.yaml
`{{ include "lws.fullname" . }}-controller-manager`, release `lws`: components/leader_worker_set.py)."""

KUEUE_CONTROLLER = _account("kueue-system", "kueue-controller-manager")
"""Lifts the admission gate once a pod's Workload is admitted (kueue chart 0.19.2
templates/manager/manager.yaml serviceAccountName `{{ include "kueue.fullname" . }}-controller-manager`,
release `kueue` in components/kueue.py NAMESPACE, which imports this module)."""
ADMISSION_GATE_NAME = "kueue.x-k8s.io/admission"
"""Kueue's scheduling gate on the pods it queues (kueue v0.19.2 pkg/controller/jobs/pod/constants/constants.go SchedulingGateName)."""

OWNED_GPU_PODS = "kueue-owned-gpu-pods"
OWNED_WORKLOADS = "kueue-owned-workloads"
ADMISSION_GATE = "kueue-admission-gate"
POLICIES = (OWNED_GPU_PODS, OWNED_WORKLOADS, ADMISSION_GATE)


def controllers(kuberay_chart: bool, leader_worker_set: bool = False) -> tuple[str, ...]:
    """Who may make an object whose controller Kueue manages. GKE's managed Ray operator runs
    as an identity GKE does not document: with it, `managed_kinds` leaves the Ray kinds out."""
    return (
        KUBE_CONTROLLER_MANAGER,
        JOB_CONTROLLER,
        JOBSET_CONTROLLER,
        TRAINER_CONTROLLER,
        *((KUBERAY_OPERATOR,) if kuberay_chart else ()),
        *((LWS_CONTROLLER,) if leader_worker_set else ()),
    )


def managed_kinds(frameworks: tuple[str, ...], kuberay_chart: bool) -> tuple[Kind, ...]:
    kinds = tuple(FRAMEWORK_KINDS[name] for name in frameworks)
    return tuple(k for k in kinds if kuberay_chart or k.group != "ray.io")


def _managed(ref: str, kinds: tuple[Kind, ...]) -> str:
    """True for an ownerReference `ref` that names a controller of one of `kinds`."""
    group = f"({ref}.apiVersion.contains('/') ? {ref}.apiVersion.split('/')[0] : '')"
    return f"has({ref}.controller) && {ref}.controller && ({group} + '/' + {ref}.kind) in {cel_list([f'{k.group}/{k.kind}' for k in kinds])}"


def _new_managed_owner(kinds: tuple[Kind, ...]) -> str:
    """A controller reference of a managed kind the object had not before (every one on CREATE)."""
    refs = "object.metadata.ownerReferences"
    had = "(has(oldObject.metadata.ownerReferences) && oldObject.metadata.ownerReferences.exists(o, o.uid == r.uid))"
    return f"has({refs}) && {refs}.exists(r, {_managed('r', kinds)} && (request.operation == 'CREATE' || !{had}))"


def _owner_text() -> str:
    ref = "object.metadata.ownerReferences.filter(r, has(r.controller) && r.controller)[0]"
    return f"{ref}.kind + ' ' + {ref}.name"


def _rules(kinds: tuple[Kind, ...]) -> list[dict[str, Any]]:
    return [
        {"apiGroups": [k.group], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": [k.resource]} for k in kinds
    ]


def _policy(name: str, rules: list[dict[str, Any]], conditions: list[dict[str, str]], allowed: tuple[str, ...], what: str) -> dict[str, Any]:
    message = (
        f"Kueue does not queue {what} whose controller is a job it manages: it takes the owner's controller to have made it, "
        "inside the owner's quota. Made by anyone else it would take GPUs no queue counts. Submit the work through the team's "
        "queue instead: a TrainJob, RayJob or RayCluster of your own (the Kubeflow SDK makes them), or a pod without that "
        "ownerReference (Kueue queues it in the namespace's default LocalQueue)"
    )
    return fail_closed_policy(
        name,
        rules,
        conditions,
        [
            {
                "expression": f"request.userInfo.username in {cel_list(allowed)}",
                "message": message,
                "messageExpression": f"object.kind + ' ' + object.metadata.name + ' (controller: ' + {_owner_text()} + '): ' + "
                + "'" + message.replace("'", "\\'") + "'",
                "reason": "Forbidden",
            }
        ],
    )


def _has_gate(pod: str) -> str:
    return f"(has({pod}.spec.schedulingGates) && {pod}.spec.schedulingGates.exists(g, g.name == '{ADMISSION_GATE_NAME}'))"


def gate_policy() -> dict[str, Any]:
    """Only Kueue's controller may lift its admission gate; any other change to a gated pod passes."""
    message = (
        f"only Kueue removes the scheduling gate {ADMISSION_GATE_NAME}, when the team's queue admits the pod: "
        "removed by anyone else the pod would take GPUs no queue counts. Wait for the queue; "
        "`kubectl get workloads` in the namespace shows why the pod waits (its QuotaReserved condition and Pending events)"
    )
    return fail_closed_policy(
        ADMISSION_GATE,
        [{"apiGroups": [""], "apiVersions": ["*"], "operations": ["UPDATE"], "resources": ["pods"]}],
        [{"name": "removes-kueues-admission-gate", "expression": f"{_has_gate('oldObject')} && !{_has_gate('object')}"}],
        [
            {
                "expression": f"request.userInfo.username == '{KUEUE_CONTROLLER}'",
                "message": message,
                "messageExpression": "'Pod ' + object.metadata.name + ': ' + '" + message.replace("'", "\\'") + "'",
                "reason": "Forbidden",
            }
        ],
    )


def policies(frameworks: tuple[str, ...], kuberay_chart: bool) -> list[dict[str, Any]]:
    """The three policies (empty when no framework Kueue runs here owns pods)."""
    kinds = managed_kinds(frameworks, kuberay_chart)
    if not kinds:
        return []
    allowed = controllers(kuberay_chart, LWS_FRAMEWORK in frameworks)
    owner = {"name": "a-new-controller-kueue-manages", "expression": _new_managed_owner(kinds)}
    gpus = {"name": "asks-for-gpus", "expression": asks_for_gpus("object")}
    return [
        _policy(OWNED_GPU_PODS, _rules((POD,)), [owner, gpus], allowed, "a pod asking for GPUs"),
        _policy(OWNED_WORKLOADS, _rules(walked_kinds(frameworks)), [owner], allowed, "a workload"),
        *([gate_policy()] if POD_FRAMEWORK in frameworks else []),
    ]


def bindings(namespace: str) -> list[dict[str, Any]]:
    """The policies in force in one team namespace."""
    return [team_binding(name, namespace) for name in POLICIES]
