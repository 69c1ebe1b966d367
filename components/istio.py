"""Istio (CRDs, istiod, CNI, ingress gateway with oauth2-proxy ext-authz) from the pinned
Kubeflow release. The kind/GKE difference is one field of its settings: GKE mounts
/opt/cni/bin read-only, so the CNI binaries go to /home/kubernetes/bin."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pulumi

from components.base import PlatformComponent, PropsTransform
from infra.cluster import Cluster
from stacks.schema import GkeClusterConfig, PlatformConfig, Sources

CRDS = "common/istio/istio-crds/base"
NAMESPACE = "common/istio/istio-namespace/base"
# The oauth2-proxy overlay adds the ext-authz extension provider the Kubeflow gateway uses.
INSTALL = "common/istio/istio-install/overlays/oauth2-proxy"
# kubeflow/manifests common/istio/istio-install/overlays/gke/gke-cni-patch.yaml: the
# istio-cni-node DaemonSet (kube-system) volume cni-bin-dir -> /home/kubernetes/bin.
# That overlay drops the oauth2-proxy wiring, so we apply its patch as a transform.
CNI_DAEMONSET = ("DaemonSet", "istio-cni-node")
CNI_BIN_VOLUME = "cni-bin-dir"
GKE_CNI_BIN_DIR = "/home/kubernetes/bin"


GATEWAY_SERVICE = "istio-ingressgateway"
"""The ingress gateway Service of the Kubeflow install (istio-system)."""


@dataclass(frozen=True)
class IstioSettings:
    cni_bin_dir: str | None
    """Host path for the CNI binaries; None keeps Istio's default (/opt/cni/bin)."""
    gateway_annotations: dict[str, str] = field(default_factory=dict)
    """Extra annotations on the ingress gateway Service (GKE Ingress: NEG, BackendConfig)."""


def istio_settings(config: PlatformConfig) -> IstioSettings:
    from components.gateway import gateway_service_annotations

    return IstioSettings(
        cni_bin_dir=GKE_CNI_BIN_DIR if isinstance(config.cluster, GkeClusterConfig) else None,
        gateway_annotations=gateway_service_annotations(config),
    )


def with_gateway_annotations(props: dict[str, Any], annotations: dict[str, str]) -> dict[str, Any] | None:
    """The ingress gateway Service's properties with `annotations` added; None for other objects."""
    if (props.get("kind"), props.get("metadata", {}).get("name")) != ("Service", GATEWAY_SERVICE):
        return None
    metadata = props["metadata"]
    return {**props, "metadata": {**metadata, "annotations": {**(metadata.get("annotations") or {}), **annotations}}}


def with_cni_bin_dir(props: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The istio-cni-node DaemonSet's properties with the CNI bin volume at `path`; None for other objects."""
    if (props.get("kind"), props.get("metadata", {}).get("name")) != CNI_DAEMONSET:
        return None
    volumes = props["spec"]["template"]["spec"]["volumes"]
    patched = [
        {**v, "hostPath": {**v.get("hostPath", {}), "path": path}} if v.get("name") == CNI_BIN_VOLUME else v
        for v in volumes
    ]
    spec = {**props["spec"], "template": {**props["spec"]["template"], "spec": {**props["spec"]["template"]["spec"], "volumes": patched}}}
    return {**props, "spec": spec}


def settings_transforms(settings: IstioSettings) -> tuple[PropsTransform, ...]:
    """The settings as transforms of the Istio objects they concern."""
    transforms: list[PropsTransform] = []
    if settings.cni_bin_dir:
        transforms.append(partial(with_cni_bin_dir, path=settings.cni_bin_dir))
    if settings.gateway_annotations:
        transforms.append(partial(with_gateway_annotations, annotations=settings.gateway_annotations))
    return tuple(transforms)


class Istio(PlatformComponent):
    ready: pulumi.Resource
    """Done when istiod, the CNI DaemonSet and the ingress gateway are ready."""

    def __init__(
        self,
        name: str,
        settings: IstioSettings,
        cluster: Cluster,
        opts: pulumi.ResourceOptions | None = None,
        sources: Sources | None = None,
        needs: list[pulumi.Resource] | None = None,
    ):
        """`needs`: what creates the namespaces Istio's install puts objects into (`kubeflow`)."""
        super().__init__(name, cluster, opts, sources)
        crds = self.kustomize("istio-crds", CRDS, depends_on=needs or [])
        namespace = self.kustomize("istio-namespace", NAMESPACE, depends_on=[crds])
        self.ready = self.kustomize("istio", INSTALL, depends_on=[namespace], transforms=settings_transforms(settings))
        self.register_outputs({})
