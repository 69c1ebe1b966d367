"""The developer's kind stack (`make kind-up`, `make kind-down`): the shipped
`stacks/Pulumi.kind.yaml`, brought up through the Automation API in a workspace of its own,
`.pulumi-state/kind/` (git-ignored). The state, the passphrase salt and every secret value
live there, so the tracked stack file stays as it is in git.

`up` copies the tracked file's config into the workspace on every run (edits to it take
effect), gives each Dex static user a random password (its bcrypt hash becomes the secret
`mlplatform:dexPasswordHashes`; the password goes to `.pulumi-state/kind-passwords.txt`,
mode 600), then runs `pulumi up` with its output streamed to the terminal. `down` lifts the
protection of team and monitoring namespaces (docs/teams.md; a kind stack is thrown away
whole) and destroys it. Secrets are encrypted with $PULUMI_CONFIG_PASSPHRASE (empty unless
you set one).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.config import read_stack_file, stack_file, validate
from stackmodel.secrets import DEX_PASSWORD_HASHES, NAMESPACE

STACK = "kind"
REPO = Path(__file__).resolve().parents[1]
WORKDIR = REPO / ".pulumi-state" / "kind"
PASSWORDS = REPO / ".pulumi-state" / "kind-passwords.txt"
HASHES_KEY = f"{NAMESPACE}:{DEX_PASSWORD_HASHES.key}"
SECRET_KEYS = frozenset({HASHES_KEY})


def new_secrets(
    current: Mapping[str, str],
    users: Sequence[str],
    token: Callable[[], str] = lambda: secrets.token_urlsafe(18),
    hash_password: Callable[[str], str] | None = None,
) -> tuple[dict[str, str], dict[str, str]]:
    """(secret config to set, new Dex passwords by user) for what `current` lacks: a password
    for every static user without a hash. Existing values are kept, so a second `up`
    changes nothing."""
    hash_password = hash_password or bcrypt_hash
    hashes = json.loads(current.get(HASHES_KEY) or "{}")
    passwords = {user: token() for user in users if user not in hashes}
    updates = {}
    if passwords:
        updates[HASHES_KEY] = json.dumps({**hashes, **{u: hash_password(p) for u, p in passwords.items()}}, sort_keys=True)
    return updates, passwords


def stale_keys(local: Sequence[str], tracked: Mapping[str, object]) -> list[str]:
    """Plain keys still in the workspace that the tracked stack file no longer has."""
    return sorted(k for k in local if k not in tracked and k not in SECRET_KEYS)


def bcrypt_hash(password: str, rounds: int = 12) -> str:
    """A bcrypt hash for Dex's static passwords (Dex accepts cost 10 and up; the kind stack's
    long-lived users get 12, the e2e suite's throwaway ones 10)."""
    import bcrypt

    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=rounds)).decode()


def save_passwords(passwords: Mapping[str, str], path: Path = PASSWORDS) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as file:
        for user, password in passwords.items():
            file.write(f"{user} {password}\n")
    os.chmod(path, 0o600)


def up() -> int:
    from pulumi import automation as auto

    from tooling.workspace import create_stack, plain_values

    tracked = read_stack_file(stack_file(STACK))
    users = [str(u) for u in validate(tracked, str(stack_file(STACK))).components[KUBEFLOW].auth.static_users]
    stack = create_stack(WORKDIR, STACK, os.environ.get("PULUMI_CONFIG_PASSPHRASE", ""))
    local = stack.get_all_config()
    for key in stale_keys(list(local), tracked):
        stack.remove_config(key)
    stack.set_all_config(plain_values(tracked))
    updates, passwords = new_secrets({k: v.value for k, v in local.items() if k in SECRET_KEYS}, users)
    stack.set_all_config({k: auto.ConfigValue(v, secret=True) for k, v in updates.items()})
    if passwords:
        save_passwords(passwords)
        print(f"kind: Dex passwords for {', '.join(passwords)} are in {PASSWORDS}")
    stack.up(on_output=print, color="always", show_secrets=False)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tooling.kind_stack", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "action",
        choices=["up", "down"],
        help="up: pulumi up of the kind stack; down: lift its protection, destroy it and the cluster",
    )
    action = parser.parse_args(argv).action
    if action == "up":
        return up()
    from tooling.workspace import create_stack, release_protection

    stack = create_stack(WORKDIR, STACK, os.environ.get("PULUMI_CONFIG_PASSPHRASE", ""))
    release_protection(stack)
    stack.destroy(on_output=print, color="always", show_secrets=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
