"""Serving a registered model by name (components/serving_registry.py): the
Hub's storage initializer, kept when serving and the Model Registry are both on, calls the
registry of the serving pod's own namespace, reads gs:// with the pod's Workload Identity on GKE,
runs the pinned image, and its init container is counted by Kueue's rule."""

from __future__ import annotations

from typing import Any

from components.serving_registry import STORAGE_INITIALIZER, with_team_registry
from tests.support import mirror
from tests.support.renders import edited, rendered, violations
from tooling import admission
from tooling.admission import Status

CSC = "ClusterStorageContainer"


def _initializer(stack: str) -> Any:
    return next((o for o in rendered(stack).objects if o.key[1] == CSC and o.key[3] == STORAGE_INITIALIZER), None)


@mirror.needed
def test_the_hubs_initializer_calls_the_registry_of_the_pods_own_namespace_with_the_pinned_image() -> None:
    found = _initializer("dev")
    assert found is not None and found.upstream  # the pinned Kubeflow tree's object, transformed
    original = found.original
    assert original is not None
    # Upstream (applications/hub/upstream/options/csi): one namespace's registry, on `latest`.
    (upstream_env,) = original["spec"]["container"]["env"]
    assert upstream_env == {"name": "MODEL_REGISTRY_BASE_URL", "value": "model-registry-service.kubeflow.svc.cluster.local:8080"}
    assert original["spec"]["container"]["image"].endswith(":latest")
    container = found.obj["spec"]["container"]
    assert container["env"] == [
        {"name": "MODEL_REGISTRY_BASE_URL", "value": "model-registry-service:8080"},
        {"name": "GOOGLE_APPLICATION_CREDENTIALS", "value": ""},  # GKE: default credentials, the pod's Workload Identity
    ]
    assert container["image"] == "ghcr.io/kubeflow/hub/storage-initializer:v0.3.9"
    assert "namespace" not in found.obj["metadata"]  # cluster-scoped
    assert found.obj["spec"]["supportedUriFormats"] == [{"prefix": "model-registry://"}]


def test_off_gke_the_initializer_keeps_kserves_anonymous_gcs_reads() -> None:
    tree = {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": CSC,
        "metadata": {"name": STORAGE_INITIALIZER, "namespace": "kubeflow"},
        "spec": {"container": {"name": "storage-initializer", "env": [{"name": "MODEL_REGISTRY_BASE_URL", "value": "x.kubeflow.svc:8080"}]}},
    }
    changed = with_team_registry(tree, gke=False)
    assert changed is not None and changed["spec"]["container"]["env"] == [{"name": "MODEL_REGISTRY_BASE_URL", "value": "model-registry-service:8080"}]
    assert with_team_registry({**tree, "metadata": {"name": "default"}}, gke=False) is None  # KServe's own is left alone


@mirror.needed
def test_the_initializer_is_there_only_when_serving_and_the_model_registry_are_both_on() -> None:
    assert _initializer("dev") is not None  # both on
    kind = rendered("kind")
    assert any(o.key[1] == CSC for o in kind.objects)  # serving on: KServe's default
    assert _initializer("kind") is None  # no Model Registry


@mirror.needed
def test_the_loader_rule_refuses_a_registry_url_other_teams_cannot_use() -> None:
    render = rendered("dev")
    assert not violations(render, "model-registry-loader")

    def url(value: str | None) -> Any:
        def edit(obj: dict[str, Any]) -> None:
            env = [e for e in obj["spec"]["container"]["env"] if e["name"] != "MODEL_REGISTRY_BASE_URL"]
            obj["spec"]["container"]["env"] = env + ([{"name": "MODEL_REGISTRY_BASE_URL", "value": value}] if value else [])

        return edit

    def messages(value: str | None) -> list[str]:
        return [v.message for v in violations(edited(render, CSC, STORAGE_INITIALIZER, url(value)), "model-registry-loader")]

    (upstreams,) = messages("model-registry-service.kubeflow.svc.cluster.local:8080")
    assert "one namespace" in upstreams and "team_registry_url" in upstreams
    (unset,) = messages(None)  # the initializer's default, localhost:8080
    assert "the pod itself" in unset
    (wrong_port,) = messages("model-registry-service:9090")
    assert "nlp, research, vision have no Service model-registry-service on port 9090" in wrong_port
    (no_port,) = messages("model-registry-service")  # plain HTTP's port 80
    assert "no Service model-registry-service on port 80" in no_port


@mirror.needed
def test_a_gpu_model_loaded_by_name_is_judged_with_the_initializers_init_container() -> None:
    render = rendered("dev")
    name = f"GPU InferenceService on kserve-vllm-l4 loading a registered model ({STORAGE_INITIALIZER})"
    verdicts = {(v.team, v.workload): v for v in admission.verdicts(render)}
    assert (verdicts[("nlp", name)].status, verdicts[("nlp", name)].detail) == (Status.ADMISSIBLE, "predictor x1 on default+l4")
    (workload,) = [w for w in admission.workloads(render, admission.kueue_of(render), "nlp") if w.name == name]
    assert [c["name"] for c in workload.pod_sets[0].spec["initContainers"]] == ["storage-initializer"]

    def huge(obj: dict[str, Any]) -> None:
        obj["spec"]["container"]["resources"] = {"requests": {"cpu": "500", "memory": "100Mi"}}

    # Kueue counts the larger of the init container and the containers: an initializer larger than
    # any team's quota makes the model unloadable by name, and the rule says so.
    refused = violations(edited(render, CSC, STORAGE_INITIALIZER, huge), "admissible")
    assert any(name in v.message for v in refused)
