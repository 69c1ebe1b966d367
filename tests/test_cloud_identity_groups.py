"""Google groups read from Cloud Identity (`source: cloudIdentity`, docs/teams.md "Groups"): their
members, as Cloud Identity answers (here: the offline mocks, given the members), get what a stack
group's members get; removal from the Google group shows in `plan --against`; read failures and
members who cannot sign in are reported with their paths; the stack's refusals."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pytest
import yaml
from pulumi_gcp.cloudidentity.outputs import (
    GetGroupTransitiveMembershipsMembershipPreferredMemberKeyResult as Key,
)
from pulumi_gcp.cloudidentity.outputs import (
    GetGroupTransitiveMembershipsMembershipResult as Membership,
)

from components.kubeflow import dex_config
from infra.cloud_identity import user_emails
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.config import ConfigError, load_stack, validate
from stackmodel.rules import with_read_members
from stackmodel.stack import PlatformConfig
from tests.conftest import base_gke, with_changes
from tooling.cli import EXIT_CONFIG_ERROR, main, plan_json
from tooling.plan import Plan, evaluate
from tooling.removals import previous_resources, removals, report

K = "mlplatform:components"
AUTH = f"{K}.kubeflow.auth"
GROUP = "ml-nlp@acme.com"
CLOUD_IDENTITY_GROUP = {"name": GROUP, "source": "cloudIdentity"}
GOOGLE_SIGN_IN: dict[str, Any] = {
    "kind": "oidc",
    "oidc": {"clientId": "1234567890-kubeflow.apps.googleusercontent.com"},
    "allowedDomains": ["acme.com"],
    "hostname": "kubeflow.acme.com",
    "groups": [CLOUD_IDENTITY_GROUP],
}
NLP = {"name": "nlp", "owner": "kim@acme.com", "contributors": [{"email": "ana@acme.com", "role": "view"}, {"group": GROUP, "role": "edit"}]}


def google_groups(**auth: Any) -> dict[str, Any]:
    return with_changes(base_gke(), {f"{K}.kubeflow": {"auth": {**GOOGLE_SIGN_IN, **auth}}, "mlplatform:teams": [NLP]})


def config(**auth: Any) -> PlatformConfig:
    return validate(google_groups(**auth), "google-groups.yaml")


@cache
def plan(*members: str) -> Plan:
    return evaluate(config(), "google-groups", cloud_identity={GROUP: list(members)})


def objects(found: Plan, kind: str) -> dict[str, dict[str, Any]]:
    return {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o for r in found.resources if (o := r.inputs).get("kind") == kind}


def test_members_read_from_cloud_identity_get_a_binding_each() -> None:
    bindings = objects(plan("eve@acme.com", "bo@acme.com"), "RoleBinding")
    eve = bindings["nlp/user-eve-acme-com-clusterrole-edit"]
    assert eve["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "eve@acme.com"}]
    assert eve["metadata"]["annotations"]["mlplatform.io/groups"] == GROUP
    assert "nlp/user-bo-acme-com-clusterrole-edit" in bindings
    group = bindings["nlp/group-ml-nlp-acme-com-clusterrole-edit"]
    assert group["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": GROUP}]


def test_the_groups_sidecar_policy_names_the_members_read() -> None:
    policy = objects(plan("eve@acme.com", "bo@acme.com"), "AuthorizationPolicy")["nlp/group-ml-nlp-acme-com-clusterrole-edit"]
    ((condition,),) = [rule["when"] for rule in policy["spec"]["rules"]]
    assert condition == {"key": "request.headers[kubeflow-userid]", "values": ["bo@acme.com", "eve@acme.com"]}


def test_offline_without_members_the_group_has_its_objects_and_nobody_in_it() -> None:
    bindings = objects(plan(), "RoleBinding")
    assert "nlp/group-ml-nlp-acme-com-clusterrole-edit" in bindings
    assert not [n for n, o in bindings.items() if o["metadata"]["annotations"].get("mlplatform.io/groups")]
    assert objects(plan(), "AuthorizationPolicy")["nlp/group-ml-nlp-acme-com-clusterrole-edit"]["spec"]["rules"] == []


def test_plan_against_shows_the_binding_that_goes_when_someone_leaves_the_google_group() -> None:
    before = plan("eve@acme.com", "bo@acme.com")
    found = removals(previous_resources(json.loads(plan_json(before))), plan("eve@acme.com"))
    assert {r.name for r in found.access_removed} == {"nlp/user-bo-acme-com-clusterrole-edit"}
    assert "   RoleBinding nlp/user-bo-acme-com-clusterrole-edit" in report(found, "before.json")
    assert not found.alarming()


def test_a_member_the_team_lists_with_that_role_keeps_one_binding_their_own() -> None:
    """The stack cannot know who joins a Google group: instead of one binding name twice (refused
    for a stack group), the person's own entry gives it."""
    team = {**NLP, "contributors": [{"email": "ana@acme.com", "role": "edit"}, {"group": GROUP, "role": "edit"}]}
    raw = with_changes(google_groups(), {"mlplatform:teams": [team]})
    found = evaluate(validate(raw, "google-groups.yaml"), "google-groups", cloud_identity={GROUP: ["ana@acme.com", "eve@acme.com"]})
    ana = [r.inputs for r in found.resources if r.inputs.get("kind") == "RoleBinding" and r.inputs["metadata"]["name"] == "user-ana-acme-com-clusterrole-edit"]
    assert len(ana) == 1 and "mlplatform.io/groups" not in ana[0]["metadata"].get("annotations", {})
    assert "nlp/user-eve-acme-com-clusterrole-edit" in objects(found, "RoleBinding")


def test_a_member_who_cannot_sign_in_is_left_out_and_reported(caplog: pytest.LogCaptureFixture) -> None:
    found = evaluate(config(), "google-groups", cloud_identity={GROUP: ["eve@acme.com", "max@elsewhere.org"]})
    bindings = objects(found, "RoleBinding")
    assert "nlp/user-eve-acme-com-clusterrole-edit" in bindings
    assert not [n for n in bindings if "elsewhere" in n]
    # pulumi.log.warn: a warning of the preview or update (under the mocks, Python's logging).
    (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warning.startswith(f"{AUTH}.groups[0]: group {GROUP} (Cloud Identity): left out, max@elsewhere.org cannot sign in: its domain is not in")


def test_only_people_are_kept_of_what_cloud_identity_answers() -> None:
    memberships = [
        Membership(member="users/1", preferred_member_keys=[Key(id="Eve@acme.com", namespace="")], relation_type="DIRECT", roles=[]),
        Membership(member="groups/0abc", preferred_member_keys=[Key(id="ml-core@acme.com", namespace="")], relation_type="DIRECT", roles=[]),
        Membership(member="users/2", preferred_member_keys=[Key(id="ci@acme-ml.iam.gserviceaccount.com", namespace="")], relation_type="DIRECT", roles=[]),
        Membership(member="users/3", preferred_member_keys=[Key(id="ext-7", namespace="identitysources/abc")], relation_type="INDIRECT", roles=[]),
        Membership(member="users/4", preferred_member_keys=[Key(id="bo@acme.com", namespace="")], relation_type="INDIRECT", roles=[]),
        Membership(member="users/1", preferred_member_keys=[Key(id="eve@acme.com", namespace="")], relation_type="INDIRECT", roles=[]),
    ]
    assert user_emails(memberships) == ["bo@acme.com", "Eve@acme.com"]


def test_a_group_that_cannot_be_read_stops_the_run_with_its_path_and_the_fixes(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(**_: Any) -> Any:
        # What the SDK raises for a provider failure (pulumi/runtime/invoke.py `_invoke`).
        raise Exception("invoke of gcp:cloudidentity/getGroupLookup:getGroupLookup failed: googleapi: Error 403: Permission denied")

    monkeypatch.setattr(gcp.cloudidentity, "get_group_lookup", refused)
    two = google_groups(groups=[CLOUD_IDENTITY_GROUP, {"name": "ml-cv@acme.com", "source": "cloudIdentity"}])
    with pytest.raises(pulumi.RunError) as err:
        evaluate(validate(two, "google-groups.yaml"), "google-groups")
    message = str(err.value)
    assert "2 problems in the stack config" in message
    assert f"{AUTH}.groups[0]: group {GROUP} (source cloudIdentity) could not be read from Cloud Identity: invoke of" in message
    assert f"{AUTH}.groups[1]: group ml-cv@acme.com" in message
    assert "gcloud services enable cloudidentity.googleapis.com --project acme-test" in message
    assert "the Groups Reader admin role" in message and "gcp:userProjectOverride: true" in message


@pytest.mark.parametrize(
    ("group", "path", "message"),
    [
        ({"name": "ml-nlp", "source": "cloudIdentity"}, f"{AUTH}.groups[0].name", "Cloud Identity looks a Google group up by its e-mail"),
        ({"name": GROUP, "source": "cloudIdentity", "members": ["eve@acme.com"]}, f"{AUTH}.groups[0].members", "remove members, or list them with source: stack"),
    ],
)
def test_a_cloud_identity_group_is_named_by_its_e_mail_and_lists_no_members(group: dict[str, Any], path: str, message: str) -> None:
    team = {**NLP, "contributors": [{"group": group["name"], "role": "edit"}]}
    raw = with_changes(google_groups(groups=[group]), {"mlplatform:teams": [team]})
    with pytest.raises(ConfigError) as err:
        validate(raw, "google-groups.yaml")
    assert [str(p) for p in err.value.problems if p.path == path and message in p.message], err.value


def test_offline_tools_say_the_members_are_read_at_pulumi_up(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.google-groups.yaml"
    stack.write_text(yaml.safe_dump({"config": google_groups()}))
    (note,) = [n for n in load_stack(str(stack)).notes if n.path == f"{AUTH}.groups[0]"]
    assert "its members are read from Cloud Identity at `pulumi preview` / `pulumi up`" in note.message


def test_plan_takes_the_members_from_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stack = tmp_path / "Pulumi.google-groups.yaml"
    stack.write_text(yaml.safe_dump({"config": google_groups()}))
    members = tmp_path / "members.yaml"
    members.write_text(yaml.safe_dump({GROUP: ["eve@acme.com"]}))
    assert main(["plan", str(stack), "--json", "--cloud-identity", str(members)]) == 0
    names = {r["name"] for r in json.loads(capsys.readouterr().out)["resources"]}
    assert any("user-eve-acme-com-clusterrole-edit" in n for n in names)
    members.write_text("[eve@acme.com]\n")
    assert main(["plan", str(stack), "--cloud-identity", str(members)]) == EXIT_CONFIG_ERROR
    assert "--cloud-identity: " in capsys.readouterr().err


def test_dex_static_users_get_the_google_groups_they_were_read_in() -> None:
    """With Dex static users the members read are checked against them, and Dex puts the group
    into the token of those it keeps, as it does a stack group's."""
    raw = with_changes(google_groups(), {f"{K}.kubeflow": {"auth": {"kind": "dex", "staticUsers": ["kim@acme.com", "ana@acme.com", "eve@acme.com"], "groups": [CLOUD_IDENTITY_GROUP]}}})
    resolved, left_out = with_read_members(validate(raw, "google-groups.yaml"), {GROUP: ["eve@acme.com", "bo@acme.com"]})
    passwords = {p["email"]: p.get("groups") for p in yaml.safe_load(dex_config(resolved.components[KUBEFLOW].auth))["staticPasswords"]}
    assert passwords == {"kim@acme.com": None, "ana@acme.com": None, "eve@acme.com": [GROUP]}
    assert left_out == [(f"{AUTH}.groups[0]", f"group {GROUP} (Cloud Identity): left out, bo@acme.com cannot sign in: it is not one of {AUTH}.staticUsers; add it there (with its hash in mlplatform:dexPasswordHashes), or correct the address")]


def test_members_read_whose_e_mails_give_one_binding_name_stop_the_run_before_any_resource() -> None:
    """ana.b@ and ana-b@ in the Google group would be one RoleBinding name twice: the stack's
    rules run again on what was read."""
    with pytest.raises(pulumi.RunError) as err:
        evaluate(config(), "google-groups", cloud_identity={GROUP: ["ana.b@acme.com", "ana-b@acme.com"]})
    message = str(err.value)
    assert "mlplatform:teams[0].contributors[1].group: " in message
    assert "get one Kubeflow binding name 'user-ana-b-acme-com-clusterrole-edit'" in message


def test_gke_hands_rbac_the_google_groups_of_the_security_group() -> None:
    """kubectl follows the Google group itself: its RoleBinding's Group subject."""
    raw = with_changes(google_groups(), {"mlplatform:cluster.securityGroup": "gke-security-groups@acme.com"})
    found = evaluate(validate(raw, "google-groups.yaml"), "google-groups", cloud_identity={GROUP: ["eve@acme.com"]})
    (cluster,) = found.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["authenticatorGroupsConfig"] == {"securityGroup": "gke-security-groups@acme.com"}
    (binding,) = [r.inputs for r in found.resources if r.inputs.get("kind") == "RoleBinding" and r.inputs["metadata"]["name"].startswith("group-")]
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": GROUP}]
