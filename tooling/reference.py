"""The stack-file reference (docs/reference.md), generated from the schema so the two cannot drift.
Every list refuses a repeated entry; the reference says so once, above the tables."""

from __future__ import annotations

import enum
import types
import typing
from typing import Any

import annotated_types
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from stackmodel import schema
from stackmodel.registry import COMPONENTS, Components, settings_model
from stackmodel.schema.chart_values import CHART_VALUES_RULE
from stackmodel.stack import PlatformConfig


def _kind(metadata: Any) -> str | None:
    """What an annotated type says its values are (schema.ValueKind), where str or int says too little."""
    kinds = [m.name for m in metadata if isinstance(m, schema.ValueKind)]
    return kinds[-1] if kinds else None


def _type_name(annotation: Any, metadata: Any = ()) -> str:
    if _kind(metadata):
        return str(_kind(metadata))
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        names = [_type_name(a) for a in args if a is not type(None)]
        suffix = " (optional)" if type(None) in args else ""
        return " or ".join(names) + suffix
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin is typing.Annotated:
        return _type_name(args[0], args[1:])
    if origin in (list, tuple):
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return f"map of {_type_name(args[0])} to {_type_name(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " \\| ".join(f"`{m.value}`" for m in annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    return getattr(annotation, "__name__", str(annotation))


def _range(field: Any) -> str:
    """A number field's bounds, as ` (1 to 100)`, from its Field(ge=..., le=...)."""
    low = next((m.ge for m in field.metadata if isinstance(m, annotated_types.Ge)), None)
    high = next((m.le for m in field.metadata if isinstance(m, annotated_types.Le)), None)
    if low is None and high is None:
        return ""
    if high is None:
        return f" (at least {low})"
    return f" ({low} to {high})" if low is not None else f" (at most {high})"


def _default(field: Any) -> str:
    if field.is_required():
        return "required"
    value = field.default_factory() if field.default_factory else field.default
    if value is PydanticUndefined or value is None:
        return "-"
    if isinstance(value, BaseModel) or (value == {} and _inner_models(field.annotation) == [Components]):
        return "see below"
    if isinstance(value, enum.Enum):
        value = value.value
    return f"`{value}`" if value not in ([], {}, "") else "empty"


def _inner_models(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation names (unions, lists and dicts opened), in order."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _inner_models(arg)]


def models() -> list[type[BaseModel]]:
    """Every model of the stack file, each after the one that names it (its fields in order);
    `mlplatform:components` as the list of components makes it (stackmodel/registry.py)."""
    found: list[type[BaseModel]] = []

    def visit(model: type[BaseModel]) -> None:
        model = settings_model(COMPONENTS) if model is Components else model
        if model in found:
            return
        found.append(model)
        for field in model.model_fields.values():
            for inner in _inner_models(field.annotation):
                visit(inner)

    visit(PlatformConfig)
    return found


RULES_FOR_EVERY_KEY = (
    "Values have their YAML type: a number is written as a number and a boolean as `true` or `false` "
    '(`max: "4"` or `enabled: "true"` is refused, as are text fields left empty), and every list takes each entry once '
    "(a repeated entry is refused, naming its index). E-mail addresses are kept exactly as written and must be "
    "spelled alike wherever one person appears. " + CHART_VALUES_RULE
)


def reference() -> str:
    sections: list[str] = [RULES_FOR_EVERY_KEY]
    for model in models():
        doc = " ".join((model.__doc__ or "").strip().split("\n\n")[0].split())
        lines = [f"## {model.__name__}", "", doc, ""]
        if model.model_fields:
            lines += ["| key | type | default | notes |", "|---|---|---|---|"]
            for name, field in model.model_fields.items():
                key = field.alias or name
                notes = (field.description or "").replace("|", "\\|")
                kind = _type_name(field.annotation, field.metadata)
                optional = kind.endswith(" (optional)")
                kind = kind.removesuffix(" (optional)") + _range(field) + (" (optional)" if optional else "")
                lines.append(f"| `{key}` | {kind} | {_default(field)} | {notes} |")
        sections.append("\n".join(lines))
    return "\n\n".join(sections)
