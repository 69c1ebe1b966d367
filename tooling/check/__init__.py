"""`python -m mlplatform check`: a lint of the whole platform the cluster will receive (the
full render), by named rules like the policy pack's, each beside its subject: one module per
area, each rule a pure function of the render declared with its ID and description
(platform.py `check_rule`); each has a test that breaks it (tests/test_check.py).

- objects.py: schemas, nulls, duplicates, the order of CRDs and namespaces, kept volumes,
  upstream example credentials;
- network.py: what the control plane, GKE's load balancer and the GPU fabric reach;
- monitoring.py: monitors selected, the DCGM exporter's metric names;
- images.py: tags, pins, retired registries, the mirror;
- kueue.py: Kueue's rules, the teams' quotas against their queues, admissible workloads;
- processes.py: files a process reads, configuration that rolls its pods, critical pods;
- serving.py: GPU serving runtimes on pools with the GPUs, team routes under a role check;
- upstreams.py: support windows, Kubernetes ranges, advisories on the check's day.

Here they are gathered into RULES, in the order violations are reported in, and run.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import date
from types import ModuleType

from tooling import advisories
from tooling.check import images, kueue, monitoring, network, objects, processes, serving, upstreams
from tooling.check.platform import DECLARED, Platform, Rule, Violation, label, selects
from tooling.check.upstreams import deployed
from tooling.fullrender import FullRender
from tooling.plan import few_collections

AREAS: tuple[ModuleType, ...] = (objects, network, monitoring, images, kueue, processes, serving, upstreams)
"""The modules that hold the rules, in the order a rule REPORTED does not list is reported in."""
REPORTED: tuple[str, ...] = (
    "schema", "null", "duplicate", "order", "control-plane-reach", "load-balancer", "monitor", "critical-priority",
    "image-tag", "image-pin", "retired-registry", "image-mirror", "kueue", "fabric-attached", "upstream-secret",
    "data-kept", "files-provided", "quota-admits-queue", "admissible", "config-rolls", "support", "kubernetes-range",
    "advisory", "dcgm-metric-names",
)
"""The order violations are reported in: the order of the one table the rules were in before
they moved beside their subjects. A new rule is reported after these, in the order of AREAS and
of its module."""


def _declared() -> tuple[Rule, ...]:
    found: list[Rule] = [getattr(v, DECLARED) for module in AREAS for v in vars(module).values() if callable(v) and hasattr(v, DECLARED)]
    place = {name: i for i, name in enumerate(REPORTED)}
    stale = sorted(set(place) - {rule.name for rule in found})
    if stale:
        raise ValueError(f"tooling/check/__init__.py REPORTED names rules no module declares: {', '.join(stale)}")
    return tuple(sorted(found, key=lambda rule: place.get(rule.name, len(place))))


RULES: tuple[Rule, ...] = _declared()
"""Every rule of `check`, in REPORTED's order."""
__all__ = ["RULES", "Platform", "Rule", "Violation", "check", "label", "notes", "run", "selects"]


def check(render: FullRender, rules: Iterable[Rule] = RULES, on: date | None = None, seconds: dict[str, float] | None = None) -> list[Violation]:
    """Every violation of `rules`; the support rules judge the day `on` (default today).
    `seconds`, when given, receives each rule's time (the benchmark prints where it goes)."""
    return run(render, rules, on, seconds)[0]


def run(
    render: FullRender, rules: Iterable[Rule] = RULES, on: date | None = None, seconds: dict[str, float] | None = None
) -> tuple[list[Violation], Platform]:
    """`check`, and the Platform the rules read (its admission verdicts, for the report)."""
    found: list[Violation] = []
    with few_collections():  # the rules build many small objects beside a whole render
        platform = Platform(render, on)
        for rule in rules:
            start = time.perf_counter()
            found += rule.check(platform)
            if seconds is not None:
                seconds[rule.name] = time.perf_counter() - start
    return found, platform


def notes(platform: Platform) -> list[str]:
    """What `check` says on the platform's day without failing (tooling/advisories.py notes)."""
    return advisories.notes(deployed(platform), platform.on)
