"""The stack file's NVIDIA DRA driver (components/dra.py): GPUs through Dynamic Resource
Allocation on the pools that ask for it (`gpuAllocation: dra`, stackmodel/schema/pools.py)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool

from facts import versions
from stackmodel.components.spec import ComponentSpec
from stackmodel.schema.chart_values import ChartValues, chart_values_field
from stackmodel.schema.cluster import GkeClusterConfig
from stackmodel.schema.common import Model


class NvidiaDraDriverConfig(Model):
    """NVIDIA's DRA driver for GPUs (its GPU allocation, not ComputeDomains) and the GKE driver
    installer on the DRA pools' nodes. Default: on exactly when a GPU pool has gpuAllocation: dra."""

    enabled: StrictBool | None = Field(default=None, description="Default: on when a GPU pool has gpuAllocation: dra, off otherwise.")
    values: ChartValues = chart_values_field("the DRA driver's dra-driver-nvidia-gpu chart (kubernetes-sigs)")


def dra_pools(config: Any) -> bool:
    """Its default: a GKE stack with a pool that allocates GPUs through DRA."""
    cluster = config.cluster
    return isinstance(cluster, GkeClusterConfig) and any(pool.dra for pool in cluster.gpu_pools)


NVIDIA_DRA_DRIVER = ComponentSpec(
    "nvidiaDraDriver",
    NvidiaDraDriverConfig,
    "NVIDIA's DRA driver, for GPU pools with gpuAllocation: dra.",
    on_by_default=dra_pools,
    # The chart, and GKE's COS driver installer (versions.NVIDIA_DRIVER_INSTALLER_COS), a file of
    # the GPUDirect manifests' commit: `make mirror` needs both where a stack enables the driver.
    pins=(versions.NVIDIA_DRA_DRIVER_CHART, versions.GPUDIRECT_MANIFESTS),
)
