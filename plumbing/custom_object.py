"""A custom resource with fields beside `spec`."""

from __future__ import annotations

from typing import Any

import pulumi


class CustomObject(pulumi.CustomResource):
    """A custom resource with fields beside `spec`, such as a WorkloadPriorityClass's `value` and
    `description`: pulumi_kubernetes' Python CustomResource takes `spec` alone (its __init__ sets
    api_version, kind, metadata and spec, nothing else). Registered as CustomResource registers
    one, type token `kubernetes:<apiVersion>:<kind>`, with the whole object as its inputs, which
    the provider applies as the object, as it does a CustomResource's."""

    def __init__(self, name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions):
        super().__init__(f"kubernetes:{obj['apiVersion']}:{obj['kind']}", name, dict(obj), opts)
