"""Team objects' Pulumi names and the aliases of their old names (components/profiles/names.py)."""

from __future__ import annotations

from collections.abc import Callable

from tooling.plan import Plan


def test_team_objects_are_named_namespace_slash_name(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    team = plan.one("mlplatform:components:Team", "vision")
    objects = [r for r in plan.children(team) if r.type.startswith("kubernetes:")]
    assert objects
    for r in objects:
        meta = r.inputs["metadata"]
        assert r.name == f"{meta.get('namespace', 'vision')}/{meta['name']}", r.type


def test_renamed_team_objects_keep_their_old_names_as_aliases(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    team = "urn:pulumi:kind::mlplatform::mlplatform:components:Team"
    expected = {
        ("kubernetes:core/v1:Namespace", "vision/vision"): "vision-namespace",
        ("kubernetes:kubeflow.org/v1:Profile", "vision/vision"): "vision-profile-vision",
        ("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "vision/default"): "vision-localqueue-default",
        ("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "vision/user-ana-example-com-clusterrole-edit"): (
            "vision-rolebinding-user-ana-example-com-clusterrole-edit"
        ),
    }
    for (type_, name), old in expected.items():
        assert f"{team}${type_}::{old}" in plan.one(type_, name).aliases

