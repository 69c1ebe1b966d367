"""facts/pod_resources.py: a pod's requests and the LimitRange defaults, as Kubernetes and Kueue
count them; the cases are the upstreams' own."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from facts.pod_resources import as_admitted, as_kueue_counts, pod_requests


def _container(name: str, cpu: str | None = None, sidecar: bool = False) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name}
    if cpu is not None:
        container["resources"] = {"requests": {"cpu": cpu}}
    if sidecar:
        container["restartPolicy"] = "Always"
    return container


# Kubernetes' pod requests with sidecars (restartable init containers), as a public scheduler's
# GetPodResourceRequest tests state Kubernetes' rule (stored copy, read 2026-12): the case names
# and their expected CPUs.
@pytest.mark.parametrize(
    ("case", "spec", "cpu"),
    [
        (
            "restartable init + regular container",
            {"initContainers": [_container("restartable-init-1", "1", sidecar=True)], "containers": [_container("container-1", "1")]},
            "2",
        ),
        (
            # max(5, restartable init containers(3+2+1) + regular(1)) = 7
            "multiple restartable init containers",
            {
                "initContainers": [_container("init-1", "5"), *(_container(f"restartable-init-{i}", str(i), sidecar=True) for i in (1, 2, 3))],
                "containers": [_container("container-1", "1")],
            },
            "7",
        ),
        (
            # init-2 requires 5 + the previously running restartable init containers(1+2) = 8
            "multiple restartable and regular init containers",
            {
                "initContainers": [
                    _container("init-1", "5"),
                    _container("restartable-init-1", "1", sidecar=True),
                    _container("restartable-init-2", "2", sidecar=True),
                    _container("init-2", "5"),
                    _container("restartable-init-3", "3", sidecar=True),
                ],
                "containers": [_container("container-1", "1")],
            },
            "8",
        ),
        (
            "get resource for pod with overhead",
            {"containers": [_container("a", "1000m"), _container("b", "2000m")], "overhead": {"cpu": "500m"}},
            "3.5",
        ),
    ],
)
def test_a_pods_requests_count_its_sidecars_and_its_largest_init_container(case: str, spec: dict[str, Any], cpu: str) -> None:
    assert pod_requests(spec)["cpu"] == Decimal(cpu), case


# kueue v0.19.2 pkg/workload/resources_test.go TestAdjustResources, "Handle container limit range":
# a LimitRange of default 4 CPUs and default request 3; pod sets a (nothing), b (limit 6),
# c (request 1), each with an empty init container.
LIMIT_RANGE = {"spec": {"limits": [{"type": "Container", "default": {"cpu": "4"}, "defaultRequest": {"cpu": "3"}, "max": {"cpu": "5"}, "min": {"cpu": "2"}}]}}


@pytest.mark.parametrize(
    ("pod_set", "resources", "kueue", "api_server"),
    [
        ("a", {}, {"limits": {"cpu": "4"}, "requests": {"cpu": "3"}}, {"limits": {"cpu": "4"}, "requests": {"cpu": "3"}}),
        # Kueue: the LimitRange's request before the limit; the API server: the limit as the request first.
        ("b", {"limits": {"cpu": "6"}}, {"limits": {"cpu": "6"}, "requests": {"cpu": "3"}}, {"limits": {"cpu": "6"}, "requests": {"cpu": "6"}}),
        ("c", {"requests": {"cpu": "1"}}, {"limits": {"cpu": "4"}, "requests": {"cpu": "1"}}, {"limits": {"cpu": "4"}, "requests": {"cpu": "1"}}),
    ],
)
def test_limit_range_defaults_as_kueue_and_as_the_api_server_apply_them(
    pod_set: str, resources: dict[str, Any], kueue: dict[str, Any], api_server: dict[str, Any]
) -> None:
    spec: dict[str, Any] = {"initContainers": [{"name": "i"}], "containers": [{"name": "c", "resources": resources}]}
    counted = as_kueue_counts(spec, [LIMIT_RANGE])
    assert counted["containers"][0]["resources"] == kueue, pod_set
    assert counted["initContainers"][0]["resources"] == {"limits": {"cpu": "4"}, "requests": {"cpu": "3"}}, pod_set
    assert as_admitted(spec, [LIMIT_RANGE])["containers"][0]["resources"] == api_server, pod_set
    assert spec["containers"][0]["resources"] == resources  # the input is left alone


def test_kueue_uses_limits_as_missing_requests() -> None:
    # TestAdjustResources, "Apply limits to requests", pod set b: request cpu 2, limits cpu 3 and memory 1Gi.
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "3", "memory": "1Gi"}}}]}
    assert as_kueue_counts(spec, [])["containers"][0]["resources"]["requests"] == {"cpu": "2", "memory": "1Gi"}


def test_a_limit_ranges_max_and_min_default_its_limit_and_request_as_the_api_server_stores_it() -> None:
    # kubernetes pkg/apis/core/v1/defaults_test.go TestSetDefaultLimitRangeItem: a Container item with
    # max cpu 100m and min memory 100Mi is stored with default cpu 100m, defaultRequest cpu 100m and
    # memory 100Mi; a container naming nothing gets those (LimitRanger, Kueue's handlePodLimitRange).
    limit_range = {"spec": {"limits": [{"type": "Container", "max": {"cpu": "100m"}, "min": {"memory": "100Mi"}}]}}
    expected = {"limits": {"cpu": "100m"}, "requests": {"cpu": "100m", "memory": "100Mi"}}
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    assert as_admitted(spec, [limit_range])["containers"][0]["resources"] == expected
    assert as_kueue_counts(spec, [limit_range])["containers"][0]["resources"] == expected
