"""The in-cluster half of the GPU pools' GPUDirect networking (docs/gpu-fabric.md): per NIC of
each fabric pool, GKE multi-networking's `GKENetworkParamSet` (the NIC's VPC and subnet, its
device mode) and the `Network` pods attach by name; and Google's NCCL plugin installers from
their manifests at the pinned commit (facts/versions.py RELEASE_MANIFESTS), restricted to the
fabric pools' nodes: TCPXO's installer and NRI device injector on the TCPXO pools, the gIB
installer on the RDMA pools. The cloud half (VPCs, subnets, the node pools' extra NICs,
multi-networking on the cluster) is infra's; the pods' half, runtimes/fabric.py.

The objects' shapes are those of the GKE docs' examples ("Maximize GPU network bandwidth with
GPUDirect and multi-networking", cloud.google.com/kubernetes-engine/docs/how-to/
gpu-bandwidth-gpudirect-tcpx; the AI Hypercomputer "custom AI-optimized GKE cluster" steps for
A4 / A3 Ultra), as quoted in the stored copies read 2026-12-04: `GKENetworkParamSet` spec
{vpc, vpcSubnet, deviceMode: NetDevice | RDMA}; `Network` spec {type: Device, parametersRef:
{group: networking.gke.io, kind: GKENetworkParamSet, name}}; both cluster-scoped. GKE serves
their CRDs itself and publishes none, so `check` and the envtest API server do not validate
them (tooling/schemas.py GKE_PROVIDED_KINDS); tests/test_fabric.py holds their shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import pulumi

from facts.gpu_fabric import RDMA, TCPXO
from facts.versions import NCCL_RDMA_INSTALLER, NCCL_TCPXO_INSTALLER, NRI_DEVICE_INJECTOR, ReleaseManifest
from infra.args import FabricPoolArgs, fabric_pools
from infra.cluster import Cluster
from plumbing.base import PlatformComponent, apply_manifest
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.readiness import Readiness
from stackmodel.components.fabric import GPU_FABRIC
from stackmodel.schema import Sources
from stackmodel.stack import PlatformConfig

GROUP = "networking.gke.io"
API_VERSION = f"{GROUP}/v1"
PARAM_SET = "GKENetworkParamSet"
NETWORK = "Network"

# The DaemonSets each manifest holds at the pinned commit (metadata.name), which the transform
# restricts to the fabric pools' nodes.
INSTALLS: Mapping[str, tuple[tuple[str, ReleaseManifest, str], ...]] = {
    TCPXO: (
        ("nccl-tcpxo-installer", NCCL_TCPXO_INSTALLER, "nccl-tcpxo-installer"),
        ("nri-device-injector", NRI_DEVICE_INJECTOR, "device-injector"),
    ),
    RDMA: (("nccl-rdma-installer", NCCL_RDMA_INSTALLER, "nccl-rdma-installer"),),
}
"""Per network kind: (install name, manifest, the DaemonSet it runs)."""


@dataclass(frozen=True)
class GpuFabricArgs:
    pools: tuple[FabricPoolArgs, ...]
    sources: Sources


def gpu_fabric_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> GpuFabricArgs | None:
    """None without fabric pools (a kind stack, or GPU pools on the primary NIC only)."""
    pools = fabric_pools(config)
    return GpuFabricArgs(pools=pools, sources=config.sources) if pools else None


def network_objects(pool: FabricPoolArgs) -> list[dict[str, Any]]:
    """The pool's `GKENetworkParamSet` and `Network` per NIC, in NIC order (each set before its Network)."""
    objects: list[dict[str, Any]] = []
    for nic in pool.nics:
        objects.append(
            {
                "apiVersion": API_VERSION,
                "kind": PARAM_SET,
                "metadata": {"name": nic.param_set},
                "spec": {"vpc": nic.vpc, "vpcSubnet": nic.subnet, "deviceMode": nic.device_mode},
            }
        )
        objects.append(
            {
                "apiVersion": API_VERSION,
                "kind": NETWORK,
                "metadata": {"name": nic.network},
                "spec": {"type": "Device", "parametersRef": {"group": GROUP, "kind": PARAM_SET, "name": nic.param_set}},
            }
        )
    return objects


def node_terms(selectors: tuple[tuple[tuple[str, str], ...], ...]) -> list[dict[str, Any]]:
    """One nodeSelectorTerm per pool (terms are ORed, expressions ANDed): every label of its selector."""
    return [{"matchExpressions": [{"key": k, "operator": "In", "values": [v]} for k, v in selector]} for selector in selectors]


def on_pool_nodes(props: dict[str, Any], daemonset: str, selectors: tuple[tuple[tuple[str, str], ...], ...]) -> dict[str, Any] | None:
    """The DaemonSet `daemonset` on exactly the given pools' nodes: its required node affinity
    (upstream: every node of the accelerator, in any pool) replaced by the pools' selectors.
    Upstream tolerates every taint (`operator: Exists`), the pools' GPU taint included: kept."""
    if props.get("kind") != "DaemonSet" or (props.get("metadata") or {}).get("name") != daemonset:
        return None
    pod = props["spec"]["template"]["spec"]
    affinity = dict(pod.get("affinity") or {})
    node_affinity = dict(affinity.get("nodeAffinity") or {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": node_terms(selectors)}
    affinity["nodeAffinity"] = node_affinity
    template = props["spec"]["template"]
    return {**props, "spec": {**props["spec"], "template": {**template, "spec": {**pod, "affinity": affinity}}}}


def selectors_of(pools: tuple[FabricPoolArgs, ...]) -> tuple[tuple[tuple[str, str], ...], ...]:
    return tuple(tuple(sorted(p.node_selector.items())) for p in pools)


class GpuFabric(PlatformComponent):
    """Multi-networking objects and NCCL plugin installers for the stack's fabric pools."""

    ready: pulumi.Resource

    def __init__(self, name: str, args: GpuFabricArgs, cluster: Cluster, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, sources=args.sources)
        last: pulumi.Resource | None = None
        for pool in args.pools:
            param_sets: dict[str, pulumi.Resource] = {}
            for obj in network_objects(pool):
                own = obj["metadata"]["name"]
                if obj["kind"] == PARAM_SET:
                    param_sets[own] = apply_manifest(f"{own}-params", obj, self.child())
                else:
                    last = apply_manifest(f"{own}-network", obj, self.child([param_sets[obj["spec"]["parametersRef"]["name"]]]))
        for kind, installs in INSTALLS.items():
            pools = tuple(p for p in args.pools if p.kind == kind)
            if not pools:
                continue
            for install, manifest, daemonset in installs:
                transform = partial(on_pool_nodes, daemonset=daemonset, selectors=selectors_of(pools))
                last = self.release_manifest(install, manifest, transforms=[transform])
        assert last is not None, "a GpuFabric without pools: gpu_fabric_args gives None then"
        self.ready = last
        self.register_outputs({"ready": self.ready.urn})


def _install(args: GpuFabricArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return GpuFabric("gpu-fabric", args, cluster)


INSTALLATION = Installation(GPU_FABRIC, gpu_fabric_args, _install)
