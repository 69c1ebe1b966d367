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
KUEUE_ELASTIC_JOB_ANNOTATION = "kueue.x-k8s.io/elastic-job"
KUEUE_ELASTIC_JOB_GATE = "kueue.x-k8s.io/elastic-job"
KUEUE_DEFAULT_LOCAL_QUEUE = "default"
"""A job in a namespace whose LocalQueue has this name gets that queue without a queue label
(Kueue v0.19.2 LocalQueueDefaulting, on by default): every team's LocalQueue is named so."""


def namespace_selector(namespace: str) -> dict[str, dict[str, str]]:
    """The label selector of one namespace, by its name."""
    return {"matchLabels": {NAMESPACE_NAME_LABEL: namespace}}
