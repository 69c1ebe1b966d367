"""A team's RayCluster (components/profiles/ray.py): ports for Istio, routes, the image set, the
elastic Kueue job, token authentication and the dashboard's token proxy."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from components.profiles.args import team_args
from components.profiles.team import team_objects
from facts.image_set import dockerfile, notebook_end, problems
from facts.versions import RAY, RAY_GPU_IMAGE, RAY_IMAGE, image
from stackmodel.config import validate
from tests.conftest import base_gke, base_kind, with_changes
from tests.support import nginx
from tests.support.teams import TEAM, objects_of


def test_ray_cluster_ports_pinned_for_istio_and_dashboard_route() -> None:
    team = {**TEAM, "ray": {"pool": "l4", "maxWorkers": 3}}
    objects = objects_of(with_changes(base_gke(), {"mlplatform:teams": [team]}))
    cluster = objects[("RayCluster", "ray")]["spec"]
    assert cluster["enableInTreeAutoscaling"] is True
    head, (worker,) = cluster["headGroupSpec"], cluster["workerGroupSpecs"]
    for params in (head["rayStartParams"], worker["rayStartParams"]):
        assert params["node-manager-port"] == "6380" and params["max-worker-port"] == "10012"
    pod = worker["template"]["spec"]
    assert pod["serviceAccountName"] == "default-editor"
    assert pod["nodeSelector"]["cloud.google.com/gke-accelerator"] == "nvidia-l4"
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}]
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "2"
    assert worker["maxReplicas"] == 3
    headless = objects[("Service", "ray-headless")]["spec"]
    ports = {p["port"] for p in headless["ports"]}
    assert {6380, 6381, 6382, 6383, 52365, 8080} | set(range(10002, 10013)) == ports
    route = objects[("VirtualService", "ray-dashboard")]["spec"]
    assert route["http"][0]["match"] == [{"uri": {"prefix": "/ray/vision/ray/"}}]
    # The dashboard through the head's token proxy, Serve straight to KubeRay's head Service.
    assert route["http"][0]["route"][0]["destination"] == {"host": "ray-dashboard-auth.vision.svc.cluster.local", "port": {"number": 8266}}
    serve = objects[("VirtualService", "ray-serve")]["spec"]
    assert serve["http"][0]["route"][0]["destination"] == {"host": "ray-head-svc.vision.svc.cluster.local", "port": {"number": 8000}}
    internal = objects[("AuthorizationPolicy", "ray-ray-internal")]["spec"]
    assert internal["rules"][0]["from"][0]["source"]["principals"] == ["cluster.local/ns/vision/sa/default-editor"]


@pytest.mark.parametrize("pool", [None, "l4"])
def test_ray_cluster_runs_the_notebook_image_sets_ray_and_python(pool: str | None) -> None:
    team = {**TEAM, "ray": {"pool": pool} if pool else {}}
    cluster = objects_of(with_changes(base_gke(), {"mlplatform:teams": [team]}))[("RayCluster", "ray")]["spec"]
    head = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]["image"]
    worker = cluster["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["image"]
    assert head == image(RAY_IMAGE)
    assert worker == image(RAY_GPU_IMAGE if pool else RAY_IMAGE)
    notebook = notebook_end(dockerfile())
    assert cluster["rayVersion"] == notebook.ray == RAY.version
    assert problems(dockerfile(), [p for p in (RAY_IMAGE, RAY_GPU_IMAGE) if image(p) in (head, worker)]) == []


ELASTIC_GATE = [{"name": "kueue.x-k8s.io/elastic-job"}]


def test_ray_cluster_is_an_elastic_kueue_job_in_the_default_queue() -> None:
    team = {**TEAM, "ray": {"pool": "l4", "maxWorkers": 3}}
    cluster = objects_of(with_changes(base_gke(), {"mlplatform:teams": [team]}))[("RayCluster", "ray")]
    # At `interactive`, which Kueue reads from the RayCluster itself (facts/priorities.py).
    assert cluster["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "default", "kueue.x-k8s.io/priority-class": "interactive"}
    assert cluster["metadata"]["annotations"] == {"kueue.x-k8s.io/elastic-job": "true"}
    assert cluster["spec"]["enableInTreeAutoscaling"] is True  # allowed: the cluster is elastic
    assert cluster["spec"]["headGroupSpec"]["template"]["spec"]["schedulingGates"] == ELASTIC_GATE
    (worker,) = cluster["spec"]["workerGroupSpecs"]
    assert worker["template"]["spec"]["schedulingGates"] == ELASTIC_GATE
    assert worker["groupName"] != "head"  # Kueue reserves the name for the head PodSet


def test_ray_cluster_without_kueue_carries_no_kueue_gate() -> None:
    """A stack with teams always has Kueue (rule teams-need-kueue); the Args alone say without."""
    config = validate(with_changes(base_gke(), {"mlplatform:teams": [{**TEAM, "ray": {"pool": "l4"}}]}), "test")
    args = dataclasses.replace(team_args(config, config.teams[0]), kueue=False)
    cluster = next(o for o in team_objects(args) if o["kind"] == "RayCluster")
    assert "labels" not in cluster["metadata"] and "annotations" not in cluster["metadata"]
    pods = [cluster["spec"]["headGroupSpec"]["template"]["spec"], cluster["spec"]["workerGroupSpecs"][0]["template"]["spec"]]
    assert all("schedulingGates" not in pod for pod in pods)  # nothing would lift it


def test_every_team_ray_cluster_authenticates_with_a_token_no_object_but_the_secret_holds() -> None:
    team = {**TEAM, "ray": {"name": "rc"}, "quota": {}}
    objects = objects_of(with_changes(base_kind(), {"mlplatform:teams": [team]}))
    cluster = objects[("RayCluster", "rc")]["spec"]
    assert cluster["authOptions"] == {"mode": "token"}  # KubeRay makes the Secret `rc`
    assert tuple(int(p) for p in cluster["rayVersion"].split(".")) >= (2, 52, 0)  # KubeRay's minimum for tokens
    assert not [o for o in objects.values() if o["kind"] == "Secret"]
    # No token, nor anything that looks like one, in what we write: only references to the Secret.
    assert "auth_token" not in json.dumps([o for o in objects.values() if o["kind"] == "ConfigMap"])
    (proxy,) = [c for c in cluster["headGroupSpec"]["template"]["spec"]["containers"] if c["name"] == "dashboard-auth"]
    assert cluster["headGroupSpec"]["template"]["spec"]["containers"][0]["name"] == "ray-head"  # KubeRay's Ray container
    assert {"name": "RAY_AUTH_TOKEN", "valueFrom": {"secretKeyRef": {"name": "rc", "key": "auth_token"}}} in proxy["env"]


def test_the_dashboard_proxy_swaps_the_gateways_token_for_the_clusters() -> None:
    """Ray reads Authorization first (ray 2.58.0 http_token_authentication.py): the proxy must
    clear the gateway's Dex token and send the cluster's as X-Ray-Authorization, substituting
    only its own variable (nginx's $host and friends stay nginx's)."""
    import re
    import shutil
    import subprocess

    team = {**TEAM, "ray": {"name": "rc"}, "quota": {}}
    objects = objects_of(with_changes(base_kind(), {"mlplatform:teams": [team]}))
    template = objects[("ConfigMap", "rc-dashboard-auth")]["data"]["default.conf.template"]
    assert 'proxy_set_header Authorization "";' in template
    assert 'proxy_set_header X-Ray-Authorization "Bearer ${RAY_AUTH_TOKEN}";' in template
    assert "proxy_pass http://127.0.0.1:8265;" in template and "listen 8266;" in template
    (proxy,) = [c for c in objects[("RayCluster", "rc")]["spec"]["headGroupSpec"]["template"]["spec"]["containers"] if c["name"] == "dashboard-auth"]
    env = {e["name"]: e for e in proxy["env"]}
    substituted = [v for v in re.findall(r"\$\{?(\w+)", template) if re.search(env["NGINX_ENVSUBST_FILTER"]["value"], v)]
    assert substituted == ["RAY_AUTH_TOKEN"]  # $http_upgrade, $host, $connection_upgrade left alone
    # What the image's entrypoint does with it (GNU envsubst, the same SHELL-FORMAT argument).
    if shutil.which("envsubst"):  # gettext's, as in the image
        envsubst = subprocess.run(["envsubst", "${RAY_AUTH_TOKEN}"], input=template, capture_output=True, text=True, env={"RAY_AUTH_TOKEN": "t0k"}, check=True)
        assert 'X-Ray-Authorization "Bearer t0k";' in envsubst.stdout and "$http_upgrade" in envsubst.stdout
    service = objects[("Service", "rc-dashboard-auth")]["spec"]
    assert service["selector"] == {"ray.io/cluster": "rc", "ray.io/node-type": "head"}
    assert service["ports"][0]["port"] == 8266
    gateway_only = objects[("AuthorizationPolicy", "rc-ray-dashboard-gateway-only")]["spec"]
    assert gateway_only["action"] == "DENY"
    assert gateway_only["rules"] == [
        {"from": [{"source": {"notPrincipals": ["cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account"]}}], "to": [{"operation": {"ports": ["8266"]}}]}
    ]



def _proxy_config_and_env() -> tuple[str, dict[str, str]]:
    """The rendered proxy template, and its container's environment with the cluster's token in
    the place of the Secret reference (the token as KubeRay makes them: letters and digits)."""
    team = {**TEAM, "ray": {"name": "rc"}, "quota": {}}
    objects = objects_of(with_changes(base_kind(), {"mlplatform:teams": [team]}))
    template = objects[("ConfigMap", "rc-dashboard-auth")]["data"]["default.conf.template"]
    (proxy,) = [c for c in objects[("RayCluster", "rc")]["spec"]["headGroupSpec"]["template"]["spec"]["containers"] if c["name"] == "dashboard-auth"]
    env = {e["name"]: e.get("value", "0123456789abcdefABCDEF0123456789") for e in proxy["env"]}
    return template, env


def test_the_dashboard_proxy_configuration_loads_in_a_real_nginx(tmp_path: Path) -> None:
    """Debian's `nginx -t` on the ConfigMap's template as the image's entrypoint renders it (GNU
    envsubst, the container's filter), in an nginx.conf that includes it inside `http {}` as the
    image's does. Its upstream is 127.0.0.1 (Ray in the same pod): nothing to resolve at load.
    Unrendered (entrypoint skipped or filter missing its variable), nginx refuses it."""
    binary = nginx.nginx_binary()
    if binary is None:
        if nginx.required_in_ci():
            pytest.fail(f"CI=true and no nginx: {nginx.INSTALL}")
        pytest.skip(f"no nginx: {nginx.INSTALL}")
    template, env = _proxy_config_and_env()
    rendered = nginx.envsubst_like_the_image(template, env)
    loaded = nginx.check(binary, nginx.main_config(tmp_path / "rendered", {"default.conf": rendered}))
    assert loaded.returncode == 0, loaded.stderr
    assert "syntax is ok" in loaded.stderr and "test is successful" in loaded.stderr
    raw = nginx.check(binary, nginx.main_config(tmp_path / "raw", {"default.conf": template}))
    assert raw.returncode != 0 and 'unknown "ray_auth_token" variable' in raw.stderr, raw.stderr

def test_the_heads_resources_come_from_the_stack_with_documented_defaults() -> None:
    def head(ray: dict[str, object]) -> dict[str, object]:
        objects = objects_of(with_changes(base_kind(), {"mlplatform:teams": [{**TEAM, "quota": {}, "ray": ray}]}))
        (container, _proxy) = objects[("RayCluster", "ray")]["spec"]["headGroupSpec"]["template"]["spec"]["containers"]
        assert container["name"] == "ray-head"
        return dict(container["resources"])

    assert head({}) == {"requests": {"cpu": "2", "memory": "8Gi"}, "limits": {"cpu": "2", "memory": "8Gi"}}
    sized = {"cpu": "500m", "memory": "3Gi"}
    assert head({"headCpu": "500m", "headMemory": "3Gi"}) == {"requests": sized, "limits": sized}


def test_a_head_size_that_is_no_quantity_is_refused_with_its_path() -> None:
    from stackmodel.config import ConfigError

    raw = with_changes(base_kind(), {"mlplatform:teams": [{**TEAM, "quota": {}, "ray": {"headMemory": "lots"}}]})
    with pytest.raises(ConfigError) as error:
        validate(raw, "test")
    assert "mlplatform:teams[0].ray.headMemory: 'lots' is not a Kubernetes quantity" in str(error.value)
