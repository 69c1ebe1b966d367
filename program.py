"""The whole platform, in data-flow order: config -> cluster -> components -> outputs.

`__main__.py` calls `build` under the Pulumi engine; `python -m stacks plan` calls it
under mocks. Each layer reads only what the layer before it produced.
"""

from __future__ import annotations

import pulumi

from components.platform import install
from infra.cluster import build_cluster
from stacks.schema import PlatformConfig


def build(config: PlatformConfig) -> None:
    cluster = build_cluster(config)
    install(config, cluster)
    pulumi.export("clusterName", cluster.name)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("kubeflowUrl", kubeflow_url(config))
    pulumi.export("profiles", [team.name for team in config.teams])


def kubeflow_url(config: PlatformConfig) -> str:
    """Where people open Kubeflow: the public hostname, or a port-forward on kind."""
    hostname = config.components.kubeflow.auth.hostname
    if hostname:
        return f"https://{hostname}/"
    return "http://localhost:8080/ (kubectl port-forward -n istio-system svc/istio-ingressgateway 8080:80)"
