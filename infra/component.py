"""The base of every ComponentResource of ours, in infra, components and runtimes."""

from __future__ import annotations

import pulumi


def type_token(cls: type) -> str:
    """`mlplatform:<package>:<class name>`, e.g. mlplatform:infra:GkeCluster; the package is the
    class's `room` where it says one (a class moved to another package keeps its token). A token
    is part of every child's URN: renaming the class renames them, so a rename needs `aliases`."""
    room = getattr(cls, "room", None) or cls.__module__.partition(".")[0]
    return f"mlplatform:{room}:{cls.__name__}"


class Component(pulumi.ComponentResource):
    """A ComponentResource whose type token is derived from its class (type_token)."""

    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(type_token(type(self)), name, None, opts)
