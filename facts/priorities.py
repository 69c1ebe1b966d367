"""The platform's workload priorities: three Kueue WorkloadPriorityClasses, the label a job names
one with, and which class each kind of workload gets when it names none. Imports nothing.

How Kueue reads them (kubernetes-sigs/kueue v0.19.2):
- A job names a WorkloadPriorityClass with the label `kueue.x-k8s.io/priority-class` on the object
  Kueue manages (the TrainJob, the RayCluster, the pod): pkg/controller/constants/constants.go
  WorkloadPriorityClassLabel; pkg/controller/jobframework/utils.go WorkloadPriorityClassName reads
  it from the job's own labels, never from its pod templates.
- Without the label the Workload's priority is the Kubernetes PriorityClass its pod templates name
  (`priorityClassName`), else the cluster's globalDefault PriorityClass, else 0
  (pkg/controller/jobframework/reconciler.go ExtractPriority, extractPriorityFromPodSets;
  pkg/util/priority/priority.go GetPriorityFromPriorityClass, getDefaultPriority). A
  ClusterTrainingRuntime can give its pod templates a `priorityClassName` but cannot label the
  TrainJob, so the runtimes' default is a Kubernetes PriorityClass of the same name and value as
  the WorkloadPriorityClass (RUNTIME_PRIORITY_CLASS). Kueue's own defaulting of a missing label
  (feature gate WorkloadPriorityClassDefaulting, pkg/controller/jobframework/defaults.go
  ApplyDefaultWorkloadPriorityClass) is alpha and off in 0.19 (pkg/features/kube_features.go:887-889)
  and names one class, `default`, for every kind: not used.
- The label may be added only while the job is suspended and never removed
  (pkg/controller/jobframework/validation.go ValidateUpdateForWorkloadPriorityClassName): a data
  scientist sets it when creating the job. A label naming no WorkloadPriorityClass leaves the job
  without a Workload (GetPriorityFromWorkloadPriorityClass returns the NotFound error).
- Higher value wins: within a team's ClusterQueue a pending workload preempts admitted ones of
  lower priority (`withinClusterQueue: LowerPriority`), and preemption candidates of a queue are
  taken lowest priority first, newest first (site/content/en/docs/concepts/preemption.md,
  "Candidates"). Changing a class's value does not change Workloads already created
  (apis/kueue/v1beta2/workloadpriorityclass_types.go `value`).
"""

from __future__ import annotations

from dataclasses import dataclass

PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
"""The label that names a job's WorkloadPriorityClass (Kueue v0.19.2
pkg/controller/constants/constants.go:48)."""


@dataclass(frozen=True)
class PriorityClass:
    """One of the platform's classes: a Kueue WorkloadPriorityClass (and, for the runtimes'
    default, a Kubernetes PriorityClass of the same name and value)."""

    name: str
    value: int
    description: str


INTERACTIVE = PriorityClass(
    "interactive",
    1000,
    "Someone is waiting on it: GPU notebooks and serving replicas. Preempts batch and preemptible work of its own "
    "team when the team's quota is full.",
)
BATCH = PriorityClass(
    "batch",
    100,
    "Training runs and pipeline steps: the default for TrainJobs and pipelines. Preempted by interactive work of its "
    "own team; should checkpoint (docs/teams.md, \"Preemption-safe jobs\").",
)
PREEMPTIBLE = PriorityClass(
    "preemptible",
    -100,
    "Best effort: may borrow whatever the cohort leaves idle and is preempted first, below any work that names no "
    "class (priority 0).",
)
CLASSES = (INTERACTIVE, BATCH, PREEMPTIBLE)
BY_NAME = {c.name: c for c in CLASSES}

RUNTIME_PRIORITY_CLASS = BATCH
"""The Kubernetes PriorityClass the training runtimes' pod templates name, so a TrainJob that names
no class runs at batch priority (see the module docstring). Its `preemptionPolicy` is Never: Kueue
decides preemption, the kube-scheduler never evicts a pod for it."""
RUNTIME_PREEMPTION_POLICY = "Never"

NOTEBOOK_PRIORITY = INTERACTIVE
"""GPU notebooks: their pods carry the label (the team's PodDefault), Kueue's pod integration reads
it from the pod."""
NOTEBOOK_PRIORITY_POD_DEFAULT = "interactive-priority"
"""The PodDefault (and its selector's label, the notebook form's configuration, preselected) that
labels a notebook's pod with NOTEBOOK_PRIORITY (components/profiles/preemption.py)."""
PIPELINE_STEP_PRIORITY = BATCH
"""GPU pipeline steps (plain pods under Kueue's pod integration)."""
RAY_CLUSTER_PRIORITY = INTERACTIVE
"""The team's RayCluster: long-lived, shared by the team's notebooks and Ray Serve; preempting it
stops every Ray job and Serve application on it at once."""
SERVING_PRIORITY = INTERACTIVE
"""Serving replicas (the serving helpers name it)."""
