"""Labels and annotations that more than one module writes or reads: an upstream project's
name for each, with where it is defined. Imports nothing."""

from __future__ import annotations

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""Set by the API server on every namespace to its name (Kubernetes >= 1.22,
NamespaceDefaultLabelName): what selects one namespace by name."""

WORKLOAD_IDENTITY_ANNOTATION = "iam.gke.io/gcp-service-account"
"""GKE Workload Identity: a Kubernetes service account names the Google service account it
acts as (cloud.google.com/kubernetes-engine/docs/how-to/workload-identity)."""

# Kueue v0.19.2: the queue label (pkg/controller/constants/constants.go QueueLabel), the
# per-job elastic opt-in (pkg/constants/constants.go ElasticJobAnnotation, value "true" in
# pkg/workloadslicing/workloadslicing.go) and the scheduling gate an elastic job's pod
# templates carry (apis/kueue/v1beta2/constants.go ElasticJobSchedulingGate).
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
"""The label that names a workload's WorkloadPriorityClass (kueue v0.19.2 pkg/controller/constants/constants.go WorkloadPriorityClassLabel)."""
KUEUE_ELASTIC_JOB_ANNOTATION = "kueue.x-k8s.io/elastic-job"
KUEUE_ELASTIC_JOB_GATE = "kueue.x-k8s.io/elastic-job"
KUEUE_DEFAULT_LOCAL_QUEUE = "default"
"""A job in a namespace whose LocalQueue has this name gets that queue without a queue label
(Kueue v0.19.2 LocalQueueDefaulting, on by default): every team's LocalQueue is named so."""


def namespace_selector(namespace: str) -> dict[str, dict[str, str]]:
    """The label selector of one namespace, by its name."""
    return {"matchLabels": {NAMESPACE_NAME_LABEL: namespace}}


PROFILE_NAMESPACE_LABEL = ("app.kubernetes.io/part-of", "kubeflow-profile")
"""The label every team (profile) namespace carries: we write it on the namespace we create
(components/profiles/namespace.py NAMESPACE_LABELS), and Kubeflow's profile controller labels the
namespaces of its Profiles so too (kubeflow/dashboard components/profile-controller, its
namespace labels)."""

NOTEBOOK_STOPPED_ANNOTATION = "kubeflow-resource-stopped"
"""A Notebook with this annotation runs no pod: the notebook controller scales its StatefulSet to
0 (kubeflow/notebooks v1.11.0 components/notebook-controller/controllers/notebook_controller.go
generateStatefulSet), and the notebook UI shows it stopped and starts it again by removing it
(components/crud-web-apps/jupyter/backend/apps/common/status.py STOP_ANNOTATION). Its value is
the time it was stopped, as the UI writes it: UTC `%Y-%m-%dT%H:%M:%SZ` (components/crud-web-apps/
jupyter/backend/apps/common/routes/patch.py, a JSON merge patch; None starts it again)."""

IDLE_RECLAIM_LABEL = "mlplatform.dev/idle-reclaim"
"""On a Notebook, value `exempt`: the idle reclaim (components/idle_reclaim.py) never stops it."""
IDLE_RECLAIM_EXEMPT = "exempt"


def namespace_label_selector(label: tuple[str, str]) -> dict[str, dict[str, str]]:
    """The label selector of the namespaces that carry `label` (key, value)."""
    return {"matchLabels": {label[0]: label[1]}}


INFERENCE_SERVICE_LABEL = "serving.kserve.io/inferenceservice"
"""The label KServe puts on every pod of an InferenceService, its name the value (kserve/kserve
v0.20.0 pkg/constants/constants.go InferenceServicePodLabelKey; components/predictor.go buildObjectMeta)."""
