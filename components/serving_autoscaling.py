"""A predictor's replicas on a serving signal through KEDA, and the signal that wakes a model at
zero replicas: what a data scientist puts on an InferenceService (examples/kserve_mnist.py) for
KServe v0.20.0 to make a ScaledObject of (docs/serving.md, "Replicas follow load" and "Scale to
zero, and back"). KEDA itself is installed by the serving component (components/serving.py).
"""

from __future__ import annotations

from typing import Any

from components.dashboards.serving import MODEL_LABEL, ROUTER_REQUESTS
from facts.admission import SPEC_CHANGED, cel_concat, cel_list, cel_string
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


# --- a model that can reach zero must carry its wake signal: the replica policy's rule --------------
# KServe v0.20.0 in Standard mode takes a predictor to zero replicas in two cases only, by the
# autoscaler class its objects carry (the predictor's annotations over the InferenceService's over
# its ServingRuntime's: components/predictor.go buildObjectMeta; hpa where none names one:
# reconcilers/autoscaler/autoscaler_reconciler.go getAutoscalerClass, constants.go
# DefaultAutoscalerClass). `keda`: the ScaledObject takes minReplicas as it is, 0 included
# (keda_reconciler.go createKedaScaledObject), so without the wake signal nothing brings a replica
# back. `none`: no autoscaler, and the Deployment is made with minReplicas replicas
# (deployment_reconciler.go createRawDefaultDeployment), 0 for good. `hpa` never goes below 1
# (hpa_reconciler.go createHPA, constants.go DefaultMinReplicas) and `external` makes no autoscaler
# and leaves the Deployment's replicas unset (1) for the team's own; KServe's validation has no
# word on minReplicas in either mode (inference_service_validation.go). So, where the stack's floor
# allows 0, the replica policy (components/serving.py) refuses a predictor at minReplicas 0 unless
# the InferenceService names hpa or external, or keda with this model's wake signal: an External
# metric of backend prometheus, the query wake_signal gives for its own namespace and name (built
# here from the same function, so the two cannot drift), and a target value of 1 (WAKE_THRESHOLD).
# A class named nowhere is refused too: its ServingRuntime (`spec.annotations`, merged under the
# InferenceService's: predictor.go buildObjectMeta), which a team's editors may write, could name
# keda or none. The target's value is an int-or-string quantity that KServe passes to KEDA as
# written (metric_quantity.go MetricQuantity.Original; keda_reconciler.go getKedaMetrics
# `threshold`), so 1 and "1" both qualify and CEL compares its string().
_NAMESPACE, _NAME = "\x00namespace\x00", "\x00name\x00"
WAKE_QUERY_CEL = cel_concat(wake_signal(_NAMESPACE, _NAME), {_NAMESPACE: "object.metadata.namespace", _NAME: "object.metadata.name"})
"""The CEL string expression of wake_signal(<the object's namespace>, <its name>)."""
NEVER_ZERO = ("hpa", "external")
"""The autoscaler classes under which KServe never takes a predictor to zero replicas itself."""
_WAKE_HELPER = "components/serving_autoscaling.py keda_autoscaling(..., wake=wake_signal(namespace, name)), docs/serving.md \"Scale to zero, and back\""


def _class_in(*annotations: str) -> str:
    """CEL: the autoscaler class the first of the `annotations` maps naming one names ('' where none)."""
    key = cel_string(AUTOSCALER_CLASS_ANNOTATION)
    return "".join(f"has({a}) && {key} in {a} ? {a}[{key}] : " for a in annotations) + "''"


SPEC_OR_CLASS_CHANGED = {
    "name": "spec-or-autoscaler-class-changed",
    "expression": f"{SPEC_CHANGED['expression']} || ({_class_in('object.metadata.annotations')}) != ({_class_in('oldObject.metadata.annotations')})",
}
"""The replica policy's match condition where its wake rule applies: SPEC_CHANGED's, and an update
that changes only the InferenceService's own autoscaler class, which the rule reads (an hpa model at
0, admitted, turned keda or none by its annotation alone would never wake)."""


def wake_variables() -> list[dict[str, str]]:
    """The replica policy's variables for its wake rule: the autoscaler class the InferenceService
    names ('' where it names none), the wake query of its name, and whether a metric carries it."""
    named = _class_in("object.spec.predictor.annotations", "object.metadata.annotations")
    carries = (
        "has(object.spec.predictor.autoScaling) && has(object.spec.predictor.autoScaling.metrics) && object.spec.predictor.autoScaling.metrics.exists(m, "
        "m.type == 'External' && has(m.external) && has(m.external.metric.backend) && m.external.metric.backend == 'prometheus' && "
        "has(m.external.metric.query) && m.external.metric.query == variables.wakeQuery && "
        f"has(m.external.target.value) && string(m.external.target.value) == {cel_string(WAKE_THRESHOLD)})"
    )
    return [{"name": "autoscaler", "expression": named}, {"name": "wakeQuery", "expression": WAKE_QUERY_CEL}, {"name": "wakes", "expression": carries}]


def wake_validation(minimum: str) -> dict[str, str]:
    """The rule on the predictor's minimum replicas (the CEL `minimum`): at zero, it must wake.
    The refusal says why and the two ways out."""
    keda, never = cel_string(KEDA_AUTOSCALER), cel_list(NEVER_ZERO)
    by_keda = cel_string("lets KEDA take this model to zero replicas")
    by_runtime = cel_string(f"with no {AUTOSCALER_CLASS_ANNOTATION} named here lets its ServingRuntime's class take this model to zero replicas")
    wake_metric = "autoscalerClass keda and an External metric of backend prometheus, query "
    fixes = (
        f"{cel_string(', and no request would ever wake it. Either add the wake metric (' + wake_metric)} + variables.wakeQuery + "
        f"{cel_string(f', target value {WAKE_THRESHOLD}: {_WAKE_HELPER}), or set spec.predictor.minReplicas to 1 or more')}"
    )
    by_other = f"{cel_string(f'with {AUTOSCALER_CLASS_ANNOTATION} ')} + variables.autoscaler + {cel_string(' may take this model to zero replicas')}"
    to_zero = f"(variables.autoscaler == {keda} ? {by_keda} : variables.autoscaler == '' ? {by_runtime} : {by_other}) + {fixes}"
    none = cel_string(
        f"with {AUTOSCALER_CLASS_ANNOTATION} none: KServe keeps the predictor's Deployment at 0 replicas and nothing ever starts one. "
        f"Set spec.predictor.minReplicas to 1 or more, or use autoscalerClass keda with the wake metric ({_WAKE_HELPER}); "
        'to stop a model, KServe\'s annotation serving.kserve.io/stop: "true"'
    )
    return {
        "expression": f"{minimum} > 0 || variables.autoscaler in {never} || (variables.autoscaler == {keda} && variables.wakes)",
        "messageExpression": f"'spec.predictor.minReplicas 0 ' + (variables.autoscaler == 'none' ? {none} : {to_zero})",
    }
