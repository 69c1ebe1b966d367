"""The whole platform, in data-flow order: config -> Args -> cluster -> components -> outputs.

`__main__.py` calls `build` under the Pulumi engine; `python -m stacks plan` calls it
under mocks. Each layer reads only what the layer before it produced. This is the edge:
the one place that reads the stack's secrets from the Pulumi config.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi

from args.components import Secrets
from args.platform import platform_args
from components.platform import install
from infra.cloud_identity import with_cloud_identity_members
from infra.cluster import build_cluster
from stacks.schema import PlatformConfig
from stacks.secrets import NAMESPACE, SecretKey, required_secrets


def build(config: PlatformConfig) -> None:
    config = with_cloud_identity_members(config)
    args = platform_args(config, read_secrets(config))
    cluster = build_cluster(args.cluster)
    installed = install(args, cluster)
    pulumi.export("clusterName", cluster.name)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("kubeflowUrl", kubeflow_url(config))
    pulumi.export("profiles", [team.name for team in config.teams])
    gateway = installed.https_gateway
    if gateway is not None:
        # The A record of auth.hostname points here; the managed certificate waits for it.
        pulumi.export("gatewayAddress", gateway.address)
    if cluster.image_registry is not None:
        # Where CI pushes the notebook images and teams push theirs (docs/images.md).
        pulumi.export("imageRegistry", cluster.image_registry.url)


def read_secrets(config: PlatformConfig) -> Secrets:
    """Every secret the stack's choices need, read once."""
    return {key: secret(key) for key in required_secrets(config)}


def secret(key: SecretKey) -> pulumi.Output[Any]:
    """The secret's value as a Pulumi secret; a clear RunError naming the command if it is unset."""
    raw = pulumi.Config(NAMESPACE).get_secret(key.key)
    if raw is None:
        raise pulumi.RunError(f"{NAMESPACE}:{key.key} ({key.what}) is not set; set it with: {key.how}")

    def decode(value: str) -> Any:
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value

    return pulumi.Output.secret(raw.apply(decode))


def kubeflow_url(config: PlatformConfig) -> str:
    """Where people open Kubeflow: the public hostname, or a port-forward on kind."""
    hostname = config.components.kubeflow.auth.hostname
    if hostname:
        return f"https://{hostname}/"
    return "http://localhost:8080/ (kubectl port-forward -n istio-system svc/istio-ingressgateway 8080:80)"
