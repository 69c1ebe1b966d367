"""Upstream CRD schemas for tests: the product's own loader (tooling/schemas.py)."""

from __future__ import annotations

from typing import Any

from tooling.schemas import CACHE, REPO, Validator, crd_dir, shared_schemas, strict

__all__ = ["CACHE", "MISSING", "REPO", "crd_dir", "schemas", "strict", "validate_custom"]

MISSING = (
    "no upstream CRDs found: set CRD_DIR, or put the shared data beside the repo (../shared/crds), "
    "or run `make crds` to download them at the pinned versions"
)
schemas = shared_schemas


def validate_custom(obj: dict[str, Any]) -> list[str]:
    """Schema errors of a custom resource against its upstream CRD (empty list: valid)."""
    key = (obj["apiVersion"], obj["kind"])
    if key not in schemas():
        return [f"no CRD schema for {key[1]} {key[0]} in {crd_dir()}"]
    return Validator().errors(obj)
