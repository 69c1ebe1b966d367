"""The stack file's Model Registry (components/model_registry.py): one registry per team, in its
namespace, on the platform's database choice."""

from __future__ import annotations

from enum import Enum

from pydantic import Field

from facts import versions
from stackmodel.components.istio import ISTIO
from stackmodel.components.kubeflow_parts import KUBEFLOW_NAMESPACES
from stackmodel.components.pipelines import PipelinesCloudSql
from stackmodel.components.spec import ComponentSpec, Need, Toggle, What
from stackmodel.schema.common import VolumeSize


class RegistryDatabase(str, Enum):
    """Where a team's registry keeps its records."""

    IN_CLUSTER = "inCluster"
    """The Hub tree's MySQL in the team's namespace (MySQL 8.4 LTS), on a volume of its own."""
    CLOUD_SQL = "cloudSql"
    """GKE: a Cloud SQL for MySQL 8.4 instance of the team's own, private IP."""


class ModelRegistryConfig(Toggle):
    """The Model Registry (Kubeflow Hub): a registry of model names, versions and URIs per team, in
    the team's namespace (the Kubeflow SDK's ModelRegistryClient), and one read-only UI for all
    teams at /model-registry/."""

    database: RegistryDatabase | None = Field(
        default=None,
        description="Where each team's registry keeps its records: cloudSql (GKE only: an instance per team) or "
        "inCluster (the tree's MySQL in the team's namespace). Default: cloudSql on GKE, inCluster elsewhere.",
    )
    database_storage: VolumeSize = Field(
        default="5Gi",
        description="inCluster: each team's MySQL volume (protected and retained). Grows where the storage class "
        "allows expansion; never shrinks.",
    )
    cloud_sql: PipelinesCloudSql = Field(
        default=PipelinesCloudSql(),
        description="cloudSql: each team's registry database, a Cloud SQL for MySQL 8.4 instance of its own (a Cloud SQL "
        "user is not confined to one database, docs/model-registry.md), private IP, backups and point-in-time recovery.",
    )


MODEL_REGISTRY = ComponentSpec(
    "modelRegistry",
    ModelRegistryConfig,
    "A Model Registry per team (Kubeflow Hub) and its UI; needs kubeflow and istio.",
    needs=(
        Need(KUBEFLOW_NAMESPACES, What.NAMESPACE),  # the UI lives in Kubeflow's namespace; the registries in profile namespaces
        Need(ISTIO, What.CRDS),  # the UI's route and every registry's policies
    ),
    pins=(versions.KUBEFLOW_HUB,),
)
