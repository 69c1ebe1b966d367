"""Kubeflow Pipelines: the release's tree with the platform's credentials and volumes, the
database on Cloud SQL on GKE, every team's artifact settings, and the rules that keep them."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from components import argo, team_pipelines
from components import pipelines as kfp
from components.profiles.args import team_args
from components.profiles.namespace import profile as team_profile
from components.team_pipelines import TeamPipelines
from facts import mysql_auth
from facts.versions import (
    ARGO_WORKFLOWS,
    BUSYBOX,
    CLOUD_SQL_MYSQL,
    KFP_SDK,
    KUBEFLOW_PIPELINES,
    MYSQL_IMAGE,
    PINS,
    image,
)
from plumbing.base import CONFIG_DIGEST_ANNOTATION, with_config_digest
from plumbing.sources import mirror_sources, prepared_tree
from stackmodel.components.pipelines import PIPELINES
from stackmodel.config import ConfigError, load, validate
from tests.conftest import base_gke, base_kind, with_changes
from tests.support.renders import MIRROR, rendered
from tooling import check as lint
from tooling.fullrender import FullRender, Rendered
from tooling.plan import Plan

needs_mirror = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"no upstream mirror at {MIRROR}")
K = "mlplatform:components"
T = "mlplatform:teams"
TEAM = {"name": "vision", "owner": "a@acme.com"}
INSTANCE = "gcp:sql/databaseInstance:DatabaseInstance"


def _objects(render: FullRender, kind: str, name: str) -> list[Rendered]:
    return [o for o in render.objects if o.obj["kind"] == kind and o.key[3] == name]


def _one(render: FullRender, kind: str, name: str, namespace: str = "kubeflow") -> dict[str, Any]:
    (found,) = [o.obj for o in _objects(render, kind, name) if o.key[2] == namespace]
    return found


def _env(obj: dict[str, Any]) -> dict[str, Any]:
    container = obj["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env") or []}


# --- credentials -----------------------------------------------------------------------


@needs_mirror
def test_the_database_user_is_ours_and_every_credential_is_generated() -> None:
    render = rendered("kind")
    db = _one(render, "Secret", kfp.DB_SECRET)
    assert db["stringData"] == {"username": kfp.DB_USER, "password": "[secret]", "root-password": "[secret]"}
    store = _one(render, "Secret", kfp.OBJECT_STORE_SECRET)
    assert store["stringData"] == {"accesskey": "[secret]", "secretkey": "[secret]"} and not store["data"]
    mysql = _env(_one(render, "Deployment", "mysql"))
    assert "MYSQL_ALLOW_EMPTY_PASSWORD" not in mysql
    assert mysql["MYSQL_ROOT_PASSWORD"] == {"secretKeyRef": {"name": kfp.DB_SECRET, "key": kfp.DB_ROOT_PASSWORD_KEY}}
    assert mysql["MYSQL_USER"] == {"secretKeyRef": {"name": kfp.DB_SECRET, "key": "username"}}
    # Every KFP component reads the user and password from that Secret (none is written elsewhere).
    api = _env(_one(render, "Deployment", "ml-pipeline"))
    assert api["DBCONFIG_USER"] == {"secretKeyRef": {"key": "username", "name": kfp.DB_SECRET}}
    assert api["OBJECTSTORECONFIG_SECRETACCESSKEY"] == {"secretKeyRef": {"key": "secretkey", "name": kfp.OBJECT_STORE_SECRET}}


@needs_mirror
@pytest.mark.parametrize("stack", ["kind", "dev", "prod"])
def test_no_default_credential_is_anywhere_in_the_render(stack: str) -> None:
    text = json.dumps([o.obj for o in rendered(stack).objects])
    assert "minio123" not in text
    assert '"username": "root"' not in text and '"MYSQL_ALLOW_EMPTY_PASSWORD"' not in text
    for o in rendered(stack).objects:
        if o.obj["kind"] == "Secret":
            values = {**(o.obj.get("data") or {}), **(o.obj.get("stringData") or {})}
            assert all(v != "" for k, v in values.items() if "password" in k), o.key


def test_the_mysql_init_script_grants_our_user_its_three_databases_only() -> None:
    assert kfp.initdb_sql().splitlines() == [
        line
        for db in ("mlpipeline", "cachedb", "metadb")
        for line in (f"CREATE DATABASE IF NOT EXISTS `{db}`;", f"GRANT ALL PRIVILEGES ON `{db}`.* TO 'kfp'@'%';")
    ]


@needs_mirror
def test_the_mysql_init_script_is_mounted_where_the_image_runs_it() -> None:
    spec = _one(rendered("kind"), "Deployment", "mysql")["spec"]["template"]["spec"]
    assert {"name": kfp.MYSQL_INITDB, "configMap": {"name": kfp.MYSQL_INITDB}} in spec["volumes"]
    assert {"name": kfp.MYSQL_INITDB, "mountPath": "/docker-entrypoint-initdb.d", "readOnly": True} in spec["containers"][0]["volumeMounts"]


# --- what runs, and the data it keeps ---------------------------------------------------


@needs_mirror
def test_metacontroller_and_the_upstream_hook_run_no_replica() -> None:
    render = rendered("kind")
    for kind, name in (kfp.METACONTROLLER, kfp.PROFILE_HOOK):
        obj = _one(render, kind, name)
        assert obj["spec"]["replicas"] == 0
        assert "team_pipelines" in obj["metadata"]["annotations"][kfp.NOT_RUNNING_ANNOTATION]
    assert "replicas" not in _one(render, "Deployment", "mysql")["spec"]  # kind: the tree's MySQL runs


@needs_mirror
def test_every_pipeline_step_pod_is_labelled_batch_through_argos_workflow_defaults() -> None:
    """Kueue reads a GPU step pod's class from its own label (facts/priorities.py); the tree's
    configuration has no workflowDefaults of its own (kubeflow manifests 26.03.1-rc.2 third-party/argo)."""
    defaults = yaml.safe_load(_one(rendered("kind"), "ConfigMap", argo.WORKFLOW_CONTROLLER_CONFIG)["data"]["workflowDefaults"])
    assert defaults == {"spec": {"podMetadata": {"labels": {"kueue.x-k8s.io/priority-class": "batch"}}}}


def test_the_step_priority_keeps_what_argos_configuration_already_defaults() -> None:
    workflow_defaults = "spec:\n  ttlStrategy: {secondsAfterCompletion: 60}\n  podMetadata:\n    labels: {team: nlp}\n"
    props = {"kind": "ConfigMap", "metadata": {"name": argo.WORKFLOW_CONTROLLER_CONFIG}, "data": {"workflowDefaults": workflow_defaults, "executor": "{}"}}
    changed = argo.with_step_priority(props)
    assert changed is not None and changed["data"]["executor"] == "{}"
    assert yaml.safe_load(changed["data"]["workflowDefaults"]) == {
        "spec": {"ttlStrategy": {"secondsAfterCompletion": 60}, "podMetadata": {"labels": {"team": "nlp", "kueue.x-k8s.io/priority-class": "batch"}}}
    }
    assert argo.with_step_priority({"kind": "ConfigMap", "metadata": {"name": "other"}, "data": {}}) is None


@needs_mirror
def test_argos_executor_containers_get_argos_documented_size_and_the_rest_of_its_settings_stay() -> None:
    # argoproj/argo-workflows v3.7.3 docs/workflow-controller-configmap.yaml, `executor` example:
    # requests 0.1 CPU / 64Mi, limits 0.5 CPU / 512Mi. The tree sets a pull policy and a security context.
    executor = yaml.safe_load(_one(rendered("kind"), "ConfigMap", argo.WORKFLOW_CONTROLLER_CONFIG)["data"]["executor"])
    assert executor["resources"] == {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}}
    assert executor["imagePullPolicy"] == "IfNotPresent" and executor["securityContext"]["runAsNonRoot"] is True


def test_a_team_running_pipelines_keeps_room_for_its_cpu_steps() -> None:
    # Each step: its driver pod (Argo's init 100m/64Mi, or wait 100m/64Mi and the driver 100m/64Mi)
    # and its executor pod (Argo's init, or kfp-launcher 100m/256Mi; wait and main at the LimitRange's
    # 1 CPU/2Gi): 200m/128Mi + 1100m/2112Mi. Three steps: 3900m and 6720Mi beyond the queue's 32
    # CPUs and 128Gi, one notebook (500m, 1Gi) and its sidecar (10m, 40Mi).
    team = {**TEAM, "quota": {"cpu": "32", "memory": "128Gi", "notebooks": 1, "pipelineSteps": 3}}
    with_pipelines = with_changes(base_kind(), {f"{K}.pipelines": {"enabled": True}, f"{K}.kueue": {"enabled": True}, T: [team]})
    config = validate(with_pipelines, "test")
    hard = team_profile(team_args(config, config.teams[0]))["spec"]["resourceQuotaSpec"]["hard"]
    assert hard == {"cpu": "36410m", "memory": f"{128 * 1024 + 1024 + 40 + 6720}Mi"}
    without = validate(with_changes(with_pipelines, {f"{K}.pipelines": {"enabled": False}}), "test")
    assert team_profile(team_args(without, without.teams[0]))["spec"]["resourceQuotaSpec"]["hard"] == {"cpu": "32510m", "memory": f"{128 * 1024 + 1024 + 40}Mi"}


@needs_mirror
@pytest.mark.parametrize("stack", ["kind", "dev"])
def test_the_database_and_object_store_volumes_are_kept_and_sized_from_the_stack(stack: str) -> None:
    volumes = {o.key[3]: o for o in rendered(stack).objects if o.obj["kind"] == "PersistentVolumeClaim" and o.source == "pipelines/pipelines"}
    assert set(volumes) == set(kfp.VOLUMES)
    assert all(o.kept for o in volumes.values())
    settings = load(stack).components[PIPELINES]
    assert volumes["seaweedfs-pvc"].obj["spec"]["resources"]["requests"]["storage"] == settings.object_store_storage


def test_under_pulumi_the_volumes_are_protected_and_retained_and_nothing_else_is() -> None:
    """What `pulumi up` does with the tree's objects (the install's resource transform)."""
    import pulumi

    from plumbing.base import resource_transform

    transform = resource_transform([], kept=kfp.holds_data)

    def options(kind: str, name: str) -> pulumi.ResourceOptions | None:
        props = {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": "kubeflow"}}
        result = transform(pulumi.ResourceTransformArgs(True, f"kubernetes:core/v1:{kind}", f"pipelines:kubeflow/{name}", props, pulumi.ResourceOptions()))
        return result.opts if result is not None else None  # type: ignore[union-attr]

    for volume in kfp.VOLUMES:
        kept = options("PersistentVolumeClaim", volume)
        assert kept is not None and kept.protect is True and kept.retain_on_delete is True
    assert options("PersistentVolumeClaim", "someone-elses") is None
    assert options("Service", "mysql") is None


def test_a_volume_size_is_a_quantity_of_at_least_a_mebibyte() -> None:
    with pytest.raises(ConfigError) as caught:
        validate(with_changes(base_kind(), {f"{K}.pipelines": {"databaseStorage": "20"}}), "bad")
    (problem,) = caught.value.problems
    assert problem.path == f"{K}.pipelines.databaseStorage"
    assert "'20' is not a volume size such as 50Gi" in problem.message


# --- the in-cluster object store: one identity per team ---------------------------------


def test_each_team_identity_reads_and_writes_its_prefix_only() -> None:
    assert kfp.team_actions("nlp") == "Read:mlpipeline/private-artifacts/nlp/*,Write:mlpipeline/private-artifacts/nlp/*,List:mlpipeline"


def _fake_weed(tmp_path: Path, identities: list[str]) -> Path:
    """A `weed` that answers `s3.configure` with a config naming `identities` and logs every command."""
    config = json.dumps({"identities": [{"name": n} for n in identities]}, indent=2)
    script = tmp_path / "weed"
    script.write_text(f"#!/bin/sh\nwhile read -r line; do echo \"$line\" >> {tmp_path}/commands; done\ncat <<'EOF'\n{config}\nEOF\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_the_identity_script_drops_stale_team_identities_and_registers_every_team(tmp_path: Path) -> None:
    weed = _fake_weed(tmp_path, ["kubeflow-admin", "team-gone", "team-nlp"])
    script = kfp.team_identities_script(("nlp", "vision")).replace("/usr/bin/weed", str(weed))
    env = {**os.environ, "TEAM_NLP_ACCESSKEY": "AK1", "TEAM_NLP_SECRETKEY": "SK1", "TEAM_VISION_ACCESSKEY": "AK2", "TEAM_VISION_SECRETKEY": "SK2"}
    subprocess.run(["sh", "-c", script + "echo done"], check=True, env=env, capture_output=True, timeout=30)
    commands = (tmp_path / "commands").read_text().splitlines()
    assert commands[0] == "s3.configure"
    assert "s3.configure -user team-gone -delete -apply" in commands and "s3.configure -user team-nlp -delete -apply" in commands
    assert not any("kubeflow-admin" in c for c in commands)
    assert f"s3.configure -user team-nlp -access_key AK1 -secret_key SK1 -actions {kfp.team_actions('nlp')} -apply" in commands
    assert f"s3.configure -user team-vision -access_key AK2 -secret_key SK2 -actions {kfp.team_actions('vision')} -apply" in commands


@needs_mirror
def test_seaweedfs_registers_the_teams_before_it_reports_ready_and_rolls_when_they_change() -> None:
    render = rendered("kind")
    weed = _one(render, "Deployment", "seaweedfs")
    container = weed["spec"]["template"]["spec"]["containers"][0]
    script = container["lifecycle"]["postStart"]["exec"]["command"][-1]
    teams = [t.name for t in load("kind").teams]
    assert script.index("-user team-" + teams[0]) < script.index(kfp.SEAWEEDFS_READY_LINE)
    refs = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container["env"] if e["name"].startswith("TEAM_")}
    assert refs[kfp.env_name(teams[0], "accesskey")] == {"name": kfp.TEAM_KEYS_SECRET, "key": f"{teams[0]}-accesskey"}
    assert len(refs) == 2 * len(teams)
    assert CONFIG_DIGEST_ANNOTATION in weed["spec"]["template"]["metadata"]["annotations"]
    assert set(_one(render, "Secret", kfp.TEAM_KEYS_SECRET)["stringData"]) == {f"{t}-{k}" for t in teams for k in ("accesskey", "secretkey")}


def _readers_digest(args: kfp.PipelinesArgs, password: str = "p") -> dict[str, Any]:
    """The digest each of the tree's Deployments gets from the transforms (plain generated values)."""
    transforms = kfp.pipelines_transforms(args, password, "root", "access", "secret")
    (rolled,) = [t for t in transforms if getattr(t, "func", None) is with_config_digest]
    found = {}
    for kind, name in kfp.CONFIG_READERS:
        props = rolled({"kind": kind, "metadata": {"name": name}, "spec": {"template": {"spec": {}}}})
        assert props is not None, name
        found[name] = props["spec"]["template"]["metadata"]["annotations"][CONFIG_DIGEST_ANNOTATION]
    return found


def test_pipelines_pods_roll_when_the_teams_or_a_password_change() -> None:
    """Every reader of what the program writes into the tree gets one digest, and each input moves it."""
    kind = load("kind")
    args = kfp.PipelinesArgs(
        sources=kind.sources, settings=kind.components[PIPELINES], artifacts_in_cluster=True, in_cluster_teams=("nlp",)
    )
    before = _readers_digest(args)
    assert len(set(before.values())) == 1 and None not in before.values()
    for changed in (replace(args, in_cluster_teams=("nlp", "vision")), replace(args, in_cluster_teams=())):
        assert set(_readers_digest(changed).values()).isdisjoint(before.values())
    assert set(_readers_digest(args, password="rotated").values()).isdisjoint(before.values())


def test_with_no_team_left_the_store_still_drops_every_team_identity(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    plan = plan_of(with_changes(base_kind(), {f"{K}.pipelines": {"enabled": True}}))
    transforms = plan.record.transforms[("kubernetes:kustomize/v2:Directory", kfp.INSTALL)]
    (identities,) = [t for t in transforms if getattr(t, "func", None) is kfp.with_team_identities]
    assert identities.keywords == {"teams": ()}  # type: ignore[attr-defined]
    assert "-delete -apply" in kfp.team_identities_script(())


def test_a_changed_postStart_stops_the_render_instead_of_skipping_the_teams() -> None:
    weed = {"kind": "Deployment", "metadata": {"name": "seaweedfs"}, "spec": {"template": {"spec": {"containers": [{"lifecycle": {"postStart": {"exec": {"command": ["sh", "-c", "echo"]}}}}]}}}}
    with pytest.raises(ValueError, match="no 'touch /tmp/initialization-complete'"):
        kfp.with_team_identities(weed, ("nlp",))


# --- teams -------------------------------------------------------------------------------


def test_an_in_cluster_team_writes_under_its_own_prefix_with_its_own_keys() -> None:
    keys = team_pipelines.ObjectStoreKeys("AK", "SK")
    secret, launcher, metadata, repositories = team_pipelines.pipeline_objects("nlp", TeamPipelines(bucket=None), keys)
    assert secret["metadata"] == {"name": "mlpipeline-minio-artifact", "namespace": "nlp"}
    assert secret["stringData"] == {"accesskey": "AK", "secretkey": "SK"}
    assert launcher["data"] == {"defaultPipelineRoot": "minio://mlpipeline/private-artifacts/nlp/v2/artifacts"}
    assert metadata["data"] == {"METADATA_GRPC_SERVICE_HOST": "metadata-grpc-service.kubeflow", "METADATA_GRPC_SERVICE_PORT": "8080"}
    s3 = json.loads(repositories["data"]["default-namespaced"])["s3"]
    assert s3["keyFormat"].startswith("private-artifacts/nlp/") and s3["accessKeySecret"]["name"] == "mlpipeline-minio-artifact"
    assert repositories["metadata"]["annotations"] == {"workflows.argoproj.io/default-artifact-repository": "default-namespaced"}


def test_a_gke_team_writes_to_its_bucket_as_its_workload_identity() -> None:
    objects = team_pipelines.pipeline_objects("nlp", TeamPipelines(bucket="acme-nlp"), None)
    assert [o["kind"] for o in objects] == ["ConfigMap", "ConfigMap", "ConfigMap"]  # no key of any kind
    launcher, _, repositories = objects
    assert launcher["data"]["defaultPipelineRoot"] == "gs://acme-nlp/pipelines"
    assert json.loads(launcher["data"]["providers"]) == {"gs": {"default": {"credentials": {"fromEnv": True}}}}
    assert json.loads(repositories["data"]["default-namespaced"])["gcs"]["bucket"] == "acme-nlp"


def test_an_in_cluster_team_without_keys_is_a_bug_not_a_silent_default() -> None:
    with pytest.raises(ValueError, match="got no key pair"):
        team_pipelines.pipeline_objects("nlp", TeamPipelines(bucket=None), None)


@needs_mirror
def test_every_dev_team_runs_pipelines_in_its_bucket_readable_by_its_account_alone(shipped_plan: Callable[[str], Plan]) -> None:
    render = rendered("dev")
    plan = shipped_plan("dev")
    admins = {r.inputs["bucket"]: r.inputs["member"] for r in plan.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")}
    for team in load("dev").teams:
        root = _one(render, "ConfigMap", "kfp-launcher", team.name)["data"]["defaultPipelineRoot"]
        assert root == f"gs://acme-ml-dev-{team.name}/pipelines"
        assert f"acme-ml-dev-{team.name}" in admins
    # No team holds a key of any store: the bucket's IAM is the only way in.
    assert {o.key[2] for o in _objects(render, "Secret", "mlpipeline-minio-artifact")} == {"kubeflow"}
    assert not _objects(render, "Secret", kfp.TEAM_KEYS_SECRET)


@needs_mirror
def test_every_notebook_gets_a_token_for_the_pipelines_api() -> None:
    for stack in ("kind", "dev"):
        for team in load(stack).teams:
            spec = _one(rendered(stack), "PodDefault", "team-resources", team.name)["spec"]
            (token,) = [v for v in spec["volumes"] if v["name"] == team_pipelines.PIPELINES_TOKEN_VOLUME]
            assert token["projected"]["sources"] == [{"serviceAccountToken": {"path": "token", "audience": "pipelines.kubeflow.org", "expirationSeconds": 7200}}]
            env = {e["name"]: e["value"] for e in spec["env"] if "value" in e}
            assert env["KF_PIPELINES_SA_TOKEN_PATH"] == "/var/run/secrets/kubeflow/pipelines/token"


def test_a_gke_team_that_runs_pipelines_without_a_bucket_is_refused_with_the_fix() -> None:
    with pytest.raises(ConfigError) as caught:
        validate(with_changes(base_gke(), {f"{K}.pipelines": {"enabled": True}, T: [TEAM]}), "bad")
    assert [(p.path, p.message) for p in caught.value.problems] == [
        (f"{T}[0].bucket", "team vision runs pipelines, whose artifacts go to the team's own bucket on gke; add `bucket: {}` to the team (or disable mlplatform:components.pipelines)")
    ]


def test_pipelines_need_kubeflow() -> None:
    with pytest.raises(ConfigError) as caught:
        validate(with_changes(base_kind(), {f"{K}.pipelines": {"enabled": True}, f"{K}.kubeflow": {"enabled": False}}), "bad")
    assert [(p.path, p.message) for p in caught.value.problems] == [
        (f"{K}.kubeflow.enabled", "pipelines needs kubeflow; enable kubeflow or disable pipelines")
    ]


# --- GKE: Cloud SQL ---------------------------------------------------------------------


def test_the_metadata_server_can_sign_in_to_the_database_on_gke_and_kind() -> None:
    """ML Metadata speaks mysql_native_password only: Cloud SQL must give our user that plugin,
    and the in-cluster MySQL 8.4 must be started with it on (it is off by default in 8.4)."""
    assert mysql_auth.CLOUD_SQL_USER_PLUGIN[CLOUD_SQL_MYSQL.version] in mysql_auth.METADATA_CLIENT_PLUGINS
    assert mysql_auth.CLOUD_SQL_USER_PLUGIN["MYSQL_8_4"] not in mysql_auth.METADATA_CLIENT_PLUGINS
    mysql = _one(rendered("kind"), "Deployment", "mysql")["spec"]["template"]["spec"]["containers"][0]
    assert set(mysql_auth.IN_CLUSTER_MYSQL_ARGS) <= set(mysql["args"])


@pytest.mark.parametrize(("stack", "protected"), [("dev", False), ("prod", True)])
def test_gke_keeps_the_database_on_cloud_sql_private_ip_with_backups(stack: str, protected: bool, shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan(stack)
    (instance,) = plan.of_type(INSTANCE)
    settings = instance.inputs["settings"]
    assert instance.inputs["databaseVersion"] == CLOUD_SQL_MYSQL.version
    assert settings["ipConfiguration"]["ipv4Enabled"] is False and "privateNetwork" in settings["ipConfiguration"]
    backups = settings["backupConfiguration"]
    assert backups["enabled"] and backups["binaryLogEnabled"]
    assert backups["backupRetentionSettings"]["retainedBackups"] == load(stack).components[PIPELINES].cloud_sql.retained_backups
    assert instance.inputs["deletionProtection"] is protected and settings["deletionProtectionEnabled"] is protected
    assert instance.protect is protected
    assert {r.inputs["name"] for r in plan.of_type("gcp:sql/database:Database")} == set(kfp.DATABASES)
    (user,) = plan.of_type("gcp:sql/user:User")
    assert user.inputs["name"] == kfp.DB_USER and user.inputs["password"] == "[secret]"
    (peering,) = plan.of_type("gcp:servicenetworking/connection:Connection")
    assert peering.inputs["service"] == "servicenetworking.googleapis.com"


def test_on_a_shared_vpc_the_database_takes_the_host_projects_network_and_its_private_service_access() -> None:
    """tests/stacks/Pulumi.dev-shared-vpc.yaml: an existing network of a host project, whose
    admins set up Private Service Access (the default for an existing network)."""
    from tooling.plan import evaluate

    fixture = Path(__file__).resolve().parent / "stacks" / "Pulumi.dev-shared-vpc.yaml"
    plan = evaluate(load(str(fixture)), "dev-shared-vpc")
    (instance,) = plan.of_type(INSTANCE)
    assert instance.inputs["settings"]["ipConfiguration"]["privateNetwork"] == "projects/acme-net-host/global/networks/shared-vpc"
    assert plan.of_type("gcp:servicenetworking/connection:Connection") == []
    asked = with_changes(
        yaml.safe_load(fixture.read_text())["config"], {f"{K}.pipelines": {"cloudSql": {"privateServiceAccess": True}}}
    )
    addresses = evaluate(validate(asked, "test"), "test").of_type("gcp:compute/globalAddress:GlobalAddress")
    (peering_range,) = [a for a in addresses if a.inputs.get("purpose") == "VPC_PEERING"]
    assert peering_range.inputs["project"] == "acme-net-host" and peering_range.inputs["network"] == "projects/acme-net-host/global/networks/shared-vpc"


def test_prod_runs_a_standby_in_a_second_zone(shipped_plan: Callable[[str], Plan]) -> None:
    (instance,) = shipped_plan("prod").of_type(INSTANCE)
    assert instance.inputs["settings"]["availabilityType"] == "REGIONAL"


@needs_mirror
def test_on_gke_the_components_reach_cloud_sql_and_the_trees_mysql_runs_no_replica() -> None:
    render = rendered("dev")
    config = _one(render, "ConfigMap", "pipeline-install-config")["data"]
    assert config["dbHost"] == config["mysqlHost"] == kfp.DB_SERVICE
    assert _one(render, "Deployment", "mysql")["spec"]["replicas"] == 0
    service = _one(render, "Service", kfp.DB_SERVICE)
    assert "selector" not in service["spec"] and service["spec"]["ports"][0]["port"] == 3306
    endpoints = _one(render, "EndpointSlice", kfp.DB_SERVICE)
    assert endpoints["metadata"]["labels"]["kubernetes.io/service-name"] == kfp.DB_SERVICE


@pytest.mark.parametrize(
    ("tier", "message"),
    [
        ("db-n1-standard-2", "is not a Cloud SQL tier such as db-custom-2-7680"),
        ("db-custom-3-7680", "3 vCPUs: Cloud SQL's custom tiers have 1 or an even number of vCPUs up to 96"),
        ("db-custom-2-1000", "1000 MiB for 2 vCPUs: Cloud SQL takes a multiple of 256 MiB, 0.9 to 6.5 GiB per vCPU and at least 3840 MiB"),
    ],
)
def test_a_cloud_sql_tier_is_checked_before_google_refuses_it(tier: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        validate(with_changes(base_gke(), {f"{K}.pipelines": {"cloudSql": {"tier": tier}}}), "bad")
    (problem,) = caught.value.problems
    assert problem.path == f"{K}.pipelines.cloudSql.tier" and message in problem.message


def test_the_cost_view_prices_the_pipelines_database() -> None:
    from tooling.cost import cost_lines

    view = cost_lines(load("prod"))
    (line,) = [line for line in view.lines if line.what == "pipelines database"]
    # db-custom-2-7680 with a standby: 2 x (2 vCPUs x 0.0413 + 7.5 GiB x 0.0070 + 10 GB x 0.170 / 730)
    assert line.idle == line.ceiling == pytest.approx(2 * (2 * 0.0413 + 7.5 * 0.0070 + 10 * 0.170 / 730))
    assert "with a standby (HA)" in line.detail


# --- pins and images ----------------------------------------------------------------------


@needs_mirror
def test_the_pipelines_images_are_pinned_and_named_in_the_inventory() -> None:
    from plumbing.images import image_sites

    references = {site.reference for o in rendered("kind").objects for site in image_sites(o.obj)}
    assert image(MYSQL_IMAGE) in references and "mysql:8.4" not in references
    assert "ghcr.io/containerd/busybox" not in references
    assert f"ghcr.io/kubeflow/kfp-driver:{KUBEFLOW_PIPELINES.version}" in references
    assert f"ghcr.io/kubeflow/kfp-launcher:{KUBEFLOW_PIPELINES.version}" in references
    assert f"quay.io/argoproj/argoexec:{ARGO_WORKFLOWS.version}" in references
    assert _one(rendered("kind"), "ConfigMap", "pipeline-install-config")["data"]["cacheImage"] == image(BUSYBOX)


def test_the_pin_table_lists_argo_as_a_remote_base_with_its_source_and_kfp_for_the_examples() -> None:
    assert ARGO_WORKFLOWS in PINS and "remote bases the pinned Pipelines tree names" in ARGO_WORKFLOWS.source
    assert KFP_SDK.version == KUBEFLOW_PIPELINES.version
    requirements = (Path(__file__).resolve().parents[1] / "examples" / "requirements.txt").read_text().splitlines()
    assert f"kfp=={KFP_SDK.version}" in requirements


# --- the rules that catch a regression ----------------------------------------------------


def _violations(render: FullRender, rule: str) -> list[lint.Violation]:
    return lint.check(render, [r for r in lint.RULES if r.name == rule])


def _as_released(render: FullRender, *names: tuple[str, str]) -> FullRender:
    """The render with these upstream objects as the release ships them (our transforms undone)."""
    objects = [replace(o, obj=o.original) if (o.obj["kind"], o.key[3]) in names and o.original is not None else o for o in render.objects]
    return replace(render, objects=objects)


@needs_mirror
def test_the_upstream_secret_rule_catches_every_default_credential_of_the_release() -> None:
    released = _as_released(rendered("kind"), ("Secret", kfp.DB_SECRET), ("Secret", kfp.OBJECT_STORE_SECRET), ("Deployment", "mysql"))
    messages = sorted(f"{v.object}: {v.message}" for v in _violations(released, "upstream-secret"))
    assert "Secret kubeflow/mysql-secret: password is empty; a password must be a generated Pulumi secret" in messages
    assert "Secret kubeflow/mysql-secret: username is the database superuser 'root'; give the platform a user of its own" in messages
    assert any(m.startswith("Secret kubeflow/mlpipeline-minio-artifact: holds 'minio123'") for m in messages)
    assert any(m.startswith("Deployment.apps kubeflow/mysql: container mysql: MYSQL_ALLOW_EMPTY_PASSWORD lets MySQL run without a root password") for m in messages)
    assert _violations(rendered("kind"), "upstream-secret") == []


@needs_mirror
def test_the_data_kept_rule_catches_a_volume_pulumi_may_delete() -> None:
    render = rendered("kind")
    unkept = replace(render, objects=[replace(o, kept=False) if o.key[3] == "mysql-pv-claim" else o for o in render.objects])
    (found,) = _violations(unkept, "data-kept")
    assert found.object == "PersistentVolumeClaim kubeflow/mysql-pv-claim" and "keep()" in found.message


# --- remote kustomize bases, offline ------------------------------------------------------


def test_a_pipelines_tree_from_a_local_mirror_is_read_from_its_prepared_copy() -> None:
    sources = mirror_sources("/srv/mirror")
    prepared = prepared_tree(kfp.TREE, sources)
    assert prepared is not None and prepared.folder == "applications/pipeline"
    assert prepared.manifests == "/srv/mirror/kubeflow-manifests/26.03.1-rc.2" and prepared.remote_bases == "/srv/mirror/remote"
    assert prepared.root.startswith(".mlplatform/trees/26.03.1-rc.2-")
    assert prepared_tree("common/dex/base", sources) is None  # names no remote base: read where it is
    online = sources.model_copy(update={"remote_bases": None})
    assert prepared_tree(kfp.TREE, online) is None  # its Argo bases then come from GitHub


def _offline_env() -> dict[str, str]:
    """Any fetch kustomize (git) tries goes to a closed port and fails at once."""
    closed = "http://127.0.0.1:9"
    return {**os.environ, "HTTPS_PROXY": closed, "HTTP_PROXY": closed, "https_proxy": closed, "http_proxy": closed, "GIT_TERMINAL_PROMPT": "0"}


@needs_mirror
def test_the_prepared_pipelines_tree_builds_with_no_network_argo_included(tmp_path: Path) -> None:
    from plumbing.trees import prepare
    from tooling import tools

    sources = mirror_sources(MIRROR)
    prepared = prepared_tree(kfp.TREE, sources)
    assert prepared is not None
    directory, _ = prepare(prepared, tmp_path)
    kubectl = tools.find(tools.KUBECTL)
    build = subprocess.run(
        [kubectl, "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(tmp_path / prepared.path(kfp.TREE))],
        capture_output=True, text=True, env=_offline_env(), timeout=120, check=False,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    kinds = [d["kind"] for d in yaml.safe_load_all(build.stdout) if d]
    assert len(kinds) == 133
    names = {d["metadata"]["name"] for d in yaml.safe_load_all(build.stdout) if d}
    assert {"workflow-controller", "workflows.argoproj.io", "argo-cluster-role"} <= names  # the Argo bases
    # The same tree as mirrored names GitHub: without the prepared copy it cannot build offline.
    raw = subprocess.run(
        [kubectl, "kustomize", "--load-restrictor", "LoadRestrictionsNone", f"{sources.kubeflow_manifests}/{kfp.TREE}"],
        capture_output=True, text=True, env=_offline_env(), timeout=120, check=False,
    )
    assert raw.returncode != 0
    assert prepare(prepared, tmp_path) == (directory, False)  # current: not written again


@needs_mirror
def test_a_changed_mirror_makes_the_prepared_copy_stale_and_pulumi_up_names_the_command(tmp_path: Path) -> None:
    import shutil

    from plumbing.trees import prepare, unprepared

    mirror = tmp_path / "mirror"
    shutil.copytree(MIRROR / "kubeflow-manifests" / "26.03.1-rc.2" / "applications" / "pipeline", mirror / "kubeflow-manifests" / "26.03.1-rc.2" / "applications" / "pipeline")
    shutil.copytree(MIRROR / "remote", mirror / "remote")
    prepared = prepared_tree(kfp.TREE, mirror_sources(mirror))
    assert prepared is not None
    (problem,) = unprepared([prepared], tmp_path)
    assert problem.endswith("does not exist; run: python -m stacks prepare <stack>")
    prepare(prepared, tmp_path)
    assert unprepared([prepared], tmp_path) == []
    changed = mirror / "kubeflow-manifests" / "26.03.1-rc.2" / kfp.TREE / "kustomization.yaml"
    changed.chmod(0o644)
    changed.write_text(changed.read_text() + "# changed\n")
    (problem,) = unprepared([prepared], tmp_path)
    assert "is stale (its sources changed)" in problem


def test_a_remote_base_at_another_ref_than_its_pin_is_refused() -> None:
    from plumbing.sources import remote_reference

    found = remote_reference(f"{ARGO_WORKFLOWS.location}/manifests/base/crds/minimal?ref={ARGO_WORKFLOWS.version}")
    assert found is not None and found.mirror_path == f"github.com/argoproj/argo-workflows/{ARGO_WORKFLOWS.version}/manifests/base/crds/minimal"
    with pytest.raises(ValueError, match=f"names argoproj/argo-workflows at v3.7.2, the pin table at {ARGO_WORKFLOWS.version}"):
        remote_reference(f"{ARGO_WORKFLOWS.location}/manifests/base/crds/minimal?ref=v3.7.2")
    assert remote_reference("../../base") is None


def test_a_remote_base_the_pin_table_does_not_list_stops_the_preparation(tmp_path: Path) -> None:
    from plumbing.trees import PrepareError, references

    (tmp_path / "kustomization.yaml").write_text("resources:\n- https://github.com/acme/elsewhere/manifests?ref=v1\n")
    with pytest.raises(PrepareError, match=re.escape("is a remote base the pin table does not list; add it to facts/versions.py REMOTE_BASES")):
        references(tmp_path)


def test_remote_bases_need_a_local_checkout_of_the_trees() -> None:
    with pytest.raises(ConfigError) as caught:
        validate(with_changes(base_kind(), {"mlplatform:sources": {"remoteBases": "mirror/remote"}}), "bad")
    (problem,) = caught.value.problems
    assert problem.path == "mlplatform:sources.remoteBases"
    assert "needs a local kubeflowManifests" in problem.message


@needs_mirror
def test_prepare_writes_the_copy_pulumi_up_reads_and_says_when_it_is_current(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tooling.cli import main

    stack = tmp_path / "Pulumi.mirrored.yaml"
    sources = mirror_sources(MIRROR)
    stack.write_text(yaml.safe_dump({"config": {
        **base_kind(),
        K: {**base_kind()[K], "pipelines": {"enabled": True}},
        "mlplatform:sources": {"charts": sources.charts, "kubeflowManifests": sources.kubeflow_manifests, "remoteBases": sources.remote_bases},
    }}))
    assert main(["prepare", str(stack)]) == 0
    first = capsys.readouterr().out
    assert main(["prepare", str(stack)]) == 0
    second = capsys.readouterr().out
    prepared = prepared_tree(kfp.TREE, sources)
    assert prepared is not None and prepared.root in first and prepared.root in second
    assert second.startswith("current:")
    assert main(["prepare", "kind"]) == 0  # the shipped kind stack reads its trees from GitHub
    assert "no tree to prepare" in capsys.readouterr().out
