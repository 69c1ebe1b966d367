"""The README's stack-file reference, generated from the schema so the two cannot drift."""

from __future__ import annotations

import enum
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from stacks import schema


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        names = [_type_name(a) for a in args if a is not type(None)]
        suffix = " (optional)" if type(None) in args else ""
        return " or ".join(names) + suffix
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin in (list, tuple):
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return f"map of {_type_name(args[0])} to {_type_name(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " \\| ".join(f"`{m.value}`" for m in annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    return getattr(annotation, "__name__", str(annotation))


def _default(field: Any) -> str:
    if field.is_required():
        return "required"
    value = field.default_factory() if field.default_factory else field.default
    if value is PydanticUndefined or value is None:
        return "-"
    if isinstance(value, BaseModel):
        return "see below"
    if isinstance(value, enum.Enum):
        value = value.value
    return f"`{value}`" if value not in ([], {}) else "empty"


MODELS: tuple[type[BaseModel], ...] = (
    schema.PlatformConfig,
    schema.GkeClusterConfig,
    schema.KindClusterConfig,
    schema.NetworkConfig,
    schema.AuthorizedNetwork,
    schema.SystemPool,
    schema.GpuPool,
    schema.GpuSharing,
    schema.Autoprovisioning,
    schema.ImageRegistryConfig,
    schema.Components,
    schema.CertManagerConfig,
    schema.IstioConfig,
    schema.KubeflowConfig,
    schema.KubeflowAuth,
    schema.OidcConnector,
    schema.JobSetConfig,
    schema.TrainerConfig,
    schema.KubeRayConfig,
    schema.KueueConfig,
    schema.WaitForPodsReady,
    schema.MonitoringConfig,
    schema.DcgmExporterConfig,
    schema.PipelinesConfig,
    schema.PipelinesCloudSql,
    schema.Team,
    schema.Contributor,
    schema.TeamQuota,
    schema.ContainerDefaults,
    schema.TeamBucket,
    schema.TeamRay,
    schema.Sources,
    schema.Images,
)


def reference() -> str:
    sections: list[str] = []
    for model in MODELS:
        doc = " ".join((model.__doc__ or "").strip().split("\n\n")[0].split())
        lines = [f"#### {model.__name__}", "", doc, ""]
        if model.model_fields:
            lines += ["| key | type | default | notes |", "|---|---|---|---|"]
            for name, field in model.model_fields.items():
                key = field.alias or name
                notes = (field.description or "").replace("|", "\\|")
                lines.append(f"| `{key}` | {_type_name(field.annotation)} | {_default(field)} | {notes} |")
        sections.append("\n".join(lines))
    return "\n\n".join(sections)
