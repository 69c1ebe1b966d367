"""`make kind-up`'s local secrets: new ones only where missing, so a second run changes
nothing; plain keys the tracked stack file dropped leave the workspace; the password file
is private."""

from __future__ import annotations

import json
import stat
import subprocess
from itertools import count
from pathlib import Path

from tooling.kind_stack import HASHES_KEY, PASSWORDS, REPO, WORKDIR, new_secrets, save_passwords, stale_keys

USERS = ["ana@example.com", "bo@example.com"]


def tokens() -> object:
    numbers = count(1)
    return lambda: f"token-{next(numbers)}"


def test_first_run_draws_a_password_per_dex_user() -> None:
    updates, passwords = new_secrets({}, USERS, token=tokens(), hash_password=lambda p: f"hash({p})")  # type: ignore[arg-type]
    assert passwords == {"ana@example.com": "token-1", "bo@example.com": "token-2"}
    assert json.loads(updates[HASHES_KEY]) == {"ana@example.com": "hash(token-1)", "bo@example.com": "hash(token-2)"}
    assert list(updates) == [HASHES_KEY]


def test_a_second_run_keeps_every_secret_it_has() -> None:
    current = {HASHES_KEY: json.dumps(dict.fromkeys(USERS, "h"))}
    assert new_secrets(current, USERS, token=tokens(), hash_password=lambda p: "new") == ({}, {})  # type: ignore[arg-type]


def test_a_new_dex_user_gets_a_password_and_the_others_keep_theirs() -> None:
    current = {HASHES_KEY: json.dumps({"ana@example.com": "old"})}
    updates, passwords = new_secrets(current, USERS, token=tokens(), hash_password=lambda p: f"hash({p})")  # type: ignore[arg-type]
    assert passwords == {"bo@example.com": "token-1"}
    assert json.loads(updates[HASHES_KEY]) == {"ana@example.com": "old", "bo@example.com": "hash(token-1)"}


def test_keys_dropped_from_the_tracked_file_leave_the_workspace_but_secrets_stay() -> None:
    local = ["mlplatform:cluster", "mlplatform:teams", HASHES_KEY]
    assert stale_keys(local, {"mlplatform:cluster": {}}) == ["mlplatform:teams"]


def test_the_password_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "kind-passwords.txt"
    save_passwords({"ana@example.com": "pw"}, path)
    assert path.read_text() == "ana@example.com pw\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_workspace_and_the_password_file_are_git_ignored() -> None:
    """The salt and the secrets live where git never picks them up."""
    for path in (WORKDIR / "Pulumi.kind.yaml", WORKDIR / "state" / "x.json", PASSWORDS):
        result = subprocess.run(["git", "check-ignore", "-q", str(path.relative_to(REPO))], cwd=REPO)
        assert result.returncode == 0, f"{path} is not git-ignored"
