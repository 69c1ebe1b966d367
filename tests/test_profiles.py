"""A team as one component (components/profiles/team.py): each object waits only for what it
needs, the shipped stacks' teams, and the objects validate. Who may do what in a team's
namespace is asked of a real API server: tests/envtest/test_team_access.py."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from stackmodel.config import load
from tests.support import crds
from tests.support.validation import validate as validate_object
from tooling.plan import Plan
from tooling.render import authored_objects


def test_pod_default_waits_for_its_crd(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("dev")
    defaults = plan.one("kubernetes:kubeflow.org/v1alpha1:PodDefault", "nlp/team-resources")
    assert plan.one("kubernetes:kustomize/v2:Directory", "poddefaults-webhook").urn in defaults.dependencies


def test_ray_cluster_waits_for_kueue_and_kuberay(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    (cluster,) = [r for r in plan.of_type("kubernetes:ray.io/v1:RayCluster") if r.inputs["metadata"]["namespace"] == "nlp"]
    assert plan.one("kubernetes:helm.sh/v4:Chart", "kueue").urn in cluster.dependencies
    assert plan.one("kubernetes:helm.sh/v4:Chart", "kuberay-operator").urn in cluster.dependencies


def test_team_objects_wait_for_kubeflow_kueue_and_their_namespace(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    queue = plan.one("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "vision/default")
    assert plan.one("kubernetes:core/v1:Namespace", "vision/vision").urn in queue.dependencies
    assert plan.one("kubernetes:helm.sh/v4:Chart", "kueue").urn in queue.dependencies
    profile = plan.one("kubernetes:kubeflow.org/v1:Profile", "vision/vision")
    assert plan.one("kubernetes:kustomize/v2:Directory", "profiles-kfam").urn in profile.dependencies


@pytest.mark.parametrize("stack", ["kind", "dev"])
def test_shipped_stacks_have_three_teams_one_with_ray(stack: str) -> None:
    config = load(stack)
    assert len(config.teams) >= 3
    assert any(t.ray for t in config.teams)
    if stack == "dev":
        assert any(t.bucket for t in config.teams)


@pytest.mark.skipif(not crds.available(), reason=crds.MISSING)
def test_rendered_team_objects_validate(shipped_plan: Callable[[str], Plan]) -> None:
    objects = [o for o in authored_objects(shipped_plan("dev")) if o["metadata"].get("namespace") in ("vision", "nlp", "research") or o["kind"] in ("Profile", "ClusterQueue")]
    kinds = {o["kind"] for o in objects}
    assert {"Profile", "RoleBinding", "AuthorizationPolicy", "ClusterQueue", "LocalQueue", "NetworkPolicy", "RayCluster", "Service", "VirtualService"} <= kinds
    for obj in objects:
        assert validate_object(obj) == [], f"{obj['kind']} {obj['metadata']['name']}"
