"""Katib's and the Model Registry's databases (issue 43), with the care Pipelines takes
(tests/test_pipelines.py): each client can sign in to the database it is given, on kind (the
trees' MySQL 8.4 in the cluster) and on GKE (a team's Cloud SQL for MySQL 8.4, private IP,
backed up); every credential is generated, none is the trees' public one, and no client signs in
as root. The dev fixture keeps each team's registry in the cluster, dev-groups on Cloud SQL. And a
team's Spark jobs act as the team on GKE (Workload Identity), as its notebooks do."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

from components import katib
from components import model_registry as registry
from components.spark import SPARK_ROLE, SPARK_SERVICE_ACCOUNT
from facts import mysql_auth
from facts.versions import CLOUD_SQL_MYSQL_84
from tests.conftest import base_gke, with_changes
from tests.support import mirror
from tests.support.renders import rendered
from tooling.fullrender import FullRender
from tooling.plan import Plan

TEAMS = ("vision", "nlp", "research")
INSTANCE = "gcp:sql/databaseInstance:DatabaseInstance"


def one(render: FullRender, kind: str, name: str, namespace: str) -> dict[str, Any]:
    (found,) = [o.obj for o in render.objects if o.key[1:] == (kind, namespace, name)]
    return found


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    first: dict[str, Any] = deployment["spec"]["template"]["spec"]["containers"][0]
    return first


def env(deployment: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container(deployment).get("env") or []}


def test_katib_and_the_registry_sign_in_to_cloud_sql_for_mysql_84() -> None:
    """Cloud SQL 8.4 gives the user it makes caching_sha2_password, which go-sql-driver/mysql (both
    servers' client) speaks over plain TCP by asking for the server's RSA key (facts/mysql_auth.py)."""
    assert mysql_auth.CLOUD_SQL_USER_PLUGIN[CLOUD_SQL_MYSQL_84.version] in mysql_auth.MODEL_REGISTRY_CLIENT_PLUGINS
    assert mysql_auth.CLOUD_SQL_USER_PLUGIN[CLOUD_SQL_MYSQL_84.version] not in mysql_auth.METADATA_CLIENT_PLUGINS  # why Pipelines keeps 8.0


@mirror.needed
def test_in_the_cluster_the_mysql_84_servers_give_their_users_a_plugin_the_clients_speak() -> None:
    """Katib's MySQL (dev-groups) and a team registry's (dev) run MySQL 8.4 started without
    `--authentication-policy`: their users get 8.4's default plugin, which both clients speak."""
    assert mysql_auth.IN_CLUSTER_MYSQL_DEFAULT_PLUGIN in mysql_auth.KATIB_CLIENT_PLUGINS & mysql_auth.MODEL_REGISTRY_CLIENT_PLUGINS
    for render, name, namespace in ((rendered("dev-groups"), "katib-mysql", "kubeflow"), (rendered("dev"), "model-registry-db", "vision")):
        mysql = container(one(render, "Deployment", name, namespace))
        assert mysql["image"].rsplit(":", 1)[1].startswith("8.4."), name
        assert not any("authentication-policy" in str(a) for a in [*(mysql.get("args") or []), *(mysql.get("command") or [])]), name


@mirror.needed
def test_katibs_database_manager_signs_in_as_its_own_user_with_a_generated_password() -> None:
    render = rendered("dev-groups")
    secret = one(render, "Secret", katib.DB_SECRET, "kubeflow")
    assert {k: secret.get("stringData", {}).get(k) for k in (katib.ROOT_PASSWORD_KEY, katib.PASSWORD_KEY)} == {
        katib.ROOT_PASSWORD_KEY: "[secret]",
        katib.PASSWORD_KEY: "[secret]",
    }
    assert "test" not in str(secret.get("data") or {})
    manager = env(one(render, "Deployment", "katib-db-manager", "kubeflow"))
    assert manager["DB_USER"] == katib.DB_USER != "root"
    assert manager["DB_PASSWORD"] == {"secretKeyRef": {"name": katib.DB_SECRET, "key": katib.PASSWORD_KEY}}
    mysql = env(one(render, "Deployment", "katib-mysql", "kubeflow"))
    assert mysql["MYSQL_USER"] == katib.DB_USER and "MYSQL_ALLOW_EMPTY_PASSWORD" not in mysql


@mirror.needed
def test_a_team_registry_in_the_cluster_signs_in_as_its_own_user_with_a_generated_password() -> None:
    render = rendered("dev")
    for team in TEAMS:
        secret = one(render, "Secret", registry.DB_SECRET, team)
        assert secret["stringData"] == {
            "MYSQL_USER_NAME": registry.DB_USER,
            "MYSQL_ROOT_PASSWORD": "[secret]",
            "MYSQL_USER": registry.DB_USER,
            "MYSQL_PASSWORD": "[secret]",
        }
        assert not secret.get("data"), team  # the tree's root / `test` gone
        assert "MYSQL_ALLOW_EMPTY_PASSWORD" not in one(render, "ConfigMap", registry.DB_PARAMETERS, team)["data"]
        server = container(one(render, "Deployment", registry.SERVER[1], team))
        dsn = next(a for a in server["args"] if a.startswith("--embedmd-database-dsn="))
        assert dsn.split("=", 1)[1].startswith("$(MYSQL_USER_NAME):$(MYSQL_ROOT_PASSWORD)@tcp(model-registry-db:")
        assert one(render, "Deployment", registry.DB[1], team)["spec"]["replicas"] == 1


@mirror.needed
def test_on_gke_a_team_registry_reaches_its_cloud_sql_instance_and_the_trees_mysql_runs_no_replica() -> None:
    render = rendered("dev-groups")
    for team in TEAMS:
        assert one(render, "Deployment", registry.DB[1], team)["spec"]["replicas"] == 0
        service = one(render, "Service", registry.DB_SERVICE, team)
        assert "selector" not in service["spec"] and service["spec"]["ports"][0]["port"] == 3306
        endpoints = one(render, "EndpointSlice", registry.DB_SERVICE, team)
        assert endpoints["metadata"]["labels"]["kubernetes.io/service-name"] == registry.DB_SERVICE
        assert endpoints["ports"][0]["port"] == 3306


def test_on_gke_each_team_registry_has_a_cloud_sql_instance_of_its_own_private_and_backed_up(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("dev-groups")
    instances = {r.inputs["name"]: r for r in plan.of_type(INSTANCE) if "-mr-" in r.inputs["name"]}
    assert sorted(instances) == sorted(f"ml-dev-mr-{team}" for team in TEAMS)
    for instance in instances.values():
        settings = instance.inputs["settings"]
        assert instance.inputs["databaseVersion"] == CLOUD_SQL_MYSQL_84.version
        assert settings["ipConfiguration"]["ipv4Enabled"] is False and "privateNetwork" in settings["ipConfiguration"]
        assert settings["backupConfiguration"]["enabled"] and settings["backupConfiguration"]["binaryLogEnabled"]
    users = [r for r in plan.of_type("gcp:sql/user:User") if r.inputs["name"] == registry.DB_USER]
    assert len(users) == len(TEAMS) and {u.inputs["password"] for u in users} == {"[secret]"}
    databases = [r for r in plan.of_type("gcp:sql/database:Database") if r.name.startswith("model-registry-")]
    assert sorted(r.name for r in databases) == sorted(f"model-registry-{team}-db-{registry.DATABASE}" for team in TEAMS)


@pytest.mark.parametrize("stack", ["dev", "dev-groups"])
def test_pipelines_instance_is_left_on_mysql_80(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    """The registries' 8.4 is theirs alone: Pipelines' instance stays on the line ML Metadata signs in to."""
    (pipelines,) = [r for r in shipped_plan(stack).of_type(INSTANCE) if r.inputs["name"].endswith("-pipelines")]
    assert mysql_auth.CLOUD_SQL_USER_PLUGIN[pipelines.inputs["databaseVersion"]] in mysql_auth.METADATA_CLIENT_PLUGINS


def test_on_gke_a_teams_spark_jobs_run_as_its_spark_account_acting_as_the_team(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    """The account the Kubeflow SDK's Spark jobs run as, in the team namespace, bound to the Spark
    job role there and acting as the team's Google service account (Workload Identity), like its
    default-editor (tests/test_team_google.py)."""
    team = {"name": "vision", "owner": "lead@acme.com", "quota": {"cpu": 8, "memory": "32Gi"}}
    plan = plan_of(with_changes(base_gke(), {"mlplatform:components.spark": {"enabled": True}, "mlplatform:teams": [team]}))
    member = plan.one("gcp:serviceaccount/iAMMember:IAMMember", f"vision-gsa-{SPARK_SERVICE_ACCOUNT}-workload-identity").inputs
    assert member["role"] == "roles/iam.workloadIdentityUser"
    assert member["member"] == f"serviceAccount:acme-test.svc.id.goog[vision/{SPARK_SERVICE_ACCOUNT}]"
    account = plan.one("kubernetes:core/v1:ServiceAccount", f"vision/{SPARK_SERVICE_ACCOUNT}").inputs
    assert account["metadata"]["annotations"]["iam.gke.io/gcp-service-account"] == "team-vision@acme-test.iam.gserviceaccount.com"
    binding = plan.one("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", f"vision/{SPARK_SERVICE_ACCOUNT}").inputs
    assert binding["roleRef"]["name"] == SPARK_ROLE and binding["subjects"] == [
        {"kind": "ServiceAccount", "name": SPARK_SERVICE_ACCOUNT, "namespace": "vision"}
    ]


def test_katibs_job_trial_templates_keep_their_pods_out_of_the_mesh() -> None:
    """A Job trial in a team namespace (istio-injection: enabled) would get the Istio sidecar, which
    Katib's metrics collector waits for (it waits for every root process of the pod) while the
    native sidecar waits for it: the UI's Job templates opt out, as the runtimes' TrainJob pods do."""
    render = rendered("dev-groups")
    team = one(render, "Namespace", "vision", "")
    assert team["metadata"]["labels"]["istio-injection"] == "enabled"
    templates = one(render, "ConfigMap", katib.TRIAL_TEMPLATES, "kubeflow")["data"]
    jobs = {key: yaml.safe_load(text) for key, text in templates.items() if yaml.safe_load(text)["kind"] == "Job"}
    assert sorted(jobs) == ["defaultTrialTemplate.yaml", "enasCPUTemplate"]
    injector = [
        o.obj
        for o in render.objects
        if o.obj["kind"] == "MutatingWebhookConfiguration" and o.key[3] == "istio-sidecar-injector"
    ]
    (namespaced,) = [w for o in injector for w in o["webhooks"] if w["name"] == "namespace.sidecar-injector.istio.io"]
    (opt_out,) = namespaced["objectSelector"]["matchExpressions"]
    for key, job in jobs.items():
        labels = job["spec"]["template"]["metadata"]["labels"]
        assert opt_out["operator"] == "NotIn" and labels.get(opt_out["key"]) in opt_out["values"], key
