"""Serving's builders (components/serving.py): the KServe charts rendered from the mirror with the
platform's values and transforms, the team router served by a real nginx, and the gateway's
token policies judged with Istio's semantics (tests/support/mesh.py)."""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import promql_parser
import pytest
import yaml

from components.access import GATEWAY_PRINCIPAL, USER_HEADER
from components.monitoring import NAMESPACE as MONITORING
from components.monitoring import PROMETHEUS_PORT, PROMETHEUS_URL
from components.profiles.serving import (
    MODEL_CLIENT,
    MODEL_SERVER,
    ROUTER,
    WAKE_RETRY_AFTER,
    model_store_objects,
    router_client_policy,
    router_config,
    router_objects,
    service_account_user,
    serving_pod_default,
    serving_pod_labels,
    token_objects,
)
from components.serving import (
    DEFAULT_ROLLOUT,
    KEDA_NAMESPACE,
    MULTINODE_RUNTIME,
    kserve_values,
    kubeflow_roles,
    runtime_values,
    with_multinode_runtime_disabled,
    with_rollout_strategy,
)
from components.serving_autoscaling import keda_autoscaling, serving_signal, wake_signal
from components.serving_runtimes import gpu_runtimes
from facts.node_labels import GPU_RESOURCE, Taint, pool_selector, pool_taints
from facts.versions import KSERVE_CHART, KSERVE_RUNTIMES_CHART
from tests.support import crds, mirror
from tests.support import nginx as real_nginx
from tests.support.mesh import Pod, Request, istio_decision, network_allows
from tests.support.pools import FakePool
from tests.support.renders import rendered
from tests.support.validation import validate as validate_object
from tooling import tools


def helm_template(chart: str, version: str, values: dict[str, Any], tmp_path: Path) -> list[dict[str, Any]]:
    """`helm template` of a pinned chart of the mirror with `values`: its objects."""
    values_file = tmp_path / f"{chart}-values.yaml"
    values_file.write_text(yaml.safe_dump(values))
    package = mirror.MIRROR / "charts" / f"{chart}-{version}.tgz"
    run = subprocess.run(
        [tools.find(tools.HELM), "template", "kserve", str(package), "--namespace", "kserve", "-f", str(values_file)],
        capture_output=True, text=True, timeout=120, check=True,
    )
    return [o for o in yaml.safe_load_all(run.stdout) if o]


@mirror.needed
def test_the_controller_runs_in_standard_mode_with_no_surge_and_no_ingress_of_its_own(tmp_path: Path) -> None:
    objects = helm_template(KSERVE_CHART.name, KSERVE_CHART.version, kserve_values(), tmp_path)
    config = next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "inferenceservice-config")
    transformed = with_rollout_strategy(config)
    assert transformed is not None
    deploy = json.loads(transformed["data"]["deploy"])
    assert deploy == {"defaultDeploymentMode": "Standard", "deploymentRolloutStrategy": {"defaultRollout": DEFAULT_ROLLOUT}}
    ingress = json.loads(transformed["data"]["ingress"])
    assert ingress["disableIngressCreation"] is True and ingress["disableIstioVirtualHost"] is True
    assert json.loads(transformed["data"]["storageInitializer"])["image"] == "kserve/storage-initializer:v0.20.0"
    # The webhooks' certificate is cert-manager's: the chart's Issuer and Certificate, injected by cainjector.
    kinds = {o["kind"] for o in objects}
    assert {"Issuer", "Certificate"} <= kinds
    hooks = [o for o in objects if o["kind"] in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")]
    assert hooks and all(h["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == "kserve/serving-cert" for h in hooks)
    assert all(with_rollout_strategy(o) is None for o in objects if o is not config)


@mirror.needed
def test_the_runtimes_on_are_sklearn_xgboost_huggingface_and_triton(tmp_path: Path) -> None:
    objects = helm_template(KSERVE_RUNTIMES_CHART.name, KSERVE_RUNTIMES_CHART.version, runtime_values(), tmp_path)
    runtimes = [with_multinode_runtime_disabled(o) or o for o in objects if o["kind"] == "ClusterServingRuntime"]
    enabled = sorted(r["metadata"]["name"] for r in runtimes if not r["spec"]["disabled"])
    assert enabled == ["kserve-huggingfaceserver", "kserve-sklearnserver", "kserve-tritonserver", "kserve-xgbserver"]
    # The multi-node runtime follows the single-node one's switch in the chart: only the transform turns it off.
    (multinode,) = [o for o in objects if o["metadata"]["name"] == MULTINODE_RUNTIME]
    assert multinode["spec"]["disabled"] is False
    triton = next(r for r in runtimes if r["metadata"]["name"] == "kserve-tritonserver")
    assert {"name": "pytorch", "version": "1"} in triton["spec"]["supportedModelFormats"]


def test_editors_manage_inference_services_and_viewers_read_them() -> None:
    admin, edit, view = kubeflow_roles()
    assert admin["aggregationRule"]["clusterRoleSelectors"] == [{"matchLabels": {"rbac.authorization.kubeflow.org/aggregate-to-kubeflow-kserve-admin": "true"}}]
    assert edit["metadata"]["labels"]["rbac.authorization.kubeflow.org/aggregate-to-kubeflow-edit"] == "true"
    assert view["metadata"]["labels"] == {"rbac.authorization.kubeflow.org/aggregate-to-kubeflow-view": "true"}
    assert "create" in edit["rules"][0]["verbs"] and set(view["rules"][0]["verbs"]) == {"get", "list", "watch"}
    assert "inferenceservices" in view["rules"][0]["resources"]


# --- the router, served --------------------------------------------------------------------


class _Echo(http.server.BaseHTTPRequestHandler):
    """An upstream that says what it was sent: method, path with query, Host, body length; on
    /answer/<code>, that code with a plain body, as the sidecar's own 503 ("no healthy upstream")
    or a model server's error."""

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path.startswith("/answer/"):
            code = int(self.path.removeprefix("/answer/"))
            text = b"no healthy upstream" if code == 503 else b"the model's own answer"
            self.send_response(code)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)
            return
        answer = json.dumps({"method": self.command, "path": self.path, "host": self.headers["Host"], "body": len(body)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def echo() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield int(server.server_address[1])
    server.shutdown()


def _nginx() -> str:
    found = real_nginx.nginx_binary()
    if found is None:
        if real_nginx.required_in_ci():
            pytest.fail(f"no nginx: {real_nginx.INSTALL}")
        pytest.skip(f"no nginx: {real_nginx.INSTALL}")
    return found


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def _router(tmp_path: Path, echo: int, models: tuple[str, ...] = ("mnist-cnn",)) -> Iterator[str]:
    """Team nlp's router served by a real nginx on loopback, each of `models`' predictors an nginx
    upstream of its Service's name on the echo server (nginx takes an upstream of that name before
    asking its resolver); yields the router's base URL."""
    nginx = _nginx()
    port = _free_port()
    upstreams = "".join(f"upstream {m}-predictor.nlp.svc.cluster.local {{ server 127.0.0.1:{echo}; }}\n" for m in models)
    conf = {"router.conf": router_config("nlp", resolver="127.0.0.1:9", listen=f"127.0.0.1:{port}"), "upstream.conf": upstreams}
    config = real_nginx.main_config(tmp_path, conf)
    checked = real_nginx.check(nginx, config)
    assert checked.returncode == 0, checked.stderr
    process = real_nginx.start(nginx, config)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 10
        while True:
            try:
                urllib.request.urlopen(f"{base}/", timeout=1)
            except urllib.error.HTTPError:
                break  # nginx answers (404): up
            except OSError:
                assert time.monotonic() < deadline, "nginx did not start"
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_router_passes_a_models_path_to_its_predictor_and_nothing_else(tmp_path: Path, echo: int) -> None:
    """/serving/nlp/<name>/<rest>?<query> reaches <name>-predictor.nlp.svc.cluster.local/<rest>?<query>;
    another team's prefix, a name KServe would refuse and a bare prefix do not."""
    with _router(tmp_path, echo) as base:
        with urllib.request.urlopen(f"{base}/serving/nlp/mnist-cnn/v2/models/mnist-cnn/ready?verbose=1", timeout=5) as got:
            seen = json.load(got)
        assert seen == {"method": "GET", "path": "/v2/models/mnist-cnn/ready?verbose=1", "host": "mnist-cnn-predictor.nlp.svc.cluster.local", "body": 0}
        body = json.dumps({"inputs": [{"name": "INPUT__0", "shape": [1], "datatype": "FP32", "data": [0.5]}]}).encode()
        posted = urllib.request.Request(f"{base}/serving/nlp/mnist-cnn/v2/models/mnist-cnn/infer", data=body, method="POST")
        with urllib.request.urlopen(posted, timeout=5) as got:
            seen = json.load(got)
        assert (seen["method"], seen["path"], seen["body"]) == ("POST", "/v2/models/mnist-cnn/infer", len(body))
        for path in ("/serving/vision/mnist-cnn/v2/models", "/serving/nlp/Mnist_CNN/v2", "/serving/nlp/mnist-cnn", "/v2/models"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(f"{base}{path}", timeout=5)
            assert refused.value.code == 404, path


def test_a_model_with_no_ready_replica_is_answered_503_with_retry_after_and_why(tmp_path: Path, echo: int) -> None:
    """The sidecar's 503 for a predictor Service with no endpoint (a model at zero, waking or
    starting) reaches the client as 503 with Retry-After and a JSON body naming the model; a
    POST's too (a query); any other answer of the model's passes unchanged."""
    with _router(tmp_path, echo, ("chat",)) as base:
        for method, data in (("GET", None), ("POST", b'{"prompt": "hi"}')):
            asked = urllib.request.Request(f"{base}/serving/nlp/chat/answer/503", data=data, method=method)
            with pytest.raises(urllib.error.HTTPError) as waking:
                urllib.request.urlopen(asked, timeout=5)
            assert waking.value.code == 503, method
            assert waking.value.headers["Retry-After"] == str(WAKE_RETRY_AFTER)
            assert waking.value.headers["Content-Type"] == "application/json"
            error = json.load(waking.value)["error"]
            assert error.startswith("model chat has no ready replica") and f"retry after {WAKE_RETRY_AFTER} seconds" in error
        for code in (500, 404, 429):
            with pytest.raises(urllib.error.HTTPError) as answered:
                urllib.request.urlopen(f"{base}/serving/nlp/chat/answer/{code}", timeout=5)
            assert (answered.value.code, answered.value.read(), answered.value.headers["Retry-After"]) == (code, b"the model's own answer", None)


def test_the_gateway_routes_the_teams_prefix_to_its_router_unchanged() -> None:
    config, deployment, service, route, _ = router_objects("nlp")
    assert config["data"]["default.conf"] == router_config("nlp")
    (http_route,) = route["spec"]["http"]
    assert http_route["match"] == [{"uri": {"prefix": "/serving/nlp/"}}] and "rewrite" not in http_route
    assert http_route["route"][0]["destination"] == {"host": f"{ROUTER}.nlp.svc.cluster.local", "port": {"number": 80}}
    assert service["spec"]["ports"][0]["targetPort"] == deployment["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"]


# --- tokens ---------------------------------------------------------------------------------

ISSUER = "https://kubernetes.default.svc"
GATEWAY = ("istio-system", {"app": "istio-ingressgateway", "istio": "ingressgateway"})


def _gateway_allows(policies: list[dict[str, Any]], principal: str, path: str, method: str = "POST") -> bool:
    request = Request(method, path, 8080, request_principal=principal)
    return istio_decision(policies, GATEWAY[0], GATEWAY[1], request).allowed


def test_a_teams_model_client_token_reaches_its_teams_models_and_nothing_else() -> None:
    from components.serving import gateway_token_objects

    objects = gateway_token_objects(GATEWAY[0], {"app": "istio-ingressgateway"}, ISSUER, f"{ISSUER}/openid/v1/jwks", "mlplatform-serving", ["nlp", "vision"])
    authentication, deny = objects
    (rule,) = authentication["spec"]["jwtRules"]
    assert rule["audiences"] == ["mlplatform-serving"] and rule["issuer"] == ISSUER
    assert {"header": USER_HEADER, "claim": "sub"} in rule["outputClaimToHeaders"]
    nlp_client = f"{ISSUER}/{service_account_user('nlp', MODEL_CLIENT)}"
    assert _gateway_allows([deny], nlp_client, "/serving/nlp/mnist-cnn/v2/models/mnist-cnn/infer")
    assert not _gateway_allows([deny], nlp_client, "/serving/vision/mnist-cnn/v2/models/mnist-cnn/infer")
    assert not _gateway_allows([deny], nlp_client, "/notebook/nlp/nb/", "GET")
    assert not _gateway_allows([deny], nlp_client, "/pipeline/apis/v2beta1/runs", "GET")
    # Another account of the team (a notebook's default-editor) is refused everywhere, its own prefix too.
    assert not _gateway_allows([deny], f"{ISSUER}/{service_account_user('nlp', 'default-editor')}", "/serving/nlp/mnist-cnn/v2/models")
    # A person's Dex token is not these policies' business.
    assert _gateway_allows([deny], "http://dex.auth.svc.cluster.local:5556/dex/ana@acme.com", "/notebook/nlp/nb/", "GET")


def test_the_router_lets_in_its_teams_model_client_on_its_prefix_only() -> None:
    policy = router_client_policy("nlp")
    labels = {"app.kubernetes.io/name": ROUTER}
    client = {USER_HEADER: service_account_user("nlp", MODEL_CLIENT)}

    def allowed(path: str, headers: dict[str, str], principal: str = GATEWAY_PRINCIPAL) -> bool:
        return istio_decision([policy], "nlp", labels, Request("POST", path, 8080, principal=principal, namespace="istio-system", headers=headers)).allowed

    assert allowed("/serving/nlp/mnist-cnn/v2/models/mnist-cnn/infer", client)
    assert not allowed("/serving/nlp/mnist-cnn/v2/models/mnist-cnn/infer", {USER_HEADER: service_account_user("vision", MODEL_CLIENT)})
    assert not allowed("/other", client)


def test_the_team_mints_tokens_of_the_model_client_only() -> None:
    members = [{"kind": "User", "name": "ana@acme.com", "apiGroup": "rbac.authorization.k8s.io"}]
    account, role, binding = token_objects("nlp", members)
    assert account["metadata"] == {"name": MODEL_CLIENT, "namespace": "nlp"}
    assert role["rules"] == [{"apiGroups": [""], "resources": ["serviceaccounts/token"], "resourceNames": [MODEL_CLIENT], "verbs": ["create"]}]
    assert binding["subjects"] == members and binding["roleRef"]["name"] == role["metadata"]["name"]
    assert token_objects("nlp", []) == [account]


# --- GPU runtimes ----------------------------------------------------------------------------



def test_each_device_plugin_gpu_pool_gets_a_vllm_and_a_huggingface_runtime_placed_on_it() -> None:
    spot = FakePool("l4", spot=True, extra_taints=(Taint("team", "nlp", "NoSchedule"),))
    runtimes = gpu_runtimes([spot, FakePool("h100", accelerator="nvidia-h100-80gb"), FakePool("b200", accelerator="nvidia-b200", dra=True)])
    assert [r["metadata"]["name"] for r in runtimes] == [
        "kserve-vllm-l4", "kserve-huggingface-l4", "kserve-vllm-h100", "kserve-huggingface-h100",
    ]  # no runtime on the DRA pool: its GPUs are claimed, which a runtime cannot say
    vllm, huggingface = runtimes[:2]
    for runtime in (vllm, huggingface):
        spec = runtime["spec"]
        assert spec["nodeSelector"] == pool_selector(spot) and spec["nodeSelector"]["cloud.google.com/gke-spot"] == "true"
        assert spec["tolerations"] == [t.toleration() for t in pool_taints(spot)] and len(spec["tolerations"]) == 2
        (container,) = spec["containers"]
        assert container["resources"]["limits"][GPU_RESOURCE] == "1" == container["resources"]["requests"][GPU_RESOURCE]
        assert all(not f["autoSelect"] for f in spec["supportedModelFormats"])  # a predictor names the pool's runtime
    (vllm_container,) = vllm["spec"]["containers"]
    assert vllm_container["image"] == "vllm/vllm-openai:v0.24.0" and "--served-model-name={{.Name}}" in vllm_container["args"]
    assert huggingface["spec"]["containers"][0]["image"] == "kserve/huggingfaceserver:v0.20.0-gpu"


@mirror.needed
def test_the_vllm_runtime_starts_vllm_as_the_charts_own_runtime_does(tmp_path: Path) -> None:
    """The chart's kserve-vllmserver (enabled here to read it: the chart's base file with its patch)
    starts vLLM's OpenAI server with `python -m`; ours starts it the same way, with the chart's
    arguments and its /dev/shm, so a change of either shows here."""
    objects = helm_template(KSERVE_RUNTIMES_CHART.name, KSERVE_RUNTIMES_CHART.version, {"kserve": {"servingruntime": {"enabled": True, "vllmserver": {"disabled": False}}}}, tmp_path)
    chart = next(o for o in objects if o["kind"] == "ClusterServingRuntime" and o["metadata"]["name"] == "kserve-vllmserver")
    (upstream,) = chart["spec"]["containers"]
    (ours,) = gpu_runtimes([FakePool("l4")])[0]["spec"]["containers"]
    assert ours.get("command") == upstream.get("command")
    assert set(upstream["args"]) <= set(ours["args"])
    assert [m["mountPath"] for m in ours["volumeMounts"]] == [m["mountPath"] for m in upstream["volumeMounts"]]


def test_the_teams_serving_pods_get_the_model_stores_identity_and_gcs_fuse_from_one_pod_default() -> None:
    gke = serving_pod_default("nlp", model_store=True)
    spec = gke["spec"]
    assert spec["selector"] == {"matchExpressions": [{"key": "serving.kserve.io/inferenceservice", "operator": "Exists"}]}
    assert spec["serviceAccountName"] == MODEL_SERVER and spec["annotations"]["gke-gcsfuse/volumes"] == "true"
    # Istio's annotations for GCS Fuse, as the team's own PodDefault has them.
    assert spec["annotations"]["traffic.sidecar.istio.io/excludeOutboundIPRanges"] == "169.254.169.254/32"
    kind = serving_pod_default("nlp", model_store=False)["spec"]
    assert "serviceAccountName" not in kind and "annotations" not in kind
    if crds.available():
        assert validate_object(gke) == [] and validate_object(serving_pod_default("nlp", model_store=False)) == []  # Kubeflow's PodDefault CRD
    # Kueue's priority, on GKE and on kind: a serving replica is interactive work (issue 42's class).
    assert spec["labels"] == kind["labels"] == serving_pod_labels() == {"kueue.x-k8s.io/priority-class": "interactive"}


def test_the_model_store_is_the_team_bucket_read_only_on_gkes_serving_profile_for_its_team_alone() -> None:
    volume, claim = model_store_objects("nlp", "acme-ml-nlp")
    assert volume["spec"]["csi"] == {"driver": "gcsfuse.csi.storage.gke.io", "volumeHandle": "acme-ml-nlp", "readOnly": True}
    assert volume["spec"]["storageClassName"] == claim["spec"]["storageClassName"] == "gcsfusecsi-serving"
    assert volume["spec"]["claimRef"] == {"namespace": "nlp", "name": "team-models"}  # no other namespace's claim binds it
    assert claim["spec"]["volumeName"] == volume["metadata"]["name"] == "nlp-team-models"
    assert volume["spec"]["accessModes"] == claim["spec"]["accessModes"] == ["ReadOnlyMany"]
    for obj in (volume, claim):
        assert validate_object(obj) == []


@mirror.needed
def test_kedas_metrics_server_and_webhook_take_their_certificates_from_cert_manager(tmp_path: Path) -> None:
    from components.serving import KEDA_CONTROL_PLANE_PORTS, keda_values
    from facts.versions import KEDA_CHART

    objects = helm_template(KEDA_CHART.name, KEDA_CHART.version, keda_values(), tmp_path)
    called = [o for o in objects if o["kind"] in ("APIService", "ValidatingWebhookConfiguration")]
    assert {o["kind"] for o in called} == {"APIService", "ValidatingWebhookConfiguration"}
    assert all("cert-manager.io/inject-ca-from" in o["metadata"]["annotations"] for o in called)
    assert {o["kind"] for o in objects} >= {"Certificate", "Issuer"}
    # The ports the control plane calls: the Services' target ports behind the APIService and the webhook.
    services = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Service"}
    (api,) = [o for o in called if o["kind"] == "APIService"]
    (hook,) = [o for o in called if o["kind"] == "ValidatingWebhookConfiguration"]
    targets = {
        next(p["targetPort"] for p in services[api["spec"]["service"]["name"]]["spec"]["ports"] if p["port"] == 443),
        next(p["targetPort"] for p in services[hook["webhooks"][0]["clientConfig"]["service"]["name"]]["spec"]["ports"] if p["port"] == 443),
    }
    assert targets == set(KEDA_CONTROL_PLANE_PORTS)


def test_the_serving_dashboard_alerts_and_monitor_read_the_pinned_metric_names() -> None:
    """Every PromQL parses, and names only metrics of vLLM 0.24.0 (its wheel's v1/metrics/loggers.py),
    kserve 0.20.0 (kserve/metrics.py), kube-state-metrics, DCGM and Prometheus itself."""
    from components.dashboards.common import to_json
    from components.dashboards.serving import MODEL_LABEL, dashboard, predictor_pod_monitor_spec, serving_alert_rules
    from tests.support.promql import dashboard_expressions, metric_names, parse

    known = {
        "vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
        "vllm:time_to_first_token_seconds_bucket", "vllm:e2e_request_latency_seconds_bucket",
        "vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:request_success_total",
        "request_predict_seconds_count", "request_predict_seconds_bucket",
        "kube_deployment_spec_replicas", "kube_deployment_status_replicas_available", "DCGM_FI_DEV_GPU_UTIL", "up",
    }
    names: set[str] = set()
    for _, expr in dashboard_expressions(to_json(dashboard())):
        names |= metric_names(parse(expr))
    for rule in serving_alert_rules():
        names |= metric_names(parse(rule["expr"]))
    assert names and names <= known, names - known
    (endpoint,) = predictor_pod_monitor_spec()["podMetricsEndpoints"]
    assert endpoint["relabelings"][-1]["targetLabel"] == MODEL_LABEL and "port" not in endpoint
    monitor = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor", "metadata": {"name": "kserve-predictors", "namespace": "monitoring"}, "spec": predictor_pod_monitor_spec()}
    if crds.available():
        assert validate_object(monitor) == []  # prometheus-operator's PodMonitor CRD


# --- replicas on a serving signal ---------------------------------------------------------------


@mirror.needed
def test_kedas_operator_reaches_prometheus_through_the_monitoring_namespaces_policies() -> None:
    """The operator's pods as the pinned chart labels them, in the dev render: the monitoring
    namespace otherwise takes traffic from itself alone, and every prometheus trigger would time out."""
    objects = [o.obj for o in rendered("dev").objects]
    operator = next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "keda-operator")
    keda = Pod(KEDA_NAMESPACE, operator["spec"]["template"]["metadata"]["labels"])
    policies = [o for o in objects if o["kind"] == "NetworkPolicy"]
    prometheus = Pod(MONITORING, {"app.kubernetes.io/name": "prometheus"})
    assert network_allows(policies, {}, prometheus, PROMETHEUS_PORT, keda)
    assert not network_allows(policies, {}, prometheus, 9093, keda)  # Alertmanager's port stays closed
    assert not network_allows(policies, {}, prometheus, PROMETHEUS_PORT, Pod("nlp", {}))


def _triggers(autoscaling: dict[str, Any]) -> list[dict[str, Any]]:
    """The prometheus triggers KServe v0.20.0's KEDA reconciler makes of a predictor's External
    metrics, one per metric in order (keda_reconciler.go getKedaMetrics: the backend the trigger's
    type, its query and server, `threshold` the target's value)."""
    return [
        {
            "type": m["external"]["metric"]["backend"],
            "metadata": {
                "serverAddress": m["external"]["metric"]["serverAddress"],
                "query": m["external"]["metric"]["query"],
                "threshold": m["external"]["target"]["value"],
            },
        }
        for m in autoscaling["metrics"]
        if m["type"] == "External"
    ]


def test_a_predictor_follows_its_servers_load_through_keda_as_kserve_builds_the_scaled_object() -> None:
    """What the example puts on its InferenceService, and the ScaledObject KServe v0.20.0's KEDA
    reconciler makes of it (min and max the predictor's): the server's load, and with a wake
    signal a second trigger on the requests its team's router passed on."""
    query = serving_signal("vllm", "nlp", "chat")
    assert query == 'sum(vllm:num_requests_waiting{namespace="nlp",inferenceservice="chat"})'
    annotations, spec = keda_autoscaling(query, "4", PROMETHEUS_URL)
    assert annotations == {"serving.kserve.io/autoscalerClass": "keda"}
    server = "http://kube-prometheus-stack-prometheus.monitoring.svc:9090"
    load = {"type": "prometheus", "metadata": {"serverAddress": server, "query": query, "threshold": "4"}}
    assert _triggers(spec) == [load]
    _, woken = keda_autoscaling(query, "4", PROMETHEUS_URL, wake_signal("nlp", "chat"))
    wake = {"type": "prometheus", "metadata": {"serverAddress": server, "query": wake_signal("nlp", "chat"), "threshold": "1"}}
    assert _triggers(woken) == [load, wake]
    # Every signal reads the labels the serving PodMonitor writes and a metric of its server's.
    assert serving_signal("kserve", "nlp", "iris") == 'sum(rate(request_predict_seconds_count{namespace="nlp",inferenceservice="iris"}[1m]))'
    assert serving_signal("triton", "nlp", "mnist-cnn") == 'sum(rate(nv_inference_request_success{namespace="nlp",inferenceservice="mnist-cnn"}[1m]))'


def test_the_wake_signal_counts_the_routers_requests_for_the_models_predictor_service() -> None:
    """The wake query parses, reads the one metric the routers' monitor keeps, from the team's own
    router (the scrape's `namespace`) to the Service KServe makes for the predictor (the router's
    proxy_pass host), and is 0 or 1 (`> bool 0`: at most one replica at its threshold of 1)."""
    from components.dashboards.serving import ROUTER_REQUESTS
    from tests.support.promql import metric_names, parse

    expr = parse(wake_signal("nlp", "chat"))
    assert metric_names(expr) == {ROUTER_REQUESTS}
    assert isinstance(expr, promql_parser.BinaryExpr) and expr.modifier is not None and expr.modifier.return_bool
    matchers: dict[str, str] = {}

    def collect(node: promql_parser.Expr) -> bool:
        if isinstance(node, promql_parser.VectorSelector):
            matchers.update({m.name: m.value for m in node.matchers.matchers})
        return True

    promql_parser.walk(expr, pre_visit=collect)
    assert matchers == {"namespace": "nlp", "reporter": "source", "destination_service_namespace": "nlp", "destination_service_name": "chat-predictor"}
    # The router sends /serving/nlp/chat/... to that Service's name.
    assert "proxy_pass http://$model-predictor.nlp.svc.cluster.local" in router_config("nlp")


def test_the_routers_monitor_keeps_their_sidecars_outbound_request_counts_alone() -> None:
    """Prometheus keeps a scraped series when the metric relabeling's regex matches its joined
    labels whole (RE2, anchored): the routers' outbound request counts, nothing else of Envoy's."""
    from components.dashboards.serving import router_pod_monitor_spec

    spec = router_pod_monitor_spec()
    (endpoint,) = spec["podMetricsEndpoints"]
    (keep,) = endpoint["metricRelabelings"]
    kept = re.compile(keep["regex"])
    assert keep["action"] == "keep" and keep["sourceLabels"] == ["__name__", "reporter"]
    assert kept.fullmatch("istio_requests_total;source")
    for other in ("istio_requests_total;destination", "istio_request_duration_milliseconds_bucket;source", "envoy_cluster_upstream_rq_total;"):
        assert not kept.fullmatch(other)
    assert spec["selector"] == {"matchLabels": {"app.kubernetes.io/name": ROUTER}}
    monitor = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor", "metadata": {"name": "model-routers", "namespace": "monitoring"}, "spec": spec}
    if crds.available():
        assert validate_object(monitor) == []  # prometheus-operator's PodMonitor CRD


@mirror.needed
def test_the_routers_monitor_scrapes_a_port_the_injected_sidecar_of_a_router_declares() -> None:
    """In the dev render: the routers' PodMonitor is there; it selects the router's pods; the team
    namespace is injected and the router does not opt out; a Telemetry of its namespace turns on
    Prometheus' stats filter for it; the pinned injector's sidecar template declares the port the
    monitor names (Envoy's Prometheus port, 15090)."""
    from components.dashboards.serving import ENVOY_METRICS_PATH, ENVOY_METRICS_PORT, ROUTER_MONITOR

    objects = [o.obj for o in rendered("dev").objects]
    (monitor,) = [o for o in objects if o["kind"] == "PodMonitor" and o["metadata"]["name"] == ROUTER_MONITOR]
    assert [(e["port"], e["path"]) for e in monitor["spec"]["podMetricsEndpoints"]] == [(ENVOY_METRICS_PORT, ENVOY_METRICS_PATH)]
    routers = [o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == ROUTER]
    assert routers
    for router in routers:
        meta = router["spec"]["template"]["metadata"]
        assert all(meta["labels"].get(k) == v for k, v in monitor["spec"]["selector"]["matchLabels"].items())
        assert "sidecar.istio.io/inject" not in {**meta["labels"], **meta.get("annotations", {})}
        (namespace,) = [o for o in objects if o["kind"] == "Namespace" and o["metadata"]["name"] == router["metadata"]["namespace"]]
        assert namespace["metadata"]["labels"]["istio-injection"] == "enabled"
        # The mesh names no default metrics provider: the router's Telemetry turns Prometheus' on for
        # its outbound side (the stats filter that counts the requests), on its pods alone.
        (telemetry,) = [o for o in objects if o["kind"] == "Telemetry" and o["metadata"]["namespace"] == router["metadata"]["namespace"]]
        assert telemetry["spec"]["selector"]["matchLabels"].items() <= meta["labels"].items()
        (metrics,) = telemetry["spec"]["metrics"]
        assert metrics["providers"] == [{"name": "prometheus"}]
        assert metrics["overrides"] == [{"match": {"metric": "ALL_METRICS", "mode": "SERVER"}, "disabled": True}]
    (injector,) = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "istio-sidecar-injector"]
    template = yaml.safe_load(injector["data"]["config"])["templates"]["sidecar"]
    assert re.search(rf"- containerPort: 15090\s+protocol: TCP\s+name: {ENVOY_METRICS_PORT}\n", template)
    (mesh_config,) = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "istio" and o["metadata"]["namespace"] == "istio-system"]
    mesh = yaml.safe_load(mesh_config["data"]["mesh"])
    assert "defaultProviders" not in mesh  # why the Telemetry is needed; were it back, the Telemetry would be harmless
    # The provider it names is istiod's built-in `prometheus` (pkg/config/mesh/mesh.go DefaultMeshConfig), not redefined here.
    assert "prometheus" not in [p["name"] for p in mesh.get("extensionProviders", [])]


def test_the_replica_policys_wake_query_is_the_wake_signal_of_the_objects_own_name() -> None:
    """The policy compares each metric's query with a string it builds from the InferenceService's
    namespace and name; evaluated by CEL for a sample, it is what wake_signal gives for them, quotes
    and braces included, and the policy holds it only where the stack's floor lets a model reach 0."""
    from cel_expr_python import cel

    from components.serving import replica_bounds_policy

    spec = replica_bounds_policy(0, 4)["spec"]
    [expression] = [v["expression"] for v in spec["variables"] if v["name"] == "wakeQuery"]
    env = cel.NewEnv(variables={"object": cel.Type.DYN})
    for namespace, name in (("nlp", "chat"), ("team-a", "mnist-cnn"), ("team-01", "m2-7b-v1")):
        built = env.compile(expression).eval(data={"object": {"metadata": {"namespace": namespace, "name": name}}})
        assert built.plain_value() == wake_signal(namespace, name)
    assert spec["validations"][-1]["expression"].startswith("variables.minimum > 0 || ")
    floor_of_one = replica_bounds_policy(1, 4)["spec"]
    assert [v["name"] for v in floor_of_one["variables"]] == ["minimum", "maximum"] and len(floor_of_one["validations"]) == 2


def test_with_a_floor_of_zero_the_replica_policy_judges_a_change_of_the_autoscaler_class_alone() -> None:
    """The wake rule reads the InferenceService's own autoscalerClass, so an update that changes only
    it is judged (an hpa model at 0 turned keda by its annotation would never wake); a label alone,
    KServe's finalizer writes, are not. With a floor of 1 the condition is the spec's only."""
    from cel_expr_python import cel

    from components.serving import replica_bounds_policy
    from facts.admission import SPEC_CHANGED

    [condition] = replica_bounds_policy(0, 4)["spec"]["matchConditions"]
    env = cel.NewEnv(variables={"object": cel.Type.DYN, "oldObject": cel.Type.DYN, "request": cel.Type.DYN})
    program = env.compile(condition["expression"])

    def model(klass: str | None, labels: dict[str, str] | None = None) -> dict[str, object]:
        metadata: dict[str, object] = {"name": "chat", "labels": labels or {}}
        if klass is not None:
            metadata["annotations"] = {"serving.kserve.io/autoscalerClass": klass}
        return {"metadata": metadata, "spec": {"predictor": {"minReplicas": 0}}}

    def judged(old: dict[str, object], new: dict[str, object]) -> bool:
        return bool(program.eval(data={"object": new, "oldObject": old, "request": {"operation": "UPDATE"}}).plain_value())

    assert judged(model("hpa"), model("keda")) and judged(model("hpa"), model(None)) and judged(model(None), model("none"))
    assert not judged(model("hpa"), model("hpa", {"team": "nlp"}))
    assert not judged(model(None), model(None, {"team": "nlp"}))
    assert replica_bounds_policy(1, 4)["spec"]["matchConditions"] == [SPEC_CHANGED]
