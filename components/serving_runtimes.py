"""Serving's GPU runtimes (components/serving.py installs them): vLLM and the Hugging Face
server's GPU build, one ClusterServingRuntime each per GPU pool."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from facts.node_labels import GPU_RESOURCE, Pool, pool_selector, pool_taints
from facts.versions import KSERVE_HUGGINGFACE_GPU_IMAGE, VLLM_IMAGE, image

SERVING_API = "serving.kserve.io"


# --- GPU runtimes, one per GPU pool ----------------------------------------------------------
# vLLM and the Hugging Face server's GPU build as ClusterServingRuntimes pinned to a pool, as the
# training runtimes have one variant per GPU pool (runtimes/): the pool's node selector and
# taints, one GPU. A predictor that names one is placed there; one that asks for GPUs on another
# runtime gets the first pool flavor of its team's queue with room, and Kueue adds that flavor's
# node labels (components/kueue_pods.py). A DRA pool's GPUs are claimed, not counted as
# nvidia.com/gpu, and KServe's runtimes cannot name a claim: no runtime there.
# The containers follow kserve/kserve v0.20.0 charts/kserve-runtime-configs files/runtimes/
# clusterservingruntimes-patch.yaml: kserve-vllmserver (vLLM's OpenAI server on 8080, the model
# at /mnt/models served under the InferenceService's name, its caches in /tmp, a memory-backed
# /dev/shm) and kserve-huggingfaceserver (`--model_name={{.Name}}`; its vLLM backend by default on
# a GPU: python/huggingfaceserver/huggingfaceserver/__main__.py).
MODEL_NAME_PLACEHOLDER = "{{.Name}}"
"""The InferenceService's name, as KServe substitutes it into a runtime's arguments (values.yaml
kserve.servingruntime.modelNamePlaceholder)."""
METRICS_ANNOTATIONS = {"prometheus.kserve.io/path": "/metrics", "prometheus.kserve.io/port": "8080"}
"""Where both servers answer Prometheus (the chart's runtimes' annotations)."""
GPU_RUNTIME_RESOURCES = {"cpu": "4", "memory": "16Gi"}
"""A replica's CPU and memory beside its one GPU: a starting point a predictor overrides
(`resources` of its model spec)."""


def _gpu_runtime(name: str, pool: Pool, container: dict[str, Any], formats: list[dict[str, Any]], protocols: list[str] | None) -> dict[str, Any]:
    resources = {**GPU_RUNTIME_RESOURCES, GPU_RESOURCE: "1"}
    container = {
        **container,
        "name": "kserve-container",
        "resources": {"requests": dict(resources), "limits": dict(resources)},
        "securityContext": {"allowPrivilegeEscalation": False, "privileged": False, "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "devshm", "mountPath": "/dev/shm"}],
    }
    spec: dict[str, Any] = {
        "annotations": dict(METRICS_ANNOTATIONS),
        "supportedModelFormats": formats,
        "containers": [container],
        "volumes": [{"name": "devshm", "emptyDir": {"medium": "Memory"}}],
        "nodeSelector": pool_selector(pool),
        "tolerations": [t.toleration() for t in pool_taints(pool)],
    }
    if protocols:
        spec["protocolVersions"] = protocols
    return {"apiVersion": f"{SERVING_API}/v1alpha1", "kind": "ClusterServingRuntime", "metadata": {"name": name}, "spec": spec}


def gpu_runtimes(pools: Sequence[Pool]) -> list[dict[str, Any]]:
    """`kserve-vllm-<pool>` and `kserve-huggingface-<pool>` for every GPU pool whose GPUs the
    device plugin counts. Neither auto-selects: a predictor names the runtime, which says the pool."""
    found: list[dict[str, Any]] = []
    for pool in pools:
        if pool.dra:
            continue
        vllm = {
            "image": image(VLLM_IMAGE),
            "command": ["python", "-m", "vllm.entrypoints.openai.api_server"],
            "args": ["--port=8080", "--model=/mnt/models", f"--served-model-name={MODEL_NAME_PLACEHOLDER}"],
            "env": [
                {"name": "HF_HOME", "value": "/tmp"},
                {"name": "VLLM_CONFIG_ROOT", "value": "/tmp"},
                {"name": "VLLM_WORKER_MULTIPROC_METHOD", "value": "spawn"},
            ],
            "readinessProbe": {"httpGet": {"path": "/v1/models", "port": 8080}, "periodSeconds": 10, "timeoutSeconds": 5},
            "startupProbe": {
                "httpGet": {"path": "/v1/models", "port": 8080},
                "initialDelaySeconds": 30,
                "periodSeconds": 30,
                "timeoutSeconds": 10,
                "failureThreshold": 60,
            },
        }
        huggingface = {
            "image": image(KSERVE_HUGGINGFACE_GPU_IMAGE),
            "args": [f"--model_name={MODEL_NAME_PLACEHOLDER}"],
            # As the chart's GPU (multinode) Hugging Face runtime sets them.
            "env": [{"name": "VLLM_CONFIG_ROOT", "value": "/tmp"}, {"name": "HF_HUB_CACHE", "value": "/tmp"}],
        }
        found.append(_gpu_runtime(f"kserve-vllm-{pool.name}", pool, vllm, [{"name": "vLLM", "version": "1", "autoSelect": False}], None))
        found.append(
            _gpu_runtime(
                f"kserve-huggingface-{pool.name}", pool, huggingface, [{"name": "huggingface", "version": "1", "autoSelect": False}], ["v2", "v1"]
            )
        )
    return found
