"""The stack file's Istio (components/istio.py): the service mesh and the ingress gateway."""

from __future__ import annotations

from facts import versions
from stackmodel.components.kubeflow_parts import KUBEFLOW_NAMESPACES
from stackmodel.components.spec import ComponentSpec, Need, Toggle, What


class IstioConfig(Toggle):
    """Istio with CNI and the ingress gateway, as the pinned Kubeflow release installs it."""


ISTIO = ComponentSpec(
    "istio",
    IstioConfig,
    "Service mesh and ingress gateway; kubeflow needs it.",
    # Istio's Kubeflow install puts Sidecars into the `kubeflow` namespace.
    needs=(Need(KUBEFLOW_NAMESPACES, What.NAMESPACE, optional=True),),
    on_by_default=True,
    pins=(versions.ISTIO,),
)
