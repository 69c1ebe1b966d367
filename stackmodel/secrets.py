"""Secret stack config: values that never appear in plain text in a stack file, an output
or a log. Set them with `pulumi config set --secret`; the program (program.py) reads
the ones a stack needs once, as Pulumi secrets. The offline plan stands in a masked
placeholder for each.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.schema import AuthKind
from stackmodel.stack import PlatformConfig

NAMESPACE = "mlplatform"


@dataclass(frozen=True)
class SecretKey:
    key: str
    what: str
    how: str
    placeholder: Any = field(compare=False)
    """What the offline plan uses instead (masked as [secret] in every output); not part of
    the key's identity, so keys hash (the program maps each to its value)."""
    retired: bool = field(default=False, compare=False)
    """No longer read: still accepted in a stack file (so an old stack loads), never required."""


DEX_PASSWORD_HASHES = SecretKey(
    key="dexPasswordHashes",
    what="bcrypt hash per static Dex user (map of e-mail to hash)",
    how="pulumi config set --secret --path 'mlplatform:dexPasswordHashes[\"you@example.com\"]' \"$(htpasswd -nbBC 12 '' PASSWORD | tr -d ':\\n')\"",
    placeholder={},
)
OIDC_CLIENT_SECRET = SecretKey(
    key="oidcClientSecret",
    what="client secret of the OIDC connector",
    how="pulumi config set --secret mlplatform:oidcClientSecret VALUE",
    placeholder="offline-placeholder",
)
GRAFANA_ADMIN_PASSWORD = SecretKey(
    key="grafanaAdminPassword",
    what="retired Grafana admin password (Grafana signs people in through the Kubeflow gateway)",
    how="pulumi config rm mlplatform:grafanaAdminPassword",
    placeholder="offline-placeholder",
    retired=True,
)
IAP_CLIENT_SECRET = SecretKey(
    key="iapClientSecret",
    what="OAuth client secret of Identity-Aware Proxy",
    how="pulumi config set --secret mlplatform:iapClientSecret VALUE",
    placeholder="offline-placeholder",
)
SECRET_KEYS = (DEX_PASSWORD_HASHES, OIDC_CLIENT_SECRET, GRAFANA_ADMIN_PASSWORD, IAP_CLIENT_SECRET)
SECRET_CONFIG_KEYS = frozenset(f"{NAMESPACE}:{s.key}" for s in SECRET_KEYS)


def required_secrets(config: PlatformConfig) -> list[SecretKey]:
    """The secret keys this stack's choices need."""
    kubeflow = config.components[KUBEFLOW]
    auth = kubeflow.auth
    needed: list[SecretKey] = []
    if kubeflow.enabled:
        if auth.kind is AuthKind.DEX and auth.static_users:
            needed.append(DEX_PASSWORD_HASHES)
        if auth.kind is AuthKind.OIDC:
            needed.append(OIDC_CLIENT_SECRET)
        if auth.iap:
            needed.append(IAP_CLIENT_SECRET)
    return needed


def secret_problems(config: PlatformConfig, values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Missing secrets of a running stack, as (path, message), so `pulumi up` stops before
    registering anything; `values` is the stack's decrypted config."""
    problems = []
    for key in required_secrets(config):
        path = f"{NAMESPACE}:{key.key}"
        value = values.get(path)
        if value in (None, ""):
            problems.append((path, f"{key.what} is not set; set it with: {key.how}"))
        elif key is DEX_PASSWORD_HASHES:
            hashes = value if isinstance(value, dict) else {}
            missing = [str(u) for u in config.components[KUBEFLOW].auth.static_users if str(u) not in hashes]
            if missing:
                problems.append((path, f"no password hash for {', '.join(missing)}; set it with: {key.how}"))
    return problems


SECURE = "secure"
"""How Pulumi writes a secret into a stack file: `{secure: <ciphertext>}` per value (with
`--path`, per leaf of a map, e.g. one per e-mail of mlplatform:dexPasswordHashes)."""


def is_encrypted(value: Any) -> bool:
    """`value` as `pulumi config set --secret` writes it: `{secure: ...}`, or a map or list
    whose every leaf is."""
    if isinstance(value, dict):
        if set(value) == {SECURE}:
            return isinstance(value[SECURE], str)
        return bool(value) and all(is_encrypted(v) for v in value.values())
    if isinstance(value, list):
        return bool(value) and all(is_encrypted(v) for v in value)
    return False


def plaintext_secrets(config: Mapping[str, Any], is_secret: Callable[[str, Any], bool]) -> list[tuple[str, str]]:
    """Secret keys set in plain text, as (path, message): `is_secret(key, value)` says
    whether Pulumi holds the value as a secret (in a stack file: `is_encrypted`; in a
    running program: the engine's secret keys). Unset and empty values hold no secret."""
    problems = []
    for secret in SECRET_KEYS:
        key = f"{NAMESPACE}:{secret.key}"
        value = config.get(key)
        if value in (None, "", {}) or is_secret(key, value):
            continue
        fix = f"remove it: {secret.how}" if secret.retired else f"remove it and set it as a secret: {secret.how}"
        problems.append((key, f"the {secret.what} is in plain text, so anyone who can read the stack config has it; {fix}"))
    return problems


def offline_config() -> dict[str, str]:
    """Config the offline plan runs with: every secret key set to its placeholder."""
    return {f"{NAMESPACE}:{s.key}": json.dumps(s.placeholder) for s in SECRET_KEYS}
