"""GPU notebooks and pipeline steps are admitted by the team's ClusterQueue; CPU-only ones are
not (components/kueue_pods.py). Judged on the dev stack's full render: Kueue's manager
configuration runs the `pod` integration in the team namespaces, and its pod webhooks are called
for a pod exactly when their match condition holds, evaluated here by CEL's own implementation
(cel-expr-python) on pods shaped as the notebook controller and Argo make them."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from cel_expr_python import cel

from components.kueue import CONFIG_MAP, CONFIG_MAP_KEY
from components.kueue import NAMESPACE as KUEUE_NAMESPACE
from components.kueue_pods import (
    GPU_POD_CONDITION,
    MUTATING_CONFIGURATION,
    POD_FRAMEWORK,
    POD_WEBHOOKS,
    VALIDATING_CONFIGURATION,
)
from facts.labels import KUEUE_QUEUE_LABEL, NAMESPACE_NAME_LABEL
from tests.support import mirror
from tests.support.renders import edited, rendered, violations, with_objects
from tooling import check as lint
from tooling.check.kueue import gpu_pods_queued
from tooling.fullrender import FullRender, Rendered

pytestmark = mirror.needed

ENV = cel.NewEnv(variables=dict.fromkeys(("object", "oldObject", "request"), cel.Type.DYN))
TEAMS = ("vision", "nlp", "research")


def _object(render: FullRender, kind: str, name: str) -> dict[str, Any]:
    [found] = [o.obj for o in render.objects if o.key[1] == kind and o.key[3] == name]
    return found


def _webhook(render: FullRender, configuration: str, kind: str, name: str) -> dict[str, Any]:
    return next(w for w in _object(render, kind, configuration)["webhooks"] if w["name"] == name)


def _calls_kueue(webhook: dict[str, Any], pod: dict[str, Any]) -> bool:
    """Whether the API server calls this webhook for `pod` (every match condition holds)."""
    data = {"object": pod, "oldObject": None, "request": {"operation": "CREATE"}}
    results = [ENV.compile(c["expression"]).eval(data=data) for c in webhook.get("matchConditions") or []]
    assert all(r.type() != cel.Type.ERROR for r in results), [r.value() for r in results]
    return all(r.plain_value() is True for r in results)


def notebook_pod(gpus: int | None) -> dict[str, Any]:
    """A notebook's pod as the notebook controller makes it from the form's Notebook: the form
    sets only limits for GPUs (kubeflow/notebooks v1.11.0 crud-web-apps/jupyter/backend/apps/
    common/form.py set_notebook_gpus), the StatefulSet owns the pod (notebook_controller.go)."""
    limits: dict[str, Any] = {"cpu": "0.6", "memory": "1.2Gi"}
    if gpus is not None:
        limits["nvidia.com/gpu"] = str(gpus)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "analysis-0",
            "namespace": "vision",
            "labels": {"statefulset": "analysis", "notebook-name": "analysis", "team-pod-defaults": "true"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "analysis", "controller": True}],
        },
        "spec": {
            "containers": [
                {"name": "analysis", "image": "notebook:gpu", "resources": {"requests": {"cpu": "0.5", "memory": "1Gi"}, "limits": limits}},
                {"name": "istio-proxy", "image": "proxyv2", "resources": {"requests": {"cpu": "10m", "memory": "40Mi"}}},
            ],
        },
    }


def pipeline_step_pod(gpus: int | None) -> dict[str, Any]:
    """A Kubeflow Pipelines step as Argo runs it: the `main` container with the driver's pod spec
    patch (an accelerator becomes resources.limits), Argo's `wait` sidecar and `init` container."""
    main: dict[str, Any] = {"name": "main", "image": "python:3.12"}
    if gpus is not None:
        main["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "train-xyz-system-container-impl-123",
            "namespace": "nlp",
            "labels": {"workflows.argoproj.io/workflow": "train-xyz"},
            "ownerReferences": [{"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "name": "train-xyz", "controller": True}],
        },
        "spec": {
            "initContainers": [{"name": "init", "image": "argoexec"}],
            "containers": [{"name": "wait", "image": "argoexec"}, main],
        },
    }


def dra_pod() -> dict[str, Any]:
    """A pod that gets its GPUs through DRA, as a DRA pool's runtime variant asks (runtimes/dra.py):
    a pod claim made from the pool's ResourceClaimTemplate, the container using it; no nvidia.com/gpu."""
    pod = notebook_pod(None)
    pod["spec"]["resourceClaims"] = [{"name": "gpus", "resourceClaimTemplateName": "l4-gpus"}]
    pod["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpus"}]
    return pod


@pytest.fixture(scope="module")
def dev() -> FullRender:
    return rendered("dev")


def test_kueue_runs_the_pod_integration_in_the_team_namespaces_only(dev: FullRender) -> None:
    config = yaml.safe_load(next(o.obj for o in dev.objects if o.key[2:] == (KUEUE_NAMESPACE, CONFIG_MAP))["data"][CONFIG_MAP_KEY])
    assert POD_FRAMEWORK in config["integrations"]["frameworks"]
    selector = config["managedJobsNamespaceSelector"]
    namespaces = lint.Platform(dev).namespaces
    assert all(lint.selects(selector, namespaces[team]) for team in TEAMS)
    assert not any(lint.selects(selector, namespaces.get(ns, {NAMESPACE_NAME_LABEL: ns})) for ns in ("kubeflow", "kube-system", KUEUE_NAMESPACE, "monitoring"))
    for configuration, kind in ((MUTATING_CONFIGURATION, "MutatingWebhookConfiguration"), (VALIDATING_CONFIGURATION, "ValidatingWebhookConfiguration")):
        webhook = _webhook(dev, configuration, kind, POD_WEBHOOKS[0] if kind.startswith("Mutating") else POD_WEBHOOKS[1])
        assert webhook["failurePolicy"] == "Fail"
        assert webhook["namespaceSelector"] == selector


@pytest.mark.parametrize("webhook_name", POD_WEBHOOKS)
@pytest.mark.parametrize(
    ("case", "pod", "queued"),
    [
        ("GPU notebook", notebook_pod(1), True),
        ("CPU-only notebook", notebook_pod(None), False),
        ("GPU pipeline step", pipeline_step_pod(2), True),
        ("CPU-only pipeline step", pipeline_step_pod(None), False),
        ("GPUs through a DRA claim", dra_pod(), True),
    ],
)
def test_kueue_sees_a_pod_exactly_when_it_asks_for_gpus(dev: FullRender, webhook_name: str, case: str, pod: dict[str, Any], queued: bool) -> None:
    kind, configuration = (
        ("MutatingWebhookConfiguration", MUTATING_CONFIGURATION) if webhook_name == POD_WEBHOOKS[0] else ("ValidatingWebhookConfiguration", VALIDATING_CONFIGURATION)
    )
    webhook = _webhook(dev, configuration, kind, webhook_name)
    assert [c["name"] for c in webhook["matchConditions"]] == [GPU_POD_CONDITION]
    assert _calls_kueue(webhook, pod) is queued, case


def test_a_gpu_in_an_init_container_or_an_explicit_queue_label_is_kueues_too(dev: FullRender) -> None:
    webhook = _webhook(dev, MUTATING_CONFIGURATION, "MutatingWebhookConfiguration", POD_WEBHOOKS[0])
    init_gpu = pipeline_step_pod(None)
    init_gpu["spec"]["initContainers"][0]["resources"] = {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}
    assert _calls_kueue(webhook, init_gpu)
    opted_in = notebook_pod(None)
    opted_in["metadata"]["labels"][KUEUE_QUEUE_LABEL] = "default"
    assert _calls_kueue(webhook, opted_in)
    unlabelled = notebook_pod(None)
    del unlabelled["metadata"]["labels"]
    assert not _calls_kueue(webhook, unlabelled)


def test_team_quota_leaves_gpus_to_the_queue_and_the_rule_agrees(dev: FullRender) -> None:
    for team in TEAMS:
        assert "requests.nvidia.com/gpu" not in _object(dev, "Profile", team)["spec"]["resourceQuotaSpec"]["hard"]
        assert gpu_pods_queued(lint.Platform(dev), team)
    assert violations(dev, "quota-admits-queue") == []


def test_quota_rule_catches_gpu_pods_neither_queued_nor_limited(dev: FullRender) -> None:
    """Kueue's configuration without the pod integration (an overlay that replaced the frameworks,
    say): GPU notebooks then take GPUs the ClusterQueue counts as free."""

    def without_pods(obj: dict[str, Any]) -> None:
        config = yaml.safe_load(obj["data"][CONFIG_MAP_KEY])
        config["integrations"]["frameworks"].remove(POD_FRAMEWORK)
        obj["data"][CONFIG_MAP_KEY] = yaml.safe_dump(config)

    found = violations(edited(dev, "ConfigMap", CONFIG_MAP, without_pods), "quota-admits-queue")
    assert {v.object for v in found} == {f"Profile.kubeflow.org {team}" for team in TEAMS}
    assert all(
        v.message.startswith("neither its namespace's ResourceQuota nor Kueue limits its GPU pods") for v in found
    )


def pod_webhook_configuration(name: str) -> dict[str, Any]:
    """A webhook configuration that mutates every pod created (the Spark operator's shape: no
    namespaceSelector, spark-operator-webhook's `mutate--v1-pod.sparkoperator.k8s.io`)."""
    rule = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
    webhook = {
        "name": f"pods.{name}.example.com",
        "rules": [rule],
        "failurePolicy": "Fail",
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [webhook],
    }


@pytest.mark.parametrize(
    ("name", "caught"), [("spark-operator-webhook", True), ("zz-gpu-injector", True), ("a-gpu-injector", False)]
)
def test_kueue_rule_catches_a_pod_webhook_called_after_kueues(dev: FullRender, name: str, caught: bool) -> None:
    """The API server calls mutating webhook configurations in name order and Kueue's once: one
    sorting after `kueue-mutating-webhook-configuration` could add GPUs Kueue never queues (the
    Spark operator's spec.executor.gpu), unless a policy refuses them (components/spark.py: not in dev)."""
    added = with_objects(dev, lambda objects: [*objects, Rendered(pod_webhook_configuration(name), "test", "", True)])
    found = [v for v in violations(added, "kueue") if name in v.object]
    assert bool(found) is caught
    assert all("after Kueue's pod webhook" in v.message and sorted(TEAMS)[0] in v.message for v in found)
    assert [v for v in violations(dev, "kueue") if "after Kueue's pod webhook" in v.message] == []
