"""Validate the Kubernetes objects we author against real schemas: built-in kinds with
kubernetes-validate (strict: unknown fields fail), custom kinds against upstream CRDs."""

from __future__ import annotations

from typing import Any

import kubernetes_validate

from tests.support import crds

# The Kubernetes minor of the pinned kind node image and of GKE's REGULAR channel (Nov 2026).
KUBERNETES_VERSION = "1.34"
# Custom kinds GKE itself serves: no public CRD file at a pinned version to validate
# against; tests check their shape directly.
GKE_PROVIDED_KINDS = {("cloud.google.com/v1", "BackendConfig"), ("networking.gke.io/v1", "ManagedCertificate")}


def is_builtin(obj: dict[str, Any]) -> bool:
    group = obj["apiVersion"].split("/")[0] if "/" in obj["apiVersion"] else ""
    core_groups = {"", "apps", "batch", "policy", "autoscaling"}
    return group in core_groups or (group.endswith(".k8s.io") and not group.endswith(".x-k8s.io"))


def validate(obj: dict[str, Any]) -> list[str]:
    """Every schema error of `obj` (empty: valid)."""
    if not is_builtin(obj):
        return crds.validate_custom(obj)
    try:
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as err:
        return [f"{'.'.join(str(p) for p in err.path) or '<root>'}: {err.message}"]
    except kubernetes_validate.SchemaNotFoundError as err:
        return [f"no schema for {obj['kind']} {obj['apiVersion']}: {err}"]
    return []
