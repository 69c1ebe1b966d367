"""The e2e session: the kind stack up once (Automation API), the tests against it, and a
teardown in order (workloads, then teams, then components, then the cluster) that must
leave no namespace terminating. Skipped, saying what is missing, where it cannot run.

Logs of unhealthy pods and warning events go to $E2E_ARTIFACTS (default out/e2e) when a
test failed, before anything is destroyed; Pulumi's output goes there too, and streams to
the terminal while it runs.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stackmodel.stack import PlatformConfig
from tests.e2e.cluster import Cluster
from tests.e2e.session import FAILED, Platform, collect_logs, kind_kubeconfig, writer
from tests.e2e.stack import STACK, bcrypt_hash, config_values, e2e_config, kind_stack_config, new_people
from tooling.prerequisites import COMMANDS, E2E_PACKAGES, missing, skip_reason
from tooling.workspace import create_stack, release_protection


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    e2e = [item for item in items if item.get_closest_marker("e2e")]
    if not e2e:
        return
    reason = skip_reason(missing(COMMANDS["e2e"], packages=E2E_PACKAGES), os.environ)
    if reason:
        for item in e2e:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.failed and item.get_closest_marker("e2e"):
        FAILED.append(item.nodeid)
    return report


@pytest.fixture(scope="session")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    workdir = tmp_path_factory.mktemp("e2e-stack")
    artifacts = Path(os.environ.get("E2E_ARTIFACTS", "out/e2e")).resolve()
    artifacts.mkdir(parents=True, exist_ok=True)
    people = new_people()
    raw = e2e_config(kind_stack_config(), people)
    config = PlatformConfig.model_validate(raw)
    stack = create_stack(workdir, STACK, passphrase=secrets.token_urlsafe(24))
    stack.set_all_config(config_values(raw, people, bcrypt_hash))
    with (artifacts / "pulumi.log").open("a") as log_file:
        # pytest captures sys.stdout; the real terminal is sys.__stdout__.
        log = writer(log_file, *([sys.__stdout__] if sys.__stdout__ else []))
        deployed: Platform | None = None
        try:
            up = stack.up(on_output=log, color="never", show_secrets=False)
            kubeconfig = workdir / "kubeconfig"
            kubeconfig.write_text(up.outputs["kubeconfig"].value)
            kubeconfig.chmod(0o600)
            deployed = Platform(stack, Cluster(kubeconfig), config, people, artifacts, log)
            yield deployed
        finally:
            if deployed is None:
                collect_logs(kind_kubeconfig(workdir), artifacts, log)
            elif FAILED and not deployed.torn_down:
                collect_logs(deployed.cluster.kubeconfig, artifacts, log)
            # Always, also after the ordered teardown (then it has nothing left to do):
            # a failed test or teardown must not leave the kind cluster behind.
            release_protection(stack)
            stack.destroy(on_output=log, color="never", continue_on_error=True, show_secrets=False)
            stack.workspace.remove_stack(stack.name)
