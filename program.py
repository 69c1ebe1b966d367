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
