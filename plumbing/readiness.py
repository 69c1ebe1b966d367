"""What one component makes ready for another, typed: the composition (components/platform.py)
records each component's readiness under its spec (a `Ready`: the component, or a part of one)
as it installs it, and everything that waits names a `Need` (stackmodel/components/spec.py): whose
readiness, and which part of it (its CRDs, its admission webhooks, its namespaces, its running
controller). A key nobody has recorded yet is an error at plan time (an installer ordered after
its user), never a dependency silently dropped.
"""

from __future__ import annotations

from collections.abc import Iterable

import pulumi

from stackmodel.components.spec import Need, Ready, What

__all__ = ["Need", "Readiness", "Ready", "What", "WiringError"]


class WiringError(Exception):
    """A need the composition cannot meet: the program is wired wrong (not the stack file)."""


class Readiness:
    """Each component's readiness as the composition installs it: a resource, or None for a
    component the stack does not install. Filled in install order."""

    def __init__(self) -> None:
        self._recorded: dict[Ready, pulumi.Resource | None] = {}

    def record(self, key: Ready, resource: pulumi.Resource | None) -> None:
        if key in self._recorded:
            raise WiringError(f"the readiness of {key.name} is recorded twice")
        self._recorded[key] = resource

    def get(self, key: Ready) -> pulumi.Resource | None:
        """The resource that is done when `key` is ready; None when the stack does not install it."""
        if key not in self._recorded:
            done = ", ".join(k.name for k in self._recorded) or "nothing"
            raise WiringError(
                f"{key.name} is needed before it is installed (installed so far: {done}); "
                "name it in the needs of what waits for it (its ComponentSpec), which orders the install"
            )
        return self._recorded[key]

    def resources(self, needs: Iterable[Need], needed_by: str) -> list[pulumi.Resource]:
        """What to wait for to meet `needs`; `needed_by` names the waiting object in errors."""
        found: list[pulumi.Resource] = []
        for need in needs:
            if not need.waits:
                continue
            resource = self.get(need.on)
            if resource is None:
                if not need.optional:
                    raise WiringError(f"{needed_by} needs {need}, which this stack does not install")
                continue
            if resource not in found:
                found.append(resource)
        return found
