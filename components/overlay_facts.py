"""What the platform needs of each chart's values beyond what it sets: the keys it relies on
(RELIED, each read in the chart at its pinned version, its file named), why it needs the keys it
sets and which stack key sets them instead (HINTS), and how the charts read some values
(EMBEDDED_YAML, INT_OR_STRING). components/overlays.py judges the stack's overlays with them;
the keys the platform sets come from the values builders themselves, not from here.

Long by design: one table per chart, each entry a fact with its source; split, a reader would
look for one chart's facts in several files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from facts.dra import DCGM_DRA_ATTRIBUTION_OFF
from facts.versions import (
    CERT_MANAGER,
    DCGM_EXPORTER,
    GRAFANA,
    JOBSET_CHART,
    KUBE_PROMETHEUS_STACK,
    KUBERAY_CHART,
    KUEUE_CHART,
    TRAINER_CHART,
)

Key = tuple[str, ...]
"""A place in a chart's values, key by key (`("grafana.ini", "auth.anonymous", "enabled")`)."""

K = "mlplatform:components"


@dataclass(frozen=True)
class Hint:
    """Why the platform sets the keys under `key`, and the stack key that sets them (None: none
    does, the key is the platform's)."""

    key: Key
    why: str
    stack_key: str | None = None


@dataclass(frozen=True)
class Relied:
    """A key the platform does not set but needs at a value the chart gives it by default."""

    key: Key
    """`*` stands for any one key."""
    keeps: Callable[[Any], bool]
    """Whether a value the overlay gives there keeps what the platform needs."""
    needs: str
    """What it needs, for messages (`crds.enabled true, the chart's default`)."""
    source: str
    """Where in the chart, at its pinned version."""
    why: str
    stack_key: str | None = None


def _is(expected: Any) -> Callable[[Any], bool]:
    return lambda value: bool(value == expected and type(value) is type(expected))


def _empty(value: Any) -> bool:
    return value in ({}, [], "")


def _without_flag(flag: str) -> Callable[[Any], bool]:
    """A list of command-line arguments that does not give `flag`."""
    return lambda value: not (isinstance(value, list) and any(str(a) == flag or str(a).startswith(f"{flag}=") for a in value))



EMBEDDED_YAML: dict[str, frozenset[Key]] = {
    # kueue 0.19.2 templates/manager/manager-config.yaml: `controllerManagerConfigYaml | fromYaml`,
    # the whole Configuration in one string.
    KUEUE_CHART.name: frozenset({("managerConfig", "controllerManagerConfigYaml")}),
}
"""Chart values that hold a YAML document in a string, compared as the documents they hold."""

INT_OR_STRING = frozenset({"targetPort", "minAvailable", "maxUnavailable", "maxSurge"})
"""Keys a chart passes to a Kubernetes IntOrString (a port name, a percentage): a number by
default, a string is fine too. Quantities (anything under `resources`) likewise."""


RAY_TEAMS = "the teams' RayClusters and RayJobs live in their profile namespaces, which the operator must watch"

RELIED: dict[str, tuple[Relied, ...]] = {
    # cert-manager's flags and configuration read in its own source at tag v1.21.1:
    # cmd/controller/app/options/options.go, cmd/cainjector/app/options/options.go and
    # pkg/apis/config/{controller,cainjector}/v1alpha1/types.go (`namespace`).
    CERT_MANAGER.name: (
        Relied(("namespace",), _empty, "namespace left empty (the release's, cert-manager)", "values.yaml `namespace`",
               "the Kubeflow issuer's tree and cert-manager's NetworkPolicies are written for namespace cert-manager (components/cert_manager.py)"),
        Relied(("config", "namespace"), _empty, "the controller watching every namespace",
               f"values.yaml `config` (the ControllerConfiguration; cert-manager {CERT_MANAGER.version} pkg/apis/config/controller/v1alpha1/types.go `namespace`: "
               "one namespace, ClusterIssuers disabled)",
               "Kubeflow's webhooks get their certificates from the ClusterIssuer kubeflow-self-signing-issuer, in their own namespaces"),
        Relied(("extraArgs",), _without_flag("--namespace"), "no --namespace flag",
               f"values.yaml `extraArgs` (its source at {CERT_MANAGER.version}: cmd/controller/app/options/options.go: --namespace limits it to one namespace, ClusterIssuers disabled)",
               "Kubeflow's webhooks get their certificates from the ClusterIssuer kubeflow-self-signing-issuer, in their own namespaces"),
        Relied(("cainjector", "extraArgs"), _without_flag("--namespace"), "no --namespace flag",
               f"values.yaml `cainjector.extraArgs` (its source at {CERT_MANAGER.version}: cmd/cainjector/app/options/options.go: --namespace limits cainjector to one namespace)",
               "cainjector writes the CA bundles of the webhooks of every namespace (Kubeflow's, Trainer's)"),
        Relied(("cainjector", "config", "namespace"), _empty, "cainjector watching every namespace",
               f"values.yaml `cainjector.config` (its source at {CERT_MANAGER.version}: pkg/apis/config/cainjector/v1alpha1/types.go `namespace`)",
               "cainjector writes the CA bundles of the webhooks of every namespace (Kubeflow's, Trainer's)"),
    ),
    JOBSET_CHART.name: (
        Relied(("certManager", "enable"), _is(False), "certManager.enable false, the chart's default",
               "values.yaml, templates/certmanager/certificate.yaml (an Issuer and Certificates, kinds of cert-manager's)",
               "JobSet is installed without waiting for cert-manager; its controller makes its own webhook certificate (templates/internalcert/secret.yaml)"),
        Relied(("prometheus", "enable"), _is(False), "prometheus.enable false, the chart's default",
               "values.yaml, templates/prometheus/monitor.yaml (a ServiceMonitor, a kind of Monitoring's)",
               "JobSet is installed without waiting for Monitoring, so its first install would fail on a kind not served yet"),
    ),
    TRAINER_CHART.name: (
        Relied(("crds", "enabled"), _is(True), "crds.enabled true, the chart's default",
               "values.yaml, templates/crd/*.yaml (`if .Values.crds.enabled`)",
               "the platform's training runtimes (runtimes/) and every TrainJob are of the kinds these CRDs define"),
        Relied(("runtimes", "*", "enabled"), _is(False), "each built-in runtime off, the chart's default",
               "values.yaml `runtimes`, templates/runtimes/_runtimes.tpl (trainer.runtimes.enabled renders the installer hook Job)",
               "the chart installs its runtimes from a Helm hook Job, which helm.v4.Chart never runs (the runtime would silently never "
               "exist); the platform's runtimes come from runtimes/ (docs/runtimes.md)"),
        Relied(("runtimes", "torchtuneDistributed", "*", "enabled"), _is(False), "each built-in runtime off, the chart's default",
               "values.yaml `runtimes.torchtuneDistributed`, templates/runtimes/_runtimes.tpl",
               "the chart installs its runtimes from a Helm hook Job, which helm.v4.Chart never runs; the platform's runtimes come from runtimes/"),
        Relied(("dataCache", "runtimes", "*", "enabled"), _is(False), "the data-cache runtime off, the chart's default",
               "values.yaml `dataCache.runtimes`, templates/runtimes/_runtimes.tpl",
               "the chart installs its runtimes from a Helm hook Job, which helm.v4.Chart never runs; the platform's runtimes come from runtimes/"),
        Relied(("manager", "config", "certManagement", "enable"), _is(True), "certManagement.enable true, the chart's default",
               "values.yaml, templates/manager/configmap.yaml",
               "Trainer's controller makes its own webhook certificate; nothing else in the platform issues one for it"),
    ),
    KUBERAY_CHART.name: (
        Relied(("singleNamespaceInstall",), _is(False), "singleNamespaceInstall false, the chart's default",
               "values.yaml, templates/deployment.yaml (--watch-namespace: the release's namespace)", RAY_TEAMS),
        Relied(("watchNamespace",), _empty, "watchNamespace unset, the chart's default",
               "values.yaml, templates/deployment.yaml (--watch-namespace)", RAY_TEAMS),
        Relied(("rbacEnable",), _is(True), "rbacEnable true, the chart's default",
               "values.yaml (false: no ClusterRole, no RoleBinding)", "the operator creates the teams' Ray pods and Services with these rights"),
    ),
    KUEUE_CHART.name: (
        Relied(("enableCertManager",), _is(False), "enableCertManager false, the chart's default",
               "values.yaml, templates/certmanager/certificate.yaml, templates/manager/manager-config.yaml",
               "Kueue makes its own webhook certificate (internalCertManagement in the platform's configuration) and is installed "
               "without waiting for cert-manager"),
        Relied(("nameOverride",), _empty, "nameOverride empty, the chart's default",
               "templates/_helpers.tpl kueue.name (app.kubernetes.io/name)",
               "the platform's ServiceMonitor selects Kueue's metrics Service by app.kubernetes.io/name kueue (components/kueue.py)"),
    ),
    KUBE_PROMETHEUS_STACK.name: (
        Relied(("crds", "enabled"), _is(True), "crds.enabled true, the chart's default", "Chart.yaml dependency crds (condition crds.enabled)",
               "the platform's alerts, monitors and the operators' ServiceMonitors are of the Prometheus Operator's kinds"),
        Relied(("prometheusOperator", "enabled"), _is(True), "prometheusOperator.enabled true, the chart's default",
               "templates/prometheus-operator/deployment.yaml", "the operator turns the platform's monitors and alerts into Prometheus' configuration"),
        Relied(("prometheus", "enabled"), _is(True), "prometheus.enabled true, the chart's default", "templates/prometheus/prometheus.yaml",
               "Grafana's data source, the dashboards and the alerts read this Prometheus", f"{K}.monitoring.backend"),
        Relied(("prometheus", "agentMode"), _is(False), "prometheus.agentMode false, the chart's default", "templates/prometheus/prometheus.yaml",
               "an agent answers no queries, and Grafana's data source queries this Prometheus"),
        Relied(("prometheus", "service", "enabled"), _is(True), "prometheus.service.enabled true, the chart's default",
               "templates/prometheus/service.yaml", "Grafana's data source calls Prometheus through this Service"),
        Relied(("prometheus", "service", "port"), _is(9090), "port 9090, the chart's default", "templates/prometheus/service.yaml",
               "Grafana's data source calls Prometheus on port 9090 (components/monitoring.py PROMETHEUS_URL)"),
        Relied(("namespaceOverride",), _empty, "namespaceOverride empty (the release's namespace, monitoring)", "templates/_helpers.tpl kube-prometheus-stack.namespace",
               "Grafana's data source names Prometheus' Service in namespace monitoring, whose volume the platform protects"),
        Relied(("prometheusOperator", "namespaces"), _empty, "prometheusOperator.namespaces {}, the chart's default",
               "values.yaml, templates/prometheus-operator/deployment.yaml (--namespaces)",
               "the monitors the operator must read live in other namespaces (kueue-system, dcgm-exporter)"),
        Relied(("prometheusOperator", "denyNamespaces"), _empty, "prometheusOperator.denyNamespaces [], the chart's default",
               "values.yaml, templates/prometheus-operator/deployment.yaml (--deny-namespaces)",
               "the monitors the operator must read live in other namespaces (kueue-system, dcgm-exporter)"),
        Relied(("kubeStateMetrics", "enabled"), _is(True), "kubeStateMetrics.enabled true, the chart's default",
               "Chart.yaml dependency kube-state-metrics (condition kubeStateMetrics.enabled)",
               "the GPU dashboards read kube_node_labels and kube_pod_container_resource_requests (components/dashboards)"),
    ),
    GRAFANA.name: (
        Relied(("namespaceOverride",), _empty, "namespaceOverride empty (the release's namespace, monitoring)", "templates/_helpers.tpl grafana.namespace",
               "Grafana's route through the gateway and its NetworkPolicies are in namespace monitoring"),
        Relied(("nameOverride",), _empty, "nameOverride empty, the chart's default", "templates/_helpers.tpl grafana.selectorLabels",
               "Grafana's NetworkPolicy and sidecar policy select its pods by app.kubernetes.io/name grafana (components/monitoring.py)"),
    ),
    DCGM_EXPORTER.name: (
        Relied(("namespaceOverride",), _empty, "namespaceOverride empty (the release's namespace, dcgm-exporter)", "templates/_helpers.tpl dcgm-exporter.namespace",
               "GKE admits the exporter's critical pods only under the ResourceQuota of namespace dcgm-exporter, and the platform's monitor reads that namespace"),
        Relied(("nameOverride",), _empty, "nameOverride empty, the chart's default", "templates/_helpers.tpl dcgm-exporter.selectorLabels",
               "the platform's ServiceMonitor selects the exporter's Service by app.kubernetes.io/name dcgm-exporter (components/dcgm.py)"),
    ),
}
"""Per chart (its pin's name): the keys the platform relies on without setting them."""


GRAFANA_SIGN_IN = (
    "Grafana signs people in only with the identity the Kubeflow gateway asserts after its sign-in, in a header the gateway "
    "replaces on every request; any other way in (anonymous access, a header a client can send itself, a login form or basic "
    "auth) lets in whoever reaches it"
)
HELM_HOOKS = "helm.v4.Chart never runs Helm hooks, and this part of the chart depends on them"

HINTS: dict[str, tuple[Hint, ...]] = {
    CERT_MANAGER.name: (
        Hint(("crds", "enabled"), "the chart installs cert-manager's CRDs only so (templates/crd-*.yaml), and Kubeflow's webhook "
             "Certificates and its ClusterIssuer are of those kinds"),
    ),
    TRAINER_CHART.name: (
        Hint(("jobset", "install"), "JobSet is installed once, by the jobset component, before Trainer; a second copy from Trainer's "
             "chart would claim the same CRDs, webhooks and controller", f"{K}.jobset (its chart values: {K}.jobset.values)"),
        Hint(("runtimes", "defaultEnabled"), "the chart installs its runtimes from a Helm hook Job, which helm.v4.Chart never runs; "
             "the platform's runtimes come from runtimes/ (docs/runtimes.md)"),
        Hint(("manager", "podAnnotations"), "Istio must not intercept Trainer's webhook port 9443"),
        Hint(("manager", "labels"), "Kubeflow's trainer-webhook NetworkPolicy admits the API server to pods labelled so"),
    ),
    KUBERAY_CHART.name: (
        Hint(("env",), "under Istio the operator must not inject its wait-for-GCS init container (ENABLE_INIT_CONTAINER_INJECTION=false)"),
    ),
    KUEUE_CHART.name: (
        Hint(("managerConfig", "controllerManagerConfigYaml"), "the platform writes Kueue's controller configuration"),
        Hint(("managerConfig", "controllerManagerConfigYaml", "waitForPodsReady"), "Kueue's all-or-nothing admission: a multi-node "
             "job starts whole or is evicted and requeued", f"{K}.kueue.waitForPodsReady"),
        Hint(("managerConfig", "controllerManagerConfigYaml", "integrations"), "Kueue admits TrainJobs, JobSets, Ray workloads and GPU "
             "pods (notebooks, pipeline steps) only through these integrations (add frameworks if you like, keep the platform's)"),
        Hint(("managerConfig", "controllerManagerConfigYaml", "managedJobsNamespaceSelector"), "GPU pods are queued in the team "
             "namespaces alone; elsewhere Kueue's pod webhook must not hold pods back"),
        Hint(("managerConfig", "controllerManagerConfigYaml", "internalCertManagement"), "Kueue makes its own webhook certificate"),
        Hint(("managerConfig", "controllerManagerConfigYaml", "metrics"), "the dashboards read Kueue's cluster-queue metrics from this endpoint"),
        Hint(("enablePrometheus",), "the chart's ServiceMonitor is a kind of Monitoring's and would make Kueue wait for it; the platform's "
             "own monitor ties the two (components/ties.py)"),
    ),
    KUBE_PROMETHEUS_STACK.name: (
        Hint(("prometheus", "prometheusSpec", "retention"), "how long Prometheus keeps data is the stack's to say", f"{K}.monitoring.retention"),
        Hint(("prometheus", "prometheusSpec", "storageSpec"), "Prometheus keeps its data on a volume of the stack's size, which the "
             "platform protects", f"{K}.monitoring.storageSize"),
        Hint(("prometheus", "prometheusSpec"), "Prometheus must select every ServiceMonitor, and the platform's PodMonitors and rules"),
        Hint(("grafana",), "Grafana is installed once, from its own chart", f"{K}.monitoring.grafanaValues"),
        Hint(("prometheusOperator",), f"the admission webhook's certificate: {HELM_HOOKS}"),
        Hint(("fullnameOverride",), "it names the Prometheus Service Grafana's data source calls"),
        Hint(("kubeControllerManager",), "not scrapeable on GKE or kind: it would only raise TargetDown alerts"),
        Hint(("kubeScheduler",), "not scrapeable on GKE or kind: it would only raise TargetDown alerts"),
        Hint(("kubeEtcd",), "not scrapeable on GKE or kind: it would only raise TargetDown alerts"),
        Hint(("kube-state-metrics", "metricLabelsAllowlist"), "the per-pool views need the pool and accelerator node labels"),
    ),
    GRAFANA.name: (
        Hint(("grafana.ini", "auth"), GRAFANA_SIGN_IN),
        Hint(("grafana.ini", "auth.basic"), GRAFANA_SIGN_IN),
        Hint(("grafana.ini", "auth.anonymous"), GRAFANA_SIGN_IN),
        Hint(("grafana.ini", "auth.proxy"), GRAFANA_SIGN_IN),
        Hint(("grafana.ini", "auth.proxy", "headers"), "the gateway tells Grafana each person's role in this header", f"{K}.monitoring.grafanaAdmins"),
        Hint(("grafana.ini", "users"), "who signs in is a Viewer, or an Admin when named", f"{K}.monitoring.grafanaAdmins"),
        Hint(("grafana.ini", "server"), "Grafana is served through the Kubeflow gateway at /grafana/"),
        Hint(("env", "GF_SECURITY_DISABLE_INITIAL_ADMIN_CREATION"), "Grafana has no shared admin login (no admin password anywhere)"),
        Hint(("datasources",), "Grafana reads the Prometheus of the stack's monitoring backend", f"{K}.monitoring.backend"),
        Hint(("service",), "the gateway's route and the Kubeflow menu call Grafana's ClusterIP Service on port 80"),
        Hint(("podLabels",), "Grafana's Istio sidecar lets its policy tell the gateway from anyone else"),
        Hint(("podAnnotations",), "Grafana's Istio sidecar lets its policy tell the gateway from anyone else"),
        Hint(("rbac", "namespaced"), "the dashboard sidecar reads ConfigMaps of Grafana's namespace only, not every namespace's Secrets"),
        Hint(("sidecar", "dashboards"), "the platform's dashboards are ConfigMaps labelled grafana_dashboard=1 in Grafana's namespace"),
        Hint(("fullnameOverride",), "it names the Service the gateway's route calls"),
    ),
    DCGM_EXPORTER.name: (
        Hint(("tolerations",), "the exporter belongs on every GPU node, whatever its pool's taints", "mlplatform:cluster.gpuPools[].taints"),
        Hint(("serviceMonitor",), "the chart's ServiceMonitor is a kind of Monitoring's and would make the exporter wait for it; the "
             "platform's own monitor ties the two"),
        Hint(("affinity",), "the exporter runs on GPU nodes only"),
        Hint(("extraHostVolumes",), "GKE's NVIDIA libraries come from the node's /home/kubernetes/bin/nvidia"),
        Hint(("extraVolumeMounts",), "GKE's NVIDIA libraries and the chart's metrics list are mounted so"),
        Hint(("extraEnv",), "the exporter finds GKE's NVIDIA libraries and matches GPUs to pods by device name so"),
        Hint(("kubeletPath",), "pod attribution reads the kubelet's pod-resources socket there"),
        Hint(("priorityClassName",), "GKE admits the exporter's pods under the namespace's critical-pods quota"),
        Hint(("kubernetesDRA",), DCGM_DRA_ATTRIBUTION_OFF),
    ),
}
"""Per chart: why the platform sets the keys under each `key` (the longest match wins), and the
stack key that sets them; a key without a hint is explained by the builder that sets it."""
