"""Reading a secret of the running stack (the keys: stacks/secrets.py)."""

from __future__ import annotations

import json
from typing import Any

import pulumi

from stacks.secrets import NAMESPACE, SecretKey


def secret(key: SecretKey) -> pulumi.Output[Any]:
    """The secret's value as a Pulumi secret; a clear RunError naming the command if it is unset."""
    raw = pulumi.Config(NAMESPACE).get_secret(key.key)
    if raw is None:
        raise pulumi.RunError(f"{NAMESPACE}:{key.key} ({key.what}) is not set; set it with: {key.how}")

    def decode(value: str) -> Any:
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value

    return pulumi.Output.secret(raw.apply(decode))
