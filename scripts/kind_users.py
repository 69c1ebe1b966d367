"""Give the kind stack's Dex users passwords: for every static user without one, a random
password, its bcrypt hash stored as Pulumi secret config (mlplatform:dexPasswordHashes),
and the password itself in .pulumi-state/kind-passwords.txt (mode 600, git-ignored).

`make kind-up` runs this; nothing in the repo holds a password, and no default exists.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stacks.config import load

STACK = "kind"
PASSWORDS = Path(__file__).resolve().parents[1] / ".pulumi-state" / "kind-passwords.txt"


def current_hashes() -> dict[str, str]:
    result = subprocess.run(
        ["pulumi", "config", "get", "--stack", STACK, "mlplatform:dexPasswordHashes"],
        capture_output=True,
        text=True,
    )
    return json.loads(result.stdout) if result.returncode == 0 and result.stdout.strip() else {}


def main() -> int:
    import bcrypt

    users = [str(u) for u in load(STACK).components.kubeflow.auth.static_users]
    hashes = current_hashes()
    new = {u: secrets.token_urlsafe(12) for u in users if u not in hashes}
    if not new:
        print(f"every Dex user of the {STACK} stack has a password ({PASSWORDS})")
        return 0
    for user, password in new.items():
        hashes[user] = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=12)).decode()
    subprocess.run(
        ["pulumi", "config", "set", "--stack", STACK, "--secret", "mlplatform:dexPasswordHashes", json.dumps(hashes)],
        check=True,
    )
    PASSWORDS.parent.mkdir(parents=True, exist_ok=True)
    with PASSWORDS.open("a") as file:
        for user, password in new.items():
            file.write(f"{user} {password}\n")
    os.chmod(PASSWORDS, 0o600)
    print(f"passwords for {', '.join(new)} written to {PASSWORDS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
