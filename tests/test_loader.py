"""The stack loader: what it refuses before the schema (the file, its keys, plain-text
secrets) and how it reads the ESC environments a stack imports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

import tooling.cli
from stackmodel import config as stack_config
from stackmodel.config import ConfigError, Problem, load_stack, read_stack
from stackmodel.esc import merge
from stackmodel.secrets import is_encrypted
from stackmodel.stack import PlatformConfig
from tooling.cli import EXIT_CONFIG_ERROR, main
from tooling.plan import Plan

KIND = "config:\n  mlplatform:cluster: {kind: kind}\n  mlplatform:components: {monitoring: {enabled: false}, kubeflow: {auth: {staticUsers: [a@acme.com]}}}\n"
GKE_WITHOUT_PROJECT = {
    "mlplatform:cluster": {"kind": "gke", "name": "ml-x", "location": "us-central1"},
    "mlplatform:components": {"monitoring": {"enabled": False}, "kubeflow": {"auth": {"staticUsers": ["a@acme.com"]}}},
    "mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "bucket": {}}],
}


def problems_of(tmp_path: Path, content: str | bytes, **esc: Path) -> list[tuple[str, str]]:
    path = tmp_path / "Pulumi.x.yaml"
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    with pytest.raises(ConfigError) as caught:
        load_stack(str(path), esc or None)
    return [(p.path, p.message) for p in caught.value.problems]


def stack(tmp_path: Path, document: dict[str, Any], name: str = "Pulumi.x.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document))
    return str(path)


# --- the file -------------------------------------------------------------------------


def test_a_duplicate_key_names_both_lines(tmp_path: Path) -> None:
    found = problems_of(tmp_path, KIND + "  mlplatform:teams:\n    - {name: a, owner: a@x.com, name: b}\n  mlplatform:teams: []\n")
    assert ("mlplatform:teams[0].name", "duplicate key (lines 5 and 5): YAML keeps only the last, so line 5's value is silently lost; merge the two into one") in found
    assert any(p == "mlplatform:teams" and "lines 4 and 6" in m for p, m in found)


def test_merge_keys_are_not_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text("config:\n  mlplatform:cluster: &base {kind: kind, name: a}\n  mlplatform:components: {<<: {}, kueue: {}, kubeflow: {auth: {staticUsers: [a@acme.com]}}}\n")
    assert load_stack(str(path)).config.cluster.name == "a"


@pytest.mark.parametrize(
    ("key", "kind"), [("on", "a boolean"), ("yes", "a boolean"), ("1", "a number"), ("null", "null")]
)
def test_a_key_that_is_not_a_string_says_what_yaml_made_of_it(tmp_path: Path, key: str, kind: str) -> None:
    found = problems_of(tmp_path, KIND + f"  mlplatform:sources: {{{key}: x}}\n")
    assert found == [
        (
            f"mlplatform:sources.{key}",
            f"key {key!r} on line 4 is read as {kind}, not a string (YAML 1.1 takes unquoted on/off/yes/no and "
            f"numbers so); quote it: '{key}':",
        )
    ]


@pytest.mark.parametrize(
    ("encoding", "name"), [("utf-16", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32")]
)
def test_a_file_that_is_not_utf8_is_refused_with_how_to_resave(tmp_path: Path, encoding: str, name: str) -> None:
    raw = KIND.encode(encoding)
    if encoding == "utf-16-be":
        raw = b"\xfe\xff" + raw
    [(path, message)] = problems_of(tmp_path, raw)
    assert path == "file" and message.startswith(f"the file is {name}") and "save it as UTF-8" in message


def test_utf16_without_a_byte_order_mark(tmp_path: Path) -> None:
    [(path, message)] = problems_of(tmp_path, KIND.encode("utf-16-le"))
    assert (path, message.split(";")[0]) == ("file", "the file is UTF-16 without a byte-order mark")


def test_latin1_names_the_byte_and_line(tmp_path: Path) -> None:
    [(path, message)] = problems_of(tmp_path, (KIND + "  # Müller\n").encode("latin-1"))
    assert path == "file" and message.startswith("not UTF-8: byte 0xfc on line 4")


def test_a_utf8_byte_order_mark_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.x.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + KIND.encode())
    assert load_stack(str(path)).config.cluster.kind == "kind"


def test_top_level_keys(tmp_path: Path) -> None:
    found = problems_of(tmp_path, KIND + "mlplatform:teams: []\nconfgi: {}\nteams: []\n")
    assert found == [
        ("mlplatform:teams", "a config key at the top level, where Pulumi ignores it; indent it under 'config:'"),
        ("confgi", "not a stack-file key (a stack file has secretsprovider, encryptedkey, encryptionsalt, config, environment); did you mean 'config'?"),
        ("teams", "not a stack-file key (a stack file has secretsprovider, encryptedkey, encryptionsalt, config, environment); a config key goes under 'config:' with its namespace, e.g. mlplatform:teams"),
    ]


# --- the keys -------------------------------------------------------------------------


def test_keys_nothing_reads(tmp_path: Path) -> None:
    found = problems_of(tmp_path, KIND + "  mlplatfrom:teams: []\n  teams: []\n  project: x\n  acme:owner: me\n")
    assert found == [
        ("mlplatfrom:teams", "unknown config namespace 'mlplatfrom': nothing reads this key, so it would be ignored; did you mean mlplatform:teams?"),
        ("teams", "a config key needs its namespace (Pulumi reads `<namespace>:<name>`); write mlplatform:teams"),
        ("project", "a config key needs its namespace (Pulumi reads `<namespace>:<name>`); write gcp:project"),
        ("acme:owner", "unknown config namespace 'acme': nothing reads this key, so it would be ignored; known namespaces: mlplatform, gcp, kubernetes, random, command, pulumi"),
    ]


def test_the_old_config_spelling_is_read_as_pulumi_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text(KIND + "  mlplatform:config:environment: ci\n  kubernetes:context: kind-x\n")
    assert load_stack(str(path)).config.environment.value == "ci"


# --- secrets --------------------------------------------------------------------------


def test_a_secret_in_plain_text(tmp_path: Path) -> None:
    found = problems_of(tmp_path, KIND + "  mlplatform:oidcClientSecret: hunter2\n")
    assert found == [
        (
            "mlplatform:oidcClientSecret",
            "the client secret of the OIDC connector is in plain text, so anyone who can read the stack config has it; "
            "remove it and set it as a secret: pulumi config set --secret mlplatform:oidcClientSecret VALUE",
        )
    ]


def test_a_retired_secret_in_plain_text_is_to_be_removed(tmp_path: Path) -> None:
    found = problems_of(tmp_path, KIND + "  mlplatform:grafanaAdminPassword: hunter2\n")
    assert found == [
        (
            "mlplatform:grafanaAdminPassword",
            "the retired Grafana admin password (Grafana signs people in through the Kubeflow gateway) is in plain "
            "text, so anyone who can read the stack config has it; remove it: pulumi config rm mlplatform:grafanaAdminPassword",
        )
    ]


def test_secrets_as_pulumi_writes_them(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text(
        KIND
        + "  mlplatform:grafanaAdminPassword: {secure: v1:abc}\n"
        + "  mlplatform:dexPasswordHashes:\n    a@x.com: {secure: v1:def}\n    b@x.com: {secure: v1:ghi}\n"
    )
    load_stack(str(path))
    assert is_encrypted({"a": {"secure": "x"}}) and not is_encrypted({"a": {"secure": "x"}, "b": "$2y$12$plain"})


def test_an_encrypted_value_the_schema_must_read(tmp_path: Path) -> None:
    [(path, message)] = problems_of(tmp_path, KIND + "  mlplatform:environment: {secure: v1:abc}\n")
    assert path == "mlplatform:environment" and message.startswith("encrypted, but not a secret key")


# --- ESC environments -----------------------------------------------------------------


def test_a_project_from_an_environment_not_resolved_is_not_missing(tmp_path: Path) -> None:
    loaded = load_stack(stack(tmp_path, {"environment": ["acme/prod"], "config": GKE_WITHOUT_PROJECT}))
    assert loaded.config.project == "[unknown]"
    assert loaded.notes == (
        Problem("gcp:project", "not in the stack file; ESC environment acme/prod may set it, which is not resolved offline (shown as [unknown])"),
        Problem(
            "environment",
            "imports ESC environment acme/prod, not resolved offline: keys it sets are not in this view; pass "
            "--esc-file acme/prod=FILE with its values (`esc open acme/prod --format yaml > FILE`)",
        ),
    )


def test_without_environments_the_project_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_stack(stack(tmp_path, {"config": GKE_WITHOUT_PROJECT}))
    assert [p.path for p in caught.value.problems] == ["gcp:project"]


def test_a_required_key_an_environment_may_hold_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_stack(stack(tmp_path, {"environment": ["acme/prod"], "config": {"gcp:project": "acme-ml"}}))
    [problem] = caught.value.problems
    assert problem.path == "mlplatform:cluster"
    assert "ESC environment acme/prod may set it, but the offline tools cannot open it: pass --esc-file acme/prod=FILE" in problem.message


def test_an_environment_from_esc_open_output(tmp_path: Path) -> None:
    opened = tmp_path / "prod.yaml"
    opened.write_text(json.dumps({"pulumiConfig": {"gcp:project": "acme-ml-prod", "environment": "staging"}, "environmentVariables": {}}))
    loaded = load_stack(stack(tmp_path, {"environment": ["acme/prod"], "config": GKE_WITHOUT_PROJECT}), {"acme/prod": opened})
    assert loaded.config.project == "acme-ml-prod" and loaded.config.environment.value == "staging"
    assert loaded.notes == ()


def test_an_environment_definition_and_its_imports_merge_in_order(tmp_path: Path) -> None:
    base = tmp_path / "base.yaml"
    base.write_text("values:\n  pulumiConfig:\n    gcp:project: acme-base\n    mlplatform:cluster: {releaseChannel: RAPID, privateNodes: false}\n")
    prod = tmp_path / "prod.yaml"
    prod.write_text("imports: [acme/base]\nvalues:\n  pulumiConfig:\n    gcp:project: acme-ml-prod\n    mlplatform:cluster: {releaseChannel: STABLE}\n")
    loaded = load_stack(stack(tmp_path, {"environment": ["acme/prod"], "config": GKE_WITHOUT_PROJECT}), {"acme/prod": prod, "acme/base": base})
    cluster = loaded.config.cluster
    assert loaded.config.project == "acme-ml-prod"
    assert (cluster.release_channel.value, cluster.private_nodes, cluster.name) == ("STABLE", False, "ml-x")  # type: ignore[union-attr]


def test_an_inline_definition_and_expressions(tmp_path: Path) -> None:
    inline = {"imports": [], "values": {"pulumiConfig": {"gcp:project": "acme-inline", "mlplatform:environment": "${env}"}}}
    loaded = load_stack(stack(tmp_path, {"environment": inline, "config": GKE_WITHOUT_PROJECT}))
    assert loaded.config.project == "acme-inline"
    assert loaded.notes == (
        Problem(
            "mlplatform:environment",
            "set by this stack file's inline ESC environment to an expression the offline tools do not evaluate; not in this view",
        ),
    )


def test_a_plain_secret_in_an_inline_definition(tmp_path: Path) -> None:
    inline = {"values": {"pulumiConfig": {"mlplatform:grafanaAdminPassword": "hunter2"}}}
    [(path, _)] = problems_of(tmp_path, yaml.safe_dump({"environment": inline, "config": yaml.safe_load(KIND)["config"]}))
    assert path == "environment.values.pulumiConfig.mlplatform:grafanaAdminPassword"


@pytest.mark.parametrize(
    ("environment", "path", "message"),
    [
        ("prod", "environment", "'prod': a list of ESC environments to import (e.g. [acme/base])"),
        ([""], "environment[0]", "'' is not an environment name such as acme/base"),
        ({"import": ["acme/x"]}, "environment.import", "an environment definition has imports: and values:"),
    ],
)
def test_an_environment_value_of_the_wrong_shape(tmp_path: Path, environment: Any, path: str, message: str) -> None:
    found = problems_of(tmp_path, yaml.safe_dump({"environment": environment, "config": yaml.safe_load(KIND)["config"]}))
    assert any(p == path and message in m for p, m in found), found


def test_an_esc_file_for_an_environment_not_imported(tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text("pulumiConfig: {}\n")
    found = problems_of(tmp_path, KIND, **{"acme/other": other})
    assert found == [("--esc-file acme/other", "this stack does not import acme/other (its imports: none)")]


def test_merge_is_json_merge_patch() -> None:
    assert merge({"a": {"b": 1, "c": 2}, "d": 1}, {"a": {"b": 3}, "d": None}) == {"a": {"b": 3, "c": 2}}


def test_cli_notes_what_it_cannot_resolve_and_plans(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    planned: list[PlatformConfig] = []

    def evaluate(config: PlatformConfig, name: str, cloud_identity: object = None) -> Plan:
        planned.append(config)
        return Plan(name, [])

    monkeypatch.setattr(tooling.cli, "evaluate", evaluate)
    path = stack(tmp_path, {"environment": ["acme/prod"], "config": GKE_WITHOUT_PROJECT})
    assert main(["plan", path]) == 0
    out, err = capsys.readouterr()
    assert "note: gcp:project: not in the stack file; ESC environment acme/prod may set it" in err
    assert out.startswith("stack x: 0 resources")
    assert [c.project for c in planned] == ["[unknown]"]


def test_cli_esc_file_needs_a_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "kind", "--esc-file", "prod.yaml"]) == EXIT_CONFIG_ERROR
    assert "'prod.yaml': give NAME=FILE" in capsys.readouterr().err


# --- pulumi up ------------------------------------------------------------------------


class _NoResources(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        raise AssertionError(f"registered {args.typ}")

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, None


def _running(stack_name: str, values: dict[str, Any], secret: list[str]) -> None:
    pulumi.runtime.set_mocks(_NoResources(), project="mlplatform", stack=stack_name, preview=False)
    config = {k: v if isinstance(v, str) else json.dumps(v) for k, v in values.items()}
    pulumi.runtime.set_all_config(config, secret_keys=secret)
    stack_config.running_stack_config()


def _kind_values() -> dict[str, Any]:
    raw = stack_config.read_stack_file(stack_config.stack_file("kind"))
    users = raw["mlplatform:components"]["kubeflow"]["auth"]["staticUsers"]
    return {**raw, "mlplatform:dexPasswordHashes": dict.fromkeys(users, "$2y$12$x"), "mlplatform:grafanaAdminPassword": "pw"}


def test_pulumi_up_stops_on_a_secret_that_arrives_in_plain_text() -> None:
    with pytest.raises(pulumi.RunError) as caught:
        _running("loader-test", _kind_values(), secret=["mlplatform:dexPasswordHashes"])
    assert "mlplatform:grafanaAdminPassword: the retired Grafana admin password" in str(caught.value)
    _running("loader-test", _kind_values(), secret=["mlplatform:dexPasswordHashes", "mlplatform:grafanaAdminPassword"])


def test_pulumi_up_judges_the_stack_file_as_the_offline_tools_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "Pulumi.fork.yaml").write_text(KIND + "  mlplatfrom:teams: []\n")
    monkeypatch.setattr(stack_config, "STACKS_DIR", tmp_path)
    with pytest.raises(pulumi.RunError) as caught:
        _running("fork", {"mlplatform:cluster": {"kind": "kind"}}, secret=[])
    assert "mlplatfrom:teams: unknown config namespace 'mlplatfrom'" in str(caught.value)


def test_read_stack_reports_without_raising(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text(KIND + "  teams: []\n")
    resolved, problems = read_stack(path)
    assert [p.path for p in problems] == ["teams"] and resolved.config["mlplatform:cluster"] == {"kind": "kind"}
