"""Validate the Kubernetes objects we author against real schemas: built-in kinds with
kubernetes-validate's strict schemas (unknown fields fail), custom kinds against upstream
CRDs. The product's own validators (tooling/schemas.py), which compile each schema once."""

from __future__ import annotations

from typing import Any

from tests.support import crds
from tooling.schemas import builtin_errors, is_builtin

__all__ = ["GKE_PROVIDED_KINDS", "is_builtin", "validate"]

# Custom kinds GKE itself serves: no public CRD file at a pinned version to validate
# against; tests check their shape directly.
GKE_PROVIDED_KINDS = {("cloud.google.com/v1", "BackendConfig"), ("networking.gke.io/v1", "ManagedCertificate")}


def validate(obj: dict[str, Any]) -> list[str]:
    """Every schema error of `obj` (empty: valid); built-in kinds report their best match."""
    if not is_builtin(obj):
        return crds.validate_custom(obj)
    return builtin_errors(obj)
