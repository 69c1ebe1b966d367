"""A team's namespace as a Kubeflow profile (components/profiles/namespace.py): KFAM's binding
names and objects, the Profile's owner and quota, the LimitRange."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from components.access import GATEWAY_PRINCIPAL
from components.profiles.args import team_args
from components.profiles.namespace import contributor_objects
from components.profiles.namespace import profile as team_profile
from facts.naming import kfam_binding_name
from stackmodel.config import validate
from stackmodel.schema import Role, Team
from tests.conftest import base_gke, base_kind, with_changes
from tests.support.teams import TEAM, objects_of
from tooling.plan import Plan


@pytest.mark.parametrize(
    ("email", "role", "name"),
    [
        # kubeflow/dashboard components/access-management/kfam/bindings_test.go
        ("lalith.vaka@zq.msds.kp.org", "edit", "user-lalith-vaka-zq-msds-kp-org-clusterrole-edit"),
        ("397401@zq.msds.kp.org", "edit", "user-397401-zq-msds-kp-org-clusterrole-edit"),
        ("Jane.Doe@Example.com", "view", "user-jane-doe-example-com-clusterrole-view"),
        ("a+b__c@x.io", "edit", "user-a-b-c-x-io-clusterrole-edit"),
    ],
)
def test_kfam_binding_names(email: str, role: str, name: str) -> None:
    assert kfam_binding_name(email, role) == name


def test_contributor_objects_as_kfam_writes_them() -> None:
    team = Team.model_validate(TEAM)
    binding, policy = contributor_objects(team, "Ana.Li@acme.com", Role.EDIT)
    assert binding == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": "user-ana-li-acme-com-clusterrole-edit",
            "namespace": "vision",
            "annotations": {"user": "Ana.Li@acme.com", "role": "edit"},
        },
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kubeflow-edit"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "Ana.Li@acme.com"}],
    }
    assert policy["metadata"] == binding["metadata"]
    assert policy["apiVersion"] == "security.istio.io/v1beta1"
    assert "action" not in policy["spec"] and "selector" not in policy["spec"]
    (rule,) = policy["spec"]["rules"]
    assert rule["from"][0]["source"]["principals"][0] == GATEWAY_PRINCIPAL
    assert rule["when"] == [{"key": "request.headers[kubeflow-userid]", "values": ["Ana.Li@acme.com"]}]
    viewer, _ = contributor_objects(team, "bo@acme.com", Role.VIEW)
    assert viewer["roleRef"]["name"] == "kubeflow-view"
    assert viewer["metadata"]["annotations"] == {"user": "bo@acme.com", "role": "view"}


def test_a_team_in_a_cohort_has_namespace_quota_for_what_it_may_borrow() -> None:
    """Kueue admits a job on the cohort's unused quota; the namespace's ResourceQuota must not then
    refuse its pods (a job waiting for pods ready would be requeued for ever)."""
    nlp = {**TEAM, "name": "nlp", "owner": "lead@acme.com", "cohort": "research", "quota": {"gpus": {"nvidia-l4": 4}, "cpu": "32", "memory": "128Gi", "notebooks": 1}}
    research = {**nlp, "name": "research", "owner": "eve@acme.com", "quota": {"gpus": {"nvidia-l4": 2}, "cpu": "16", "memory": "64Gi"}}
    alone = {**TEAM, "name": "alone", "owner": "a@acme.com", "quota": {"gpus": {"nvidia-l4": 1}, "cpu": "8", "memory": "8Gi", "notebooks": 1}}
    objects = objects_of(with_changes(base_gke(), {"mlplatform:teams": [nlp, research, alone]}), team="nlp")
    groups = objects[("ClusterQueue", "nlp")]["spec"]["resourceGroups"]
    # No topology-aware pool: each team's CPU and memory whole on `default` (stackmodel/team_quota.py),
    # nlp 32 CPUs and 128Gi, research 16 and 64Gi, lent flavor by flavor, GPUs on l4.
    assert [group["flavors"] for group in groups] == [
        [
            {
                "name": "default",
                "resources": [
                    {"name": "cpu", "nominalQuota": "32", "borrowingLimit": "16"},
                    {"name": "memory", "nominalQuota": "128Gi", "borrowingLimit": "64Gi"},
                ],
            }
        ],
        [{"name": "l4", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 4, "borrowingLimit": 2}]}],
    ]
    # 32 + 16 CPUs and 128Gi + 64Gi, and one notebook (0.5 CPU, 1Gi) with its sidecar (10m, 40Mi);
    # the 4 + 2 GPUs are the queue's alone (Kueue admits every GPU pod of the namespace).
    assert objects[("Profile", "nlp")]["spec"]["resourceQuotaSpec"]["hard"] == {"cpu": "48510m", "memory": "197672Mi"}
    lone = objects_of(with_changes(base_gke(), {"mlplatform:teams": [nlp, research, alone]}), team="alone")
    assert "borrowingLimit" not in str(lone[("ClusterQueue", "alone")])
    assert lone[("Profile", "alone")]["spec"]["resourceQuotaSpec"]["hard"] == {"cpu": "8510m", "memory": "9256Mi"}


def test_without_kueue_the_namespace_quota_limits_gpus() -> None:
    """Team args without Kueue (the schema makes teams need it; TeamArgs allows it): no queue
    admits GPU pods, so the ResourceQuota is what holds the team to its GPUs."""
    config = validate(with_changes(base_gke(), {"mlplatform:teams": [TEAM]}), "test")
    args = replace(team_args(config, config.teams[0]), kueue=False)
    assert team_profile(args)["spec"]["resourceQuotaSpec"]["hard"]["requests.nvidia.com/gpu"] == "8"


def test_profile_owner_quota_and_workload_identity() -> None:
    objects = objects_of(with_changes(base_gke(), {"mlplatform:teams": [TEAM]}))
    profile = objects[("Profile", "vision")]
    assert profile["apiVersion"] == "kubeflow.org/v1"
    assert profile["spec"]["owner"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "lead@acme.com"}
    # The queue's 64 CPUs and 256Gi, and room for two notebooks at the form's default (0.5 CPU,
    # 1Gi) with their mesh sidecars (10m, 40Mi): 64 + 2 x 0.51 CPUs, 256Gi + 2 x 1064Mi.
    assert profile["spec"]["resourceQuotaSpec"]["hard"] == {"cpu": "65020m", "memory": "264272Mi"}
    # No WorkloadIdentity plugin (the controller would call IAM itself): we annotate the KSA.
    assert "plugins" not in profile["spec"]
    account = objects[("ServiceAccount", "default-editor")]
    assert account["metadata"] == {
        "name": "default-editor",
        "namespace": "vision",
        "annotations": {"iam.gke.io/gcp-service-account": "team-vision@p.iam.gserviceaccount.com"},
    }
    namespace = objects[("Namespace", "vision")]
    assert namespace["metadata"]["annotations"] == {"owner": "lead@acme.com"}
    assert namespace["metadata"]["labels"]["istio-injection"] == "enabled"


def test_every_team_namespace_gets_container_defaults() -> None:
    # A plain TrainJob (no resources_per_node) passes the profile's ResourceQuota and is counted.
    limits = objects_of(with_changes(base_gke(), {"mlplatform:teams": [TEAM]}))[("LimitRange", "container-defaults")]
    assert limits["metadata"]["namespace"] == "vision"
    assert limits["spec"]["limits"] == [
        {"type": "Container", "defaultRequest": {"cpu": "1", "memory": "2Gi"}, "default": {"cpu": "4", "memory": "16Gi"}}
    ]


def test_container_defaults_come_from_the_stack() -> None:
    team = {**TEAM, "containerDefaults": {"cpu": "500m", "memory": "1Gi", "cpuLimit": 2, "memoryLimit": "4Gi"}}
    (limit,) = objects_of(with_changes(base_kind(), {"mlplatform:teams": [team], "mlplatform:teams.0.quota.gpus": {}}))[
        ("LimitRange", "container-defaults")
    ]["spec"]["limits"]
    assert limit["defaultRequest"] == {"cpu": "500m", "memory": "1Gi"} and limit["default"] == {"cpu": "2", "memory": "4Gi"}


def test_contributors_kfam_names_alike_with_different_roles_get_both_bindings(
    plan_of: Callable[[dict[str, Any]], Plan],
) -> None:
    people = [{"email": "ana.b@x.com", "role": "edit"}, {"email": "ana-b@x.com", "role": "view"}]
    plan = plan_of(with_changes(base_kind(), {"mlplatform:teams": [{**TEAM, "contributors": people, "quota": {}}]}))
    bindings = {r.name for r in plan.of_type("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding") if r.name.startswith("vision/")}
    assert bindings == {"vision/user-ana-b-x-com-clusterrole-edit", "vision/user-ana-b-x-com-clusterrole-view"}

