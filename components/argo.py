"""Argo's configuration in the Kubeflow Pipelines tree (third-party/argo): what the platform changes in
the workflow controller's ConfigMap, the pod sizes and labels of every pipeline step."""

from __future__ import annotations

import copy
from typing import Any

import yaml

from facts.pod_overhead import ARGO_EXECUTOR_RESOURCES
from facts.priorities import PIPELINE_STEP_PRIORITY, PRIORITY_LABEL
from plumbing.base import matches

WORKFLOW_CONTROLLER_CONFIG = "workflow-controller-configmap"
"""Argo's configuration in the Pipelines tree (third-party/argo), read by the workflow controller
named by its `--configmap` flag; the controller watches it and applies a change without a restart
(argoproj/argo-workflows v3.7.3 workflow/controller/controller.go:459-490 runConfigMapWatcher ->
UpdateConfig)."""
EXECUTOR_KEY = "executor"


def with_executor_resources(props: dict[str, Any]) -> dict[str, Any] | None:
    """Argo's configuration with requests and limits for its executor containers (the `init` and
    `wait` of every pipeline pod: facts/pod_overhead.py ARGO_EXECUTOR_RESOURCES), which the tree
    leaves without: each then took the team namespace's LimitRange default, and a running CPU step
    with its driver pod cost about 3 CPUs and 6Gi of the team's quota."""
    if not matches(props, "ConfigMap", WORKFLOW_CONTROLLER_CONFIG):
        return None
    data = props.get("data") or {}
    executor = yaml.safe_load(data.get(EXECUTOR_KEY) or "") or {}
    executor["resources"] = copy.deepcopy(ARGO_EXECUTOR_RESOURCES)
    return {**props, "data": {**data, EXECUTOR_KEY: yaml.safe_dump(executor, sort_keys=False)}}


def with_step_priority(props: dict[str, Any]) -> dict[str, Any] | None:
    """Argo's `workflowDefaults` labelling every workflow's pods `batch`, the class Kueue reads from a GPU
    step's pod (facts/priorities.py); Argo puts them under a workflow's own values and a template's labels
    over them (v3.7.3 workflow/controller/controller.go:1167-1175, workflowpod.go:749-765 addMetadata), so a
    step's own class (kfp.kubernetes.add_pod_label: KFP's argocompiler container.go extendPodMetadata) stays."""
    if not matches(props, "ConfigMap", WORKFLOW_CONTROLLER_CONFIG):
        return None
    defaults = yaml.safe_load((props.get("data") or {}).get("workflowDefaults") or "") or {}
    defaults.setdefault("spec", {}).setdefault("podMetadata", {}).setdefault("labels", {})[PRIORITY_LABEL] = PIPELINE_STEP_PRIORITY.name
    return {**props, "data": {**(props.get("data") or {}), "workflowDefaults": yaml.safe_dump(defaults, sort_keys=False)}}
