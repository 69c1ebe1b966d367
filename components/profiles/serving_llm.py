"""A team's LLMs (with serving.llm; components/serving_llm.py installs KServe's LLM controller):
the config its LLMInferenceServices name, the gateway's check of its LLM prefixes, and behind GKE
Inference Gateway the way in for GKE's load balancer (docs/serving.md, "LLMs")."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from components.access import EMAIL_CLAIM, GATEWAY_SELECTOR, identities
from components.inference_gateway import (
    MODEL_SERVER_PORT,
    PICKER_HEALTH_PORT,
    PICKER_PORT,
    POOL_HEALTH_CHECK_ANNOTATION,
    pool_health_check,
)
from components.istio import GATEWAY_NAMESPACE
from components.profiles.pod_default import GCS_FUSE_ANNOTATION
from components.profiles.serving import MODEL_SERVER, serving_pod_labels
from components.serving_tokens import MODEL_CLIENT, service_account_user
from facts.naming import llm_prefixes
from facts.node_labels import GPU_TAINT
from plumbing.network import ip_peer, network_policy

# --- the team's LLMs (with serving.llm; components/serving_llm.py) ------------------------------
# KServe's LLM route preset puts a team's LLMs at /<team>/<name>/v1/... and /publishers/<team>/
# models/<model>/... of the inference gateway, which is Kubeflow's ingress gateway (components/
# inference_gateway.py). The role check is the gateway's, not the pods': the LLM pods and their
# endpoint picker run without Istio's sidecar. vLLM's data-parallel RPC and NCCL between an LWS
# group's pods do not pass a sidecar (as the training runtimes keep it out), the gateway calls the
# endpoint picker over ext_proc, which carries no `kubeflow-userid` header a namespace's ALLOW
# policies could match, and the namespace's viewers-read-only DENY would refuse a viewer's query,
# a POST.
TEAM_LLM_CONFIG = "team-llm"
"""Each team's LLMInferenceServiceConfig, which a service names in `baseRefs` (examples/llm_openai.py)."""
TEAM_LLM_WORKERS_CONFIG = "team-llm-workers"
"""What a multi-node service names beside it: the same for its LeaderWorkerSet's workers. Apart,
as KServe makes a LeaderWorkerSet of any service whose merged spec has a `worker`
(pkg/controller/v1alpha2/llmisvc/workload_multi_node.go)."""
NO_SIDECAR = {"sidecar.istio.io/inject": "false"}


def _llm_pods(model_store: bool) -> dict[str, Any]:
    """A pod spec's share of the team's LLM configs: the GPU taint tolerated (below), and with a
    model store the account that reads the team bucket."""
    return {"tolerations": [GPU_TAINT.toleration()], **({"serviceAccountName": MODEL_SERVER} if model_store else {})}


def team_llm_config(namespace: str, model_store: bool, gke_gateway: bool = False) -> dict[str, Any]:
    """The team's LLMInferenceServiceConfig: what serving_pod_default gives an InferenceService's
    pods, for its LLM pods, whose labels it does not select (kserve v0.20.0
    pkg/controller/v1alpha2/llmisvc workload_single_node.go singleNodeLabels: app.kubernetes.io/*,
    no serving.kserve.io/inferenceservice). No sidecar on the LLM pods and the endpoint picker's;
    with a model store (GKE), the account that reads the team bucket and GCS Fuse's sidecar, so
    `pvc://team-models/<path>` loads from it. KServe puts `spec.annotations` and `spec.labels` on
    the workload's pods (workload_single_node.go:179-180, workload_multi_node.go:264-268),
    `spec.router.scheduler.annotations` on the picker's (scheduler.go:489), and takes the pods'
    account from `spec.template.serviceAccountName` (workload_single_node.go).

    The pods tolerate GKE's GPU taint themselves, as the training runtimes do (a pool's flavor
    does not tolerate it for them: components/kueue.py flavor_tolerations): a multi-node replica's
    Workload is made from the LeaderWorkerSet's templates (kueue v0.19.2 pkg/controller/jobs/
    leaderworkerset/leaderworkerset_reconciler.go podSets), not from pods GKE's
    ExtendedResourceToleration has seen, and Kueue gives a pod set no flavor whose taints it
    does not tolerate (flavorassigner.go checkFlavorForPodSets; check's `admissible`).

    Behind GKE Inference Gateway (`gke_gateway`) it carries the health check each service's
    InferencePool needs, for the team's deploy path to make (components/inference_gateway.py
    POOL_HEALTH_CHECK_ANNOTATION). KServe merges a config's spec only, never its metadata
    (kserve v0.20.0 config_merge.go MergeSpecs), so the annotation reaches no service or pod."""
    annotations = {**NO_SIDECAR, **({GCS_FUSE_ANNOTATION: "true"} if model_store else {})}
    spec: dict[str, Any] = {"annotations": annotations, "router": {"scheduler": {"annotations": dict(NO_SIDECAR)}}}
    labels = serving_pod_labels()
    if labels:
        spec["labels"] = labels
    spec["template"] = _llm_pods(model_store)
    metadata: dict[str, Any] = {"name": TEAM_LLM_CONFIG, "namespace": namespace}
    if gke_gateway:
        metadata["annotations"] = {POOL_HEALTH_CHECK_ANNOTATION: json.dumps(pool_health_check(), sort_keys=True)}
    return {"apiVersion": "serving.kserve.io/v1alpha2", "kind": "LLMInferenceServiceConfig", "metadata": metadata, "spec": spec}


def team_llm_workers_config(namespace: str, model_store: bool) -> dict[str, Any]:
    """The team's config for a multi-node service's workers (TEAM_LLM_WORKERS_CONFIG): as team_llm_config's pods."""
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceServiceConfig",
        "metadata": {"name": TEAM_LLM_WORKERS_CONFIG, "namespace": namespace},
        "spec": {"worker": _llm_pods(model_store)},
    }


def llm_gateway_policy(namespace: str, readers: Sequence[str]) -> dict[str, Any]:
    """At the gateway: nobody but the team's people (any role: viewers query, a query is a POST)
    and the team's model client reaches the team's LLM prefixes. A token's principal is
    `<issuer>/<sub>`, the model client's sub `system:serviceaccount:<namespace>:model-client`
    (Istio matches a principal by suffix with a leading `*`)."""
    spec = {
        "action": "DENY",
        "selector": {"matchLabels": dict(GATEWAY_SELECTOR)},
        "rules": [
            {
                "from": [{"source": {"notRequestPrincipals": [f"*/{service_account_user(namespace, MODEL_CLIENT)}"]}}],
                "to": [{"operation": {"paths": [prefix + "*" for prefix in llm_prefixes(namespace)]}}],
                "when": [{"key": EMAIL_CLAIM, "notValues": identities(readers)}],
            }
        ],
    }
    return {
        "apiVersion": "security.istio.io/v1",
        "kind": "AuthorizationPolicy",
        "metadata": {"name": f"team-{namespace}-llm", "namespace": GATEWAY_NAMESPACE},
        "spec": spec,
    }


# --- GKE Inference Gateway's way in (inferenceGateway.provider: gke) ----------------------------
# GKE's load balancer is no pod of a platform namespace: its Envoy proxies connect to the model
# servers and to the endpoint picker from the region's proxy-only subnet, and Google's health
# checkers probe them from their own ranges (components/inference_gateway.py). The namespace's
# other policies admit pods by namespace only; these admit exactly those sources, to exactly the
# pods KServe gives the InferencePool and its picker, on exactly the ports the load balancer calls.
LLM_MODEL_SERVER_PODS = {"app.kubernetes.io/part-of": "llminferenceservice", "kserve.io/component": "workload"}
"""Every LLMInferenceService's workload pods, which its InferencePool selects (kserve v0.20.0
pkg/controller/v1alpha2/llmisvc/workload.go GetWorkloadLabelSelector, less the service's name: a
policy of the namespace serves every service made in it later)."""
LLM_PICKER_PODS = {"app.kubernetes.io/part-of": "llminferenceservice", "app.kubernetes.io/component": "llminferenceservice-router-scheduler"}
"""Every LLMInferenceService's endpoint picker pods (scheduler.go SchedulerLabels, less the name)."""
GKE_GATEWAY_MODELS_POLICY = "allow-gke-gateway-to-models"
GKE_GATEWAY_PICKER_POLICY = "allow-gke-gateway-to-picker"


def gke_gateway_policies(namespace: str, sources: Sequence[str]) -> list[dict[str, Any]]:
    """The namespace's LLM model servers take GKE's load balancer on the InferencePool's target port,
    their endpoint pickers on the ext_proc and gRPC health ports, from `sources` (its proxy-only
    subnet and the health checkers') and from nowhere else the other policies do not already admit."""
    peers = [ip_peer(cidr) for cidr in sources]
    return [
        network_policy(GKE_GATEWAY_MODELS_POLICY, namespace, peers, LLM_MODEL_SERVER_PODS, (MODEL_SERVER_PORT,)),
        network_policy(GKE_GATEWAY_PICKER_POLICY, namespace, peers, LLM_PICKER_PODS, (PICKER_PORT, PICKER_HEALTH_PORT)),
    ]


def team_llm_objects(namespace: str, model_store: bool, readers: Sequence[str], gke_gateway_sources: Sequence[str] = ()) -> list[dict[str, Any]]:
    """A team's LLM configs and the gateway's check of its LLM prefixes (`readers`: everyone the team
    lets in); behind GKE Inference Gateway (`gke_gateway_sources`), the NetworkPolicies that let its
    load balancer in and, on its LLM config, its pools' health check."""
    gke_gateway = bool(gke_gateway_sources)
    objects = [
        team_llm_config(namespace, model_store, gke_gateway),
        team_llm_workers_config(namespace, model_store),
        llm_gateway_policy(namespace, readers),
    ]
    if gke_gateway:
        objects += gke_gateway_policies(namespace, gke_gateway_sources)
    return objects
