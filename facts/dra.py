"""Dynamic Resource Allocation of GPUs (pools with `gpuAllocation: dra`): the names the NVIDIA DRA
driver, Kubernetes' resource API, Kueue and the runtimes share.

kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1 (facts/versions.py NVIDIA_DRA_DRIVER_CHART),
deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml, as NVIDIA/k8s-dra-driver-gpu
v25.12.0's: the chart's DeviceClass `gpu.nvidia.com` selects every full GPU the driver publishes
(`device.driver == 'gpu.nvidia.com' && type == 'gpu'`); the API version is the chart's
`resourceApiVersion`, which we set, as helm's offline render knows no cluster's APIs
(templates/_helpers.tpl dra-driver-nvidia-gpu.resourceApiVersion).
resource.k8s.io/v1 is served from Kubernetes 1.34 (DRA GA; GKE 1.34+, the GPU path of GKE's guide),
and by the v1.36 API server of the envtest suite.
"""

from __future__ import annotations

RESOURCE_API_VERSION = "resource.k8s.io/v1"
DEVICE_CLASS = "gpu.nvidia.com"
"""The chart's DeviceClass of whole GPUs."""
CLAIM_NAME = "gpus"
"""The name a runtime's pod and its container give the claim of the node's GPUs."""
GKE_DRIVER_ROOT = "/home/kubernetes/bin/nvidia"
"""Where GKE's driver installer puts the driver on the node (components/dcgm.py GKE_NVIDIA_HOST_PATH;
GKE's DRA guide sets the chart's nvidiaDriverRoot to it)."""


def claim_template_name(pool: str) -> str:
    """The ResourceClaimTemplate, in every team namespace, of all the GPUs of one node of `pool`."""
    return f"{pool}-gpus"
