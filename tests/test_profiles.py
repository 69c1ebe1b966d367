"""A team as one component (components/profiles/team.py): each object waits only for what it
needs, the shipped stacks' teams, the objects validate, and the access matrix evaluated against
Kubeflow's own aggregated roles."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from stacks.config import load
from tests.support import crds, mirror, rbac
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


@mirror.needed
def test_access_matrix_against_kubeflow_roles(shipped_plan: Callable[[str], Plan]) -> None:
    objects = authored_objects(shipped_plan("kind"))
    # The profile controller binds the owner as `namespaceAdmin` to kubeflow-admin, and the
    # namespace's default-editor service account to kubeflow-edit (kubeflow/dashboard
    # components/profile-controller/controllers/profile_controller.go).
    controller_bindings = [
        {
            "kind": "RoleBinding",
            "metadata": {"name": "namespaceAdmin", "namespace": "vision"},
            "roleRef": {"kind": "ClusterRole", "name": "kubeflow-admin"},
            "subjects": [{"kind": "User", "name": "lead@example.com"}],
        },
        {
            "kind": "RoleBinding",
            "metadata": {"name": "default-editor", "namespace": "vision"},
            "roleRef": {"kind": "ClusterRole", "name": "kubeflow-edit"},
            "subjects": [{"kind": "ServiceAccount", "name": "default-editor", "namespace": "vision"}],
        },
    ]
    cluster = rbac.Authorizer(rbac.upstream_cluster_roles() + objects + controller_bindings)

    def can(who: str | rbac.UserInfo, verb: str, group: str, resource: str, namespace: str = "vision") -> bool:
        subject = rbac.user(who) if isinstance(who, str) else who
        return cluster.allows(subject, rbac.Request(verb, group, resource, namespace=namespace))

    for user in ("lead@example.com", "ana@example.com"):  # owner, editor
        assert can(user, "create", "trainer.kubeflow.org", "trainjobs")
        assert can(user, "create", "ray.io", "rayclusters")
    assert can("lead@example.com", "create", "rbac.authorization.k8s.io", "rolebindings")  # the owner shares
    assert not can("ana@example.com", "create", "rbac.authorization.k8s.io", "rolebindings")
    assert can("bo@example.com", "get", "trainer.kubeflow.org", "trainjobs")  # viewer reads
    assert not can("bo@example.com", "create", "trainer.kubeflow.org", "trainjobs")
    assert not can("bo@example.com", "create", "ray.io", "rayclusters")
    for outsider in ("kim@example.com", "raj@example.com"):  # other teams' people
        assert not can(outsider, "get", "trainer.kubeflow.org", "trainjobs")
        assert not can(outsider, "create", "ray.io", "rayclusters")
        # ... but, signed in, they see which runtimes exist (cluster-scoped, for the SDK)
        assert can(outsider, "list", "trainer.kubeflow.org", "clustertrainingruntimes", namespace="")
    assert not can(rbac.UserInfo("anonymous"), "list", "trainer.kubeflow.org", "clustertrainingruntimes", namespace="")
    # ana is an editor in vision but only a viewer in nlp
    assert not can("ana@example.com", "create", "trainer.kubeflow.org", "trainjobs", namespace="nlp")
    assert can("ana@example.com", "list", "trainer.kubeflow.org", "trainjobs", namespace="nlp")
    # notebooks run as default-editor: they may start TrainJobs in their own namespace only
    editor = rbac.service_account("vision", "default-editor")
    assert can(editor, "create", "trainer.kubeflow.org", "trainjobs")
    assert not can(editor, "create", "trainer.kubeflow.org", "trainjobs", namespace="nlp")
    assert not can(rbac.service_account("nlp", "default-editor"), "create", "trainer.kubeflow.org", "trainjobs")

