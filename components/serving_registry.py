"""Serving a registered model by name (`serving` and `modelRegistry` both on): the Hub's storage
initializer, which the serving component installs from the pinned Kubeflow tree, made to reach
the registry of each team's own namespace (docs/serving.md, "A registered model by name").

`storageUri: model-registry://<model>[/<version>]` makes KServe's pod webhook add the init container
of the ClusterStorageContainer whose prefix matches (kserve v0.20.0 pkg/webhook/admission/pod/
storage_initializer_injector.go GetStorageContainerSpec, CommonStorageInitialization: the KServe
init container, args `<uri> /mnt/models`, merged with the ClusterStorageContainer's container);
without one the controller refuses the URI (pkg/controller/v1beta1/inferenceservice/utils/utils.go
ValidateStorageURI: not a scheme of KServe's own initializer).
The Hub's initializer (kubeflow/model-registry v0.3.8 cmd/csi, the nearest stored tag to v0.3.9):
- resolves the registry (cmd/csi/main.go; internal/modelregistry/api_client.go NewAPIClient): a URI
  `<host>/<model>/<version>` names it; `?namespace=<ns>` makes it `model-registry-service.<ns>.svc.
  cluster.local:<port>`; otherwise MODEL_REGISTRY_BASE_URL (a `<model>/<version>` URI first tries
  `<model>` as a host and falls back to it when that fails). The tree's URL names one namespace
  (`kubeflow`); ours is the Service's short name, which the pod's DNS search path resolves in the
  pod's own namespace: each team's model servers reach their team's registry, and the registry
  answers only callers of its namespace (the profile's mesh policies), so a URI naming another
  team's registry is refused there.
- finds the version (without `/<version>`, the first in the registry server's default order:
  provider.go asks for no order) and its newest model artifact's URI, and
  downloads it with KServe's Go providers: s3://, gs://, http(s):// (internal/storage/
  modelregistry_provider.go; kserve v0.17.0-rc1, its go.mod's, pkg/agent/storage/provider.go
  SupportedProtocols); not pvc://.
- gs:// without GOOGLE_APPLICATION_CREDENTIALS in its environment is read anonymously (kserve
  v0.17.0-rc1 pkg/agent/storage/utils.go GetProvider: option.WithoutAuthentication()), so a team
  bucket would be refused. Set and empty, the client takes Google's default credentials, which skip
  an empty variable and, on GKE, ask the metadata server: the pod's Workload Identity, the team's
  model-server account (cloud.google.com/go/auth v0.16.5, its go.sum's, credentials/detect.go
  DetectDefault: an empty GOOGLE_APPLICATION_CREDENTIALS is skipped, then the metadata server).
- runs after the mesh sidecar: with native sidecars the injector orders init containers
  `istio-validation, istio-proxy, the rest` (istio 1.30.1 pkg/kube/inject/webhook.go reorderPod), so
  its calls carry the pod's mesh identity; KServe changes its user to the proxy's only for a sidecar
  among the pod's containers (storage_initializer_injector.go SetIstioCniSecurityContext).
"""

from __future__ import annotations

from typing import Any

from components.model_registry import REGISTRY_PORT, REGISTRY_SERVICE
from plumbing.base import matches

STORAGE_INITIALIZER_TREE = "applications/hub/upstream/options/csi"
STORAGE_INITIALIZER = "model-registry-storage-initializer"
"""The tree's ClusterStorageContainer (cluster-scoped; kustomize gives it the tree's namespace)."""
REGISTRY_PREFIX = "model-registry://"
REGISTRY_URL_ENV = "MODEL_REGISTRY_BASE_URL"
GOOGLE_CREDENTIALS_ENV = "GOOGLE_APPLICATION_CREDENTIALS"


def team_registry_url() -> str:
    """The registry of the pod's own namespace: `<Service>:<port>`, no namespace."""
    return f"{REGISTRY_SERVICE}:{REGISTRY_PORT}"


def with_team_registry(props: dict[str, Any], gke: bool) -> dict[str, Any] | None:
    """The tree's ClusterStorageContainer: the team's own registry (not `kubeflow`'s), on GKE the
    pod's Workload Identity for gs:// artifacts, no namespace (it has none). Its image is the
    mirror's rewrite of the tree's `latest` (facts/versions.py HUB_STORAGE_INITIALIZER_IMAGE): the
    tree's kustomization names v0.3.9 in `images`, which kustomize applies to container fields it
    knows, not to a ClusterStorageContainer's spec.container.image."""
    if not matches(props, "ClusterStorageContainer", STORAGE_INITIALIZER):
        return None
    container = props["spec"]["container"]
    env = [e for e in container.get("env") or [] if e.get("name") not in (REGISTRY_URL_ENV, GOOGLE_CREDENTIALS_ENV)]
    env.append({"name": REGISTRY_URL_ENV, "value": team_registry_url()})
    if gke:
        env.append({"name": GOOGLE_CREDENTIALS_ENV, "value": ""})
    metadata = {k: v for k, v in props["metadata"].items() if k != "namespace"}
    return {**props, "metadata": metadata, "spec": {**props["spec"], "container": {**container, "env": env}}}
