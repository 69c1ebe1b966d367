"""The stack file's GPU fabric component (components/fabric.py): the in-cluster half of the GPU
pools' GPUDirect networking (`gpuPools[].network`): GKE's multi-networking objects per NIC
and Google's NCCL plugin installers on the pools' nodes."""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool

from facts import versions
from facts.gpu_fabric import NONE
from stackmodel.components.spec import ComponentSpec
from stackmodel.schema.common import Model


class GpuFabricConfig(Model):
    """Per GPU pool with `network: tcpxo` or `rdma`: a `GKENetworkParamSet` and a `Network` per
    NIC (GKE multi-networking), and Google's NCCL plugin installer for that network on the
    pool's nodes (TCPXO's with its NRI device injector), from their manifests at a pinned commit
    (docs/gpu-fabric.md). The pools' training runtimes attach to those Networks."""

    enabled: StrictBool | None = Field(
        default=None,
        description="Default: on when a GPU pool has network tcpxo or rdma. Off leaves those pools' training pods "
        "naming Networks nothing creates: the loader refuses that (gpu-fabric-installed).",
    )


def _fabric_pools(config: Any) -> bool:
    """On where a GPU pool has a GPUDirect network."""
    return any(pool.fabric_kind != NONE for pool in getattr(config.cluster, "gpu_pools", ()))


GPU_FABRIC = ComponentSpec(
    "gpuFabric",
    GpuFabricConfig,
    "GPUDirect networking in the cluster for GPU pools with network tcpxo or rdma: multi-networking objects, NCCL plugin installers.",
    needs=(),
    on_by_default=_fabric_pools,
    pins=(versions.GPUDIRECT_MANIFESTS,),
)
