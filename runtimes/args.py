"""Args of our training runtimes (runtimes/component.py TrainingRuntimes), cut from the stack
model: one variant of each runtime per GPU pool, Kueue's guard, each fabric pool's network."""

from __future__ import annotations

from dataclasses import dataclass

from infra.args import fabric_pools
from stackmodel.components.kueue import KUEUE
from stackmodel.schema import GpuPool
from stackmodel.stack import PlatformConfig


@dataclass(frozen=True)
class RuntimeFabric:
    """One pool's GPUDirect network as its training runtimes see it (runtimes/fabric.py)."""

    pool: str
    network: str
    """tcpxo or rdma (facts/gpu_fabric.py)"""
    nics: tuple[tuple[str, str], ...]
    """(pod interface name, Kubernetes Network name) of each NIC a training pod attaches, in NIC order."""


@dataclass(frozen=True)
class TrainingRuntimesArgs:
    gpu_pools: tuple[GpuPool, ...]
    """One variant of each runtime per pool."""
    kueue: bool = False
    """Kueue queues the TrainJobs: its accounting gap on the GPU variants is guarded (runtimes/kueue_guard.py)."""
    fabrics: tuple[RuntimeFabric, ...] = ()
    """The GPUDirect network of each fabric pool, which its variants attach to (runtimes/fabric.py)."""


def training_runtimes_args(config: PlatformConfig) -> TrainingRuntimesArgs:
    fabrics = tuple(
        RuntimeFabric(p.pool, p.kind, tuple((nic.interface, nic.network) for nic in p.pod_nics)) for p in fabric_pools(config)
    )
    return TrainingRuntimesArgs(gpu_pools=config.gpu_pools, kueue=config.enabled(KUEUE), fabrics=fabrics)
