"""The stack file's Kubeflow (components/kubeflow.py): the dashboard, profiles, notebooks and sign-in."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from facts import versions
from stackmodel.components.cert_manager import CERT_MANAGER
from stackmodel.components.istio import ISTIO
from stackmodel.components.kubeflow_parts import KUBEFLOW_HTTPS_GATEWAY, KUBEFLOW_NAMESPACES, KUBEFLOW_POD_DEFAULTS
from stackmodel.components.spec import ComponentSpec, Need, Toggle, What
from stackmodel.schema.auth import KubeflowAuth
from stackmodel.schema.cluster import GkeClusterConfig
from stackmodel.schema.common import REGISTRY_PATH


class KubeflowConfig(Toggle):
    """Kubeflow multi-user core: dashboard, profiles + KFAM, PodDefaults, notebooks, auth."""

    auth: KubeflowAuth = Field(default=KubeflowAuth(), description="How people sign in.")
    notebook_registry: str | None = Field(
        default=None,
        description="Where the platform's notebook images are pulled from (`<registry>/notebook:<tag>`, "
        "images/notebook/Dockerfile). Default: the stack's Artifact Registry repository on gke, "
        "`localhost/mlplatform` on kind (`make notebook-images` builds them and loads them into the cluster).",
    )

    @field_validator("notebook_registry")
    @classmethod
    def _notebook_registry(cls, value: str | None) -> str | None:
        if value is not None and not REGISTRY_PATH.match(value):
            raise ValueError(
                f"{value!r} is not a registry path such as europe-docker.pkg.dev/acme/images: "
                "host and path, no scheme and no tag"
            )
        return value


KUBEFLOW = ComponentSpec(
    "kubeflow",
    KubeflowConfig,
    "Dashboard, notebooks, profiles and sign-in; teams need it.",
    needs=(
        Need(KUBEFLOW_NAMESPACES, What.NAMESPACE),
        Need(ISTIO, What.CRDS),  # its Gateways, VirtualServices, AuthorizationPolicies
        Need(CERT_MANAGER, What.CRDS),  # the webhooks' Certificates and the Kubeflow Issuer
    ),
    on_by_default=True,
    parts=(KUBEFLOW_NAMESPACES, KUBEFLOW_POD_DEFAULTS, KUBEFLOW_HTTPS_GATEWAY),
    pins=(versions.KUBEFLOW_MANIFESTS,),
)


def behind_gke_ingress(config: Any) -> bool:
    """Whether Kubeflow's gateway has a public hostname behind a GKE Ingress (HttpsGateway)."""
    return isinstance(config.cluster, GkeClusterConfig) and bool(config.components[KUBEFLOW].auth.hostname)
