"""Stacks that between them install every component of the list (stackmodel/registry.py), for
the tests that need "every chart" or "every component" and must not name them by hand: a
component a fork adds is in them the moment its line is in the list."""

from __future__ import annotations

from stackmodel.config import load, read_stack_file, stack_file, validate
from stackmodel.stack import PlatformConfig
from tests.conftest import base_gke, with_changes

DRA_POOL = {"mlplatform:cluster.gpuPools.0.gpuAllocation": "dra", "mlplatform:cluster.autoprovisioning": {"enabled": False}}
"""The small gke stack with its pool on DRA, as tests/test_dra.py plans it: NVIDIA's DRA driver
installs only for DRA pools (the loader refuses it elsewhere, dra-driver-has-dra-pools)."""


def every_component() -> list[tuple[str, PlatformConfig]]:
    """(name, stack): the fixtures kind, dev, prod and dev-fabric (the GPUDirect pools'
    components, which only a gke stack has), the small gke stack with a DRA pool, and for each
    component of the list none of those installs (one off by default) the kind fixture with it
    enabled: a new component plans with `enabled: true` alone."""
    stacks = [(name, load(name)) for name in ("kind", "dev", "prod", "dev-fabric")]
    stacks.append(("dra", validate(with_changes(base_gke(), DRA_POOL), "dra")))
    for spec in stacks[0][1].components.specs:
        if not any(config.enabled(spec) for _, config in stacks):
            raw = read_stack_file(stack_file("kind"))
            raw["mlplatform:components"] = {**raw.get("mlplatform:components", {}), spec.name: {"enabled": True}}
            stacks.append((f"kind + {spec.name}", validate(raw, f"kind + {spec.name}")))
    return stacks
