"""One rule namespace (docs/development.md, "Where a rule goes"): every rule has an ID, the IDs
are unique across the three homes, and each home holds only its kind of rule: facts of the
stack file in the loader (the schema's model validators and stackmodel/rules/), facts only Pulumi
knows in the policy pack (policy/rules.py), facts only the full render shows in `check`
(tooling/check/)."""

from __future__ import annotations

import inspect
import typing
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import BaseModel

from policy import rules as policy
from stackmodel import rules as loader
from stackmodel.registry import COMPONENTS, settings_model
from stackmodel.schema.common import rule_id
from stackmodel.stack import PlatformConfig
from tooling import check


def models() -> list[type[BaseModel]]:
    """Every model of the stack file, from the root down (unions and lists opened; the
    components' settings from the list the root of mlplatform:components is built from)."""
    found: list[type[BaseModel]] = []

    def inner(annotation: Any) -> Iterator[type[BaseModel]]:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield annotation
        for arg in typing.get_args(annotation):
            yield from inner(arg)

    pending: list[type[BaseModel]] = [PlatformConfig, settings_model(COMPONENTS)]
    while pending:
        model = pending.pop()
        if model in found:
            continue
        found.append(model)
        for field in model.model_fields.values():
            pending.extend(inner(field.annotation))
    return found


def schema_rules() -> list[tuple[str | None, str]]:
    """(ID, where) of every rule of the schema: its models' `after` validators, which judge a
    model's parsed fields together (a `before` or `wrap` validator shapes the input: the list
    of components fills in their defaults and picks their models)."""
    return [
        (rule_id(decorator.func), f"{model.__module__}.{model.__qualname__}.{name}")
        for model in models()
        for name, decorator in model.__pydantic_decorators__.model_validators.items()
        if decorator.info.mode == "after"
    ]


def homes() -> dict[str, list[str]]:
    """Every rule ID, by home."""
    return {
        "schema (stackmodel/schema/)": [rid or where for rid, where in schema_rules()],
        "loader (stackmodel/rules/)": [r.name for r in (*loader.RULES, *loader.WARNINGS)],
        "policy pack (policy/rules.py)": [r.name for r in policy.RULES],
        "check (tooling/check/)": [r.name for r in check.RULES],
    }


def first_parameter(function: Callable[..., Any]) -> Any:
    """The type of what a rule's check reads (its first parameter)."""
    name = next(iter(inspect.signature(function).parameters))
    return typing.get_type_hints(function)[name]


def test_the_walk_finds_the_schemas_models() -> None:
    names = {m.__name__ for m in models()}
    assert {"GkeClusterConfig", "KindClusterConfig", "GpuPool", "Team", "PipelinesCloudSql", "KubeflowAuth"} <= names


def test_every_schema_rule_has_an_id() -> None:
    unnamed = [where for rid, where in schema_rules() if not rid]
    assert unnamed == [], "model validators without @rule(<id>) (stackmodel/schema/common.py rule): " + ", ".join(unnamed)


def test_rule_ids_are_unique_across_the_homes() -> None:
    everywhere = Counter(rid for ids in homes().values() for rid in ids)
    twice = {rid: [home for home, ids in homes().items() if rid in ids] for rid, n in everywhere.items() if n > 1}
    assert twice == {}


def test_every_rule_is_described() -> None:
    for table in (loader.RULES, loader.WARNINGS, policy.RULES, check.RULES):
        assert all(r.description for r in table)


def test_each_home_holds_only_its_kind() -> None:
    """The loader's rules read the stack model, the policy pack's what Pulumi registered, check's the render."""
    wrong = [
        f"{home}: {r.name} reads {first_parameter(r.check)}, not {kind.__name__}"
        for home, table, kind in (
            ("stackmodel/rules/", (*loader.RULES, *loader.WARNINGS), PlatformConfig),
            ("policy/rules.py", policy.RULES, policy.StackView),
            ("tooling/check/", check.RULES, check.Platform),
        )
        for r in table
        if first_parameter(r.check) is not kind
    ]
    assert wrong == []


def test_the_autoprovisioning_limits_are_judged_once_from_the_stack() -> None:
    """Written twice until now (a loader rule and a policy rule over the plan): a fact of the stack file."""
    found = {home for home, ids in homes().items() if "autoprovisioning-covers-gpus" in ids}
    assert found == {"loader (stackmodel/rules/)"}
