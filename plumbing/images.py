"""Every image an object names, and one rewrite of them all: the image inventory that
`python -m stacks images` lists, every image rule of `check` reads, and the transform that
sends every image through the stack's ImagePolicy (retired registries replaced, upstream
floating references pinned, the mirror of `mlplatform:images.mirror`). Pure functions on
plain data: `pulumi up` applies `image_transform` to every object the stack registers (a
stack transform, plumbing/base.py), the offline render to every object it renders.

Where images are named (each checked in the 26.03 tree and the pinned charts):
- pod specs wherever they sit (Deployments, DaemonSets, Jobs, and custom resources that
  operators turn into pods: RayClusters, ClusterTrainingRuntimes, JobSets, Notebooks):
  `image` of containers, init containers and ephemeral containers;
- container arguments that hand an operator an image to start: IMAGE_ARGS, as `--flag=<image>`
  or as the flag followed by the image (Argo's `--executor-image <image>`);
- env vars and ConfigMap keys named `*_IMAGE` (the volumes web app's PVC viewer
  `VOLUME_VIEWER_IMAGE`, the tensorboard controller's `TENSORBOARD_IMAGE`, read via envFrom;
  KFP's API server's `V2_DRIVER_IMAGE`, `V2_LAUNCHER_IMAGE`), and IMAGE_KEYS;
- `spec.image` of the Prometheus Operator's workloads (PROMETHEUS_OPERATOR_KINDS);
- Istio's values (ConfigMaps `istio-sidecar-injector` and `values`, JSON with `global.hub`):
  every `hub`, and in the injector the sidecar and init images istiod builds from
  `global.hub`/`global.proxy.image`/`global.tag` (pkg/kube/inject ProxyImage), plus the literal
  `image:` lines of its templates (`grpc-simple`'s busybox). Its mesh config (ConfigMap
  `istio`, key `mesh`) names no image in 1.30;
- the Jupyter web app's form (`spawner_ui_config.yaml`): the images it offers;
- Katib's katib-config (the suggestion, metrics-collector and early-stopping images its controller
  starts) and its trial templates (workloads kept as text in a ConfigMap).
KubeRay's, Trainer's and Kueue's arguments and ConfigMaps name no image at the pinned
versions (Ray pods take theirs from the RayCluster, TrainJobs from their runtime).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from facts.image_refs import ImagePolicy
from facts.image_set import SPAWNER_CONFIG_KEY
from plumbing.base import PropsTransform

CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
IMAGE_ARGS = ("--prometheus-config-reloader", "--thanos-default-base-image", "--acme-http01-solver-image", "--executor-image")
"""Arguments naming images an operator starts: the Prometheus Operator's config reloader and
Thanos sidecar (prometheus-operator cmd/operator/main.go flags, set by kube-prometheus-stack
templates/prometheus-operator/deployment.yaml), cert-manager's ACME HTTP-01 solver (cert-manager
controller flags, common/cert-manager upstream manifest), Argo's workflow executor (argo-workflows
v3.7.3 cmd/workflow-controller/main.go `--executor-image`, set by the Pipelines tree's
third-party/argo/base/workflow-controller-deployment-patch.yaml as two arguments)."""
IMAGE_NAME_SUFFIX = "_IMAGE"
IMAGE_KEYS = ("cacheImage",)
"""ConfigMap keys naming an image without the suffix: KFP's `pipeline-install-config` `cacheImage`,
what its cache webhook runs for a cached step (kubeflow/pipelines 2.16.1 backend/src/cache/server/
mutation.go, read as CACHE_IMAGE)."""
PROMETHEUS_OPERATOR_GROUP = "monitoring.coreos.com"
PROMETHEUS_OPERATOR_KINDS = frozenset({"Prometheus", "PrometheusAgent", "Alertmanager", "ThanosRuler"})
"""Custom resources whose `spec.image` the Prometheus Operator runs (its API reference)."""
KATIB_CONFIG_KEY = "katib-config.yaml"
KATIB_IMAGE_SECTIONS = ("metricsCollectors", "suggestions", "earlyStoppings")
"""Katib's katib-config (components/katib.py): the images its controller starts, by section."""


def _is_workload_manifest(text: str) -> bool:
    """A ConfigMap value that is a Kubernetes workload (an `apiVersion`, a `kind` and a `spec`):
    Katib's trial templates (ConfigMap trial-templates), whose pod specs name images."""
    if "apiVersion:" not in text or "kind:" not in text:
        return False
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError:
        return False
    return isinstance(document, dict) and {"apiVersion", "kind", "spec"} <= document.keys()


SPAWNER_IMAGE_FIELDS = ("image", "imageGroupOne", "imageGroupTwo")
KSERVE_GROUP = "serving.kserve.io"
KSERVE_CONFIG_MAP = "inferenceservice-config"
KSERVE_IMAGE_FIELDS = ("image", "defaultJobImage")
"""KServe v0.20.0's inferenceservice-config (charts/kserve-resources files/common/configmap-patch.yaml):
the images its pod webhook injects, `<repository>:<tag>` in one string (the art explainer's
`image` names no tag: its version is a key of its own, and no runtime of ours runs it)."""
"""spawnerFormDefaults fields with `value` and `options` images: Jupyter, VS Code, RStudio."""
ISTIO_INJECTOR_TEMPLATES = "config"
ISTIO_INJECTOR_VALUES = "values"
ISTIO_DEFAULT_PROXY = "proxyv2"
TEMPLATE_IMAGE = re.compile(r'^(?P<lead>\s*(?:-\s*)?image:\s*)(?P<quote>"?)(?P<ref>[^"\s{}$]+)(?P=quote)\s*$', re.MULTILINE)
"""A literal `image:` line in Istio's injection templates (not a Go template expression)."""
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
"""Pulumi's unknown-value sentinel (pulumi.runtime.rpc.UNKNOWN) in a preview: never an image."""


@dataclass(frozen=True)
class ImageSite:
    """One place an object names an image (or an image hub)."""

    where: str
    """The field, as a path in the object (`spec.template.spec.containers[0].image`)."""
    reference: str
    hub: bool = False
    """An image hub (a registry prefix images are named under), not an image."""
    derived: bool = False
    """Computed from other fields (Istio's sidecar image from hub, name and tag); changed
    through them, never itself."""


Change = Callable[[ImageSite], str]
"""A site's new value (its reference unchanged to leave it)."""


class _Walk:
    """One pass over an object: every site reported to `change`, the object rebuilt with
    what it returns; `changed` says whether anything differs."""

    def __init__(self, change: Change):
        self.change = change
        self.changed = False

    def value(self, where: str, reference: str, hub: bool = False) -> str:
        if reference == UNKNOWN:
            return reference
        new = self.change(ImageSite(where, reference, hub))
        if new != reference:
            self.changed = True
        return new

    def derived(self, where: str, reference: str) -> None:
        self.change(ImageSite(where, reference, derived=True))

    # --- pod specs, anywhere in an object -------------------------------------------------

    def tree(self, node: Any, where: str) -> Any:
        if isinstance(node, list):
            return [self.tree(item, f"{where}[{i}]") for i, item in enumerate(node)]
        if not isinstance(node, dict):
            return node
        result = {}
        for key, value in node.items():
            path = f"{where}.{key}" if where else key
            if key in CONTAINER_LISTS and isinstance(value, list):
                result[key] = [self.container(c, f"{path}[{i}]") for i, c in enumerate(value)]
            else:
                result[key] = self.tree(value, path)
        return result

    def container(self, container: Any, where: str) -> Any:
        if not isinstance(container, dict):
            return container
        result = dict(container)
        if isinstance(container.get("image"), str):
            result["image"] = self.value(f"{where}.image", container["image"])
        for key in ("args", "command"):
            if isinstance(container.get(key), list):
                items = container[key]
                result[key] = [
                    self.argument(a, f"{where}.{key}[{i}]", items[i - 1] if i else None) for i, a in enumerate(items)
                ]
        if isinstance(container.get("env"), list):
            result["env"] = [self.env(e, f"{where}.env[{i}]") for i, e in enumerate(container["env"])]
        return result

    def argument(self, argument: Any, where: str, previous: Any = None) -> Any:
        """One argument; `previous`: the one before it (a flag whose value this is)."""
        if not isinstance(argument, str):
            return argument
        if previous in IMAGE_ARGS and not argument.startswith("-"):
            return self.value(f"{where} {previous}", argument)
        flag, equals, value = argument.partition("=")
        if equals and value and (flag in IMAGE_ARGS):
            return f"{flag}={self.value(f'{where} {flag}', value)}"
        return argument

    def env(self, var: Any, where: str) -> Any:
        if isinstance(var, dict) and str(var.get("name", "")).endswith(IMAGE_NAME_SUFFIX) and isinstance(var.get("value"), str):
            return {**var, "value": self.value(f"{where}.value ({var['name']})", var["value"])}
        return var

    # --- configuration that names images -------------------------------------------------

    def config_map(self, data: dict[str, Any]) -> dict[str, Any]:
        result = dict(data)
        injector = ISTIO_INJECTOR_TEMPLATES in data and ISTIO_INJECTOR_VALUES in data
        for key, text in data.items():
            if not isinstance(text, str):
                continue
            where = f"data.{key}"
            if key.endswith(IMAGE_NAME_SUFFIX) or key in IMAGE_KEYS:
                result[key] = self.value(where, text)
            elif key == SPAWNER_CONFIG_KEY:
                result[key] = self.spawner(text, where)
            elif key == KATIB_CONFIG_KEY:
                result[key] = self.katib_config(text, where)
            elif _is_workload_manifest(text):
                result[key] = self.workload_manifest(text, where)
            elif injector and key == ISTIO_INJECTOR_TEMPLATES:
                result[key] = self.templates(text, where)
            elif text.lstrip().startswith("{"):
                result[key] = self.istio_values(text, where, sidecar=injector and key == ISTIO_INJECTOR_VALUES)
        return result

    def templates(self, text: str, where: str) -> str:
        """Istio's injection templates, their literal `image:` lines."""

        def line(found: re.Match[str]) -> str:
            return found["lead"] + found["quote"] + self.value(f"{where} image:", found["ref"]) + found["quote"]

        return TEMPLATE_IMAGE.sub(line, text)

    def katib_config(self, text: str, where: str) -> str:
        """Katib's katib-config: the images its controller starts (runtime.metricsCollectors,
        .suggestions, .earlyStoppings: kubeflow/katib v0.19.0 pkg/apis/config/v1beta1/types.go)."""
        config = yaml.safe_load(text) or {}
        before = self.changed
        self.changed = False
        for section in KATIB_IMAGE_SECTIONS:
            for i, entry in enumerate((config.get("runtime") or {}).get(section) or []):
                if isinstance(entry, dict) and isinstance(entry.get("image"), str):
                    entry["image"] = self.value(f"{where} runtime.{section}[{i}].image", entry["image"])
        changed, self.changed = self.changed, before or self.changed
        return yaml.safe_dump(config, sort_keys=False) if changed else text

    def workload_manifest(self, text: str, where: str) -> str:
        """A workload kept as text in a ConfigMap (Katib's trial templates): its pod specs' images."""
        before = self.changed
        self.changed = False
        manifest = self.tree(yaml.safe_load(text), where)
        changed, self.changed = self.changed, before or self.changed
        return yaml.safe_dump(manifest, sort_keys=False) if changed else text

    def spawner(self, text: str, where: str) -> str:
        config = yaml.safe_load(text) or {}
        form = config.get("spawnerFormDefaults") or {}
        before = self.changed
        self.changed = False
        for field in SPAWNER_IMAGE_FIELDS:
            images = form.get(field)
            if not isinstance(images, dict):
                continue
            path = f"{where} spawnerFormDefaults.{field}"
            if isinstance(images.get("value"), str):
                images["value"] = self.value(f"{path}.value", images["value"])
            if isinstance(images.get("options"), list):
                images["options"] = [
                    self.value(f"{path}.options[{i}]", o) if isinstance(o, str) else o for i, o in enumerate(images["options"])
                ]
        changed, self.changed = self.changed, before or self.changed
        return yaml.safe_dump(config, sort_keys=False) if changed else text

    def istio_values(self, text: str, where: str, sidecar: bool) -> str:
        """Istio's Helm values as istiod reads them (JSON): every `hub`; in the injector's
        values also the sidecar and init images they add up to."""
        try:
            values = json.loads(text)
        except json.JSONDecodeError:
            return text
        if not isinstance(values, dict) or not isinstance(values.get("global"), dict) or "hub" not in values["global"]:
            return text
        before = self.changed
        self.changed = False
        values = self.hubs(values, where)
        changed, self.changed = self.changed, before or self.changed
        if sidecar:
            for name, image in istio_sidecar_images(values["global"]).items():
                self.derived(f"{where} global.{name}.image (global.hub, global.tag)", image)
        return json.dumps(values, indent=2) if changed else text

    def hubs(self, node: Any, where: str) -> Any:
        if isinstance(node, list):
            return [self.hubs(item, f"{where}[{i}]") for i, item in enumerate(node)]
        if not isinstance(node, dict):
            return node
        return {
            key: self.value(f"{where} {key}", value, hub=True)
            if key == "hub" and isinstance(value, str) and value
            else self.hubs(value, f"{where} {key}")
            for key, value in node.items()
        }

    def object(self, obj: dict[str, Any]) -> dict[str, Any]:
        result = self.tree(obj, "")
        group = str(obj.get("apiVersion", "")).split("/")[0]
        spec = result.get("spec")
        operated = group == PROMETHEUS_OPERATOR_GROUP and obj.get("kind") in PROMETHEUS_OPERATOR_KINDS
        if operated and isinstance(spec, dict) and isinstance(spec.get("image"), str):
            result["spec"] = {**spec, "image": self.value("spec.image", spec["image"])}
        if obj.get("kind") == "ConfigMap" and isinstance(obj.get("data"), dict):
            if (obj.get("metadata") or {}).get("name") == KSERVE_CONFIG_MAP:
                result["data"] = self.kserve_config(obj["data"])
            else:
                result["data"] = self.config_map(obj["data"])
        container = spec.get("container") if isinstance(spec, dict) else None
        if group == KSERVE_GROUP and obj.get("kind") == "ClusterStorageContainer" and isinstance(container, dict):
            result["spec"] = {**spec, "container": self.container(container, "spec.container")}
        return result

    def kserve_config(self, data: dict[str, Any]) -> dict[str, Any]:
        """KServe's inferenceservice-config: JSON per key, the images its webhook injects
        (`storageInitializer.image`, `agent.image`, `router.image`, `localModel.defaultJobImage`, ...)."""
        result = dict(data)
        for key, text in data.items():
            try:
                values = json.loads(text) if isinstance(text, str) else None
            except json.JSONDecodeError:
                continue
            if not isinstance(values, dict):
                continue
            before = self.changed
            self.changed = False
            for field in KSERVE_IMAGE_FIELDS:
                if isinstance(values.get(field), str) and ":" in values[field]:
                    values[field] = self.value(f"data.{key} {field}", values[field])
            changed, self.changed = self.changed, before or self.changed
            if changed:
                result[key] = json.dumps(values, indent=2)
        return result


def istio_sidecar_images(global_values: dict[str, Any]) -> dict[str, str]:
    """The images istiod's injector starts ({proxy, proxy_init} -> image): `<hub>/<image>:<tag>`,
    the image `proxyv2` unless set, as is when it names a registry itself (`/` in it), the tag
    suffixed with a non-default `variant` (istio pkg/kube/inject/inject.go ProxyImage)."""
    hub, tag = str(global_values.get("hub") or ""), str(global_values.get("tag") or "")
    variant = str(global_values.get("variant") or "")
    if variant and variant != "default":
        tag = f"{tag}-{variant}"
    images = {}
    for name in ("proxy", "proxy_init"):
        image = str((global_values.get(name) or {}).get("image") or ISTIO_DEFAULT_PROXY)
        images[name] = image if "/" in image else f"{hub}/{image}:{tag}"
    return images


def names_images(obj: dict[str, Any]) -> bool:
    """Whether `obj` may name images: everything but a CRD (its schema describes pod specs,
    it names none), which is most of the render's bytes."""
    return obj.get("kind") != "CustomResourceDefinition"


def rewrite(obj: dict[str, Any], change: Change) -> dict[str, Any] | None:
    """`obj` with every image site replaced by `change`; None when nothing changes."""
    if not names_images(obj):
        return None
    walk = _Walk(change)
    result = walk.object(obj)
    return result if walk.changed else None


def image_sites(obj: dict[str, Any]) -> list[ImageSite]:
    """Every place `obj` names an image or an image hub, in the order they appear."""
    found: list[ImageSite] = []
    if not names_images(obj):
        return found

    def record(site: ImageSite) -> str:
        found.append(site)
        return site.reference

    _Walk(record).object(obj)
    return found


def images(obj: dict[str, Any]) -> Iterator[str]:
    """Every image (not hub) `obj` runs or hands an operator to run."""
    return (site.reference for site in image_sites(obj) if not site.hub)


def image_transform(policy: ImagePolicy) -> PropsTransform:
    """The policy as a transform of one object's properties: every image and hub rewritten."""

    def change(site: ImageSite) -> str:
        return policy.hub(site.reference) if site.hub else policy.image(site.reference)

    def transform(props: dict[str, Any]) -> dict[str, Any] | None:
        return rewrite(props, change)

    return transform
