"""A team's Ray cluster as a notebook reaches it, against a real Ray head of the pinned version
(`ray start --head`, loopback only, token authentication on as KubeRay starts it), with the
environment the platform's own render gives the notebook: the team PodDefault of the kind fixture
stack, rendered by `python -m stacks render` in the platform's virtualenv ($MLPLATFORM_PYTHON,
default .venv/bin/python; Ray cannot live beside pulumi's protobuf, so the two meet through the
rendered YAML). `ray job submit` and JobSubmissionClient succeed with it and fail without the
token; the head's token proxy (nginx, on its rendered configuration) lets a request carrying
another bearer (the gateway's Dex token) through.

Only two things differ from the cluster, and they are said where they happen: the head Service's
DNS name and port become the loopback address and the free port the head's dashboard listens on,
and the proxy's two fixed ports likewise. KubeRay's side is written here from its source, not
from the platform's code (ray-project/kuberay v1.7.0): for `authOptions.mode: token` it makes a
Secret named after the cluster holding the token under `auth_token` and gives the head
RAY_AUTH_MODE=token and RAY_AUTH_TOKEN from it (controllers/ray/raycluster_controller.go
createAuthSecret, common/pod.go SetContainerTokenAuthEnvVars, utils/constant.go); its head
Service is `<cluster>-head-svc`, the dashboard on 8265 (common/service.go getDefaultPorts).
Ray 2.58.0 reads the same two variables: the mode from RAY_AUTH_MODE (python/ray/_private/
authentication/authentication_token_setup.py), the token from RAY_AUTH_TOKEN, else the file
RAY_AUTH_TOKEN_PATH names, else ~/.ray/auth_token (src/ray/rpc/authentication/
authentication_token_loader.cc, whose message in the 2.58.0 wheel's _raylet.so names the three),
so every Ray process here gets a HOME of its own, without a token file."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

import pytest

from tests.support import nginx

REPO = Path(__file__).resolve().parents[2]
FIXTURE_STACK = "tests/stacks/Pulumi.kind.yaml"
KUBERAY_TOKEN_KEY = "auth_token"
KUBERAY_DASHBOARD_PORT = 8265
LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
"""Every Ray process of these tests on 127.0.0.1 (see `head`)."""
PROXY = "dashboard-auth"


def required(reason: str) -> NoReturn:
    """Fail where the examples must all run (`make examples`, CI), skip elsewhere."""
    if os.environ.get("MLPLATFORM_EXAMPLES") == "all" or nginx.required_in_ci():
        pytest.fail(reason)
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Team:
    """What the platform renders for the fixture's team with a Ray cluster."""

    namespace: str
    cluster: dict[str, Any]
    pod_default: dict[str, Any]
    proxy_template: str


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Team:
    python = os.environ.get("MLPLATFORM_PYTHON") or str(REPO / ".venv" / "bin" / "python")
    if not Path(python).is_file():
        required(f"no platform virtualenv at {python} to render the PodDefault: `make .venv/.installed` (or set MLPLATFORM_PYTHON)")
    out = tmp_path_factory.mktemp("render")
    run = subprocess.run(
        [python, "-m", "stacks", "render", FIXTURE_STACK, "--out", str(out)], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    import yaml

    objects = [o for o in yaml.safe_load_all((out / "objects.yaml").read_text()) if o]
    clusters = [o for o in objects if o["kind"] == "RayCluster"]
    assert clusters, f"{FIXTURE_STACK} renders no RayCluster"
    cluster = clusters[0]
    namespace, name = cluster["metadata"]["namespace"], cluster["metadata"]["name"]
    assert cluster["spec"]["authOptions"] == {"mode": "token"}
    (pod_default,) = [
        o for o in objects
        if o["kind"] == "PodDefault" and o["metadata"]["namespace"] == namespace and any(e["name"] == "RAY_ADDRESS" for e in o["spec"].get("env") or [])
    ]  # the namespace's other PodDefaults (checkpoints, the notebooks' priority) give other variables, or labels alone
    (config_map,) = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"] == {"name": f"{name}-{PROXY}", "namespace": namespace}]
    (template,) = config_map["data"].values()
    return Team(namespace, cluster, pod_default, template)


def resolve(env: list[dict[str, Any]], secret_data: dict[str, dict[str, str]]) -> dict[str, str]:
    """A container's env as the kubelet gives it: values, and secretKeyRefs read from the Secrets
    that exist in the namespace (here only the one KubeRay makes)."""
    resolved = {}
    for entry in env:
        if "value" in entry:
            resolved[entry["name"]] = entry["value"]
            continue
        ref = entry["valueFrom"]["secretKeyRef"]
        assert ref["key"] in secret_data.get(ref["name"], {}), (
            f"{entry['name']} reads Secret {ref['name']} key {ref['key']}; KubeRay makes {list(secret_data)} with {KUBERAY_TOKEN_KEY}"
        )
        resolved[entry["name"]] = secret_data[ref["name"]][ref["key"]]
    return resolved


@dataclass(frozen=True)
class Head:
    token: str
    dashboard: str
    """http://127.0.0.1:<port>: where `<cluster>-head-svc:8265` points in the cluster."""
    folder: Path
    """The head's temporary folder; the clients' HOMEs go in it too."""


def session_members(session: int) -> list[int]:
    """The processes still in the session `ray start` led: what it started."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session:
            found.append(int(stat.parent.name))
    return found


@pytest.fixture(scope="module")
def head(team: Team) -> Iterator[Head]:
    """`ray start --head` as KubeRay starts the team head, on loopback and free ports, with the
    token KubeRay would have put in the cluster's Secret; stopped, with everything it started.

    Loopback only: Ray replaces a 127.0.0.1 node address with the machine's routable one unless
    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER is off (ray 2.58.0 _private/services.py
    resolve_ip_for_localhost, get_node_ip_address), as Ray does for a laptop's local cluster.
    Not `--block`: that stops the whole head when any one process exits, and the Ray Client
    server (deprecated, unused here) exits when the raylet takes over 30 s to register
    (services.py get_node_with_retry), as on a loaded machine. `ray start` leads a session of its
    own; stopping it ends that session's processes, and nothing else (not `ray stop`, which
    would end every Ray of the machine)."""
    token = secrets.token_hex(16)
    folder = Path(tempfile.mkdtemp(prefix="rayhead", dir="/tmp"))  # short: Ray's socket paths
    (folder / "home").mkdir()
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ, **LOOPBACK, "HOME": str(folder / "home"), "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}",
        "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token,
    }
    dashboard = free_port()
    command = [
        str(bin_dir / "ray"), "start", "--head", "--disable-usage-stats",
        "--node-ip-address=127.0.0.1", f"--port={free_port()}", f"--ray-client-server-port={free_port()}",
        "--dashboard-host=127.0.0.1", f"--dashboard-port={dashboard}", f"--dashboard-agent-listen-port={free_port()}",
        "--num-cpus=1", "--num-gpus=0", f"--temp-dir={folder / 'ray'}",
    ]
    log = folder / "ray-start.log"
    with log.open("w") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    address = f"http://127.0.0.1:{dashboard}"
    try:
        assert process.wait(timeout=300) == 0, log.read_text()[-3000:]
        deadline = time.monotonic() + 300
        while get(f"{address}/api/jobs/", bearer=token) != 200:
            assert time.monotonic() < deadline, "the Ray head's Jobs API did not answer in 300 s:\n" + log.read_text()[-3000:]
            time.sleep(1)
        yield Head(token, address, folder)
    finally:
        stop_session(process.pid)
        shutil.rmtree(folder, ignore_errors=True)


def stop_session(session: int) -> None:
    """SIGTERM to every process of the session (Ray's processes stop on it), then SIGKILL to
    what is left after 30 s."""
    for sig, grace in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 5.0)):
        for pid in session_members(session):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while session_members(session) and time.monotonic() < deadline:
            time.sleep(0.5)


def get(url: str, bearer: str | None = None) -> int:
    """The HTTP status of a GET (0 when nothing answers)."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {bearer}"} if bearer else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


def notebook_env(team: Team, head: Head) -> dict[str, str]:
    """The notebook's environment: the PodDefault's variables as the kubelet resolves them,
    the head Service's address pointing at the loopback head (the one change)."""
    name = team.cluster["metadata"]["name"]
    env = resolve(team.pod_default["spec"]["env"], {name: {KUBERAY_TOKEN_KEY: head.token}})
    service = f"{name}-head-svc.{team.namespace}.svc.cluster.local"
    for variable in ("RAY_ADDRESS", "RAY_DASHBOARD_ADDRESS"):
        url = urlsplit(env[variable])
        assert (url.scheme, url.hostname, url.port) == ("http", service, KUBERAY_DASHBOARD_PORT), f"{variable}={env[variable]}"
        env[variable] = head.dashboard
    return env


def client_env(head: Head, overrides: dict[str, str], drop: tuple[str, ...] = ()) -> dict[str, str]:
    """This process's environment (PATH, the virtualenv) with the notebook's variables, minus
    `drop`, and a new HOME (no ~/.ray/auth_token to fall back on)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(overrides, **LOOPBACK, HOME=tempfile.mkdtemp(prefix="client", dir=head.folder), RAY_USAGE_STATS_ENABLED="0")
    for name in drop:
        env.pop(name, None)
    return env


def ray_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "ray"), *args], capture_output=True, text=True, env=env, timeout=300)


SDK_SUBMIT = """
import sys, time
from ray.job_submission import JobStatus, JobSubmissionClient
client = JobSubmissionClient()  # RAY_ADDRESS; the token from RAY_AUTH_MODE and RAY_AUTH_TOKEN
job = client.submit_job(entrypoint=sys.argv[1])
deadline = time.monotonic() + 240
while (status := client.get_job_status(job)) not in {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.STOPPED}:
    assert time.monotonic() < deadline, status
    time.sleep(1)
print("STATUS", status.value)
print(client.get_job_logs(job))
"""


def sdk_submit(entrypoint: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SDK_SUBMIT, entrypoint], capture_output=True, text=True, env=env, timeout=300)


def jobs_entrypoints(head: Head) -> list[str]:
    request = urllib.request.Request(f"{head.dashboard}/api/jobs/", headers={"Authorization": f"Bearer {head.token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return [job["entrypoint"] for job in json.load(response)]


def test_the_notebook_submits_a_ray_job_with_the_cli(team: Team, head: Head) -> None:
    env = client_env(head, notebook_env(team, head))
    run = ray_cli("job", "submit", "--", "python", "-c", "print('hello from the team cluster')", env=env)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "hello from the team cluster" in run.stdout and re.search(r"Job '\S+' succeeded", run.stdout), run.stdout[-2000:]
    print(f"\nray job submit with the PodDefault's {sorted(k for k in env if k.startswith('RAY_'))}: succeeded")


def test_the_notebook_submits_a_ray_job_with_job_submission_client(team: Team, head: Head) -> None:
    run = sdk_submit("python -c \"print('hello from JobSubmissionClient')\"", client_env(head, notebook_env(team, head)))
    assert run.returncode == 0, run.stderr[-3000:]
    assert "STATUS SUCCEEDED" in run.stdout and "hello from JobSubmissionClient" in run.stdout, run.stdout[-2000:]
    print("\nJobSubmissionClient() with the PodDefault's environment: SUCCEEDED")


WITHOUT_THE_TOKEN = {
    "no token": ((), ("RAY_AUTH_TOKEN",)),
    "no token, no mode": ((), ("RAY_AUTH_TOKEN", "RAY_AUTH_MODE")),
    "another token": ((("RAY_AUTH_TOKEN", "0" * 32),), ()),
    # The SDK and CLI send the token only in token mode: why the PodDefault sets RAY_AUTH_MODE too.
    "the token without the mode": ((), ("RAY_AUTH_MODE",)),
}


def refusal(output: str) -> str:
    """The last line of Ray's refusal, shortened."""
    return output.strip().splitlines()[-1][:100]


@pytest.mark.parametrize("case", WITHOUT_THE_TOKEN)
def test_without_the_clusters_token_the_head_refuses_the_job(team: Team, head: Head, case: str) -> None:
    changes, drop = WITHOUT_THE_TOKEN[case]
    env = client_env(head, {**notebook_env(team, head), **dict(changes)}, drop)
    marker = f"refused-{secrets.token_hex(4)}"
    cli = ray_cli("job", "submit", "--", "python", "-c", f"print('{marker}-cli')", env=env)
    assert cli.returncode != 0, cli.stdout[-2000:]
    assert re.search(r"401|[Uu]nauthori[sz]ed|[Aa]uthentication", cli.stdout + cli.stderr), (cli.stdout + cli.stderr)[-2000:]
    sdk = sdk_submit(f"python -c \"print('{marker}-sdk')\"", env)
    assert sdk.returncode != 0 and "STATUS" not in sdk.stdout, sdk.stdout[-2000:]
    assert re.search(r"401|[Uu]nauthori[sz]ed|[Aa]uthentication", sdk.stderr), sdk.stderr[-2000:]
    assert not [e for e in jobs_entrypoints(head) if marker in e]  # nothing was created
    print(f"\n{case}: ray job submit and JobSubmissionClient refused ({refusal(cli.stdout + cli.stderr)})")


def test_the_dashboard_proxy_lets_the_gateways_requests_through_with_the_clusters_token(team: Team, head: Head, tmp_path: Path) -> None:
    """The gateway's requests carry the user's Dex token as `Authorization: Bearer`, which Ray
    would check and refuse; through the head's proxy, on its rendered configuration as the image
    renders it, the same request reaches the Jobs API, and a job submitted through it runs."""
    binary = nginx.nginx_binary()
    if binary is None:
        required(f"no nginx: {nginx.INSTALL}")
    (proxy,) = [c for c in team.cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"] if c["name"] == PROXY]
    name = team.cluster["metadata"]["name"]
    env = resolve(proxy["env"], {name: {KUBERAY_TOKEN_KEY: head.token}})
    rendered = nginx.envsubst_like_the_image(team.proxy_template, env)
    listen = re.findall(r"^\s*listen (\d+);$", rendered, re.M)
    upstream = re.findall(rf"proxy_pass http://127\.0\.0\.1:{KUBERAY_DASHBOARD_PORT};", rendered)
    assert len(listen) == 1 and len(upstream) == 1, rendered
    port = free_port()
    # The one change: the pod's fixed ports become free loopback ones.
    local = rendered.replace(f"listen {listen[0]};", f"listen 127.0.0.1:{port};").replace(
        f"http://127.0.0.1:{KUBERAY_DASHBOARD_PORT};", f"{head.dashboard};"
    )
    server = nginx.start(binary, nginx.main_config(tmp_path, {"default.conf": local}))
    try:
        proxied = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while (status := get(f"{proxied}/api/jobs/", bearer="a-dex-id-token")) == 0 and server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert status == 200, f"through the proxy: HTTP {status}\n{(tmp_path / 'error.log').read_text()[-2000:]}"
        # Straight to Ray the same request is refused: 403, an invalid token (401 is a missing one;
        # ray 2.58.0 _private/authentication/http_token_authentication.py).
        assert get(f"{head.dashboard}/api/jobs/", bearer="a-dex-id-token") == 403
        run = ray_cli(
            "job", "submit", f"--address={proxied}", "--", "python", "-c", "print('through the gateway proxy')",
            env=client_env(head, {}),
        )
        assert run.returncode == 0 and "through the gateway proxy" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
    finally:
        server.terminate()
        server.wait(timeout=30)
    print("\nthe dashboard proxy: a Dex bearer reaches the Jobs API through it (Ray alone answers 403); a job submitted through it ran")
