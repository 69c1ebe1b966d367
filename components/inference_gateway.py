"""The inference gateway (docs/serving.md, "LLMs"): the Gateway API `Gateway` every team's
LLMInferenceService route attaches to, and the CRDs it and KServe's LLM controller need where
the cluster does not bring them.

- **istio** (kind, and GKE by default): Istio 1.30 implements Gateway API and, behind
  ENABLE_GATEWAY_API_INFERENCE_EXTENSION (istio/istio 1.30.3 pilot/pkg/features/experimental.go:
  208, default false), InferencePool v1 backends: istiod calls the pool's endpoint picker over
  ext_proc. components/istio.py sets the variable on istiod where this provider is chosen. The
  Gateway is bound to Kubeflow's own ingress gateway by address (Istio's manual deployment: one
  address of type Hostname, pilot/pkg/config/kube/gatewaycommon/gateway_utils.go IsManaged), so
  Istio programs no new proxy: the LLM routes are served by the same pods, on the same port, behind
  the same oauth2-proxy sign-in and the same AuthorizationPolicies as every other route. Istio
  merges the servers of two gateways on one plain-HTTP port (pilot/pkg/model/gateway.go
  MergeGateways, "Same bind, merge with existing server") and sorts the catch-all `/` of the
  central dashboard after every other route (pilot/pkg/networking/core/gateway.go
  buildGatewayHTTPRouteConfig, route.go SortVHostRoutes).
- **gke**: GKE Inference Gateway, GKE's own regional load balancer with an InferencePool backend
  (GatewayClass gke-l7-rilb or gke-l7-regional-external-managed). It is not Kubeflow's gateway:
  no oauth2-proxy sign-in, none of the teams' AuthorizationPolicies (docs/serving.md says so).
  Both classes are Envoy-based load balancers: their proxies connect to the backends from the
  region's proxy-only subnet (cloud.google.com/load-balancing/docs/proxy-only-subnets: "Packets
  sent from a proxy to a backend VM or endpoint have a source IP address from the proxy-only
  subnet"), and Google's health checkers probe them from 35.191.0.0/16 and 130.211.0.0/22
  (load-balancing/docs/firewall-rules, the regional internal and external Application Load
  Balancers' rows: health check ranges and the proxy-only subnet). So this component makes, on a
  network the platform creates, the proxy-only subnet (purpose REGIONAL_MANAGED_PROXY, role ACTIVE),
  and wherever the platform makes the network's firewall rules, one that opens the model servers'
  and endpoint pickers' ports to those sources; each team namespace admits the same sources to the
  same pods and ports (components/profiles/serving_llm.py gke_gateway_policies; check's
  `gke-gateway-reach`). The ports are KServe's: its scheduler preset's InferencePool targets 8000
  on the workload pods and names the endpoint picker's Service on 9002, in the service's own
  namespace (kserve v0.20.0 config/llmisvcconfig/config-llm-scheduler.yaml `pool.spec`;
  pkg/controller/v1alpha2/llmisvc/scheduler.go expectedSchedulerDeployment: the picker is made in
  `llmSvc.GetNamespace()`), and the health checkers probe the picker on its gRPC health port 9003
  (PICKER_HEALTH_PORT).

Routes attach from team namespaces only (allowedRoutes: the profile label), each on its team's
own prefixes (components/serving_llm.py, the HTTPRoute policy). GKE brings Gateway API's CRDs
when its Gateway API is on (`cluster.gatewayApi`, infra/gke.py) and InferencePool's from
1.34.0-gke.1626000 (facts/versions.py INFERENCE_EXTENSION_CRDS); kind, and GKE with it off, get
them here, as the release publishes them.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

from components.gateway import GOOGLE_LB_RANGES
from components.istio import GATEWAY_NAMESPACE, GATEWAY_SERVICE
from facts.labels import PROFILE_NAMESPACE_LABEL
from facts.versions import GATEWAY_API_CRD_FILES, INFERENCE_POOL_CRD, ReleaseManifest
from infra.cluster import Cluster
from infra.network import ClusterNetwork
from plumbing.base import PlatformComponent, UpstreamArgs, apply_manifest
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.readiness import Readiness
from plumbing.roles import VERBS_EDIT, VERBS_READ, Rule, aggregated_role_manifest
from stackmodel.components.inference_gateway import (
    DEFAULT_PROXY_ONLY_SUBNET_RANGE,
    INFERENCE_GATEWAY,
    GatewayProvider,
    GkeGatewayClass,
)
from stackmodel.schema import GkeClusterConfig
from stackmodel.stack import PlatformConfig

GATEWAY = "kubeflow-llm"
"""The Gateway's name, in GATEWAY_NAMESPACE; KServe's `ingress.kserveIngressGateway` names it."""
ISTIO_CLASS = "istio"
"""The GatewayClass istiod makes itself (pilot/pkg/features/pilot.go PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME,
the GatewayClass controller on by default: experimental.go PILOT_ENABLE_GATEWAY_API_GATEWAYCLASS_CONTROLLER)."""
MODEL_ROUTING_ANNOTATION = "serving.kserve.io/model-based-routing-enabled"
"""kserve v0.20.0 pkg/controller/v1alpha2/llmisvc/router.go AnnotationModelBasedRoutingEnabled: on a
Gateway a route attaches to, "false" turns model-based (header) routing off for every service on it
(config_merge.go isModelBasedRoutingEnabled), beside inferenceservice-config's
`modelBasedRoutingMode: disabled` (components/serving_llm.py): its rules match /v1/... of no team."""
LISTENER = "http"
LISTENER_PORT = 80
"""The ingress gateway Service's HTTP port (Kubeflow's kubeflow-gateway serves the same)."""
MODEL_SERVER_PORT = 8000
"""The port the InferencePool of every LLMInferenceService targets on its workload pods (kserve v0.20.0
config-llm-scheduler.yaml `pool.spec.targetPorts`; vLLM's `--port 8000` in config-llm-template.yaml)."""
PICKER_PORT = 9002
"""The endpoint picker's ext_proc port (same preset: `endpointPickerRef.port`, the EPP's `--grpc-port`)."""
PICKER_HEALTH_PORT = 9003
"""The endpoint picker's gRPC health port (same preset: `--grpc-health-port 9003`, container port
`grpc-health`), where Google's health checkers probe the picker's backend: GKE's Gateway controller
health-checks the EPP on gRPC port 9003 unless a HealthCheckPolicy on its Service says otherwise
(llm-d/llm-d-router v0.9.0, the picker's release, config/charts/llm-d-router-gateway/templates/
gke.yaml:38-41; KServe makes no HealthCheckPolicy). Closed, the picker is never healthy and the
pool's `failureMode: FailOpen` routes around it."""
BACKEND_PORTS = (MODEL_SERVER_PORT, PICKER_PORT, PICKER_HEALTH_PORT)
"""What GKE's load balancer calls in a team namespace: the model servers, the endpoint picker and its health port."""

# --- each InferencePool's health check on GKE -----------------------------------------------------
# GKE's load balancer sends to an InferencePool's endpoints only while its own health check passes,
# and KServe v0.20.0 makes none (no HealthCheckPolicy anywhere in kserve/kserve at the tag). Without
# one GKE checks HTTP `/` (gke-gateway-api apis/networking/v1 healthcheck_types.go: type HTTP and
# requestPath "/" when unset), which vLLM does not serve: of the GET routes vLLM 0.24.0 registers
# (vllm/entrypoints), none is `/`; its health is `GET /health`, 200 or 503 once the engine is dead
# (vllm/entrypoints/serve/instrumentator/health.py). The pinned inferencepool chart makes, for
# provider gke, a HealthCheckPolicy on its pool: HTTP /health on the pool's first target port, every
# 2 s with a 2 s timeout, "more aggressive ... than the default 5s for faster switch over"
# (gateway-api-inference-extension v1.5.0 config/charts/inferencepool/templates/gke.yaml). The pool is
# KServe's, made at run time per service, so the platform cannot render its policy: it publishes the
# policy's `spec.default` on each team's `team-llm` config (POOL_HEALTH_CHECK_ANNOTATION), editors may
# manage HealthCheckPolicies in their namespace (gke_gateway_roles), and the team's deploy path makes
# one per service (examples/llm_openai.py). check's `gke-pool-health-check` holds the published check
# to what KServe's presets make: the pool's target port, the path the model server's readiness probe
# asks, its scheme. The port is named with `portSpecification: USE_FIXED_PORT`: the CRD as
# GoogleCloudPlatform/gke-gateway-api publishes it (fc40d60, config/crd/networking.gke.io_healthcheckpolicies.yaml,
# healthcheck_types.go) refuses a `port` without it ("port and portName must be unset for
# portSpecification being USE_SERVING_PORT (which is the default)"), as the chart's own policy has it.
POOL_HEALTH_CHECK_PATH = "/health"
"""vLLM's health endpoint, which KServe's model server preset probes (kserve-config-llm-template `main`:
startup, liveness and readiness probes `httpGet /health` on 8000)."""
POOL_HEALTH_CHECK_ANNOTATION = "mlplatform.io/gke-pool-health-check"
"""On a team's `team-llm` config: the `spec.default` of the HealthCheckPolicy each of its services'
InferencePools needs (JSON); absent where the gateway is not GKE's."""
HEALTH_CHECK_POLICY_API = "networking.gke.io"
HEALTH_CHECK_POLICIES = "healthcheckpolicies"
"""GKE's HealthCheckPolicy (networking.gke.io/v1), which GKE installs with its Gateway API."""


def pool_health_check() -> dict[str, Any]:
    """The HealthCheckPolicy's `spec.default` for an LLMInferenceService's InferencePool: the chart's
    (HTTP /health on the target port, 2 s interval and timeout), the port as a fixed one."""
    return {
        "timeoutSec": 2,
        "checkIntervalSec": 2,
        "config": {
            "type": "HTTP",
            "httpHealthCheck": {"requestPath": POOL_HEALTH_CHECK_PATH, "portSpecification": "USE_FIXED_PORT", "port": MODEL_SERVER_PORT},
        },
    }


def gke_gateway_roles() -> list[dict[str, Any]]:
    """Kubeflow roles for HealthCheckPolicies: editors (and owners, through kubeflow-edit) manage
    them in their namespace, viewers read them. The team's deploy path makes one per service."""

    on_policies = (HEALTH_CHECK_POLICY_API,), (HEALTH_CHECK_POLICIES,)
    return [
        aggregated_role_manifest("kubeflow-gke-health-checks-edit", ("kubeflow-edit",), [Rule(*on_policies, VERBS_EDIT)]),
        aggregated_role_manifest("kubeflow-gke-health-checks-view", ("kubeflow-view",), [Rule(*on_policies, VERBS_READ)]),
    ]


@dataclass(frozen=True)
class GkeGatewayNetwork:
    """What GKE Inference Gateway needs of the VPC: the region's proxy-only subnet, made here or the network's own."""

    proxy_only_range: ipaddress.IPv4Network
    makes_subnet: bool
    """The platform created the network, so it makes the proxy-only subnet too; an existing network has its own."""
    region: str

    @property
    def sources(self) -> tuple[str, ...]:
        """Where GKE's load balancer reaches the backends from: its proxies, and Google's health checkers."""
        return (str(self.proxy_only_range), *GOOGLE_LB_RANGES)


@dataclass(frozen=True)
class InferenceGatewayArgs(UpstreamArgs):
    provider: GatewayProvider
    gke_class: GkeGatewayClass
    install_crds: bool
    """Install Gateway API's and InferencePool's CRDs: the cluster does not bring them (kind, or GKE
    with its Gateway API off)."""
    gke_network: GkeGatewayNetwork | None = None
    """With provider gke: the proxy-only subnet and the sources the backends admit."""


def gateway_address() -> str:
    """The ingress gateway Service's in-cluster name, the address the istio Gateway binds to."""
    return f"{GATEWAY_SERVICE}.{GATEWAY_NAMESPACE}.svc.cluster.local"


def gateway_object(args: InferenceGatewayArgs) -> dict[str, Any]:
    """The Gateway: one HTTP listener that takes HTTPRoutes, which the route policy holds to their
    team's prefixes (components/serving_llm.py), from team namespaces only: no GRPCRoute, whose
    matches name no path (Gateway API v1.5.1 GRPCRouteMatch: method and headers)."""
    key, value = PROFILE_NAMESPACE_LABEL
    spec: dict[str, Any] = {
        "gatewayClassName": ISTIO_CLASS if args.provider is GatewayProvider.ISTIO else args.gke_class.value,
        "listeners": [
            {
                "name": LISTENER,
                "port": LISTENER_PORT,
                "protocol": "HTTP",
                "allowedRoutes": {
                    "namespaces": {"from": "Selector", "selector": {"matchLabels": {key: value}}},
                    "kinds": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"}],
                },
            }
        ],
    }
    if args.provider is GatewayProvider.ISTIO:
        spec["addresses"] = [{"type": "Hostname", "value": gateway_address()}]
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": GATEWAY, "namespace": GATEWAY_NAMESPACE, "annotations": {MODEL_ROUTING_ANNOTATION: "false"}},
        "spec": spec,
    }


def proxy_only_subnet_args(network: GkeGatewayNetwork, vpc: ClusterNetwork) -> gcp.compute.SubnetworkArgs:
    """The region's proxy-only subnet, which every regional Envoy-based load balancer of the network
    shares (cloud.google.com/load-balancing/docs/proxy-only-subnets: purpose REGIONAL_MANAGED_PROXY,
    one ACTIVE per region and network)."""
    return gcp.compute.SubnetworkArgs(
        project=vpc.project,
        region=network.region,
        network=vpc.network,
        ip_cidr_range=str(network.proxy_only_range),
        purpose="REGIONAL_MANAGED_PROXY",
        role="ACTIVE",
        description="Proxy-only subnet of the region's Envoy-based load balancers (GKE Inference Gateway)",
    )


def backend_firewall_args(network: GkeGatewayNetwork, vpc: ClusterNetwork) -> gcp.compute.FirewallArgs:
    """The load balancer's proxies and health checkers to the model servers and endpoint pickers on
    the nodes (their pods' alias IPs). Google asks for both of these load balancers (load-balancing/
    docs/firewall-rules); the rule lives with the network (a Shared VPC host project's too, where the
    program makes its rules)."""
    return gcp.compute.FirewallArgs(
        project=vpc.project,
        network=vpc.network,
        description="GKE Inference Gateway: its proxies (proxy-only subnet) and Google's health checks -> model servers and endpoint pickers",
        direction="INGRESS",
        source_ranges=list(network.sources),
        target_tags=[vpc.node_tag],
        allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[str(port) for port in BACKEND_PORTS])],
    )


def _install_name(manifest: ReleaseManifest) -> str:
    """`gateway-networking-k8s-io-gateways` for config/crd/standard/gateway.networking.k8s.io_gateways.yaml."""
    return manifest.path.rsplit("/", 1)[-1].removesuffix(".yaml").replace("_", "-").replace(".", "-")


class InferenceGateway(PlatformComponent):
    """The CRDs the cluster lacks; with provider gke, what the VPC needs for GKE's load balancer. The
    Gateway itself is made by serving with llm (components/serving.py), which waits for Istio: its
    namespace is the ingress gateway's."""

    ready: pulumi.Resource
    """Done when the CRDs this installs are there; where the cluster brings them, the component itself
    (its proxy-only subnet and firewall rule with provider gke)."""

    def __init__(self, name: str, args: InferenceGatewayArgs, cluster: Cluster, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, args.sources)
        self.ready = self
        vpc = cluster.network
        if args.gke_network is not None and vpc is not None:
            if args.gke_network.makes_subnet:
                gcp.compute.Subnetwork(f"{name}-proxy-only", proxy_only_subnet_args(args.gke_network, vpc), opts=self.child())
            if vpc.manages_host_project:
                gcp.compute.Firewall(f"{name}-backends", backend_firewall_args(args.gke_network, vpc), opts=self.child())
            for role in gke_gateway_roles():
                apply_manifest(role["metadata"]["name"], role, self.child())
        if args.install_crds:
            gateway_api = [self.release_manifest(_install_name(m), m) for m in GATEWAY_API_CRD_FILES]
            # Last, after Gateway API's: what waits for the component waits for every CRD through it.
            self.ready = self.release_manifest(_install_name(INFERENCE_POOL_CRD), INFERENCE_POOL_CRD, depends_on=gateway_api)
        self.register_outputs({})


def inference_gateway_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> InferenceGatewayArgs:
    settings = config.components[INFERENCE_GATEWAY]
    cluster = config.cluster
    gke_brings_them = isinstance(cluster, GkeClusterConfig) and cluster.gateway_api
    return InferenceGatewayArgs(
        sources=config.sources,
        provider=settings.provider,
        gke_class=settings.gke_gateway_class,
        install_crds=not gke_brings_them,
        gke_network=gke_gateway_network(config),
    )


def gke_gateway_network(config: PlatformConfig) -> GkeGatewayNetwork | None:
    """With GKE Inference Gateway (provider gke, on a gke stack): its proxy-only subnet, the stack's
    range or, in a network the platform creates, the default (the loader's `gke-proxy-only-subnet`
    requires one for an existing network)."""
    settings = config.components[INFERENCE_GATEWAY]
    cluster = config.cluster
    if not (config.enabled(INFERENCE_GATEWAY) and settings.provider is GatewayProvider.GKE and isinstance(cluster, GkeClusterConfig)):
        return None
    created = cluster.network.existing is None
    given = settings.proxy_only_subnet_range
    if given is None and not created:
        raise ValueError("an existing network's proxy-only subnet range is the stack's to give (rule gke-proxy-only-subnet)")
    return GkeGatewayNetwork(proxy_only_range=given or DEFAULT_PROXY_ONLY_SUBNET_RANGE, makes_subnet=created, region=cluster.region)


def _install(args: InferenceGatewayArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return InferenceGateway("inference-gateway", args, cluster)


INSTALLATION = Installation(INFERENCE_GATEWAY, inference_gateway_args, _install)
