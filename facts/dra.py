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


# --- NVIDIA's DCGM exporter and DRA GPUs (components/dcgm.py) -------------------------------

DCGM_DRA_ATTRIBUTION_READ_AT = "4.8.2"
"""The exporter version whose DRA attribution (`kubernetesDRA.enabled`, KUBERNETES_ENABLE_DRA) was
read for DCGM_DRA_ATTRIBUTION_OFF (components/dcgm.py keeps `kubernetesDRA.enabled` false):
re-read it at every bump (tests/test_monitoring.py holds the pin to it)."""
DCGM_DRA_RESOURCE_SLICES = "resource.k8s.io/v1beta1"
"""The ResourceSlice API the pinned exporter's DRA attribution lists (dcgm-exporter 4.5.3-4.8.2
internal/pkg/transformation/dra.go:43, `factory.Resource().V1beta1().ResourceSlices()`;
dcgm-exporter#590 asks for resource.k8s.io/v1, said fixed in 4.6.0-4.8.3)."""
DCGM_DRA_ATTRIBUTION_OFF = (
    "the pinned exporter (4.8.2) attributes DRA GPUs to pods only through resource.k8s.io/v1beta1 ResourceSlices "
    "(internal/pkg/transformation/dra.go:43), which a GKE 1.34+ cluster, where DRA pools run, does not serve (Kubernetes "
    "serves no beta API by default; the platform's DRA uses resource.k8s.io/v1): with it on, the exporter waits for that "
    "informer's sync before it serves (dra.go NewDRAResourceSliceManager, WaitForCacheSync, called from server.go:70 "
    "GetTransformations) and would never serve on any GPU node; and it matches DRA GPUs by UUID while these values match "
    "device-plugin GPUs by device name (kubernetes.go Process)"
)
"""Why `kubernetesDRA.enabled` stays false at the pin: metrics of DRA pods carry no pod or team
until the exporter reads resource.k8s.io/v1 (docs/observability.md, "GPUs through DRA")."""


def claim_template_name(pool: str) -> str:
    """The ResourceClaimTemplate, in every team namespace, of all the GPUs of one node of `pool`."""
    return f"{pool}-gpus"
