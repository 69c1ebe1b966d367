"""Teams by group (docs/teams.md, "Groups"): the fixture tests/stacks/Pulumi.dev-groups.yaml
plans, renders and checks clean; Dex gets each static user's groups, or passes an OIDC
provider's on; a provider group is followed live at the gateway; `plan --against` shows the
bindings that go when a member leaves a stack group; GKE gets Google Groups for RBAC; the broken
stacks of groups are refused with their paths and messages."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.istio import MESH_CONFIG
from components.kubeflow import dex_config
from components.profiles.args import team_args
from components.profiles.team import team_objects
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.config import load, validate
from stackmodel.stack import PlatformConfig
from tests.conftest import base_gke, with_changes
from tests.support import mirror
from tests.support.mesh import Request, istio_decision, mesh_path_normalization, normalized
from tests.support.renders import rendered
from tooling.check import check
from tooling.cli import EXIT_CONFIG_ERROR, main, plan_json
from tooling.plan import Plan, evaluate
from tooling.removals import previous_resources, removals, report

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "stacks" / "Pulumi.dev-groups.yaml"
BROKEN = REPO / "tests" / "corpus" / "broken"
K = "mlplatform:components"
GATEWAY_LABELS = {"app": "istio-ingressgateway", "istio": "ingressgateway"}


@cache
def fixture_plan() -> Plan:
    return evaluate(load(str(FIXTURE)), "dev-groups")


@mirror.needed
def test_the_fixture_renders_and_checks_clean() -> None:
    assert check(rendered("dev-groups")) == []


def test_dex_gives_each_static_user_the_stack_groups_they_are_in() -> None:
    config = yaml.safe_load(dex_config(load(str(FIXTURE)).components[KUBEFLOW].auth))
    groups = {p["email"]: p.get("groups") for p in config["staticPasswords"]}
    assert groups["eve@acme.com"] == ["ml-nlp@acme.com", "ml-readers@acme.com"]
    assert groups["oli@acme.com"] == ["nlp-leads@acme.com"]
    assert groups["sam@acme.com"] is None and groups["kim@acme.com"] is None


OKTA_GROUPS = {
    f"{K}.kubeflow": {
        "auth": {
            "kind": "oidc",
            "oidc": {"issuer": "https://acme.okta.com", "clientId": "x", "groups": {"scopes": ["groups"], "claim": "roles", "userInfo": True}},
            "allowedDomains": ["acme.com"],
            "hostname": "kubeflow.acme.com",
            "groups": [{"name": "ml-nlp", "source": "provider", "members": ["eve@acme.com", "bo@acme.com"]}, {"name": "ml-readers", "source": "provider", "members": ["vic@acme.com", "bo@acme.com"]}],
        }
    },
    "mlplatform:teams": [
        {
            "name": "nlp",
            "owner": "kim@acme.com",
            "contributors": [{"email": "ana@acme.com", "role": "view"}, {"group": "ml-nlp", "role": "edit"}, {"group": "ml-readers", "role": "view"}],
        }
    ],
}


def okta() -> PlatformConfig:
    return validate(with_changes(base_gke(), OKTA_GROUPS), "okta.yaml")


def test_dex_passes_an_oidc_providers_groups_on() -> None:
    (connector,) = yaml.safe_load(dex_config(okta().components[KUBEFLOW].auth))["connectors"]
    assert connector["config"]["insecureEnableGroups"] is True
    assert connector["config"]["scopes"] == ["openid", "profile", "email", "groups"]
    assert connector["config"]["claimMapping"] == {"groups": "roles"} and connector["config"]["getUserInfo"] is True


def gateway_policy(config: PlatformConfig) -> dict[str, Any]:
    objects = team_objects(team_args(config, config.teams[0]))
    (policy,) = [o for o in objects if o["kind"] == "AuthorizationPolicy" and o["metadata"]["namespace"] == "istio-system"]
    return policy


@pytest.mark.parametrize(
    ("email", "groups", "method", "path", "allowed"),
    [
        ("eve@acme.com", ["ml-nlp"], "POST", "/jupyter/api/namespaces/nlp/notebooks", True),
        ("eve@acme.com", ["other"], "GET", "/jupyter/api/namespaces/nlp/notebooks", False),  # left ml-nlp at the provider
        ("eve@acme.com", [], "GET", "/notebook/nlp/nb/", False),
        ("vic@acme.com", ["ml-readers"], "GET", "/volumes/api/namespaces/nlp/pvcs", True),
        ("vic@acme.com", [], "GET", "/volumes/api/namespaces/nlp/pvcs", False),
        # bo is in both: without ml-nlp he still reads through ml-readers, but writes no more.
        ("bo@acme.com", ["ml-readers"], "GET", "/tensorboards/api/namespaces/nlp/tensorboards", True),
        ("bo@acme.com", ["ml-readers"], "POST", "/tensorboards/api/namespaces/nlp/tensorboards", False),
        ("bo@acme.com", ["ml-readers"], "GET", "/notebook/nlp/nb/api/terminals/1", False),
        # People the stack lists and everyone elsewhere are the sidecars' and web apps' business.
        ("ana@acme.com", [], "GET", "/jupyter/api/namespaces/nlp/notebooks", True),
        ("eve@acme.com", [], "GET", "/jupyter/api/namespaces/vision/notebooks", True),
    ],
)
def test_the_gateway_follows_a_provider_groups_claim_live(email: str, groups: list[str], method: str, path: str, allowed: bool) -> None:
    claims: dict[str, str | list[str]] = {"email": email, **({"groups": groups} if groups else {})}
    decision = istio_decision([gateway_policy(okta())], "istio-system", GATEWAY_LABELS, Request(method, path, 8080, claims=claims))
    assert decision.allowed is allowed, decision.why


def mesh_normalization(stack: str) -> str:
    (mesh,) = [r.obj for r in rendered(stack).objects if (r.obj["kind"], r.obj["metadata"].get("namespace"), r.obj["metadata"]["name"]) == MESH_CONFIG]
    return mesh_path_normalization(mesh)


@pytest.mark.parametrize("path", ["/jupyter/api/namespaces%2Fnlp/notebooks", "/jupyter/api/namespaces%2fnlp/notebooks", "/jupyter//api/namespaces/nlp/notebooks", "/jupyter/api/namespaces/vision/..%2Fnlp/notebooks"])
def test_an_encoded_or_doubled_slash_does_not_pass_the_live_check(path: str) -> None:
    """The web app behind the gateway (gunicorn) decodes %2F: the mesh must decode it before the
    policy looks, or eve, out of ml-nlp at the provider, reaches nlp's notebooks API."""
    claims: dict[str, str | list[str]] = {"email": "eve@acme.com", "groups": ["other"]}
    policy = gateway_policy(okta())

    def decision(normalization: str) -> bool:
        return istio_decision([policy], "istio-system", GATEWAY_LABELS, Request("POST", normalized(path, normalization), 8080, claims=claims)).allowed

    assert mesh_normalization("dev-groups") == "DECODE_AND_MERGE_SLASHES"
    assert decision(mesh_normalization("dev-groups")) is False
    assert decision("BASE") is True  # why: Istio's default leaves the path undecoded


def test_stack_groups_need_no_live_check_at_the_gateway() -> None:
    """The fixture's groups are the stack's: its members change only with the stack."""
    objects = [o for r in fixture_plan().resources if (o := r.inputs) and o.get("kind") == "AuthorizationPolicy"]
    assert any(o["metadata"]["name"] == "group-ml-nlp-acme-com-clusterrole-edit" for o in objects)
    assert not [o for o in objects if o["metadata"]["name"].startswith("team-")]


def test_plan_against_shows_the_bindings_that_go_when_a_member_leaves_a_stack_group() -> None:
    before = fixture_plan()
    raw = yaml.safe_load(FIXTURE.read_text())["config"]
    auth = raw[f"{K}"]["kubeflow"]["auth"]
    auth["groups"] = [g if g["name"] != "ml-readers@acme.com" else {**g, "members": ["eve@acme.com"]} for g in auth["groups"]]
    after = evaluate(validate(raw, "dev-groups.yaml"), "dev-groups")
    found = removals(previous_resources(json.loads(plan_json(before))), after)
    lines = report(found, "before.json")
    assert {r.name for r in found.access_removed} == {"nlp/user-vic-acme-com-clusterrole-view", "vision/user-vic-acme-com-clusterrole-view"}
    assert "access that goes: 2 bindings of teams that stay (a person left a group or the team)" in lines
    assert "   RoleBinding nlp/user-vic-acme-com-clusterrole-view" in lines
    assert not found.alarming()


def test_without_a_security_group_gke_hands_rbac_no_google_groups() -> None:
    """The fixture's groups are the stack's; Google Groups for RBAC is for cloudIdentity groups
    (tests/test_cloud_identity_groups.py)."""
    (cluster,) = fixture_plan().of_type("gcp:container/cluster:Cluster")
    assert "authenticatorGroupsConfig" not in cluster.inputs


@pytest.mark.parametrize(
    ("name", "path", "message"),
    [
        ("group-source-unknown", f"{K}.kubeflow.auth.groups[0].source", "Input should be 'stack', 'provider' or 'cloudIdentity' (got 'ldap')"),
        ("group-sign-in-sends-none", f"{K}.kubeflow.auth.groups[0].source", "this stack signs in with Google, whose ID token carries no groups claim; use source: cloudIdentity"),
        ("group-cloud-identity-on-kind", f"{K}.kubeflow.auth.groups[0].source", "Cloud Identity is read through the Google provider, on gke stacks only; on kind list the group's members with source: stack"),
        ("group-cloud-identity-with-members", f"{K}.kubeflow.auth.groups[0].members", "its members are read from Cloud Identity at `pulumi up`, so a list here would be a second truth"),
        ("group-person-binding-collision", "mlplatform:teams[1].contributors[2].group", "both would be the binding 'user-bo-acme-com-clusterrole-edit'; remove the person's entry (the group grants it)"),
    ],
)
def test_broken_group_stacks_are_refused_with_path_and_fix(name: str, path: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(BROKEN / f"{name}.yaml")]) == EXIT_CONFIG_ERROR
    err = capsys.readouterr().err
    assert f"  - {path}: " in err and message in err, err
