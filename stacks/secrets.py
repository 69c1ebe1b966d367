"""Secret stack config: values that never appear in plain text in a stack file, an output
or a log. Set them with `pulumi config set --secret`; the program (program.py) reads
the ones a stack needs once, as Pulumi secrets. The offline plan stands in a masked
placeholder for each.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from stacks.schema import AuthKind, PlatformConfig

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
    what="the retired Grafana admin password (Grafana signs people in through the Kubeflow gateway)",
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
    components = config.components
    auth = components.kubeflow.auth
    needed: list[SecretKey] = []
    if components.kubeflow.enabled:
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
            missing = [str(u) for u in config.components.kubeflow.auth.static_users if str(u) not in hashes]
            if missing:
                problems.append((path, f"no password hash for {', '.join(missing)}; set it with: {key.how}"))
    return problems


def offline_config() -> dict[str, str]:
    """Config the offline plan runs with: every secret key set to its placeholder."""
    return {f"{NAMESPACE}:{s.key}": json.dumps(s.placeholder) for s in SECRET_KEYS}
