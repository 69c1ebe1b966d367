"""The stack file's cert-manager (components/cert_manager.py): webhook certificates."""

from __future__ import annotations

from facts import versions
from stackmodel.components.spec import chart_component

CERT_MANAGER = chart_component(
    "certManager", "Webhook certificates; kubeflow needs it.", module=__name__, on_by_default=True, pins=(versions.CERT_MANAGER,),
    settings=("CertManagerConfig", "cert-manager from its own chart, with the issuer and NetworkPolicies the pinned Kubeflow release adds (webhook certificates).", "the cert-manager chart"),
)
CertManagerConfig = CERT_MANAGER.model
"""Its settings' model, by the name it has (the reference's; a pickled stack finds it here)."""
