"""Upstream CRD schemas, for validating the custom resources we render.

Found, in order: `$CRD_DIR`; `../shared/crds` beside the repo (this repo's CI); the
cache `make crds` fills from upstream at the pinned versions. With none of them the
schema tests skip and say so.
"""

from __future__ import annotations

import copy
import os
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mlplatform" / "crds"
MISSING = (
    "no upstream CRDs found: set CRD_DIR, or put the shared data beside the repo (../shared/crds), "
    "or run `make crds` to download them at the pinned versions"
)


def crd_dir() -> Path | None:
    candidates = [os.environ.get("CRD_DIR"), REPO.parent / "shared" / "crds", CACHE]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir() and any(Path(candidate).rglob("*.yaml")):
            return Path(candidate)
    return None


@cache
def schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) -> openAPIV3Schema, for every CRD version found."""
    root = crd_dir()
    found: dict[tuple[str, str], dict[str, Any]] = {}
    if root is None:
        return found
    for path in sorted(root.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for version in spec["versions"]:
                schema = version.get("schema", {}).get("openAPIV3Schema")
                if schema:
                    found[(f"{spec['group']}/{version['name']}", spec["names"]["kind"])] = schema
    return found


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with unknown fields rejected, as the API server prunes (and we want typos caught).

    `x-kubernetes-preserve-unknown-fields` and `x-kubernetes-int-or-string` keep their meaning.
    Go (RE2) patterns that switch on case-insensitivity after the anchor, `^(?i)...` (Kueue's
    AdmissionCheck `parameters.kind`), are rewritten `(?i)^...`, the form Python's `re` takes.
    """
    schema = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if not isinstance(node, dict):
            return
        if node.get("x-kubernetes-int-or-string"):
            node.pop("type", None)
            node["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        if "properties" in node and not node.get("x-kubernetes-preserve-unknown-fields"):
            node.setdefault("additionalProperties", False)
        pattern = node.get("pattern")
        if isinstance(pattern, str) and pattern.startswith("^(?i)"):
            node["pattern"] = "(?i)^" + pattern.removeprefix("^(?i)")
        if node.get("nullable"):
            kind = node.get("type")
            if isinstance(kind, str):
                node["type"] = [kind, "null"]
        for value in node.values():
            if isinstance(value, dict):
                walk(value)
            elif isinstance(value, list):
                for item in value:
                    walk(item)

    walk(schema)
    # metadata is validated by the API server, not by the CRD schema.
    root = schema.setdefault("properties", {})
    root["metadata"] = {"type": "object"}
    # Some CRDs (Istio's) describe only spec/status; every object has these two.
    root.setdefault("apiVersion", {"type": "string"})
    root.setdefault("kind", {"type": "string"})
    return schema


def validate_custom(obj: dict[str, Any]) -> list[str]:
    """Schema errors of a custom resource against its upstream CRD (empty list: valid)."""
    key = (obj["apiVersion"], obj["kind"])
    schema = schemas().get(key)
    if schema is None:
        return [f"no CRD schema for {key[1]} {key[0]} in {crd_dir()}"]
    validator = jsonschema.Draft7Validator(strict(schema))
    return [
        f"{'.'.join(str(p) for p in error.absolute_path) or '<root>'}: {error.message}"
        for error in sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
    ]
