"""The e2e suite's pure parts, which run everywhere: waiting on conditions, the skip
message, the stack config it sets, the access matrix, the Dex sign-in flow, what
ready/stuck mean, the Ray workload, and the teardown order."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import urllib.request
from collections.abc import Mapping
from contextlib import redirect_stderr
from http.cookiejar import Cookie, CookieJar, DefaultCookiePolicy
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest

from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.schema import Team
from stackmodel.stack import PlatformConfig
from tests.e2e.access import ACTIONS, access_matrix, can_i, membership
from tests.e2e.checks import (
    admitted,
    component_crds,
    component_namespaces,
    crds_pending,
    daemonset_pending,
    deployment_pending,
    localqueue_pending,
    owned_by,
    quota_problems,
    rayjob_manifest,
    rayjob_state,
    terminating,
    unhealthy_pods,
)
from tests.e2e.cluster import forwarded_port
from tests.e2e.dex import (
    LoginFailed,
    LoopbackCookiePolicy,
    Page,
    dex_login,
    login_error,
    parse_login_form,
    workgroup_namespaces,
)
from tests.e2e.session import writer
from tests.e2e.stack import (
    CLUSTER_NAME,
    TEAM,
    StateResource,
    config_values,
    e2e_config,
    kind_stack_config,
    new_people,
    teardown_stages,
)
from tests.support import crds
from tests.support.validation import validate as validate_object
from tooling import prerequisites
from tooling.prerequisites import COMMANDS, E2E_PACKAGES, missing, skip_reason
from tooling.waiting import WaitTimeout, wait_for

REPO = Path(__file__).resolve().parents[1]

# --- waiting ------------------------------------------------------------------------------


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_wait_for_polls_until_nothing_is_pending() -> None:
    time, answers = FakeTime(), [["a", "b"], ["b"], []]
    wait_for("x", lambda: answers.pop(0), timeout=60, interval=5, clock=time.clock, sleep=time.sleep)
    assert time.sleeps == [5, 5]


def test_wait_for_returns_at_once_when_already_done() -> None:
    time = FakeTime()
    wait_for("x", list, timeout=60, clock=time.clock, sleep=time.sleep)
    assert time.sleeps == []


def test_wait_for_times_out_naming_what_is_still_pending_and_never_oversleeps() -> None:
    time = FakeTime()
    with pytest.raises(WaitTimeout, match=r"pods ready: not done after 12s; still pending: pod a: Pending") as caught:
        wait_for("pods ready", lambda: ["pod a: Pending"], timeout=12, interval=5, clock=time.clock, sleep=time.sleep)
    assert caught.value.pending == ["pod a: Pending"]
    assert time.sleeps == [5, 5, 2]
    assert isinstance(caught.value, TimeoutError)


def test_wait_for_lets_a_failing_check_raise_at_once() -> None:
    def check() -> list[str]:
        raise AssertionError("job failed")

    with pytest.raises(AssertionError, match="job failed"):
        wait_for("x", check, timeout=60, clock=FakeTime().clock, sleep=FakeTime().sleep)


# --- prerequisites -----------------------------------------------------------------------


def test_skip_message_names_each_missing_tool_and_how_to_get_it() -> None:
    lines = missing(COMMANDS["e2e"], lambda name: None if name in ("kind", "pulumi") else f"/usr/bin/{name}", lambda: None)
    assert [line.split(":")[0] for line in lines] == ["kind", "pulumi"]
    assert "go install sigs.k8s.io/kind@v0.33.0" in lines[0]
    assert "https://www.pulumi.com/docs/install/" in lines[1]


def test_docker_engine_that_does_not_answer_is_named() -> None:
    lines = missing(COMMANDS["e2e"], lambda name: f"/usr/bin/{name}", lambda: "Cannot connect to the Docker daemon")
    assert lines == [
        "docker: the engine does not answer (Cannot connect to the Docker daemon); start it, or give your user access to it"
    ]


def test_missing_docker_binary_is_not_asked_for_its_engine() -> None:
    def engine() -> str:
        raise AssertionError("docker info must not run without docker")

    lines = missing(COMMANDS["e2e"], lambda name: None if name == "docker" else name, engine)
    assert [line.split(":")[0] for line in lines] == ["docker"]


def test_missing_python_packages_are_named_with_the_test_extra() -> None:
    lines = missing((), packages=E2E_PACKAGES, has_package=lambda package: package != "bcrypt")
    assert lines == [
        "bcrypt: the bcrypt package (hashes the test users' Dex passwords) is not installed; install: make test (installs the test extra)"
    ]


def test_kind_up_lists_every_missing_tool_at_once_and_fails() -> None:
    """`make kind-up` on a machine with none of the tools: one message, all four named."""
    err = io.StringIO()
    with redirect_stderr(err), patch("shutil.which", return_value=None):
        assert prerequisites.main(["kind-up"]) == 1
    names = [line.strip().split(":")[0] for line in err.getvalue().splitlines()[1:]]
    assert names == ["docker", "kind", "pulumi", "kubectl"]


def test_prerequisites_run_with_the_system_python_before_the_virtualenv_exists() -> None:
    """The check imports only the standard library and facts/: no site-packages (-S), no env (-E)."""
    result = subprocess.run(
        [sys.executable, "-E", "-s", "-S", "-c", "import tooling.prerequisites as p; print(sorted(p.COMMANDS))"],
        cwd=REPO, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['e2e', 'kind-up', 'smoke']"


def test_suite_runs_only_when_nothing_is_missing_and_it_is_asked_for() -> None:
    assert skip_reason([], {"E2E": "1"}) is None
    assert "run it with `make e2e`" in (skip_reason([], {}) or "")
    reason = skip_reason(["kind: missing"], {"E2E": "1"}) or ""
    assert reason.startswith("e2e suite skipped:") and "kind: missing" in reason and "E2E=1" not in reason


# --- the e2e stack config --------------------------------------------------------------------


def test_e2e_config_is_the_kind_stack_with_test_users_and_a_team() -> None:
    people = new_people(token=lambda: "pw")
    raw = e2e_config(kind_stack_config(), people)
    config = PlatformConfig.model_validate(raw)
    assert config.cluster.kind == "kind" and config.cluster.name == CLUSTER_NAME
    assert config.components[KUBEFLOW].auth.static_users == [p.email for p in people.all()]
    assert [t.name for t in config.teams] == [TEAM]
    team = config.teams[0]
    assert membership(team, people.owner.email) == "owner"
    assert membership(team, people.editor.email) == "edit"
    assert membership(team, people.viewer.email) == "view"
    assert membership(team, people.outsider.email) == "outsider"
    # the kind stack's components stay as shipped; only the Dex users change
    shipped = kind_stack_config()["mlplatform:components"]
    assert {k: v for k, v in raw["mlplatform:components"].items() if k != "kubeflow"} == {
        k: v for k, v in shipped.items() if k != "kubeflow"
    }


def test_config_values_put_every_hash_in_one_secret_and_structures_as_json() -> None:
    people = new_people(token=lambda: "pw")
    values = config_values(e2e_config(kind_stack_config(), people), people, lambda password: f"hash({password})")
    hashes = values["mlplatform:dexPasswordHashes"]
    assert hashes.secret
    assert json.loads(hashes.value) == {p.email: "hash(pw)" for p in people.all()}
    assert not values["mlplatform:teams"].secret
    assert json.loads(values["mlplatform:teams"].value)[0]["owner"] == people.owner.email
    assert values["mlplatform:environment"].value == "ci"
    # every secret the e2e stack needs is set, as a secret, so `pulumi up` does not stop
    from stackmodel.secrets import required_secrets, secret_problems
    from stackmodel.stack import PlatformConfig as Config

    config = Config.model_validate(e2e_config(kind_stack_config(), people))
    decrypted = {k: json.loads(v.value) if k.endswith("Hashes") else v.value for k, v in values.items()}
    assert all(values[f"mlplatform:{key.key}"].secret for key in required_secrets(config))
    assert secret_problems(config, decrypted) == []


def test_every_run_gets_new_passwords() -> None:
    first, second = new_people(), new_people()
    assert first.owner.password != second.owner.password
    assert len({p.password for p in first.all()}) == len(first.all()) == 7


def test_bcrypt_hash_is_one_dex_accepts() -> None:
    bcrypt = pytest.importorskip("bcrypt")
    from tests.e2e.stack import bcrypt_hash

    hashed = bcrypt_hash("s3cret")
    assert hashed.startswith("$2b$10$")
    assert bcrypt.checkpw(b"s3cret", hashed.encode())


# --- access matrix --------------------------------------------------------------------------


def team(name: str, owner: str, **contributors: str) -> Team:
    return Team.model_validate(
        {"name": name, "owner": owner, "contributors": [{"email": e, "role": r} for e, r in contributors.items()]}
    )


def expected(checks: list[Any], user: str, namespace: str) -> dict[tuple[str, str], bool]:
    return {(c.verb, c.resource): c.allowed for c in checks if c.user == user and c.namespace == namespace}


def test_access_matrix_gives_each_role_its_verbs() -> None:
    vision = team("vision", "lead@acme.com", **{"ana@acme.com": "edit", "bo@acme.com": "view"})
    checks = access_matrix([vision], ["lead@acme.com", "ana@acme.com", "bo@acme.com", "eve@acme.com"])
    assert len(checks) == 4 * len(ACTIONS)
    owner, editor = expected(checks, "lead@acme.com", "vision"), expected(checks, "ana@acme.com", "vision")
    viewer, outsider = expected(checks, "bo@acme.com", "vision"), expected(checks, "eve@acme.com", "vision")
    assert all(owner.values())
    assert editor[("create", "trainjobs")] and editor[("get", "secrets")] and not editor[("create", "rolebindings")]
    assert viewer[("list", "trainjobs")] and viewer[("get", "pods")]
    assert not viewer[("create", "trainjobs")] and not viewer[("get", "secrets")]
    assert not any(outsider.values())


def test_a_member_of_one_team_is_an_outsider_of_another() -> None:
    a, b = team("team-a", "a@acme.com"), team("team-b", "b@acme.com")
    checks = access_matrix([a, b], [])
    assert all(expected(checks, "a@acme.com", "team-a").values())
    assert not any(expected(checks, "a@acme.com", "team-b").values())
    assert {c.membership for c in checks if c.user == "b@acme.com" and c.namespace == "team-a"} == {"outsider"}


def test_access_check_reads_as_a_sentence() -> None:
    check = access_matrix([team("vision", "lead@acme.com")], ["eve@acme.com"])[-1]
    assert str(check) == "lead@acme.com (owner) create rolebindings.rbac.authorization.k8s.io in vision: should be allowed"


# --- Dex sign-in ------------------------------------------------------------------------------

# The shape of Dex's password page (dexidp/dex web/templates/password.html).
DEX_LOGIN = """<!DOCTYPE html><html><body><div class="theme-panel">
  <h2 class="theme-heading">Log in to Your Account</h2>
  <form method="post" action="/dex/auth/local/login?back=&amp;state=abc123">
    <div class="theme-form-row"><input tabindex="1" required id="login" name="login" type="text" placeholder="email address" autofocus /></div>
    <div class="theme-form-row"><input tabindex="2" required id="password" name="password" type="password" placeholder="password" /></div>
    {error}
    <button tabindex="3" id="submit-login" type="submit" class="dex-btn theme-btn--primary">Login</button>
  </form></div></body></html>"""
DEX_ERROR = '<div id="login-error" class="dex-error-box">Invalid Email Address and password.</div>'
PAGE_URL = "http://127.0.0.1:8080/dex/auth/local/login?back=&state=abc123"


def test_login_form_is_read_from_the_dex_page() -> None:
    form = parse_login_form(DEX_LOGIN.format(error=""), PAGE_URL)
    assert form is not None
    assert form.action == "http://127.0.0.1:8080/dex/auth/local/login?back=&state=abc123"
    assert form.submission("a@b.c", "pw") == {"login": "a@b.c", "password": "pw"}


def test_hidden_fields_are_posted_back() -> None:
    html = '<form method="POST" action="login"><input type="hidden" name="req" value="r1"><input name="user" type="email"><input name="pass" type="password"></form>'
    form = parse_login_form(html, "http://h/dex/auth/")
    assert form is not None and form.action == "http://h/dex/auth/login"
    assert form.submission("u", "p") == {"req": "r1", "user": "u", "pass": "p"}


def test_pages_without_a_password_form_are_not_login_forms() -> None:
    assert parse_login_form("<html><a href='/dex/auth/local'>Log in with Email</a></html>", PAGE_URL) is None
    assert parse_login_form('<form method="get"><input name="q"><input name="p" type="password"></form>', PAGE_URL) is None


def test_dex_error_text_is_read() -> None:
    assert login_error(DEX_LOGIN.format(error=DEX_ERROR)) == "Invalid Email Address and password."
    assert login_error(DEX_LOGIN.format(error="")) == ""
    nested = '<div class="dex-error-box"><br>Invalid <b>password</b>.</div><p>Forgot it?</p>'
    assert login_error(nested) == "Invalid password ."


class FakeBrowser:
    """Answers like the gateway: /oauth2/start ends on Dex's form; the POST ends on the app."""

    def __init__(self, accept: bool, start_page: str = DEX_LOGIN.format(error="")):
        self.accept, self.start_page = accept, start_page
        self.requests: list[tuple[str, str, Mapping[str, str] | None]] = []

    def get(self, url: str) -> Page:
        self.requests.append(("GET", url, None))
        return Page(PAGE_URL, 200, self.start_page)

    def post(self, url: str, data: Mapping[str, str]) -> Page:
        self.requests.append(("POST", url, data))
        if self.accept:
            return Page("http://127.0.0.1:8080/", 200, "<html>Kubeflow Central Dashboard</html>")
        return Page(PAGE_URL, 200, DEX_LOGIN.format(error=DEX_ERROR))


def test_sign_in_starts_at_oauth2_proxy_and_posts_the_credentials_to_the_form() -> None:
    browser = FakeBrowser(accept=True)
    page = dex_login(browser, "http://127.0.0.1:8080", "lead@acme.com", "pw")
    assert page.url == "http://127.0.0.1:8080/"
    assert browser.requests == [
        ("GET", "http://127.0.0.1:8080/oauth2/start?rd=%2F", None),
        ("POST", "http://127.0.0.1:8080/dex/auth/local/login?back=&state=abc123", {"login": "lead@acme.com", "password": "pw"}),
    ]


def test_sign_in_fails_with_dexs_message_when_the_password_is_wrong() -> None:
    with pytest.raises(LoginFailed, match=re.escape("Dex did not accept lead@acme.com: Invalid Email Address and password.")):
        dex_login(FakeBrowser(accept=False), "http://127.0.0.1:8080", "lead@acme.com", "wrong")


def test_sign_in_fails_when_no_login_form_is_shown() -> None:
    with pytest.raises(LoginFailed, match="no Dex login form"):
        dex_login(FakeBrowser(accept=True, start_page="<html>503 upstream connect error</html>"), "http://h", "a@b.c", "p")


def cookie_sent(policy: DefaultCookiePolicy, domain: str, url: str) -> str | None:
    """The Cookie header a jar with one Secure cookie for `domain` sends to `url`."""
    jar = CookieJar(policy=policy)
    jar.set_cookie(
        Cookie(0, "oauth2_proxy_kubeflow", "session", None, False, domain, False, False, "/", True, True, None, False, None, None, {})
    )
    request = urllib.request.Request(url)
    jar.add_cookie_header(request)
    return request.get_header("Cookie")


def test_secure_session_cookie_goes_back_over_plain_http_to_the_port_forward_only() -> None:
    assert cookie_sent(LoopbackCookiePolicy(), "127.0.0.1", "http://127.0.0.1:8080/api/") == "oauth2_proxy_kubeflow=session"
    assert cookie_sent(LoopbackCookiePolicy(), "example.org", "http://example.org/") is None
    assert cookie_sent(LoopbackCookiePolicy(), "example.org", "https://example.org/") == "oauth2_proxy_kubeflow=session"
    assert cookie_sent(DefaultCookiePolicy(), "127.0.0.1", "http://127.0.0.1:8080/api/") is None


def test_dashboard_env_info_gives_namespaces_and_roles() -> None:
    body = json.dumps({"user": "a", "namespaces": [{"user": "a", "namespace": "vision", "role": "owner"}], "isClusterAdmin": False})
    assert workgroup_namespaces(body) == {"vision": "owner"}
    assert workgroup_namespaces(json.dumps({"user": "a", "namespaces": []})) == {}


def test_port_forward_line_gives_the_local_port() -> None:
    assert forwarded_port("Forwarding from 127.0.0.1:40123 -> 8080\n") == 40123
    assert forwarded_port("Forwarding from [::1]:40123 -> 8080") is None


# --- readiness and the rest of the cluster's answers ---------------------------------------


def obj(kind: str, name: str, spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": name, "generation": 2, **meta}, "spec": spec or {}, "status": status or {}}


def test_deployment_is_ready_when_every_replica_is_updated_and_available() -> None:
    ready = obj("Deployment", "dex", {"replicas": 2}, {"observedGeneration": 2, "availableReplicas": 2, "updatedReplicas": 2})
    assert deployment_pending(ready) is None
    rolling = obj("Deployment", "dex", {"replicas": 2}, {"observedGeneration": 2, "availableReplicas": 1, "updatedReplicas": 2}, namespace="auth")
    assert deployment_pending(rolling) == "Deployment auth/dex: 1/2 available, 2/2 updated"
    stale = obj("Deployment", "dex", {}, {"observedGeneration": 1, "availableReplicas": 1, "updatedReplicas": 1})
    assert "not observed" in (deployment_pending(stale) or "")


def test_daemonset_is_ready_on_every_scheduled_node() -> None:
    ready = {"observedGeneration": 2, "desiredNumberScheduled": 3, "numberReady": 3, "updatedNumberScheduled": 3}
    assert daemonset_pending(obj("DaemonSet", "istio-cni-node", status=ready)) is None
    assert daemonset_pending(obj("DaemonSet", "istio-cni-node", status={**ready, "numberReady": 2})) == (
        "DaemonSet istio-cni-node: 2/3 ready, 3/3 updated"
    )


def test_crds_must_exist_and_be_established() -> None:
    established = {"conditions": [{"type": "Established", "status": "True"}]}
    found = [obj("CustomResourceDefinition", "a.x.io", status=established), obj("CustomResourceDefinition", "b.x.io")]
    assert crds_pending(found, ["a.x.io", "b.x.io", "c.x.io"]) == ["CRD c.x.io: missing", "CRD b.x.io: not established"]


def test_kind_stack_checks_every_enabled_components_namespaces_and_crds() -> None:
    enabled = PlatformConfig.model_validate(kind_stack_config()).enabled_components()
    namespaces = component_namespaces(enabled)
    for ns in ("cert-manager", "istio-system", "kube-system", "kubeflow", "auth", "oauth2-proxy", "kubeflow-system", "kuberay-system", "kueue-system", "jobset-system"):
        assert ns in namespaces
    assert "trainjobs.trainer.kubeflow.org" in component_crds(enabled)
    assert component_namespaces({"kueue": True}) == ["kueue-system"]


def test_team_quota_must_carry_the_teams_cpu_and_memory() -> None:
    quota = {"spec": {"hard": {"requests.cpu": "8", "requests.memory": "16Gi", "requests.nvidia.com/gpu": "0"}}}
    assert quota_problems(quota, "t", "8", "16Gi") == []
    assert quota_problems(quota, "t", "4", "16Gi") == [
        "ResourceQuota t/kf-resource-quota: no cpu limit of 4 (hard: {'requests.cpu': '8', 'requests.memory': '16Gi', 'requests.nvidia.com/gpu': '0'})"
    ]
    assert quota_problems(None, "t", "8", "16Gi") == ["ResourceQuota t/kf-resource-quota: missing"]


def test_team_quota_is_compared_by_value_as_the_api_server_canonicalises_it() -> None:
    quota = {"spec": {"hard": {"cpu": "500m", "memory": "1Gi"}}}
    assert quota_problems(quota, "t", "0.5", "1024Mi") == []


def test_default_local_queue_must_be_active() -> None:
    assert localqueue_pending(None, "t") == "LocalQueue t/default: missing"
    active = obj("LocalQueue", "default", status={"conditions": [{"type": "Active", "status": "True"}]}, namespace="t")
    assert localqueue_pending(active, "t") is None
    assert localqueue_pending(obj("LocalQueue", "default", namespace="t"), "t") == "LocalQueue t/default: not Active"


def test_terminating_namespaces_are_listed_with_what_holds_them() -> None:
    stuck = {
        "metadata": {"name": "kubeflow"},
        "status": {
            "phase": "Terminating",
            "conditions": [
                {"type": "NamespaceContentRemaining", "status": "True", "message": "Some resources are remaining: profiles.kubeflow.org has 1"},
                {"type": "NamespaceDeletionDiscoveryFailure", "status": "False", "message": "All good"},
            ],
        },
    }
    assert terminating([stuck, {"metadata": {"name": "default"}, "status": {"phase": "Active"}}]) == [
        "kubeflow: Some resources are remaining: profiles.kubeflow.org has 1"
    ]


def pod(name: str, phase: str, *statuses: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "kubeflow", "name": name},
        "spec": {"containers": [{"name": "main"}, {"name": "istio-proxy"}]},
        "status": {"phase": phase, "containerStatuses": list(statuses)},
    }


def test_logs_are_collected_from_failed_restarted_pending_and_unready_pods_only() -> None:
    ok = {"ready": True, "restartCount": 0}
    pods = [
        pod("fine", "Running", ok, ok),
        pod("done", "Succeeded"),
        pod("failed", "Failed"),
        pod("waiting", "Pending"),
        pod("restarted", "Running", {"ready": True, "restartCount": 2}, ok),
        pod("unready", "Running", {"ready": False, "restartCount": 0}, ok),
    ]
    assert [name for _, name, _ in unhealthy_pods(pods)] == ["failed", "waiting", "restarted", "unready"]
    assert unhealthy_pods([pod("failed", "Failed")]) == [("kubeflow", "failed", ["main", "istio-proxy"])]


def test_a_workload_is_admitted_by_its_condition_or_its_recorded_admission() -> None:
    assert admitted({"status": {"conditions": [{"type": "Admitted", "status": "True"}]}})
    assert admitted({"status": {"admission": {"clusterQueue": "team"}, "conditions": [{"type": "Finished", "status": "True"}]}})
    assert not admitted({"status": {"conditions": [{"type": "QuotaReserved", "status": "False"}]}})
    assert owned_by({"metadata": {"ownerReferences": [{"uid": "u1"}]}}, "u1")
    assert not owned_by({"metadata": {}}, "u1")


@pytest.mark.skipif(not crds.available(), reason=crds.MISSING)
def test_rayjob_is_valid_for_kuberay_and_keeps_istio_out() -> None:
    rayjob = rayjob_manifest("e2e-ray", "team", "rayproject/ray:2.46.0")
    assert validate_object(rayjob) == []
    spec = rayjob["spec"]
    templates = [spec["rayClusterSpec"]["headGroupSpec"]["template"], spec["submitterPodTemplate"]]
    templates += [g["template"] for g in spec["rayClusterSpec"]["workerGroupSpecs"]]
    assert all(t["metadata"]["labels"]["sidecar.istio.io/inject"] == "false" for t in templates)
    assert "ray.cluster_resources()" in spec["entrypoint"]


def test_rayjob_state_follows_job_and_deployment_status() -> None:
    assert rayjob_state({"status": {"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED"}})[0] == "succeeded"
    assert rayjob_state({"status": {"jobDeploymentStatus": "Running", "jobStatus": "RUNNING"}}) == (
        "pending",
        "deployment Running, job RUNNING",
    )
    assert rayjob_state({"status": {"jobDeploymentStatus": "Failed", "message": "deadline"}}) == (
        "failed",
        "deployment Failed, job -: deadline",
    )
    assert rayjob_state({}) == ("pending", "deployment -, job -")


# --- teardown order -----------------------------------------------------------------------

STACK_URN = "urn:pulumi:e2e::mlplatform::pulumi:pulumi:Stack::mlplatform-e2e"


def res(type_: str, name: str, parent: str | None = STACK_URN) -> StateResource:
    return StateResource(urn=f"urn:pulumi:e2e::mlplatform::{type_}::{name}", type=type_, parent=parent)


def test_teardown_goes_teams_then_components_then_cluster() -> None:
    kind = res("mlplatform:infra:KindCluster", "mlplatform-e2e")
    command = res("command:local:Command", "mlplatform-e2e", kind.urn)
    provider = res("pulumi:providers:kubernetes", "k8s")
    kubeflow = res("mlplatform:components:Kubeflow", "kubeflow")
    dashboard = res("kubernetes:kustomize/v2:Directory", "central-dashboard", kubeflow.urn)
    deployment = res("kubernetes:apps/v1:Deployment", "centraldashboard", dashboard.urn)
    teams = res("mlplatform:components:Profiles", "profiles")
    profile = res("kubernetes:kubeflow.org/v1:Profile", "e2e-team", teams.urn)
    quota = res("kubernetes:core/v1:ResourceQuota", "e2e-team", teams.urn)
    queue = res("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "e2e-team-default")
    flavor = res("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor", "default")
    stack = StateResource(urn=STACK_URN, type="pulumi:pulumi:Stack", parent=None)
    stages = teardown_stages([stack, deployment, profile, command, kind, provider, kubeflow, dashboard, teams, quota, queue, flavor])
    assert [name for name, _ in stages] == ["teams", "components", "cluster"]
    by_stage = dict(stages)
    assert set(by_stage["teams"]) == {teams.urn, profile.urn, quota.urn, queue.urn}
    assert set(by_stage["components"]) == {kubeflow.urn, dashboard.urn, deployment.urn, flavor.urn}
    assert set(by_stage["cluster"]) == {kind.urn, command.urn, provider.urn}


def test_teardown_leaves_out_empty_stages() -> None:
    kind = res("mlplatform:infra:KindCluster", "c")
    assert teardown_stages([kind, res("pulumi:providers:kubernetes", "k8s")]) == [
        ("cluster", sorted([kind.urn, res("pulumi:providers:kubernetes", "k8s").urn]))
    ]
    assert teardown_stages([]) == []


def test_pulumi_output_goes_to_the_log_and_streams_to_the_terminal() -> None:
    log, terminal = io.StringIO(), io.StringIO()
    write = writer(log, terminal)
    write("Updating (e2e):")
    write("  + kubernetes:core/v1:Namespace team-a created\n")
    expected = "Updating (e2e):\n  + kubernetes:core/v1:Namespace team-a created\n"
    assert log.getvalue() == expected and terminal.getvalue() == expected


def test_a_group_member_has_the_strongest_of_their_entries() -> None:
    vision = Team.model_validate(
        {
            "name": "vision",
            "owner": "lead@acme.com",
            "contributors": [{"email": "ana@acme.com", "role": "view"}, {"group": "ml-leads", "role": "admin"}, {"group": "ml", "role": "edit"}],
        }
    )
    groups = {"ml-leads": ["oli@acme.com"], "ml": ["ana@acme.com", "eve@acme.com"]}
    assert membership(vision, "oli@acme.com", groups) == "owner"
    assert membership(vision, "ana@acme.com", groups) == "edit"  # view as a person, edit through ml
    assert membership(vision, "eve@acme.com", groups) == "edit"
    assert membership(vision, "eve@acme.com") == "outsider"  # without the groups' members: nothing
    checks = access_matrix([vision], ["oli@acme.com"], groups=groups)
    assert expected(checks, "oli@acme.com", "vision")[("create", "rolebindings")]


def test_kubectl_can_i_impersonates_the_member_and_the_group() -> None:
    checks = access_matrix([team("vision", "lead@acme.com")], ["eve@acme.com"])
    check = next(c for c in checks if c.user == "eve@acme.com" and c.resource == "rolebindings")
    assert can_i("/tmp/k", check, "ml@acme.com") == [
        "kubectl", "--kubeconfig", "/tmp/k", "auth", "can-i", "create", "rolebindings.rbac.authorization.k8s.io",
        "-n", "vision", "--as", "eve@acme.com", "--as-group", "ml@acme.com", "--quiet",
    ]
