"""GPU pods under Kueue: a team's notebooks and pipeline steps that ask for GPUs wait in the
team's queue like its TrainJobs; CPU-only ones start at once.

How, read at kubernetes-sigs/kueue v0.19.2:
- Kueue's `pod` integration (config `integrations.frameworks`) manages plain pods: its mutating
  webhook (pkg/controller/jobs/pod/pod_webhook.go `Default`) gives a pod of a namespace whose
  `default` LocalQueue exists that queue (LocalQueueDefaulting), labels it
  `kueue.x-k8s.io/managed`, adds a finalizer and the scheduling gate `kueue.x-k8s.io/admission`;
  the pod controller creates a Workload from the pod as stored (its sidecars and init containers
  counted) and lifts the gate once the team's ClusterQueue admits it (pod_controller.go `Run`).
  A pod whose owner Kueue already manages (a TrainJob's JobSet, a RayCluster) is left to that
  owner (`FindAncestorJobManagedByKueue`), so the runtimes and Ray keep their own workloads.
  A notebook's pod (owner: a StatefulSet; the `statefulset` integration stays off) and a
  pipeline step's pod (owner: an Argo Workflow, which Kueue does not know: kueue#1602; Kueue's
  own Argo guide runs steps as plain pods, site/content/en/docs/tasks/run/external_workloads/
  argo_workflow.md) are each one Workload.
- v1beta2 has no `podOptions` (apis/config/v1beta1/configuration_conversion.go drops it) and no
  per-pod opt-out: with the pod integration on, LocalQueueDefaulting would queue *every* pod of
  a team namespace. So Kueue's pod webhooks are called only for pods that ask for GPUs, through
  `nvidia.com/gpu` or a DRA resource claim (or name a queue themselves): a `matchConditions` CEL expression on the chart's `mpod.kb.io` and
  `vpod.kb.io` (admissionregistration.k8s.io/v1 webhook matchConditions, GA since Kubernetes
  1.30, so on every GKE minor the platform allows and on kind). A CPU-only pod never reaches
  Kueue: not labelled, not gated, started at once, counted by the namespace's ResourceQuota as
  before. No webhook or mutating policy of ours: the label is Kueue's own defaulting. (A
  MutatingAdmissionPolicy could label GPU pods instead, but it is GA only from Kubernetes 1.36,
  KEP-3962: beta and off by default in 1.34 and 1.35, the minors GKE's Stable and Regular
  channels create clusters at, facts/support.py; and Kueue's defaulting would still queue the
  CPU-only pods its webhook sees.)
- The notebook form's GPU pool choice (components/kubeflow.py, a required node affinity per pool)
  is what Kueue's flavor assignment follows; a GPU notebook without it gets the first pool flavor
  with room, and Kueue adds that flavor's node labels and tolerations (the pool's own taints';
  GKE adds the GPU taint's to a pod asking for nvidia.com/gpu: components/kueue.py
  flavor_tolerations) to the pod when it lifts the gate. The team ClusterQueues preempt nothing (no `preemption`), so an admitted notebook
  is never stopped for a job; `waitForPodsReady` applies to it as to a job (a notebook not
  ready within the timeout is deleted by Kueue and its StatefulSet queues a new pod).
- `managedJobsNamespaceSelector` (apis/config/v1beta2/configuration_types.go: a strong exemption
  for pod-based integrations) selects the team namespaces; the chart writes it as those two
  webhooks' namespaceSelector (charts/kueue/templates/webhook/manifests.yaml), so a Kueue outage
  (failurePolicy Fail once `pod` is a framework) can only hold back GPU pods of team namespaces.

What a data scientist sees (kubeflow/notebooks v1.11.0): the notebook controller copies the pod's
conditions into the Notebook's status and re-emits the pod's events as the Notebook's
(notebook_controller.go createNotebookStatus, nbNameFromInvolvedObject); the notebook UI shows a
gated notebook as "SchedulingGated" (apps/common/status.py get_status_from_conditions) and its
events list Kueue's `CreatedWorkload` (the Workload's name) and, once admitted, `Started`. The
Workload's own `Pending` event and `QuotaReserved` condition say why it waits (pkg/scheduler/
scheduler.go); team members may read Workloads (components/kueue.py WORKLOAD_READER). A stopped
notebook's pod is deleted, Kueue finishes its Workload and the quota is free again.
"""

from __future__ import annotations

from typing import Any

from facts.labels import KUEUE_QUEUE_LABEL, PROFILE_NAMESPACE_LABEL
from facts.node_labels import GPU_RESOURCE
from plumbing.base import matches

POD_FRAMEWORK = "pod"
"""Kueue's plain-pod integration (pkg/controller/jobs/pod, framework name `pod`)."""
MUTATING_CONFIGURATION = "kueue-mutating-webhook-configuration"
VALIDATING_CONFIGURATION = "kueue-validating-webhook-configuration"
"""The chart's webhook configurations, release `kueue` (`{{ include "kueue.fullname" . }}-...`)."""
POD_WEBHOOKS = ("mpod.kb.io", "vpod.kb.io")
"""Kueue's pod webhooks (pod_webhook.go kubebuilder markers): defaulting on CREATE, validation on
CREATE and UPDATE."""
GPU_POD_CONDITION = "gpu-pods-and-queued-pods-only"


def names_gpus(containers: str) -> str:
    resources = "c.resources"
    return (
        f"{containers}.exists(c, has({resources}) && "
        f"((has({resources}.requests) && '{GPU_RESOURCE}' in {resources}.requests) || "
        f"(has({resources}.limits) && '{GPU_RESOURCE}' in {resources}.limits)))"
    )


def asks_for_gpus(pod: str) -> str:
    """CEL: the pod `pod` asks for GPUs, through the device plugin in any container or init
    container (requests or limits: the API server defaults an extended resource's request from its
    limit before admission), or through Dynamic Resource Allocation: any resource claim (the only
    devices the platform offers by claim are the DRA pools' GPUs, facts/dra.py; Kueue counts the
    devices of a claim made from a ResourceClaimTemplate against its deviceClassMappings, kueue
    v0.19.2 pkg/dra/claims.go `GetResourceRequestsForResourceClaimTemplates`, and leaves a pod
    that names a ResourceClaim directly, or a claim of a device class it does not map,
    inadmissible rather than uncounted: site/content/en/docs/concepts/dynamic_resource_allocation.md,
    Limitations)."""
    return (
        f"{names_gpus(f'{pod}.spec.containers')} || "
        f"(has({pod}.spec.initContainers) && {names_gpus(f'{pod}.spec.initContainers')}) || "
        f"(has({pod}.spec.resourceClaims) && size({pod}.spec.resourceClaims) > 0)"
    )


GPU_POD_EXPRESSION = f"(has(object.metadata.labels) && '{KUEUE_QUEUE_LABEL}' in object.metadata.labels) || {asks_for_gpus('object')}"
"""True for a pod that asks for GPUs (asks_for_gpus), or that names a Kueue queue itself (an
explicit opt-in stays Kueue's, as its docs promise)."""


def managed_namespaces() -> dict[str, Any]:
    """Kueue's managedJobsNamespaceSelector: the team namespaces."""
    key, value = PROFILE_NAMESPACE_LABEL
    return {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}


def with_gpu_pods_only(props: dict[str, Any]) -> dict[str, Any] | None:
    """Kueue's webhook configurations with its pod webhooks called only for GPU pods (and pods
    that name a queue); None for other objects."""
    for kind, name in (("MutatingWebhookConfiguration", MUTATING_CONFIGURATION), ("ValidatingWebhookConfiguration", VALIDATING_CONFIGURATION)):
        if matches(props, kind, name):
            break
    else:
        return None
    condition = {"name": GPU_POD_CONDITION, "expression": GPU_POD_EXPRESSION}
    webhooks = [
        {**w, "matchConditions": [*(w.get("matchConditions") or []), condition]} if w.get("name") in POD_WEBHOOKS else w
        for w in props.get("webhooks") or []
    ]
    return {**props, "webhooks": webhooks}
