"""Istio (CRDs, istiod, CNI, ingress gateway with oauth2-proxy ext-authz) from the pinned
Kubeflow release: 1.30.1 in 26.03.1 (common/istio/istio-install/base/install.yaml, charts and
images at 1.30.1), its images at the patch release the pin table names (facts/versions.py
ISTIO.patch: the security fixes live in the images) and the one template change of those
patches the tree lacks (`with_escaped_annotations`; the pin's patch says how the rest of the
manifests were checked). On GKE two things differ: GKE mounts /opt/cni/bin read-only, so the CNI
binaries go to /home/kubernetes/bin (the release's own `gke` overlay); and behind a GKE
Ingress (components/gateway.py) the gateway Service is its backend (a transform)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from typing import Any

import pulumi
import yaml

from facts.image_refs import parse
from facts.versions import ISTIO as PIN
from infra.cluster import Cluster
from plumbing.base import PlatformComponent, PropsTransform, UpstreamArgs, config_digest, matches, with_config_digest
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.readiness import Readiness
from stackmodel.components.inference_gateway import INFERENCE_GATEWAY, GatewayProvider
from stackmodel.components.istio import ISTIO
from stackmodel.components.kubeflow import behind_gke_ingress
from stackmodel.schema import GkeClusterConfig
from stackmodel.stack import PlatformConfig

CRDS = "common/istio/istio-crds/base"
NAMESPACE = "common/istio/istio-namespace/base"
# The oauth2-proxy overlay adds the ext-authz extension provider the Kubeflow gateway uses.
INSTALL = "common/istio/istio-install/overlays/oauth2-proxy"
# 26.03.1-rc.2 common/istio/istio-install/overlays/gke: the oauth2-proxy overlay (`resources:
# [../oauth2-proxy]`) with the component gke-cni, whose gke-cni-patch.yaml puts the
# istio-cni-node DaemonSet's volume cni-bin-dir at /home/kubernetes/bin. (Until 26.03 that
# overlay dropped the oauth2-proxy wiring, and a transform of ours patched the volume.)
GKE_INSTALL = "common/istio/istio-install/overlays/gke"
GKE_CNI_BIN_DIR = "/home/kubernetes/bin"


GATEWAY_NAMESPACE = "istio-system"
GATEWAY_SERVICE = "istio-ingressgateway"
"""The ingress gateway Service of the Kubeflow install (in GATEWAY_NAMESPACE)."""
BACKEND_CONFIG = "kubeflow-gateway"
"""The GKE BackendConfig (made by components/gateway.py) of the gateway Service."""


@dataclass(frozen=True)
class IstioArgs(UpstreamArgs):
    gke: bool
    """On GKE (its CNI bin directory)."""
    gke_ingress: bool
    """The ingress gateway Service is the backend of a GKE Ingress (see behind_gke_ingress)."""
    inference_extension: bool = False
    """istiod routes Gateway API InferencePools: the inference gateway is Istio's
    (components/inference_gateway.py)."""


def install_tree(args: IstioArgs) -> str:
    """The release's Istio install for the cluster: its `gke` overlay on GKE (CNI binaries in
    GKE_CNI_BIN_DIR), else the oauth2-proxy overlay (Istio's default /opt/cni/bin)."""
    return GKE_INSTALL if args.gke else INSTALL


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


MESH_CONFIG = ("ConfigMap", GATEWAY_NAMESPACE, "istio")
"""The mesh config istiod reads (26.03.1-rc.2 common/istio/istio-install/base/install.yaml, key `mesh`)."""
# Istio 1.30.1 mesh/v1alpha1/config.proto, ProxyPathNormalization: DECODE_AND_MERGE_SLASHES
# decodes %2F, %2f, %5C and %5c and merges slashes before routing and authorization, for
# the gateway and every sidecar. The default (BASE) leaves `/jupyter/api/namespaces%2Fnlp/...`
# as it is: it misses a policy on `/jupyter/api/namespaces/nlp/*` (components/access.py), and
# the web app behind (gunicorn) decodes it and serves the namespace.
PATH_NORMALIZATION = "DECODE_AND_MERGE_SLASHES"


def with_path_normalization(props: dict[str, Any]) -> dict[str, Any] | None:
    """The mesh config with paths normalized as the policies are written: None for other objects."""
    metadata = props.get("metadata", {})
    if (props.get("kind"), metadata.get("namespace"), metadata.get("name")) != MESH_CONFIG:
        return None
    mesh = yaml.safe_load(props["data"]["mesh"]) or {}
    mesh["pathNormalization"] = {"normalization": PATH_NORMALIZATION}
    return {**props, "data": {**props["data"], "mesh": yaml.safe_dump(mesh, sort_keys=False)}}


ISTIO_IMAGES = frozenset({"pilot", "proxyv2", "install-cni", "ztunnel"})
"""Istio's images by name, under whichever hub (the tree's registry.istio.io/release, docker.io/istio, a mirror)."""
CNI_AGENT = ("DaemonSet", "istio-cni-node")
AGENT_VERSION_KEY = "CURRENT_AGENT_VERSION"
"""istio-cni-config (kube-system): the CNI agent's version, as the tree's chart wrote it."""


def _retagged(reference: str, tree: str, release: str) -> str:
    ref = parse(reference)
    if ref.repository.rsplit("/", 1)[-1] in ISTIO_IMAGES and ref.tag == tree and not ref.digest:
        return reference[: -len(tree)] + release
    return reference


def _with_release_tag(node: Any, tree: str, release: str) -> Any:
    """Istio's Helm values (the injector's and the `values` ConfigMap's JSON) with `global.tag` moved."""
    if isinstance(node, dict) and isinstance(node.get("global"), dict) and node["global"].get("tag") == tree:
        return {**node, "global": {**node["global"], "tag": release}}
    return node


def with_patch_release(props: dict[str, Any], tree: str, release: str) -> dict[str, Any] | None:
    """The tree's Istio objects running the patch release `release` instead of `tree`: the
    images of istiod, the gateway and the CNI agent, the tag the injector gives sidecars
    (its values' `global.tag`: pkg/kube/inject ProxyImage), and the CNI agent's version."""
    kind = props.get("kind")
    if kind in ("Deployment", "DaemonSet"):
        spec = props["spec"]["template"]["spec"]
        changed = {
            key: [{**c, "image": _retagged(c["image"], tree, release)} if "image" in c else c for c in spec.get(key) or []]
            for key in ("containers", "initContainers")
            if spec.get(key)
        }
        if all(new == spec[key] for key, new in changed.items()):
            return None
        template = props["spec"]["template"]
        return {**props, "spec": {**props["spec"], "template": {**template, "spec": {**spec, **changed}}}}
    if kind != "ConfigMap":
        return None
    data = dict(props.get("data") or {})
    for key, text in data.items():
        if key == AGENT_VERSION_KEY and text == tree:
            data[key] = release
        elif isinstance(text, str) and text.lstrip().startswith("{") and f'"{tree}"' in text:
            values = json.loads(text)
            moved = _with_release_tag(values, tree, release)
            if moved is not values:
                data[key] = json.dumps(moved, indent=2)
    return {**props, "data": data} if data != (props.get("data") or {}) else None


INJECTOR = ("ConfigMap", GATEWAY_NAMESPACE, "istio-sidecar-injector")
"""The injection templates istiod renders sidecars and gateways from (key `config`: YAML with
`templates`, each a Go template; install.yaml of the tree)."""
INJECTOR_TEMPLATES_KEY = "config"
_ANNOTATION = "annotation .ObjectMeta `sidecar.istio.io/{name}` {default}"
_PROXY_IMAGE = _ANNOTATION.format(name="proxyImage", default=".Values.global.proxy.image")
_INIT_IMAGE = _ANNOTATION.format(name="proxyImage", default=".Values.global.proxy_init.image")
_LOG_LEVEL = _ANNOTATION.format(name="logLevel", default=".Values.global.proxy.logLevel")
_COMPONENT_LOG_LEVEL = _ANNOTATION.format(name="componentLogLevel", default=".Values.global.proxy.componentLogLevel")
_AGENT_LOG_LEVEL = _ANNOTATION.format(name="agentLogLevel", default=".Values.global.logging.level")
_BOOTSTRAP = _ANNOTATION.format(name="bootstrapOverride", default='""')
ESCAPED_ANNOTATIONS: tuple[tuple[str, str], ...] = (
    (f'image: "{{{{ {_PROXY_IMAGE} }}}}"', f"image: {{{{ {_PROXY_IMAGE} | quote }}}}"),
    (f'image: "{{{{ {_INIT_IMAGE} }}}}"', f"image: {{{{ {_INIT_IMAGE} | quote }}}}"),
    (f"- --proxyLogLevel={{{{ {_LOG_LEVEL} }}}}", f'- {{{{ printf "--proxyLogLevel=%s" ({_LOG_LEVEL}) | quote }}}}'),
    (
        f"- --proxyComponentLogLevel={{{{ {_COMPONENT_LOG_LEVEL} }}}}",
        f'- {{{{ printf "--proxyComponentLogLevel=%s" ({_COMPONENT_LOG_LEVEL}) | quote }}}}',
    ),
    (f'- "--log_output_level={{{{ {_AGENT_LOG_LEVEL} }}}}"', f'- {{{{ printf "--log_output_level=%s" ({_AGENT_LOG_LEVEL}) | quote }}}}'),
    (f"- --log_output_level={{{{ {_AGENT_LOG_LEVEL} }}}}", f'- {{{{ printf "--log_output_level=%s" ({_AGENT_LOG_LEVEL}) | quote }}}}'),
    (f"name: {{{{ {_BOOTSTRAP} }}}}", f"name: {{{{ {_BOOTSTRAP} | quote }}}}"),
)
"""The 1.30.4 security fix of the injection templates (its notes: the `sidecar.istio.io/` annotations
proxyImage, bootstrapOverride, logLevel, componentLogLevel and agentLogLevel were interpolated
without escaping, so a crafted value could add fields to the pod or deployment spec), as
istio/istio master e906d004 (#61215) makes it in manifests/charts/istio-control/istio-discovery/
files/{injection-template,gateway-injection-template,grpc-agent,kube-gateway,waypoint}.yaml: each
line before -> after. `quote` and `printf` are sprig's, which istiod's template engine has at
1.30 (pkg/kube/inject/inject.go: sprig.TxtFuncMap). The tree's templates are 1.30.1's, equal to
1.30.3's and to release-1.30's stored head in these lines."""


def with_escaped_annotations(props: dict[str, Any]) -> dict[str, Any] | None:
    """The injector's templates with the annotations escaped as 1.30.4 escapes them; None for
    other objects."""
    metadata = props.get("metadata", {})
    if (props.get("kind"), metadata.get("namespace"), metadata.get("name")) != INJECTOR:
        return None
    text = props["data"][INJECTOR_TEMPLATES_KEY]
    for before, after in ESCAPED_ANNOTATIONS:
        text = text.replace(before, after)
    return {**props, "data": {**props["data"], INJECTOR_TEMPLATES_KEY: text}}


ISTIOD = ("Deployment", "istiod")
INFERENCE_EXTENSION_ENV = "ENABLE_GATEWAY_API_INFERENCE_EXTENSION"
"""istio/istio 1.30.3 pilot/pkg/features/experimental.go:208 (default false): istiod converts an
HTTPRoute's InferencePool backend (inference.networking.k8s.io v1 only: pilot/pkg/config/kube/
gateway/conversion.go, gvk.InferencePool) into a route through the pool's endpoint picker. Read at
start, like every env of istiod: a change rolls its pods (the Deployment's template changes)."""


def with_inference_extension(props: dict[str, Any]) -> dict[str, Any] | None:
    """istiod with the inference extension on; None for other objects."""
    if not matches(props, *ISTIOD):
        return None
    template = props["spec"]["template"]
    pod = template["spec"]
    containers = []
    for container in pod["containers"]:
        if container.get("name") == "discovery":
            env = [e for e in container.get("env") or [] if e.get("name") != INFERENCE_EXTENSION_ENV]
            container = {**container, "env": [*env, {"name": INFERENCE_EXTENSION_ENV, "value": "true"}]}
        containers.append(container)
    return {**props, "spec": {**props["spec"], "template": {**template, "spec": {**pod, "containers": containers}}}}


def istio_transforms(args: IstioArgs) -> tuple[PropsTransform, ...]:
    """The args as transforms of the Istio objects they concern, the mesh's path normalization,
    and the pinned patch release."""
    annotations = gateway_annotations(args)
    with_annotations = (partial(with_gateway_annotations, annotations=annotations),) if annotations else ()
    patch: tuple[PropsTransform, ...] = ()
    if PIN.patch is not None:
        patch = (
            partial(with_patch_release, tree=PIN.version, release=PIN.runs),
            with_escaped_annotations,
            # The CNI agent reads its ConfigMap (AGENT_VERSION_KEY among it) as env, at start.
            partial(with_config_digest, workloads=(CNI_AGENT,), digest=config_digest(PIN.runs)),
        )
    inference = (with_inference_extension,) if args.inference_extension else ()
    return (with_path_normalization, *patch, *with_annotations, *inference)


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
        self.ready = self.kustomize("istio", install_tree(args), depends_on=[namespace], transforms=istio_transforms(args))
        self.gateway_service = pulumi.Output.from_input(f"{GATEWAY_NAMESPACE}/{GATEWAY_SERVICE}")
        self.register_outputs({"gatewayService": self.gateway_service, "ready": self.ready.urn})


def istio_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> IstioArgs:
    gateway = config.components[INFERENCE_GATEWAY]
    return IstioArgs(
        sources=config.sources,
        gke=isinstance(config.cluster, GkeClusterConfig),
        gke_ingress=behind_gke_ingress(config),
        inference_extension=config.enabled(INFERENCE_GATEWAY) and gateway.provider is GatewayProvider.ISTIO,
    )


def _install(args: IstioArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return Istio("istio", args, cluster, ready.resources(ISTIO.needs, "Istio"))


INSTALLATION = Installation(ISTIO, istio_args, _install)
