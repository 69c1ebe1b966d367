"""Monitoring and the DCGM exporter, planned under mocks: chart inputs, our own objects,
and the contracts between them (scrape labels, sidecar label, admin secret); and what the
monitoring charts render with those inputs (the full render from the mirror)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

from components import dcgm, kueue, monitoring
from components.dashboards import DCGM as DCGM_DASHBOARD_FILE
from components.dashboards import dashboards
from components.dcgm import dcgm_exporter_args
from facts.dra import DCGM_DRA_ATTRIBUTION_READ_AT, DCGM_DRA_RESOURCE_SLICES
from facts.versions import DCGM_EXPORTER, GRAFANA, KUBE_PROMETHEUS_STACK
from stackmodel.components.monitoring import MonitoringConfig
from stackmodel.config import validate as validate_config
from stackmodel.secrets import GRAFANA_ADMIN_PASSWORD, required_secrets
from tests.conftest import base_gke, base_kind, with_changes
from tests.support import crds, mirror, renders
from tests.support.validation import CHART_CRD_KINDS, GKE_PROVIDED_KINDS, validate
from tooling.check import selects
from tooling.plan import Plan, evaluate
from tooling.render import HELM_CHART, authored_objects

needs_crds = pytest.mark.skipif(not crds.available(), reason=crds.MISSING)

MONITORING = "mlplatform:components:Monitoring"
DCGM = "mlplatform:components:DcgmExporter"
PROMETHEUS_RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
POD_MONITOR = "kubernetes:monitoring.coreos.com/v1:PodMonitor"
C = "mlplatform:components"


def on(**monitoring_fields: Any) -> dict[str, Any]:
    """The small GKE stack with monitoring and the DCGM exporter on."""
    return with_changes(
        base_gke(), {f"{C}.monitoring": {"enabled": True, **monitoring_fields}, f"{C}.dcgmExporter": {}}
    )


@cache
def planned(stack: str) -> Plan:
    """Plans of the two stacks most tests read, evaluated once."""
    return evaluate(validate_config(on() if stack == "on" else managed(), "test"), "test")


def chart(plan: Plan, name: str) -> dict[str, Any]:
    return plan.one(HELM_CHART, name).inputs


def _config(**fields: Any) -> MonitoringConfig:
    return MonitoringConfig.model_validate(fields)


# --- shipped stacks ----------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod", "kind"])
def test_every_shipped_stack_has_monitoring(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan(stack)
    assert plan.one(MONITORING, "monitoring")
    assert chart(plan, "kube-prometheus-stack")["version"] == KUBE_PROMETHEUS_STACK.version
    assert chart(plan, "grafana")["repositoryOpts"] == {"repo": GRAFANA.location}


def test_kind_has_monitoring_but_no_dcgm(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    assert plan.of_type(DCGM) == []
    assert not [r for r in plan.of_type(HELM_CHART) if r.inputs["chart"] == "dcgm-exporter"]
    maps = {r.name for r in plan.of_type("kubernetes:core/v1:ConfigMap")}
    assert "dashboard-gpus-by-team" in maps and "dashboard-dcgm" not in maps, "no NVIDIA dashboard without GPUs"
    values = chart(plan, "grafana")["values"]
    assert values["sidecar"]["dashboards"]["enabled"] is True


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_gke_stacks_have_the_dcgm_exporter_and_its_monitor_after_monitoring(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan(stack)
    exporter = plan.one(HELM_CHART, "dcgm-exporter")
    assert exporter.inputs["version"] == DCGM_EXPORTER.version
    assert exporter.inputs["repositoryOpts"] == {"repo": DCGM_EXPORTER.location}
    monitor = plan.one("kubernetes:monitoring.coreos.com/v1:ServiceMonitor", dcgm.RELEASE)
    assert plan.one(HELM_CHART, "kube-prometheus-stack").urn in monitor.dependencies, "ServiceMonitor CRD first"
    assert exporter.urn in monitor.dependencies


def test_prod_retention_and_storage_from_the_stack_file(shipped_plan: Callable[[str], Plan]) -> None:
    spec = chart(shipped_plan("prod"), "kube-prometheus-stack")["values"]["prometheus"]["prometheusSpec"]
    assert spec["retention"] == "30d"
    assert spec["storageSpec"]["volumeClaimTemplate"]["spec"]["resources"]["requests"]["storage"] == "200Gi"


@pytest.mark.parametrize("stack", ["dev", "prod", "kind"])
def test_components_parent_their_children_and_use_the_cluster_provider(
    stack: str, shipped_plan: Callable[[str], Plan]
) -> None:
    plan = shipped_plan(stack)
    provider = plan.one("pulumi:providers:kubernetes", "k8s").urn
    for component in plan.of_type(MONITORING) + plan.of_type(DCGM):
        children = plan.children(component)
        assert children
        for child in children:
            if child.type.startswith("kubernetes:"):
                assert child.provider_urn == provider, child.name


@needs_crds
@pytest.mark.parametrize("stack", ["dev", "prod", "kind"])
def test_every_object_we_author_validates(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    objects = authored_objects(shipped_plan(stack))
    kinds = {o["kind"] for o in objects}
    assert {"Namespace", "ConfigMap", "NetworkPolicy", "AuthorizationPolicy", "PrometheusRule", "PodMonitor"} <= kinds
    for obj in objects:
        if (obj["apiVersion"], obj["kind"]) in GKE_PROVIDED_KINDS | CHART_CRD_KINDS:
            continue  # GKE serves these CRDs; tests/test_components.py checks their shape
        assert validate(obj) == [], f"{obj['kind']} {obj['metadata']['name']}"


# --- kube-prometheus-stack and Grafana ---------------------------------------------------


def test_retention_and_storage_come_from_config() -> None:
    values = monitoring.prometheus_stack_values(_config(retention="7d", storageSize="20Gi"))
    spec = values["prometheus"]["prometheusSpec"]
    assert spec["retention"] == "7d"
    assert spec["storageSpec"]["volumeClaimTemplate"]["spec"]["resources"]["requests"]["storage"] == "20Gi"



def test_grafana_comes_from_the_grafana_community_chart_not_the_stack() -> None:
    values = monitoring.prometheus_stack_values(_config())
    assert values["grafana"]["enabled"] is False
    assert values["grafana"]["forceDeployDashboards"] is True, "the stack's own dashboards, for our Grafana"
    assert GRAFANA.location == "https://grafana-community.github.io/helm-charts"


def test_prometheus_selects_our_monitors_and_rules_in_every_namespace() -> None:
    spec = monitoring.prometheus_stack_values(_config())["prometheus"]["prometheusSpec"]
    for kind in ("serviceMonitor", "podMonitor", "rule"):
        assert selects(spec[f"{kind}Selector"], monitoring.SCRAPE_LABELS), kind
        assert spec[f"{kind}NamespaceSelector"] == {}, f"{kind}: every namespace"


def test_grafana_has_no_admin_login_and_trusts_only_the_gateways_identity() -> None:
    plan = planned("on")
    values = chart(plan, "grafana")["values"]
    assert "admin" not in values and values["env"] == {"GF_SECURITY_DISABLE_INITIAL_ADMIN_CREATION": "true"}
    ini = values["grafana.ini"]
    assert ini["auth"]["disable_login_form"] is True and ini["auth.basic"] == {"enabled": False}
    assert ini["auth.proxy"] == {
        "enabled": True,
        "header_name": "kubeflow-userid",
        "header_property": "email",
        "auto_sign_up": True,
        "headers": f"Role:{monitoring.ROLE_HEADER}",
    }
    assert ini["users"]["auto_assign_org_role"] == "Viewer"
    assert not [r for r in plan.of_type("kubernetes:core/v1:Secret") if r.inputs["metadata"].get("namespace") == monitoring.NAMESPACE]
    assert GRAFANA_ADMIN_PASSWORD not in required_secrets(validate_config(on(), "test"))
    assert values["podLabels"] == {"sidecar.istio.io/inject": "true"}, "a sidecar, so only the gateway's principal passes"


def test_grafana_route_sets_the_role_from_the_verified_token() -> None:
    route = monitoring.grafana_route(["Lead@acme.com"])
    admin, *other, default = route["spec"]["http"]
    assert [m["headers"] for m in admin["match"]] == [{"@request.auth.claims.email": {"exact": "Lead@acme.com"}}]
    assert other[0]["match"][0]["headers"] == {"@request.auth.claims.email": {"exact": "lead@acme.com"}}
    assert admin["headers"] == {"request": {"set": {monitoring.ROLE_HEADER: "Admin"}}}
    assert default["match"] == [{"uri": {"prefix": monitoring.GRAFANA_PATH}}]
    assert default["headers"] == {"request": {"set": {monitoring.ROLE_HEADER: "Viewer"}}}, "a client's own role header is replaced"


def test_grafana_service_constant_matches_the_chart_values() -> None:
    values = chart(planned("on"), "grafana")["values"]
    assert values["fullnameOverride"] == monitoring.GRAFANA_SERVICE
    assert values["service"]["port"] == monitoring.GRAFANA_PORT
    datasource = values["datasources"]["datasources.yaml"]["datasources"][0]
    assert datasource["url"] == monitoring.PROMETHEUS_URL
    assert monitoring.PROMETHEUS_URL.startswith(f"http://{KUBE_PROMETHEUS_STACK.name}-prometheus.monitoring.svc:")


def test_dashboards_are_config_maps_the_sidecar_loads() -> None:
    plan = planned("on")
    sidecar = chart(plan, "grafana")["values"]["sidecar"]["dashboards"]
    maps = [r for r in plan.of_type("kubernetes:core/v1:ConfigMap") if r.name.startswith("dashboard-")]
    provisioned: dict[str, str] = {}
    for cm in maps:
        assert cm.inputs["metadata"]["labels"] == {sidecar["label"]: sidecar["labelValue"]}
        assert cm.inputs["metadata"]["namespace"] == monitoring.NAMESPACE
        provisioned.update(cm.inputs["data"])
    assert provisioned == dashboards()


def test_the_nvidia_dashboard_ships_with_the_platform_and_nothing_is_downloaded() -> None:
    """Grafana fetches nothing at start: no grafana.com dashboard (the chart's gnetId/url
    `dashboards` values render a curl init container), the DCGM dashboard is one of our ConfigMaps."""
    plan = planned("on")
    values = chart(plan, "grafana")["values"]
    assert "dashboards" not in values and "dashboardProviders" not in values
    maps = {r.name: r.inputs["data"] for r in plan.of_type("kubernetes:core/v1:ConfigMap")}
    assert maps["dashboard-dcgm"] == {DCGM_DASHBOARD_FILE: dashboards()[DCGM_DASHBOARD_FILE]}
    assert all("grafana.com" not in text for text in dashboards().values())


def test_alerts_are_a_prometheus_rule_our_prometheus_selects(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    plan = plan_of(on(idleGpuThreshold=20, idleGpuMinutes=60))
    rule = plan.one(PROMETHEUS_RULE, monitoring.RULE_NAME)
    spec = chart(plan, "kube-prometheus-stack")["values"]["prometheus"]["prometheusSpec"]
    assert selects(spec["ruleSelector"], rule.inputs["metadata"]["labels"])
    idle = next(r for r in rule.inputs["spec"]["groups"][0]["rules"] if r["alert"] == "GpuAllocatedButIdle")
    assert idle["expr"].endswith("< 20") and idle["for"] == "60m"
    assert plan.one(HELM_CHART, "kube-prometheus-stack").urn in rule.dependencies, "CRDs first"


def test_ray_pods_are_scraped() -> None:
    plan = planned("on")
    pod_monitor = plan.one(POD_MONITOR, monitoring.RAY_POD_MONITOR)
    spec = chart(plan, "kube-prometheus-stack")["values"]["prometheus"]["prometheusSpec"]
    assert selects(spec["podMonitorSelector"], pod_monitor.inputs["metadata"]["labels"])
    assert pod_monitor.inputs["spec"]["namespaceSelector"] == {"any": True}


def test_kube_state_metrics_exposes_the_pool_label() -> None:
    values = monitoring.prometheus_stack_values(_config())
    allow = values["kube-state-metrics"]["metricLabelsAllowlist"]
    assert any("mlplatform.dev/gpu-pool" in entry and entry.startswith("nodes=") for entry in allow)


def test_monitoring_off_installs_nothing_and_dcgm_has_no_service_monitor(
    plan_of: Callable[[dict[str, Any]], Plan],
) -> None:
    plan = plan_of(with_changes(base_gke(), {f"{C}.dcgmExporter": {}}))
    assert plan.of_type(MONITORING) == []
    exporter = plan.one(HELM_CHART, "dcgm-exporter")
    assert exporter.inputs["values"]["serviceMonitor"]["enabled"] is False


# --- GKE managed Prometheus ---------------------------------------------------------------


def managed() -> dict[str, Any]:
    return with_changes(
        base_gke(),
        {
            "mlplatform:cluster.managedPrometheus": True,
            f"{C}.monitoring": {"enabled": True, "backend": "gke-managed"},
            f"{C}.dcgmExporter": {"source": "gke-managed"},
        },
    )


def test_managed_backend_installs_grafana_on_the_gmp_frontend() -> None:
    plan = planned("managed")
    charts = {r.name for r in plan.of_type(HELM_CHART)}
    assert "grafana" in charts
    assert not charts & {"kube-prometheus-stack", "dcgm-exporter"}, "GKE runs both"
    assert plan.of_type(DCGM) == []
    datasource = chart(plan, "grafana")["values"]["datasources"]["datasources.yaml"]["datasources"][0]
    service = plan.one("kubernetes:core/v1:Service", monitoring.GMP_FRONTEND_NAME).inputs
    assert datasource["url"] == f"http://{service['metadata']['name']}.monitoring.svc:{int(service['spec']['ports'][0]['port'])}"
    deployment = plan.one("kubernetes:apps/v1:Deployment", monitoring.GMP_FRONTEND_NAME).inputs
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert "--query.project-id=acme-test" in container["args"]
    account = plan.one("kubernetes:core/v1:ServiceAccount", monitoring.GMP_FRONTEND_NAME).inputs
    email = plan.one("gcp:serviceaccount/account:Account", monitoring.GMP_FRONTEND_NAME)
    assert account["metadata"]["annotations"]["iam.gke.io/gcp-service-account"].endswith(".iam.gserviceaccount.com")
    assert email.inputs["accountId"] == "ml-test-gmp-query"
    viewer = plan.one("gcp:projects/iAMMember:IAMMember", f"{monitoring.GMP_FRONTEND_NAME}-monitoring-viewer").inputs
    assert viewer["role"] == "roles/monitoring.viewer"
    binding = plan.one("gcp:serviceaccount/iAMMember:IAMMember", f"{monitoring.GMP_FRONTEND_NAME}-workload-identity")
    assert binding.inputs["member"] == "serviceAccount:acme-test.svc.id.goog[monitoring/gmp-frontend]"


def test_managed_backend_alerts_are_gmp_cluster_rules() -> None:
    plan = planned("managed")
    assert plan.of_type(PROMETHEUS_RULE) == []
    rules = plan.one("kubernetes:monitoring.googleapis.com/v1:ClusterRules", monitoring.RULE_NAME).inputs
    assert "namespace" not in rules["metadata"], "cluster-wide: a namespaced Rules sees one namespace"
    group = rules["spec"]["groups"][0]
    assert set(group) == {"name", "interval", "rules"} and group["interval"] == "60s"
    assert {r["alert"] for r in group["rules"]} == {
        "GpuAllocatedButIdle",
        "GpuXidError",
        "GpuTemperatureHigh",
        "KueueWorkloadsPendingTooLong",
    }


def test_managed_backend_scrapes_ray_pods_in_every_namespace() -> None:
    plan = planned("managed")
    assert plan.of_type(POD_MONITOR) == []
    monitor = plan.one("kubernetes:monitoring.googleapis.com/v1:ClusterPodMonitoring", monitoring.RAY_POD_MONITOR).inputs
    assert "namespace" not in monitor["metadata"]
    assert monitor["spec"]["selector"] == {"matchLabels": {"ray.io/is-ray-node": "yes"}}  # KubeRay's label on its pods
    assert monitor["spec"]["targetLabels"]["fromPod"] == [{"from": "ray.io/cluster", "to": "ray_io_cluster"}]


@needs_crds
def test_managed_backend_built_in_objects_validate() -> None:
    for obj in authored_objects(planned("managed")):
        if obj["apiVersion"] == "monitoring.googleapis.com/v1":
            continue  # GMP's CRDs are not among the pinned upstream CRDs (shapes checked above)
        if obj["kind"] == "Secret":
            obj = {**obj, "stringData": {}}
        assert validate(obj) == [], f"{obj['kind']} {obj['metadata']['name']}"


def test_kind_stack_with_monitoring_on_plans(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    plan = plan_of(with_changes(base_kind(), {f"{C}.monitoring": {"enabled": True}}))
    assert plan.one(MONITORING, "monitoring")
    assert plan.of_type(DCGM) == []


# --- the DCGM exporter --------------------------------------------------------------------


def dcgm_values(plan: Plan) -> dict[str, Any]:
    return chart(plan, "dcgm-exporter")["values"]


def _recorded_values() -> tuple[dict[str, Any], dict[str, Any]]:
    plan = planned("on")
    return dcgm_values(plan), chart(plan, "kube-prometheus-stack")["values"]


SERVICE_MONITOR = "kubernetes:monitoring.coreos.com/v1:ServiceMonitor"


def _our_monitor(name: str) -> dict[str, Any]:
    return dict(planned("on").one(SERVICE_MONITOR, name).inputs)


def test_dcgm_service_monitor_labels_match_the_prometheus_selector() -> None:
    values, stack = _recorded_values()
    assert values["serviceMonitor"] == {"enabled": False}, "ours, tied to both components, not the chart's"
    monitor = _our_monitor(dcgm.RELEASE)
    spec = stack["prometheus"]["prometheusSpec"]
    assert selects(spec["serviceMonitorSelector"], monitor["metadata"]["labels"])
    assert spec["serviceMonitorNamespaceSelector"] == {}, "the exporter's namespace is selected too"


def test_dcgm_runs_on_gke_gpu_nodes_with_the_google_driver() -> None:
    values, _ = _recorded_values()
    assert values["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
    ]
    terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    # GKE labels every GPU node with its accelerator (cloud.google.com/kubernetes-engine/docs/how-to/gpus).
    assert terms == [{"matchExpressions": [{"key": "cloud.google.com/gke-accelerator", "operator": "Exists"}]}]
    volumes = {v["name"]: v["hostPath"] for v in values["extraHostVolumes"]}
    mounts = {m["name"]: m["mountPath"] for m in values["extraVolumeMounts"]}
    nvidia = next(name for name, path in volumes.items() if path == "/home/kubernetes/bin/nvidia")
    assert mounts[nvidia] == "/usr/local/nvidia"
    env = {e["name"]: e["value"] for e in values["extraEnv"]}
    assert env["LD_LIBRARY_PATH"] == "/usr/local/nvidia/lib64"
    assert "DCGM_EXPORTER_KUBERNETES" not in env, "pod attribution stays on (the chart sets it true)"


def test_dcgm_keeps_the_chart_metrics_list_mounted() -> None:
    values, _ = _recorded_values()
    assert dcgm.METRICS_VOLUME_MOUNT in values["extraVolumeMounts"]


def test_dcgm_attributes_metrics_to_pods_and_nodes() -> None:
    values, _ = _recorded_values()
    assert values["kubeletPath"] == "/var/lib/kubelet/pod-resources"
    (monitor,) = _our_monitor(dcgm.RELEASE)["spec"]["endpoints"]
    # honorLabels false: the workload's labels arrive as exported_namespace/exported_pod,
    # which the dashboards and alerts group by.
    assert monitor["honorLabels"] is False
    assert {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node"} in monitor["relabelings"]


def test_dcgm_leaves_dra_attribution_off_until_the_exporter_reads_resource_v1() -> None:
    """Chart 4.8.2's kubernetesDRA.enabled sets KUBERNETES_ENABLE_DRA (templates/daemonset.yaml:159);
    the exporter of that tag then lists resource.k8s.io/v1beta1 ResourceSlices and waits for them
    before it serves (internal/pkg/transformation/dra.go:43, kubernetes.go:142), an API a GKE 1.34+
    cluster does not serve (the envtest API server v1.36.2 serves resource.k8s.io/v1 only), and
    matches DRA GPUs by UUID, these values pods by device name: so off, on a stack with DRA pools
    too. A bump of the exporter fails here until its DRA attribution is read again."""
    raw = with_changes(base_gke(), {"mlplatform:cluster.gpuPools.0.gpuAllocation": "dra", "mlplatform:cluster.autoprovisioning": {"enabled": False}, f"{C}.dcgmExporter": {}})
    args = dcgm_exporter_args(validate_config(raw, "dra"))
    assert args is not None and any(pool.dra for pool in args.gpu_pools)
    values = dcgm.dcgm_exporter_values(args)
    assert values["kubernetesDRA"] == {"enabled": False}
    assert {"name": "DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE", "value": "device-name"} in values["extraEnv"]
    assert (DCGM_EXPORTER.version, DCGM_DRA_RESOURCE_SLICES) == (DCGM_DRA_ATTRIBUTION_READ_AT, "resource.k8s.io/v1beta1"), (
        "the DCGM exporter moved: read its internal/pkg/transformation/dra.go and kubernetes.go at the new tag (which "
        "ResourceSlice API, which GPU id the DRA mapping is keyed by) and update facts/dra.py and components/dcgm.py"
    )


@needs_crds
@pytest.mark.parametrize("name", [dcgm.RELEASE, kueue.SERVICE_MONITOR])
def test_our_service_monitors_validate(name: str) -> None:
    assert validate(_our_monitor(name)) == []


def test_the_exporter_and_kueue_install_without_waiting_for_monitoring() -> None:
    """Their ServiceMonitors are Ties: each waits for its component and Monitoring's CRDs,
    and nothing waits for it; the charts themselves wait for their namespaces only."""
    plan = planned("on")
    prometheus = plan.one(HELM_CHART, "kube-prometheus-stack").urn
    for install, monitor in (("dcgm-exporter", dcgm.RELEASE), ("kueue", kueue.SERVICE_MONITOR)):
        chart_ = plan.one(HELM_CHART, install)
        assert prometheus not in plan.waits_for(chart_), install
        ours = plan.one(SERVICE_MONITOR, monitor)
        assert {prometheus, chart_.urn} <= set(ours.dependencies), monitor
        assert ours.parent is not None and "mlplatform:components:Tie" in ours.parent
        assert not [r for r in plan.resources if ours.urn in r.dependencies], "nothing waits for a tie"


def test_the_moved_monitors_keep_their_live_objects() -> None:
    """Until now the charts rendered them: each alias is the URN of the chart's child."""
    plan = planned("on")
    assert plan.one(SERVICE_MONITOR, kueue.SERVICE_MONITOR).aliases == (
        "urn:pulumi:test::mlplatform::mlplatform:components:Kueue$kubernetes:helm.sh/v4:Chart"
        "$kubernetes:monitoring.coreos.com/v1:ServiceMonitor::kueue:kueue-system/kueue-controller-manager-metrics-monitor",
    )
    assert plan.one(SERVICE_MONITOR, dcgm.RELEASE).aliases == (
        "urn:pulumi:test::mlplatform::mlplatform:components:DcgmExporter$kubernetes:helm.sh/v4:Chart"
        "$kubernetes:monitoring.coreos.com/v1:ServiceMonitor::dcgm-exporter:dcgm-exporter/dcgm-exporter",
    )


def test_grafana_served_through_the_kubeflow_gateway_and_in_the_menu(shipped_plan: Callable[[str], Plan]) -> None:
    import json as json_

    from components.kubeflow import dashboard_links, dashboard_menu, kubeflow_args
    from stackmodel.config import load

    plan = shipped_plan("kind")
    route = next(o for o in authored_objects(plan) if o["kind"] == "VirtualService" and o["metadata"]["name"] == "grafana")
    http = route["spec"]["http"][-1]
    assert http["match"] == [{"uri": {"prefix": monitoring.GRAFANA_PATH}}]
    assert http["route"][0]["destination"]["host"] == "grafana.monitoring.svc.cluster.local"
    server = chart(plan, "grafana")["values"]["grafana.ini"]["server"]
    assert server["serve_from_sub_path"] is True and server["root_url"].endswith("/grafana/")
    links = json_.loads(dashboard_links(dashboard_menu(kubeflow_args(load("kind"), {}))))["menuLinks"]
    assert {"type": "item", "link": "/grafana/", "text": "Grafana (GPUs)", "icon": "assessment"} in links


@pytest.mark.parametrize("stack", ["dev", "prod", "kind"])
def test_grafana_route_waits_for_istios_crds(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    """A VirtualService before Istio's CRDs fails `pulumi up` on a new cluster; the route is a
    Tie, so Monitoring itself does not wait for Istio's CRDs (only Grafana for its injector)."""
    plan = shipped_plan(stack)
    route = plan.one("kubernetes:networking.istio.io/v1:VirtualService", monitoring.GRAFANA_ROUTE)
    istio = next(r for r in plan.of_type("mlplatform:components:Istio"))
    istio_ready = [r for r in plan.children(istio) if r.type == "kubernetes:kustomize/v2:Directory" and r.name == "istio"]
    assert istio_ready and istio_ready[0].urn in route.dependencies
    assert route.aliases == (f"urn:pulumi:{stack}::mlplatform::mlplatform:components:Monitoring$kubernetes:networking.istio.io/v1:VirtualService::grafana-route",)
    prometheus = plan.one(HELM_CHART, "kube-prometheus-stack")
    assert istio_ready[0].urn not in plan.waits_for(prometheus)
    assert istio_ready[0].urn in plan.one(HELM_CHART, "grafana").dependencies, "Grafana's sidecar comes from Istio's injector"


def test_prometheus_scrapes_every_service_monitor() -> None:
    from components.kueue import kueue_values

    spec = monitoring.prometheus_stack_values(MonitoringConfig())["prometheus"]["prometheusSpec"]
    # Kueue's chart labels its ServiceMonitor only with its own labels (charts/kueue/templates/_helpers.tpl).
    assert kueue_values()["enablePrometheus"] is False, "the chart's monitor would make it wait for Monitoring"
    assert selects(spec["serviceMonitorSelector"], kueue.service_monitor(monitoring.SCRAPE_LABELS)["metadata"]["labels"])
    # The chart keeps {} only with this off (kube-prometheus-stack values.yaml).
    assert spec["serviceMonitorSelectorNilUsesHelmValues"] is False
    assert spec["serviceMonitorNamespaceSelector"] == {}


# --- the charts as the cluster receives them (full render from ../shared/upstream) -------

needs_mirror = mirror.needed


def _from(stack: str, source: str) -> list[dict[str, Any]]:
    return [o.obj for o in renders.rendered(stack).objects if o.source == source]


@needs_mirror
def test_grafana_reads_config_maps_of_its_own_namespace_only() -> None:
    """The chart's default is a ClusterRole over every namespace's ConfigMaps and Secrets for
    Grafana's service account; rbac.namespaced keeps it to `monitoring`."""
    objects = _from("kind", f"{monitoring.NAMESPACE}/{monitoring.GRAFANA_RELEASE}")
    kinds = {(o["kind"], o["metadata"]["name"]) for o in objects}
    assert not {k for k in kinds if k[0] in ("ClusterRole", "ClusterRoleBinding")}
    role = next(o for o in objects if o["kind"] == "Role")
    binding = next(o for o in objects if o["kind"] == "RoleBinding")
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == monitoring.NAMESPACE
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role["metadata"]["name"]}
    assert {"verbs": ["get", "watch", "list"], "resources": ["configmaps", "secrets"]}.items() <= role["rules"][0].items()
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    sidecar = next(c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "grafana-sc-dashboard")
    env = {e["name"]: e.get("value") for e in sidecar["env"]}
    assert env["RESOURCE"] == "configmap" and "NAMESPACE" not in env, "ConfigMaps of the pod's own namespace"


@needs_mirror
def test_prometheus_operator_needs_no_hook_made_certificate() -> None:
    """helm.v4.Chart never runs kube-prometheus-stack's certificate hook Jobs: nothing the
    cluster receives may wait for the Secret they would make."""
    objects = _from("kind", f"{monitoring.NAMESPACE}/{monitoring.PROMETHEUS_RELEASE}")
    assert not [o for o in objects if o["kind"] in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "Job")]
    operator = next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("-operator"))
    secrets = [v["secret"]["secretName"] for v in operator["spec"]["template"]["spec"].get("volumes") or [] if "secret" in v]
    assert secrets == []


@needs_mirror
def test_the_chart_brings_the_crds_of_its_own_operator() -> None:
    """Pulumi applies the chart's CRDs as resources, so they move with the operator on every
    bump (no `kubectl apply` of CRDs before an upgrade, no crds.upgradeJob hook)."""
    objects = _from("kind", f"{monitoring.NAMESPACE}/{monitoring.PROMETHEUS_RELEASE}")
    operator = next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("-operator"))
    image = operator["spec"]["template"]["spec"]["containers"][0]["image"]
    assert "/prometheus-operator/prometheus-operator:v" in image
    crds = [o for o in objects if o["kind"] == "CustomResourceDefinition"]
    assert {c["spec"]["names"]["kind"] for c in crds} >= {"Prometheus", "ServiceMonitor", "PodMonitor", "PrometheusRule"}
    assert {f"v{c['metadata']['annotations']['operator.prometheus.io/version']}" for c in crds} == {image.rsplit(":", 1)[1]}


@needs_mirror
@pytest.mark.parametrize(("stack", "monitor", "service"), [("dev", kueue.SERVICE_MONITOR, "kueue-controller-manager-metrics-service"), ("dev", dcgm.RELEASE, dcgm.RELEASE)])
def test_our_service_monitors_select_the_charts_metrics_service_by_its_port(stack: str, monitor: str, service: str) -> None:
    """What the chart's own monitor scraped: exactly its metrics Service, on a port it names."""
    objects = [o.obj for o in renders.rendered(stack).objects]
    (ours,) = [o for o in objects if o["kind"] == "ServiceMonitor" and o["metadata"]["name"] == monitor]
    namespace = ours["metadata"]["namespace"]
    selected = [
        o for o in objects
        if o["kind"] == "Service" and o["metadata"]["namespace"] == namespace
        and selects(ours["spec"]["selector"], o["metadata"].get("labels") or {})
    ]
    assert [s["metadata"]["name"] for s in selected] == [service]
    ports = {p.get("name") for p in selected[0]["spec"]["ports"]}
    assert {e["port"] for e in ours["spec"]["endpoints"]} <= ports
