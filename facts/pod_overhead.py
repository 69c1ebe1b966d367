"""What pods of a team namespace request that Kueue does not count, read at the pinned
sources: the namespace's ResourceQuota must leave room for it beside what the team's
ClusterQueue admits (components/profiles/namespace.py; `python -m stacks check` rule
quota-admits-queue reads the same numbers from the render itself). Imports nothing."""

from __future__ import annotations

ISTIO_SIDECAR_REQUESTS = {"cpu": "10m", "memory": "40Mi"}
"""The istio-proxy container the injector adds to every pod of a profile namespace that does
not opt out (kubeflow/community-distribution 26.03.1-rc.2 common/istio/istio-install/base/
install.yaml, ConfigMap istio-sidecar-injector, values global.proxy.resources.requests). It
is added when the pod is created, after Kueue admitted the workload from its template. With
Istio CNI the init container (istio-validation, 10m/10Mi) requests less, so it adds nothing."""

NOTEBOOK_FORM_REQUESTS = {"cpu": "0.5", "memory": "1.0Gi"}
"""A notebook as the form starts it by default (kubeflow/notebooks v1.11.0, as the Kubeflow tree
ships it: applications/notebooks-v1/upstream/jupyter-web-app/base/configs/spawner_ui_config.yaml
spawnerFormDefaults cpu.value, memory.value). Notebooks are not queued."""
