"""A GPU pool as the code that places work on pools reads one (facts/node_labels.py Pool), for
tests that need a pool without a whole stack."""

from __future__ import annotations

from dataclasses import dataclass, field

from facts.node_labels import Taint


@dataclass(frozen=True)
class FakePool:
    """The fields facts/node_labels.py Pool names (the stack model's GpuPool has these)."""

    name: str
    accelerator: str = "nvidia-l4"
    spot: bool = False
    labels: dict[str, str] = field(default_factory=dict)
    extra_taints: tuple[Taint, ...] = ()
    dra: bool = False
