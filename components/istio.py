"""Istio (CRDs, istiod, CNI, ingress gateway with oauth2-proxy ext-authz) from the pinned
Kubeflow release. On GKE two things differ, as transforms of the release's objects: GKE
mounts /opt/cni/bin read-only, so the CNI binaries go to /home/kubernetes/bin; and behind
a GKE Ingress (components/gateway.py) the gateway Service is its backend."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pulumi

from args.components import IstioArgs
from components.base import PlatformComponent, PropsTransform
from facts.versions import ISTIO
from infra.cluster import Cluster

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


GATEWAY_NAMESPACE = "istio-system"
GATEWAY_SERVICE = "istio-ingressgateway"
"""The ingress gateway Service of the Kubeflow install (in GATEWAY_NAMESPACE)."""
BACKEND_CONFIG = "kubeflow-gateway"
"""The GKE BackendConfig (made by components/gateway.py) of the gateway Service."""


def cni_bin_dir(args: IstioArgs) -> str | None:
    """Host path for the CNI binaries; None keeps Istio's default (/opt/cni/bin)."""
    return GKE_CNI_BIN_DIR if args.gke else None


def gateway_annotations(args: IstioArgs) -> dict[str, str]:
    """Extra annotations of the gateway Service: as the backend of a GKE Ingress it is served
    through network endpoint groups and configured by our BackendConfig."""
    if not args.gke_ingress:
        return {}
    return {
        "cloud.google.com/neg": json.dumps({"ingress": True}),
        "cloud.google.com/backend-config": json.dumps({"default": BACKEND_CONFIG}),
    }


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


# The sidecar injector's values (ConfigMap istio-sidecar-injector, key `values`, JSON):
# istiod injects `<global.hub>/proxyv2:<global.tag>` into every pod. kubeflow/manifests 26.03
# patches that tag to 1.29.0 (common/istio/istio-install/base/patches/istio-sidecar-injector-
# patch.yaml) while its istiod runs 1.28.0, and Istio's data plane may not be newer than its
# control plane (istio.io docs/releases/supported-releases, "Control Plane/Data Plane Skew").
INJECTOR = ("ConfigMap", "istio-sidecar-injector")
INJECTOR_VALUES = "values"


def with_sidecar_tag(props: dict[str, Any], tag: str) -> dict[str, Any] | None:
    """The injector's values with the sidecars' tag `tag` (the control plane's, the Istio pin);
    None for other objects."""
    if (props.get("kind"), props.get("metadata", {}).get("name")) != INJECTOR:
        return None
    values = json.loads(props["data"][INJECTOR_VALUES])
    if values["global"].get("tag") == tag:
        return props
    values["global"]["tag"] = tag
    return {**props, "data": {**props["data"], INJECTOR_VALUES: json.dumps(values, indent=2)}}


def istio_transforms(args: IstioArgs) -> tuple[PropsTransform, ...]:
    """The args as transforms of the Istio objects they concern, and the sidecars at istiod's version."""
    transforms: list[PropsTransform] = [partial(with_sidecar_tag, tag=ISTIO.version)]
    path, annotations = cni_bin_dir(args), gateway_annotations(args)
    if path:
        transforms.append(partial(with_cni_bin_dir, path=path))
    if annotations:
        transforms.append(partial(with_gateway_annotations, annotations=annotations))
    return tuple(transforms)


class Istio(PlatformComponent):
    """Istio as the Kubeflow release installs it: the gateway and mesh everything of Kubeflow sits behind."""

    ready: pulumi.Resource
    """Done when istiod, the CNI DaemonSet and the ingress gateway are ready."""
    gateway_service: pulumi.Output[str]
    """`<namespace>/<name>` of the ingress gateway Service."""

    def __init__(
        self,
        name: str,
        args: IstioArgs,
        cluster: Cluster,
        needs: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`needs`: what creates the namespaces Istio's install puts objects into (`kubeflow`)."""
        super().__init__(name, cluster, opts, args.sources)
        crds = self.kustomize("istio-crds", CRDS, depends_on=needs)
        namespace = self.kustomize("istio-namespace", NAMESPACE, depends_on=[crds])
        self.ready = self.kustomize("istio", INSTALL, depends_on=[namespace], transforms=istio_transforms(args))
        self.gateway_service = pulumi.Output.from_input(f"{GATEWAY_NAMESPACE}/{GATEWAY_SERVICE}")
        self.register_outputs({"gatewayService": self.gateway_service, "ready": self.ready.urn})
