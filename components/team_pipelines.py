"""What a team namespace needs to run Kubeflow Pipelines, generated for its own artifact store:
pure functions, team args -> objects (the team wiring, components/profiles.py, applies them).

Upstream, a metacontroller hook (kubeflow/pipelines 2.16.1, the release's
applications/pipeline/upstream/base/installs/multi-user/pipelines-profile-controller/sync.py)
writes these into every namespace labelled `pipelines.kubeflow.org/enabled`: the launcher's
ConfigMap `kfp-launcher` (`defaultPipelineRoot: minio://mlpipeline/private-artifacts/<ns>/v2/
artifacts`), `metadata-grpc-configmap`, Argo's `artifact-repositories` (S3 on SeaweedFS,
`keyFormat: private-artifacts/<ns>/...`) and a Secret `mlpipeline-minio-artifact` with keys it
creates through SeaweedFS's IAM API at run time. Wrong for us: on GKE the root must be the team's
bucket (gs://, the team's Workload Identity), and secrets made behind Pulumi's back are never
rotated or removed with the team. So the program writes all of them (components/pipelines.py
keeps metacontroller and the hook from running):

- gke: the pipeline root is `gs://<team bucket>/pipelines`; the launcher (kfp 2.16.1 backend/src/
  v2/config/gcs.go, `providers.gs` credentials `fromEnv`) and Argo's log archive (GCS artifact
  repository without a key: the pod's credentials) act as the pod's service account,
  `default-editor`, which is the team's Google account through Workload Identity and the only
  one with access to the bucket (components/profiles.py): bucket IAM keeps teams apart.
- in-cluster store (kind, existingContext): the team's prefix `private-artifacts/<ns>/` of the
  `mlpipeline` bucket on SeaweedFS, with a key pair of the team's own (a Pulumi secret) that the
  store lets read and write only that prefix (components/pipelines.py registers it). The
  launcher's default for `minio://` roots reads that Secret from the run's namespace (backend/
  src/v2/config/env.go getDefaultMinioSessionInfo: endpoint seaweedfs.kubeflow:9000, Secret
  mlpipeline-minio-artifact, keys accesskey/secretkey).

And every team's PodDefault gets a projected service-account token for the Pipelines API
(`pipeline_token_access`): `kfp.Client()` in a notebook reads it (kfp 2.16.1 kfp/client/
set_volume_credentials.py, KF_PIPELINES_SA_TOKEN_PATH) and the API server checks it with a
TokenReview for the audience `pipelines.kubeflow.org`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from plumbing.base import ObjectStoreKeys

KFP_NAMESPACE = "kubeflow"
LAUNCHER_CONFIG = "kfp-launcher"
METADATA_CONFIG = "metadata-grpc-configmap"
ARTIFACT_REPOSITORIES = "artifact-repositories"
ARTIFACT_REPOSITORY_KEY = "default-namespaced"
DEFAULT_ARTIFACT_REPOSITORY = "workflows.argoproj.io/default-artifact-repository"
"""Argo v3.7.3: the annotation on `artifact-repositories` naming its default key (docs/artifact-repository-ref.md)."""
OBJECT_STORE_SECRET = "mlpipeline-minio-artifact"
ACCESS_KEY, SECRET_KEY = "accesskey", "secretkey"
IN_CLUSTER_BUCKET = "mlpipeline"
"""The in-cluster store's bucket (pipeline-install-config `bucketName`; SeaweedFS's postStart creates it)."""
IN_CLUSTER_ENDPOINT = f"seaweedfs.{KFP_NAMESPACE}.svc.cluster.local:9000"
"""The SeaweedFS Service's S3 port 9000 (-> 8333), the one Argo and the launcher's default use."""
METADATA_HOST, METADATA_PORT = f"metadata-grpc-service.{KFP_NAMESPACE}", "8080"
GCS_ROOT = "pipelines"
"""The folder of a team bucket that holds its pipeline runs (`gs://<bucket>/pipelines/...`)."""
# kfp 2.16.1: the token file kfp.Client() reads (kfp/client/__init__.py KF_PIPELINES_SA_TOKEN_PATH)
# and the audience the API server's TokenReview asks for (backend/src/apiserver/common/const.go).
PIPELINES_TOKEN_DIR = "/var/run/secrets/kubeflow/pipelines"
PIPELINES_TOKEN_ENV = "KF_PIPELINES_SA_TOKEN_PATH"
PIPELINES_TOKEN_AUDIENCE = "pipelines.kubeflow.org"
PIPELINES_TOKEN_VOLUME = "kfp-token"
PIPELINES_TOKEN_SECONDS = 7200


@dataclass(frozen=True)
class TeamPipelines:
    """The team runs Kubeflow Pipelines: where its artifacts go."""

    bucket: str | None
    """gke: the team's own bucket, its pipeline root (stackmodel/rules/ makes every such team have
    one); None: the team's prefix of the in-cluster object store."""


def team_prefix(namespace: str) -> str:
    """The team's part of the in-cluster bucket, as the upstream hook lays it out."""
    return f"private-artifacts/{namespace}"


def pipeline_root(namespace: str, pipelines: TeamPipelines) -> str:
    """Where the team's runs write their artifacts."""
    if pipelines.bucket:
        return f"gs://{pipelines.bucket}/{GCS_ROOT}"
    return f"minio://{IN_CLUSTER_BUCKET}/{team_prefix(namespace)}/v2/artifacts"


def _config_map(name: str, namespace: str, data: dict[str, str], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def launcher_config(namespace: str, pipelines: TeamPipelines) -> dict[str, Any]:
    """`kfp-launcher`: the default pipeline root (a pipeline may name another) and, on GKE, the
    GCS credentials from the pod's environment: Workload Identity."""
    data = {"defaultPipelineRoot": pipeline_root(namespace, pipelines)}
    if pipelines.bucket:
        data["providers"] = json.dumps({"gs": {"default": {"credentials": {"fromEnv": True}}}}, sort_keys=True)
    return _config_map(LAUNCHER_CONFIG, namespace, data)


def metadata_config(namespace: str) -> dict[str, Any]:
    """Where the runs' driver and launcher find ML Metadata."""
    return _config_map(METADATA_CONFIG, namespace, {"METADATA_GRPC_SERVICE_HOST": METADATA_HOST, "METADATA_GRPC_SERVICE_PORT": METADATA_PORT})


def artifact_repository(namespace: str, pipelines: TeamPipelines) -> dict[str, Any]:
    """Argo's artifact repository of the namespace (where it archives the steps' logs), the
    namespace's default by annotation: the team's bucket, or the team's prefix in the store."""
    key_format = "{{workflow.name}}/{{workflow.creationTimestamp.Y}}/{{workflow.creationTimestamp.m}}/{{workflow.creationTimestamp.d}}/{{pod.name}}"
    repository: dict[str, Any]
    if pipelines.bucket:
        repository = {"archiveLogs": True, "gcs": {"bucket": pipelines.bucket, "keyFormat": f"{GCS_ROOT}/logs/{key_format}"}}
    else:
        repository = {
            "archiveLogs": True,
            "s3": {
                "endpoint": IN_CLUSTER_ENDPOINT,
                "bucket": IN_CLUSTER_BUCKET,
                "keyFormat": f"{team_prefix(namespace)}/{key_format}",
                "insecure": True,
                "accessKeySecret": {"name": OBJECT_STORE_SECRET, "key": ACCESS_KEY},
                "secretKeySecret": {"name": OBJECT_STORE_SECRET, "key": SECRET_KEY},
            },
        }
    return _config_map(
        ARTIFACT_REPOSITORIES,
        namespace,
        {ARTIFACT_REPOSITORY_KEY: json.dumps(repository, sort_keys=True)},
        {DEFAULT_ARTIFACT_REPOSITORY: ARTIFACT_REPOSITORY_KEY},
    )


def object_store_secret(namespace: str, keys: ObjectStoreKeys) -> dict[str, Any]:
    """The team's own key pair for the in-cluster store."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": OBJECT_STORE_SECRET, "namespace": namespace},
        "stringData": {ACCESS_KEY: keys.access_key, SECRET_KEY: keys.secret_key},
    }


def pipeline_objects(namespace: str, pipelines: TeamPipelines, keys: ObjectStoreKeys | None) -> list[dict[str, Any]]:
    """Everything the namespace needs to run pipelines, in apply order. `keys`: the team's key
    pair of the in-cluster store; on GKE (a bucket) there is none."""
    if not pipelines.bucket and keys is None:
        raise ValueError(f"team {namespace} keeps its artifacts in the in-cluster store but got no key pair for it")
    secret = [object_store_secret(namespace, keys)] if keys is not None and not pipelines.bucket else []
    return [*secret, launcher_config(namespace, pipelines), metadata_config(namespace), artifact_repository(namespace, pipelines)]


@dataclass(frozen=True)
class TokenAccess:
    """What the team's PodDefault adds so that `kfp.Client()` authenticates in the cluster."""

    env: tuple[dict[str, Any], ...]
    volumes: tuple[dict[str, Any], ...]
    volume_mounts: tuple[dict[str, Any], ...]


def pipeline_token_access() -> TokenAccess:
    """A projected token of the pod's service account for the Pipelines API's audience, where
    kfp.Client() looks for it (the PodDefault Kubeflow documents as `access-ml-pipeline`)."""
    token = {"serviceAccountToken": {"path": "token", "audience": PIPELINES_TOKEN_AUDIENCE, "expirationSeconds": PIPELINES_TOKEN_SECONDS}}
    return TokenAccess(
        env=({"name": PIPELINES_TOKEN_ENV, "value": f"{PIPELINES_TOKEN_DIR}/token"},),
        volumes=({"name": PIPELINES_TOKEN_VOLUME, "projected": {"sources": [token]}},),
        volume_mounts=({"name": PIPELINES_TOKEN_VOLUME, "mountPath": PIPELINES_TOKEN_DIR, "readOnly": True},),
    )
