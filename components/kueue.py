"""Kueue with the TrainJob, JobSet and Ray integrations, and one ResourceFlavor per GPU
pool derived from the pool's own node labels and taints (infra/node_labels.py), so a
flavor cannot drift from its pool. Team ClusterQueues/LocalQueues come with the teams.

Configuration layout and framework names: kubernetes-sigs/kueue charts/kueue values.yaml
(`managerConfig.controllerManagerConfigYaml`, config.kueue.x-k8s.io/v1beta2) and the
Kueue integrations reference.
"""

from __future__ import annotations

from typing import Any

import pulumi
import yaml

from components.base import PlatformComponent, apply_manifest
from components.versions import KUEUE_CHART
from infra.cluster import Cluster
from infra.node_labels import pool_selector, pool_taints
from stacks.schema import GkeCluster, PlatformConfig, Sources

NAMESPACE = "kueue-system"
FRAMEWORKS = (
    "batch/job",
    "jobset.x-k8s.io/jobset",
    "trainer.kubeflow.org/trainjob",
    "ray.io/rayjob",
    "ray.io/raycluster",
)
DEFAULT_FLAVOR = "default"
"""CPU-only nodes (kind, the system pool): no labels, no taints."""


def manager_config() -> str:
    config = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443", "enableClusterQueueResources": True},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "internalCertManagement": {"enable": True},
        "integrations": {"frameworks": list(FRAMEWORKS)},
    }
    return yaml.safe_dump(config, sort_keys=False)


def kueue_values() -> dict[str, Any]:
    return {"managerConfig": {"controllerManagerConfigYaml": manager_config()}, "enablePrometheus": True}


def resource_flavors(config: PlatformConfig) -> list[dict[str, Any]]:
    """The default flavor plus one per GPU pool, as manifests (kueue.x-k8s.io/v1beta2)."""
    flavors: list[dict[str, Any]] = [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": DEFAULT_FLAVOR}, "spec": {}}
    ]
    pools = config.cluster.gpu_pools if isinstance(config.cluster, GkeCluster) else []
    for pool in pools:
        flavors.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ResourceFlavor",
                "metadata": {"name": pool.name},
                "spec": {
                    "nodeLabels": pool_selector(pool),
                    "nodeTaints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in pool_taints(pool)],
                    "tolerations": [t.toleration() for t in pool_taints(pool)],
                },
            }
        )
    return flavors


class Kueue(PlatformComponent):
    ready: pulumi.Resource
    flavors: list[pulumi.Resource]

    def __init__(
        self,
        name: str,
        config: PlatformConfig,
        cluster: Cluster,
        needs: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None, sources: Sources | None = None,
    ):
        super().__init__("Kueue", name, cluster, opts, sources)
        namespace = self.create_namespace(NAMESPACE)
        self.ready = self.chart("kueue", KUEUE_CHART, namespace.metadata.name, kueue_values(), [namespace, *needs])
        self.flavors = [
            apply_manifest(f"flavor-{flavor['metadata']['name']}", flavor, self.child([self.ready]))
            for flavor in resource_flavors(config)
        ]
        self.register_outputs({})
