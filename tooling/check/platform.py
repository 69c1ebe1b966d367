"""What a rule of `check` reads and is: the full render with the lookups the rules share
(Platform), a violation, and the declaration each rule carries on its function:

    @check_rule("data-kept", "every volume claim protected and retained")
    def data_kept(platform: Platform) -> Iterator[Violation]: ...

The modules of tooling/check/ hold the rules by area; tooling/check/__init__.py gathers them."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import date
from functools import cached_property
from typing import Any, TypeVar

from facts.image_refs import ImagePolicy, ImageRef, parse
from facts.labels import NAMESPACE_NAME_LABEL
from facts.resource_types import GCP_FIREWALL
from infra.gke import CONTROL_PLANE_TARGET_PORTS
from plumbing.images import ImageSite, image_sites
from stackmodel.schema import GkeClusterConfig
from tooling import admission
from tooling.fullrender import FullRender, Rendered

BUILTIN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
WORKLOAD_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"})
FIREWALL = GCP_FIREWALL
# GKE's own firewall rule lets a private cluster's control plane reach nodes on these ports
# (cloud.google.com/kubernetes-engine/docs/how-to/private-clusters, "Adding firewall rules
# for specific use cases"); every other webhook port needs a rule of ours.
GKE_CONTROL_PLANE_PORTS = frozenset({443, 10250})


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
        """Every image and hub every object names (plumbing/images.py, the one inventory)."""
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


def mappings_where(node: Any, wanted: Callable[[dict[str, Any]], bool]) -> Iterator[dict[str, Any]]:
    """Every mapping inside `node` (itself too), depth first, that `wanted` accepts."""
    if isinstance(node, dict):
        if wanted(node):
            yield node
        for value in node.values():
            yield from mappings_where(value, wanted)
    elif isinstance(node, list):
        for value in node:
            yield from mappings_where(value, wanted)


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


RuleFn = Callable[[Platform], Iterable[Violation]]


@dataclass(frozen=True)
class Rule:
    """A rule of `check`: facts only the full render shows (docs/development.md, "Where a rule goes")."""

    name: str
    description: str
    check: RuleFn


DECLARED = "check_rule"
"""The attribute a rule's function carries its declaration in (check_rule)."""
F = TypeVar("F", bound=RuleFn)


def check_rule(name: str, description: str) -> Callable[[F], F]:
    """Declare a rule of `check`: its ID and what it holds (one line)."""

    def declare(check: F) -> F:
        setattr(check, DECLARED, Rule(name, description, check))
        return check

    return declare


def image_site_label(site: ImageSite) -> str:
    return f"{site.where}: {'hub' if site.hub else 'image'} {site.reference!r}"
