"""`python -m stacks check`: a lint of the whole platform the cluster will receive (the
full render), as a table of named rules like the policy pack's. Each rule is a pure
function of the render; each has a test that breaks it (tests/test_check.py).

Long by design: one table of rules with the lookups they share (Platform), as the policy
pack keeps its own; each rule is a short function.
"""

from __future__ import annotations

import ipaddress
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal
from functools import cached_property
from typing import Any

import yaml

from components import kueue_owners
from components.base import CONFIG_DIGEST_ANNOTATION
from components.gateway import GOOGLE_LB_RANGES
from components.images import ImageSite, image_sites, image_transform
from components.kueue import CONFIG_MAP as KUEUE_CONFIG_MAP
from components.kueue import CONFIG_MAP_KEY as KUEUE_CONFIG_KEY
from components.kueue import NAMESPACE as KUEUE_NAMESPACE
from components.kueue_pods import POD_FRAMEWORK, POD_WEBHOOKS
from components.pipelines import EXECUTOR_KEY, WORKFLOW_CONTROLLER_CONFIG
from facts import fabric_pods
from facts.config_reload import reloads
from facts.image_files import ENV_NOT_READ, image_provides
from facts.image_refs import (
    FLOATING_TAGS,
    ImagePolicy,
    ImageRef,
    floating,
    is_local,
    normalized_hub,
    parse,
    retired_registry,
)
from facts.labels import KUEUE_DEFAULT_LOCAL_QUEUE as LOCAL_QUEUE
from facts.labels import KUEUE_ELASTIC_JOB_ANNOTATION, KUEUE_QUEUE_LABEL, NAMESPACE_NAME_LABEL
from facts.node_labels import GPU_RESOURCE
from facts.pod_overhead import pipeline_step_pods
from facts.pod_resources import as_admitted, pod_requests
from facts.resource_types import GCP_FIREWALL
from facts.support import minor, minor_label
from facts.versions import DCGM_EXPORTER, DCGM_METRIC_NAMES, PINS, Pin, PinKind
from infra.gke import CONTROL_PLANE_TARGET_PORTS
from stacks import quantity
from stacks.schema import GkeClusterConfig
from tooling import admission, advisories, cluster_version, support
from tooling.fullrender import FullRender, Rendered
from tooling.plan import SECRET, few_collections
from tooling.schemas import GKE_PROVIDED_KINDS, Validator, is_builtin, schemas_of
from tooling.unknowns import null_sites

ABSOLUTE_PATH = re.compile(r"^/[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*/?$")
CONFIG_LINE = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*=\s*(.+?)\s*$", re.MULTILINE)
FILE_KEY = re.compile(r"(?i)(file|dir|cert|key|logo|ca|certificate)$|^(data|logs|plugins|provisioning)$")
"""Keys of a configuration that name a file or directory to read (cert_file, tlsCert, caFile,
custom_sign_in_logo, authenticated_emails_file; Grafana's [paths] data, logs, plugins,
provisioning)."""
FILE_ENV = re.compile(r"(?<!LIBRARY)(?<!METRICS)(?<!PPROF)_(FILE|PATH|DIR)$|^GF_PATHS_")
"""Environment variables that name a file or directory to read (VIEWER_..._SPEC_PATH,
GF_PATHS_DATA; not LD_LIBRARY_PATH, a search path, nor METRICS_PATH and PPROF_PATH, the HTTP
paths a metrics server answers on: kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1
templates/kubeletplugin.yaml and controller.yaml, "HTTP_ENDPOINT and METRICS_PATH are used to
configure the metrics HTTP server")."""
POD_SPEC_KEYS = frozenset({"workingDir", "mountPath"})
"""Keys of a pod spec a configuration carries for pods it starts (a viewer's, a step's): not
files of the process that reads it."""
BUILTIN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
WORKLOAD_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"})
# GKE admits pods of these priority classes outside kube-system only where a ResourceQuota
# scoped to the class exists (cloud.google.com/kubernetes-engine/docs/how-to/
# node-auto-provisioning and kubernetes.io/docs/concepts/policy/resource-quotas
# "Limit Priority Class consumption by default", which GKE configures).
CRITICAL_PRIORITY_CLASSES = frozenset({"system-node-critical", "system-cluster-critical"})
FIREWALL = GCP_FIREWALL
# GKE's own firewall rule lets a private cluster's control plane reach nodes on these ports
# (cloud.google.com/kubernetes-engine/docs/how-to/private-clusters, "Adding firewall rules
# for specific use cases"); every other webhook port needs a rule of ours.
GKE_CONTROL_PLANE_PORTS = frozenset({443, 10250})
MASKED = frozenset({SECRET, "W3NlY3JldF0="})  # "[secret]" and its base64
CREDENTIAL_WORDS = ("password", "secret", "token", "cookie", "key")
DATABASE_USER_KEYS = frozenset({"username", "user", "db_user", "dbuser"})
SUPERUSERS = frozenset({"root", "cm9vdA=="})  # and its base64
# The docker-library/mysql entrypoint's switch for a root account without a password (8.4
# docker-entrypoint.sh docker_verify_minimum_env): what the Pipelines tree's MySQL sets.
EMPTY_PASSWORD_SWITCHES = frozenset({"MYSQL_ALLOW_EMPTY_PASSWORD"})
WELL_KNOWN_CREDENTIALS = {
    "minio123": "the object-store secret key Kubeflow Pipelines publishes (third-party/seaweedfs mlpipeline-minio-artifact)",
    "bWluaW8xMjM=": "the object-store secret key Kubeflow Pipelines publishes, base64 (minio123)",
}
"""Example credentials upstream releases publish, found anywhere in an object (Secrets, env, ConfigMaps)."""


@dataclass(frozen=True)
class Violation:
    rule: str
    object: str
    source: str
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.object} [{self.source}]: {self.message}"

    def as_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "object": self.object, "source": self.source, "message": self.message}


def label(o: Rendered) -> str:
    group, kind, namespace, name = o.key
    return f"{kind}{'.' + group if group else ''} {namespace + '/' if namespace else ''}{name}"


# --- the context rules read ---------------------------------------------------------------


class Platform:
    """The render with the lookups the rules share."""

    def __init__(self, render: FullRender, on: date | None = None):
        self.render = render
        self.objects = render.objects
        self.config = render.plan.config
        self.on = on or date.today()
        """The day the support rules judge (`check --on`)."""

    @cached_property
    def gke(self) -> GkeClusterConfig | None:
        return self.config.cluster if self.config and isinstance(self.config.cluster, GkeClusterConfig) else None

    @cached_property
    def images(self) -> ImagePolicy:
        """The stack's image policy (its mirror), as the program applied it."""
        return ImagePolicy(mirror=self.config.images.mirror if self.config else None)

    @cached_property
    def image_sites(self) -> list[tuple[Rendered, ImageSite]]:
        """Every image and hub every object names (components/images.py, the one inventory)."""
        return [(o, site) for o in self.objects for site in image_sites(o.obj)]

    @cached_property
    def _identities(self) -> ImagePolicy:
        """The image policy without the patch releases: a reference's identity is the tag it
        really names, so an image the rewrite missed shows at the tag its chart or tree ships."""
        return replace(self.images, patched={})

    def source_of(self, reference: str) -> ImageRef | None:
        """The image a reference stands for wherever it is pulled from: its mirror copy's
        source, a retired registry's successor; None if it is no image reference."""
        try:
            return parse(self._identities.source(self.images.origin(reference) or reference))
        except ValueError:
            return None

    def of_kind(self, *kinds: str) -> list[Rendered]:
        return [o for o in self.objects if o.obj.get("kind") in kinds]

    @cached_property
    def verdicts(self) -> list[admission.Verdict]:
        """Per team and workload, Kueue's verdict (tooling/admission.py)."""
        return admission.verdicts(self.render)

    @cached_property
    def namespaces(self) -> dict[str, dict[str, str]]:
        """Namespace name -> its labels (with the automatic kubernetes.io/metadata.name)."""
        found = {ns: {NAMESPACE_NAME_LABEL: ns} for ns in BUILTIN_NAMESPACES}
        for o in self.of_kind("Namespace"):
            name = o.key[3]
            found[name] = {**((o.obj.get("metadata") or {}).get("labels") or {}), NAMESPACE_NAME_LABEL: name}
        return found

    def waits_for(self, urn: str) -> frozenset[str]:
        """The URNs the resource `urn` waits for, itself included."""
        plan = self.render.plan
        return plan.waits_for(plan.get(urn)) | {urn}

    def pod_templates(self, namespace: str) -> list[tuple[Rendered, dict[str, Any]]]:
        """(workload, pod template) of every workload in `namespace`."""
        found = []
        for o in self.objects:
            if o.obj.get("kind") in WORKLOAD_KINDS and o.key[2] == namespace:
                template = ((o.obj.get("spec") or {}).get("template")) or {}
                found.append((o, template))
        return found

    def pods_behind(self, service: Rendered) -> list[dict[str, Any]]:
        selector = (service.obj.get("spec") or {}).get("selector") or {}
        if not selector:
            return []
        return [
            template
            for _, template in self.pod_templates(service.key[2])
            if selector.items() <= (((template.get("metadata") or {}).get("labels")) or {}).items()
        ]

    def service(self, namespace: str, name: str) -> Rendered | None:
        return next((o for o in self.of_kind("Service") if o.key[2:] == (namespace, name)), None)

    def policies_for(self, namespace: str, pod_labels: dict[str, str]) -> list[dict[str, Any]]:
        """The Ingress NetworkPolicies in `namespace` that select pods with `pod_labels`."""
        found = []
        for o in self.of_kind("NetworkPolicy"):
            spec = o.obj.get("spec") or {}
            if o.key[2] != namespace or "Ingress" not in (spec.get("policyTypes") or ["Ingress"]):
                continue
            if selects(spec.get("podSelector") or {}, pod_labels):
                found.append(spec)
        return found

    @cached_property
    def firewall_ports(self) -> set[int] | None:
        """TCP ports the control plane may open to nodes on a private GKE cluster; None elsewhere."""
        if not (self.gke and self.gke.private_nodes):
            return None
        ports: set[int] = set(GKE_CONTROL_PLANE_PORTS)
        existing = self.gke.network.existing
        if existing is not None and existing.host_project and not existing.manage_host_project:
            # The host project's admins make the rule (docs/gke-network.md gives it: the
            # ports of infra/gke.py CONTROL_PLANE_TARGET_PORTS); the plan cannot show it.
            return ports | {int(port) for port in CONTROL_PLANE_TARGET_PORTS}
        master = str(self.gke.network.master_cidr)
        for rule in self.render.plan.of_type(FIREWALL):
            if master not in (rule.inputs.get("sourceRanges") or []):
                continue
            for allow in rule.inputs.get("allows") or []:
                for port in allow.get("ports") or []:
                    low, _, high = str(port).partition("-")
                    ports |= set(range(int(low), int(high or low) + 1))
        return ports


SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """Kubernetes label-selector semantics (matchLabels and matchExpressions, all AND-ed);
    {} selects all. NotIn and DoesNotExist select objects without the key (apimachinery
    pkg/labels/selector.go `Requirement.Matches`); an operator the API server would reject
    is a ValueError, not a silent match."""
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        if operator not in SELECTOR_OPERATORS:
            raise ValueError(f"label selector operator {operator!r} on {key!r}; Kubernetes knows {', '.join(SELECTOR_OPERATORS)}")
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and labels.get(key) in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def container_port(template: dict[str, Any], port: Any) -> int | None:
    """A Service targetPort (number or name) as the container port number it reaches."""
    if isinstance(port, int) or str(port).isdigit():
        return int(port)
    for container in ((template.get("spec") or {}).get("containers")) or []:
        for p in container.get("ports") or []:
            if p.get("name") == port:
                return int(p["containerPort"])
    return None


def port_allowed(rule: dict[str, Any], number: int, names: set[str]) -> bool:
    ports = rule.get("ports")
    if not ports:
        return True
    for p in ports:
        value = p.get("port")
        if value is None or value == number or str(value) in names:
            return True
        end = p.get("endPort")
        if isinstance(value, int) and end and value <= number <= end:
            return True
    return False


def admits(policies: list[dict[str, Any]], number: int, names: set[str], source: str | None) -> bool:
    """Whether traffic to port `number` from outside the pod network (`source`: an address
    range, or None for "any address, such as the API server's") passes `policies`."""
    if not policies:
        return True
    for policy in policies:
        for rule in policy.get("ingress") or []:
            if not port_allowed(rule, number, names):
                continue
            peers = rule.get("from")
            if not peers:
                return True
            for peer in peers:
                block = peer.get("ipBlock")
                if block and _covers(block, source):
                    return True
    return False


def _covers(block: dict[str, Any], source: str | None) -> bool:
    network = ipaddress.ip_network(block["cidr"], strict=False)
    wanted = ipaddress.ip_network(source or "0.0.0.0/0", strict=False)
    if wanted.version != network.version or not wanted.subnet_of(network):  # type: ignore[arg-type]
        return False
    return not any(wanted.overlaps(ipaddress.ip_network(e, strict=False)) for e in block.get("except") or [])


def port_names(template: dict[str, Any], number: int) -> set[str]:
    names = set()
    for container in ((template.get("spec") or {}).get("containers")) or []:
        for p in container.get("ports") or []:
            if p.get("containerPort") == number and p.get("name"):
                names.add(p["name"])
    return names


# --- the rules --------------------------------------------------------------------------

RuleFn = Callable[[Platform], Iterable[Violation]]


@dataclass(frozen=True)
class Rule:
    """A rule of `check`: facts only the full render shows (docs/development.md, "Where a rule goes")."""

    name: str
    description: str
    check: RuleFn


def schema_valid(platform: Platform) -> Iterator[Violation]:
    """Every object valid against its schema: built-ins strictly, for the Kubernetes minor the
    stack's cluster is created at; custom kinds against the CRDs in the render itself, else
    the pinned upstream CRDs."""
    created_at = minor_label(minor(cluster_version.kubernetes_version(platform.config)))
    validator = Validator(schemas_of(o.obj for o in platform.of_kind("CustomResourceDefinition")), created_at)
    for o in platform.objects:
        errors = validator.errors(o.obj)
        if errors:
            yield Violation("schema", label(o), o.source, "; ".join(errors[:3]) + (f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""))


def no_nulls(platform: Platform) -> Iterator[Violation]:
    """No `null` where an object's schema wants a value (a list item, a map value, a required
    field: tooling/unknowns.py): the API server refuses it, or stores an empty value. The full
    render gives our objects' unknowns (values only the cloud knows) typed placeholders."""
    created_at = minor_label(minor(cluster_version.kubernetes_version(platform.config)))
    validator = Validator(schemas_of(o.obj for o in platform.of_kind("CustomResourceDefinition")), created_at)
    for o in platform.objects:
        for site in null_sites(o.obj, validator):
            yield Violation(
                "null",
                label(o),
                o.source,
                f"{site.field}: null where the schema wants a {site.wants} ({site.why}); the API server refuses it or "
                "stores an empty value: give it a value or leave the entry out (a value only the cloud knows: a "
                "placeholder in the offline render, tooling/unknowns.py)",
            )


def no_duplicates(platform: Platform) -> Iterator[Violation]:
    """No object (group, kind, namespace, name) created twice: Pulumi would fight itself."""
    seen: dict[tuple[str, str, str, str], Rendered] = {}
    for o in platform.objects:
        first = seen.setdefault(o.key, o)
        if first is not o:
            yield Violation("duplicate", label(o), o.source, f"also created by {first.source}")


def created_before(platform: Platform) -> Iterator[Violation]:
    """Every custom resource's CRD and every namespaced object's namespace come from an
    install it waits for in the Pulumi graph (or from the same install, which orders them)."""
    crds: dict[tuple[str, str], Rendered] = {}
    for o in platform.of_kind("CustomResourceDefinition"):
        spec = o.obj.get("spec") or {}
        crds[(spec.get("group", ""), (spec.get("names") or {}).get("kind", ""))] = o
    namespaces = {o.key[3]: o for o in platform.of_kind("Namespace")}
    for o in platform.objects:
        group, kind, namespace, _ = o.key
        waits = platform.waits_for(o.urn)
        if not is_builtin(o.obj):
            crd = crds.get((group, kind))
            if crd is None:
                if (o.obj.get("apiVersion"), kind) not in GKE_PROVIDED_KINDS and not _gke_serves(platform, group):
                    yield Violation("order", label(o), o.source, f"no CustomResourceDefinition for {kind}.{group} in the platform")
            elif crd.urn not in waits:
                yield Violation("order", label(o), o.source, f"does not wait for its CRD (from {crd.source})")
        if namespace and namespace not in BUILTIN_NAMESPACES:
            creator = namespaces.get(namespace)
            if creator is None:
                yield Violation("order", label(o), o.source, f"namespace {namespace} is created by nothing in the platform")
            elif creator.urn not in waits:
                yield Violation("order", label(o), o.source, f"does not wait for namespace {namespace} (from {creator.source})")


def _gke_serves(platform: Platform, group: str) -> bool:
    """API groups GKE itself serves on every cluster (managed Prometheus, managed certificates)."""
    return platform.gke is not None and group in {"monitoring.googleapis.com", "cloud.google.com", "networking.gke.io"}


def control_plane_calls(platform: Platform) -> Iterator[tuple[Rendered, str, dict[str, Any]]]:
    """(object, what calls, service reference) of every call the API server makes into the
    cluster: admission webhooks, CRD conversion webhooks (apiextensions.k8s.io/v1
    `spec.conversion.webhook.clientConfig.service`) and aggregated APIs (apiregistration.k8s.io/v1
    APIService `spec.service`). Each reference has namespace, name and an optional port (443)."""
    for o in platform.of_kind("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        for hook in o.obj.get("webhooks") or []:
            ref = (hook.get("clientConfig") or {}).get("service")
            if ref:
                yield o, f"webhook {hook.get('name')}", ref
    for o in platform.of_kind("CustomResourceDefinition"):
        conversion = (o.obj.get("spec") or {}).get("conversion") or {}
        ref = ((conversion.get("webhook") or {}).get("clientConfig") or {}).get("service")
        if conversion.get("strategy") == "Webhook" and ref:
            yield o, "conversion webhook", ref
    for o in platform.of_kind("APIService"):
        ref = (o.obj.get("spec") or {}).get("service")
        if ref:
            yield o, "aggregated API", ref


def control_plane_reachable(platform: Platform) -> Iterator[Violation]:
    """Every call the API server makes into the cluster (control_plane_calls) is reachable: its
    Service and target port exist, NetworkPolicies admit the API server, and a private GKE
    cluster's firewall opens the pod's port (the control plane reaches pods directly). An
    unreachable webhook fails the requests it admits; an unreachable conversion webhook every
    read of its CRD's other versions; an unavailable aggregated API breaks discovery, which
    stalls namespace deletion cluster-wide."""
    for o, caller, ref in control_plane_calls(platform):
        where = f"{caller} -> {ref.get('namespace')}/{ref.get('name')}"
        service = platform.service(ref.get("namespace", ""), ref.get("name", ""))
        if service is None:
            yield Violation("control-plane-reach", label(o), o.source, f"{where}: no such Service")
            continue
        port = ref.get("port", 443)
        spec_port = next((p for p in (service.obj.get("spec") or {}).get("ports") or [] if p.get("port") == port), None)
        if spec_port is None:
            yield Violation("control-plane-reach", label(o), o.source, f"{where}: the Service has no port {port}")
            continue
        pods = platform.pods_behind(service)
        if not pods:
            yield Violation("control-plane-reach", label(o), o.source, f"{where}: no pods match the Service's selector")
            continue
        for template in pods:
            number = container_port(template, spec_port.get("targetPort", port))
            if number is None:
                yield Violation("control-plane-reach", label(o), o.source, f"{where}: target port {spec_port.get('targetPort')} names no container port")
                continue
            pod_labels = ((template.get("metadata") or {}).get("labels")) or {}
            policies = platform.policies_for(service.key[2], pod_labels)
            if not admits(policies, number, port_names(template, number), None):
                yield Violation("control-plane-reach", label(o), o.source, f"{where}: NetworkPolicies in {service.key[2]} drop the API server's traffic to port {number}")
            ports = platform.firewall_ports
            if ports is not None and number not in ports:
                yield Violation(
                    "control-plane-reach", label(o), o.source,
                    f"{where}: the private cluster's control-plane firewall does not open port {number}; add it to infra/gke.py CONTROL_PLANE_TARGET_PORTS",
                )


def load_balancer_admitted(platform: Platform) -> Iterator[Violation]:
    """Every Service behind a GKE Ingress (container-native, NEG) admits Google's load-balancer
    and health-check ranges on its serving port and its health-check port."""
    for service in platform.of_kind("Service"):
        annotations = (service.obj.get("metadata") or {}).get("annotations") or {}
        try:
            neg = json.loads(annotations.get("cloud.google.com/neg", "{}"))
        except json.JSONDecodeError:
            neg = {}
        if not neg.get("ingress"):
            continue
        health_ports: set[int] = set()
        backend = json.loads(annotations.get("cloud.google.com/backend-config", "{}")).get("default")
        for config in platform.of_kind("BackendConfig"):
            if config.key[2:] == (service.key[2], backend):
                port = ((config.obj.get("spec") or {}).get("healthCheck") or {}).get("port")
                if port:
                    health_ports.add(int(port))
        for template in platform.pods_behind(service):
            pod_labels = ((template.get("metadata") or {}).get("labels")) or {}
            policies = platform.policies_for(service.key[2], pod_labels)
            serving = {container_port(template, p.get("targetPort", p.get("port"))) for p in (service.obj.get("spec") or {}).get("ports") or []}
            for number in sorted(p for p in serving | health_ports if p is not None):
                for source in GOOGLE_LB_RANGES:
                    if not admits(policies, number, port_names(template, number), source):
                        yield Violation("load-balancer", label(service), service.source, f"NetworkPolicies in {service.key[2]} drop {source} to port {number}")


MONITOR_SELECTORS = {
    "ServiceMonitor": ("serviceMonitorSelector", "serviceMonitorNamespaceSelector"),
    "PodMonitor": ("podMonitorSelector", "podMonitorNamespaceSelector"),
    "PrometheusRule": ("ruleSelector", "ruleNamespaceSelector"),
}


def monitors_selected(platform: Platform) -> Iterator[Violation]:
    """Every ServiceMonitor, PodMonitor and PrometheusRule is picked up by a Prometheus in the
    platform (Prometheus Operator: a nil selector selects nothing, {} everything; a nil
    namespace selector means the Prometheus' own namespace only)."""
    prometheuses = [o for o in platform.of_kind("Prometheus") if o.key[0] == "monitoring.coreos.com"]
    for o in platform.of_kind(*MONITOR_SELECTORS):
        if o.key[0] != "monitoring.coreos.com":
            continue
        selector_key, namespace_key = MONITOR_SELECTORS[o.obj["kind"]]
        labels = (o.obj.get("metadata") or {}).get("labels") or {}
        namespace_labels = platform.namespaces.get(o.key[2], {})
        picked = False
        for prometheus in prometheuses:
            spec = prometheus.obj.get("spec") or {}
            selector, namespace_selector = spec.get(selector_key), spec.get(namespace_key)
            if selector is None or not selects(selector, labels):
                continue
            if namespace_selector is None and o.key[2] != prometheus.key[2]:
                continue
            if namespace_selector is not None and not selects(namespace_selector, namespace_labels):
                continue
            picked = True
        if not picked:
            where = ", ".join(label(p) for p in prometheuses) or "no Prometheus in the platform"
            yield Violation("monitor", label(o), o.source, f"selected by no Prometheus ({where})")


def critical_priority(platform: Platform) -> Iterator[Violation]:
    """On GKE, pods of a system-critical priority class outside kube-system need a
    ResourceQuota scoped to that class in their namespace, or GKE rejects them."""
    if platform.gke is None:
        return
    quotas: dict[str, set[str]] = {}
    for quota in platform.of_kind("ResourceQuota"):
        for expression in (((quota.obj.get("spec") or {}).get("scopeSelector")) or {}).get("matchExpressions") or []:
            if expression.get("scopeName") == "PriorityClass" and expression.get("operator") == "In":
                quotas.setdefault(quota.key[2], set()).update(expression.get("values") or [])
    for o in platform.objects:
        if o.obj.get("kind") not in WORKLOAD_KINDS or o.key[2] == "kube-system":
            continue
        priority = ((((o.obj.get("spec") or {}).get("template")) or {}).get("spec") or {}).get("priorityClassName")
        if priority in CRITICAL_PRIORITY_CLASSES and priority not in quotas.get(o.key[2], set()):
            yield Violation("critical-priority", label(o), o.source, f"priority class {priority} in {o.key[2]} without a ResourceQuota scoped to it")


def _site(site: ImageSite) -> str:
    return f"{site.where}: {'hub' if site.hub else 'image'} {site.reference!r}"


def image_tags(platform: Platform) -> Iterator[Violation]:
    """Every image names a release: a digest, or a tag that is neither absent, floating
    (`latest`, `main`, `master`, ...), nor a bare major or major.minor, unless the pin table
    pins that very tag (a project that numbers its releases major.minor, such as SeaweedFS 4.00:
    the pin's source says so)."""
    pinned = pinned_tags()
    for o, site in platform.image_sites:
        if site.hub:
            continue
        try:
            ref = parse(site.reference)
            why = floating(ref)
        except ValueError as err:
            yield Violation("image-tag", label(o), o.source, f"{_site(site)} is not an image reference ({err}); name one such as registry/path:tag")
            continue
        identity = platform.source_of(site.reference)
        if why and ref.tag and identity is not None and ref.tag in pinned.get(identity.repository, {}) and ref.tag not in FLOATING_TAGS:
            why = None
        if why:
            yield Violation("image-tag", label(o), o.source, f"{_site(site)} {why}; pin a release tag, or a digest (@sha256:...) for a tag that moves")


def image_pins(platform: Platform) -> Iterator[Violation]:
    """The images of pinned upstreams carry the versions the pin table says (facts/versions.py:
    each IMAGE pin's version, each chart's and tree's `deploys`), so the pin tells what runs;
    and a pin's deployed images are all there, or none (its install is off)."""
    wanted = pinned_tags()
    seen: set[str] = set()
    for o, site in platform.image_sites:
        if site.hub:
            continue
        identity = platform.source_of(site.reference)
        if identity is None or identity.repository not in wanted:
            continue
        seen.add(identity.repository)
        tags = wanted[identity.repository]
        if identity.tag not in tags:
            pins = ", ".join(sorted({f"{pin.name} {pin.version} ({tag})" for tag, pin in tags.items()}))
            yield Violation(
                "image-pin",
                label(o),
                o.source,
                f"{_site(site)} is not at the pinned tag {' or '.join(sorted(tags))} (pin table: {pins}); "
                "bump the pin in facts/versions.py with the install, or the install with the pin",
            )
    for pin in PINS:
        repositories = set(pin.image_tags())
        missing = sorted(repositories - seen)
        if missing and repositories & seen:
            yield Violation(
                "image-pin",
                f"pin {pin.name} {pin.version}",
                "facts/versions.py",
                f"deploys {', '.join(missing)}, which nothing in the render runs (renamed or dropped upstream?); "
                "make the pin's `deploys` say what the install runs",
            )


def no_retired_registry(platform: Platform) -> Iterator[Violation]:
    """No image or hub from a retired registry (facts/registries.py): the image rewrite
    (components/images.py) replaces them, so one that is left escaped it."""
    for o, site in platform.image_sites:
        try:
            name = normalized_hub(site.reference) if site.hub else parse(site.reference).name
        except ValueError:
            continue
        retired = retired_registry(name)
        if retired:
            yield Violation(
                "retired-registry",
                label(o),
                o.source,
                f"{_site(site)} is from {retired.prefix}, which stops serving images on {retired.retires}; "
                f"use {retired.successor} (the same images), which the platform's image rewrite does for every "
                "object it installs: this one bypassed it",
            )


def images_mirrored(platform: Platform) -> Iterator[Violation]:
    """With `mlplatform:images.mirror`, every image and hub is pulled through the mirror
    (`localhost/` images excepted: they are loaded into the nodes, never pulled)."""
    mirror = platform.images.mirror
    if mirror is None:
        return
    for o, site in platform.image_sites:
        reference = site.reference
        if platform.images.in_mirror(reference if not site.hub else reference + "/"):
            continue
        try:
            if not site.hub and is_local(parse(reference).host):
                continue
        except ValueError:
            pass
        yield Violation(
            "image-mirror",
            label(o),
            o.source,
            f"{_site(site)} is not pulled through the mirror {mirror}; it should be "
            f"{platform.images.hub(reference) if site.hub else platform.images.image(reference)!r} "
            "(the platform's image rewrite, components/images.py, does this for every object it installs)",
        )


OWNER_GUARD_CONTROLLERS = ("jobset/jobset", "kuberay/kuberay-operator", "trainer/kubeflow-trainer")
"""The installs whose controllers make objects owned by jobs Kueue queues (components/kueue_owners.py)."""
GUARDED_CONTROLLERS = {
    kueue_owners.OWNED_GPU_PODS: (
        OWNER_GUARD_CONTROLLERS,
        "does not let make pods and workloads owned by jobs Kueue queues (components/kueue_owners.py): its jobs' pods would be refused",
    ),
    kueue_owners.ADMISSION_GATE: (
        ("kueue/kueue",),
        "does not let lift Kueue's scheduling gate (components/kueue_owners.py): no pod Kueue queues would ever start",
    ),
}
"""Each guard and the installs whose controllers it lets through by their service accounts' names."""


def owner_guard_controllers(platform: Platform) -> Iterator[Violation]:
    """The owner guard lets the JobSet, KubeRay and Trainer controllers make what it refuses to
    others, and the gate guard lets Kueue's controller lift its gate, by their service accounts'
    names: a controller running as another account (an overlay renamed it) would be refused."""
    for name, (sources, refused) in GUARDED_CONTROLLERS.items():
        guard = next((o for o in platform.of_kind("ValidatingAdmissionPolicy") if o.key[3] == name), None)
        if guard is None:
            continue
        allowed = " ".join(str(v.get("expression", "")) for v in (guard.obj.get("spec") or {}).get("validations") or [])
        for deployment in platform.of_kind("Deployment"):
            if deployment.source not in sources:
                continue
            pod = ((deployment.obj.get("spec") or {}).get("template") or {}).get("spec") or {}
            account = f"system:serviceaccount:{deployment.key[2]}:{pod.get('serviceAccountName') or 'default'}"
            if f"'{account}'" not in allowed:
                yield Violation(
                    "kueue",
                    label(deployment),
                    deployment.source,
                    f"runs as {account}, which ValidatingAdmissionPolicy {name} {refused}; keep the chart's service account name",
                )


def resource_group_problems(groups: list[dict[str, Any]]) -> Iterator[str]:
    """What Kueue v0.19.2's ClusterQueue webhook refuses of the resource groups (pkg/webhooks/
    clusterqueue_webhook.go `validateResourceGroups`: a resource or a flavor in two groups is a
    duplicate; `validateFlavorQuotas`: each flavor names the group's covered resources, in
    order: "must match the name in coveredResources"); the CRD's own rule (a flavor lists as
    many resources as the group covers) the API server evaluates."""
    resources: set[str] = set()
    named: set[str] = set()
    for i, group in enumerate(groups):
        covered = list(group.get("coveredResources") or [])
        for name in covered:
            if name in resources:
                yield f"resourceGroups[{i}]: resource {name} is covered by another group too (Kueue refuses a duplicate)"
            resources.add(name)
        for flavor in group.get("flavors") or []:
            if flavor.get("name") in named:
                yield f"resourceGroups[{i}]: flavor {flavor.get('name')} is in another group too (Kueue refuses a duplicate)"
            named.add(flavor.get("name"))
            listed = [r.get("name") for r in flavor.get("resources") or []]
            if listed != covered:
                yield f"resourceGroups[{i}]: flavor {flavor.get('name')} lists {listed}, not the group's coveredResources {covered} in order"


def kueue_rules(platform: Platform) -> Iterator[Violation]:
    """Objects Kueue manages obey Kueue v0.19.2's rules: every queue and flavor named exists,
    and a managed RayCluster does not autoscale (its webhook rejects that unless it is an
    elastic job)."""
    flavors = {o.key[3] for o in platform.of_kind("ResourceFlavor")}
    cluster_queues = {o.key[3] for o in platform.of_kind("ClusterQueue")}
    checks = {o.key[3] for o in platform.of_kind("AdmissionCheck")}
    local_queues: dict[str, set[str]] = {}
    for queue in platform.of_kind("LocalQueue"):
        local_queues.setdefault(queue.key[2], set()).add(queue.key[3])
        target = (queue.obj.get("spec") or {}).get("clusterQueue")
        if target not in cluster_queues:
            yield Violation("kueue", label(queue), queue.source, f"ClusterQueue {target} does not exist")
    for queue in platform.of_kind("ClusterQueue"):
        spec = queue.obj.get("spec") or {}
        for group in spec.get("resourceGroups") or []:
            for flavor in group.get("flavors") or []:
                if flavor.get("name") not in flavors:
                    yield Violation("kueue", label(queue), queue.source, f"ResourceFlavor {flavor.get('name')} does not exist")
        for problem in resource_group_problems(spec.get("resourceGroups") or []):
            yield Violation("kueue", label(queue), queue.source, problem)
        strategy = (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []
        for check in list(spec.get("admissionChecks") or []) + [c.get("name") for c in strategy]:
            if check not in checks:
                yield Violation("kueue", label(queue), queue.source, f"AdmissionCheck {check} does not exist")
    yield from owner_guard_controllers(platform)
    for cluster in platform.of_kind("RayCluster"):
        meta = cluster.obj.get("metadata") or {}
        queue_name = (meta.get("labels") or {}).get(KUEUE_QUEUE_LABEL)
        managed = queue_name is not None or LOCAL_QUEUE in local_queues.get(cluster.key[2], set())
        autoscaling = (cluster.obj.get("spec") or {}).get("enableInTreeAutoscaling")
        elastic = (meta.get("annotations") or {}).get(KUEUE_ELASTIC_JOB_ANNOTATION) == "true"
        if managed and autoscaling and not elastic:
            yield Violation("kueue", label(cluster), cluster.source, "Kueue manages this RayCluster, and a Kueue-managed RayCluster can use autoscaling only as an elastic job")


def _secret_values(obj: dict[str, Any]) -> dict[str, Any]:
    return {**(obj.get("data") or {}), **(obj.get("stringData") or {})}


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def _pod_specs(node: Any) -> Iterator[dict[str, Any]]:
    """Every pod spec in an object (anything with a `containers` list: workloads and custom resources)."""
    if isinstance(node, dict):
        if isinstance(node.get("containers"), list):
            yield node
        for value in node.values():
            yield from _pod_specs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _pod_specs(value)


def _pod_templates(node: Any) -> Iterator[dict[str, Any]]:
    """Every pod template in an object (`{metadata, spec}` whose spec has a `containers` list)."""
    if isinstance(node, dict):
        if isinstance((node.get("spec") or {}).get("containers") if isinstance(node.get("spec"), dict) else None, list):
            yield node
        for value in node.values():
            yield from _pod_templates(value)
    elif isinstance(node, list):
        for value in node:
            yield from _pod_templates(value)


def _fabric_problems(template: dict[str, Any], networks: dict[str, Rendered], param_sets: set[str]) -> Iterator[str]:
    """What keeps a pod template's GPUDirect attachments from working (fabric_attached)."""
    annotations = ((template.get("metadata") or {}).get("annotations")) or {}
    spec = template["spec"]
    containers = [*(spec.get("initContainers") or []), *spec["containers"]]
    names = {c.get("name") for c in containers}
    for key in annotations:
        if key.startswith(fabric_pods.DEVICE_ANNOTATION_PREFIX) and key.removeprefix(fabric_pods.DEVICE_ANNOTATION_PREFIX) not in names:
            yield f"{key} names container {key.removeprefix(fabric_pods.DEVICE_ANNOTATION_PREFIX)!r}, which the pod does not have: the NRI injector gives its devices to nothing"
    text = annotations.get(fabric_pods.INTERFACES_ANNOTATION)
    if text is None:
        return
    try:
        interfaces = json.loads(text)
        attached = {i["interfaceName"]: i["network"] for i in interfaces}
    except (ValueError, TypeError, KeyError):
        yield f"{fabric_pods.INTERFACES_ANNOTATION} is not a JSON list of {{interfaceName, network}}: {text[:80]!r}"
        return
    for interface, network in attached.items():
        if network == fabric_pods.DEFAULT_NETWORK:
            continue
        found = networks.get(network)
        if found is None:
            yield f"interface {interface} attaches Network {network!r}, which nothing in the platform creates: the pod is refused"
            continue
        ref = ((found.obj.get("spec") or {}).get("parametersRef")) or {}
        if ref.get("kind") == "GKENetworkParamSet" and ref.get("name") not in param_sets:
            yield f"Network {network!r} points at GKENetworkParamSet {ref.get('name')!r}, which nothing in the platform creates"
    for container in containers:
        for variable in container.get("env") or []:
            if variable.get("name") in ("NCCL_FASTRAK_IFNAME", "NCCL_FASTRAK_CTRL_DEV", "NCCL_SOCKET_IFNAME") and isinstance(variable.get("value"), str):
                missing = [i for i in variable["value"].split(",") if i and i not in attached]
                if missing:
                    yield f"container {container.get('name')}: {variable['name']} names {', '.join(missing)}, not an interface of the pod's {fabric_pods.INTERFACES_ANNOTATION}"


def fabric_attached(platform: Platform) -> Iterator[Violation]:
    """Every pod template that attaches GPUDirect NICs (GKE multi-networking's interfaces
    annotation) names Networks the platform creates, whose parameter sets it creates too; the
    NCCL interfaces its containers name are the pod's; the NRI device annotation names one of
    its containers (a runtime variant built for another pool, or a renamed NIC, fails here)."""
    networks = {o.key[3]: o for o in platform.of_kind("Network") if o.key[0] == "networking.gke.io"}
    param_sets = {o.key[3] for o in platform.of_kind("GKENetworkParamSet") if o.key[0] == "networking.gke.io"}
    for o in platform.objects:
        for template in _pod_templates(o.obj):
            for problem in _fabric_problems(template, networks, param_sets):
                yield Violation("fabric-attached", label(o), o.source, problem)


def no_upstream_secrets(platform: Platform) -> Iterator[Violation]:
    """No credential the upstream release publishes survives: every credential-like key
    (password, secret, token, cookie, key) of an upstream Secret holds a Pulumi secret, no
    password is empty, no database user is root, no container allows an empty MySQL password,
    and no well-known example credential (WELL_KNOWN_CREDENTIALS) is anywhere in the platform."""
    for o in platform.of_kind("Secret"):
        for key, value in _secret_values(o.obj).items():
            lowered = key.lower()
            if "password" in lowered and value in ("", None):
                yield Violation("upstream-secret", label(o), o.source, f"{key} is empty; a password must be a generated Pulumi secret")
            elif lowered in DATABASE_USER_KEYS and value in SUPERUSERS:
                yield Violation("upstream-secret", label(o), o.source, f"{key} is the database superuser {value!r}; give the platform a user of its own")
            elif o.upstream and value and value not in MASKED and any(word in lowered for word in CREDENTIAL_WORDS):
                yield Violation("upstream-secret", label(o), o.source, f"{key} is the value the upstream release publishes; replace it with a Pulumi secret")
    for o in platform.objects:
        # One pass in C over the whole object first: most objects (CRDs are megabytes) hold
        # neither a switch's name nor a credential, and JSON writes both as they are.
        whole = json.dumps(o.obj, default=str, ensure_ascii=False)
        for template in _pod_specs(o.obj) if any(switch in whole for switch in EMPTY_PASSWORD_SWITCHES) else ():
            for container in [*(template.get("containers") or []), *(template.get("initContainers") or [])]:
                for var in container.get("env") or []:
                    if var.get("name") in EMPTY_PASSWORD_SWITCHES and str(var.get("value", "")).lower() not in ("", "false", "no", "0"):
                        yield Violation("upstream-secret", label(o), o.source, f"container {container.get('name')}: {var['name']} lets MySQL run without a root password; set MYSQL_ROOT_PASSWORD from a Pulumi secret")
        if not any(credential in whole for credential in WELL_KNOWN_CREDENTIALS):
            continue
        for text in _strings(o.obj):
            for credential, what in WELL_KNOWN_CREDENTIALS.items():
                if credential in text:
                    yield Violation("upstream-secret", label(o), o.source, f"holds {credential!r}, {what}; replace it with a generated Pulumi secret")


def data_kept(platform: Platform) -> Iterator[Violation]:
    """Every PersistentVolumeClaim the platform installs (a database's, an object store's) is
    protected and retained: a config mistake or a refactor stops `pulumi up` at it instead of
    deleting the volume and its data (components/base.py `keep`)."""
    for o in platform.of_kind("PersistentVolumeClaim"):
        if not o.kept:
            yield Violation("data-kept", label(o), o.source, "holds data but Pulumi may delete it; give it components.base.keep() (protect, retainOnDelete)")


def config_refs(pod_spec: dict[str, Any]) -> set[tuple[str, str]]:
    """(kind, name) of every ConfigMap and Secret a pod reads: volumes (projected too),
    envFrom, and env valueFrom of its containers and init containers."""
    found: set[tuple[str, str]] = set()
    for volume in pod_spec.get("volumes") or []:
        sources = [volume, *((volume.get("projected") or {}).get("sources") or [])]
        for source in sources:
            if "configMap" in source:
                found.add(("ConfigMap", source["configMap"].get("name", "")))
            if "secret" in source:
                found.add(("Secret", source["secret"].get("secretName") or source["secret"].get("name", "")))
    for container in [*(pod_spec.get("containers") or []), *(pod_spec.get("initContainers") or [])]:
        for source in container.get("envFrom") or []:
            if "configMapRef" in source:
                found.add(("ConfigMap", source["configMapRef"].get("name", "")))
            if "secretRef" in source:
                found.add(("Secret", source["secretRef"].get("name", "")))
        for var in container.get("env") or []:
            value_from = var.get("valueFrom") or {}
            if "configMapKeyRef" in value_from:
                found.add(("ConfigMap", value_from["configMapKeyRef"].get("name", "")))
            if "secretKeyRef" in value_from:
                found.add(("Secret", value_from["secretKeyRef"].get("name", "")))
    return found


def written_by_program(o: Rendered) -> bool:
    """Our own object, or an upstream one our transforms changed."""
    return not o.upstream or (o.original is not None and o.original != o.obj)


def config_rolls(platform: Platform) -> Iterator[Violation]:
    """Configuration the program writes or changes reaches the processes that read it: a
    workload reading such a ConfigMap or Secret at start (environment variables, a subPath
    mount, a process that loads its config once) carries components.base CONFIG_DIGEST_ANNOTATION
    on its pod template, so a change rolls its pods; exceptions are processes known to reload
    (facts/config_reload.py)."""
    configs = {(o.key[1], o.key[2], o.key[3]): o for o in platform.of_kind("ConfigMap", "Secret")}
    mirrored = image_transform(platform.images)
    for o in platform.of_kind("Deployment", "StatefulSet", "DaemonSet"):
        template = (o.obj.get("spec") or {}).get("template") or {}
        if CONFIG_DIGEST_ANNOTATION in ((template.get("metadata") or {}).get("annotations") or {}):
            continue
        # The stack's image mirror moves this workload's own images too: its template changes
        # whenever the mirror does, and with it the image references it reads from a config.
        follows_mirror = o.original is not None and mirrored(o.original) is not None
        for kind, name in sorted(config_refs(template.get("spec") or {})):
            config = configs.get((kind, o.key[2], name))
            if config is None or not written_by_program(config) or reloads(o.key[3], kind, name):
                continue
            if follows_mirror and config.original is not None and mirrored(config.original) == config.obj:
                continue
            what = "writes" if not config.upstream else "changes"
            yield Violation(
                "config-rolls", label(o), o.source,
                f"reads {kind} {name}, which the program {what}, but nothing rolls its pods when it changes; "
                f"give its pod template a digest of what the program writes (components.base.with_config_digest)",
            )


def _absolute(value: Any) -> str | None:
    """`value` if it is an absolute file-system path (no URL, pattern or space), else None."""
    return value if isinstance(value, str) and ABSOLUTE_PATH.match(value) else None


def _flag_paths(words: list[Any]) -> Iterator[tuple[str, str]]:
    """(path, how it is named) of every absolute path among a container's arguments:
    `--flag=/path`, `--flag /path` and positional paths."""
    for word in (str(w) for w in words):
        value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if path := _absolute(value):
            yield path, f"argument {word!r}"


def _config_paths(text: str, file: str) -> Iterator[tuple[str, str]]:
    """(path, key) of every file a configuration file names, by its format (file's extension):
    `key = "/path"` lines of oauth2-proxy's TOML and Grafana's INI, and keys of YAML or JSON
    whose name says they hold a file (FILE_KEY: tlsCert, caFile, cert_file, ...)."""
    if file.endswith((".cfg", ".ini", ".conf", ".toml")):
        for match in CONFIG_LINE.finditer(text):
            key, value = match.group(1), match.group(2).strip().strip('"')
            if FILE_KEY.search(key) and (path := _absolute(value)):
                yield path, key
        return
    if not file.endswith((".yaml", ".yml", ".json")):
        return
    try:
        tree = yaml.safe_load(text)
    except yaml.YAMLError:
        return
    stack: list[tuple[str, Any]] = [("", tree)]
    while stack:
        key, node = stack.pop()
        if isinstance(node, dict):
            stack.extend((str(k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((key, v) for v in node)
        elif FILE_KEY.search(key) and key not in POD_SPEC_KEYS and (path := _absolute(node)):
            yield path, key


def _mount_provides(path: str, mount: dict[str, Any], volume: dict[str, Any] | None, data: dict[str, Any] | None) -> bool:
    """Whether `mount` (of `volume`; `data`: the keys of the ConfigMap or Secret it holds, if
    the render has it) puts a file or directory at `path`."""
    at = str(mount.get("mountPath", "")).rstrip("/")
    if at.startswith(path.rstrip("/") + "/"):
        return True  # a directory that holds a mount exists
    if path != at and not path.startswith(at + "/"):
        return False
    if data is None or volume is None:
        return True  # not a ConfigMap or Secret of the render: its content is not ours to see
    # A ConfigMap or Secret: its keys (or its items' paths, of keys it has) are the files.
    source = volume.get("configMap") or volume.get("secret") or {}
    items = source.get("items")
    files = [item.get("path") for item in items if item.get("key") in data] if items else list(data)
    inside = mount.get("subPath") or (path[len(at) + 1 :] if path != at else "")
    if not inside:
        return True  # the directory itself
    if mount.get("subPath") and path != at:
        inside = f"{inside}/{path[len(at) + 1 :]}"
    return any(inside == f or inside.startswith(f"{f}/") for f in files)


def files_provided(platform: Platform) -> Iterator[Violation]:
    """Every file a process is told to read is there: a path in a container's arguments or in a
    configuration file mounted into it (oauth2-proxy's, Dex's, Grafana's, Argo's, Pipelines')
    is provided by one of its volume mounts (a ConfigMap or Secret mounted as a directory must
    hold the key) or by its image (facts/image_files.py). A missing one stops the process at
    start (oauth2-proxy exits when authenticated_emails_file cannot be opened)."""
    configs = {(o.key[1], o.key[2], o.key[3]): o.obj for o in platform.of_kind("ConfigMap", "Secret")}
    for o in platform.of_kind(*WORKLOAD_KINDS):
        spec = ((o.obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        volumes = {v.get("name"): v for v in spec.get("volumes") or []}

        def data_of(volume: dict[str, Any] | None, namespace: str = o.key[2]) -> dict[str, Any] | None:
            if volume is None or not ("configMap" in volume or "secret" in volume):
                return None
            kind, ref = ("ConfigMap", volume["configMap"]) if "configMap" in volume else ("Secret", volume["secret"])
            obj = configs.get((kind, namespace, ref.get("name") or ref.get("secretName") or ""))
            return None if obj is None else {**(obj.get("data") or {}), **(obj.get("stringData") or {}), **(obj.get("binaryData") or {})}

        for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
            mounts = container.get("volumeMounts") or []
            named = list(_flag_paths([*(container.get("command") or [])[1:], *(container.get("args") or [])]))
            program = next((str(w) for w in [*(container.get("command") or []), *(container.get("args") or [])] if str(w).startswith("/")), "")
            unread, _ = ENV_NOT_READ.get(program, (frozenset(), ""))
            named += [
                (path, f"env {var['name']}")
                for var in container.get("env") or []
                if FILE_ENV.search(str(var.get("name", ""))) and var.get("name") not in unread and (path := _absolute(var.get("value")))
            ]
            for mount in mounts:
                volume = volumes.get(mount.get("name"))
                data = data_of(volume)
                for key, text in (data or {}).items():
                    if mount.get("subPath") not in (None, key) or not isinstance(text, str):
                        continue
                    file = f"{str(mount.get('mountPath', '')).rstrip('/')}" + ("" if mount.get("subPath") else f"/{key}")
                    named += [(path, f"{key} in {file}") for path, key in _config_paths(text, file)]
            for path, how in named:
                provided = any(_mount_provides(path, m, volumes.get(m.get("name")), data_of(volumes.get(m.get("name")))) for m in mounts)
                if provided or image_provides(str(container.get("image", "")), path):
                    continue
                yield Violation(
                    "files-provided", label(o), o.source,
                    f"container {container.get('name')}: {how} names {path}, which no volume mount or image provides; "
                    "mount the ConfigMap key or volume that holds it",
                )


def _amount(value: Any) -> Decimal:
    return quantity.parse(str(value))


def queue_limits(platform: Platform) -> dict[str, dict[str, Decimal]]:
    """ClusterQueue -> resource -> the most it admits at once, over its flavors: nominal quota
    plus what it may borrow (tooling/admission.py queue_reach, per flavor)."""
    reach = admission.queue_reach({o.key[3]: o.obj.get("spec") or {} for o in platform.of_kind("ClusterQueue")})
    limits: dict[str, dict[str, Decimal]] = {}
    for name, per_flavor in reach.items():
        total: dict[str, Decimal] = {}
        for (_, resource), value in per_flavor.items():
            total[resource] = total.get(resource, Decimal(0)) + value
        limits[name] = total
    return limits


def _requests(resources: Any) -> dict[str, Decimal]:
    return {k: _amount(v) for k, v in ((resources or {}).get("requests") or {}).items() if k in ("cpu", "memory")}


def gpu_pods_queued(platform: Platform, namespace: str) -> bool:
    """Whether Kueue admits every GPU pod of `namespace`, as the render configures it: its
    manager configuration runs the `pod` integration there (frameworks, managedJobsNamespaceSelector)
    and its pod webhook is called there and may not be skipped (failurePolicy Fail); which pods
    it is called for (the GPU matchCondition, components/kueue_pods.py) the tests evaluate."""
    config_map = next((o.obj for o in platform.of_kind("ConfigMap") if o.key[2:] == (KUEUE_NAMESPACE, KUEUE_CONFIG_MAP)), None)
    if config_map is None:
        return False
    config = yaml.safe_load((config_map.get("data") or {}).get(KUEUE_CONFIG_KEY) or "") or {}
    labels = platform.namespaces.get(namespace, {NAMESPACE_NAME_LABEL: namespace})
    managed = config.get("managedJobsNamespaceSelector")
    if POD_FRAMEWORK not in ((config.get("integrations") or {}).get("frameworks") or []) or (managed is not None and not selects(managed, labels)):
        return False
    webhook = next(
        (
            w
            for o in platform.of_kind("MutatingWebhookConfiguration")
            for w in o.obj.get("webhooks") or []
            if w.get("name") == POD_WEBHOOKS[0]
        ),
        None,
    )
    return webhook is not None and webhook.get("failurePolicy") == "Fail" and selects(webhook.get("namespaceSelector") or {}, labels)


def argo_executor(platform: Platform) -> dict[str, Any] | None:
    """The resources Argo gives its executor containers, as the render configures them
    (components/pipelines.py); None without Pipelines, {} when unset."""
    config = next((o.obj for o in platform.of_kind("ConfigMap") if o.key[3] == WORKFLOW_CONTROLLER_CONFIG), None)
    if config is None:
        return None
    return (yaml.safe_load((config.get("data") or {}).get(EXECUTOR_KEY) or "") or {}).get("resources") or {}


def pipeline_step(platform: Platform, namespace: str, executor: dict[str, Any]) -> dict[str, Decimal]:
    """CPU and memory of one CPU-only pipeline step in `namespace` with its driver pod (facts/
    pod_overhead.py pipeline_step_pods), the namespace's LimitRanges applied as the API server does."""
    limit_ranges = [o.obj for o in platform.of_kind("LimitRange") if o.key[2] == namespace]
    total: dict[str, Decimal] = {}
    for spec in pipeline_step_pods(executor).values():
        for name, value in pod_requests(as_admitted(spec, limit_ranges)).items():
            total[name] = total.get(name, Decimal(0)) + value
    return total


def quota_admits_queue(platform: Platform) -> Iterator[Violation]:
    """A team namespace's ResourceQuota (its Profile's resourceQuotaSpec) admits everything its
    ClusterQueue may admit at once (nominal quota and what it may borrow) plus what Kueue does
    not count: the mesh sidecar the injector adds to each queued Ray pod, one notebook at
    the form's default with its sidecar (CPU-only notebooks are not queued; GPU ones wait at
    Kueue's gate already created) and, with Pipelines, one CPU-only pipeline step with its driver
    pod and Argo's executor containers at the render's size. A job Kueue admits whose pods the ResourceQuota refuses
    never becomes ready and is requeued for ever.

    GPUs: where Kueue queues the namespace's GPU pods (gpu_pods_queued) the ResourceQuota must
    have no GPU line: pods waiting at Kueue's gate count against it from their creation, and
    would hold room Kueue gives to the next admitted workload. Elsewhere its GPU line must admit
    what the queue may admit."""
    injector = next((o.obj for o in platform.of_kind("ConfigMap") if o.key[2:] == ("istio-system", "istio-sidecar-injector")), None)
    values = json.loads((injector or {}).get("data", {}).get("values") or "{}")
    sidecar = _requests(((values.get("global") or {}).get("proxy") or {}).get("resources"))
    form: dict[str, Any] = next(
        (yaml.safe_load(o.obj["data"][key]) for o in platform.of_kind("ConfigMap") for key in (o.obj.get("data") or {}) if key == "spawner_ui_config.yaml"),
        {},
    )
    defaults = (form or {}).get("spawnerFormDefaults") or {}
    notebook = {name: _amount(str(defaults[name]["value"])) for name in ("cpu", "memory") if name in defaults}
    executor = argo_executor(platform)
    limits = queue_limits(platform)
    for o in platform.of_kind("Profile"):
        team = o.key[3]
        queue = next(
            (q.key[3] for q in platform.of_kind("ClusterQueue") if selects((q.obj.get("spec") or {}).get("namespaceSelector") or {"matchLabels": {"x": "none"}}, platform.namespaces.get(team, {NAMESPACE_NAME_LABEL: team}))),
            None,
        )
        if queue is None:
            continue
        pods_with_sidecars = 1  # the notebook
        for ray in platform.of_kind("RayCluster"):
            if ray.key[2] != team:
                continue
            spec = ray.obj.get("spec") or {}
            templates = [((spec.get("headGroupSpec") or {}).get("template") or {}, 1)]
            templates += [((g.get("template") or {}), int(g.get("maxReplicas", g.get("replicas", 0)))) for g in spec.get("workerGroupSpecs") or []]
            for template, count in templates:
                meta = template.get("metadata") or {}
                if str({**(meta.get("labels") or {}), **(meta.get("annotations") or {})}.get("sidecar.istio.io/inject", "")).lower() != "false":
                    pods_with_sidecars += count
        hard = (((o.obj.get("spec") or {}).get("resourceQuotaSpec") or {}).get("hard")) or {}
        admits = limits[queue]
        gpus_queued = gpu_pods_queued(platform, team)
        for resource in ("cpu", "memory", GPU_RESOURCE):
            have_text = hard.get(resource, hard.get(f"requests.{resource}"))
            if resource == GPU_RESOURCE and gpus_queued:
                if have_text is not None:
                    yield Violation(
                        "quota-admits-queue", label(o), o.source,
                        f"its namespace's ResourceQuota limits {resource} to {have_text}, but Kueue admits every GPU pod there "
                        "and a pod waiting at its gate counts against the ResourceQuota from its creation: waiting pods would "
                        "hold room Kueue gives to the next admitted workload, whose pods are then refused; leave GPUs to the "
                        "queue (components/profiles/namespace.py profile)",
                    )
                continue
            if resource == GPU_RESOURCE and have_text is None and admits.get(resource, Decimal(0)) > 0:
                yield Violation(
                    "quota-admits-queue", label(o), o.source,
                    f"neither its namespace's ResourceQuota nor Kueue limits its GPU pods: Kueue's pod integration does not "
                    f"run there (frameworks, managedJobsNamespaceSelector, webhook mpod.kb.io), so a notebook or pipeline "
                    f"step takes GPUs ClusterQueue {queue} counts as free; queue GPU pods (components/kueue_pods.py) or "
                    f"give the Profile requests.{GPU_RESOURCE}",
                )
                continue
            step = pipeline_step(platform, team, executor) if executor is not None else {}
            unqueued = pods_with_sidecars * sidecar.get(resource, Decimal(0)) + notebook.get(resource, Decimal(0)) + step.get(resource, Decimal(0))
            need = admits.get(resource, Decimal(0)) + unqueued
            have = _amount(have_text) if have_text is not None else None
            if have is not None and have < need:
                yield Violation(
                    "quota-admits-queue", label(o), o.source,
                    f"its namespace's ResourceQuota admits {resource} {have_text}, but ClusterQueue {queue} may admit "
                    f"{quantity.text(admits.get(resource, Decimal(0)))} (nominal and borrowed) and Kueue does not count "
                    f"{quantity.text(unqueued)} (a notebook at the form's default, a CPU pipeline step with its driver, mesh sidecars): a job admitted then has "
                    f"its pods refused; give the Profile at least {quantity.text(need)} (components/profiles/namespace.py profile)",
                )


def admissible(platform: Platform) -> Iterator[Violation]:
    """Every workload the platform offers each team can be admitted by Kueue v0.19.2's own rules,
    built as the controllers build it (tooling/admission.py), and none that asks for no GPUs can be
    given a GPU pool's flavor; a team without quota of what a workload asks for is listed, not refused."""
    queues = {o.key[3]: o for o in platform.of_kind("ClusterQueue")}
    for verdict in platform.verdicts:
        queue = queues[verdict.queue]
        if verdict.status is admission.Status.REFUSED:
            yield Violation("admissible", label(queue), queue.source, f"{verdict.workload} of team {verdict.team} is never admitted: {verdict.detail}")
        elif verdict.status is admission.Status.ON_GPU_NODES:
            yield Violation("admissible", label(queue), queue.source, f"{verdict.workload} of team {verdict.team} can be admitted onto GPU nodes: {verdict.detail}")


def deployed(platform: Platform) -> list[support.Deployed]:
    """The upstream versions the render deploys (facts/support.py), from its images (each as
    its upstream source, wherever the stack's mirror pulls it from) and its installs."""
    references = []
    for o, site in platform.image_sites:
        if not site.hub:
            source = platform.source_of(site.reference)
            references.append((o.source, str(source) if source else site.reference))
    return support.deployed(references, platform.render.installs)


def support_ended(platform: Platform) -> Iterator[Violation]:
    """Every component, and kind's Kubernetes, inside its support window on the check date."""
    for obj, where, message in support.ended(deployed(platform), platform.config, platform.on):
        yield Violation("support", obj, where, message)


def kubernetes_range(platform: Platform) -> Iterator[Violation]:
    """The cluster's Kubernetes minor inside every deployed component's supported range."""
    for obj, where, message in support.out_of_range(deployed(platform), platform.config, platform.on):
        yield Violation("kubernetes-range", obj, where, message)


DCGM_EXPORTER_TAG = re.compile(r"^\d+(?:\.\d+)*-(?P<major>\d+)\.(?P<minor>\d+)\.\d+")
"""`<DCGM>-<exporter>[-<variant>]`, the dcgm-exporter image's tags (4.5.3-4.8.2-distroless)."""


def dcgm_metric_names(platform: Platform) -> Iterator[Violation]:
    """The DCGM exporter names its metrics as the platform's queries read them: none newer
    than facts/versions.py DCGM_METRIC_NAMES (4.9 renames them and changes their units)."""
    (repository,) = DCGM_EXPORTER.image_tags()
    for o, site in platform.image_sites:
        identity = platform.source_of(site.reference)
        found = DCGM_EXPORTER_TAG.match(identity.tag or "") if identity and identity.repository == repository else None
        if found and (int(found["major"]), int(found["minor"])) > DCGM_METRIC_NAMES:
            yield Violation(
                "dcgm-metric-names", label(o), o.source,
                f"{_site(site)} runs dcgm-exporter {found['major']}.{found['minor']}, which renames the default fields "
                "to DCGM 4.7's names and changes their units (utilisation a 0-1 ratio, not percent) from 4.9.0; the "
                "platform's alerts (components/alerts.py), dashboards (components/dashboards/), GPU-hours "
                "(components/gpu_hours.py) and idle reclaim (components/idle_reclaim_job.py) read the "
                f"{DCGM_METRIC_NAMES[0]}.{DCGM_METRIC_NAMES[1]} names and would see nothing or wrong values: stay on "
                f"{DCGM_METRIC_NAMES[0]}.{DCGM_METRIC_NAMES[1]}.x until they are migrated (facts/versions.py DCGM_METRIC_NAMES)",
            )


def advisories_fixed(platform: Platform) -> Iterator[Violation]:
    """No upstream in the request path below the fix of an advisory known on the check date."""
    for obj, where, message in advisories.open_advisories(deployed(platform), platform.on):
        yield Violation("advisory", obj, where, message)


RULES: tuple[Rule, ...] = (
    Rule("schema", "every object valid against its schema", schema_valid),
    Rule("null", "no null where an object's schema wants a value", no_nulls),
    Rule("duplicate", "no object from two sources", no_duplicates),
    Rule("order", "CRDs and namespaces come from installs their users wait for", created_before),
    Rule("control-plane-reach", "every admission webhook, conversion webhook and aggregated API reachable from the API server", control_plane_reachable),
    Rule("load-balancer", "GKE load balancer and health checks reach NEG backends", load_balancer_admitted),
    Rule("monitor", "every monitor and rule selected by a Prometheus", monitors_selected),
    Rule("critical-priority", "critical-priority pods only where GKE admits them", critical_priority),
    Rule("image-tag", "every image on a release tag or digest, never a floating one", image_tags),
    Rule("image-pin", "pinned upstreams run the images their pins say", image_pins),
    Rule("retired-registry", "no image or hub from a retired registry", no_retired_registry),
    Rule("image-mirror", "with an image mirror, every image pulled through it", images_mirrored),
    Rule("kueue", "objects Kueue manages obey its rules", kueue_rules),
    Rule("fabric-attached", "pods attach only Networks the platform creates, and their NCCL interfaces are the pod's", fabric_attached),
    Rule("upstream-secret", "no well-known, empty or superuser credential from an upstream release", no_upstream_secrets),
    Rule("data-kept", "every volume claim protected and retained", data_kept),
    Rule("files-provided", "every file a process is told to read is mounted or in its image", files_provided),
    Rule("quota-admits-queue", "every team namespace's quota admits what its queue may admit and what Kueue does not count", quota_admits_queue),
    Rule("admissible", "every workload the platform offers each team is admissible by Kueue's own rules", admissible),
    Rule("config-rolls", "configuration the program writes rolls the pods that read it at start", config_rolls),
    Rule("support", "every component and kind's Kubernetes inside its support window on the check date", support_ended),
    Rule("kubernetes-range", "the cluster's Kubernetes minor inside every component's supported range", kubernetes_range),
    Rule("advisory", "no request-path component below the fix of an advisory known on the check date", advisories_fixed),
    Rule("dcgm-metric-names", "the DCGM exporter names its metrics as the platform's queries read them", dcgm_metric_names),
)


def check(render: FullRender, rules: Iterable[Rule] = RULES, on: date | None = None, seconds: dict[str, float] | None = None) -> list[Violation]:
    """Every violation of `rules`; the support rules judge the day `on` (default today).
    `seconds`, when given, receives each rule's time (the benchmark prints where it goes)."""
    return run(render, rules, on, seconds)[0]


def run(
    render: FullRender, rules: Iterable[Rule] = RULES, on: date | None = None, seconds: dict[str, float] | None = None
) -> tuple[list[Violation], Platform]:
    """`check`, and the Platform the rules read (its admission verdicts, for the report)."""
    found: list[Violation] = []
    with few_collections():  # the rules build many small objects beside a whole render
        platform = Platform(render, on)
        for rule in rules:
            start = time.perf_counter()
            found += rule.check(platform)
            if seconds is not None:
                seconds[rule.name] = time.perf_counter() - start
    return found, platform


def notes(platform: Platform) -> list[str]:
    """What `check` says on the platform's day without failing (tooling/advisories.py notes)."""
    return advisories.notes(deployed(platform), platform.on)


def pinned_tags() -> dict[str, dict[str, Pin]]:
    """Repository -> {tag: pin} of every image the pin table pins: IMAGE pins at their
    version, charts and trees at the tags of their `deploys`."""
    found: dict[str, dict[str, Pin]] = {}
    for pin in PINS:
        if pin.kind is PinKind.IMAGE:
            found.setdefault(parse(pin.location).repository, {})[pin.version] = pin
        for repository, tag in pin.image_tags().items():
            found.setdefault(repository, {})[tag] = pin
    return found

