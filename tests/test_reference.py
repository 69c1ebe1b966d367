"""The generated stack-file reference (docs/reference.md) documents every key a stack file may hold."""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel

from stackmodel.registry import COMPONENTS, Components, settings_model
from stackmodel.stack import PlatformConfig
from tooling.reference import models, reference

MODELS = models()


def _models(annotation: Any, found: list[type[BaseModel]]) -> list[type[BaseModel]]:
    """Every model reachable from `annotation`, through lists, maps, unions and optionals; the
    components' root as the list makes it."""
    if annotation is Components:
        annotation = settings_model(COMPONENTS)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation not in found:
            found.append(annotation)
            for field in annotation.model_fields.values():
                _models(field.annotation, found)
        return found
    for arg in typing.get_args(annotation):
        _models(arg, found)
    return found


def test_every_model_of_a_stack_file_is_in_the_reference() -> None:
    missing = [m.__name__ for m in _models(PlatformConfig, []) if m not in MODELS]
    assert missing == []


def test_every_model_and_key_has_a_note() -> None:
    text = reference()
    sections = text.split("\n## ")[1:]
    assert [s.split("\n", 1)[0] for s in sections] == [m.__name__ for m in MODELS]
    undocumented = [s.split("\n", 1)[0] for s in sections if not s.split("\n")[2].strip()]
    assert undocumented == [], "models without a docstring"
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) == sum(len(m.model_fields) for m in MODELS)
    empty = [row.split(" | ")[0] for row in rows if not row.rsplit("|", 2)[1].strip()]
    assert empty == [], "keys without a description"


def test_every_component_of_the_list_is_a_row_and_a_section_in_its_order() -> None:
    text = reference()
    rows = text.split("\n## Components\n", 1)[1].split("\n## ", 1)[0]
    assert [line.split("`")[1] for line in rows.splitlines() if line.startswith("| `")] == [spec.name for spec in COMPONENTS]
    assert all(f"\n## {spec.model.__name__}\n" in text for spec in COMPONENTS)
