"""The stack file's cert-manager (components/cert_manager.py): webhook certificates."""

from __future__ import annotations

from facts import versions
from stackmodel.components.spec import ComponentSpec, Toggle
from stackmodel.schema.chart_values import ChartValues, chart_values_field


class CertManagerConfig(Toggle):
    """cert-manager from its own chart, with the issuer and NetworkPolicies the pinned Kubeflow release adds (webhook certificates)."""

    values: ChartValues = chart_values_field("the cert-manager chart")


CERT_MANAGER = ComponentSpec(
    "certManager",
    CertManagerConfig,
    "Webhook certificates; kubeflow needs it.",
    on_by_default=True,
    pins=(versions.CERT_MANAGER,),
)
