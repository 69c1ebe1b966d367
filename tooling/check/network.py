"""What reaches what: the control plane every webhook and aggregated API it calls, GKE's load
balancer the NEG backends, pods the Networks of their GPU fabric."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from components.gateway import GOOGLE_LB_RANGES
from components.inference_gateway import POOL_HEALTH_CHECK_ANNOTATION, gke_gateway_network
from components.profiles.serving_llm import TEAM_LLM_CONFIG
from components.serving import CONFIG_MAP as SERVING_CONFIG_MAP
from components.serving import NAMESPACE as SERVING_NAMESPACE
from facts import fabric_pods
from tooling.check.platform import Platform, Violation, admits, check_rule, label, mappings_where
from tooling.fullrender import Rendered


def container_port(template: dict[str, Any], port: Any) -> int | None:
    """A Service targetPort (number or name) as the container port number it reaches."""
    if isinstance(port, int) or str(port).isdigit():
        return int(port)
    for container in ((template.get("spec") or {}).get("containers")) or []:
        for p in container.get("ports") or []:
            if p.get("name") == port:
                return int(p["containerPort"])
    return None


def port_names(template: dict[str, Any], number: int) -> set[str]:
    names = set()
    for container in ((template.get("spec") or {}).get("containers")) or []:
        for p in container.get("ports") or []:
            if p.get("containerPort") == number and p.get("name"):
                names.add(p["name"])
    return names


def control_plane_calls(platform: Platform) -> Iterator[tuple[Rendered, str, dict[str, Any]]]:
    """(object, what calls, service reference) of every call the API server makes into the
    cluster: admission webhooks, CRD conversion webhooks (apiextensions.k8s.io/v1
    `spec.conversion.webhook.clientConfig.service`) and aggregated APIs (apiregistration.k8s.io/v1
    APIService `spec.service`). Each reference has namespace, name and an optional port (443)."""
    for o in platform.of_kind("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        for hook in o.obj.get("webhooks") or []:
            ref = (hook.get("clientConfig") or {}).get("service")
            if ref:
                yield o, f"webhook {hook.get('name')}", ref
    for o in platform.of_kind("CustomResourceDefinition"):
        conversion = (o.obj.get("spec") or {}).get("conversion") or {}
        ref = ((conversion.get("webhook") or {}).get("clientConfig") or {}).get("service")
        if conversion.get("strategy") == "Webhook" and ref:
            yield o, "conversion webhook", ref
    for o in platform.of_kind("APIService"):
        ref = (o.obj.get("spec") or {}).get("service")
        if ref:
            yield o, "aggregated API", ref


@check_rule("control-plane-reach", "every admission webhook, conversion webhook and aggregated API reachable from the API server")
def control_plane_reachable(platform: Platform) -> Iterator[Violation]:
    """Every call the API server makes into the cluster (control_plane_calls) is reachable: its
    Service and target port exist, NetworkPolicies admit the API server, and a private GKE
    cluster's firewall opens the pod's port (the control plane reaches pods directly). An
    unreachable webhook fails the requests it admits; an unreachable conversion webhook every
    read of its CRD's other versions; an unavailable aggregated API breaks discovery, which
    stalls namespace deletion cluster-wide."""
    for o, caller, ref in control_plane_calls(platform):
        where = f"{caller} -> {ref.get('namespace')}/{ref.get('name')}"
        service = platform.service(ref.get("namespace", ""), ref.get("name", ""))
        if service is None:
            yield Violation("control-plane-reach", label(o), o.source, f"{where}: no such Service")
            continue
        port = ref.get("port", 443)
        spec_port = next((p for p in (service.obj.get("spec") or {}).get("ports") or [] if p.get("port") == port), None)
        if spec_port is None:
            yield Violation("control-plane-reach", label(o), o.source, f"{where}: the Service has no port {port}")
            continue
        pods = platform.pods_behind(service)
        if not pods:
            yield Violation("control-plane-reach", label(o), o.source, f"{where}: no pods match the Service's selector")
            continue
        for template in pods:
            number = container_port(template, spec_port.get("targetPort", port))
            if number is None:
                yield Violation("control-plane-reach", label(o), o.source, f"{where}: target port {spec_port.get('targetPort')} names no container port")
                continue
            pod_labels = ((template.get("metadata") or {}).get("labels")) or {}
            policies = platform.policies_for(service.key[2], pod_labels)
            if not admits(policies, number, port_names(template, number), None):
                yield Violation("control-plane-reach", label(o), o.source, f"{where}: NetworkPolicies in {service.key[2]} drop the API server's traffic to port {number}")
            ports = platform.firewall_ports
            if ports is not None and number not in ports:
                yield Violation(
                    "control-plane-reach", label(o), o.source,
                    f"{where}: the private cluster's control-plane firewall does not open port {number}; add it to infra/gke.py CONTROL_PLANE_TARGET_PORTS",
                )


@check_rule("load-balancer", "GKE load balancer and health checks reach NEG backends")
def load_balancer_admitted(platform: Platform) -> Iterator[Violation]:
    """Every Service behind a GKE Ingress (container-native, NEG) admits Google's load-balancer
    and health-check ranges on its serving port and its health-check port."""
    for service in platform.of_kind("Service"):
        annotations = (service.obj.get("metadata") or {}).get("annotations") or {}
        try:
            neg = json.loads(annotations.get("cloud.google.com/neg", "{}"))
        except json.JSONDecodeError:
            neg = {}
        if not neg.get("ingress"):
            continue
        health_ports: set[int] = set()
        backend = json.loads(annotations.get("cloud.google.com/backend-config", "{}")).get("default")
        for config in platform.of_kind("BackendConfig"):
            if config.key[2:] == (service.key[2], backend):
                port = ((config.obj.get("spec") or {}).get("healthCheck") or {}).get("port")
                if port:
                    health_ports.add(int(port))
        for template in platform.pods_behind(service):
            pod_labels = ((template.get("metadata") or {}).get("labels")) or {}
            policies = platform.policies_for(service.key[2], pod_labels)
            serving = {container_port(template, p.get("targetPort", p.get("port"))) for p in (service.obj.get("spec") or {}).get("ports") or []}
            for number in sorted(p for p in serving | health_ports if p is not None):
                for source in GOOGLE_LB_RANGES:
                    if not admits(policies, number, port_names(template, number), source):
                        yield Violation("load-balancer", label(service), service.source, f"NetworkPolicies in {service.key[2]} drop {source} to port {number}")


def _pod_templates(node: Any) -> Iterator[dict[str, Any]]:
    """Every pod template in an object (`{metadata, spec}` whose spec has a `containers` list)."""
    return mappings_where(node, lambda m: isinstance(m.get("spec"), dict) and isinstance(m["spec"].get("containers"), list))


def _fabric_problems(template: dict[str, Any], networks: dict[str, Rendered], param_sets: set[str]) -> Iterator[str]:
    """What keeps a pod template's GPUDirect attachments from working (fabric_attached)."""
    annotations = ((template.get("metadata") or {}).get("annotations")) or {}
    spec = template["spec"]
    containers = [*(spec.get("initContainers") or []), *spec["containers"]]
    names = {c.get("name") for c in containers}
    for key in annotations:
        if key.startswith(fabric_pods.DEVICE_ANNOTATION_PREFIX) and key.removeprefix(fabric_pods.DEVICE_ANNOTATION_PREFIX) not in names:
            yield f"{key} names container {key.removeprefix(fabric_pods.DEVICE_ANNOTATION_PREFIX)!r}, which the pod does not have: the NRI injector gives its devices to nothing"
    text = annotations.get(fabric_pods.INTERFACES_ANNOTATION)
    if text is None:
        return
    try:
        interfaces = json.loads(text)
        attached = {i["interfaceName"]: i["network"] for i in interfaces}
    except (ValueError, TypeError, KeyError):
        yield f"{fabric_pods.INTERFACES_ANNOTATION} is not a JSON list of {{interfaceName, network}}: {text[:80]!r}"
        return
    for interface, network in attached.items():
        if network == fabric_pods.DEFAULT_NETWORK:
            continue
        found = networks.get(network)
        if found is None:
            yield f"interface {interface} attaches Network {network!r}, which nothing in the platform creates: the pod is refused"
            continue
        ref = ((found.obj.get("spec") or {}).get("parametersRef")) or {}
        if ref.get("kind") == "GKENetworkParamSet" and ref.get("name") not in param_sets:
            yield f"Network {network!r} points at GKENetworkParamSet {ref.get('name')!r}, which nothing in the platform creates"
    for container in containers:
        for variable in container.get("env") or []:
            if variable.get("name") in ("NCCL_FASTRAK_IFNAME", "NCCL_FASTRAK_CTRL_DEV", "NCCL_SOCKET_IFNAME") and isinstance(variable.get("value"), str):
                missing = [i for i in variable["value"].split(",") if i and i not in attached]
                if missing:
                    yield f"container {container.get('name')}: {variable['name']} names {', '.join(missing)}, not an interface of the pod's {fabric_pods.INTERFACES_ANNOTATION}"


@check_rule("fabric-attached", "pods attach only Networks the platform creates, and their NCCL interfaces are the pod's")
def fabric_attached(platform: Platform) -> Iterator[Violation]:
    """Every pod template that attaches GPUDirect NICs (GKE multi-networking's interfaces
    annotation) names Networks the platform creates, whose parameter sets it creates too; the
    NCCL interfaces its containers name are the pod's; the NRI device annotation names one of
    its containers (a runtime variant built for another pool, or a renamed NIC, fails here)."""
    networks = {o.key[3]: o for o in platform.of_kind("Network") if o.key[0] == "networking.gke.io"}
    param_sets = {o.key[3] for o in platform.of_kind("GKENetworkParamSet") if o.key[0] == "networking.gke.io"}
    for o in platform.objects:
        for template in _pod_templates(o.obj):
            for problem in _fabric_problems(template, networks, param_sets):
                yield Violation("fabric-attached", label(o), o.source, problem)


# --- LLM routes: on the team's own prefix, behind the team's role check -------------------------
LLM_ROUTE_PRESET = "kserve-config-llm-router-route"
"""KServe v0.20.0's route preset (charts/kserve-runtime-configs files/llmisvcconfigs/resources.yaml): the
HTTPRoute every LLMInferenceService of a team gets, its paths templated on the service's namespace."""
NAMESPACE_TEMPLATE = "{{ .ObjectMeta.Namespace }}"


def _route_paths(preset: dict[str, Any]) -> list[str | None]:
    """Each match of the preset's HTTPRoute: its path value; None for a model-based match (by
    header), which inferenceservice-config's modelBasedRoutingMode: disabled strips (kserve v0.20.0
    config_merge.go stripModelBasedRoutingRules)."""
    spec = ((((preset.get("spec") or {}).get("router") or {}).get("route") or {}).get("http") or {}).get("spec") or {}
    found: list[str | None] = []
    for rule in spec.get("rules") or []:
        for match in rule.get("matches") or [{}]:
            found.append(None if match.get("headers") else str((match.get("path") or {}).get("value") or "/"))
    return found


def _model_routing_disabled(platform: Platform) -> bool:
    for o in platform.of_kind("ConfigMap"):
        if o.key[3] == "inferenceservice-config":
            ingress = json.loads(((o.obj.get("data") or {}).get("ingress")) or "{}")
            return bool(ingress.get("modelBasedRoutingMode") == "disabled")
    return False


def _gateway_prefixes(platform: Platform) -> list[tuple[Rendered, str]]:
    """(route, prefix) of every URI prefix the Kubeflow gateway's VirtualServices route."""
    found = []
    for o in platform.of_kind("VirtualService"):
        spec = o.obj.get("spec") or {}
        if not any(str(g).endswith("kubeflow-gateway") for g in spec.get("gateways") or []):
            continue
        for http in spec.get("http") or []:
            for match in http.get("match") or []:
                prefix = (match.get("uri") or {}).get("prefix")
                if prefix:
                    found.append((o, str(prefix)))
    return found


def _covers(policy: dict[str, Any], path: str) -> bool:
    """An Istio DENY policy at the gateway has a rule on exactly this path pattern."""
    spec = policy.get("spec") or {}
    if spec.get("action") != "DENY":
        return False
    return any(path in (op.get("operation") or {}).get("paths", []) for rule in spec.get("rules") or [] for op in rule.get("to") or [])


@check_rule("llm-routes-role-checked", "every team's LLM routes on its own prefixes, which the gateway's role check covers and no other route shares")
def llm_routes_role_checked(platform: Platform) -> Iterator[Violation]:
    """Where LLM serving is on (a team's `team-llm` LLMInferenceServiceConfig): KServe's route preset
    matches paths under `/<namespace>/` only, model-based (header) routing is off (its rules match
    `/v1/...` of no namespace: kserve v0.20.0 config_merge.go isModelBasedRoutingEnabled), a DENY
    policy at the gateway checks the team's roles on `/<namespace>/*`, and no route of the Kubeflow
    gateway shares that prefix (a team named like a Kubeflow path would share the check with it)."""
    teams = sorted({o.key[2] for o in platform.of_kind("LLMInferenceServiceConfig") if o.key[3] == "team-llm"})
    if not teams:
        return
    presets = [o for o in platform.of_kind("LLMInferenceServiceConfig") if o.key[3] == LLM_ROUTE_PRESET]
    for preset in presets:
        paths = _route_paths(preset.obj)
        outside = [p for p in paths if p is not None and not p.startswith((f"/{NAMESPACE_TEMPLATE}/", f"/publishers/{NAMESPACE_TEMPLATE}/"))]
        if outside:
            yield Violation(
                "llm-routes-role-checked", label(preset), preset.source,
                f"matches {', '.join(outside)}, outside /<namespace>/ and /publishers/<namespace>/",
            )
        if None in paths and not _model_routing_disabled(platform):
            yield Violation(
                "llm-routes-role-checked", label(preset), preset.source,
                "has model-based (header) rules on paths of no namespace, and inferenceservice-config does not disable them "
                "(ingress.modelBasedRoutingMode: disabled)",
            )
    at_gateway = [o.obj for o in platform.of_kind("AuthorizationPolicy") if o.key[2] == "istio-system"]
    kubeflow_routes = _gateway_prefixes(platform)
    for team in teams:
        config = next(o for o in platform.of_kind("LLMInferenceServiceConfig") if o.key[2:] == (team, "team-llm"))
        for path in (f"/{team}/*", f"/publishers/{team}/*"):
            if not any(_covers(policy, path) for policy in at_gateway):
                yield Violation("llm-routes-role-checked", label(config), config.source, f"no DENY policy at the gateway checks who reaches {path}")
        for route, prefix in kubeflow_routes:
            # A VirtualService's `uri.prefix` is a string prefix (istio/istio 1.30.3 pilot/pkg/networking/
            # core/route/route.go translateRouteMatch: RouteMatch_Prefix, the path-separated kind only for
            # Gateway API's and Ingress' routes): Kubeflow's `/pipeline` takes /pipelines/... too.
            if prefix.startswith(f"/{team}/") or (prefix != "/" and f"/{team}/".startswith(prefix)):
                yield Violation(
                    "llm-routes-role-checked", label(config), config.source,
                    f"the team's LLM prefix /{team}/ overlaps {prefix} of {label(route)}: rename the team",
                )


# --- GKE Inference Gateway: its load balancer reaches every team's LLMs ---------------------------
LLM_SCHEDULER_PRESET = "kserve-config-llm-scheduler"
"""KServe v0.20.0's scheduler preset (charts/kserve-runtime-configs files/llmisvcconfigs/resources.yaml): the
InferencePool every LLMInferenceService gets (`spec.router.scheduler.pool.spec`) and its endpoint picker's pod."""
LLM_TEMPLATE_PRESET = "kserve-config-llm-template"
"""The same chart's preset of the model server's pod (`spec.template`)."""
NAME_TEMPLATE = "{{ .ObjectMeta.Name }}"
SAMPLE_SERVICE = "chat"
"""An LLMInferenceService's name, for the labels KServe derives from it."""


def picker_labels(service: str) -> dict[str, str]:
    """The endpoint picker's pod labels (kserve v0.20.0 pkg/controller/v1alpha2/llmisvc/scheduler.go:1623
    SchedulerLabels, the Deployment's template labels in expectedSchedulerDeployment)."""
    return {
        "app.kubernetes.io/component": "llminferenceservice-router-scheduler",
        "app.kubernetes.io/name": service,
        "app.kubernetes.io/part-of": "llminferenceservice",
    }


def _preset(platform: Platform, name: str) -> dict[str, Any]:
    found = next((o.obj for o in platform.of_kind("LLMInferenceServiceConfig") if o.key[3] == name), None)
    return (found or {}).get("spec") or {}


def _scheduler_and_pool(platform: Platform) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scheduler preset's `router.scheduler` and the InferencePool spec in it ({} where absent)."""
    scheduler = _preset(platform, LLM_SCHEDULER_PRESET).get("router", {}).get("scheduler") or {}
    return scheduler, (scheduler.get("pool") or {}).get("spec") or {}


def _team_llm_configs(platform: Platform) -> Iterator[tuple[str, Rendered]]:
    """Each team's `team-llm` config, with its team (namespace)."""
    for config in platform.of_kind("LLMInferenceServiceConfig"):
        if config.key[3] == TEAM_LLM_CONFIG:
            yield config.key[2], config


def _names(pod: dict[str, Any], number: int) -> set[str]:
    return port_names({"spec": pod}, number)


PICKER_HEALTH_PORT_NAME = "grpc-health"
"""The picker container's port Google's health checkers probe (kserve v0.20.0 scheduler preset:
`--grpc-health-port 9003`, container port `grpc-health`; components/inference_gateway.py PICKER_HEALTH_PORT)."""


def _named_ports(pod: dict[str, Any], name: str) -> list[int]:
    return [int(p["containerPort"]) for c in pod.get("containers") or [] for p in c.get("ports") or [] if p.get("name") == name]


@check_rule(
    "gke-gateway-reach",
    "with GKE Inference Gateway, every team's NetworkPolicies admit its proxies and health checks to the model servers and the endpoint picker",
)
def gke_gateway_reach(platform: Platform) -> Iterator[Violation]:
    """With `inferenceGateway.provider: gke`, GKE's load balancer calls each LLMInferenceService's
    InferencePool on its target ports and the pool's endpoint picker on its ext_proc port, both in the
    service's (the team's) namespace, from the region's proxy-only subnet, and Google's health checkers
    probe them from theirs, the picker on its gRPC health port (components/inference_gateway.py). Each team namespace with LLMs (its
    `team-llm` config) must admit every one of those sources to the pods and ports KServe's scheduler
    preset gives them, as the API server's NetworkPolicy semantics decide; a policy that admits only
    pods of the platform's namespaces drops them all."""
    network = gke_gateway_network(platform.config) if platform.config else None
    scheduler, pool = _scheduler_and_pool(platform)
    if network is None or not pool:
        return
    models = {k: str(v).replace(NAME_TEMPLATE, SAMPLE_SERVICE) for k, v in ((pool.get("selector") or {}).get("matchLabels") or {}).items()}
    model_pod = _preset(platform, LLM_TEMPLATE_PRESET).get("template") or {}
    picker_pod = scheduler.get("template") or {}
    calls = [
        ("the model servers", models, model_pod, [int(p["number"]) for p in pool.get("targetPorts") or []]),
        (
            "the endpoint picker",
            picker_labels(SAMPLE_SERVICE),
            picker_pod,
            [int(((pool.get("endpointPickerRef") or {}).get("port") or {})["number"]), *_named_ports(picker_pod, PICKER_HEALTH_PORT_NAME)],
        ),
    ]
    for team, config in _team_llm_configs(platform):
        extra = (config.obj.get("spec") or {}).get("labels") or {}
        for what, pod_labels, pod, ports in calls:
            policies = platform.policies_for(team, {**pod_labels, **extra})
            for number in ports:
                for source in network.sources:
                    if not admits(policies, number, _names(pod, number), source):
                        yield Violation(
                            "gke-gateway-reach", label(config), config.source,
                            f"NetworkPolicies in {team} drop {source} to {what} on port {number}: GKE Inference Gateway "
                            "cannot reach the team's LLMs (components/profiles/serving_llm.py gke_gateway_policies)",
                        )


# --- GKE Inference Gateway: each pool's health check passes on a serving model ------------------
TLS_SCHEME_TEMPLATE = "{{ if .GlobalConfig.EnableTLS }}HTTPS{{else}}HTTP{{- end }}"
"""The scheme of the model server preset's probes (kserve v0.20.0 kserve-config-llm-template), from
inferenceservice-config's `ingress.enableLLMInferenceServiceTLS` (config_loader.go NewConfig: EnableTLS)."""
HEALTH_CHECK_KEYS = {"HTTP": "httpHealthCheck", "HTTPS": "httpsHealthCheck"}
"""A HealthCheckPolicy's `config.<key>` per `config.type` (gke-gateway-api apis/networking/v1
healthcheck_types.go HealthCheck: the type names the one protocol field that must be set)."""


def _llm_tls(platform: Platform) -> bool:
    """Whether KServe serves its LLMs over TLS: `enableLLMInferenceServiceTLS` of the `ingress` key of
    inferenceservice-config in KServe's namespace (unset: false)."""
    for config in platform.of_kind("ConfigMap"):
        if config.key[3] == SERVING_CONFIG_MAP and config.key[2] == SERVING_NAMESPACE:
            ingress = json.loads(((config.obj.get("data") or {}).get("ingress")) or "{}")
            return bool(ingress.get("enableLLMInferenceServiceTLS"))
    return False


def _readiness(pod: dict[str, Any]) -> dict[str, Any]:
    """The `httpGet` of the model server container's readiness probe (`main`, the container the
    services' own `template` merges into)."""
    main: dict[str, Any] = next((c for c in pod.get("containers") or [] if c.get("name") == "main"), {})
    return ((main.get("readinessProbe") or {}).get("httpGet")) or {}


@check_rule(
    "gke-pool-health-check",
    "with GKE Inference Gateway, every team's LLM config publishes a health check its services' InferencePools pass when the model serves",
)
def gke_pool_health_check(platform: Platform) -> Iterator[Violation]:
    """With `inferenceGateway.provider: gke`, GKE's load balancer sends to an InferencePool's pods only
    while its health check passes; KServe makes no HealthCheckPolicy, and GKE's default asks `/`, which
    vLLM does not serve (components/inference_gateway.py). Each team's `team-llm` config carries the
    policy's `spec.default` its deploy path applies per service (POOL_HEALTH_CHECK_ANNOTATION): it must
    ask on one of the pool's target ports (KServe's scheduler preset) the path and scheme the model
    server's readiness probe asks there (KServe's template preset, its scheme from
    `enableLLMInferenceServiceTLS`), which pass once the model serves."""
    network = gke_gateway_network(platform.config) if platform.config else None
    _, pool = _scheduler_and_pool(platform)
    probe = _readiness(_preset(platform, LLM_TEMPLATE_PRESET).get("template") or {})
    if network is None or not pool or not probe:
        return
    target_ports = {int(p["number"]) for p in pool.get("targetPorts") or []}
    scheme = str(probe.get("scheme") or "HTTP")
    if scheme == TLS_SCHEME_TEMPLATE:
        scheme = "HTTPS" if _llm_tls(platform) else "HTTP"
    wanted = f"{scheme} {probe.get('path')} on port {probe.get('port')}"
    for team, config in _team_llm_configs(platform):
        published = ((config.obj.get("metadata") or {}).get("annotations") or {}).get(POOL_HEALTH_CHECK_ANNOTATION)
        if not published:
            yield Violation(
                "gke-pool-health-check", label(config), config.source,
                f"team {team}'s LLM config publishes no health check ({POOL_HEALTH_CHECK_ANNOTATION}): GKE checks its "
                f"InferencePools on `/`, which vLLM does not serve, and sends them nothing; the model server answers {wanted}",
            )
            continue
        check = (json.loads(published).get("config")) or {}
        kind = str(check.get("type") or "HTTP")
        asks = check.get(HEALTH_CHECK_KEYS.get(kind, "")) or {}
        port = asks.get("port")
        problems = []
        if kind != scheme:
            problems.append(f"type {kind}, the model server speaks {scheme}")
        if asks.get("requestPath", "/") != probe.get("path"):
            problems.append(f"path {asks.get('requestPath', '/')}, the model server's readiness is {probe.get('path')}")
        if port not in target_ports or str(port) != str(probe.get("port")):
            problems.append(f"port {port}, the pool targets {sorted(target_ports)} and the model server answers on {probe.get('port')}")
        elif asks.get("portSpecification") != "USE_FIXED_PORT":
            # gke-gateway-api healthcheck_types.go: a port beside an unset portSpecification (USE_SERVING_PORT) is refused.
            problems.append(f"port {port} without portSpecification USE_FIXED_PORT, which GKE's HealthCheckPolicy CRD refuses")
        if problems:
            yield Violation(
                "gke-pool-health-check", label(config), config.source,
                f"team {team}'s pool health check asks {'; '.join(problems)}: GKE would mark every model server "
                f"unhealthy; ask {wanted} (components/inference_gateway.py pool_health_check)",
            )
