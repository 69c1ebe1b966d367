"""Topology Aware Scheduling (TAS) on GKE: the Kueue `Topology` of GKE's node labels, the
machine types whose nodes carry them, and the pod-template annotations a runtime asks with.

GKE's labels and the recommended Topology: "Schedule GKE workloads with Topology Aware
Scheduling" (docs.cloud.google.com/ai-hypercomputer/docs/workloads/schedule-gke-workloads-tas,
read Dec 2026): a Topology `gke-default` with the levels below, coarsest first; nodes of A4X,
A4, A3 Ultra, A3 Mega and A3 High (8 GPUs) carry them, Spot VMs only with compact placement.

What Kueue makes of them, kubernetes-sigs/kueue@v0.19.2:
- TAS is on by default (pkg/features/kube_features.go:683-686, beta and default since 0.14;
  the chart's `controllerManager.featureGates` is `[]`).
- A TAS flavor counts only the nodes that match its nodeLabels AND carry every level's label
  (pkg/util/tas/node.go:21-33 NodeMatchesFlavor, pkg/cache/scheduler/tas_nodes_cache.go:106),
  and only ready, schedulable ones (site/content/en/docs/concepts/topology_aware_scheduling.md
  "Capacity calculation"): a pool whose nodes lack the labels, or do not exist yet, gives the
  flavor no capacity. With the cluster autoscaler TAS works through the ProvisioningRequest
  admission check alone (same page, "ClusterAutoscaler support": topology is assigned after
  the nodes are provisioned).
- A flavor with topologyName needs at least one nodeLabel (CRD kueue.x-k8s.io_resourceflavors
  CEL rule), which the pool selector always gives.
"""

from __future__ import annotations

from types import MappingProxyType

TOPOLOGY_NAME = "gke-default"
"""The name GKE's guide gives it; every TAS flavor of a GKE cluster points at this one."""

BLOCK_LABEL = "cloud.google.com/gce-topology-block"
SUBBLOCK_LABEL = "cloud.google.com/gce-topology-subblock"
HOST_LABEL = "cloud.google.com/gce-topology-host"
HOSTNAME_LABEL = "kubernetes.io/hostname"
LEVELS: tuple[str, ...] = (BLOCK_LABEL, SUBBLOCK_LABEL, HOST_LABEL, HOSTNAME_LABEL)
"""Coarsest first, hostname last (the Topology CRD allows kubernetes.io/hostname only there)."""

LABELLED_MACHINE_TYPES: frozenset[str] = frozenset(
    {
        "a3-highgpu-8g",  # A3 High, 8 GPUs only
        "a3-megagpu-8g",  # A3 Mega
        "a3-ultragpu-8g",  # A3 Ultra
        "a4-highgpu-8g",  # A4
    }
)
"""Machine types of the GPU catalog (facts/gpu_catalog.py) whose GKE nodes carry the topology
labels (the guide above; A4X is not in the catalog). G2, A2 and smaller A3 shapes do not."""

# The pod-template annotations Kueue reads for a pod set's topology request, kubernetes-sigs/
# kueue@v0.19.2 apis/kueue/v1beta2/topology_types.go:28,39,98 and pkg/controller/jobframework/
# tas.go:61-114 (a required one wins over a preferred one; a group name counts only with one of them).
REQUIRED_ANNOTATION = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"
GROUP_ANNOTATION = "kueue.x-k8s.io/podset-group-name"

LEVEL_NAMES = MappingProxyType({BLOCK_LABEL: "block", SUBBLOCK_LABEL: "sub-block", HOST_LABEL: "host", HOSTNAME_LABEL: "node"})
"""How the docs name each level."""

