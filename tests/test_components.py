"""In-cluster components under mocks: what each installs (source, pinned version, the
values that matter), the order between them, and the objects we author ourselves."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

from components.istio import GKE_CNI_BIN_DIR
from components.kubeflow import dex_config
from facts import versions
from facts.image_set import notebook_tag
from plumbing.base import apply_transforms, matches
from stackmodel.components.pipelines import PipelinesConfig
from stackmodel.schema import GpuPool, KubeflowAuth
from stackmodel.schema.pools import PoolTaint
from tests.conftest import base_gke, base_kind, with_changes
from tests.support import crds, mirror, renders
from tests.support.mirror import MIRROR
from tests.support.validation import CHART_CRD_KINDS, GKE_PROVIDED_KINDS, validate
from tooling.plan import Plan
from tooling.render import HELM_CHART, KUSTOMIZE, authored_objects, upstream


def _charts(plan: Plan) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in upstream(plan) if e["kind"] == "helm"}


@pytest.mark.parametrize("stack", ["kind", "dev"])
def test_every_component_is_installed_at_its_pinned_version(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    entries = upstream(shipped_plan(stack))
    charts = {e["name"]: e for e in entries if e["kind"] == "helm"}
    for pin in (
        versions.CERT_MANAGER, versions.JOBSET_CHART, versions.TRAINER_CHART, versions.KUBERAY_CHART, versions.KUEUE_CHART,
        versions.KSERVE_CRD_CHART, versions.KSERVE_CHART, versions.KSERVE_RUNTIMES_CHART, versions.KEDA_CHART,
    ):
        assert charts[pin.name]["version"] == pin.version
    trees = [e["directory"] for e in entries if e["kind"] == "kustomize"]
    assert trees and all(t.startswith(versions.KUBEFLOW_MANIFESTS.location + "//") for t in trees)
    assert all(t.endswith(f"?ref={versions.KUBEFLOW_MANIFESTS.version}") for t in trees)
    components = {e["component"] for e in entries}
    platform = {"cert-manager", "istio", "kubeflow-namespaces", "kubeflow", "jobset", "trainer", "kuberay", "kueue", "monitoring", "pipelines", "serving"}
    platform |= {"lws", "inference-gateway"} if stack == "kind" else {"lws"}  # GKE brings the gateway's CRDs
    # dev: the DCGM exporter, and the Model Registry's UI and each team's registry (its Team installs it).
    registry = {"model-registry", "nlp", "research", "vision"}
    assert components == platform | ({"dcgm-exporter", *registry} if stack == "dev" else set())


def test_jobset_installed_once_and_off_in_trainer(shipped_plan: Callable[[str], Plan]) -> None:
    charts = _charts(shipped_plan("kind"))
    assert [n for n in charts if "jobset" in n] == ["jobset"]
    assert charts["kubeflow-trainer"]["values"]["jobset"] == {"install": False}
    assert charts["kubeflow-trainer"]["values"]["runtimes"] == {"defaultEnabled": False}
    annotations = charts["kubeflow-trainer"]["values"]["manager"]["podAnnotations"]
    assert annotations["traffic.sidecar.istio.io/excludeInboundPorts"] == "9443"


def test_kuberay_disables_init_container_injection(shipped_plan: Callable[[str], Plan]) -> None:
    env = _charts(shipped_plan("kind"))["kuberay-operator"]["values"]["env"]
    assert {"name": "ENABLE_INIT_CONTAINER_INJECTION", "value": "false"} in env


def test_kueue_integrations(shipped_plan: Callable[[str], Plan]) -> None:
    values = _charts(shipped_plan("kind"))["kueue"]["values"]
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert config["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
    assert {"trainer.kubeflow.org/trainjob", "jobset.x-k8s.io/jobset", "ray.io/rayjob", "ray.io/raycluster"} <= set(
        config["integrations"]["frameworks"]
    )


def test_kueue_admits_all_or_nothing(shipped_plan: Callable[[str], Plan]) -> None:
    # Kueue v0.19.2 apis/config/v1beta2 WaitForPodsReady: the stack's defaults, written out.
    values = _charts(shipped_plan("dev"))["kueue"]["values"]
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert config["waitForPodsReady"] == {"timeout": "20m", "blockAdmission": False, "requeuingStrategy": {"timestamp": "Eviction"}}


def test_kueue_pods_ready_settings_come_from_the_stack(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    settings = {"timeout": "45m", "blockAdmission": True, "backoffLimitCount": 3}
    plan = plan_of(with_changes(base_kind(), {"mlplatform:components.kueue": {"waitForPodsReady": settings}}))
    config = yaml.safe_load(_charts(plan)["kueue"]["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert config["waitForPodsReady"] == {
        "timeout": "45m",
        "blockAdmission": True,
        "requeuingStrategy": {"timestamp": "Eviction", "backoffLimitCount": 3},
    }


# Kubeflow 26.03.1-rc.2: the form's configuration as the release ships it (the mirror's copy).
SPAWNER_CONFIG = (
    MIRROR / "kubeflow-manifests/26.03.1-rc.2/applications/notebooks-v1/upstream/jupyter-web-app/base/configs/spawner_ui_config.yaml"
)


def _spawner_form(plan: Plan) -> dict[str, Any]:
    """The notebook form of the plan's Jupyter web app: the release's spawner_ui_config.yaml
    (or a minimal one without the mirror) through the tree's transforms."""
    text = SPAWNER_CONFIG.read_text() if SPAWNER_CONFIG.is_file() else "spawnerFormDefaults:\n  image: {value: x, options: [x]}\n"
    props = {"kind": "ConfigMap", "metadata": {"name": "jupyter-web-app-config-h"}, "data": {"spawner_ui_config.yaml": text}}
    changed = apply_transforms(props, plan.record.transforms[(KUSTOMIZE, "jupyter-web-app")])
    assert changed is not None
    return yaml.safe_load(changed["data"]["spawner_ui_config.yaml"])["spawnerFormDefaults"]


def test_jupyter_web_app_offers_the_platform_notebook_images(shipped_plan: Callable[[str], Plan]) -> None:
    form = _spawner_form(shipped_plan("dev"))
    registry = "us-central1-docker.pkg.dev/acme-ml-dev/ml-dev"
    assert form["image"]["value"] == f"{registry}/notebook:{notebook_tag()}"
    assert form["image"]["options"] == [f"{registry}/notebook:{notebook_tag()}", f"{registry}/notebook:{notebook_tag(gpu=True)}"]
    assert form["configurations"]["value"] == ["team-resources", "interactive-priority"]  # the teams' PodDefaults, preselected
    if SPAWNER_CONFIG.is_file():  # the rest of the release's form stays
        assert form["allowCustomImage"] is True and form["cpu"]["value"] == "0.5"
        (pool,) = form["affinityConfig"]["options"]
        expressions = pool["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"]
        assert {"key": "mlplatform.dev/gpu-pool", "operator": "In", "values": ["l4"]} in expressions
        (tolerations,) = form["tolerationGroup"]["options"]
        assert tolerations["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}]


def test_the_notebook_form_offers_no_pool_a_gpu_notebook_could_not_be_admitted_to(shipped_plan: Callable[[str], Plan]) -> None:
    # prod: l4 (device plugin, no topology) and h100 (a3-highgpu-8g, queued: topology-aware,
    # whose Kueue flavor takes only pod sets that ask for a topology, which a notebook does not).
    form = _spawner_form(shipped_plan("prod"))
    assert [o["configKey"] for o in form["affinityConfig"]["options"]] == ["gpu-pool-l4"]
    assert [o["groupKey"] for o in form["tolerationGroup"]["options"]] == ["gpu-pool-l4"]
    # dev-fabric: both pools are topology-aware: no GPU pool in the form at all.
    assert _spawner_form(shipped_plan("dev-fabric")).get("affinityConfig", {}).get("options", []) == []


def test_kind_notebooks_come_from_the_locally_loaded_images(shipped_plan: Callable[[str], Plan]) -> None:
    form = _spawner_form(shipped_plan("kind"))
    assert form["image"]["value"] == f"localhost/mlplatform/notebook:{notebook_tag()}"
    assert form.get("affinityConfig", {}).get("options", []) == []


def test_other_objects_of_the_web_app_pass_unchanged(shipped_plan: Callable[[str], Plan]) -> None:
    transforms = shipped_plan("kind").record.transforms[(KUSTOMIZE, "jupyter-web-app")]
    assert apply_transforms({"kind": "ConfigMap", "metadata": {"name": "jupyter-web-app-parameters-h"}, "data": {"X": "1"}}, transforms) is None


def test_gke_ray_addon_replaces_the_operator(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    plan = plan_of(with_changes(base_gke(), {"mlplatform:components.kuberay": {"source": "gke-addon"}}))
    assert "kuberay-operator" not in _charts(plan)
    cluster = plan.of_type("gcp:container/cluster:Cluster")[0].inputs
    assert cluster["addonsConfig"]["rayOperatorConfigs"] == [{"enabled": True}]
    operator_plan = plan_of(base_gke())
    assert "kuberay-operator" in _charts(operator_plan)
    assert "rayOperatorConfigs" not in operator_plan.of_type("gcp:container/cluster:Cluster")[0].inputs["addonsConfig"]


def test_switched_off_component_installs_nothing(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    plan = plan_of(with_changes(base_kind(), {"mlplatform:components.kuberay": {"enabled": False}}))
    assert "kuberay-operator" not in _charts(plan)
    assert not [r for r in plan.resources if r.name.startswith("kubeflow-kuberay")]


def _depends(plan: Plan, type_: str, name: str, on_type: str, on_name: str) -> bool:
    return plan.one(on_type, on_name).urn in plan.one(type_, name).dependencies


def test_order_crds_and_webhooks_before_their_users(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    assert _depends(plan, KUSTOMIZE, "istio", KUSTOMIZE, "istio-namespace")
    assert _depends(plan, KUSTOMIZE, "istio-namespace", KUSTOMIZE, "istio-crds")
    assert _depends(plan, KUSTOMIZE, "kubeflow-roles", KUSTOMIZE, "istio")
    assert _depends(plan, KUSTOMIZE, "kubeflow-roles", KUSTOMIZE, "kubeflow-issuer")
    # The issuer is validated by cert-manager's webhook: its tree waits for the whole chart.
    assert _depends(plan, KUSTOMIZE, "kubeflow-issuer", HELM_CHART, "cert-manager")
    # Istio's install puts Sidecars into `kubeflow`; Trainer runs in kubeflow-system.
    assert _depends(plan, KUSTOMIZE, "istio-crds", KUSTOMIZE, "kubeflow-namespace")
    assert _depends(plan, HELM_CHART, "kubeflow-trainer", KUSTOMIZE, "kubeflow-namespace")
    # Kueue's ServiceMonitor is a Tie: it waits for Kueue and Monitoring's CRDs, the chart for neither.
    assert not _depends(plan, HELM_CHART, "kueue", HELM_CHART, "kube-prometheus-stack")
    monitor = "kubernetes:monitoring.coreos.com/v1:ServiceMonitor"
    assert _depends(plan, monitor, "kueue-controller-manager-metrics-monitor", HELM_CHART, "kube-prometheus-stack")
    assert _depends(plan, monitor, "kueue-controller-manager-metrics-monitor", HELM_CHART, "kueue")
    assert _depends(plan, KUSTOMIZE, "profiles-kfam", KUSTOMIZE, "kubeflow-roles")
    assert _depends(plan, HELM_CHART, "kubeflow-trainer", HELM_CHART, "jobset")
    for chart in ("jobset", "kubeflow-trainer", "kuberay-operator"):  # Kueue waits for their CRDs itself
        assert not _depends(plan, HELM_CHART, "kueue", HELM_CHART, chart)
    flavor = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
    assert _depends(plan, flavor, "flavor-default", HELM_CHART, "kueue")
    # KServe's controller looks for KEDA's ScaledObject CRD once, at start (components/serving.py).
    assert _depends(plan, HELM_CHART, "kserve-resources", HELM_CHART, "keda")
    assert _depends(plan, HELM_CHART, "kserve-resources", HELM_CHART, "kserve-crd")


def test_one_flavor_per_gpu_pool_from_the_pool_labels(shipped_plan: Callable[[str], Plan]) -> None:
    flavors = {o["metadata"]["name"]: o for o in authored_objects(shipped_plan("prod")) if o["kind"] == "ResourceFlavor"}
    assert set(flavors) == {"default", "l4", "h100"}
    h100 = flavors["h100"]["spec"]
    assert h100["nodeLabels"] == {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb", "mlplatform.dev/gpu-pool": "h100"}
    assert h100["nodeTaints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    spot = flavors["l4"]["spec"]["nodeLabels"]
    assert "cloud.google.com/gke-spot" not in spot  # prod's L4 pool is on-demand


def test_only_a_topology_aware_pools_flavor_tolerates_the_gpu_taint() -> None:
    """A flavor's tolerations let any pod set Kueue admits onto its pool (components/kueue.py
    flavor_tolerations): a CPU-only job, once the default flavor is full, would run on GPU nodes.
    The pool's own taints stay tolerated; a TAS flavor takes only pod sets asking for a topology."""
    from components.kueue import resource_flavors

    l4 = GpuPool.model_validate({"name": "l4", "accelerator": "nvidia-l4", "machineType": "g2-standard-24", "max": 2})
    dedicated = l4.model_copy(update={"name": "l4d", "taints": [PoolTaint(key="acme.com/dedicated", value="llm")]})
    h100 = GpuPool.model_validate({"name": "h100", "accelerator": "nvidia-h100-80gb", "machineType": "a3-highgpu-8g", "max": 2, "provisioning": "queued"})
    assert h100.topology_aware
    specs = {f["metadata"]["name"]: f["spec"] for f in resource_flavors([l4, dedicated, h100])}
    gpu_taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    assert specs["l4"]["nodeTaints"] == [gpu_taint] and "tolerations" not in specs["l4"]
    assert specs["l4d"]["tolerations"] == [{"key": "acme.com/dedicated", "operator": "Equal", "value": "llm", "effect": "NoSchedule"}]
    assert specs["h100"]["tolerations"] == [{**gpu_taint, "operator": "Equal"}]


def _kueue_objects(plan: Plan, kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in authored_objects(plan) if o["kind"] == kind}


def test_queued_pool_gets_a_provisioning_request_admission_check(shipped_plan: Callable[[str], Plan]) -> None:
    # GKE's Kueue + DWS manifests (cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest;
    # GoogleCloudPlatform/ai-on-gke dws-examples/dws-queues.yaml), in Kueue v0.19.2's v1beta2 API;
    # the controller name is ProvisioningRequestControllerName (apis/kueue/v1beta2/provisioningrequestconfig_types.go).
    plan = shipped_plan("prod")  # pools: l4 on-demand, h100 queued
    assert _kueue_objects(plan, "ProvisioningRequestConfig") == {
        "h100-dws": {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ProvisioningRequestConfig",
            "metadata": {"name": "h100-dws"},
            "spec": {"provisioningClassName": "queued-provisioning.gke.io", "managedResources": ["nvidia.com/gpu"]},
        }
    }
    assert _kueue_objects(plan, "AdmissionCheck") == {
        "h100-dws": {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "AdmissionCheck",
            "metadata": {"name": "h100-dws"},
            "spec": {
                "controllerName": "kueue.x-k8s.io/provisioning-request",
                "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "h100-dws"},
            },
        }
    }
    for kind in ("ProvisioningRequestConfig", "AdmissionCheck"):
        assert _depends(plan, f"kubernetes:kueue.x-k8s.io/v1beta2:{kind}", f"{kind.lower()}-h100-dws", HELM_CHART, "kueue")


def test_team_cluster_queue_runs_the_check_on_the_queued_flavor_only(shipped_plan: Callable[[str], Plan]) -> None:
    queue = _kueue_objects(shipped_plan("prod"), "ClusterQueue")["vision"]["spec"]
    assert queue["admissionChecksStrategy"] == {"admissionChecks": [{"name": "h100-dws", "onFlavors": ["h100"]}]}
    assert "admissionChecks" not in queue  # v1beta2 has only the per-flavor strategy
    for stack in ("kind", "dev"):  # no queued pools: no checks
        assert all("admissionChecksStrategy" not in q["spec"] for q in _kueue_objects(shipped_plan(stack), "ClusterQueue").values())


@pytest.mark.skipif(not crds.available(), reason=crds.MISSING)
def test_admission_check_objects_validate_and_refer_to_each_other(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("prod")
    configs = _kueue_objects(plan, "ProvisioningRequestConfig")
    checks = _kueue_objects(plan, "AdmissionCheck")
    flavors = _kueue_objects(plan, "ResourceFlavor")
    queues = _kueue_objects(plan, "ClusterQueue")
    assert configs and checks and queues
    for obj in [*configs.values(), *checks.values(), *queues.values()]:
        assert validate(obj) == [], f"{obj['kind']} {obj['metadata']['name']}"
    # References the schema cannot check: check -> config, queue -> check and flavor.
    for check in checks.values():
        assert check["spec"]["parameters"]["name"] in configs
    for queue in queues.values():
        queue_flavors = {f["name"] for group in queue["spec"]["resourceGroups"] for f in group["flavors"]}
        for rule in queue["spec"]["admissionChecksStrategy"]["admissionChecks"]:
            assert rule["name"] in checks
            assert set(rule["onFlavors"]) <= queue_flavors & set(flavors)


def test_trainer_roles_aggregate_into_kubeflow_roles(shipped_plan: Callable[[str], Plan]) -> None:
    objects = {o["metadata"]["name"]: o for o in authored_objects(shipped_plan("kind")) if o["kind"].startswith("ClusterRole")}
    edit = objects["kubeflow-trainer-edit"]
    assert edit["metadata"]["labels"]["rbac.authorization.kubeflow.org/aggregate-to-kubeflow-edit"] == "true"
    assert {"apiGroups": ["trainer.kubeflow.org"], "resources": ["trainjobs"], "verbs": ["create", "patch", "get", "list", "watch", "delete"]} in edit["rules"]
    binding = next(o for o in objects.values() if o["kind"] == "ClusterRoleBinding")
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}]
    assert objects["kubeflow-kuberay-edit"]["metadata"]["labels"]["rbac.authorization.kubeflow.org/aggregate-to-kubeflow-edit"] == "true"


@pytest.mark.skipif(not crds.available(), reason=crds.MISSING)
@pytest.mark.parametrize("stack", ["kind", "dev", "prod"])
def test_authored_objects_validate_against_real_schemas(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    objects = authored_objects(shipped_plan(stack))
    assert objects
    for obj in objects:
        if (obj["apiVersion"], obj["kind"]) in GKE_PROVIDED_KINDS | CHART_CRD_KINDS:
            continue  # GKE serves these CRDs; no upstream copy to validate against (shape tested above)
        assert validate(obj) == [], f"{obj['kind']} {obj['metadata']['name']}"


def test_istio_on_gke_is_the_release_gke_overlay(shipped_plan: Callable[[str], Plan]) -> None:
    trees = {stack: {e["name"]: e["directory"] for e in upstream(shipped_plan(stack)) if e["kind"] == "kustomize"} for stack in ("kind", "dev")}
    assert "/common/istio/istio-install/overlays/oauth2-proxy?" in trees["kind"]["istio"]
    assert "/common/istio/istio-install/overlays/gke?" in trees["dev"]["istio"]


@mirror.needed
@pytest.mark.parametrize(("stack", "path"), [("kind", "/opt/cni/bin"), ("dev", GKE_CNI_BIN_DIR), ("prod", GKE_CNI_BIN_DIR)])
def test_istio_cni_binaries_go_where_the_nodes_let_them(stack: str, path: str) -> None:
    # GKE mounts /opt/cni/bin read-only (istio.io "Install the Istio CNI node agent", prerequisites).
    (daemonset,) = [o.obj for o in renders.rendered(stack).objects if matches(o.obj, "DaemonSet", "istio-cni-node")]
    volumes = {v["name"]: v for v in daemonset["spec"]["template"]["spec"]["volumes"]}
    assert volumes["cni-bin-dir"]["hostPath"]["path"] == path


def test_dex_static_users_read_hashes_from_env_not_the_stack() -> None:
    auth = KubeflowAuth.model_validate({"staticUsers": ["ana@acme.com", "bo.x@acme.com"]})
    config = yaml.safe_load(dex_config(auth))
    assert config["enablePasswordDB"] is True
    users = config["staticPasswords"]
    assert [u["email"] for u in users] == ["ana@acme.com", "bo.x@acme.com"]
    assert [u["hashFromEnv"] for u in users] == ["DEX_PASSWORD_ana_40acme_2Ecom", "DEX_PASSWORD_bo_2Ex_40acme_2Ecom"]
    assert all("hash" not in u for u in users)


def test_two_static_users_never_read_one_password_hash() -> None:
    """The lossy names of before (`[^A-Z0-9]+` -> `_`, upper-cased) gave these four one
    variable, so any of their passwords signed in as all of them."""
    people = ["ana.b@example.com", "ana-b@example.com", "ana_b@example.com", "ana+b@example.com"]
    config = yaml.safe_load(dex_config(KubeflowAuth.model_validate({"staticUsers": people})))
    names = [u["hashFromEnv"] for u in config["staticPasswords"]]
    assert len(set(names)) == len(people)
    assert names[0] == "DEX_PASSWORD_ana_2Eb_40example_2Ecom"


def test_dex_oidc_connector_secret_from_env() -> None:
    auth = KubeflowAuth.model_validate(
        {"kind": "oidc", "oidc": {"clientId": "abc.apps.googleusercontent.com"}, "hostname": "kf.acme.com", "allowedDomains": ["acme.com"]}
    )
    config = yaml.safe_load(dex_config(auth))
    connector = config["connectors"][0]
    assert connector["config"]["clientSecret"] == "$OIDC_CONNECTOR_SECRET"
    assert connector["config"]["redirectURI"] == "https://kf.acme.com/dex/callback"
    assert config["enablePasswordDB"] is False


def test_prod_gateway_is_https_with_managed_certificate_and_iap(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("prod")
    objects = {o["kind"]: o for o in authored_objects(plan) if o["metadata"].get("namespace") == "istio-system"}
    ingress = objects["Ingress"]
    annotations = ingress["metadata"]["annotations"]
    assert annotations["kubernetes.io/ingress.global-static-ip-name"] == "ml-prod-kubeflow"
    assert annotations["networking.gke.io/managed-certificates"] == "kubeflow-gateway"
    assert annotations["kubernetes.io/ingress.allow-http"] == "false"
    assert ingress["spec"]["defaultBackend"]["service"]["name"] == "istio-ingressgateway"
    assert objects["ManagedCertificate"]["spec"]["domains"] == ["kubeflow.acme.com"]
    backend = objects["BackendConfig"]["spec"]
    assert backend["healthCheck"] == {"type": "HTTP", "port": 15021, "requestPath": "/healthz/ready"}
    assert backend["iap"] == {"enabled": True, "oauthclientCredentials": {"secretName": "kubeflow-iap-oauth"}}
    secret = plan.one("kubernetes:core/v1:Secret", "kubeflow-https-iap-oauth").inputs
    assert secret["stringData"] == {"client_id": "[secret]", "client_secret": "[secret]"}
    assert plan.outputs["kubeflowUrl"] == "https://kubeflow.acme.com/"


def test_no_public_gateway_without_hostname(shipped_plan: Callable[[str], Plan]) -> None:
    for stack in ("kind", "dev"):
        assert not shipped_plan(stack).of_type("kubernetes:networking.k8s.io/v1:Ingress")
    assert "port-forward" in shipped_plan("kind").outputs["kubeflowUrl"]


def test_gateway_service_gets_neg_and_backend_config_on_gke_with_hostname() -> None:
    from components.istio import gateway_annotations, istio_args, with_gateway_annotations
    from stackmodel.config import load

    annotations = gateway_annotations(istio_args(load("prod")))
    assert annotations == {
        "cloud.google.com/neg": '{"ingress": true}',
        "cloud.google.com/backend-config": '{"default": "kubeflow-gateway"}',
    }
    assert gateway_annotations(istio_args(load("dev"))) == {}
    service = {"kind": "Service", "metadata": {"name": "istio-ingressgateway", "annotations": {"a": "b"}}}
    patched = with_gateway_annotations(service, annotations)
    assert patched is not None and patched["metadata"]["annotations"]["a"] == "b"
    assert patched["metadata"]["annotations"]["cloud.google.com/neg"] == '{"ingress": true}'
    assert with_gateway_annotations({"kind": "Service", "metadata": {"name": "other"}}, {"x": "y"}) is None


def test_dashboard_menu_links_team_ray_dashboards() -> None:
    import json

    from components.kubeflow import dashboard_links, dashboard_menu, kubeflow_args
    from stackmodel.config import load

    links = json.loads(dashboard_links(dashboard_menu(kubeflow_args(load("kind"), {}))))
    texts = [item["text"] for item in links["menuLinks"]]
    assert texts[:3] == ["Notebooks", "Volumes", "TensorBoards"]
    ray = next(item for item in links["menuLinks"] if item["text"] == "Ray dashboards")
    assert ray["items"] == [{"type": "item", "link": "/ray/nlp/ray/", "text": "nlp: ray"}]
    pipelines = next(item for item in links["menuLinks"] if item["text"] == "Pipelines")
    pages = {item["text"]: item["link"] for item in pipelines["items"]}
    assert {"Pipelines": "/pipeline/#/pipelines", "Experiments": "/pipeline/#/experiments", "Runs": "/pipeline/#/runs"}.items() <= pages.items()


def test_without_pipelines_the_menu_has_no_pipelines_section() -> None:
    import json

    from components.kubeflow import dashboard_links, dashboard_menu, kubeflow_args
    from stackmodel.config import load

    config = load("kind")
    config = config.model_copy(update={"components": config.components.model_copy(update={"pipelines": PipelinesConfig(enabled=False)})})
    links = json.loads(dashboard_links(dashboard_menu(kubeflow_args(config, {}))))
    assert "Pipelines" not in [item["text"] for item in links["menuLinks"]]
