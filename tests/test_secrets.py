"""Secret stack config: which secrets a stack needs, and the messages when they are missing."""

from __future__ import annotations

from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.config import load
from stackmodel.secrets import (
    DEX_PASSWORD_HASHES,
    GRAFANA_ADMIN_PASSWORD,
    IAP_CLIENT_SECRET,
    OIDC_CLIENT_SECRET,
    required_secrets,
    secret_problems,
)


def test_required_secrets_follow_the_stack_choices() -> None:
    assert required_secrets(load("kind")) == [DEX_PASSWORD_HASHES]
    assert required_secrets(load("prod")) == [OIDC_CLIENT_SECRET, IAP_CLIENT_SECRET]
    assert GRAFANA_ADMIN_PASSWORD.retired, "Grafana signs people in through the gateway; an old stack's key still loads"


def test_missing_secrets_name_the_key_and_the_command() -> None:
    problems = dict(secret_problems(load("prod"), {"mlplatform:grafanaAdminPassword": "x"}))
    assert set(problems) == {"mlplatform:oidcClientSecret", "mlplatform:iapClientSecret"}
    assert "pulumi config set --secret mlplatform:oidcClientSecret" in problems["mlplatform:oidcClientSecret"]


def test_every_static_user_needs_a_hash() -> None:
    kind = load("kind")
    users = [str(u) for u in kind.components[KUBEFLOW].auth.static_users]
    hashes = dict.fromkeys(users[1:], "$2y$12$hash")
    problems = secret_problems(kind, {"mlplatform:dexPasswordHashes": hashes, "mlplatform:grafanaAdminPassword": "x"})
    assert problems == [
        ("mlplatform:dexPasswordHashes", f"no password hash for {users[0]}; set it with: {DEX_PASSWORD_HASHES.how}")
    ]
    complete = {"mlplatform:dexPasswordHashes": dict.fromkeys(users, "h"), "mlplatform:grafanaAdminPassword": "x"}
    assert secret_problems(kind, complete) == []
