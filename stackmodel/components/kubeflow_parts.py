"""The parts of Kubeflow (stackmodel/components/kubeflow.py) that others wait for apart from the
whole, each recorded by Kubeflow's Installation: a module of their own, as Istio waits for the
first and Kubeflow waits for Istio."""

from __future__ import annotations

from stackmodel.components.spec import Ready

KUBEFLOW_NAMESPACES = Ready("kubeflowNamespaces")
"""Kubeflow's namespace tree, made before every component (Istio's and Trainer's objects live in it)."""
KUBEFLOW_POD_DEFAULTS = Ready("kubeflowPodDefaults")
"""Kubeflow's PodDefaults webhook, and with it the PodDefault CRD."""
KUBEFLOW_HTTPS_GATEWAY = Ready("kubeflowHttpsGateway")
"""On GKE behind an Ingress: the gateway whose address is the A record auth.hostname needs."""
