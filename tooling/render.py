"""What a plan installs, as files a reviewer can read and diff:

- `objects.yaml`: every Kubernetes object our code authors, multi-document, in apply order;
- `upstream.yaml`: every Helm chart, kustomize tree and release manifest we install,
  with its version and values.

Same stack file, same bytes: mappings are key-sorted, documents sorted by apply order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import yaml

from facts.resource_types import CONFIG_FILE, HELM_CHART, HELM_RELEASE, K8S_PROVIDER, KUSTOMIZE
from facts.resource_types import UPSTREAM_INSTALLS as UPSTREAM_TYPES
from tooling.plan import Plan, Recorded

__all__ = ["CONFIG_FILE", "HELM_CHART", "HELM_RELEASE", "K8S_PROVIDER", "KUSTOMIZE", "UPSTREAM_TYPES"]

# Like Helm's install order (helm/pkg/release/util/kind_sorter.go): what others need comes first.
APPLY_ORDER = (
    "Namespace",
    "CustomResourceDefinition",
    "PriorityClass",
    "ServiceAccount",
    "Secret",
    "ConfigMap",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "ResourceQuota",
    "LimitRange",
    "NetworkPolicy",
    "Service",
    "DaemonSet",
    "Deployment",
    "StatefulSet",
    "Job",
)


def is_authored_object(resource: Recorded) -> bool:
    """A Kubernetes object our code builds itself (not a chart, tree or provider)."""
    return (
        resource.custom
        and resource.type.startswith("kubernetes:")
        and resource.type not in UPSTREAM_TYPES
        and resource.type != K8S_PROVIDER
    )


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def ordered(obj: dict[str, Any]) -> dict[str, Any]:
    """An object as it is written out: apiVersion, kind, metadata first, the rest sorted."""
    body = _sorted(obj)
    head = {k: body.pop(k) for k in ("apiVersion", "kind", "metadata") if k in body}
    return {**head, **body}


def manifest(resource: Recorded) -> dict[str, Any]:
    """The object as it would be applied."""
    return ordered(resource.inputs)


def _apply_rank(obj: dict[str, Any]) -> tuple[int, str, str, str, str]:
    kind = obj.get("kind", "")
    rank = APPLY_ORDER.index(kind) if kind in APPLY_ORDER else len(APPLY_ORDER)
    meta = obj.get("metadata", {})
    return (rank, obj.get("apiVersion", ""), kind, meta.get("namespace", ""), meta.get("name", ""))


def authored_objects(plan: Plan) -> list[dict[str, Any]]:
    """Every object we author, in apply order."""
    return sorted((manifest(r) for r in plan.resources if is_authored_object(r)), key=_apply_rank)


def component_name(plan: Plan, resource: Recorded) -> str:
    """The name of the mlplatform component a resource belongs to ("" for none)."""
    for ancestor in plan.ancestors(resource):
        if ancestor.type.startswith("mlplatform:"):
            return ancestor.name
    return ""


def upstream_entry(plan: Plan, resource: Recorded) -> dict[str, Any]:
    """One installed upstream artefact: what, from where, at which version, with which values."""
    inputs = resource.inputs
    entry: dict[str, Any] = {"name": resource.name, "component": component_name(plan, resource)}
    if resource.type in (HELM_CHART, HELM_RELEASE):
        repo = (inputs.get("repositoryOpts") or {}).get("repo")
        entry.update(
            kind="helm",
            chart=inputs.get("chart"),
            repository=repo,
            version=inputs.get("version"),
            namespace=inputs.get("namespace"),
            values=inputs.get("values", {}),
        )
    elif resource.type == KUSTOMIZE:
        entry.update(kind="kustomize", directory=inputs.get("directory"), namespace=inputs.get("namespace"))
    else:
        entry.update(kind="manifest", file=inputs.get("file"))
    return _sorted({k: v for k, v in entry.items() if v is not None})


def upstream(plan: Plan) -> list[dict[str, Any]]:
    entries = [upstream_entry(plan, r) for r in plan.resources if r.type in UPSTREAM_TYPES]
    return sorted(entries, key=lambda e: (e["component"], e["name"]))


class _Dumper(yaml.SafeDumper):
    """PyYAML's pure safe dumper, on purpose: libyaml's (CSafeDumper, 3-4x faster) folds long
    double-quoted strings at other places (no backslash line escapes), so its bytes differ
    from these, which the full-render snapshots digest. It remembers each scalar's analysis
    (a pure function of the text and `allow_unicode`, which the emitter only reads): CRDs
    repeat their descriptions, and the same bytes come out 20-30% sooner."""

    _analyses: ClassVar[dict[tuple[str, bool], Any]] = {}

    def analyze_scalar(self, scalar: str) -> Any:
        key = (scalar, bool(self.allow_unicode))
        found = self._analyses.get(key)
        if found is None:
            if len(self._analyses) > 500_000:
                self._analyses.clear()
            found = self._analyses[key] = super().analyze_scalar(scalar)
        return found


def dump_all(documents: list[dict[str, Any]]) -> str:
    """The documents as written out: block style, keys in the order given, 120 columns."""
    return yaml.dump_all(documents, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120)


def write(plan: Plan, out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    objects_path, upstream_path = out / "objects.yaml", out / "upstream.yaml"
    objects_path.write_text(dump_all(authored_objects(plan)))
    upstream_path.write_text(yaml.safe_dump({"stack": plan.stack, "installs": upstream(plan)}, sort_keys=False))
    return objects_path, upstream_path
