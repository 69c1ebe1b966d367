"""The Model Registry (Kubeflow Hub v0.3.9) as Kubeflow 26.03.1-rc.2 designs it: a registry per
tenant, in the tenant's profile namespace ("Hub — Model Registry (per-tenant: deployed to user
profile namespace)", example/kustomization.yaml), and a UI whose backend serves many namespaces
(it lists the registries of the namespace a request names, after a SubjectAccessReview of the
user there: kubeflow/hub v0.3.8 clients/ui/bff). docs/model-registry.md.

Here: every team gets the tree's registry server and MySQL option (`applications/hub/upstream/
overlays/db`), rendered into its namespace by its Team (components/profiles/team.py; the
transforms below), and the UI is installed once, in `kubeflow` (`applications/hub/upstream/
options/ui/overlays/istio`), with the gateway's route /model-registry/. Kubeflow's own overlay
(`applications/hub/overlays/model-registry`) routes `/api/model_registry/` and `/model-registry/`
from one namespace, so it cannot be installed per team; and its AuthorizationPolicy admits any
request that carries an Authorization header, which the registry (no authorization of its own,
v0.3.8 cmd/proxy.go) never checks.

What changes in each team's copy (each transform has one target):
- credentials: `model-registry-db-secrets` (root / `test` upstream): a user of its own
  (`registry`, never root) with a generated password (a Pulumi secret), which the MySQL image
  creates with every right on the registry's database (docker-library/mysql: MYSQL_USER,
  MYSQL_PASSWORD, MYSQL_DATABASE); the tree's DSN and readiness probe read the user and password
  from the keys MYSQL_USER_NAME and MYSQL_ROOT_PASSWORD, which carry ours.
- `mysql:8.3` (an Innovation release past support): MySQL 8.4 LTS (facts/versions.py), whose
  default caching_sha2_password the server's Go driver speaks (facts/mysql_auth.py).
- resources: the server and MySQL name none; they get sizes of their own (REGISTRY_RESOURCES,
  DATABASE_RESOURCES), which the team's quota keeps room for (components/profiles/namespace.py).
- gke, `database: cloudSql`: the team's Cloud SQL instance, reached as the tree's Service
  `model-registry-db` (its selector dropped, our EndpointSlice to the private IP); the tree's
  MySQL runs no replica.
- data: the in-cluster MySQL's volume is protected and retained, sized from the stack.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import partial
from typing import Any

import pulumi
import pulumi_random as random

from components.access import READ_METHODS, SECURITY_API
from components.kubeflow import with_secrets
from components.pipelines import MYSQL_PORT, not_running
from facts.versions import CLOUD_SQL_MYSQL_84
from infra.cloudsql import CloudSqlArgs, CloudSqlDatabase, private_service_access
from infra.cluster import Cluster
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
from plumbing.readiness import Need, Readiness, What
from stackmodel.components.model_registry import MODEL_REGISTRY, RegistryDatabase
from stackmodel.components.pipelines import PIPELINES
from stackmodel.schema import GkeClusterConfig
from stackmodel.stack import PlatformConfig

UI_TREE = "applications/hub/upstream/options/ui/overlays/istio"
UI_INSTALL = "model-registry-ui"
TEAM_TREE = "applications/hub/upstream/overlays/db"
NAMESPACE = "kubeflow"
UI_SERVICE_ACCOUNT = "model-registry-ui"
UI_PRINCIPAL = f"cluster.local/ns/{NAMESPACE}/sa/{UI_SERVICE_ACCOUNT}"
"""The UI's mesh identity (options/ui/base/model-registry-ui-service-account.yaml, in `kubeflow`)."""
UI_SELECTOR = {"app": "model-registry-ui"}
UI_READ_ONLY = "model-registry-ui-read-only"
SERVER_SELECTOR = {"component": "model-registry-server"}
"""The registry server's pods (base/model-registry-deployment.yaml)."""
UI_READS = "model-registry-ui-reads"
DB_USER = "registry"
DATABASE = "metadb"
"""overlays/db/params.env MYSQL_DATABASE."""
DB_SECRET = "model-registry-db-secrets"
DB_PARAMETERS = "model-registry-db-parameters"
DB_SERVICE = "model-registry-db"
SERVER = ("Deployment", "model-registry-deployment")
DB = ("Deployment", "model-registry-db")
VOLUME = "metadata-mysql"
REGISTRY_SERVICE = "model-registry-service"
REGISTRY_PORT = 8080
REGISTRY_RESOURCES = {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}}
"""The registry server's container (a Go REST proxy over its database); the tree names none."""
DATABASE_RESOURCES = {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
"""The team's MySQL 8.4 (a few tables of names, versions and URIs); the tree names none."""
SECRET_LENGTH = 32


@dataclass(frozen=True)
class ModelRegistryArgs(UpstreamArgs):
    private_service_access: CloudSqlArgs | None = None
    """gke, cloudSql, no Pipelines making it: the network's Private Service Access the teams'
    instances need, made here once (infra/cloudsql.py private_service_access)."""
    after_pipelines: bool = False
    """gke, cloudSql, Pipelines on: Pipelines' instance makes the network's Private Service Access,
    so the teams' instances (which wait for this component) wait for Pipelines: one stage more."""


@dataclass(frozen=True)
class TeamRegistry:
    """A team's registry: where its records are kept."""

    sources: Any
    database: RegistryDatabase
    database_storage: str
    cloud_sql: CloudSqlArgs | None
    """cloudSql: the team's instance."""


# --- the UI, once --------------------------------------------------------------------------


def ui_read_only_policy() -> dict[str, Any]:
    """At the UI: nothing but reads. Its backend lets whoever may read a Service of a namespace
    write to that namespace's registry (kubeflow/hub v0.3.8 clients/ui/bff/internal/api/
    middleware.go RequireAccessToMRService: a `get services` review for every method), which would
    let a `view` member change models; registering happens in code, from the team's namespace."""
    spec = {
        "action": "DENY",
        "selector": {"matchLabels": dict(UI_SELECTOR)},
        "rules": [{"to": [{"operation": {"notMethods": list(READ_METHODS)}}]}],
    }
    return {"apiVersion": SECURITY_API, "kind": "AuthorizationPolicy", "metadata": {"name": UI_READ_ONLY, "namespace": NAMESPACE}, "spec": spec}


class ModelRegistry(PlatformComponent):
    """The registries' UI for every team (each team's registry is its Team's)."""

    ready: pulumi.Resource
    """Done when the UI is, and the Private Service Access the teams' instances need exists."""

    def __init__(self, name: str, args: ModelRegistryArgs, cluster: Cluster, needs: list[pulumi.Resource], opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, args.sources)
        own: list[pulumi.Resource] = [apply_manifest(f"{NAMESPACE}/{UI_READ_ONLY}", ui_read_only_policy(), self.child(needs))]
        if args.private_service_access is not None:
            if cluster.network is None:
                raise ValueError("a Cloud SQL database needs the GKE cluster's network")
            own.append(private_service_access(f"{name}-db", args.private_service_access.instance, cluster.network, self.child()))
        self.ready = self.kustomize(UI_INSTALL, UI_TREE, depends_on=[*needs, *own])
        self.register_outputs({"ready": self.ready.urn})


# --- a team's registry ---------------------------------------------------------------------


def with_registry_credentials(props: dict[str, Any], password: Any) -> dict[str, Any] | None:
    """`model-registry-db-secrets`: our user and its generated password, under the keys the tree's
    DSN (base DSN `$(MYSQL_USER_NAME):$(MYSQL_ROOT_PASSWORD)@tcp(...)`, overlays/db/patches) and
    the MySQL readiness probe read, and under the image's own (MYSQL_USER, MYSQL_PASSWORD); the
    root password the same (the server is the team's alone)."""
    if not matches(props, "Secret", DB_SECRET):
        return None
    return with_secrets(
        props, {"MYSQL_USER_NAME": DB_USER, "MYSQL_ROOT_PASSWORD": password, "MYSQL_USER": DB_USER, "MYSQL_PASSWORD": password}
    )


def without_empty_root_password(props: dict[str, Any]) -> dict[str, Any] | None:
    """overlays/db/params.env's MYSQL_ALLOW_EMPTY_PASSWORD=true: gone (root has a password)."""
    if not matches(props, "ConfigMap", DB_PARAMETERS):
        return None
    return {**props, "data": {k: v for k, v in props["data"].items() if k != "MYSQL_ALLOW_EMPTY_PASSWORD"}}


def _with_resources(props: dict[str, Any], workload: tuple[str, str], resources: dict[str, Any]) -> dict[str, Any] | None:
    if not matches(props, *workload):
        return None
    template = props["spec"]["template"]
    first, *rest = template["spec"]["containers"]
    spec = {**template["spec"], "containers": [{**first, "resources": copy.deepcopy(resources)}, *rest]}
    return {**props, "spec": {**props["spec"], "template": {**template, "spec": spec}}}


with_server_resources = partial(_with_resources, workload=SERVER, resources=REGISTRY_RESOURCES)
with_database_resources = partial(_with_resources, workload=DB, resources=DATABASE_RESOURCES)


def with_volume_size(props: dict[str, Any], size: str) -> dict[str, Any] | None:
    if not matches(props, "PersistentVolumeClaim", VOLUME):
        return None
    spec = props["spec"]
    return {**props, "spec": {**spec, "resources": {**spec.get("resources", {}), "requests": {"storage": size}}}}


def without_selector(props: dict[str, Any]) -> dict[str, Any] | None:
    """cloudSql: `model-registry-db` without its selector, so Kubernetes keeps our EndpointSlice."""
    if not matches(props, "Service", DB_SERVICE):
        return None
    return {**props, "spec": {k: v for k, v in props["spec"].items() if k != "selector"}}


def holds_data(props: dict[str, Any]) -> bool:
    return matches(props, "PersistentVolumeClaim", VOLUME)


def team_registry_transforms(registry: TeamRegistry, password: Any) -> tuple[PropsTransform, ...]:
    """Every change to a team's copy of the tree."""
    transforms: list[PropsTransform] = [
        partial(with_registry_credentials, password=password),
        without_empty_root_password,
        with_server_resources,
        partial(with_volume_size, size=registry.database_storage),
    ]
    if registry.cloud_sql is not None:
        transforms += [
            partial(not_running, kind=DB[0], name=DB[1], why=f"the database is Cloud SQL {registry.cloud_sql.instance}"),
            without_selector,
        ]
    else:
        transforms.append(with_database_resources)
    transforms.append(partial(with_config_digest, workloads=(SERVER, DB), digest=config_digest(password, registry.cloud_sql is not None)))
    return tuple(transforms)


def ui_reads_policy(namespace: str) -> dict[str, Any]:
    """On a team's registry server: the UI may read (the namespace's own pods reach it through the
    profile's policies: the profile controller's `ns-owner-access-istio`, `source.namespace`)."""
    spec = {
        "action": "ALLOW",
        "selector": {"matchLabels": dict(SERVER_SELECTOR)},
        "rules": [{"from": [{"source": {"principals": [UI_PRINCIPAL]}}], "to": [{"operation": {"methods": list(READ_METHODS)}}]}],
    }
    return {"apiVersion": SECURITY_API, "kind": "AuthorizationPolicy", "metadata": {"name": UI_READS, "namespace": namespace}, "spec": spec}


def database_endpoints(namespace: str, address: pulumi.Input[str]) -> dict[str, Any]:
    """cloudSql: the EndpointSlice of the tree's Service `model-registry-db`: the instance's private IP."""
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": DB_SERVICE, "namespace": namespace, "labels": {"kubernetes.io/service-name": DB_SERVICE}},
        "addressType": "IPv4",
        "ports": [{"name": "dbapi", "port": MYSQL_PORT, "protocol": "TCP"}],
        "endpoints": [{"addresses": [address]}],
    }


def team_registry_objects(namespace: str) -> list[dict[str, Any]]:
    """A team's own objects beside its copy of the tree."""
    return [ui_reads_policy(namespace)]


def install_team_registry(
    team: PlatformComponent, registry: TeamRegistry, namespace: str, needs: list[pulumi.Resource], cluster: Cluster
) -> pulumi.Resource:
    """A team's registry, as a child of its Team (`needs`: its namespace, the Model Registry's
    readiness): the tree in its namespace with its generated password and, on cloudSql, its Cloud SQL
    instance and the EndpointSlice that leads the tree's Service there."""
    name = f"model-registry-{namespace}"
    password = random.RandomPassword(
        f"{name}-db-password", random.RandomPasswordArgs(length=SECRET_LENGTH, special=False), opts=team.child()
    ).result
    own = [apply_manifest(f"{namespace}/{o['metadata']['name']}", o, team.child(needs)) for o in team_registry_objects(namespace)]
    if registry.cloud_sql is not None:
        if cluster.network is None:
            raise ValueError("a Cloud SQL database needs the GKE cluster's network")
        database = CloudSqlDatabase(
            f"{name}-db", registry.cloud_sql, cluster.network, DB_USER, password, (DATABASE,), opts=team.child(needs)
        )
        endpoints = database_endpoints(namespace, database.private_ip)
        own.append(apply_manifest(f"{namespace}/{DB_SERVICE}", endpoints, team.child(needs)))
    return team.kustomize(
        name, TEAM_TREE, depends_on=[*needs, *own], transforms=team_registry_transforms(registry, password), kept=holds_data, namespace=namespace
    )


# --- the component -------------------------------------------------------------------------


def registry_cloud_sql_args(config: PlatformConfig, team: str) -> CloudSqlArgs | None:
    """cloudSql: the team's instance (`<cluster>-mr-<team>`); None for inCluster."""
    cluster, settings = config.cluster, config.components[MODEL_REGISTRY]
    if not isinstance(cluster, GkeClusterConfig) or registry_database_args(config) is not RegistryDatabase.CLOUD_SQL:
        return None
    return CloudSqlArgs(
        project=config.project,
        region=cluster.region,
        instance=f"{cluster.name}-mr-{team}",
        settings=settings.cloud_sql,
        deletion_protection=config.deletion_protection,
        private_service_access=False,  # made once, by Pipelines' instance or ModelRegistry (model_registry_args)
        database_version=CLOUD_SQL_MYSQL_84.version,
    )


def registry_database_args(config: PlatformConfig) -> RegistryDatabase:
    """The stack's choice, or the platform's: Cloud SQL on GKE, the in-cluster MySQL elsewhere."""
    chosen = config.components[MODEL_REGISTRY].database
    if chosen is not None:
        return chosen
    return RegistryDatabase.CLOUD_SQL if isinstance(config.cluster, GkeClusterConfig) else RegistryDatabase.IN_CLUSTER


def team_registry_args(config: PlatformConfig, team: str) -> TeamRegistry | None:
    """A team's registry (None: the stack installs no Model Registry)."""
    if not config.enabled(MODEL_REGISTRY):
        return None
    settings = config.components[MODEL_REGISTRY]
    return TeamRegistry(
        sources=config.sources,
        database=registry_database_args(config),
        database_storage=settings.database_storage,
        cloud_sql=registry_cloud_sql_args(config, team),
    )


def model_registry_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> ModelRegistryArgs:
    cluster = config.cluster
    psa = None
    if isinstance(cluster, GkeClusterConfig) and registry_database_args(config) is RegistryDatabase.CLOUD_SQL and not config.enabled(PIPELINES):
        sql = config.components[MODEL_REGISTRY].cloud_sql
        wanted = sql.private_service_access if sql.private_service_access is not None else cluster.network.existing is None
        if wanted:
            psa = CloudSqlArgs(
                project=config.project,
                region=cluster.region,
                instance=f"{cluster.name}-model-registry",
                settings=sql,
                deletion_protection=config.deletion_protection,
                private_service_access=True,
            )
    after = isinstance(cluster, GkeClusterConfig) and registry_database_args(config) is RegistryDatabase.CLOUD_SQL and config.enabled(PIPELINES)
    return ModelRegistryArgs(sources=config.sources, private_service_access=psa, after_pipelines=after)


AFTER_PIPELINES = (Need(PIPELINES, What.CONTROLLER),)


def _install(args: ModelRegistryArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    needs = ready.resources(MODEL_REGISTRY.needs, "the Model Registry")
    if args.after_pipelines:
        needs += ready.resources(AFTER_PIPELINES, "the Model Registry's Cloud SQL instances")
    return ModelRegistry("model-registry", args, cluster, needs)


INSTALLATION = Installation(MODEL_REGISTRY, model_registry_args, _install)


def registry_url(namespace: str) -> str:
    """A team's registry as its pods reach it (examples/model_registry_mnist.py says the same)."""
    return f"http://{REGISTRY_SERVICE}.{namespace}.svc.cluster.local:{REGISTRY_PORT}"

