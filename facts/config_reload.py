"""Upstream processes that take a change of a ConfigMap they read without a restart: the
exceptions to "configuration read at start rolls its pods" (`python -m stacks check` rule
config-rolls). Every other process is taken to read its configuration only at start, as
environment variables always are. Imports nothing."""

from __future__ import annotations

import re

RELOADED: dict[tuple[str, str], str] = {
    (
        "jupyter-web-app-deployment",
        "ConfigMap/jupyter-web-app-config",
    ): "kubeflow/notebooks v1.11.0 components/crud-web-apps/jupyter/backend/apps/common/utils.py: "
    "load_spawner_ui_config is a ttl_cache(ttl=60) re-reading /etc/config/spawner_ui_config.yaml, "
    "a directory mount (no subPath) that the kubelet updates",
    (
        "istio-ingressgateway",
        "ConfigMap/istio",
    ): "the program changes only mesh-wide fields of it (components/istio.py pathNormalization), which "
    "istiod watches (istio 1.30.1 pilot/pkg/bootstrap/mesh.go getMeshConfiguration, meshwatcher) and "
    "pushes to the gateway's Envoy over xDS; the gateway itself reads only defaultConfig at start",
    (
        "workflow-controller",
        "ConfigMap/workflow-controller-configmap",
    ): "argoproj/argo-workflows v3.7.3 workflow/controller/controller.go:459-490 runConfigMapWatcher: the "
    "controller watches its ConfigMap through the API and calls UpdateConfig on every change (the executor "
    "settings apply to the pods it creates next)",
}
"""(workload name, kind/name of the ConfigMap it reads) -> why a change reaches the process
without a restart, with the source read at the pinned tag."""

KUSTOMIZE_HASH_SUFFIX = re.compile(r"-[245-9bcdfghkmt]{10}$")
"""kustomize's content-hash suffix on a generated ConfigMap or Secret: the first ten hex
digits of a SHA-256 with 0, 1, 3, a and e written g, h, k, m and t (kustomize api/hasher
hasher.go Encode), after a dash."""


def reloads(workload: str, kind: str, name: str) -> str | None:
    """Why `workload` takes a change of `kind` `name` without a restart; None if it does not."""
    return RELOADED.get((workload, f"{kind}/{name}")) or RELOADED.get((workload, f"{kind}/{KUSTOMIZE_HASH_SUFFIX.sub('', name)}"))
