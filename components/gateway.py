"""The Kubeflow gateway on GKE over HTTPS: a global static IP, a Google-managed
certificate for the stack's hostname, a GKE Ingress in front of Istio's ingress
gateway (container-native load balancing), and optionally Identity-Aware Proxy.

GKE facts (cloud.google.com/kubernetes-engine/docs/how-to/ingress-configuration,
managed-certs, ingress-features): the Ingress names its IP with
`kubernetes.io/ingress.global-static-ip-name` and certificates with
`networking.gke.io/managed-certificates`; the backend Service carries
`cloud.google.com/neg` and `cloud.google.com/backend-config`; the BackendConfig's
health check must hit istio-ingressgateway's status port (15021, /healthz/ready),
because every other path answers with an auth redirect.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.istio import BACKEND_CONFIG, GATEWAY_NAMESPACE, GATEWAY_SERVICE
from infra.cluster import Cluster
from infra.network import ClusterNetwork
from plumbing.base import PlatformComponent, apply_manifest, required
from plumbing.installation import Secrets
from plumbing.network import ip_peer, network_policy
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.schema import KubeflowAuth
from stackmodel.secrets import IAP_CLIENT_SECRET
from stackmodel.stack import PlatformConfig

NAMESPACE = GATEWAY_NAMESPACE
"""Beside the gateway Service they front."""
CERTIFICATE = "kubeflow-gateway"
IAP_SECRET = "kubeflow-iap-oauth"
STATUS_PORT = 15021


@dataclass(frozen=True)
class HttpsGatewayArgs:
    project: str | None
    auth: KubeflowAuth
    """With a hostname (behind_gke_ingress)."""
    deletion_protection: bool
    iap_client_secret: pulumi.Output[Any] | None = None


def backend_config(auth: KubeflowAuth) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "healthCheck": {"type": "HTTP", "port": STATUS_PORT, "requestPath": "/healthz/ready"},
        "timeoutSec": 3600,  # notebooks keep websockets open
    }
    if auth.iap:
        spec["iap"] = {"enabled": True, "oauthclientCredentials": {"secretName": IAP_SECRET}}
    return {
        "apiVersion": "cloud.google.com/v1",
        "kind": "BackendConfig",
        "metadata": {"name": BACKEND_CONFIG, "namespace": NAMESPACE},
        "spec": spec,
    }


def managed_certificate(hostname: str) -> dict[str, Any]:
    return {
        "apiVersion": "networking.gke.io/v1",
        "kind": "ManagedCertificate",
        "metadata": {"name": CERTIFICATE, "namespace": NAMESPACE},
        "spec": {"domains": [hostname]},
    }


def ingress(address_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {
            "name": "kubeflow-gateway",
            "namespace": NAMESPACE,
            "annotations": {
                "kubernetes.io/ingress.class": "gce",
                "kubernetes.io/ingress.global-static-ip-name": address_name,
                "networking.gke.io/managed-certificates": CERTIFICATE,
                "kubernetes.io/ingress.allow-http": "false",
            },
        },
        "spec": {"defaultBackend": {"service": {"name": GATEWAY_SERVICE, "port": {"number": 80}}}},
    }


# Google's load balancers and health checkers reach the NEG endpoints (the gateway pods)
# from these ranges (cloud.google.com/load-balancing/docs/health-check-concepts#ip-ranges).
# kubeflow/manifests 26.03 common/istio/istio-namespace/base adds a same-namespace-only
# NetworkPolicy to istio-system, which drops them; this policy admits them to the gateway.
GOOGLE_LB_RANGES = ("130.211.0.0/22", "35.191.0.0/16")
# istio-ingressgateway's pod labels and the container ports its Service targets (http2 80 ->
# 8080, https 443 -> 8443) plus the status port the health check uses (common/istio/
# istio-install/base/install.yaml); `python -m stacks check` proves them against the render.
GATEWAY_POD_LABELS = {"app": "istio-ingressgateway", "istio": "ingressgateway"}
GATEWAY_PORTS = (8080, 8443, STATUS_PORT)
LB_POLICY = "allow-google-load-balancer"


def load_balancer_policy() -> dict[str, Any]:
    return network_policy(LB_POLICY, NAMESPACE, [ip_peer(cidr) for cidr in GOOGLE_LB_RANGES], GATEWAY_POD_LABELS, GATEWAY_PORTS)


def health_check_firewall_args(network: ClusterNetwork) -> gcp.compute.FirewallArgs:
    """Google's load balancers to the gateway pods, in a Shared VPC host project. GKE's Ingress
    controller opens these itself with a firewall rule in the network's project
    (cloud.google.com/kubernetes-engine/docs/concepts/firewall-rules, "GKE Ingresses"), which
    in a host project takes the service project's GKE service agent roles/compute.securityAdmin
    there (GoogleCloudPlatform/cloud-foundation-fabric modules/project/sharedvpc-agent-iam.yaml:
    "to manage firewall rules"); rather than that broad role, the program makes the one rule."""
    return gcp.compute.FirewallArgs(
        project=network.project,
        network=network.network,
        description="Google load balancers and health checks -> the Kubeflow gateway pods (GKE Ingress, NEG)",
        direction="INGRESS",
        source_ranges=list(GOOGLE_LB_RANGES),
        target_tags=[network.node_tag],
        allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[str(port) for port in GATEWAY_PORTS])],
    )


class HttpsGateway(PlatformComponent):
    """Public HTTPS entry point of the Kubeflow gateway on GKE."""

    address: pulumi.Output[str]
    """The global static IP the hostname must resolve to (the stack output gatewayAddress)."""
    url: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: HttpsGatewayArgs,
        cluster: Cluster,
        needs: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__(name, cluster, opts)
        auth = args.auth
        assert auth.hostname, "HttpsGateway needs auth.hostname"
        address = gcp.compute.GlobalAddress(
            f"{name}-ip",
            gcp.compute.GlobalAddressArgs(project=args.project, name=f"{cluster.name}-kubeflow"),
            opts=self.child(protect=args.deletion_protection),
        )
        network = cluster.network
        if network is not None and network.shared_vpc and network.manages_host_project:
            gcp.compute.Firewall(f"{name}-health-checks", health_check_firewall_args(network), opts=self.child())
        after = self.child(needs)
        apply_manifest(f"{name}-{LB_POLICY}", load_balancer_policy(), after)
        objects = [backend_config(auth), managed_certificate(auth.hostname)]
        custom = [apply_manifest(f"{name}-{o['kind'].lower()}", o, after) for o in objects]
        if auth.iap:
            k8s.core.v1.Secret(
                f"{name}-iap-oauth",
                metadata={"name": IAP_SECRET, "namespace": NAMESPACE},
                string_data=required(args.iap_client_secret, "the IAP client secret").apply(
                    lambda value: {"client_id": auth.iap_client_id or "", "client_secret": str(value)}
                ),
                opts=after,
            )
        spec = ingress(f"{cluster.name}-kubeflow")
        k8s.networking.v1.Ingress(
            f"{name}-ingress",
            metadata=spec["metadata"],
            spec=spec["spec"],
            opts=self.child([*needs, *custom, address]),
        )
        self.address = address.address
        self.url = pulumi.Output.from_input(f"https://{auth.hostname}/")
        self.register_outputs({"address": self.address, "url": self.url})


def https_gateway_args(config: PlatformConfig, secrets: Secrets) -> HttpsGatewayArgs:
    auth = config.components[KUBEFLOW].auth
    return HttpsGatewayArgs(
        project=config.project,
        auth=auth,
        deletion_protection=config.deletion_protection,
        iap_client_secret=secrets.get(IAP_CLIENT_SECRET),
    )
