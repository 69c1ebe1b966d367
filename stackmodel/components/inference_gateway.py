"""The stack file's inference gateway (components/inference_gateway.py): the Gateway API
Gateway the teams' LLM routes attach to, and the CRDs it needs where the cluster lacks them."""

from __future__ import annotations

import ipaddress
from enum import Enum

from pydantic import Field

from facts import versions
from stackmodel.components.spec import ComponentSpec, Toggle
from stackmodel.schema.common import Cidr

DEFAULT_PROXY_ONLY_SUBNET_RANGE = ipaddress.IPv4Network("10.129.0.0/23")
"""The proxy-only subnet the platform makes in a network it creates: Google's example range, a /23,
the size its guides call recommended (cloud.google.com/load-balancing/docs/l7-internal/
setting-up-l7-cross-reg-internal: "10.129.0.0/23 ... the recommended subnet size"; proxy-only-subnets
uses the same range), outside the created network's default ranges (stackmodel/schema/network.py)
and its control plane's."""
PROXY_ONLY_SUBNET_SMALLEST_PREFIX = 26
"""A proxy-only subnet has 64 addresses at least, a /26 or wider (cloud.google.com/load-balancing/docs/
l7-internal/proxy-only-subnets)."""


class GatewayProvider(str, Enum):
    ISTIO = "istio"
    GKE = "gke"


class GkeGatewayClass(str, Enum):
    """GKE's GatewayClasses that take an InferencePool backend (GKE docs, "Deploy GKE Inference Gateway")."""

    INTERNAL = "gke-l7-rilb"
    EXTERNAL = "gke-l7-regional-external-managed"


class InferenceGatewayConfig(Toggle):
    """The inference gateway: where the teams' LLMInferenceServices are reached, each request
    sent to the replica the service's endpoint picker chooses (Gateway API inference extension)."""

    provider: GatewayProvider = Field(
        default=GatewayProvider.ISTIO,
        description="istio: a Gateway bound to Kubeflow's own ingress gateway, so LLM routes pass its sign-in and the "
        "teams' role checks like every other route (kind and GKE); gke: GKE Inference Gateway, GKE's own load "
        "balancer (gke only), which skips the sign-in and role checks of Kubeflow's gateway (docs/serving.md, LLMs).",
    )
    gke_gateway_class: GkeGatewayClass = Field(
        default=GkeGatewayClass.INTERNAL,
        description="With provider gke: gke-l7-rilb (internal) or gke-l7-regional-external-managed; both need a "
        "proxy-only subnet in the cluster's region (proxyOnlySubnetRange).",
    )
    proxy_only_subnet_range: Cidr | None = Field(
        default=None,
        description="With provider gke: the range of the region's proxy-only subnet (purpose REGIONAL_MANAGED_PROXY), "
        "the addresses GKE's load balancer proxies connect to the model servers and endpoint pickers from. With a network "
        "the platform creates, it makes that subnet (default 10.129.0.0/23, a /26 at least); with an existing one "
        "(cluster.network.existing), required: that network's own proxy-only subnet in the region, which the platform "
        "does not make. The teams' NetworkPolicies and the firewall rule admit it (docs/serving.md).",
    )


INFERENCE_GATEWAY = ComponentSpec(
    "inferenceGateway",
    InferenceGatewayConfig,
    "The Gateway the teams' LLM routes attach to (Istio's Gateway API support, or GKE Inference Gateway), and the Gateway "
    "API and InferencePool CRDs where the cluster lacks them; serving with llm needs it.",
    # No need of Istio's: istiod takes Gateways and routes whenever they appear (istio/istio 1.30.3
    # pilot/pkg/config/kube/gateway/controller.go, delayed informers), and the Gateway binds to its
    # ingress gateway by the Service's name alone.
    pins=(versions.GATEWAY_API_CRDS, versions.INFERENCE_EXTENSION_CRDS),
)
