"""Upstream CRD schemas for tests: the product's own loader (tooling/schemas.py)."""

from __future__ import annotations

import tarfile
from functools import cache
from typing import Any

from facts.versions import GATEWAY_API_CRD_FILES, INFERENCE_POOL_CRD, KSERVE_LLMISVC_CRD_CHART
from tests.support.mirror import MIRROR
from tooling.schemas import (
    CACHE,
    REPO,
    Schemas,
    Validator,
    crds_where,
    missing_crd_folders,
    parsed,
    schemas_of,
    shared_schemas,
    strict,
)

__all__ = ["CACHE", "MISSING", "REPO", "available", "schemas", "strict", "validate_custom"]

MISSING = (
    "pinned upstream CRDs missing: set CRD_DIR, or put the shared data beside the repo (../shared/crds, "
    "../shared/crds-next), or run `make crds` to download them at the pinned versions"
)
schemas = shared_schemas


def available() -> bool:
    """Whether every pinned CRD folder is found in one of the roots."""
    return not missing_crd_folders()


@cache
def mirrored_schemas() -> Schemas:
    """The CRDs the platform installs from the mirror itself rather than from a pinned CRD folder:
    Gateway API's and InferencePool's release manifests, and KServe's LLM CRD chart (its
    LLMInferenceService and LLMInferenceServiceConfig files are not templated)."""
    docs: list[dict[str, Any]] = []
    for manifest in (*GATEWAY_API_CRD_FILES, INFERENCE_POOL_CRD):
        path = MIRROR / "manifests" / manifest.mirror_path
        if path.is_file():
            docs += parsed(path.read_text())
    chart = MIRROR / "charts" / f"{KSERVE_LLMISVC_CRD_CHART.name}-{KSERVE_LLMISVC_CRD_CHART.version}.tgz"
    if chart.is_file():
        with tarfile.open(chart) as archive:
            for member in archive.getmembers():
                if member.name.endswith(("_llminferenceservices.yaml", "_llminferenceserviceconfigs.yaml")) and "/templates/" in member.name:
                    handle = archive.extractfile(member)
                    if handle is not None:
                        docs += parsed(handle.read().decode())
    return schemas_of(d for d in docs if d.get("kind") == "CustomResourceDefinition")


def validate_custom(obj: dict[str, Any]) -> list[str]:
    """Schema errors of a custom resource against its upstream CRD (empty list: valid)."""
    key = (obj["apiVersion"], obj["kind"])
    if key in schemas():
        return Validator().errors(obj)
    if key in mirrored_schemas():
        return Validator(dict(mirrored_schemas())).errors(obj)
    return [f"no CRD schema for {key[1]} {key[0]} in {crds_where()} or the mirror's CRD installs"]
