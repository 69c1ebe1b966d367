"""What a pod requests, the way Kubernetes and Kueue count it: the namespace's LimitRange defaults
applied as the API server applies them to a pod and as Kueue applies them to a pod template, and
a pod's effective requests (what a ResourceQuota and the scheduler charge). Pure functions of
plain manifests (dicts); quantities as Decimals.

Read at the sources (kubernetes/kubernetes stored copies, read 2026-12; kubernetes-sigs/kueue v0.19.2):
- the API server defaults a pod's missing request of a resource to its limit before admission,
  for pods only, not pod templates (pkg/apis/core/v1/defaults.go SetDefaults_Pod);
- the LimitRanger admission plugin then gives each container and init container the
  LimitRange's `default` limit and `defaultRequest` request of every resource it names none of
  (plugin/pkg/admission/limitranger/admission.go defaultContainerResourceRequirements,
  mergeContainerResources);
- Kueue, building a Workload from a pod template, merges the LimitRange's `default` and
  `defaultRequest` the same way and then uses limits as missing requests (pkg/workload/
  resources.go handlePodLimitRange, UseLimitsAsMissingRequestsInPod): the opposite order, so a
  container with a limit and no request counts the LimitRange's default request in Kueue and its
  limit in the pod; the platform's pods name both or neither;
- a pod's requests: the sum over its containers and sidecars (init containers with
  `restartPolicy: Always`), or the largest init container with the sidecars started before it if
  that is more, plus its overhead (k8s.io/component-helpers resource/helpers.go PodRequests).
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

Requests = dict[str, Decimal]


def amount(text: Any) -> Decimal:
    """A Kubernetes quantity's value."""
    from kubernetes.utils.quantity import parse_quantity

    value: Decimal = parse_quantity(str(text))
    return value


def container_defaults(limit_ranges: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(default limits, default requests) of every `Container` item of the namespace's LimitRanges,
    as the API server stores them (pkg/apis/core/v1/defaults.go SetDefaults_LimitRangeItem, which
    Kueue and the LimitRanger read): a `max` without a `default` is the default limit, a default
    limit without a `defaultRequest` the default request, and a `min` without either the request."""
    limits: dict[str, Any] = {}
    requests: dict[str, Any] = {}
    for limit_range in limit_ranges:
        for item in (limit_range.get("spec") or {}).get("limits") or []:
            if item.get("type") == "Container":
                default = {**(item.get("max") or {}), **(item.get("default") or {})}
                limits.update(default)
                requests.update({**(item.get("min") or {}), **default, **(item.get("defaultRequest") or {})})
    return limits, requests


def _containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]


def as_admitted(spec: dict[str, Any], limit_ranges: list[dict[str, Any]]) -> dict[str, Any]:
    """The pod spec as the API server stores it: missing requests from limits, then the LimitRange
    defaults (a new dict)."""
    spec = copy.deepcopy(spec)
    default_limits, default_requests = container_defaults(limit_ranges)
    for container in _containers(spec):
        resources = container.setdefault("resources", {})
        limits, requests = resources.setdefault("limits", {}), resources.setdefault("requests", {})
        for name, value in limits.items():
            requests.setdefault(name, value)
        for name, value in default_limits.items():
            limits.setdefault(name, value)
        for name, value in default_requests.items():
            requests.setdefault(name, value)
    return spec


def as_kueue_counts(spec: dict[str, Any], limit_ranges: list[dict[str, Any]]) -> dict[str, Any]:
    """A pod template as Kueue counts it in a Workload: the LimitRange defaults, then limits as the
    missing requests (a new dict)."""
    spec = copy.deepcopy(spec)
    default_limits, default_requests = container_defaults(limit_ranges)
    for container in _containers(spec):
        resources = container.setdefault("resources", {})
        limits, requests = resources.setdefault("limits", {}), resources.setdefault("requests", {})
        for name, value in default_limits.items():
            limits.setdefault(name, value)
        for name, value in default_requests.items():
            requests.setdefault(name, value)
        for name, value in limits.items():
            requests.setdefault(name, value)
    return spec


def _requests(container: dict[str, Any]) -> Requests:
    return {name: amount(value) for name, value in ((container.get("resources") or {}).get("requests") or {}).items()}


def _add(total: Requests, more: Requests) -> Requests:
    return {name: total.get(name, Decimal(0)) + more.get(name, Decimal(0)) for name in {*total, *more}}


def _max(one: Requests, other: Requests) -> Requests:
    return {name: max(one.get(name, Decimal(0)), other.get(name, Decimal(0))) for name in {*one, *other}}


def pod_requests(spec: dict[str, Any]) -> Requests:
    """What one pod of `spec` requests (resource -> amount), as Kubernetes counts it."""
    total: Requests = {}
    for container in spec.get("containers") or []:
        total = _add(total, _requests(container))
    sidecars: Requests = {}
    largest_init: Requests = {}
    for container in spec.get("initContainers") or []:
        own = _requests(container)
        if container.get("restartPolicy") == "Always":
            total = _add(total, own)
            sidecars = _add(sidecars, own)
            own = sidecars
        else:
            own = _add(own, sidecars)
        largest_init = _max(largest_init, own)
    total = _max(total, largest_init)
    return _add(total, {name: amount(value) for name, value in (spec.get("overhead") or {}).items()})
