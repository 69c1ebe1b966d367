"""A predictor's replicas on a serving signal through KEDA, and the signal that wakes a model at
zero replicas: what a data scientist puts on an InferenceService (examples/kserve_mnist.py) for
KServe v0.20.0 to make a ScaledObject of (docs/serving.md, "Replicas follow load" and "Scale to
zero, and back"). KEDA itself is installed by the serving component (components/serving.py).
"""

from __future__ import annotations

from typing import Any

from components.dashboards.serving import MODEL_LABEL, ROUTER_REQUESTS
from facts.naming import predictor_service

# --- a predictor's autoscaling on a serving signal ----------------------------------------------
# What a data scientist puts on an InferenceService for its replicas to follow load (docs/serving.md,
# examples/kserve_mnist.py): the annotation `serving.kserve.io/autoscalerClass: keda`
# (pkg/constants/constants.go AutoscalerClass, AutoscalerClassKeda; the default is hpa, CPU only)
# and an External metric of backend `prometheus` per signal (pkg/apis/serving/v1beta1/component.go
# ExternalMetricSource, ExternalMetrics, MetricTarget). KServe's defaulting webhook writes the
# Standard deployment mode on it (inference_service_defaults.go), so its validation is
# validateScalingKedaCompExtension (a query and a target value wanted); its KEDA reconciler makes the
# ScaledObject `<name>-predictor`: the query, the server and `threshold` the target's value, min and
# max replicas the predictor's (0 allowed: keda_reconciler.go createKedaScaledObject, getKedaMetrics).
# KEDA divides the query's value by the threshold for the replicas wanted (a prometheus trigger's
# default metric type AverageValue). The queries read the labels the serving PodMonitor gives the
# model servers' series (namespace, inferenceservice: components/dashboards/serving.py).
AUTOSCALER_CLASS_ANNOTATION = "serving.kserve.io/autoscalerClass"
KEDA_AUTOSCALER = "keda"
SERVING_SIGNALS = {
    # vLLM 0.24.0 (vllm/v1/metrics/loggers.py): requests waiting for a slot in the batch.
    "vllm": "sum(vllm:num_requests_waiting{{{selector}}})",
    # KServe's Python model servers, kserve 0.20.0 kserve/metrics.py: predictions per second.
    "kserve": "sum(rate(request_predict_seconds_count{{{selector}}}[1m]))",
    # Triton 23.05 (the chart's kserve-tritonserver; triton-inference-server/core r23.05
    # src/metrics.cc): successful requests per second, a counter without `_total`.
    "triton": "sum(rate(nv_inference_request_success{{{selector}}}[1m]))",
}
"""The serving signal per model server: what one replica should carry is the trigger's target."""


def serving_signal(server: str, namespace: str, name: str) -> str:
    """The PromQL of `server`'s load of the InferenceService `name` in `namespace`, all its replicas together."""
    return SERVING_SIGNALS[server].format(selector=f'namespace="{namespace}",{MODEL_LABEL}="{name}"')


# --- waking a model at zero: the requests its team's router passed on -------------------------
# With no replica there is no model server and no series of its signal; the team router's sidecar
# counts every request for the model all the same, the ones it answers 503 itself while no replica
# is ready (components/dashboards/serving.py, the routers' monitor). A second External metric on
# that count makes a second prometheus trigger of the same ScaledObject (keda_reconciler.go
# getKedaMetrics: one trigger per metric, in order). KEDA 2.20.2 takes a ScaledObject as active when
# any trigger is (pkg/scaling/scale_handler.go getScaledObjectState: isScaledObjectActive if one
# result IsActive), a prometheus trigger as active when its value is above its activationThreshold,
# 0 when not given (pkg/scalers/prometheus_scaler.go GetMetricsAndActivity: `val >
# s.metadata.ActivationThreshold`; KServe writes none), an empty result as 0 (ignoreNullValues,
# default true), and scales a target at zero to max(minReplicaCount, 1) when active
# (pkg/scaling/executor/scale_scaledobjects.go scaleFromZeroOrIdle); its cooldown (300 s,
# scale_executor.go defaultCooldownPeriod; KServe sets none) after the last active poll, it scales
# back to zero. The query is 1 while the model had a request through the router in the last
# WAKE_WINDOW, else 0: with `threshold` 1 the HPA KEDA makes asks for at most one replica of it (a
# prometheus trigger's AverageValue target: ceil(value / threshold), kubernetes
# pkg/controller/podautoscaler/replica_calculator.go GetExternalPerPodMetricReplicas; the HPA takes
# the largest of its metrics' counts), so the model server's signal alone sets the count above
# one, and a model whose own signal reads 0 under a light load (vLLM's waiting requests) is kept
# while requests come. Prometheus' increase() needs two samples of a
# series: a router pod's first request for a model with a new response code is seen from its
# second on (the client's retry, which the router's Retry-After asks for).
WAKE_WINDOW = "2m"
"""How far back a request through the router keeps its model awake: four scrapes at Prometheus'
30 s default, so a request is seen by at least one KEDA poll (30 s) within it."""
WAKE_THRESHOLD = "1"


def wake_signal(namespace: str, name: str) -> str:
    """The PromQL: 1 when the team router of `namespace` passed on a request for the InferenceService
    `name` in the last WAKE_WINDOW (answered or not), else 0. `namespace` is the router pod's (the
    scrape's target label, which no series of the pod's can set), the destination the model's
    predictor Service."""
    selector = (
        f'namespace="{namespace}",reporter="source",'
        f'destination_service_namespace="{namespace}",destination_service_name="{predictor_service(name)}"'
    )
    return f"sum(increase({ROUTER_REQUESTS}{{{selector}}}[{WAKE_WINDOW}])) > bool 0"


def keda_autoscaling(query: str, per_replica: str, prometheus: str, wake: str | None = None) -> tuple[dict[str, str], dict[str, Any]]:
    """(the InferenceService's annotations, its predictor's `autoScaling`): KEDA on `query`, a
    replica for each `per_replica` of its value, Prometheus at `prometheus`; with `wake`
    (wake_signal), a request through the team's router brings the model back from zero."""

    def external(promql: str, value: str) -> dict[str, Any]:
        metric = {"backend": "prometheus", "serverAddress": prometheus, "query": promql}
        return {"type": "External", "external": {"metric": metric, "target": {"type": "Value", "value": value}}}

    metrics = [external(query, per_replica)] + ([external(wake, WAKE_THRESHOLD)] if wake is not None else [])
    return {AUTOSCALER_CLASS_ANNOTATION: KEDA_AUTOSCALER}, {"metrics": metrics}
