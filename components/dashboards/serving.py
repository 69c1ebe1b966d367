"""Serving dashboard: a team's InferenceServices, their load, latency, tokens, KV cache, replicas
and the GPUs they hold.

Metrics, read at the pinned versions: vLLM 0.24.0 (its wheel's vllm/v1/metrics/loggers.py; labels
model_name, engine; counters exported with `_total`): vllm:num_requests_running and _waiting,
vllm:kv_cache_usage_perc (0 to 1), vllm:time_to_first_token_seconds and
vllm:e2e_request_latency_seconds (histograms), vllm:prompt_tokens, vllm:generation_tokens,
vllm:request_success. KServe's Python model servers (kserve 0.20.0 kserve/metrics.py):
request_predict_seconds. Each series carries the InferenceService's name in `inferenceservice`,
from our PodMonitor (components/serving.py predictor_pod_monitor_spec). Replicas: kube-state-metrics'
kube_deployment_spec_replicas and kube_deployment_status_replicas_available of the predictor
Deployment, `<name>-predictor` (KServe's PredictorServiceName). GPUs: the DCGM exporter's, by the
pod that holds them (dashboards/common.py).
"""

from __future__ import annotations

from typing import Any

from grafana_foundation_sdk.builders.dashboard import Dashboard, Row

from components.dashboards.common import (
    GPU_UTIL,
    WORKLOAD_NAMESPACE,
    WORKLOAD_POD,
    label_variable,
    new_dashboard,
    query,
    stat,
    timeseries,
)
from facts.labels import INFERENCE_SERVICE_LABEL
from facts.naming import MODEL_ROUTER

UID = "mlplatform-serving"
MODEL_LABEL = "inferenceservice"
"""The metric label every series of a predictor carries: its InferenceService's name (set by the
PodMonitor, components/serving.py predictor_pod_monitor_spec)."""
SEL = f'namespace=~"$namespace",{MODEL_LABEL}=~"$model"'
PREDICTOR_DEPLOYMENT = 'deployment=~"($model)-predictor"'
"""The predictor Deployments of the selected models (KServe names them <name>-predictor)."""
BY = f"sum by (namespace, {MODEL_LABEL})"


def _quantile(q: float, histogram: str) -> str:
    return f"histogram_quantile({q}, sum by (le, namespace, {MODEL_LABEL}) (rate({histogram}_bucket{{{SEL}}}[5m])))"


def dashboard() -> Dashboard:
    legend = "{{namespace}}/{{" + MODEL_LABEL + "}}"
    return (
        new_dashboard("Serving", UID, "Each team's InferenceServices: load, latency, tokens, KV cache, replicas and GPUs.")
        .with_variable(label_variable("namespace", "Team", "label_values(kube_deployment_spec_replicas{deployment=~\".+-predictor\"}, namespace)"))
        .with_variable(label_variable("model", "InferenceService", f'label_values(up{{namespace=~"$namespace",{MODEL_LABEL}!=""}}, {MODEL_LABEL})'))
        .with_row(Row("Load"))
        .with_panel(
            timeseries(
                "Requests per second",
                "reqps",
                query(f"{BY} (rate(vllm:request_success_total{{{SEL}}}[5m]))", f"{legend} (vLLM)"),
                query(f"{BY} (rate(request_predict_seconds_count{{{SEL}}}[5m]))", f"{legend} (KServe)", "B"),
                width=8,
            )
        )
        .with_panel(
            timeseries(
                "Requests running and waiting",
                "none",
                query(f"{BY} (vllm:num_requests_running{{{SEL}}})", f"{legend} running"),
                query(f"{BY} (vllm:num_requests_waiting{{{SEL}}})", f"{legend} waiting", "B"),
                width=8,
            )
        )
        .with_panel(
            timeseries(
                "Tokens per second",
                "none",
                query(f"{BY} (rate(vllm:generation_tokens_total{{{SEL}}}[5m]))", f"{legend} generated"),
                query(f"{BY} (rate(vllm:prompt_tokens_total{{{SEL}}}[5m]))", f"{legend} prompt", "B"),
                width=8,
            )
        )
        .with_row(Row("Latency"))
        .with_panel(
            timeseries(
                "Time to first token (p50, p95)",
                "s",
                query(_quantile(0.5, "vllm:time_to_first_token_seconds"), f"{legend} p50"),
                query(_quantile(0.95, "vllm:time_to_first_token_seconds"), f"{legend} p95", "B"),
                width=8,
            )
        )
        .with_panel(
            timeseries(
                "Request latency (p95)",
                "s",
                query(_quantile(0.95, "vllm:e2e_request_latency_seconds"), f"{legend} (vLLM)"),
                query(_quantile(0.95, "request_predict_seconds"), f"{legend} (KServe predict)", "B"),
                width=8,
            )
        )
        .with_panel(
            timeseries(
                "KV-cache use",
                "percentunit",
                query(f"max by (namespace, {MODEL_LABEL}) (vllm:kv_cache_usage_perc{{{SEL}}})", legend),
                width=8,
            )
        )
        .with_row(Row("Replicas and GPUs"))
        .with_panel(
            timeseries(
                "Replicas: wanted and ready",
                "none",
                query(f'sum by (namespace, deployment) (kube_deployment_spec_replicas{{namespace=~"$namespace",{PREDICTOR_DEPLOYMENT}}})', "{{namespace}}/{{deployment}} wanted"),
                query(
                    f'sum by (namespace, deployment) (kube_deployment_status_replicas_available{{namespace=~"$namespace",{PREDICTOR_DEPLOYMENT}}})',
                    "{{namespace}}/{{deployment}} ready",
                    "B",
                ),
                width=12,
            )
        )
        .with_panel(
            timeseries(
                "GPU utilisation of serving pods",
                "percent",
                query(
                    f'avg by ({WORKLOAD_NAMESPACE}, {WORKLOAD_POD}) ({GPU_UTIL}{{{WORKLOAD_NAMESPACE}=~"$namespace",{WORKLOAD_POD}=~"($model)-predictor-.+"}})',
                    f"{{{{{WORKLOAD_NAMESPACE}}}}}/{{{{{WORKLOAD_POD}}}}}",
                ),
                width=12,
            )
        )
        .with_panel(
            stat(
                "GPUs held by serving pods",
                "none",
                query(
                    f'count({GPU_UTIL}{{{WORKLOAD_NAMESPACE}=~"$namespace",{WORKLOAD_POD}=~"($model)-predictor-.+"}})',
                    "GPUs",
                ),
            )
        )
    )


# --- seen like training: the predictors' metrics ---------------------------------------------------
# Every serving runtime says where it answers Prometheus in its pod annotations
# `prometheus.kserve.io/port` and `prometheus.kserve.io/path` (pkg/constants/constants.go
# KserveContainerPrometheusPortKey; the chart's runtimes and ours set them, and KServe copies a
# runtime's annotations onto the pod: components/predictor.go buildObjectMeta), and most declare
# no container port, so a monitor by port name or number finds nothing (prometheus-operator
# v0.93.1 PodMonitor `portNumber`: "The Pod must declare the specified Port"). The PodMonitor
# names no port: Prometheus then makes one target per container without ports, "for manually
# adding a port via relabeling" (prometheus.io docs, kubernetes_sd_config role pod), and the
# relabelings take address and path from the annotations. The profile's own policy lets
# /metrics through the pods' sidecars (ns-owner-access-istio, tests/envtest/test_access.py).
PREDICTOR_MONITOR = "kserve-predictors"
PREDICTOR_CONTAINER = "kserve-container"
"""The model server's container in every runtime (KServe's constants.InferenceServiceContainerName)."""


def predictor_pod_monitor_spec() -> dict[str, Any]:
    """The PodMonitor spec: every InferenceService's model server container, in every namespace."""
    annotation = "__meta_kubernetes_pod_annotation_prometheus_kserve_io_"
    return {
        "namespaceSelector": {"any": True},
        "selector": {"matchExpressions": [{"key": INFERENCE_SERVICE_LABEL, "operator": "Exists"}]},
        "podMetricsEndpoints": [
            {
                "relabelings": [
                    {"sourceLabels": ["__meta_kubernetes_pod_container_name"], "regex": PREDICTOR_CONTAINER, "action": "keep"},
                    {"sourceLabels": [f"{annotation}port"], "regex": "[0-9]+", "action": "keep"},
                    {
                        "sourceLabels": ["__meta_kubernetes_pod_ip", f"{annotation}port"],
                        "separator": ";",
                        "regex": "(.+);([0-9]+)",
                        "replacement": "$1:$2",
                        "targetLabel": "__address__",
                    },
                    {"sourceLabels": [f"{annotation}path"], "regex": "(.+)", "targetLabel": "__metrics_path__"},
                    {"sourceLabels": ["__meta_kubernetes_pod_label_serving_kserve_io_inferenceservice"], "targetLabel": MODEL_LABEL},
                ]
            }
        ],
    }


# --- the team routers' requests: a model's load that exists at zero replicas -----------------------
# Each team's router runs with Istio's sidecar (the team namespace is injected), whose stats filter
# (on for the router's outbound side by its Telemetry: components/profiles/serving.py
# router_telemetry) counts every request it proxies in istio_requests_total{reporter="source"}, a request it answers
# itself too: the filter is an access-log handler of the stream (istio/proxy 1.30.1
# source/extensions/filters/http/istio_stats/istio_stats.cc: addAccessLogHandler, log() adds
# requests_total with response_code and response_flags), and it names the destination from the
# route's cluster, not from an upstream host (populatePeerInfo: upstreamClusterInfo()'s metadata
# istio.services[0] name and namespace), which Envoy sets when the route is chosen (envoyproxy/envoy
# source/common/http/conn_manager_impl.cc ActiveStream::setRoute) and istiod writes on every
# outbound cluster of a Service (istio/istio 1.30.1 pilot/pkg/networking/core/cluster_builder.go
# addTelemetryMetadata, PILOT_ENABLE_TELEMETRY_LABEL on by default). So a request for a model at
# zero replicas (its Service has no endpoint: 503, flag UH) is counted as one to `<name>-predictor`.
# Envoy serves it on the sidecar's `http-envoy-prom` port (15090, /stats/prometheus; the injector
# template of the pinned Kubeflow tree, common/istio/istio-install/base/install.yaml), which the
# sidecar's traffic capture leaves out (istio/istio 1.30.1 cni/pkg/plugin/sidecar_redirect.go:272
# excludes 15020,15021,15090 from inbound redirection; the template's istio-init `-d` alike): Prometheus
# scrapes it straight, no mTLS or AuthorizationPolicy in the way, and finds the port on a native
# sidecar (an init container) too (prometheus/prometheus v3.14.0 discovery/kubernetes/pod.go: init
# containers' ports are targets). Only these series are kept: one per model, response code and flags
# of each team's router, not the hundreds of Envoy's own.
ROUTER_MONITOR = "model-routers"
ROUTER_REQUESTS = "istio_requests_total"
ENVOY_METRICS_PORT = "http-envoy-prom"
ENVOY_METRICS_PATH = "/stats/prometheus"


def router_pod_monitor_spec() -> dict[str, Any]:
    """The PodMonitor spec: every team router's sidecar, its outbound request counts alone."""
    return {
        "namespaceSelector": {"any": True},
        "selector": {"matchLabels": {"app.kubernetes.io/name": MODEL_ROUTER}},
        "podMetricsEndpoints": [
            {
                "port": ENVOY_METRICS_PORT,
                "path": ENVOY_METRICS_PATH,
                "metricRelabelings": [
                    {"sourceLabels": ["__name__", "reporter"], "separator": ";", "regex": f"{ROUTER_REQUESTS};source", "action": "keep"}
                ],
            }
        ],
    }


# --- alerts: a model down, a model saturated ----------------------------------------------------
SERVING_ALERT_GROUP = "mlplatform-serving"
SATURATED_WAITING = 10
"""Requests waiting in a vLLM server, all of its replicas together, above which it is saturated."""
SATURATED_KV_CACHE = 0.95
"""KV-cache use above which vLLM starts to preempt requests (its scheduler evicts when blocks run out)."""


def serving_alert_rules() -> list[dict[str, Any]]:
    """A PrometheusRule group's rules: an InferenceService that wants replicas and has none ready,
    and one whose requests queue or whose KV cache stays full."""
    predictor = 'deployment=~".+-predictor"'
    by = f"by (namespace, {MODEL_LABEL})"
    return [
        {
            "alert": "InferenceServiceDown",
            "expr": (
                f"sum by (namespace, deployment) (kube_deployment_spec_replicas{{{predictor}}}) > 0 and "
                f"sum by (namespace, deployment) (kube_deployment_status_replicas_available{{{predictor}}}) == 0"
            ),
            "for": "10m",
            "labels": {"severity": "critical"},
            "annotations": {
                "summary": "{{ $labels.namespace }}/{{ $labels.deployment }} has no ready replica",
                "description": (
                    "The predictor {{ $labels.deployment }} of namespace {{ $labels.namespace }} wants replicas and has had "
                    "none ready for 10 minutes: its model fails to load, its image to pull, or its replicas wait in the "
                    "team's Kueue queue (kubectl get workloads -n {{ $labels.namespace }})."
                ),
            },
        },
        {
            "alert": "InferenceServiceSaturated",
            "expr": (
                f"sum {by} (vllm:num_requests_waiting) > {SATURATED_WAITING} or "
                f"max {by} (vllm:kv_cache_usage_perc) > {SATURATED_KV_CACHE}"
            ),
            "for": "10m",
            "labels": {"severity": "warning"},
            "annotations": {
                "summary": "{{ $labels.namespace }}/{{ $labels." + MODEL_LABEL + " }} is saturated",
                "description": (
                    f"For 10 minutes more than {SATURATED_WAITING} requests waited, or its KV cache stayed above "
                    f"{SATURATED_KV_CACHE:.0%} full: raise its maxReplicas (within the platform's ceiling) or give it larger GPUs."
                ),
            },
        },
    ]


def monitoring_objects(namespace: str, scrape_labels: dict[str, str], dashboard_labels: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """What serving adds to kube-prometheus-stack's Prometheus and to Grafana, in the monitoring
    namespace: the predictors' and the routers' PodMonitors, the serving alerts and the dashboard
    (names, objects)."""
    from components.dashboards.common import to_json

    meta = {"namespace": namespace, "labels": dict(scrape_labels)}
    monitor = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor", "metadata": {"name": PREDICTOR_MONITOR, **meta}, "spec": predictor_pod_monitor_spec()}
    routers = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor", "metadata": {"name": ROUTER_MONITOR, **meta}, "spec": router_pod_monitor_spec()}
    rules = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": SERVING_ALERT_GROUP, **meta},
        "spec": {"groups": [{"name": SERVING_ALERT_GROUP, "rules": serving_alert_rules()}]},
    }
    board = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "dashboard-serving", "namespace": namespace, "labels": dict(dashboard_labels)},
        "data": {"serving.json": to_json(dashboard())},
    }
    return [(f"serving-{PREDICTOR_MONITOR}", monitor), (f"serving-{ROUTER_MONITOR}", routers), (f"serving-{SERVING_ALERT_GROUP}", rules), ("serving-dashboard", board)]
