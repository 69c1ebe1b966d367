"""`plan --against`: what a plan would delete of what a stack had, and the loud exit when a
team or a protected resource would go. Plans are cut from the shipped kind plan (no second
evaluation): a plan without a team is that plan minus the team's resources."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from tooling.cli import EXIT_DESTRUCTIVE, against, plan_json
from tooling.plan import Plan
from tooling.removals import TEAM_TYPE, previous_resources, removals


def without_team(plan: Plan, team: str) -> Plan:
    gone = {r.urn for r in plan.resources if r.type == TEAM_TYPE and r.name == team}
    gone |= {r.urn for r in plan.resources if any(a.urn in gone for a in plan.ancestors(r))}
    return replace(plan, resources=[r for r in plan.resources if r.urn not in gone])


def state_export(plan: Plan, stack: str) -> dict[str, object]:
    """What `pulumi stack export` prints for a deployed `plan` (the fields we read)."""

    def moved(urn: str) -> str:
        return urn.replace(f"urn:pulumi:{plan.stack}::", f"urn:pulumi:{stack}::")

    resources = [
        {"urn": moved(r.urn), "type": r.type, "parent": moved(r.parent or ""), "protect": r.protect, "retainOnDelete": r.retain_on_delete}
        for r in plan.resources
    ]
    return {"version": 3, "deployment": {"resources": [{"urn": "urn:pulumi:x::mlplatform::pulumi:pulumi:Stack::mlplatform-x", "type": "pulumi:pulumi:Stack"}, *resources]}}


def test_the_same_plan_deletes_nothing(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    found = removals(previous_resources(json.loads(plan_json(plan))), plan)
    assert found.deleted == [] and not found.alarming()


def test_a_dropped_team_is_reported_with_its_protected_data(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    found = removals(previous_resources(state_export(plan, "acme-kind")), without_team(plan, "research"))
    assert list(found.teams) == ["research"]
    protected = {(r.type, r.name) for r in found.protected}
    assert protected == {
        ("kubernetes:core/v1:Namespace", "research/research"),
        ("kubernetes:kubeflow.org/v1:Profile", "research/research"),
        ("kubernetes:core/v1:PersistentVolumeClaim", "research/checkpoints"),  # kind: the team's checkpoints
    }
    namespace = next(r for r in found.protected if r.type.endswith("Namespace"))
    assert namespace.retain_on_delete, "a deliberate removal still keeps the volumes"
    assert found.alarming() and not found.alarming(["research"])


def test_cli_exits_4_until_the_removal_is_allowed(shipped_plan: Callable[[str], Plan], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = shipped_plan("kind")
    previous = tmp_path / "state.json"
    previous.write_text(json.dumps(state_export(plan, "kind")))
    assert against(without_team(plan, "research"), str(previous), []) == EXIT_DESTRUCTIVE
    err = capsys.readouterr().err
    assert "!! TEAM research WOULD BE REMOVED" in err and "pulumi state unprotect 'urn:pulumi:kind::" in err
    assert against(without_team(plan, "research"), str(previous), ["research"]) == 0


def test_a_file_that_is_neither_is_a_clear_error(tmp_path: Path, shipped_plan: Callable[[str], Plan], capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "x.json"
    bad.write_text("[]")
    assert against(shipped_plan("kind"), str(bad), []) == 2
    assert "neither a state export (pulumi stack export) nor a plan" in capsys.readouterr().err


def test_what_holds_data_is_protected(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("dev")
    protected = {(r.type.rsplit(":", 1)[-1], r.name, r.retain_on_delete) for r in plan.resources if r.protect}
    assert ("Namespace", "vision/vision", True) in protected and ("Profile", "vision/vision", False) in protected
    assert ("Namespace", "monitoring", True) in protected
    assert ("Bucket", "vision-bucket", True) in protected, "datasets outlive the team"
