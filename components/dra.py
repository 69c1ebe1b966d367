"""NVIDIA's DRA driver for GPUs, for the GPU pools with `gpuAllocation: dra`: its Helm chart,
set up as GKE's DRA guide installs it (docs.cloud.google.com/kubernetes-engine/docs/how-to/
set-up-dra, read Dec 2026: `nvidiaDriverRoot` GKE's driver path, `gpuResourcesEnabledOverride`,
no ComputeDomains), from the driver's home since v0.4.0, kubernetes-sigs/dra-driver-nvidia-gpu
(facts/versions.py NVIDIA_DRA_DRIVER_CHART; the guide still names NVIDIA's chart of before).

Chart keys: kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1 deployments/helm/dra-driver-nvidia-gpu/
values.yaml and templates/ (kubeletplugin.yaml, deviceclass-gpu.yaml, validation.yaml,
controller.yaml), the keys NVIDIA's 25.12.0 chart had, with the same meaning.
- `nameOverride`: the chart's old name. The chart was renamed from nvidia-dra-driver-gpu, and its
  objects' names and the kubelet plugin's selector label derive from the name (templates/
  _helpers.tpl `name`, `selectorLabels`); the project's docs/upgrade.md (v0.4.1) sets
  `nameOverride=nvidia-dra-driver-gpu` so that the move keeps every object, and so do we, on every
  install: one set of names, upgraded or new (tests/test_upgrade_path.py holds them to the record
  of 25.12.0's).
- `resources.gpus.enabled` is the chart's default; its validation.yaml fails the render unless
  `gpuResourcesEnabledOverride` says the device plugin is off on those nodes, which GKE's
  `gke-no-default-nvidia-gpu-device-plugin` label on the DRA pools does (facts/node_labels.py).
- `resources.computeDomains.enabled: false`: ComputeDomains are multi-node NVLink (GB200); their
  controller (controller.yaml) also prefers control-plane nodes, which GKE does not show.
- `resourceApiVersion`: set, so the DeviceClass has the same API offline and on the cluster.
- The kubelet plugin (a DaemonSet) lands on the DRA pools' nodes, which carry `nvidia.com/gpu.present`
  (its own affinity, values.yaml kubeletPlugin.affinity), and tolerates their taints (our list
  replaces the chart's default, `nvidia.com/gpu` NoSchedule, which GKE's taint is one case of); it runs at
  `system-node-critical`, which GKE admits outside kube-system only under a ResourceQuota scoped
  to that class (components/dcgm.py critical_pods_quota). Its metrics endpoint (values.yaml
  kubeletPlugin.metrics, new since 25.12.0: `:8080` in the pod, no Service) is left as the chart sets it.

The NVIDIA driver itself: GKE installs none on a DRA pool (`gpu_driver_version` disabled,
infra/gke.py), and GKE's guide applies Google's driver installer for COS then
(facts/versions.py NVIDIA_DRIVER_INSTALLER_COS, at the pinned commit): its DaemonSet, which
upstream runs on every GPU node GKE installs no driver on, here on the DRA pools' nodes only
(components/fabric.py on_pool_nodes), before the DRA driver, whose kubelet plugin reads the
driver from GKE's path.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.dcgm import CRITICAL_QUOTA, critical_pods_quota
from components.fabric import on_pool_nodes
from facts.dra import GKE_DRIVER_ROOT, RESOURCE_API_VERSION
from facts.node_labels import DRA_NODE_LABELS, pool_selector, pool_taints
from facts.versions import NVIDIA_DRA_DRIVER_CHART, NVIDIA_DRIVER_INSTALLER_COS
from infra.cluster import Cluster
from plumbing.base import ChartArgs, PlatformComponent
from plumbing.charts import ChartValues, built_by
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.readiness import Readiness
from stackmodel.components.dra import NVIDIA_DRA_DRIVER
from stackmodel.schema import GpuPool
from stackmodel.stack import PlatformConfig

NAMESPACE = "nvidia-dra-driver-gpu"
"""GKE's guide's namespace (the chart refuses `default`: templates/validation.yaml)."""
RELEASE = "nvidia-dra-driver-gpu"
"""The release, and the chart's name its objects keep (`nameOverride`: NVIDIA's chart's name)."""
PLUGIN_LABEL = "nvidia.com/gpu.present"
DRIVER_INSTALLER = "nvidia-driver-installer"
"""The DaemonSet of NVIDIA_DRIVER_INSTALLER_COS (metadata.name at the pinned commit)."""


@dataclass(frozen=True)
class NvidiaDraDriverArgs(ChartArgs):
    dra_pools: tuple[GpuPool, ...]
    """The pools whose nodes run the driver's kubelet plugin: it tolerates their taints."""


def nvidia_dra_driver_values(args: NvidiaDraDriverArgs) -> dict[str, Any]:
    """The chart's values for GKE's DRA pools (module docstring)."""
    taints = dict.fromkeys(t for pool in args.dra_pools for t in pool_taints(pool))
    return {
        "nameOverride": RELEASE,
        "nvidiaDriverRoot": GKE_DRIVER_ROOT,
        "gpuResourcesEnabledOverride": True,
        "resourceApiVersion": RESOURCE_API_VERSION,
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
        "kubeletPlugin": {
            "nodeSelector": {PLUGIN_LABEL: DRA_NODE_LABELS[PLUGIN_LABEL]},
            "tolerations": [t.toleration() for t in taints],
        },
    }


class NvidiaDraDriver(PlatformComponent):
    """NVIDIA's DRA driver: publishes the DRA pools' GPUs as devices of DeviceClass gpu.nvidia.com."""

    ready: pulumi.Resource
    namespace: pulumi.Output[str]

    def __init__(self, name: str, args: NvidiaDraDriverArgs, cluster: Cluster, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, cluster, opts, args.sources)
        ns = self.create_namespace(NAMESPACE)
        quota = k8s.core.v1.ResourceQuota(
            f"{NAMESPACE}-{CRITICAL_QUOTA}",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=CRITICAL_QUOTA, namespace=NAMESPACE),
            spec=critical_pods_quota(),
            opts=self.child([ns]),
        )
        selectors = tuple(tuple(sorted(pool_selector(pool).items())) for pool in args.dra_pools)
        installer = self.release_manifest(
            DRIVER_INSTALLER, NVIDIA_DRIVER_INSTALLER_COS, transforms=[partial(on_pool_nodes, daemonset=DRIVER_INSTALLER, selectors=selectors)]
        )
        self.ready = self.chart(
            RELEASE, NVIDIA_DRA_DRIVER_CHART, NAMESPACE, nvidia_dra_driver_values(args), [ns, quota, installer], overlay=args.values
        )
        self.namespace = ns.metadata.apply(lambda m: m.name or NAMESPACE)
        self.register_outputs({"namespace": self.namespace, "ready": self.ready.urn})


def nvidia_dra_driver_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> NvidiaDraDriverArgs:
    return NvidiaDraDriverArgs(
        sources=config.sources,
        dra_pools=tuple(p for p in config.gpu_pools if p.dra),
        values=config.components[NVIDIA_DRA_DRIVER].values,
    )


def _install(args: NvidiaDraDriverArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return NvidiaDraDriver("nvidia-dra-driver", args, cluster)


INSTALLATION = Installation(
    NVIDIA_DRA_DRIVER,
    nvidia_dra_driver_args,
    _install,
    charts=(
        ChartValues("values", NVIDIA_DRA_DRIVER_CHART, nvidia_dra_driver_values, lambda args: args.values, built_by(nvidia_dra_driver_values)),
    ),
)
