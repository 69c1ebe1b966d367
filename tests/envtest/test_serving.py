"""Serving's facts the real API server decides (components/serving.py): the rollout KServe writes
from inferenceservice-config is one a Deployment takes; who may mint the team's model-client
tokens; who may deploy and who may only read InferenceServices, through Kubeflow's aggregated
roles as the controller manager aggregates them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client.exceptions import ApiException

from components.profiles.serving import MODEL_CLIENT, token_objects
from components.serving import (
    DEFAULT_ROLLOUT,
    kubeflow_roles,
    replica_bounds_binding,
    replica_bounds_policy,
)
from components.serving_runtimes import gpu_runtimes
from facts.labels import PROFILE_NAMESPACE_LABEL
from tests.envtest.conftest import kept
from tests.support import mirror
from tests.support.apiserver import Cluster, user
from tests.support.pools import FakePool
from tooling.waiting import wait_for

NAMESPACE = "serving-a"
OTHER = "serving-b"


def _namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def _deployment(strategy: dict[str, str]) -> dict[str, Any]:
    """A predictor Deployment as KServe's Standard mode writes one (its rollout strategy's
    values as strings: deployment_reconciler.go applyRolloutStrategyFromConfigmap, intstr.String)."""
    labels = {"app": "isvc.mnist-cnn-predictor"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "mnist-cnn-predictor", "namespace": NAMESPACE},
        "spec": {
            "selector": {"matchLabels": labels},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": strategy},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "kserve-container", "image": "nvcr.io/nvidia/tritonserver:23.05-py3"}]}},
        },
    }


def test_the_no_surge_rollout_is_one_a_deployment_takes_and_a_bare_number_would_not_be(cluster: Cluster) -> None:
    with kept(cluster, [_namespace(NAMESPACE)]):
        assert cluster.apply(_deployment(DEFAULT_ROLLOUT), dry_run=True) in (200, 201)
        with pytest.raises(ApiException) as refused:
            cluster.apply(_deployment({"maxSurge": "0", "maxUnavailable": "1"}), dry_run=True)
        body = str(refused.value.body)
        assert refused.value.status == 422 and "spec.strategy.rollingUpdate.maxSurge" in body and "[0-9]+%" in body


def test_a_teams_members_mint_model_client_tokens_of_their_team_only(cluster: Cluster) -> None:
    ana = {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "ana@acme.com"}
    objects = [_namespace(NAMESPACE), _namespace(OTHER), *token_objects(NAMESPACE, [ana])]
    with kept(cluster, objects):
        def mints(who: str, namespace: str, account: str) -> bool:
            cluster._reviews.clear()  # each question asked afresh
            return cluster.allows(user(who), "create", "serviceaccounts", namespace, subresource="token", name=account)

        # The RBAC authorizer reads Roles through an informer: the binding reaches it a moment after it is stored.
        wait_for("the token Role bound", lambda: [] if mints("ana@acme.com", NAMESPACE, MODEL_CLIENT) else ["ana"], timeout=10, interval=0.1)
        assert not mints("ana@acme.com", NAMESPACE, "default-editor")  # not the notebooks' account
        assert not mints("ana@acme.com", OTHER, MODEL_CLIENT)
        assert not mints("bo@acme.com", NAMESPACE, MODEL_CLIENT)


KUBEFLOW_ROLES = "kubeflow-roles/common_kubeflow-roles_base_cluster-roles.yaml"


@mirror.needed
def test_editors_deploy_and_viewers_read_inference_services_through_kubeflows_roles(cluster: Cluster) -> None:
    """kubeflow-edit and kubeflow-view of the pinned Kubeflow release, with the KServe roles
    aggregated into them by the controller manager; bound in one namespace as the profile
    controller binds contributors."""
    roles = [o for o in yaml.safe_load_all(Path(mirror.MIRROR, KUBEFLOW_ROLES).read_text()) if o and o["kind"] == "ClusterRole"]

    def binding(name: str, role: str, who: str) -> dict[str, Any]:
        return {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": who}],
        }

    objects = [_namespace(NAMESPACE), *roles, *kubeflow_roles(), binding("ed", "kubeflow-edit", "ed@acme.com"), binding("vi", "kubeflow-view", "vi@acme.com")]
    with kept(cluster, objects):
        def may(who: str, verb: str, namespace: str = NAMESPACE) -> bool:
            cluster._reviews.clear()  # each question asked afresh
            return cluster.allows(user(who), verb, "inferenceservices", namespace, group="serving.kserve.io")

        wait_for("the bindings seen by the authorizer", lambda: [] if may("ed@acme.com", "create") and may("vi@acme.com", "get") else ["ed, vi"], timeout=10, interval=0.1)
        assert may("ed@acme.com", "create") and may("ed@acme.com", "delete") and may("ed@acme.com", "get")
        assert not may("ed@acme.com", "create", OTHER)
        assert may("vi@acme.com", "get") and may("vi@acme.com", "list")
        assert not may("vi@acme.com", "create") and not may("vi@acme.com", "patch")


def _kserve_crds(tmp_path: Path) -> list[dict[str, Any]]:
    """The CRDs of the pinned kserve-crd chart, as `helm template` renders them."""
    import subprocess

    from facts.versions import KSERVE_CRD_CHART
    from tooling import tools

    package = Path(mirror.MIRROR, "charts", f"{KSERVE_CRD_CHART.name}-{KSERVE_CRD_CHART.version}.tgz")
    run = subprocess.run([tools.find(tools.HELM), "template", "kserve-crd", str(package)], capture_output=True, text=True, timeout=120, check=True)
    return [o for o in yaml.safe_load_all(run.stdout) if o and o["kind"] == "CustomResourceDefinition"]



@mirror.needed
def test_the_gpu_runtimes_and_the_examples_inference_service_are_valid_under_kserves_crds(cluster: Cluster, tmp_path: Path) -> None:
    """What the platform and the example send, judged by the CRDs of KServe v0.20.0 (schema and
    CEL rules; the controller's webhooks are not there to call)."""
    isvc = {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "mnist-cnn", "namespace": NAMESPACE},
        "spec": {
            "predictor": {
                "minReplicas": 1,
                "maxReplicas": 2,
                "model": {
                    "modelFormat": {"name": "pytorch"},
                    "runtime": "kserve-tritonserver",
                    "storageUri": "pvc://team-models/models",
                    "resources": {"requests": {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "1"}, "limits": {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "1"}},
                },
            }
        },
    }
    runtimes = gpu_runtimes([FakePool("l4", spot=True), FakePool("h100", accelerator="nvidia-h100-80gb")])
    with kept(cluster, [*_kserve_crds(tmp_path), _namespace(NAMESPACE)]):
        for obj in (*runtimes, isvc):
            assert cluster.apply(obj, dry_run=True) in (200, 201), obj["metadata"]["name"]


def _isvc(name: str, replicas: dict[str, int]) -> dict[str, Any]:
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"predictor": {**replicas, "model": {"modelFormat": {"name": "sklearn"}, "storageUri": "pvc://team-models/iris"}}},
    }


@mirror.needed
def test_the_stacks_replica_floor_and_ceiling_hold_for_inference_services_of_team_namespaces(cluster: Cluster, tmp_path: Path) -> None:
    """A floor of 1 and a ceiling of 4, enforced by the API server: an unset minimum is KServe's 1
    and an unset maximum the minimum, as KServe reads them."""
    key, value = PROFILE_NAMESPACE_LABEL
    team = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": {key: value}}}
    objects = [*_kserve_crds(tmp_path), team, replica_bounds_policy(1, 4), replica_bounds_binding()]
    with kept(cluster, objects):
        def refusal(replicas: dict[str, int]) -> str:
            try:
                cluster.apply(_isvc("iris", replicas), dry_run=True)
            except ApiException as error:
                return str(json.loads(error.body)["message"])
            return ""

        # The binding reaches the API server's policy informer a moment after it is stored.
        wait_for("the replica policy in force", lambda: [] if refusal({"minReplicas": 0}) else ["not yet"], timeout=20, interval=0.2)
        assert "spec.predictor.minReplicas 0 is below the platform's floor of 1 replicas" in refusal({"minReplicas": 0})
        assert "spec.predictor.maxReplicas 9 is above the platform's ceiling of 4 replicas" in refusal({"minReplicas": 1, "maxReplicas": 9})
        assert "spec.predictor.maxReplicas 5 is above" in refusal({"minReplicas": 5})  # no maximum: the minimum's
        assert refusal({}) == "" and refusal({"minReplicas": 2, "maxReplicas": 4}) == ""


def _keda_crds() -> list[dict[str, Any]]:
    """The ScaledObject CRD of the pinned KEDA chart, as `helm template` renders it."""
    import subprocess

    from facts.versions import KEDA_CHART
    from tooling import tools

    package = Path(mirror.MIRROR, "charts", f"{KEDA_CHART.name}-{KEDA_CHART.version}.tgz")
    run = subprocess.run([tools.find(tools.HELM), "template", "keda", str(package)], capture_output=True, text=True, timeout=120, check=True)
    return [o for o in yaml.safe_load_all(run.stdout) if o and o["kind"] == "CustomResourceDefinition" and o["spec"]["names"]["kind"] == "ScaledObject"]


@mirror.needed
def test_a_model_that_follows_its_load_down_to_zero_is_taken_off_prod_and_kedas_scaled_object_of_it_too(cluster: Cluster, tmp_path: Path) -> None:
    """The InferenceService a data scientist writes for its replicas to follow vLLM's queue, down to
    zero where the stack's floor is 0, taken by KServe's CRD and the replica policy; and the
    ScaledObject KServe v0.20.0 makes of it (keda_reconciler.go createKedaScaledObject: named after
    the predictor, minReplicaCount 0, a prometheus trigger per metric: the load, and the router's
    requests that wake it) taken by KEDA 2.20.2's CRD."""
    from components.monitoring import PROMETHEUS_URL
    from components.serving_autoscaling import keda_autoscaling, serving_signal, wake_signal

    key, value = PROFILE_NAMESPACE_LABEL
    team = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": {key: value}}}
    query = serving_signal("vllm", NAMESPACE, "chat")
    annotations, autoscaling = keda_autoscaling(query, "4", PROMETHEUS_URL, wake_signal(NAMESPACE, "chat"))
    isvc = _isvc("chat", {"minReplicas": 0, "maxReplicas": 2})
    isvc["metadata"]["annotations"] = annotations
    isvc["spec"]["predictor"]["autoScaling"] = autoscaling
    # One prometheus trigger per External metric, in order: the load, then the router's requests.
    triggers = [
        {"type": m["external"]["metric"]["backend"], "metadata": {"serverAddress": m["external"]["metric"]["serverAddress"], "query": m["external"]["metric"]["query"], "threshold": m["external"]["target"]["value"]}}
        for m in autoscaling["metrics"]
    ]
    assert len(triggers) == 2
    scaled = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "chat-predictor", "namespace": NAMESPACE},
        "spec": {
            "scaleTargetRef": {"name": "chat-predictor"},
            "minReplicaCount": 0,
            "maxReplicaCount": 2,
            "triggers": triggers,
        },
    }
    with kept(cluster, [*_kserve_crds(tmp_path), *_keda_crds(), team, replica_bounds_policy(0, 4), replica_bounds_binding()]):
        wait_for("the replica policy in force", lambda: [] if _refused(cluster, _isvc("big", {"minReplicas": 5})) else ["not yet"], timeout=20, interval=0.2)
        assert _refused(cluster, isvc) == ""
        assert cluster.apply(scaled, dry_run=True) in (200, 201)


KSERVE_MNIST_IDLE = Path(__file__).parents[1] / "data" / "serving" / "kserve_mnist_idle.json"
"""examples/kserve_mnist.py inference_service("serving-a", "pvc://team-models/models", 0, 0) as the
Kubernetes client serialises the kserve SDK's models: the examples' run holds it to the real SDK
(tests/examples/test_local_runs.py), whose environment this one cannot hold."""


def _keda(name: str, replicas: dict[str, int], wake_for: str | None = None, threshold: Any = "1", annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """An InferenceService on vLLM's queue through KEDA, with the wake signal of the model `wake_for`
    (None: none) at `threshold`."""
    from components.monitoring import PROMETHEUS_URL
    from components.serving_autoscaling import keda_autoscaling, serving_signal, wake_signal

    wake = wake_signal(NAMESPACE, wake_for) if wake_for else None
    keda, autoscaling = keda_autoscaling(serving_signal("vllm", NAMESPACE, name), "4", PROMETHEUS_URL, wake)
    if wake:
        autoscaling["metrics"][-1]["external"]["target"]["value"] = threshold
    isvc = _isvc(name, replicas)
    isvc["metadata"]["annotations"] = annotations if annotations is not None else keda
    isvc["spec"]["predictor"]["autoScaling"] = autoscaling
    return isvc


@mirror.needed
def test_a_model_that_can_reach_zero_replicas_is_refused_unless_a_request_wakes_it(cluster: Cluster, tmp_path: Path) -> None:
    """Where the stack's floor is 0, a predictor at minReplicas 0 under KEDA carries the wake signal
    of its own name at threshold 1, or is refused saying why and the two ways out; under `none`
    (KServe keeps the Deployment at 0) it is refused, under hpa and external (KServe never goes
    below 1 itself) it passes, and naming no class it is refused (its ServingRuntime's may be keda).
    The example's InferenceService, at 0, passes. A model stored before the policy is still
    finalized and deleted; a change of its spec is judged."""
    from components.serving_autoscaling import wake_signal

    stored_before = _keda("old", {"minReplicas": 0, "maxReplicas": 2})
    # The model is stored first, the policy then (the `with` enters them in order).
    with kept(cluster, [*_kserve_crds(tmp_path), _team_namespace(NAMESPACE), stored_before]), kept(cluster, [replica_bounds_policy(0, 4), replica_bounds_binding()]):
        wait_for("the replica policy in force", lambda: [] if _refused(cluster, _isvc("big", {"minReplicas": 5})) else ["not yet"], timeout=20, interval=0.2)
        assert _refused(cluster, _keda("chat", {"minReplicas": 0, "maxReplicas": 2}, wake_for="chat")) == ""
        assert _refused(cluster, _keda("chat", {"minReplicas": 0}, wake_for="chat", threshold=1)) == ""  # 1 or "1": KEDA gets "1"
        sleeps = _refused(cluster, _keda("chat", {"minReplicas": 0, "maxReplicas": 2}))
        assert "spec.predictor.minReplicas 0 lets KEDA take this model to zero replicas, and no request would ever wake it" in sleeps
        assert f"query {wake_signal(NAMESPACE, 'chat')}, target value 1" in sleeps
        assert "keda_autoscaling(..., wake=wake_signal(namespace, name))" in sleeps and "or set spec.predictor.minReplicas to 1 or more" in sleeps
        assert "no request would ever wake it" in _refused(cluster, _keda("chat", {"minReplicas": 0}, wake_for="other"))
        assert "no request would ever wake it" in _refused(cluster, _keda("chat", {"minReplicas": 0}, wake_for="chat", threshold="2"))
        assert _refused(cluster, _keda("chat", {"minReplicas": 1, "maxReplicas": 2})) == ""
        # The predictor's class over the object's, as KServe's objects carry them.
        keda_below = _keda("chat", {"minReplicas": 0}, annotations={"serving.kserve.io/autoscalerClass": "hpa"})
        keda_below["spec"]["predictor"]["annotations"] = {"serving.kserve.io/autoscalerClass": "keda"}
        assert "lets KEDA take this model to zero replicas" in _refused(cluster, keda_below)
        assert _refused(cluster, _keda("chat", {"minReplicas": 0}, annotations={"serving.kserve.io/autoscalerClass": "hpa"})) == ""
        assert _refused(cluster, _keda("chat", {"minReplicas": 0}, annotations={"serving.kserve.io/autoscalerClass": "external"})) == ""
        kept_at_zero = _refused(cluster, _keda("chat", {"minReplicas": 0}, wake_for="chat", annotations={"serving.kserve.io/autoscalerClass": "none"}))
        assert "with serving.kserve.io/autoscalerClass none: KServe keeps the predictor's Deployment at 0 replicas" in kept_at_zero
        assert "lets its ServingRuntime's class take this model to zero replicas" in _refused(cluster, _isvc("iris", {"minReplicas": 0}))
        assert _refused(cluster, _isvc("iris", {})) == ""
        example = json.loads(KSERVE_MNIST_IDLE.read_text())
        assert example["spec"]["predictor"]["minReplicas"] == 0 and _refused(cluster, example) == ""
        refused = _finalized_and_deleted(cluster, stored_before, "inferenceservice.finalizers", {"predictor": {**stored_before["spec"]["predictor"], "maxReplicas": 3}})
        assert "no request would ever wake it" in refused
        # The class alone changed on a stored model at 0: judged (an hpa model turned keda or none
        # by its annotation would never wake); a label alone is not.
        hpa_at_zero = _keda("flip", {"minReplicas": 0}, annotations={"serving.kserve.io/autoscalerClass": "hpa"})
        cluster.apply(hpa_at_zero)
        path = cluster.path(hpa_at_zero)
        for new_class, refusal in (("keda", "no request would ever wake it"), ("none", "KServe keeps the predictor's Deployment at 0 replicas")):
            flipped = cluster.request("GET", path)
            flipped["metadata"]["annotations"]["serving.kserve.io/autoscalerClass"] = new_class
            with pytest.raises(ApiException) as turned:
                cluster.request("PUT", path, body=flipped)
            assert refusal in json.loads(turned.value.body)["message"], new_class
        labelled = cluster.request("GET", path)
        labelled["metadata"].setdefault("labels", {})["team"] = "nlp"
        cluster.request("PUT", path, body=labelled)
        cluster.delete(hpa_at_zero)


def _refused(cluster: Cluster, obj: dict[str, Any]) -> str:
    try:
        cluster.apply(obj, dry_run=True)
    except ApiException as error:
        return str(json.loads(error.body)["message"])
    return ""


@mirror.needed
def test_the_hubs_storage_initializer_and_a_model_named_by_its_registry_uri_are_valid_under_kserves_crds(cluster: Cluster, tmp_path: Path) -> None:
    """The ClusterStorageContainer as the dev stack renders it (serving and the Model Registry on)
    and an InferenceService naming a registered model, judged by KServe v0.20.0's CRDs; a
    ClusterStorageContainer without a container is refused, so the CRD's schema is in force."""
    from components.serving_registry import STORAGE_INITIALIZER
    from tests.support.renders import rendered

    (initializer,) = [o.obj for o in rendered("dev").objects if o.key[1] == "ClusterStorageContainer" and o.key[3] == STORAGE_INITIALIZER]
    isvc = {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "mnist-cnn", "namespace": NAMESPACE},
        "spec": {
            "predictor": {
                "model": {"modelFormat": {"name": "pytorch"}, "runtime": "kserve-tritonserver", "storageUri": "model-registry://mnist-cnn/v1"},
            }
        },
    }
    with kept(cluster, [*_kserve_crds(tmp_path), _namespace(NAMESPACE)]):
        assert cluster.apply(initializer, dry_run=True) in (200, 201)
        assert cluster.apply(isvc, dry_run=True) in (200, 201)
        broken = json.loads(json.dumps(initializer))
        del broken["spec"]["container"]
        assert "spec.container" in _refused(cluster, broken)


# --- LLMInferenceServices: the same floor and ceiling, no scaling (components/serving_llm.py) --------


def _llm_crds() -> list[dict[str, Any]]:
    """The LLMInferenceService and LLMInferenceServiceConfig CRDs of the pinned kserve-llmisvc-crd
    chart, as `helm template` renders them (`kept` stores them without their conversion webhook)."""
    import subprocess

    from facts.versions import KSERVE_LLMISVC_CRD_CHART
    from tooling import tools

    package = Path(mirror.MIRROR, "charts", f"{KSERVE_LLMISVC_CRD_CHART.name}-{KSERVE_LLMISVC_CRD_CHART.version}.tgz")
    run = subprocess.run([tools.find(tools.HELM), "template", "llmisvc-crd", str(package)], capture_output=True, text=True, timeout=120, check=True)
    return [o for o in yaml.safe_load_all(run.stdout) if o and o["kind"] == "CustomResourceDefinition" and o["spec"]["names"]["kind"].startswith("LLMInference")]


def _main(gpus: int = 1) -> dict[str, Any]:
    """A pod template of one `main` container (merged into KServe's vLLM preset by name) with `gpus` GPUs."""
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}, "requests": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    return {"containers": [{"name": "main", "resources": resources}]}


def _llm(name: str, spec: dict[str, Any], namespace: str = NAMESPACE, version: str = "v1alpha2", kind: str = "LLMInferenceService") -> dict[str, Any]:
    """An LLMInferenceService (or config) as KServe v0.20.0's samples write one (docs/samples/llmisvc/
    single-node-gpu/llm-inference-service-qwen2-7b-gpu.yaml: model, replicas, router, a `main`
    container with a GPU), `spec` set over it (None deletes a key)."""
    body = {"model": {"uri": "hf://Qwen/Qwen2.5-7B-Instruct", "name": "Qwen/Qwen2.5-7B-Instruct"}, "router": {"scheduler": {}, "route": {}, "gateway": {}}, "template": _main()}
    body.update(spec)
    return {"apiVersion": f"serving.kserve.io/{version}", "kind": kind, "metadata": {"name": name, "namespace": namespace}, "spec": {k: v for k, v in body.items() if v is not None}}


def _scaling(actuator: str, low: int, high: int) -> dict[str, Any]:
    """KServe v0.20.0's test fixture pkg/controller/v1alpha2/llmisvc/fixture/llmisvc_builders.go
    HPAScaling, KEDAScaling: min and max replicas and WVA with one actuator."""
    return {"minReplicas": low, "maxReplicas": high, "wva": {actuator: {}}}


def _team_namespace(name: str) -> dict[str, Any]:
    key, value = PROFILE_NAMESPACE_LABEL
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {key: value}}}


@mirror.needed
def test_the_stacks_replica_floor_and_ceiling_hold_for_llm_services_and_their_configs_and_scaling_is_refused(cluster: Cluster) -> None:
    """A floor of 2 and a ceiling of 4, enforced by the API server on KServe v0.20.0's own samples:
    an unset replicas is the 1 the controller's Deployment starts with; a prefill's replicas are held
    alike; a multi-node replica (`worker`) counts once, as a LeaderWorkerSet group; a team's config
    is held where it sets replicas; `scaling` (WVA's) is refused, naming `replicas`. Outside the
    team namespaces nothing is held."""
    from components.profiles.serving_llm import team_llm_config
    from components.serving_llm import llm_replica_bounds_binding, llm_replica_bounds_policy

    objects = [*_llm_crds(), _team_namespace(NAMESPACE), _namespace(OTHER), llm_replica_bounds_policy(2, 4), llm_replica_bounds_binding()]
    with kept(cluster, objects):
        wait_for("the LLM replica policy in force", lambda: [] if _refused(cluster, _llm("big", {"replicas": 9})) else ["not yet"], timeout=20, interval=0.2)
        # single-node-gpu/llm-inference-service-qwen2-7b-gpu.yaml, a v1alpha1 sample: three replicas.
        assert _refused(cluster, _llm("qwen2-7b-instruct-single", {"replicas": 3}, version="v1alpha1")) == ""
        assert _refused(cluster, _llm("at-the-floor", {"replicas": 2})) == "" and _refused(cluster, _llm("at-the-ceiling", {"replicas": 4})) == ""
        assert "spec.replicas 9 is above the platform's ceiling of 4 replicas" in _refused(cluster, _llm("big", {"replicas": 9}))
        # e2e-gpt-oss/inference_pd_disaggregation.yaml: decode 1, prefill 2.
        pd = {"replicas": 1, "baseRefs": [{"name": "llmisvc-config-pd-disagg"}], "prefill": {"replicas": 2, "template": _main()}}
        assert "spec.replicas 1 is below the platform's floor of 2 replicas" in _refused(cluster, _llm("gpt-oss-20b", pd))
        assert _refused(cluster, _llm("gpt-oss-20b", {**pd, "replicas": 2})) == ""
        over = {**pd, "replicas": 2, "prefill": {"replicas": 5, "template": _main()}}
        assert "spec.prefill.replicas 5 is above the platform's ceiling of 4 replicas" in _refused(cluster, _llm("gpt-oss-20b", over))
        # opt-125m-cpu/llm-inference-service-pd-facebook-opt-125m-cpu.yaml: neither sets replicas.
        unset = _llm("facebook-opt-125m-pd", {"prefill": {"template": _main(0)}, "template": _main(0)})
        assert "spec.replicas 1 (unset) is below the platform's floor of 2 replicas" in _refused(cluster, unset)
        assert "spec.prefill.replicas 1 (unset) is below" in _refused(cluster, _llm("opt-pd", {"replicas": 2, "prefill": {"template": _main(0)}}))
        # dp-ep/deepseek-r1-gpu-rdma-roce/...-naive.yaml: an LWS group per replica (data 16 over 8 a node).
        multi = {"parallelism": {"data": 16, "dataLocal": 8, "expert": True, "tensor": 1}, "worker": _main()}
        assert _refused(cluster, _llm("deepseek-coder-v2", {**multi, "replicas": 2}, version="v1alpha1")) == ""
        assert "each one a LeaderWorkerSet group" in _refused(cluster, _llm("deepseek-coder-v2", {**multi, "replicas": 5}))
        # WVA's scaling, main and prefill: refused, the message naming the replicas to set instead.
        scaled = _refused(cluster, _llm("scaled", {"scaling": _scaling("hpa", 2, 3)}))
        assert "spec.scaling: KServe v0.20.0 autoscales an LLMInferenceService only through llm-d's Workload Variant Autoscaler" in scaled
        assert "Set spec.replicas instead, from 2 to 4 here" in scaled
        prefill_scaled = _refused(cluster, _llm("scaled", {"replicas": 2, "prefill": {"scaling": _scaling("keda", 2, 4), "template": _main()}}))
        assert "spec.prefill.scaling:" in prefill_scaled and "Set spec.prefill.replicas instead" in prefill_scaled
        # e2e-gpt-oss/llmisvc_config_pd_disagg.yaml: a config carrying decode 1 and prefill 2.
        config = _llm("llmisvc-config-pd-disagg", {"router": None, "replicas": 1, "prefill": {"replicas": 2, "template": _main()}}, kind="LLMInferenceServiceConfig")
        assert "spec.replicas 1 is below the platform's floor of 2 replicas" in _refused(cluster, config)
        assert "spec.scaling:" in _refused(cluster, _llm("autoscaled", {"scaling": _scaling("keda", 2, 4)}, kind="LLMInferenceServiceConfig"))
        # A config that leaves replicas to the service is not judged on them: the platform's own team-llm.
        assert _refused(cluster, team_llm_config(NAMESPACE, model_store=False)) == ""
        # The binding selects the team namespaces only.
        assert _refused(cluster, _llm("big", {"replicas": 9}, namespace=OTHER)) == ""


@mirror.needed
def test_the_dev_stacks_llm_policy_lets_an_llm_rest_at_zero_and_holds_its_ceiling(cluster: Cluster) -> None:
    """The policy and binding as the dev fixture renders them (serving.replicas 0 to 4): an LLM at
    zero replicas holds no GPU off prod; five are refused; the example's service is taken."""
    import runpy

    from components.serving_llm import LLM_REPLICA_BOUNDS
    from tests.support.renders import rendered

    policy = [o.obj for o in rendered("dev").objects if o.key[3] == LLM_REPLICA_BOUNDS]
    assert sorted(o["kind"] for o in policy) == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    example = runpy.run_path("examples/llm_openai.py", run_name="example")["llm_service"]("chat", "pvc://team-models/chat")
    example["metadata"]["namespace"] = NAMESPACE
    with kept(cluster, [*_llm_crds(), _team_namespace(NAMESPACE), *policy]):
        wait_for("the LLM replica policy in force", lambda: [] if _refused(cluster, _llm("big", {"replicas": 5})) else ["not yet"], timeout=20, interval=0.2)
        assert "spec.replicas 5 is above the platform's ceiling of 4 replicas" in _refused(cluster, _llm("big", {"replicas": 5}))
        assert _refused(cluster, _llm("idle", {"replicas": 0})) == ""
        assert _refused(cluster, example) == ""


# --- what the controllers write on a service made before the bounds narrowed -------------------


def _finalized_and_deleted(cluster: Cluster, obj: dict[str, Any], finalizer: str, spec_change: dict[str, Any]) -> str:
    """What the controllers do with `obj`, stored before its policy: the storage migration's no-op
    write, its finalizer added, a team's edit of its spec (`spec_change` merged in: the refusal it
    gets, returned), then its deletion, the finalizer removed. Each write a PUT of the whole object,
    as controller-runtime's Update sends it; raises if any but the spec's edit is refused."""
    path = cluster.path(obj)
    stored = cluster.request("PUT", path, body=cluster.request("GET", path))  # an unchanged write
    stored["metadata"]["finalizers"] = [finalizer]
    stored = cluster.request("PUT", path, body=stored)
    edited = json.loads(json.dumps(stored))
    edited["spec"] = {**edited["spec"], **spec_change}
    try:
        cluster.request("PUT", path, body=edited)
        refusal = ""
    except ApiException as error:
        refusal = str(json.loads(error.body)["message"])
    cluster.request("DELETE", path)
    stored = cluster.request("GET", path)
    assert stored["metadata"].get("deletionTimestamp"), "the finalizer holds the deleted object"
    stored["metadata"]["finalizers"] = []
    cluster.request("PUT", path, body=stored)
    with pytest.raises(ApiException) as gone:
        cluster.request("GET", path)
    assert gone.value.status == 404
    return refusal


@mirror.needed
def test_a_model_made_before_the_bounds_narrowed_is_still_deleted_and_a_change_of_its_spec_is_judged(cluster: Cluster, tmp_path: Path) -> None:
    """An InferenceService with 9 replicas and an LLMInferenceService with 9, stored before the
    stack's ceiling of 4: KServe's controllers still add and remove their finalizers (v0.20.0
    inferenceservice/controller.go:185-205, llmisvc/controller.go:197-222) and migrate them, so a
    team can delete them (before the fix the policies refused the finalizer's removal and the
    objects stayed Terminating); a change of their spec is judged as a new one would be."""
    from components.serving_llm import llm_replica_bounds_binding, llm_replica_bounds_policy

    isvc = _isvc("before", {"minReplicas": 9})
    llm = _llm("before", {"replicas": 9})
    with kept(cluster, [*_kserve_crds(tmp_path), *_llm_crds(), _team_namespace(NAMESPACE), isvc, llm]):
        policies = [replica_bounds_policy(0, 4), replica_bounds_binding(), llm_replica_bounds_policy(0, 4), llm_replica_bounds_binding()]
        with kept(cluster, policies):
            def in_force() -> list[str]:
                return [] if _refused(cluster, _isvc("big", {"minReplicas": 9})) and _refused(cluster, _llm("big", {"replicas": 9})) else ["not yet"]

            wait_for("the replica policies in force", in_force, timeout=20, interval=0.2)
            refused = _finalized_and_deleted(cluster, isvc, "inferenceservice.finalizers", {"predictor": {**isvc["spec"]["predictor"], "minReplicas": 8}})
            assert "spec.predictor.maxReplicas 8 is above the platform's ceiling of 4 replicas" in refused
            refused = _finalized_and_deleted(cluster, llm, "serving.kserve.io/llmisvc-finalizer", {"replicas": 8})
            assert "spec.replicas 8 is above the platform's ceiling of 4 replicas" in refused
