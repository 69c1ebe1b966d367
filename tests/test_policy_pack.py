"""The policy pack as the Pulumi CLI drives it: an AnalyzeStack request, as the engine sends
it (secrets marked, preview unknowns as sentinels), answered by pulumi_policy's own analyzer
service running our policies. No CLI needed; the request is built from a recorded plan.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2
from pulumi.runtime import proto
from pulumi_policy import EnforcementLevel, StackValidationPolicy
from pulumi_policy.policy import _PolicyAnalyzerServicer
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from facts.resource_types import STACK
from policy.pack import PACK_NAME, keep_secrets_marked, policies
from policy.rules import RULES, SECRET
from tooling.plan import Plan

SIG = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
KUBECONFIG = "apiVersion: v1\nusers:\n- user:\n    client-key-data: LS0tLS1CRUdJTi...\n"


def marked(value: Any) -> Any:
    """A value as the engine marshals a secret (KeepSecrets: true)."""
    return {SIG: SECRET_SIG, "value": value}


def wire(value: Any) -> Any:
    """The plan's masked leaves back into engine-marked secrets."""
    if value == SECRET:
        return marked("s3cr3t")
    if isinstance(value, dict):
        return {k: wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [wire(v) for v in value]
    return value


def struct(props: dict[str, Any]) -> struct_pb2.Struct:
    return json_format.ParseDict(props, struct_pb2.Struct())


def request(plan: Plan, outputs: dict[str, Any], edit: Callable[[str, dict[str, Any]], dict[str, Any]] = lambda t, p: p) -> Any:
    resources = [
        proto.AnalyzerResource(
            urn=r.urn,
            type=r.type,
            name=r.name,
            properties=struct(edit(r.type, wire(r.inputs))),
            options=proto.AnalyzerResourceOptions(protect=r.protect),
        )
        for r in plan.resources
    ]
    stack_urn = f"urn:pulumi:{plan.stack}::mlplatform::{STACK}::mlplatform-{plan.stack}"
    resources.append(proto.AnalyzerResource(urn=stack_urn, type=STACK, name="stack", properties=struct(outputs)))
    return proto.AnalyzeStackRequest(resources=resources)


def analyze(req: Any) -> list[Any]:
    keep_secrets_marked()
    service = _PolicyAnalyzerServicer(PACK_NAME, "0.1.0", policies(), EnforcementLevel.MANDATORY)
    return list(service.AnalyzeStack(req, None).diagnostics)


def test_every_rule_is_a_mandatory_stack_policy() -> None:
    pack = policies()
    assert [p.name for p in pack] == [r.name for r in RULES]
    assert all(isinstance(p, StackValidationPolicy) and p.enforcement_level is EnforcementLevel.MANDATORY for p in pack)


@pytest.mark.parametrize("stack", ["kind", "prod"])
def test_shipped_stack_passes_through_the_analyzer(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan(stack)
    outputs = {**plan.outputs, "kubeconfig": marked(KUBECONFIG)}
    assert analyze(request(plan, outputs)) == []


def test_analyzer_reports_violation_on_the_resource(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("prod")

    def unprotected(type_: str, props: dict[str, Any]) -> dict[str, Any]:
        return {**props, "enableShieldedNodes": False} if type_ == "gcp:container/cluster:Cluster" else props

    [diagnostic] = analyze(request(plan, {**plan.outputs, "kubeconfig": marked(KUBECONFIG)}, unprotected))
    cluster = plan.one("gcp:container/cluster:Cluster", "ml-prod")
    assert diagnostic.policyName == "prod-cluster-hardened" and diagnostic.urn == cluster.urn
    assert "prod cluster needs shielded nodes" in diagnostic.message


def test_plain_kubeconfig_is_caught_and_marked_one_passes(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    [diagnostic] = analyze(request(plan, {**plan.outputs, "kubeconfig": KUBECONFIG}))
    assert diagnostic.policyName == "no-plain-secret-outputs" and diagnostic.urn == ""


def test_preview_unknowns_do_not_fail_a_rule(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("prod")

    def unknown_version(type_: str, props: dict[str, Any]) -> dict[str, Any]:
        return {**props, "version": UNKNOWN_STRING_VALUE} if type_.endswith("helm.sh/v4:Chart") else props

    outputs = {**plan.outputs, "kubeconfig": UNKNOWN_STRING_VALUE}
    assert analyze(request(plan, outputs, unknown_version)) == []


def test_pack_entry_point_serves_the_repo_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    import runpy
    from pathlib import Path

    import policy.pack

    served: list[bool] = []
    monkeypatch.setattr(policy.pack, "serve", lambda: served.append(True))
    runpy.run_path(str(Path(__file__).resolve().parents[1] / "policy" / "__main__.py"))
    assert served == [True]


def test_pack_files_are_complete() -> None:
    from pathlib import Path

    import yaml

    folder = Path(__file__).resolve().parents[1] / "policy"
    manifest = yaml.safe_load((folder / "PulumiPolicy.yaml").read_text())
    assert manifest["runtime"]["name"] == "python" and manifest["version"]
    assert "pulumi-policy" in (folder / "requirements.txt").read_text()


def test_live_components_without_inputs_are_not_blamed(shipped_plan: Callable[[str], Plan]) -> None:
    # Pulumi gives stack policies each resource's outputs; a Helm v4 chart's are its
    # rendered resources, not its version. The pin rule is then left to the offline run.
    plan = shipped_plan("kind")

    def outputs_only(type_: str, props: dict[str, Any]) -> dict[str, Any]:
        return {"resources": []} if type_.endswith(("helm.sh/v4:Chart", "kustomize/v2:Directory")) else props

    assert analyze(request(plan, {**plan.outputs, "kubeconfig": marked(KUBECONFIG)}, outputs_only)) == []


def test_live_chart_with_empty_version_is_still_caught(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")

    def empty(type_: str, props: dict[str, Any]) -> dict[str, Any]:
        return {**props, "version": ""} if type_.endswith("helm.sh/v4:Chart") else props

    found = analyze(request(plan, {**plan.outputs, "kubeconfig": marked(KUBECONFIG)}, empty))
    assert found and {d.policyName for d in found} == {"upstream-pinned"}
