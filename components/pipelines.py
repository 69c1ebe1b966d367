"""Kubeflow Pipelines 2.16.1, multi-user, from the pinned release's own entry
(kubeflow/community-distribution 26.03.1-rc.2 `applications/pipeline/overlays`, what its
example/kustomization.yaml installs: the API server, UI, cache webhook with a cert-manager
certificate, ML Metadata, Argo Workflows v3.7.3, MySQL, SeaweedFS, metacontroller; 133 objects,
../shared/upstream/README.md, next version set). Its routes (/pipeline, /ml_metadata) are on
the Kubeflow gateway, behind the platform's sign-in.

What the release gets wrong for us, and what changes here (each transform has one target):
- public credentials: MySQL as `root` with an empty password (`mysql-secret`,
  `MYSQL_ALLOW_EMPTY_PASSWORD`) and SeaweedFS's S3 keys `minio`/`minio123`
  (`mlpipeline-minio-artifact`, read by the API server, the UI and SeaweedFS itself, which makes
  them its admin identity). Replaced by generated Pulumi secrets: a database user of its own
  (DB_USER, never root) and a random root password for the in-cluster MySQL; random S3 keys.
- floating images (`mysql:8.4`, the cache server's untagged `ghcr.io/containerd/busybox`): the
  platform's image rewrite pins them (facts/versions.py UPSTREAM_FLOATING_IMAGES).
- the per-namespace hook (metacontroller + `sync.py`) writes minio:// roots and makes SeaweedFS
  keys behind Pulumi's back: the program writes each team's settings itself (components/
  team_pipelines.py), so metacontroller and the hook run no replica (`not_running`). They stay
  objects of the tree: a kustomize tree installs whole under Pulumi (a transform can change an
  object, not leave it out), and every multi-user tree of the release includes them.
- gke: the database is Cloud SQL (infra/cloudsql.py), reached as the Service `pipelines-db`;
  the tree's MySQL runs no replica there.
- data: the volumes of MySQL and SeaweedFS are protected and retained like team data (plumbing/base.py `keep`),
  sized from the stack.
- Argo's executor containers (`init`, `wait` of every pipeline pod) have no resources: each took
  the team namespace's LimitRange default; Argo's configuration gives them its documented size
  (`with_executor_resources`).

The API server's own store (pipeline packages it uploads, and the UI's reads of it) stays the
in-cluster SeaweedFS on every cluster: its S3 client cannot talk to GCS (KFP "Configure object
store"), and HMAC keys of a dedicated account would be one more long-lived secret for a few
megabytes of YAML the database also holds (pipeline specs are in `pipeline_versions`). Teams'
artifacts are elsewhere: their buckets on gke, their prefixes (with keys of their own, registered
in SeaweedFS at its start: `with_team_identities`) in the cluster otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pulumi_random as random

from components.argo import with_executor_resources, with_step_priority
from components.kubeflow import with_secrets
from components.team_pipelines import (
    ACCESS_KEY,
    IN_CLUSTER_BUCKET,
    KFP_NAMESPACE,
    SECRET_KEY,
    ObjectStoreKeys,
    team_prefix,
)
from facts.resource_types import RANDOM_PASSWORD
from infra.cloudsql import CloudSqlArgs, CloudSqlDatabase
from infra.cluster import Cluster
from infra.component import Component, type_token
from plumbing.base import (
    PlatformComponent,
    PropsTransform,
    UpstreamArgs,
    apply_manifest,
    config_digest,
    matches,
    with_config_digest,
)
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.readiness import Readiness
from plumbing.sources import PreparedTree, prepared_tree
from stackmodel.components.pipelines import PIPELINES, PipelinesConfig
from stackmodel.schema import GkeClusterConfig
from stackmodel.stack import PlatformConfig

TREE = "applications/pipeline/overlays"
INSTALL = "pipelines"
NAMESPACE = KFP_NAMESPACE
DB_USER = "kfp"
"""The database user every KFP component connects as (never root)."""
# base/installs/generic/pipeline-install-config.yaml: pipelineDb, cacheDb, mlmdDb.
DATABASES = ("mlpipeline", "cachedb", "metadb")
DB_SECRET = "mysql-secret"
DB_ROOT_PASSWORD_KEY = "root-password"
"""Ours, beside the release's `username`/`password` keys: the in-cluster MySQL's root password."""
OBJECT_STORE_SECRET = "mlpipeline-minio-artifact"
INSTALL_CONFIG = "pipeline-install-config"
DB_SERVICE = "pipelines-db"
"""gke: the Service (no selector, our EndpointSlice) the database is reached at: Cloud SQL's private IP."""
MYSQL_PORT = 3306
MYSQL_INITDB = "mysql-initdb"
MYSQL_INITDB_DIR = "/docker-entrypoint-initdb.d"
"""docker-library/mysql 8.4 docker-entrypoint.sh: runs *.sql there after creating MYSQL_USER, on an empty volume only."""
SECRET_LENGTH = 32
ACCESS_KEY_LENGTH = 20
SECRET_KEY_LENGTH = 40
# The two controllers of the upstream per-namespace hook, which the program replaces.
METACONTROLLER = ("StatefulSet", "metacontroller")
PROFILE_HOOK = ("Deployment", "kubeflow-pipelines-profile-controller")
MYSQL = ("Deployment", "mysql")
SEAWEEDFS = ("Deployment", "seaweedfs")
VOLUMES = {"mysql-pv-claim": "database_storage", "seaweedfs-pvc": "object_store_storage"}
"""The tree's PersistentVolumeClaims -> the PipelinesConfig field sizing each."""
NOT_RUNNING_ANNOTATION = "mlplatform.io/not-running"
CONFIG_READERS = (
    ("Deployment", "ml-pipeline"),
    ("Deployment", "ml-pipeline-ui"),
    ("Deployment", "ml-pipeline-scheduledworkflow"),
    ("Deployment", "metadata-grpc-deployment"),
    ("Deployment", "cache-server"),
    PROFILE_HOOK,
    MYSQL,
    SEAWEEDFS,
)
"""The tree's workloads that read what the program writes into it (pipeline-install-config,
mysql-secret, mlpipeline-minio-artifact as env; the in-cluster MySQL's init script; SeaweedFS's
team identities, registered at its start): all of it only at start, so their pods roll when it
changes (plumbing.base.with_config_digest)."""
TEAM_KEYS_SECRET = "seaweedfs-team-keys"
SEAWEEDFS_READY_LINE = "touch /tmp/initialization-complete"
"""The last step of SeaweedFS's postStart (third-party/seaweedfs/base/seaweedfs/seaweedfs-deployment.yaml):
the team identities are registered just before it, so the pod is ready only with them."""
TEAM_USER_PREFIX = "team-"


@dataclass(frozen=True)
class PipelinesArgs(UpstreamArgs):
    settings: PipelinesConfig
    artifacts_in_cluster: bool
    """Teams keep their artifacts in the in-cluster object store (kind, existingContext; on GKE
    their buckets): its team identities are kept to `in_cluster_teams`, none left of teams gone."""
    in_cluster_teams: tuple[str, ...]
    """Teams whose artifacts live in the in-cluster object store: each gets an identity of its own
    there, limited to its prefix."""
    cloud_sql: CloudSqlArgs | None = None
    """gke: the database is Cloud SQL (else the tree's in-cluster MySQL)."""

@dataclass(frozen=True)
class PipelineKeysArgs:
    """The teams whose artifacts live in the in-cluster object store (PipelinesArgs.in_cluster_teams)."""

    teams: tuple[str, ...]
    was_in: str = "pipelines"
    """The name of the Pipelines component that made the keys until now (their names' prefix)."""


def _env(name: str, secret: str, key: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


def _containers(props: dict[str, Any]) -> list[dict[str, Any]]:
    return props["spec"]["template"]["spec"]["containers"]


def _with_pod(props: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """`props` (a workload) with its pod template's spec changed."""
    template = props["spec"]["template"]
    return {**props, "spec": {**props["spec"], "template": {**template, "spec": {**template["spec"], **changes}}}}


def with_database_credentials(props: dict[str, Any], password: Any, root_password: Any) -> dict[str, Any] | None:
    """`mysql-secret` (root, empty password upstream): our user and generated passwords."""
    if not matches(props, "Secret", DB_SECRET):
        return None
    return with_secrets(props, {"username": DB_USER, "password": password, DB_ROOT_PASSWORD_KEY: root_password})


def with_object_store_keys(props: dict[str, Any], access_key: Any, secret_key: Any) -> dict[str, Any] | None:
    """`mlpipeline-minio-artifact` (minio/minio123 upstream): generated keys, SeaweedFS's admin identity."""
    if not matches(props, "Secret", OBJECT_STORE_SECRET):
        return None
    return with_secrets(props, {ACCESS_KEY: access_key, SECRET_KEY: secret_key})


def initdb_sql() -> str:
    """What the in-cluster MySQL runs on its first start: the databases and our user's rights on
    them, nothing else (the image created the user from MYSQL_USER/MYSQL_PASSWORD before)."""
    lines = [f"CREATE DATABASE IF NOT EXISTS `{db}`;\nGRANT ALL PRIVILEGES ON `{db}`.* TO '{DB_USER}'@'%';" for db in DATABASES]
    return "\n".join(lines) + "\n"


def with_mysql_user(props: dict[str, Any]) -> dict[str, Any] | None:
    """The in-cluster MySQL with a root password and our user (from `mysql-secret`), and the
    init script granting that user its databases, instead of an empty root password."""
    if not matches(props, *MYSQL):
        return None
    containers = _containers(props)
    mysql = containers[0]
    env = [e for e in mysql.get("env") or [] if e.get("name") != "MYSQL_ALLOW_EMPTY_PASSWORD"]
    env += [
        _env("MYSQL_ROOT_PASSWORD", DB_SECRET, DB_ROOT_PASSWORD_KEY),
        _env("MYSQL_USER", DB_SECRET, "username"),
        _env("MYSQL_PASSWORD", DB_SECRET, "password"),
    ]
    mounts = [*(mysql.get("volumeMounts") or []), {"name": MYSQL_INITDB, "mountPath": MYSQL_INITDB_DIR, "readOnly": True}]
    volumes = [*(props["spec"]["template"]["spec"].get("volumes") or []), {"name": MYSQL_INITDB, "configMap": {"name": MYSQL_INITDB}}]
    return _with_pod(props, containers=[{**mysql, "env": env, "volumeMounts": mounts}, *containers[1:]], volumes=volumes)


def not_running(props: dict[str, Any], kind: str, name: str, why: str) -> dict[str, Any] | None:
    """A workload of the tree at zero replicas, saying why on itself."""
    if not matches(props, kind, name):
        return None
    meta = props["metadata"]
    annotations = {**(meta.get("annotations") or {}), NOT_RUNNING_ANNOTATION: why}
    return {**props, "metadata": {**meta, "annotations": annotations}, "spec": {**props["spec"], "replicas": 0}}


def with_volume_size(props: dict[str, Any], sizes: dict[str, str]) -> dict[str, Any] | None:
    """The tree's PersistentVolumeClaims at the stack's sizes."""
    name = (props.get("metadata") or {}).get("name")
    if props.get("kind") != "PersistentVolumeClaim" or name not in sizes:
        return None
    spec = props["spec"]
    return {**props, "spec": {**spec, "resources": {**spec.get("resources", {}), "requests": {"storage": sizes[name]}}}}


def holds_data(props: dict[str, Any]) -> bool:
    """The volumes of the database and the object store: never deleted by Pulumi on its own."""
    return props.get("kind") == "PersistentVolumeClaim" and (props.get("metadata") or {}).get("name") in VOLUMES


def with_database_host(props: dict[str, Any], host: str) -> dict[str, Any] | None:
    """`pipeline-install-config` with the database at `host` (dbHost: the API server, cache
    server and ML Metadata; mysqlHost: the API server's MySQL settings)."""
    if not matches(props, "ConfigMap", INSTALL_CONFIG):
        return None
    return {**props, "data": {**props["data"], "dbHost": host, "mysqlHost": host}}


def env_name(team: str, key: str) -> str:
    """The SeaweedFS container's variable with one key of a team (team names are DNS labels)."""
    return f"TEAM_{team.upper().replace('-', '_')}_{key.upper()}"


def team_actions(team: str) -> str:
    """SeaweedFS 4.00 actions of a team's identity: read and write its prefix only (a trailing
    `*` matches by prefix: weed/s3api/auth_credentials.go canDo), list the bucket (listing has
    no object key to scope, so it shows other teams' object names, never their content)."""
    prefix = f"{IN_CLUSTER_BUCKET}/{team_prefix(team)}/*"
    return f"Read:{prefix},Write:{prefix},List:{IN_CLUSTER_BUCKET}"


def team_identities_script(teams: Sequence[str]) -> str:
    """Shell for SeaweedFS's postStart: every `team-*` identity dropped, then one per team
    registered with its keys (`s3.configure` keeps the other identities: weed/shell/
    command_s3_configure.go at 4.00), retried like the release's own admin registration."""
    lines = [
        "# Team identities (mlplatform components/pipelines.py): each team's keys read and write its prefix only.",
        f"for user in $(echo \"s3.configure\" | /usr/bin/weed shell | grep -o '\"name\": *\"{TEAM_USER_PREFIX}[a-z0-9-]*\"' | grep -o '{TEAM_USER_PREFIX}[a-z0-9-]*'); do",
        '  echo "s3.configure -user $user -delete -apply" | /usr/bin/weed shell > /dev/null',
        "done",
    ]
    for team in teams:
        access, secret = (f"${env_name(team, k)}" for k in (ACCESS_KEY, SECRET_KEY))
        command = f"s3.configure -user {TEAM_USER_PREFIX}{team} -access_key {access} -secret_key {secret} -actions {team_actions(team)} -apply"
        lines += [
            "for i in $(seq 1 5); do",
            f'  if echo "{command}" | /usr/bin/weed shell > /dev/null 2>&1; then break; fi',
            f'  if [ "$i" -eq 5 ]; then echo "ERROR: could not register the identity of team {team}"; exit 1; fi',
            "  sleep 5",
            "done",
        ]
    return "\n".join(lines) + "\n"


def with_team_identities(props: dict[str, Any], teams: tuple[str, ...]) -> dict[str, Any] | None:
    """SeaweedFS with every team's keys (from TEAM_KEYS_SECRET) and their registration in its
    postStart, before it reports itself initialised (its pods roll when the teams change:
    CONFIG_READERS)."""
    if not matches(props, *SEAWEEDFS):
        return None
    containers = _containers(props)
    weed = containers[0]
    command = list(weed["lifecycle"]["postStart"]["exec"]["command"])
    script = command[-1]
    if SEAWEEDFS_READY_LINE not in script:
        raise ValueError(f"SeaweedFS's postStart of the pinned release has no {SEAWEEDFS_READY_LINE!r}; review with_team_identities")
    command[-1] = script.replace(SEAWEEDFS_READY_LINE, team_identities_script(teams) + SEAWEEDFS_READY_LINE, 1)
    env = [*(weed.get("env") or []), *(_env(env_name(t, k), TEAM_KEYS_SECRET, f"{t}-{k}") for t in teams for k in (ACCESS_KEY, SECRET_KEY))]
    lifecycle = {**weed["lifecycle"], "postStart": {**weed["lifecycle"]["postStart"], "exec": {"command": command}}}
    return _with_pod(props, containers=[{**weed, "env": env, "lifecycle": lifecycle}, *containers[1:]])


def pipelines_transforms(
    args: PipelinesArgs, password: Any, root_password: Any, access_key: Any, secret_key: Any
) -> tuple[PropsTransform, ...]:
    """Every change to the tree's objects, for this stack."""
    settings = args.settings
    hook = "the program writes every team's settings (components/team_pipelines.py)"
    transforms: list[PropsTransform] = [
        partial(with_database_credentials, password=password, root_password=root_password),
        partial(with_object_store_keys, access_key=access_key, secret_key=secret_key),
        with_mysql_user,
        with_executor_resources,
        with_step_priority,
        partial(not_running, kind=METACONTROLLER[0], name=METACONTROLLER[1], why=hook),
        partial(not_running, kind=PROFILE_HOOK[0], name=PROFILE_HOOK[1], why=hook),
        partial(with_volume_size, sizes={name: getattr(settings, field) for name, field in VOLUMES.items()}),
    ]
    if args.cloud_sql is not None:
        transforms += [
            partial(not_running, kind=MYSQL[0], name=MYSQL[1], why=f"the database is Cloud SQL {args.cloud_sql.instance}"),
            partial(with_database_host, host=DB_SERVICE),
        ]
    if args.artifacts_in_cluster:  # with no team too: identities of teams that went are dropped
        transforms.append(partial(with_team_identities, teams=args.in_cluster_teams))
    written = (password, root_password, access_key, secret_key, args.cloud_sql is not None, args.in_cluster_teams, initdb_sql())
    transforms.append(partial(with_config_digest, workloads=CONFIG_READERS, digest=config_digest(*written)))
    return tuple(transforms)


def database_service(addresses: pulumi.Input[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """gke: the Service the components reach Cloud SQL at, and its EndpointSlice (the private IP).
    No selector: Kubernetes keeps the slice ours. Plain TCP: no sidecar at the other end."""
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": DB_SERVICE, "namespace": NAMESPACE},
        "spec": {"ports": [{"name": "tcp-mysql", "port": MYSQL_PORT, "targetPort": MYSQL_PORT, "protocol": "TCP"}]},
    }
    slice_ = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": DB_SERVICE, "namespace": NAMESPACE, "labels": {"kubernetes.io/service-name": DB_SERVICE}},
        "addressType": "IPv4",
        "ports": [{"name": "tcp-mysql", "port": MYSQL_PORT, "protocol": "TCP"}],
        "endpoints": [{"addresses": [addresses]}],
    }
    return service, slice_


def prepared_trees(args: PipelinesArgs | None) -> list[PreparedTree]:
    """The prepared copy the Pipelines tree is read from (its Argo bases from the stack's local
    mirror: plumbing/sources.py), if any: what `pulumi up` needs written first."""
    prepared = prepared_tree(TREE, args.sources) if args is not None else None
    return [prepared] if prepared is not None else []


def initdb_config_map() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": MYSQL_INITDB, "namespace": NAMESPACE}, "data": {"grants.sql": initdb_sql()}}


class PipelineKeys(Component):
    """Each team's key pair of the in-cluster object store, made apart from Pipelines: the
    teams' Secrets and Pipelines' identities both read them, and neither waits for the other
    (a team would otherwise wait for the whole Pipelines install, one stage more)."""

    keys: dict[str, ObjectStoreKeys]

    def __init__(self, name: str, args: PipelineKeysArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts)

        def generated(team: str, key: str, length: int) -> pulumi.Output[str]:
            resource = f"{args.was_in}-{team}-{key}"
            # Until now children of the Pipelines component, under the same names: the alias
            # keeps each live value (a new one would replace the team's keys everywhere).
            was = f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{type_token(Pipelines)}${RANDOM_PASSWORD}::{resource}"
            options = pulumi.ResourceOptions(parent=self, aliases=[was])
            return random.RandomPassword(resource, random.RandomPasswordArgs(length=length, special=False), opts=options).result

        self.keys = {
            team: ObjectStoreKeys(generated(team, "access-key", ACCESS_KEY_LENGTH), generated(team, "secret-key", SECRET_KEY_LENGTH))
            for team in args.teams
        }
        self.register_outputs({})


class Pipelines(PlatformComponent):
    """Kubeflow Pipelines for every team: the release's tree with the platform's credentials, and
    on GKE its database on Cloud SQL."""

    ready: pulumi.Resource
    """Done when the tree (its API server among it) is ready."""
    team_keys: dict[str, ObjectStoreKeys]
    """Per team whose artifacts live in the in-cluster store: its key pair there (Pulumi secrets)."""

    def __init__(
        self,
        name: str,
        args: PipelinesArgs,
        cluster: Cluster,
        needs: list[pulumi.Resource],
        team_keys: Mapping[str, ObjectStoreKeys],
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`team_keys`: per team of `args.in_cluster_teams`, its key pair (PipelineKeys)."""
        super().__init__(name, cluster, opts, args.sources)

        def generated(key: str, length: int) -> pulumi.Output[str]:
            return random.RandomPassword(f"{name}-{key}", random.RandomPasswordArgs(length=length, special=False), opts=self.child()).result

        password, root_password = generated("db-password", SECRET_LENGTH), generated("db-root-password", SECRET_LENGTH)
        access_key, secret_key = generated("object-store-access-key", ACCESS_KEY_LENGTH), generated("object-store-secret-key", SECRET_KEY_LENGTH)
        own: list[pulumi.Resource] = [apply_manifest(f"{NAMESPACE}/{MYSQL_INITDB}", initdb_config_map(), self.child(needs))]
        if args.cloud_sql is not None:
            if cluster.network is None:
                raise ValueError("a Cloud SQL database needs the GKE cluster's network")
            database = CloudSqlDatabase(
                f"{name}-db", args.cloud_sql, cluster.network, DB_USER, password, DATABASES, opts=pulumi.ResourceOptions(parent=self)
            )
            service, slice_ = database_service(database.private_ip)
            own.append(apply_manifest(f"{NAMESPACE}/{DB_SERVICE}", service, self.child(needs)))
            own.append(apply_manifest(f"{NAMESPACE}/{DB_SERVICE}", slice_, self.child(needs)))
        self.team_keys = dict(team_keys)
        self.installs.team_keys.update(self.team_keys)  # the composition hands them to the teams
        if self.team_keys:
            own.append(
                k8s.core.v1.Secret(
                    f"{NAMESPACE}/{TEAM_KEYS_SECRET}",
                    metadata=k8s.meta.v1.ObjectMetaArgs(name=TEAM_KEYS_SECRET, namespace=NAMESPACE),
                    string_data={f"{team}-{key}": value for team, k in self.team_keys.items() for key, value in ((ACCESS_KEY, k.access_key), (SECRET_KEY, k.secret_key))},
                    opts=self.child(needs),
                )
            )
        transforms = pipelines_transforms(args, password, root_password, access_key, secret_key)
        self.ready = self.kustomize(INSTALL, TREE, depends_on=[*needs, *own], transforms=transforms, kept=holds_data)
        self.register_outputs({"ready": self.ready.urn})


def pipelines_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> PipelinesArgs:
    cluster = config.cluster
    gke = isinstance(cluster, GkeClusterConfig)
    sql = config.components[PIPELINES].cloud_sql
    cloud_sql = (
        CloudSqlArgs(
            project=config.project,
            region=cluster.region,
            instance=f"{cluster.name}-pipelines",
            settings=sql,
            deletion_protection=config.deletion_protection,
            private_service_access=sql.private_service_access if sql.private_service_access is not None else cluster.network.existing is None,
        )
        if isinstance(cluster, GkeClusterConfig)
        else None
    )
    return PipelinesArgs(
        sources=config.sources,
        settings=config.components[PIPELINES],
        artifacts_in_cluster=not gke,
        in_cluster_teams=() if gke else tuple(t.name for t in config.teams),
        cloud_sql=cloud_sql,
    )


def _install(args: PipelinesArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    # The teams' keys apart: a team's Secret and Pipelines' identities read them, neither waits for the other.
    teams = args.in_cluster_teams
    keys = PipelineKeys("pipeline-keys", PipelineKeysArgs(teams)).keys if teams else {}
    # Its team keys reach the teams through its record (PlatformComponent.installs).
    return Pipelines("pipelines", args, cluster, ready.resources(PIPELINES.needs, "Kubeflow Pipelines"), keys)


INSTALLATION = Installation(PIPELINES, pipelines_args, _install)
