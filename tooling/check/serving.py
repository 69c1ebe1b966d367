"""Serving: a GPU serving runtime lands on a pool that has the GPUs it asks for, every route
of the Kubeflow gateway into a team namespace is one the role checks judge, and every issuer the
gateway's identity rule leaves out is confined by a DENY of its own (docs/serving.md).

The other needs of serving are judged by the general rules: KServe's and KEDA's webhooks and
KEDA's metrics API reachable from the control plane (control-plane-reach, with the firewall's
ports), the runtimes' and injected images pinned (image-tag, image-pin: a ClusterServingRuntime's
containers and inferenceservice-config's images are image sites, plumbing/images.py), and a GPU
InferenceService queued like a GPU notebook (admissible, tooling/admission.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from components.access import GATEWAY_SELECTOR, KUBEFLOW_GATEWAY, TEAM_ROUTES
from components.istio import GATEWAY_NAMESPACE
from facts.labels import PROFILE_NAMESPACE_LABEL
from facts.node_labels import GPU_RESOURCE, pool_selector
from stackmodel import quantity
from tooling.check.platform import Platform, Violation, check_rule, label
from tooling.fullrender import Rendered

RUNTIME_KINDS = ("ClusterServingRuntime", "ServingRuntime")


def runtime_gpus(spec: dict[str, Any]) -> int:
    """The GPUs one replica of the runtime asks for: its containers' `nvidia.com/gpu`, the limit
    where given (the device plugin's resource is counted by its limit), else the request."""
    total = 0
    for container in spec.get("containers") or []:
        resources = container.get("resources") or {}
        amount = (resources.get("limits") or {}).get(GPU_RESOURCE, (resources.get("requests") or {}).get(GPU_RESOURCE))
        if amount is not None:
            total += int(quantity.parse(str(amount)))
    return total


@check_rule("serving-gpu-runtime", "a GPU serving runtime only on a pool whose nodes have the GPUs it asks for")
def gpu_runtime_on_gpu_pool(platform: Platform) -> Iterator[Violation]:
    """A ServingRuntime or ClusterServingRuntime that asks for `nvidia.com/gpu` selects (its
    `nodeSelector`) a GPU pool of the stack whose GPUs the device plugin counts (not a DRA pool:
    its GPUs are claimed, and a runtime cannot name a claim), and asks no more than one node of
    that pool has: otherwise every replica of every model on it stays Pending (or gated by Kueue)."""
    pools = platform.config.gpu_pools if platform.config else ()
    for o in platform.of_kind(*RUNTIME_KINDS):
        spec = o.obj.get("spec") or {}
        gpus = runtime_gpus(spec)
        if gpus == 0:
            continue
        selector = spec.get("nodeSelector") or {}
        pool = next((p for p in pools if pool_selector(p).items() <= selector.items()), None)
        if pool is None:
            have = ", ".join(p.name for p in pools) or "none"
            yield Violation(
                "serving-gpu-runtime", label(o), o.source,
                f"asks for {gpus} {GPU_RESOURCE} but its nodeSelector {selector or '{}'} selects no GPU pool of the stack "
                f"(pools: {have}); select one pool's nodes (facts/node_labels.py pool_selector), as components/serving_runtimes.py does",
            )
            continue
        if pool.dra:
            yield Violation(
                "serving-gpu-runtime", label(o), o.source,
                f"asks for {GPU_RESOURCE} on pool {pool.name}, whose GPUs are DRA devices the device plugin does not count; "
                "serve from a device-plugin pool",
            )
        elif gpus > pool.gpus_per_node:
            yield Violation(
                "serving-gpu-runtime", label(o), o.source,
                f"asks for {gpus} {GPU_RESOURCE} on pool {pool.name}, whose nodes ({pool.machine_type}) have {pool.gpus_per_node}; "
                "ask for at most that, or serve from a pool with larger nodes",
            )


def team_namespaces(platform: Platform) -> set[str]:
    key, value = PROFILE_NAMESPACE_LABEL
    return {o.key[3] for o in platform.of_kind("Namespace") if ((o.obj.get("metadata") or {}).get("labels") or {}).get(key) == value}


@check_rule("team-route-role-check", "every route of the Kubeflow gateway into a team namespace is one the role checks judge")
def team_routes_role_checked(platform: Platform) -> Iterator[Violation]:
    """A VirtualService of a team namespace on the Kubeflow gateway publishes only prefixes of the
    team routes (components/access.py TEAM_ROUTES: the team's notebooks, Ray, models, ...), which
    the viewers' read-only rule, the gateway's group checks and the role matrix
    (tests/envtest/test_access.py) judge; a route elsewhere, or matched other than by a prefix,
    would reach the namespace with no role check of ours."""
    teams = team_namespaces(platform)
    for o in platform.of_kind("VirtualService"):
        namespace = o.key[2]
        spec = o.obj.get("spec") or {}
        if namespace not in teams or KUBEFLOW_GATEWAY not in (spec.get("gateways") or []):
            continue
        allowed = [route.format(namespace=namespace).removesuffix("*") for route in TEAM_ROUTES]
        for http in spec.get("http") or []:
            for match in http.get("match") or [{}]:
                uri = match.get("uri") or {}
                prefix = uri.get("prefix")
                if prefix is not None and prefix.startswith(tuple(allowed)):
                    continue
                shown = next(iter(uri.items()), ("match", "every path"))
                yield Violation(
                    "team-route-role-check", label(o), o.source,
                    f"routes {shown[0]} {shown[1]!r} of the Kubeflow gateway into team namespace {namespace}, which no role check "
                    f"covers; publish under one of {', '.join(allowed)} (a new kind of route: add it to components/access.py TEAM_ROUTES "
                    "and to the role matrix)",
                )


def _gateway_denies(platform: Platform) -> list[tuple[Rendered, dict[str, Any]]]:
    """(policy, rule) of every DENY AuthorizationPolicy on the gateway's pods."""
    found: list[tuple[Rendered, dict[str, Any]]] = []
    for o in platform.of_kind("AuthorizationPolicy"):
        spec = o.obj.get("spec") or {}
        labels = (spec.get("selector") or {}).get("matchLabels") or {}
        if o.key[2] == GATEWAY_NAMESPACE and spec.get("action") == "DENY" and dict(GATEWAY_SELECTOR).items() <= labels.items():
            found += [(o, rule) for rule in spec.get("rules") or []]
    return found


def _sources(rule: dict[str, Any], field: str) -> list[str]:
    return [p for source in rule.get("from") or [] for p in (source.get("source") or {}).get(field) or []]


@check_rule("gateway-exempt-issuer-confined", "an issuer a gateway DENY leaves out is refused by another DENY but for named principals")
def exempt_issuers_confined(platform: Platform) -> Iterator[Violation]:
    """A DENY of the gateway that leaves out an issuer's tokens (`notRequestPrincipals:
    [<issuer>/*]`, as the allowed-identities rule does for the model clients' tokens, which carry
    no e-mail: components/access.py gateway_identity_policy) lets every token of that issuer past
    it. Another DENY must then refuse that issuer's tokens but for the principals it names
    (`requestPrincipals: [<issuer>/*]` with `notRequestPrincipals`, components/serving.py
    gateway_token_objects); without one, any service account's token of the issuer with the
    trusted audience passes the gateway."""
    denies = _gateway_denies(platform)
    confined = {p for _, rule in denies for p in _sources(rule, "requestPrincipals") if p.endswith("/*") and _sources(rule, "notRequestPrincipals")}
    for o, rule in denies:
        for exempt in _sources(rule, "notRequestPrincipals"):
            if exempt.endswith("/*") and exempt not in confined and not _sources(rule, "requestPrincipals"):
                yield Violation(
                    "gateway-exempt-issuer-confined", label(o), o.source,
                    f"leaves out every token of {exempt.removesuffix('/*')} and no DENY of the gateway refuses that issuer's "
                    "tokens but for named principals; add one (components/serving.py gateway_token_objects) or judge the issuer",
                )


REGISTRY_LOADER_PREFIX = "model-registry://"
REGISTRY_URL_ENV = "MODEL_REGISTRY_BASE_URL"
REGISTRY_URL_DEFAULT = "localhost:8080"
"""What the Hub's storage initializer calls without MODEL_REGISTRY_BASE_URL (kubeflow/model-registry
v0.3.8 cmd/csi/main.go modelRegistryBaseUrlDefault): the serving pod itself."""


def _services(platform: Platform) -> dict[tuple[str, str], set[int]]:
    """(namespace, name) -> the ports of every Service of the render."""
    return {
        (o.key[2], o.key[3]): {int(p["port"]) for p in (o.obj.get("spec") or {}).get("ports") or [] if "port" in p}
        for o in platform.of_kind("Service")
    }


@check_rule("model-registry-loader", "a `model-registry://` storage initializer reaches the registry of each team's own namespace")
def registry_loader_reaches_the_teams_registry(platform: Platform) -> Iterator[Violation]:
    """A ClusterStorageContainer for `model-registry://` is cluster-wide, and runs in the serving pod
    of whichever team deploys; the Hub's initializer calls MODEL_REGISTRY_BASE_URL unless the URI
    names a host (kubeflow/model-registry v0.3.8 cmd/csi/internal/modelregistry/api_client.go
    NewAPIClient). So the URL must be a Service's short name and port (resolved in the pod's own
    namespace) that every team namespace has: a name qualified with a namespace reaches that one
    registry, which refuses other namespaces' pods (the profile's mesh policies), and no URL calls
    the pod itself (components/serving_registry.py)."""
    teams = sorted(team_namespaces(platform))
    services = _services(platform)
    for o in platform.of_kind("ClusterStorageContainer"):
        spec = o.obj.get("spec") or {}
        prefixes = {f.get("prefix") for f in spec.get("supportedUriFormats") or []}
        if REGISTRY_LOADER_PREFIX not in prefixes or spec.get("disabled"):
            continue
        env = {e.get("name"): e.get("value", "") for e in (spec.get("container") or {}).get("env") or []}
        url = env.get(REGISTRY_URL_ENV) or REGISTRY_URL_DEFAULT
        host, _, port = url.rpartition(":") if ":" in url else (url, "", "80")
        fix = "set it to `<the registries' Service>:<port>` with no namespace (components/serving_registry.py team_registry_url)"
        if "." in host or host == "localhost":
            yield Violation(
                "model-registry-loader", label(o), o.source,
                f"{REGISTRY_URL_ENV} {url!r} is not a registry of the serving pod's own namespace "
                f"({'the pod itself' if host == 'localhost' else 'one namespace, whose registry refuses the other teams pods'}); {fix}",
            )
            continue
        if not port.isdigit():
            yield Violation("model-registry-loader", label(o), o.source, f"{REGISTRY_URL_ENV} {url!r} names no port; {fix}")
            continue
        missing = [t for t in teams if int(port) not in services.get((t, host), set())]
        if missing:
            yield Violation(
                "model-registry-loader", label(o), o.source,
                f"{REGISTRY_URL_ENV} {url!r}: team namespace(s) {', '.join(missing)} have no Service {host} on port {port}, so their "
                "models cannot load by name; turn on modelRegistry (each team's registry), or drop the storage initializer",
            )
