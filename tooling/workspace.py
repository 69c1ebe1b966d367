"""A Pulumi Automation API workspace that keeps everything local to one folder: a file
backend in `<workdir>/state`, passphrase secrets, and the stack's own config file
(encryption salt, secret values) in `<workdir>`, never in the tracked `stacks/`.

The program runs inline, in this process, exactly as `__main__.py` runs it. The e2e suite
(a temp folder per run) and `make kind-up` (`.pulumi-state/kind`) both drive the kind
stack through this.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pulumi import automation as auto

PROJECT = "mlplatform"


def inline_program() -> None:
    """What `__main__.py` does, run in this process by the Automation API."""
    import program
    from stackmodel.config import running_stack_config

    program.build(running_stack_config())


def workspace_env(workdir: Path, passphrase: str) -> dict[str, str]:
    return {
        "PULUMI_BACKEND_URL": f"file://{workdir / 'state'}",
        "PULUMI_CONFIG_PASSPHRASE": passphrase,
        "PULUMI_SKIP_UPDATE_CHECK": "true",
    }


def create_stack(workdir: Path, stack: str, passphrase: str) -> auto.Stack:
    """The stack `stack` in `workdir` (created on first use): file backend under
    workdir/state, passphrase secrets, config in workdir/Pulumi.<stack>.yaml."""
    env = workspace_env(workdir, passphrase)
    (workdir / "state").mkdir(parents=True, exist_ok=True)
    settings = auto.ProjectSettings(name=PROJECT, runtime="python", backend=auto.ProjectBackend(url=env["PULUMI_BACKEND_URL"]))
    return auto.create_or_select_stack(
        stack_name=stack,
        project_name=PROJECT,
        program=inline_program,
        opts=auto.LocalWorkspaceOptions(work_dir=str(workdir), env_vars=env, secrets_provider="passphrase", project_settings=settings),
    )


def plain_values(config: Mapping[str, Any]) -> dict[str, auto.ConfigValue]:
    """Stack-file config for the Automation API: strings as they are, structured values
    as JSON (which the program's config reader parses back)."""
    return {key: auto.ConfigValue(value if isinstance(value, str) else json.dumps(value)) for key, value in config.items()}


def release_protection(stack: auto.Stack) -> None:
    """Lift `protect` and `retainOnDelete` from every resource of the state: team namespaces,
    Profiles and the monitoring namespace are protected (docs/teams.md), and a kind or e2e
    stack is thrown away whole (what `pulumi state unprotect --all` does, plus the retain)."""
    state = stack.export_stack()
    for resource in (state.deployment or {}).get("resources") or []:
        resource.pop("protect", None)
        resource.pop("retainOnDelete", None)
    stack.import_stack(state)
