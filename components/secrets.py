"""Secret stack config: values that never appear in plain text in a stack file, an output
or a log. Set them with `pulumi config set --secret`; the program reads them as
Pulumi secrets. The offline plan stands in a masked placeholder for each.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pulumi

NAMESPACE = "mlplatform"


@dataclass(frozen=True)
class SecretKey:
    key: str
    what: str
    how: str
    placeholder: Any
    """What the offline plan uses instead (masked as [secret] in every output)."""


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
    what="Grafana admin password",
    how="pulumi config set --secret mlplatform:grafanaAdminPassword VALUE",
    placeholder="offline-placeholder",
)
IAP_CLIENT_SECRET = SecretKey(
    key="iapClientSecret",
    what="OAuth client secret of Identity-Aware Proxy",
    how="pulumi config set --secret mlplatform:iapClientSecret VALUE",
    placeholder="offline-placeholder",
)
SECRET_KEYS = (DEX_PASSWORD_HASHES, OIDC_CLIENT_SECRET, GRAFANA_ADMIN_PASSWORD, IAP_CLIENT_SECRET)
SECRET_CONFIG_KEYS = frozenset(f"{NAMESPACE}:{s.key}" for s in SECRET_KEYS)


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


def offline_config() -> dict[str, str]:
    """Config the offline plan runs with: every secret key set to its placeholder."""
    return {f"{NAMESPACE}:{s.key}": json.dumps(s.placeholder) for s in SECRET_KEYS}
