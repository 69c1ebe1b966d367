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

Routes attach from team namespaces only (allowedRoutes: the profile label), each on its team's
own prefixes (components/serving_llm.py, the HTTPRoute policy). GKE brings Gateway API's CRDs
when its Gateway API is on (`cluster.gatewayApi`, infra/gke.py) and InferencePool's from
1.34.0-gke.1626000 (facts/versions.py INFERENCE_EXTENSION_CRDS); kind, and GKE with it off, get
them here, as the release publishes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from components.istio import GATEWAY_NAMESPACE, GATEWAY_SERVICE
from facts.labels import PROFILE_NAMESPACE_LABEL
from facts.versions import GATEWAY_API_CRD_FILES, INFERENCE_POOL_CRD, ReleaseManifest
from infra.cluster import Cluster
from plumbing.base import PlatformComponent, UpstreamArgs
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.readiness import Readiness
from stackmodel.components.inference_gateway import INFERENCE_GATEWAY, GatewayProvider, GkeGatewayClass
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


@dataclass(frozen=True)
class InferenceGatewayArgs(UpstreamArgs):
    provider: GatewayProvider
    gke_class: GkeGatewayClass
    install_crds: bool
    """Install Gateway API's and InferencePool's CRDs: the cluster does not bring them (kind, or GKE
    with its Gateway API off)."""


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


def _install_name(manifest: ReleaseManifest) -> str:
    """`gateway-networking-k8s-io-gateways` for config/crd/standard/gateway.networking.k8s.io_gateways.yaml."""
    return manifest.path.rsplit("/", 1)[-1].removesuffix(".yaml").replace("_", "-").replace(".", "-")


class InferenceGateway(PlatformComponent):
    """The CRDs the cluster lacks. The Gateway itself is made by serving with llm (components/serving.py),
    which waits for Istio: its namespace is the ingress gateway's."""

    ready: pulumi.Resource
    """Done when the CRDs this installs are there (a nothing-to-install marker where the cluster brings them)."""

    def __init__(self, name: str, args: InferenceGatewayArgs, cluster: Cluster, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, args.sources)
        self.ready = self
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
    )


def _install(args: InferenceGatewayArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return InferenceGateway("inference-gateway", args, cluster)


INSTALLATION = Installation(INFERENCE_GATEWAY, inference_gateway_args, _install)
