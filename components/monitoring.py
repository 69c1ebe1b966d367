"""Prometheus and Grafana: kube-prometheus-stack (or GKE's managed Prometheus), Grafana from
the grafana-community chart, our dashboards through Grafana's sidecar, and our GPU alerts.

The chart values are built by pure functions (`prometheus_stack_values`, `grafana_values`,
...) that tests read directly; `Monitoring` only turns them into resources.

Backends (MonitoringConfig.backend):
- kube-prometheus-stack: Prometheus Operator, Prometheus, Alertmanager, node-exporter and
  kube-state-metrics in namespace `monitoring`; it scrapes every ServiceMonitor (the
  operators' own: Kueue, DCGM) and our PodMonitors/PrometheusRules, which carry `SCRAPE_LABELS`.
- gke-managed: Google Cloud Managed Service for Prometheus collects (the cluster has
  managedPrometheus: true); Grafana queries it through Google's query frontend, which runs
  as a Google service account with roles/monitoring.viewer (Workload Identity), and our
  alerts become a GMP `ClusterRules` object and Ray pods are scraped by a
  `ClusterPodMonitoring`.

Long by design: one component with two charts, each chart's values and what the platform needs
of them beside it (its overlay hints); split, a reader would look for one chart's facts in
several files. Its dashboards and alerts are modules of their own (dashboards/, alerts.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.access import GATEWAY_SELECTOR, KUBEFLOW_GATEWAY, USER_HEADER, gateway_only_policy, identities
from components.alerts import rule_spec
from components.dashboards import dashboards
from components.istio import GATEWAY_NAMESPACE
from components.notebook_metrics import notebook_metrics_values
from facts.labels import WORKLOAD_IDENTITY_ANNOTATION
from facts.naming import gmp_service_account_id
from facts.node_labels import ACCELERATOR_LABEL, POOL_LABEL
from facts.versions import GMP_FRONTEND, GRAFANA, KUBE_PROMETHEUS_STACK, image
from infra.cluster import Cluster
from plumbing.base import PlatformComponent, UpstreamArgs, apply_manifest, workload_identity_account
from plumbing.charts import ChartValues, Hint, Relied, built_by, empty, exactly
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.network import SAME_NAMESPACE, namespace_peer, network_policy
from plumbing.overlays import Overlay, hint_of, instead, path_of, shown
from stackmodel.components.dcgm import DCGM_EXPORTER
from stackmodel.components.idle_reclaim import IDLE_RECLAIM
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.monitoring import MONITORING, MetricsBackend, MonitoringConfig
from stackmodel.stack import PlatformConfig

NAMESPACE = "monitoring"
# Helm release names; fullnameOverride pins the object names to them, so the service
# names below do not depend on Helm's name-shortening rules.
PROMETHEUS_RELEASE = "kube-prometheus-stack"
GRAFANA_RELEASE = "grafana"
# The Grafana Service, for `kubectl port-forward` and the Kubeflow menu link (wired by the
# integrator). grafana chart values: service.port 80 -> the container's 3000.
GRAFANA_SERVICE = GRAFANA_RELEASE
GRAFANA_PORT = 80
# Served through the Kubeflow gateway under this path (menu link in the central dashboard).
GRAFANA_PATH = "/grafana/"


# Grafana signs people in with the identity the gateway asserts (its auth proxy, Grafana 13.0
# docs "Configure auth proxy authentication": header_name, header_property = email,
# auto_sign_up, and `headers = Role:<header>` to sync the org role; the same names as in 12),
# and has no login of its own: no login form, no basic auth, no initial admin (the grafana
# chart 12.11.1 creates no admin Secret with GF_SECURITY_DISABLE_INITIAL_ADMIN_CREATION,
# templates/_config.tpl). Only the gateway may reach it (GRAFANA_POLICY, NetworkPolicies), so
# nobody else can assert a name.
ROLE_HEADER = "x-mlplatform-grafana-role"
"""Set by Grafana's route on every request (a client's own value is replaced): Admin for
monitoring.grafanaAdmins, Viewer for everyone else."""
ADMIN_ROLE, DEFAULT_ROLE = "Admin", "Viewer"
GRAFANA_CONTAINER_PORT = 3000
"""grafana chart: the container's port `grafana` (service.targetPort)."""
GRAFANA_POD_LABELS = {"app.kubernetes.io/name": GRAFANA_RELEASE, "app.kubernetes.io/instance": GRAFANA_RELEASE}
"""The grafana chart's selector labels (templates/_helpers.tpl grafana.selectorLabels)."""
GRAFANA_POLICY = "grafana-gateway-only"
EMAIL_CLAIM_HEADER = "@request.auth.claims.email"
"""Istio routes on a verified JWT claim at an ingress gateway (istio.io 1.29 docs, "JWT claim
based routing"): the gateway's Dex token, never a header a client wrote."""


@dataclass(frozen=True)
class MonitoringArgs(UpstreamArgs):
    """Its charts' overlays are in `settings` (values: kube-prometheus-stack, grafanaValues: Grafana)."""

    settings: MonitoringConfig
    project: str | None
    cluster_name: str
    """Names the managed-Prometheus query frontend's Google service account."""
    kubeflow: bool
    """Kubeflow is installed: Grafana is served through its gateway."""
    gpu_metrics: bool
    """GPU metrics are collected (DCGM exporter or GKE's managed DCGM): NVIDIA's dashboard."""
    notebook_metrics: bool = False
    """The idle reclaim runs: kube-state-metrics exports what it did to Notebooks."""


def grafana_route(admins: Sequence[str] = ()) -> dict[str, Any]:
    """The VirtualService that serves Grafana at GRAFANA_PATH through the Kubeflow gateway,
    after the gateway's sign-in; it tells Grafana each person's role in ROLE_HEADER."""

    def http(role: str, match: dict[str, Any]) -> dict[str, Any]:
        return {
            "match": [match],
            "headers": {"request": {"set": {ROLE_HEADER: role}}},
            "route": [{"destination": {"host": f"{GRAFANA_SERVICE}.{NAMESPACE}.svc.cluster.local", "port": {"number": GRAFANA_PORT}}}],
        }

    path = {"uri": {"prefix": GRAFANA_PATH}}
    routes = [http(ADMIN_ROLE, {**path, "headers": {EMAIL_CLAIM_HEADER: {"exact": email}}}) for email in identities(admins)]
    return {
        "apiVersion": "networking.istio.io/v1",
        "kind": "VirtualService",
        "metadata": {"name": GRAFANA_RELEASE, "namespace": NAMESPACE},
        "spec": {"gateways": [KUBEFLOW_GATEWAY], "hosts": ["*"], "http": [*routes, http(DEFAULT_ROLE, path)]},
    }


def grafana_policy() -> dict[str, Any]:
    """Grafana's sidecar admits the gateway alone."""
    return gateway_only_policy(GRAFANA_POLICY, NAMESPACE, GRAFANA_POD_LABELS, GRAFANA_CONTAINER_PORT)


GRAFANA_ROUTE = f"{GRAFANA_RELEASE}-route"


def grafana_gateway_objects(admins: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """(resource name, object) of Grafana's route and its policy: Istio kinds in this
    component's namespace, so they tie it to Istio (plumbing/ties.py)."""
    return [(GRAFANA_ROUTE, grafana_route(admins)), (GRAFANA_POLICY, grafana_policy())]


def network_policies() -> list[dict[str, Any]]:
    """Like Kubeflow's own namespaces (kubeflow/manifests 26.03 common/kubeflow-namespace):
    pods of the namespace reach each other; from outside only the ingress gateway, to Grafana.
    Prometheus scrapes outward, which these do not limit; node-exporter runs on the host
    network, which NetworkPolicies do not cover."""

    gateway = namespace_peer(GATEWAY_NAMESPACE, GATEWAY_SELECTOR)
    return [
        network_policy(f"default-allow-same-namespace-{NAMESPACE}", NAMESPACE, [SAME_NAMESPACE]),
        network_policy("grafana", NAMESPACE, [gateway], GRAFANA_POD_LABELS, [GRAFANA_CONTAINER_PORT]),
    ]
# kube-prometheus-stack names the Prometheus Service <fullname>-prometheus, port 9090
# (templates/prometheus/service.yaml, values prometheus.service.port; its targetPort the pod's 9090).
PROMETHEUS_PORT = 9090
PROMETHEUS_URL = f"http://{PROMETHEUS_RELEASE}-prometheus.{NAMESPACE}.svc:{PROMETHEUS_PORT}"
# Labels every ServiceMonitor, PodMonitor and PrometheusRule of ours carries; the same
# `release: <release>` label kube-prometheus-stack puts on its own monitors, and what our
# Prometheus selects (set explicitly in prometheus_stack_values).
SCRAPE_LABELS = {"release": PROMETHEUS_RELEASE}
# The Grafana sidecar picks up ConfigMaps with this label (grafana chart values
# sidecar.dashboards.label / labelValue).
DASHBOARD_LABEL = {"grafana_dashboard": "1"}
DATASOURCE_NAME = "Prometheus"
# The GMP query frontend (cloud.google.com/stackdriver/docs/managed-prometheus/query).
GMP_FRONTEND_NAME = "gmp-frontend"
GMP_FRONTEND_PORT = 9090
RULE_NAME = "mlplatform-gpu-alerts"
RAY_POD_MONITOR = "ray-pods"


# --- pure functions: args -> chart values and objects -----------------------------------


def prometheus_stack_values(config: MonitoringConfig, notebook_metrics: bool = False) -> dict[str, Any]:
    """kube-prometheus-stack values (prometheus-community/helm-charts charts/kube-prometheus-stack/values.yaml);
    `notebook_metrics`: kube-state-metrics also exports what the idle reclaim did (components/notebook_metrics.py)."""
    selector = {"matchLabels": SCRAPE_LABELS}
    state_metrics: dict[str, Any] = {"metricLabelsAllowlist": [f"nodes=[{POOL_LABEL},{ACCELERATOR_LABEL}]"]}
    if notebook_metrics:
        state_metrics.update(notebook_metrics_values())
    return {
        "fullnameOverride": PROMETHEUS_RELEASE,
        # Grafana comes from the maintained grafana-community chart (grafana_values); the
        # stack's Kubernetes dashboards still ship as sidecar ConfigMaps (grafana_dashboard=1).
        "grafana": {"enabled": False, "forceDeployDashboards": True},
        # helm.v4.Chart drops Helm hooks (pulumi-kubernetes provider/pkg/provider/helm/v4/
        # chart.go: DisableHooks, only the release manifest is applied), so the admission
        # webhook's certificate Jobs, still pre-/post-install hooks in 88.5.3
        # (templates/prometheus-operator/admission-webhooks/job-patch/), would never run;
        # without the webhook the operator skips (and logs) invalid rules itself.
        # prometheusOperator.tls serves that webhook, from the Secret those Jobs make.
        "prometheusOperator": {"admissionWebhooks": {"enabled": False}, "tls": {"enabled": False}},
        # Control-plane components are not scrapeable on GKE (managed) nor on kind (bound to
        # localhost); left on they only raise TargetDown alerts.
        "kubeControllerManager": {"enabled": False},
        "kubeScheduler": {"enabled": False},
        "kubeEtcd": {"enabled": False},
        "prometheus": {
            "prometheusSpec": {
                "retention": config.retention,
                "storageSpec": {
                    "volumeClaimTemplate": {
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": config.storage_size}},
                        }
                    }
                },
                # ServiceMonitors: every one in the cluster. The operators bring their own
                # with only their chart's labels (Kueue: charts/kueue/templates/prometheus/
                # monitor.yaml, enablePrometheus), so a `release` selector would miss them.
                # PodMonitors and rules: ours, which carry SCRAPE_LABELS. {} namespace
                # selectors: every namespace.
                "serviceMonitorSelector": {},
                # Without this the chart replaces the {} above with its own `release` selector
                # (values.yaml prometheus.prometheusSpec.serviceMonitorSelectorNilUsesHelmValues,
                # templates/prometheus/prometheus.yaml): Kueue's monitor would go unscraped.
                "serviceMonitorSelectorNilUsesHelmValues": False,
                "serviceMonitorNamespaceSelector": {},
                "podMonitorSelector": selector,
                "podMonitorNamespaceSelector": {},
                "ruleSelector": selector,
                "ruleNamespaceSelector": {},
            }
        },
        # kube_node_labels carries only allow-listed labels (kube-state-metrics
        # --metric-labels-allowlist); the GPU pool and accelerator labels give per-pool views.
        "kube-state-metrics": state_metrics,
    }


def datasource_url(args: MonitoringArgs) -> str:
    return datasource_url_of(args.settings.backend)


def datasource_url_of(backend: MetricsBackend) -> str:
    """Where Prometheus' HTTP API answers in the cluster: kube-prometheus-stack's, or the GMP
    query frontend in front of managed Prometheus."""
    if backend is MetricsBackend.GKE_MANAGED:
        return f"http://{GMP_FRONTEND_NAME}.{NAMESPACE}.svc:{GMP_FRONTEND_PORT}"
    return PROMETHEUS_URL


def grafana_values(args: MonitoringArgs) -> dict[str, Any]:
    """grafana-community/helm-charts charts/grafana values."""
    values: dict[str, Any] = {
        "fullnameOverride": GRAFANA_RELEASE,
        "service": {"type": "ClusterIP", "port": GRAFANA_PORT},
        # No admin user, so no admin password: the chart then renders no admin Secret.
        "env": {"GF_SECURITY_DISABLE_INITIAL_ADMIN_CREATION": "true"},
        # An Istio sidecar on Grafana alone, so GRAFANA_POLICY can tell the gateway from
        # anyone else (the pod label injects without a namespace label); a native sidecar
        # (Kubernetes 1.29+), so the proxy is up before Grafana and its dashboard sidecar call out.
        "podLabels": {"sidecar.istio.io/inject": "true"},
        "podAnnotations": {"sidecar.istio.io/nativeSidecar": "true"},
        # Dashboards are code: the sidecar loads every ConfigMap labelled grafana_dashboard=1
        # in Grafana's own namespace (searchNamespace unset; ConfigMaps only, not Secrets).
        # Grafana rereads the files itself (skipReload: the sidecar's reload call would need
        # the admin login there is none of).
        "sidecar": {
            "dashboards": {
                "enabled": True,
                "label": "grafana_dashboard",
                "labelValue": "1",
                "resource": "configmap",
                "skipReload": True,
            }
        },
        # The sidecar's read access in Grafana's namespace only: a Role and RoleBinding
        # instead of the chart's default ClusterRole over every namespace's ConfigMaps and
        # Secrets (grafana chart 12.11.1 templates/role.yaml, clusterrole.yaml: rbac.namespaced).
        "rbac": {"namespaced": True},
        "datasources": {
            "datasources.yaml": {
                "apiVersion": 1,
                "datasources": [
                    {
                        "name": DATASOURCE_NAME,
                        "type": "prometheus",
                        "uid": "prometheus",
                        "url": datasource_url(args),
                        "access": "proxy",
                        "isDefault": True,
                    }
                ],
            }
        },
    }
    values["grafana.ini"] = {
        "auth": {"disable_login_form": True, "disable_signout_menu": True},
        "auth.basic": {"enabled": False},
        "auth.anonymous": {"enabled": False},
        "auth.proxy": {
            "enabled": True,
            "header_name": USER_HEADER,
            "header_property": "email",
            "auto_sign_up": True,
            "headers": f"Role:{ROLE_HEADER}",
        },
        "users": {"allow_sign_up": False, "auto_assign_org": True, "auto_assign_org_role": DEFAULT_ROLE},
    }
    if args.kubeflow:
        # Behind the gateway at GRAFANA_PATH (Grafana docs, "Run Grafana behind a reverse proxy").
        values["grafana.ini"]["server"] = {"root_url": f"%(protocol)s://%(domain)s{GRAFANA_PATH}", "serve_from_sub_path": True}
    return values


def dashboard_config_maps(gpu_metrics: bool) -> dict[str, dict[str, str]]:
    """ConfigMap name -> data, one dashboard each (ConfigMaps hold at most 1 MiB); with
    `gpu_metrics` the NVIDIA DCGM dashboard too (components/dashboards/dcgm.py)."""
    return {f"dashboard-{file.removesuffix('.json')}": {file: text} for file, text in dashboards(gpu_metrics).items()}


def ray_pod_monitor_spec() -> dict[str, Any]:
    """Scrape every Ray pod's metrics port, in every namespace. KubeRay labels its pods
    ray.io/is-ray-node=yes and names the port `metrics` (8080); the ray_io_cluster label
    follows KubeRay's config/prometheus/podMonitor.yaml."""
    return {
        "namespaceSelector": {"any": True},
        "selector": {"matchLabels": {"ray.io/is-ray-node": "yes"}},
        "podMetricsEndpoints": [
            {
                "port": "metrics",
                "relabelings": [
                    {"sourceLabels": ["__meta_kubernetes_pod_label_ray_io_cluster"], "targetLabel": "ray_io_cluster"}
                ],
            }
        ],
    }


def gmp_rules_spec(config: MonitoringConfig) -> dict[str, Any]:
    """Our alerts as GMP ClusterRules (monitoring.googleapis.com/v1; cluster-wide, where a
    namespaced Rules would only see its own namespace): the same groups, with the
    evaluation interval GMP requires (prometheus-engine charts/operator/crds
    monitoring.googleapis.com_clusterrules.yaml: groups[].interval is required)."""
    spec = rule_spec(config)
    return {"groups": [{**group, "interval": "60s"} for group in spec["groups"]]}


def ray_cluster_pod_monitoring_spec() -> dict[str, Any]:
    """ray_pod_monitor_spec for managed Prometheus: a ClusterPodMonitoring (every namespace;
    namespace/pod/container target labels by default), the Ray cluster from the pod label
    (prometheus-engine monitoring.googleapis.com_clusterpodmonitorings.yaml: targetLabels.fromPod)."""
    return {
        "selector": {"matchLabels": {"ray.io/is-ray-node": "yes"}},
        "endpoints": [{"port": "metrics", "interval": "30s"}],
        "targetLabels": {"fromPod": [{"from": "ray.io/cluster", "to": "ray_io_cluster"}]},
    }


# --- the component ----------------------------------------------------------------------


class Monitoring(PlatformComponent):
    """What lets teams and operators see GPU use: Prometheus (or GKE's managed Prometheus),
    Grafana, our dashboards and alerts."""

    ready: pulumi.Resource
    """Done when the monitors' kinds are served: kube-prometheus-stack (the Prometheus
    Operator's CRDs); with managed Prometheus GKE serves them and this is the namespace."""
    namespace: pulumi.Output[str]
    """The namespace of Prometheus and Grafana."""
    grafana_service: pulumi.Output[str]
    """`<service>.<namespace>:<port>` of Grafana inside the cluster."""

    def __init__(
        self,
        name: str,
        args: MonitoringArgs,
        cluster: Cluster,
        sidecar_injector: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`sidecar_injector`: what serves Istio's injection webhook, which must see Grafana's
        pods created (Grafana alone has a sidecar, GRAFANA_POLICY needs it). Grafana's route and
        policy through the Kubeflow gateway are not here: they tie this component to Istio
        (grafana_gateway_objects, plumbing/ties.py)."""
        super().__init__(name, cluster, opts, args.sources)
        # Prometheus' volume lives here: never deleted by Pulumi (docs/teams.md, "What is protected").
        ns = self.create_namespace(NAMESPACE, protect=True, retain_on_delete=True)
        in_ns = pulumi.ResourceOptions(parent=self, depends_on=[ns])
        if args.settings.backend is MetricsBackend.KUBE_PROMETHEUS_STACK:
            self.ready = self._prometheus_stack(args, ns, in_ns)
        else:  # the schema allows gke-managed only on GKE
            self._managed_prometheus(args, in_ns)
            self.ready = ns
        self._grafana(args, ns, sidecar_injector)

        self.namespace = ns.metadata.apply(lambda m: m.name or NAMESPACE)
        self.grafana_service = pulumi.Output.from_input(f"{GRAFANA_SERVICE}.{NAMESPACE}:{GRAFANA_PORT}")
        self.register_outputs({"namespace": self.namespace, "grafanaService": self.grafana_service})

    def _prometheus_stack(self, args: MonitoringArgs, ns: pulumi.Resource, opts: pulumi.ResourceOptions) -> pulumi.Resource:
        """kube-prometheus-stack, then our alerts and the Ray PodMonitor (they need its CRDs)."""
        config = args.settings
        values = prometheus_stack_values(config, args.notebook_metrics)
        stack = self.chart(PROMETHEUS_RELEASE, KUBE_PROMETHEUS_STACK, NAMESPACE, values, [ns], overlay=config.values)
        after_crds = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[stack]))
        for obj in prometheus_stack_objects(config):
            apply_manifest(obj["metadata"]["name"], obj, after_crds)
        return stack

    def _managed_prometheus(self, args: MonitoringArgs, opts: pulumi.ResourceOptions) -> None:
        """The query frontend Grafana reads, our alerts and the Ray scrape config. GKE installs
        the monitoring.googleapis.com CRDs with managed Prometheus; both kinds are cluster-scoped."""
        email = self._gmp_frontend_account(args)
        for obj in [*gmp_frontend_objects(args.project or "", email), *managed_prometheus_objects(args.settings)]:
            apply_manifest(obj["metadata"]["name"], obj, opts)

    def _grafana(self, args: MonitoringArgs, ns: k8s.core.v1.Namespace, sidecar_injector: Sequence[pulumi.Resource]) -> None:
        """The namespace's NetworkPolicies, our dashboards for the sidecar, Grafana itself."""
        in_ns = pulumi.ResourceOptions(parent=self, depends_on=[ns])
        for obj in [*network_policies(), *dashboard_objects(args.gpu_metrics)]:
            apply_manifest(obj["metadata"]["name"], obj, in_ns)
        self.chart(GRAFANA_RELEASE, GRAFANA, NAMESPACE, grafana_values(args), [ns, *sidecar_injector], overlay=args.settings.grafana_values)

    def _gmp_frontend_account(self, args: MonitoringArgs) -> pulumi.Output[str]:
        """The Google service account Google's query frontend runs as, with monitoring.viewer
        (Workload Identity); its e-mail. GCP IAM lives here, not in infra/, because only this
        component needs it."""
        project = args.project or ""
        gcp_child = pulumi.ResourceOptions(parent=self)
        account = workload_identity_account(
            GMP_FRONTEND_NAME,
            project,
            gmp_service_account_id(args.cluster_name),
            f"{args.cluster_name}: Grafana reads managed Prometheus",
            (NAMESPACE, GMP_FRONTEND_NAME),
            gcp_child,
        )
        gcp.projects.IAMMember(
            f"{GMP_FRONTEND_NAME}-monitoring-viewer",
            gcp.projects.IAMMemberArgs(
                project=project, role="roles/monitoring.viewer", member=account.email.apply(lambda e: f"serviceAccount:{e}")
            ),
            opts=gcp_child,
        )
        return account.email


# --- the objects of ours, as manifests (plumbing/base.py apply_manifest makes each) -----


def _object(api_version: str, kind: str, name: str, namespace: str | None = NAMESPACE, **fields: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    labels = fields.pop("labels", None)
    if labels:
        metadata["labels"] = dict(labels)
    annotations = fields.pop("annotations", None)
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, **fields}


def prometheus_stack_objects(config: MonitoringConfig) -> list[dict[str, Any]]:
    """Our alerts and the Ray PodMonitor, for kube-prometheus-stack's Prometheus (SCRAPE_LABELS)."""
    return [
        _object("monitoring.coreos.com/v1", "PrometheusRule", RULE_NAME, labels=SCRAPE_LABELS, spec=rule_spec(config)),
        _object("monitoring.coreos.com/v1", "PodMonitor", RAY_POD_MONITOR, labels=SCRAPE_LABELS, spec=ray_pod_monitor_spec()),
    ]


def managed_prometheus_objects(config: MonitoringConfig) -> list[dict[str, Any]]:
    """Our alerts and the Ray scrape config for GKE's managed Prometheus (cluster-scoped kinds)."""
    return [
        _object("monitoring.googleapis.com/v1", "ClusterRules", RULE_NAME, None, spec=gmp_rules_spec(config)),
        _object("monitoring.googleapis.com/v1", "ClusterPodMonitoring", RAY_POD_MONITOR, None, spec=ray_cluster_pod_monitoring_spec()),
    ]


def dashboard_objects(gpu_metrics: bool) -> list[dict[str, Any]]:
    """Our dashboards as ConfigMaps the Grafana sidecar loads (DASHBOARD_LABEL)."""
    return [_object("v1", "ConfigMap", name, labels=DASHBOARD_LABEL, data=data) for name, data in dashboard_config_maps(gpu_metrics).items()]


GMP_FRONTEND_LABELS = {"app.kubernetes.io/name": GMP_FRONTEND_NAME}


def gmp_frontend_objects(project: str, google_account: pulumi.Input[str]) -> list[dict[str, Any]]:
    """Google's query frontend for `project`, so Grafana's Prometheus datasource reads managed
    Prometheus (args, port and probes as in the GMP docs' example), running as the Kubernetes
    service account that acts as `google_account` (Workload Identity)."""
    labels = GMP_FRONTEND_LABELS
    account = _object("v1", "ServiceAccount", GMP_FRONTEND_NAME, labels=labels, annotations={WORKLOAD_IDENTITY_ANNOTATION: google_account})
    deployment = _object("apps/v1", "Deployment", GMP_FRONTEND_NAME, labels=labels, spec=gmp_frontend_spec(project))
    service = _object(
        "v1",
        "Service",
        GMP_FRONTEND_NAME,
        labels=labels,
        spec={"selector": dict(labels), "ports": [{"name": "web", "port": GMP_FRONTEND_PORT, "targetPort": "web"}]},
    )
    return [account, deployment, service]


def gmp_frontend_spec(project: str) -> dict[str, Any]:
    """The query frontend's Deployment spec."""
    labels = GMP_FRONTEND_LABELS
    return {
        "replicas": 2,
        "selector": {"matchLabels": dict(labels)},
        "template": {
            "metadata": {"labels": dict(labels)},
            "spec": {
                "serviceAccountName": GMP_FRONTEND_NAME,
                "containers": [
                    {
                        "name": "frontend",
                        "image": image(GMP_FRONTEND),
                        "args": [f"--web.listen-address=:{GMP_FRONTEND_PORT}", f"--query.project-id={project}"],
                        "ports": [{"name": "web", "containerPort": GMP_FRONTEND_PORT}],
                        "readinessProbe": {"httpGet": {"path": "/-/ready", "port": "web"}},
                        "livenessProbe": {"httpGet": {"path": "/-/healthy", "port": "web"}},
                        "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True, "runAsUser": 1000},
                    }
                ],
            },
        },
    }


def monitoring_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> MonitoringArgs:
    return MonitoringArgs(
        sources=config.sources,
        settings=config.components[MONITORING],
        project=config.project,
        cluster_name=config.cluster.name,
        kubeflow=config.components[KUBEFLOW].enabled,
        gpu_metrics=config.enabled(DCGM_EXPORTER),
        notebook_metrics=config.enabled(IDLE_RECLAIM),
    )


# What the platform needs of the chart's values beyond what it sets (plumbing/charts.py): the
# keys it relies on, each read in the chart at its pinned version, and why it sets the keys it sets.
GRAFANA_SIGN_IN = (
    "Grafana signs people in only with the identity the Kubeflow gateway asserts after its sign-in, in a header the gateway "
    "replaces on every request; any other way in (anonymous access, a header a client can send itself, a login form or basic "
    "auth) lets in whoever reaches it"
)
HELM_HOOKS = "helm.v4.Chart never runs Helm hooks, and this part of the chart depends on them"

PROMETHEUS_STACK_RELIED = (
    Relied(("crds", "enabled"), exactly(True), "crds.enabled true, the chart's default", "Chart.yaml dependency crds (condition crds.enabled)",
           "the platform's alerts, monitors and the operators' ServiceMonitors are of the Prometheus Operator's kinds"),
    Relied(("prometheusOperator", "enabled"), exactly(True), "prometheusOperator.enabled true, the chart's default",
           "templates/prometheus-operator/deployment.yaml", "the operator turns the platform's monitors and alerts into Prometheus' configuration"),
    Relied(("prometheus", "enabled"), exactly(True), "prometheus.enabled true, the chart's default", "templates/prometheus/prometheus.yaml",
           "Grafana's data source, the dashboards and the alerts read this Prometheus", f"{MONITORING.path}.backend"),
    Relied(("prometheus", "agentMode"), exactly(False), "prometheus.agentMode false, the chart's default", "templates/prometheus/prometheus.yaml",
           "an agent answers no queries, and Grafana's data source queries this Prometheus"),
    Relied(("prometheus", "service", "enabled"), exactly(True), "prometheus.service.enabled true, the chart's default",
           "templates/prometheus/service.yaml", "Grafana's data source calls Prometheus through this Service"),
    Relied(("prometheus", "service", "port"), exactly(9090), "port 9090, the chart's default", "templates/prometheus/service.yaml",
           "Grafana's data source calls Prometheus on port 9090 (components/monitoring.py PROMETHEUS_URL)"),
    Relied(("namespaceOverride",), empty, "namespaceOverride empty (the release's namespace, monitoring)", "templates/_helpers.tpl kube-prometheus-stack.namespace",
           "Grafana's data source names Prometheus' Service in namespace monitoring, whose volume the platform protects"),
    Relied(("prometheusOperator", "namespaces"), empty, "prometheusOperator.namespaces {}, the chart's default",
           "values.yaml, templates/prometheus-operator/deployment.yaml (--namespaces)",
           "the monitors the operator must read live in other namespaces (kueue-system, dcgm-exporter)"),
    Relied(("prometheusOperator", "denyNamespaces"), empty, "prometheusOperator.denyNamespaces [], the chart's default",
           "values.yaml, templates/prometheus-operator/deployment.yaml (--deny-namespaces)",
           "the monitors the operator must read live in other namespaces (kueue-system, dcgm-exporter)"),
    Relied(("kubeStateMetrics", "enabled"), exactly(True), "kubeStateMetrics.enabled true, the chart's default",
           "Chart.yaml dependency kube-state-metrics (condition kubeStateMetrics.enabled)",
           "the GPU dashboards read kube_node_labels and kube_pod_container_resource_requests (components/dashboards)"),
)
PROMETHEUS_STACK_HINTS = (
    Hint(("prometheus", "prometheusSpec", "retention"), "how long Prometheus keeps data is the stack's to say", f"{MONITORING.path}.retention"),
    Hint(("prometheus", "prometheusSpec", "storageSpec"), "Prometheus keeps its data on a volume of the stack's size, which the "
         "platform protects", f"{MONITORING.path}.storageSize"),
    Hint(("prometheus", "prometheusSpec"), "Prometheus must select every ServiceMonitor, and the platform's PodMonitors and rules"),
    Hint(("grafana",), "Grafana is installed once, from its own chart", f"{MONITORING.path}.grafanaValues"),
    Hint(("prometheusOperator",), f"the admission webhook's certificate: {HELM_HOOKS}"),
    Hint(("fullnameOverride",), "it names the Prometheus Service Grafana's data source calls"),
    Hint(("kubeControllerManager",), "not scrapeable on GKE or kind: it would only raise TargetDown alerts"),
    Hint(("kubeScheduler",), "not scrapeable on GKE or kind: it would only raise TargetDown alerts"),
    Hint(("kubeEtcd",), "not scrapeable on GKE or kind: it would only raise TargetDown alerts"),
    Hint(("kube-state-metrics", "metricLabelsAllowlist"), "the per-pool views need the pool and accelerator node labels"),
)
GRAFANA_RELIED = (
    Relied(("namespaceOverride",), empty, "namespaceOverride empty (the release's namespace, monitoring)", "templates/_helpers.tpl grafana.namespace",
           "Grafana's route through the gateway and its NetworkPolicies are in namespace monitoring"),
    Relied(("nameOverride",), empty, "nameOverride empty, the chart's default", "templates/_helpers.tpl grafana.selectorLabels",
           "Grafana's NetworkPolicy and sidecar policy select its pods by app.kubernetes.io/name grafana (components/monitoring.py)"),
)
GRAFANA_HINTS = (
    Hint(("grafana.ini", "auth"), GRAFANA_SIGN_IN),
    Hint(("grafana.ini", "auth.basic"), GRAFANA_SIGN_IN),
    Hint(("grafana.ini", "auth.anonymous"), GRAFANA_SIGN_IN),
    Hint(("grafana.ini", "auth.proxy"), GRAFANA_SIGN_IN),
    Hint(("grafana.ini", "auth.proxy", "headers"), "the gateway tells Grafana each person's role in this header", f"{MONITORING.path}.grafanaAdmins"),
    Hint(("grafana.ini", "users"), "who signs in is a Viewer, or an Admin when named", f"{MONITORING.path}.grafanaAdmins"),
    Hint(("grafana.ini", "server"), "Grafana is served through the Kubeflow gateway at /grafana/"),
    Hint(("env", "GF_SECURITY_DISABLE_INITIAL_ADMIN_CREATION"), "Grafana has no shared admin login (no admin password anywhere)"),
    Hint(("datasources",), "Grafana reads the Prometheus of the stack's monitoring backend", f"{MONITORING.path}.backend"),
    Hint(("service",), "the gateway's route and the Kubeflow menu call Grafana's ClusterIP Service on port 80"),
    Hint(("podLabels",), "Grafana's Istio sidecar lets its policy tell the gateway from anyone else"),
    Hint(("podAnnotations",), "Grafana's Istio sidecar lets its policy tell the gateway from anyone else"),
    Hint(("rbac", "namespaced"), "the dashboard sidecar reads ConfigMaps of Grafana's namespace only, not every namespace's Secrets"),
    Hint(("sidecar", "dashboards"), "the platform's dashboards are ConfigMaps labelled grafana_dashboard=1 in Grafana's namespace"),
    Hint(("fullnameOverride",), "it names the Service the gateway's route calls"),
)


def ini_variable(section: str, key: str) -> str:
    """The environment variable Grafana reads over grafana.ini's `[section] key` (Grafana 13
    docs, setup-grafana/configure-grafana "Override configuration with environment variables":
    GF_<SectionName>_<KeyName>, upper case, dots and dashes as underscores)."""
    return re.sub(r"[.-]", "_", f"GF_{section}_{key}").upper()


def grafana_environment(overlay: Overlay) -> Iterator[tuple[str, str]]:
    """Grafana: an environment variable of the overlay (`env`, `envValueFrom`: the container's
    env, grafana chart 12.11.1 templates/_pod.tpl) that overrides a grafana.ini key the platform sets."""
    ini = overlay.platform.get("grafana.ini")
    if not isinstance(ini, Mapping):
        return
    variables = {
        ini_variable(section, key): (section, key, value)
        for section, keys in ini.items()
        if isinstance(keys, Mapping)
        for key, value in keys.items()
    }
    for name in ("env", "envValueFrom"):
        given = overlay.values.get(name)
        for variable in given if isinstance(given, Mapping) else ():
            if str(variable).upper() in variables and variable not in (overlay.platform.get(name) or {}):
                section, key, value = variables[str(variable).upper()]
                hint = hint_of(overlay, ("grafana.ini", section, key))
                yield (
                    path_of(overlay, (name, str(variable))),
                    f"Grafana reads {variable} over grafana.ini's [{section}] {key}, which the platform sets to "
                    f"{shown(value)} ({overlay.builder}): {hint.why}; {instead(hint.stack_key)}",
                )


INSTALLATION = Installation(MONITORING, monitoring_args, lambda args, cluster, ready: Monitoring("monitoring", args, cluster, ready.resources(MONITORING.needs, "Grafana")), charts=(
    ChartValues("values", KUBE_PROMETHEUS_STACK, lambda args: prometheus_stack_values(args.settings, args.notebook_metrics), lambda args: args.settings.values,
                built_by(prometheus_stack_values), installed=lambda args: args.settings.backend is MetricsBackend.KUBE_PROMETHEUS_STACK,
                relied=PROMETHEUS_STACK_RELIED, hints=PROMETHEUS_STACK_HINTS),
    ChartValues("grafanaValues", GRAFANA, grafana_values, lambda args: args.settings.grafana_values, built_by(grafana_values),
                relied=GRAFANA_RELIED, hints=GRAFANA_HINTS, checks=(grafana_environment,)),
))
