"""Upstream CRD schemas for tests: the product's own loader (tooling/schemas.py)."""

from __future__ import annotations

from typing import Any

from tooling.schemas import CACHE, REPO, Validator, crds_where, missing_crd_folders, shared_schemas, strict

__all__ = ["CACHE", "MISSING", "REPO", "available", "schemas", "strict", "validate_custom"]

MISSING = (
    "pinned upstream CRDs missing: set CRD_DIR, or put the shared data beside the repo (../shared/crds, "
    "../shared/crds-next), or run `make crds` to download them at the pinned versions"
)
schemas = shared_schemas


def available() -> bool:
    """Whether every pinned CRD folder is found in one of the roots."""
    return not missing_crd_folders()


def validate_custom(obj: dict[str, Any]) -> list[str]:
    """Schema errors of a custom resource against its upstream CRD (empty list: valid)."""
    key = (obj["apiVersion"], obj["kind"])
    if key not in schemas():
        return [f"no CRD schema for {key[1]} {key[0]} in {crds_where()}"]
    return Validator().errors(obj)
