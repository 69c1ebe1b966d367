"""The platform as it will run, judged from the full render: every file a process reads is
there, every call of the control plane reaches its pods, configuration the program writes
rolls the pods that read it at start. Each rule fails on a render broken the way it guards
against (today's defects among them), naming the object and the fix."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
import yaml

from components.kubeflow import OAUTH2_PROXY_CONFIG_KEY, OAUTH2_PROXY_EMAILS_KEY
from facts.config_reload import KUSTOMIZE_HASH_SUFFIX
from facts.resource_types import GCP_FIREWALL
from facts.versions import ISTIO
from plumbing.base import CONFIG_DIGEST_ANNOTATION
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.config import load
from tests.support import mirror
from tests.support.renders import edited, rendered, violations
from tooling.fullrender import FullRender

pytestmark = mirror.needed


def _one(render: FullRender, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    """The object, its name maybe with kustomize's content hash."""
    found = [
        o.obj
        for o in render.objects
        if o.key[1] == kind and KUSTOMIZE_HASH_SUFFIX.sub("", o.key[3]) == name and namespace in (None, o.key[2])
    ]
    assert len(found) == 1, (kind, name, len(found))
    return found[0]


def _container(obj: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in obj["spec"]["template"]["spec"]["containers"] if c["name"] == name)


@pytest.mark.parametrize("stack", ["kind", "dev"])
def test_oauth2_proxy_mounts_every_file_its_config_names(stack: str) -> None:
    """The sign-in proxy exits at start when authenticated_emails_file cannot be opened."""
    render = rendered(stack)
    config = _one(render, "ConfigMap", "oauth2-proxy", "oauth2-proxy")["data"]
    assert f'authenticated_emails_file = "/etc/oauth2_proxy/{OAUTH2_PROXY_EMAILS_KEY}"' in config[OAUTH2_PROXY_CONFIG_KEY]
    proxy = _container(_one(render, "Deployment", "oauth2-proxy"), "oauth2-proxy")
    mounts = {m["mountPath"]: m.get("subPath") for m in proxy["volumeMounts"]}
    assert mounts[f"/etc/oauth2_proxy/{OAUTH2_PROXY_EMAILS_KEY}"] == OAUTH2_PROXY_EMAILS_KEY
    assert config[OAUTH2_PROXY_EMAILS_KEY].split() == sorted(load(stack).components[KUBEFLOW].auth.static_users)


def test_files_rule_catches_the_emails_file_no_mount_provides() -> None:
    """Today's defect: the release mounts only `subPath: oauth2_proxy.cfg`."""

    def unmount(obj: dict[str, Any]) -> None:
        proxy = _container(obj, "oauth2-proxy")
        proxy["volumeMounts"] = [m for m in proxy["volumeMounts"] if m.get("subPath") != OAUTH2_PROXY_EMAILS_KEY]

    found = violations(edited(rendered("kind"), "Deployment", "oauth2-proxy", unmount), "files-provided")
    assert [v.message for v in found] == [
        f"container oauth2-proxy: authenticated_emails_file in /etc/oauth2_proxy/oauth2_proxy.cfg names "
        f"/etc/oauth2_proxy/{OAUTH2_PROXY_EMAILS_KEY}, which no volume mount or image provides; mount the ConfigMap key or volume that holds it"
    ]
    assert found[0].object == "Deployment.apps oauth2-proxy/oauth2-proxy"


def test_files_rule_catches_a_config_directory_without_the_key_the_arguments_name() -> None:
    """Dex is started with /etc/dex/cfg/config.yaml, the `dex` ConfigMap mounted as that directory."""
    broken = edited(rendered("kind"), "ConfigMap", "dex", lambda o: o.update(data={"other.yaml": o["data"]["config.yaml"]}))
    messages = [v.message for v in violations(broken, "files-provided")]
    assert messages == ["container dex: argument '/etc/dex/cfg/config.yaml' names /etc/dex/cfg/config.yaml, which no volume mount or image provides; mount the ConfigMap key or volume that holds it"]


def test_files_rule_reads_paths_from_env_and_yaml_configs_and_knows_what_images_carry() -> None:
    render = rendered("dev")

    def moved_env(obj: dict[str, Any]) -> None:
        ui = _container(obj, "ml-pipeline-ui")
        for var in ui["env"]:
            if var["name"] == "VIEWER_TENSORBOARD_POD_TEMPLATE_SPEC_PATH":
                var["value"] = "/etc/elsewhere/viewer-pod-template.json"

    found = violations(edited(render, "Deployment", "ml-pipeline-ui", moved_env), "files-provided")
    assert [v.message.split(",")[0] for v in found] == [
        "container ml-pipeline-ui: env VIEWER_TENSORBOARD_POD_TEMPLATE_SPEC_PATH names /etc/elsewhere/viewer-pod-template.json"
    ]
    # Grafana's [paths] in grafana.ini: provisioning and logs come with the image; a path outside it does not.
    ini = _one(render, "ConfigMap", "grafana", "monitoring")["data"]["grafana.ini"]
    assert "provisioning = /etc/grafana/provisioning" in ini and violations(render, "files-provided") == []
    broken = edited(render, "ConfigMap", "grafana", lambda o: o["data"].update({"grafana.ini": ini.replace("/var/log/grafana", "/srv/logs")}))
    assert [v.message.split(",")[0] for v in violations(broken, "files-provided")] == ["container grafana: logs in /etc/grafana/grafana.ini names /srv/logs"]


def test_control_plane_reach_rule_catches_the_visibility_api_port_the_firewall_keeps_closed() -> None:
    """Today's defect: 4443, 8443, 9443, 15017 open; Kueue's aggregated API listens on 8082."""
    render = rendered("dev")
    plan = render.plan
    firewall = plan.of_type(GCP_FIREWALL)[0]
    assert "8082" in firewall.inputs["allows"][0]["ports"]
    closed = replace(firewall, inputs={**firewall.inputs, "allows": [{"protocol": "tcp", "ports": ["4443", "6443", "8443", "9443", "15017"]}]})
    broken = replace(render, plan=replace(plan, resources=[closed if r.urn == firewall.urn else r for r in plan.resources]))
    found = {(v.object, v.message) for v in violations(broken, "control-plane-reach")}
    assert found == {
        (
            f"APIService.apiregistration.k8s.io {version}.visibility.kueue.x-k8s.io",
            "aggregated API -> kueue-system/kueue-visibility-server: the private cluster's control-plane firewall does not "
            "open port 8082; add it to infra/gke.py CONTROL_PLANE_TARGET_PORTS",
        )
        for version in ("v1beta1", "v1beta2")
    }


def test_control_plane_reach_rule_reads_conversion_webhooks() -> None:
    def elsewhere(obj: dict[str, Any]) -> None:
        obj["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["name"] = "no-such-service"

    broken = edited(rendered("kind"), "CustomResourceDefinition", "workloads.kueue.x-k8s.io", elsewhere)
    assert [v.message for v in violations(broken, "control-plane-reach")] == ["conversion webhook -> kueue-system/no-such-service: no such Service"]


@pytest.mark.parametrize("workload", ["dex", "oauth2-proxy", "ml-pipeline"])
def test_config_rolls_rule_catches_a_workload_reading_program_written_config_without_a_digest(workload: str) -> None:
    """Dex reads its users only at start: today a new person cannot sign in until it restarts."""
    render = rendered("kind")
    assert CONFIG_DIGEST_ANNOTATION in _one(render, "Deployment", workload)["spec"]["template"]["metadata"]["annotations"]

    def undigested(obj: dict[str, Any]) -> None:
        del obj["spec"]["template"]["metadata"]["annotations"][CONFIG_DIGEST_ANNOTATION]

    found = violations(edited(render, "Deployment", workload, undigested), "config-rolls")
    assert found and all(v.object.endswith(f"/{workload}") and "nothing rolls its pods when it changes" in v.message for v in found)


def test_config_rolls_rule_knows_a_process_that_reloads() -> None:
    """The notebook form re-reads its spawner config every minute (facts/config_reload.py)."""
    render = rendered("kind")
    web_app = _one(render, "Deployment", "jupyter-web-app-deployment")
    assert CONFIG_DIGEST_ANNOTATION not in ((web_app["spec"]["template"].get("metadata") or {}).get("annotations") or {})
    assert violations(render, "config-rolls") == []


def test_secure_cookies_behind_https_only() -> None:
    """prod's gateway is HTTPS only (GKE Ingress, allow-http false): the session cookie is Secure."""
    assert _one(rendered("prod"), "ConfigMap", "oauth2-proxy-parameters")["data"]["FORCE_HTTPS"] == "true"
    assert _one(rendered("kind"), "ConfigMap", "oauth2-proxy-parameters")["data"]["FORCE_HTTPS"] == "false"


def test_the_mesh_runs_the_patch_release_the_pin_names() -> None:
    """The pinned tree renders Istio 1.30.1; its images and the injector's sidecars run the patch release."""
    render = rendered("dev")
    images = {c["image"] for o in render.objects if o.key[2] in ("istio-system", "kube-system") and o.key[1] in ("Deployment", "DaemonSet") for c in o.obj["spec"]["template"]["spec"]["containers"]}
    assert {i.rsplit(":", 1)[1] for i in images if "/istio/" in i} == {ISTIO.runs} == {"1.30.5"}
    injector = json.loads(_one(render, "ConfigMap", "istio-sidecar-injector")["data"]["values"])
    assert injector["global"]["tag"] == ISTIO.runs
    assert _one(render, "ConfigMap", "istio-cni-config")["data"]["CURRENT_AGENT_VERSION"] == ISTIO.runs
    assert yaml.safe_load(_one(render, "ConfigMap", "istio", "istio-system")["data"]["mesh"])["pathNormalization"]


def test_quota_rule_catches_a_namespace_quota_equal_to_the_queue_nominal_quota() -> None:
    """Today's defect: nlp's Profile quota equals its ClusterQueue's nominal quota (4 GPUs,
    32 CPUs, 128Gi), while the research cohort lends it research's 4 GPUs, 32 CPUs and 128Gi;
    and it limits GPUs, which Kueue admits there, so waiting GPU pods would hold its room."""

    def nominal_only(obj: dict[str, Any]) -> None:
        obj["spec"]["resourceQuotaSpec"]["hard"] = {"cpu": "32", "memory": "128Gi", "requests.nvidia.com/gpu": "4"}

    def unlimited(obj: dict[str, Any]) -> None:  # Kueue without borrowingLimit: the cohort's unused quota
        for group in obj["spec"]["resourceGroups"]:
            for flavor in group["flavors"]:
                for resource in flavor["resources"]:
                    resource.pop("borrowingLimit", None)

    render = edited(edited(rendered("dev"), "Profile", "nlp", nominal_only), "ClusterQueue", "nlp", unlimited)
    found = violations(render, "quota-admits-queue")
    # nlp's Ray cluster has a head and up to 2 workers, each with a 10m/40Mi sidecar, and a notebook at
    # the form's 0.5 CPU/1Gi with its own: 540m and 1184Mi; and a CPU pipeline step: its driver pod
    # (Argo's init 100m/64Mi, or wait 100m/64Mi and the driver 100m/64Mi: 200m, 128Mi) and its
    # executor pod (init 100m/64Mi or kfp-launcher 100m/256Mi; wait 100m/64Mi and main at the
    # LimitRange's 1 CPU/2Gi: 1100m, 2112Mi), 1300m and 2240Mi; and its Model Registry's server with its sidecar
    # and its MySQL (100m/128Mi, 10m/40Mi, 250m/512Mi: components/model_registry.py), 360m and 680Mi; and its
    # model router with its sidecar (50m/32Mi, 10m/40Mi: components/serving.py ROUTER_RESOURCES), 60m and 72Mi:
    # 2260m and 4176Mi Kueue never sees.
    unqueued = "(a notebook at the form's default, a CPU pipeline step with its driver, mesh sidecars, the namespace's own workloads): a job admitted then has its pods refused; give the Profile at least"
    assert [v.message for v in found] == [
        f"its namespace's ResourceQuota admits cpu 32, but ClusterQueue nlp may admit 64 (nominal and borrowed) and Kueue does not count 2260m {unqueued} 66260m (components/profiles/namespace.py profile)",
        f"its namespace's ResourceQuota admits memory 128Gi, but ClusterQueue nlp may admit 256Gi (nominal and borrowed) and Kueue does not count 4176Mi {unqueued} 266320Mi (components/profiles/namespace.py profile)",
        "its namespace's ResourceQuota limits nvidia.com/gpu to 4, but Kueue admits every GPU pod there and a pod waiting at its gate "
        "counts against the ResourceQuota from its creation: waiting pods would hold room Kueue gives to the next admitted workload, "
        "whose pods are then refused; leave GPUs to the queue (components/profiles/namespace.py profile)",
    ]
    assert {v.object for v in found} == {"Profile.kubeflow.org nlp"}


def test_quota_rule_catches_argo_executor_containers_left_at_the_namespace_defaults() -> None:
    """The Pipelines tree as shipped: Argo's init and wait containers without resources take the
    LimitRange's 1 CPU/2Gi each, a CPU step with its driver then costs 3100m and 6208Mi, more
    memory than the two steps of room each dev team keeps (2 x 2240Mi) with its notebooks."""

    def shipped_executor(obj: dict[str, Any]) -> None:
        executor = yaml.safe_load(obj["data"]["executor"])
        executor.pop("resources")
        obj["data"]["executor"] = yaml.safe_dump(executor)

    assert violations(rendered("dev"), "quota-admits-queue") == []
    found = violations(edited(rendered("dev"), "ConfigMap", "workflow-controller-configmap", shipped_executor), "quota-admits-queue")
    assert {(v.object, v.message.split(",")[0]) for v in found} == {
        (f"Profile.kubeflow.org {team}", "its namespace's ResourceQuota admits memory " + hard)
        # each dev team keeps room for its Model Registry (680Mi: components/profiles/namespace.py registry_requests)
        # and its model router (72Mi: serving_requests) too
        for team, hard in (("vision", "269504Mi"), ("nlp", "269624Mi"), ("research", "269504Mi"))
    }
