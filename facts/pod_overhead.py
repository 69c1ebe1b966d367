"""What pods of a team namespace request that Kueue does not count, read at the pinned
sources: the namespace's ResourceQuota must leave room for it beside what the team's
ClusterQueue admits (components/profiles/namespace.py; `python -m stacks check` rule
quota-admits-queue reads the same numbers from the render itself). Imports nothing of ours."""

from __future__ import annotations

import copy
from typing import Any

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

ARGO_EXECUTOR_RESOURCES = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}}
"""What the platform gives Argo's executor containers (the `init` container and the `wait`
sidecar of every pipeline pod): argoproj/argo-workflows v3.7.3 docs/workflow-controller-configmap.yaml
lines 199-209, the `executor.resources` of Argo's own example, which workflow/controller/
workflowpod.go:695-703 newExecContainer copies onto both (`Resources: ...GetExecutor().Resources`;
`init` always, :271-273, `wait` for every container template, :241-248). Kubeflow's tree sets
none (its workflow-controller-configmap `executor` has only the pull policy and security
context), so each took the team namespace's LimitRange default (1 CPU, 2Gi)."""

KFP_DRIVER_RESOURCES = {"requests": {"cpu": "0.1", "memory": "64Mi"}, "limits": {"cpu": "0.5", "memory": "0.5Gi"}}
"""The `main` container of a pipeline step's driver pod (kubeflow/pipelines 2.16.1
backend/src/v2/compiler/argocompiler/argo.go:469-478 driverResources, container.go:273)."""
KFP_LAUNCHER_RESOURCES = {"requests": {"cpu": "0.1"}, "limits": {"cpu": "0.5", "memory": "256Mi"}}
"""The `kfp-launcher` init container of a step's executor pod (argo.go:484-492 launcherResources,
container.go:506-519); its memory request becomes its limit on the pod."""


def pipeline_step_pods(executor: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """A pipeline step's two pods as Argo v3.7.3 creates them from KFP 2.16.1's compiled workflow
    (pod name -> pod spec), before the namespace's LimitRange: the driver pod (Argo's `init`, its
    `wait`, the driver) and the executor pod (Argo's `init`, KFP's `kfp-launcher`, `wait`, and the
    step's `main` with no resources of its own, a CPU step as the SDK compiles it without
    set_cpu_request). Argo puts its `init` first and `wait` before the main container
    (workflowpod.go:241-271). `executor`: the executor containers' resources (Argo's
    `executor.resources`; None: none, as the Kubeflow tree ships it). No mesh sidecar: KFP marks
    every template `sidecar.istio.io/inject: "false"` (backend/src/apiserver/template/v2_template.go:391)."""
    argo = {"resources": copy.deepcopy(executor)} if executor else {}
    return {
        "driver": {
            "initContainers": [{"name": "init", **copy.deepcopy(argo)}],
            "containers": [{"name": "wait", **copy.deepcopy(argo)}, {"name": "main", "resources": copy.deepcopy(KFP_DRIVER_RESOURCES)}],
        },
        "executor": {
            "initContainers": [{"name": "init", **copy.deepcopy(argo)}, {"name": "kfp-launcher", "resources": copy.deepcopy(KFP_LAUNCHER_RESOURCES)}],
            "containers": [{"name": "wait", **copy.deepcopy(argo)}, {"name": "main"}],
        },
    }
