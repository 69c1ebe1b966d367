"""The full render and `stacks check`: the shipped stacks pass every rule from the mirror,
each rule fails on a render broken the way it guards against, the object counts per install
match the reviewed snapshot, and helm renders the same bytes twice."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from facts.image_set import notebook_tag
from facts.resource_types import GCP_FIREWALL
from facts.versions import (
    ISTIO,
    KUBE_PROMETHEUS_STACK,
    KUBEFLOW_MANIFESTS,
    RAY_GPU_IMAGE,
    RAY_IMAGE,
    image,
)
from plumbing.images import image_sites
from runtimes import kueue_guard
from stackmodel.config import load
from tests.support import mirror, renders, snapshots
from tests.support.renders import edited, violations, with_objects
from tooling import check as lint
from tooling import cluster_version, fullrender, schemas
from tooling.check import images
from tooling.check.kueue import resource_group_problems
from tooling.fullrender import FullRender, Rendered
from tooling.render import dump_all, manifest

REPO = Path(__file__).resolve().parents[1]
pytestmark = mirror.needed


def rendered(stack: str, image_mirror: bool = False) -> FullRender:
    """The stack's full render, shared with the other test files (tests/support/renders.py);
    `image_mirror`: of its copy with mlplatform:images.mirror set."""
    return renders.rendered(stack, image_mirror)


def test_the_image_rules_are_in_the_rule_list() -> None:
    assert {"image-tag", "image-pin", "retired-registry", "image-mirror"} <= {r.name for r in lint.RULES}


@pytest.mark.parametrize("stack", ["kind", "dev", "prod"])
def test_shipped_stack_passes_every_rule(stack: str) -> None:
    assert [str(v) for v in lint.check(rendered(stack))] == []


def test_object_counts_per_install_match_the_reviewed_snapshot() -> None:
    """A version bump shows what it changes here; `make snapshots` rewrites the file."""
    counts = {stack: fullrender.counts(rendered(stack)) for stack in snapshots.COUNTED_STACKS}
    assert yaml.safe_load(snapshots.OBJECT_COUNTS.read_text()) == counts


def test_helm_renders_every_chart_the_same_twice() -> None:
    """No chart draws random values (helm's randAlphaNum, genCA): `render --full` is repeatable.
    Each chart rendered again, with the capabilities the session's render gave it, yields the
    objects that render has (before our transforms)."""
    render = rendered("dev")
    originals: dict[str, list[dict[str, Any]]] = {}
    for o in render.objects:
        if o.upstream and o.original is not None:
            originals.setdefault(o.urn, []).append(o.original)

    def canonical(documents: Any) -> list[str]:
        return sorted(json.dumps(d, sort_keys=True) for d in documents)

    charts = [i for i in render.installs if i.kind == "helm"]
    assert charts
    for install in charts:
        before = render.plan.waits_for(install.resource) & originals.keys()
        capabilities = fullrender.api_versions(d for urn in before for d in originals[urn])
        again = schemas.parsed(fullrender.helm_template(install, capabilities, cluster_version.kubernetes_version(render.plan.config)))
        assert canonical(again) == canonical(originals[install.resource.urn]), install.label


def test_full_render_has_no_upstream_tree_missing_and_counts_every_install() -> None:
    render = rendered("kind")
    sources = {o.source for o in render.objects if o.upstream}
    assert sources == {i.label for i in render.installs}
    assert "cert-manager/cert-manager" in sources and "kubeflow-namespaces/kubeflow-namespace" in sources


def test_transforms_are_the_ones_pulumi_applies() -> None:
    """The render puts objects through the program's own transforms: our Dex users, our menu."""
    render = rendered("kind")
    dex = next(o for o in render.objects if o.obj["kind"] == "ConfigMap" and o.key[2:] == ("auth", "dex"))
    assert "lead@example.com" in dex.obj["data"]["config.yaml"]
    assert "lead@example.com" not in yaml.safe_dump(dex.original)


def _one(render: FullRender, kind: str, namespace: str, name: str | None = None) -> dict[str, Any]:
    (found,) = [
        o.obj
        for o in render.objects
        if o.obj["kind"] == kind and o.key[2] == namespace and (name is None or o.key[3] == name)
    ]
    return found


def test_dev_notebooks_get_the_platform_images_their_team_and_gang_admission() -> None:
    """What data scientists get on the rendered dev stack: the notebook form offers the
    platform's images (the CPU one the default), the Ray team's PodDefault carries its Ray
    cluster's address and mounts its bucket, and Kueue admits all or nothing."""
    render = rendered("dev")
    spawner = next(
        o.obj for o in render.objects if o.obj["kind"] == "ConfigMap" and "spawner_ui_config.yaml" in (o.obj.get("data") or {})
    )
    form = yaml.safe_load(spawner["data"]["spawner_ui_config.yaml"])["spawnerFormDefaults"]
    registry = "us-central1-docker.pkg.dev/acme-ml-dev/ml-dev"
    assert form["image"]["options"] == [f"{registry}/notebook:{notebook_tag()}", f"{registry}/notebook:{notebook_tag(gpu=True)}"]
    assert form["image"]["value"] == form["image"]["options"][0]
    assert form["configurations"]["value"] == ["team-resources", "interactive-priority"]

    ray_team = next(t for t in load("dev").teams if t.ray and t.bucket)
    defaults = _one(render, "PodDefault", ray_team.name, "team-resources")["spec"]
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in defaults["env"]}
    assert env["RAY_ADDRESS"] == env["RAY_DASHBOARD_ADDRESS"] == f"http://ray-head-svc.{ray_team.name}.svc.cluster.local:8265"
    assert env["RAY_AUTH_TOKEN"] == {"secretKeyRef": {"name": "ray", "key": "auth_token"}}
    volume, token = defaults["volumes"]
    assert volume["csi"]["driver"] == "gcsfuse.csi.storage.gke.io"
    assert volume["csi"]["volumeAttributes"]["bucketName"] == env["TEAM_BUCKET"] == f"acme-ml-dev-{ray_team.name}"
    assert token["projected"]["sources"][0]["serviceAccountToken"]["audience"] == "pipelines.kubeflow.org"
    assert defaults["volumeMounts"][0] == {"name": "team-bucket", "mountPath": "/mnt/team-bucket"}
    assert env["KF_PIPELINES_SA_TOKEN_PATH"] == f"{defaults['volumeMounts'][1]['mountPath']}/token"
    assert defaults["annotations"]["gke-gcsfuse/volumes"] == "true"

    kueue = _one(render, "ConfigMap", "kueue-system", "kueue-manager-config")
    (config,) = [yaml.safe_load(v) for v in kueue["data"].values()]
    assert config["waitForPodsReady"]["timeout"] == "20m"
    assert config["waitForPodsReady"]["blockAdmission"] is False

    for team in load("dev").teams:
        (limits,) = _one(render, "LimitRange", team.name)["spec"]["limits"]
        assert limits["defaultRequest"] == {"cpu": "1", "memory": "2Gi"}


# --- each rule fails on a render broken the way it guards against ------------------------


def test_schema_rule_catches_an_unknown_field() -> None:
    broken = edited(rendered("kind"), "Deployment", "cert-manager-webhook", lambda o: o["spec"].update(replica=1))
    found = violations(broken, "schema")
    assert [v.object for v in found] == ["Deployment.apps cert-manager/cert-manager-webhook"]


def test_schema_rule_catches_a_custom_resource_against_its_crd() -> None:
    broken = edited(rendered("kind"), "ClusterQueue", "vision", lambda o: o["spec"].update(queueingStrategy="Fastest"))
    assert [v.object for v in violations(broken, "schema")] == ["ClusterQueue.kueue.x-k8s.io vision"]


def test_duplicate_rule_catches_one_object_from_two_installs() -> None:
    render = rendered("kind")
    namespace = next(o for o in render.objects if o.obj["kind"] == "Namespace" and o.key[3] == "kubeflow-system")
    twice = with_objects(render, lambda objects: [*objects, replace(namespace, source="trainer")])
    assert [(v.object, v.source) for v in violations(twice, "duplicate")] == [("Namespace kubeflow-system", "trainer")]


def test_null_rule_catches_the_cloud_sql_address_a_render_that_keeps_the_null_would_send() -> None:
    """Before placeholders the render wrote our objects as the plan records them: the Cloud SQL
    instance's private IP, unknown under the mocks, as `addresses: [null]`."""
    render = rendered("dev")
    recorded = next(r for r in render.plan.resources if r.type.endswith(":EndpointSlice") and r.name.endswith("pipelines-db"))
    assert recorded.inputs["endpoints"] == [{"addresses": [None]}]  # what Pulumi's mocks know
    kept = with_objects(render, lambda objects: [replace(o, obj=manifest(recorded)) if o.urn == recorded.urn else o for o in objects])
    (found,) = violations(kept, "null")
    assert (found.object, found.source) == ("EndpointSlice.discovery.k8s.io kubeflow/pipelines-db", "pipelines")
    assert found.message.startswith("endpoints[0].addresses[0]: null where the schema wants a string (list item)")
    assert violations(render, "null") == []


CLOUD_SQL_ADDRESS = {
    "apiVersion": "discovery.k8s.io/v1",
    "kind": "EndpointSlice",
    "namespace": "kubeflow",
    "name": "pipelines-db",
    "field": "endpoints[0].addresses[0]",
    "placeholder": "192.0.2.1",
}
"""The Cloud SQL instance's private IP (components/pipelines.py database_service), known only
once the instance exists: a documentation address (RFC 5737) in the offline render."""


@pytest.mark.parametrize(("stack", "unknowns"), [("kind", []), ("dev", [CLOUD_SQL_ADDRESS]), ("prod", [CLOUD_SQL_ADDRESS])])
def test_values_only_the_cloud_knows_are_placeholders_listed_in_the_index(stack: str, unknowns: list[dict[str, str]], tmp_path: Path) -> None:
    """A new unknown shows up here (and in `render --full`'s index.yaml), never as a null."""
    render = rendered(stack)
    assert fullrender.unknown_index(render) == unknowns
    slice_only = with_objects(render, lambda objects: [o for o in objects if o.obj["kind"] == "EndpointSlice"])
    index = yaml.safe_load(fullrender.write(slice_only, tmp_path)[1].read_text())
    assert index["unknown"] == unknowns
    if unknowns:
        (endpoint,) = _one(render, "EndpointSlice", "kubeflow", "pipelines-db")["endpoints"]
        assert endpoint["addresses"] == ["192.0.2.1"]


def test_render_full_says_which_values_are_placeholders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tooling import cli

    slice_only = with_objects(rendered("dev"), lambda objects: [o for o in objects if o.obj["kind"] == "EndpointSlice"])
    monkeypatch.setattr(cli, "full_render_for", lambda *args: slice_only)
    assert cli.main(["render", "dev", "--full", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().err == (
        "note: EndpointSlice kubeflow/pipelines-db endpoints[0].addresses[0] is known only once the cloud resource exists: "
        "platform.yaml has the placeholder '192.0.2.1' (index.yaml lists it under unknown)\n"
    )


def test_null_rule_catches_a_null_label_value_in_an_upstream_object_and_lets_a_null_field_mean_unset() -> None:
    render = rendered("kind")
    assert any(o.upstream and '"annotations": null' in json.dumps(o.obj) for o in render.objects)  # unset: fine
    broken = edited(render, "Deployment", "cert-manager-webhook", lambda o: o["metadata"]["labels"].update(team=None))
    assert [(v.object, v.message.split(";")[0]) for v in violations(broken, "null")] == [
        ("Deployment.apps cert-manager/cert-manager-webhook", "metadata.labels.team: null where the schema wants a string (map value)")
    ]


def test_order_rule_catches_a_custom_resource_that_does_not_wait_for_its_crd() -> None:
    render = rendered("kind")
    runtime = next(o for o in render.objects if o.obj["kind"] == "ClusterTrainingRuntime")
    plan = render.plan
    record = plan.get(runtime.urn)
    detached = replace(record, dependencies=())
    broken = replace(render, plan=replace(plan, resources=[detached if r.urn == record.urn else r for r in plan.resources]))
    found = [v for v in violations(broken, "order") if v.object.endswith(runtime.key[3])]
    assert found and "does not wait for its CRD" in found[0].message


def test_order_rule_catches_a_namespace_nothing_creates() -> None:
    broken = edited(rendered("kind"), "ConfigMap", "dex", lambda o: o["metadata"].update(namespace="nowhere"))
    assert [v.message for v in violations(broken, "order")] == ["namespace nowhere is created by nothing in the platform"]


def test_control_plane_reach_rule_catches_a_network_policy_that_drops_the_api_server() -> None:
    """kubeflow-system's `trainer-webhook` policy selects a label the chart's pods lack unless we add it."""

    def unlabel(obj: dict[str, Any]) -> None:
        del obj["spec"]["template"]["metadata"]["labels"]["service.istio.io/canonical-name"]

    broken = edited(rendered("kind"), "Deployment", "kubeflow-trainer-controller-manager", unlabel)
    found = violations(broken, "control-plane-reach")
    assert found and all("drop the API server's traffic to port 9443" in v.message for v in found)


def test_control_plane_reach_rule_catches_a_port_the_private_cluster_firewall_keeps_closed() -> None:
    render = rendered("dev")
    plan = render.plan
    firewall = plan.of_type(GCP_FIREWALL)[0]
    closed = replace(firewall, inputs={**firewall.inputs, "allows": [{"protocol": "tcp", "ports": ["8443", "9443", "15017"]}]})
    broken = replace(render, plan=replace(plan, resources=[closed if r.urn == firewall.urn else r for r in plan.resources]))
    messages = {v.message for v in violations(broken, "control-plane-reach")}
    assert any("poddefaults-webhook-service" in m and "does not open port 4443" in m for m in messages)


def test_load_balancer_rule_catches_the_istio_system_policy_alone() -> None:
    render = rendered("prod")
    without = with_objects(render, lambda objects: [o for o in objects if o.key[3] != "allow-google-load-balancer"])
    found = violations(without, "load-balancer")
    assert {v.message for v in found} >= {
        "NetworkPolicies in istio-system drop 130.211.0.0/22 to port 15021",
        "NetworkPolicies in istio-system drop 35.191.0.0/16 to port 8080",
    }


def test_monitor_rule_catches_a_selector_that_misses_a_monitor() -> None:
    def narrow(obj: dict[str, Any]) -> None:
        obj["spec"]["serviceMonitorSelector"] = {"matchLabels": {"team": "nobody"}}

    broken = edited(rendered("kind"), "Prometheus", "kube-prometheus-stack-prometheus", narrow)
    objects = [v.object for v in violations(broken, "monitor")]
    assert "ServiceMonitor.monitoring.coreos.com kueue-system/kueue-controller-manager-metrics-monitor" in objects


def test_monitor_rule_catches_a_monitor_with_no_prometheus() -> None:
    broken = with_objects(rendered("kind"), lambda objects: [o for o in objects if o.obj["kind"] != "Prometheus"])
    assert violations(broken, "monitor")


def test_critical_priority_rule_catches_dcgm_without_its_quota() -> None:
    render = rendered("dev")
    without = with_objects(render, lambda objects: [o for o in objects if o.obj["kind"] != "ResourceQuota" or o.key[2] != "dcgm-exporter"])
    assert [v.object for v in violations(without, "critical-priority")] == ["DaemonSet.apps dcgm-exporter/dcgm-exporter"]


def _container_image(obj: dict[str, Any], reference: str) -> None:
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = reference


def reloader_tag() -> str:
    """The config reloader's tag the pin table gives kube-prometheus-stack."""
    return KUBE_PROMETHEUS_STACK.image_tags()["prometheus-operator/prometheus-config-reloader"]


@pytest.mark.parametrize(
    ("reference", "why"),
    [
        ("quay.io/jetstack/cert-manager-webhook:latest", "is on the floating tag 'latest'"),
        ("quay.io/jetstack/cert-manager-webhook", "has no tag"),
        ("quay.io/jetstack/cert-manager-webhook:v1", "is on 'v1', a bare version"),
    ],
)
def test_image_tag_rule_names_the_object_the_image_and_the_fix(reference: str, why: str) -> None:
    broken = edited(rendered("kind"), "Deployment", "cert-manager-webhook", lambda o: _container_image(o, reference))
    (found,) = violations(broken, "image-tag")
    assert found.object == "Deployment.apps cert-manager/cert-manager-webhook"
    assert f"spec.template.spec.containers[0].image: image {reference!r} {why}" in found.message
    assert found.message.endswith("pin a release tag, or a digest (@sha256:...) for a tag that moves")


def test_image_tag_rule_reads_images_an_operator_starts() -> None:
    """The config reloader named in the Prometheus Operator's arguments counts like a container."""

    def floating(obj: dict[str, Any]) -> None:
        args = obj["spec"]["template"]["spec"]["containers"][0]["args"]
        args[:] = [re.sub(r":[^:]+$", ":latest", a) if a.startswith("--prometheus-config-reloader=") else a for a in args]

    broken = edited(rendered("kind"), "Deployment", "kube-prometheus-stack-operator", floating)
    (found,) = violations(broken, "image-tag")
    assert "--prometheus-config-reloader: image 'quay.io/prometheus-operator/prometheus-config-reloader:latest'" in found.message


def test_a_digest_pins_any_tag() -> None:
    reference = "quay.io/jetstack/cert-manager-webhook:latest@sha256:" + "0" * 64
    broken = edited(rendered("kind"), "Deployment", "cert-manager-webhook", lambda o: _container_image(o, reference))
    assert violations(broken, "image-tag") == []


def test_the_mesh_runs_what_the_istio_pin_says_from_docker_hub() -> None:
    """In every shipped stack's render no image or hub names a retired Istio registry (text of
    every object, not the inventory), istiod runs the Istio pin, and so do the sidecars."""
    for stack in ("kind", "dev", "prod"):
        render = rendered(stack)
        text = "\n".join(json.dumps(o.obj) for o in render.objects if o.obj.get("kind") != "CustomResourceDefinition")
        assert "gcr.io/istio-release" not in text and "registry.istio.io" not in text, stack
        istiod = _one(render, "Deployment", "istio-system", "istiod")
        (container,) = istiod["spec"]["template"]["spec"]["containers"]
        assert container["image"] == f"docker.io/istio/pilot:{ISTIO.runs}"
        injector = _one(render, "ConfigMap", "istio-system", "istio-sidecar-injector")
        values = json.loads(injector["data"]["values"])["global"]
        assert (values["hub"], values["tag"]) == ("docker.io/istio", ISTIO.runs)
    original = next(o.original for o in rendered("kind").objects if o.key[1:] == ("Deployment", "istio-system", "istiod"))
    assert original is not None and "registry.istio.io/release/pilot:" in json.dumps(original), "the tree still names it"


def test_image_pin_rule_fails_a_pin_bumped_without_the_images(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ISTIO.patch is not None
    bumped = replace(ISTIO, patch=replace(ISTIO.patch, release="1.31.0"))
    monkeypatch.setattr(images, "PINS", tuple(bumped if p is ISTIO else p for p in images.PINS))
    found = violations(rendered("kind"), "image-pin")
    objects = {v.object for v in found}
    assert {"Deployment.apps istio-system/istiod", "DaemonSet.apps kube-system/istio-cni-node", "ConfigMap istio-system/istio-sidecar-injector"} <= objects
    istiod = next(v for v in found if v.object == "Deployment.apps istio-system/istiod")
    assert f"image 'docker.io/istio/pilot:{ISTIO.runs}' is not at the pinned tag 1.31.0 (pin table: istio {ISTIO.version} (1.31.0))" in istiod.message
    assert "bump the pin in facts/versions.py with the install, or the install with the pin" in istiod.message


def test_image_pin_rule_fails_images_bumped_without_the_pin() -> None:
    broken = edited(rendered("kind"), "Deployment", "istiod", lambda o: _container_image(o, "docker.io/istio/pilot:1.31.0"))
    (found,) = violations(broken, "image-pin")
    assert found.object == "Deployment.apps istio-system/istiod" and f"not at the pinned tag {ISTIO.runs}" in found.message


def test_image_pin_rule_covers_charts_and_our_own_images() -> None:
    def old_kueue(obj: dict[str, Any]) -> None:
        _container_image(obj, "registry.k8s.io/kueue/kueue:v0.19.1")

    kueue = violations(edited(rendered("kind"), "Deployment", "kueue-controller-manager", old_kueue), "image-pin")
    assert [v.object for v in kueue] == ["Deployment.apps kueue-system/kueue-controller-manager"]

    def old_ray(obj: dict[str, Any]) -> None:
        obj["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["image"] = "rayproject/ray:2.45.0-py311"

    ray = violations(edited(rendered("kind"), "RayCluster", "ray", old_ray), "image-pin")
    assert [v.object for v in ray] == ["RayCluster.ray.io nlp/ray"]
    assert f"{RAY_IMAGE.version} or {RAY_GPU_IMAGE.version}" in ray[0].message


def test_image_pin_rule_fails_a_deployed_image_the_render_lost() -> None:
    without_cni = with_objects(rendered("kind"), lambda objects: [o for o in objects if o.key[3] != "istio-cni-node"])
    (found,) = violations(without_cni, "image-pin")
    assert (found.object, found.source) == (f"pin istio {ISTIO.version}", "facts/versions.py")
    assert found.message.startswith("deploys istio/install-cni, which nothing in the render runs")


def test_retired_registry_rule_catches_an_image_and_a_hub_that_escaped_the_rewrite() -> None:
    """The tree's own istiod and injector values (Istio ISTIO.version, the tree's), before the platform's transforms."""
    render = rendered("kind")

    def untransformed(objects: list[Rendered]) -> list[Rendered]:
        names = {("Deployment", "istiod"), ("ConfigMap", "istio-sidecar-injector")}
        return [replace(o, obj=o.original) if (o.key[1], o.key[3]) in names and o.original else o for o in objects]

    found = violations(with_objects(render, untransformed), "retired-registry")
    messages = {(v.object, v.message.split(" is from ")[0]) for v in found}
    assert messages == {
        ("Deployment.apps istio-system/istiod", f"spec.template.spec.containers[0].image: image 'registry.istio.io/release/pilot:{ISTIO.version}'"),
        ("ConfigMap istio-system/istio-sidecar-injector", "data.values global hub: hub 'registry.istio.io/release'"),
        ("ConfigMap istio-system/istio-sidecar-injector", f"data.values global.proxy.image (global.hub, global.tag): image 'registry.istio.io/release/proxyv2:{ISTIO.version}'"),
        ("ConfigMap istio-system/istio-sidecar-injector", f"data.values global.proxy_init.image (global.hub, global.tag): image 'registry.istio.io/release/proxyv2:{ISTIO.version}'"),
    }
    istiod = next(v.message for v in found if v.object.startswith("Deployment"))
    assert "is from registry.istio.io/release, which stops serving images on 2027-01-01; use docker.io/istio" in istiod
    assert all("bypassed it" in v.message for v in found)


def test_busybox_of_the_injector_template_is_pinned() -> None:
    injector = _one(rendered("kind"), "ConfigMap", "istio-system", "istio-sidecar-injector")
    assert "image: library/busybox:1.28.4" in injector["data"]["config"] and "busybox:1.28\n" not in injector["data"]["config"]


def test_image_list_names_every_platform_image_once() -> None:
    from tooling.images import platform_images

    listed = [i.image for i in platform_images(rendered("dev"))]
    assert listed == sorted(set(listed))
    names = {i.split(":")[0] for i in listed}
    assert {
        "quay.io/prometheus/prometheus",  # a Prometheus resource the operator turns into pods
        "quay.io/prometheus/alertmanager",
        "filebrowser/filebrowser",  # the volumes web app's PVC viewer
        "tensorflow/tensorflow",  # the tensorboard controller's ConfigMap
    } <= names
    codeserver = "kubeflow/kubeflow/notebook-servers/codeserver-python"
    assert {
        "registry.k8s.io/kueue/kueue:v0.19.2",
        f"quay.io/prometheus-operator/prometheus-config-reloader:{reloader_tag()}",  # an operator argument
        f"docker.io/istio/proxyv2:{ISTIO.runs}",  # the injector's sidecar
        image(RAY_GPU_IMAGE),  # a RayCluster's workers
        f"ghcr.io/{codeserver}:{KUBEFLOW_MANIFESTS.image_tags()[codeserver]}",  # offered by the notebook form
        "nvcr.io/nvidia/jax:25.10-py3",  # a training runtime
    } <= set(listed)
    assert not [i for i in listed if "curlimages" in i], "Grafana downloads no dashboard"


# --- the image mirror: a copy of the dev stack with mlplatform:images.mirror ----------------

REGISTRY_NAME = re.compile(r"(?<![\w./-])((?:[a-z0-9-]+\.)+(?:io|com|dev|org|net)(?::\d+)?/[a-z0-9][\w./:@-]*)")


def test_with_an_image_mirror_everything_the_cluster_pulls_comes_from_it() -> None:
    """Read from the render's text, not the inventory: every `image:` field, and every
    registry-qualified name in any other field (hubs, arguments, ConfigMaps, the form)."""
    render = rendered("dev", image_mirror=True)
    mirror = renders.IMAGE_MIRROR
    text = dump_all([o.obj for o in render.objects if o.obj.get("kind") != "CustomResourceDefinition"])
    fields = re.findall(r"^\s*-?\s*image: (\S+)$", text, re.MULTILINE)
    assert len(fields) > 40 and [f for f in fields if not f.startswith(f"{mirror}/")] == []
    named = {m for m in REGISTRY_NAME.findall(text.replace("\\n", "\n")) if re.search(r":[\w.-]+$", m) or m.endswith("/istio")}
    outside = sorted(n for n in named if not n.startswith(f"{mirror}/") and not mirror.startswith(n))
    assert outside == []
    assert {f"{mirror}/docker.io/istio", f"{mirror}/quay.io/prometheus-operator/prometheus-config-reloader:{reloader_tag()}"} <= named
    # Docker Hub short names the tree writes outside `image:` fields, by their keys.
    assert re.search(rf"TENSORBOARD_IMAGE: {re.escape(mirror)}/docker.io/tensorflow/tensorflow:\S+\n", text)
    assert re.search(rf"name: VOLUME_VIEWER_IMAGE\n\s+value: {re.escape(mirror)}/docker.io/filebrowser/filebrowser:\S+\n", text)
    assert lint.check(render) == []


def test_the_copy_list_is_the_render_images_once_each() -> None:
    from tooling.images import copy_list

    render = rendered("dev", image_mirror=True)
    mirror = renders.IMAGE_MIRROR
    pairs = copy_list(render)
    everything = {site.reference for o in render.objects for site in image_sites(o.obj) if not site.hub}
    assert sorted(destination for _, destination in pairs) == sorted(everything)
    assert len({d for _, d in pairs}) == len(pairs)
    for source, destination in pairs:
        assert destination == f"{mirror}/{source}" and not source.startswith(mirror)
    assert (f"docker.io/istio/pilot:{ISTIO.runs}", f"{mirror}/docker.io/istio/pilot:{ISTIO.runs}") in pairs


def test_images_command_prints_pairs_json_and_refuses_a_copy_list_without_a_mirror(capsys: pytest.CaptureFixture[str]) -> None:
    from tooling.cli import EXIT_CONFIG_ERROR, images_command

    assert images_command(rendered("dev", image_mirror=True), copy_list=True, as_json=False) == 0
    out, err = capsys.readouterr()
    first = out.splitlines()[0].split(" ")
    assert len(first) == 2 and first[1] == f"{renders.IMAGE_MIRROR}/{first[0]}" and "images to copy into" in err
    assert images_command(rendered("dev", image_mirror=True), copy_list=False, as_json=True) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["mirror"] == renders.IMAGE_MIRROR
    pilot = next(i for i in document["images"] if i["source"] == f"docker.io/istio/pilot:{ISTIO.runs}")
    assert pilot["destination"] == pilot["image"] and "Deployment.apps istio-system/istiod" in pilot["objects"]
    assert images_command(rendered("dev"), copy_list=True, as_json=False) == EXIT_CONFIG_ERROR
    assert "mlplatform:images.mirror is not set" in capsys.readouterr().err


def test_image_mirror_rule_names_an_image_that_bypasses_the_mirror() -> None:
    render = rendered("dev", image_mirror=True)
    broken = edited(render, "Deployment", "istiod", lambda o: _container_image(o, f"docker.io/istio/pilot:{ISTIO.runs}"))
    (found,) = violations(broken, "image-mirror")
    assert found.object == "Deployment.apps istio-system/istiod"
    assert f"is not pulled through the mirror {renders.IMAGE_MIRROR}; it should be '{renders.IMAGE_MIRROR}/docker.io/istio/pilot:{ISTIO.runs}'" in found.message


def test_kueue_rule_catches_an_autoscaling_ray_cluster_that_is_not_elastic() -> None:
    def not_elastic(obj: dict[str, Any]) -> None:
        obj["metadata"]["annotations"].pop("kueue.x-k8s.io/elastic-job")

    broken = edited(rendered("kind"), "RayCluster", "ray", not_elastic)
    assert [v.object for v in violations(broken, "kueue")] == ["RayCluster.ray.io nlp/ray"]


@pytest.mark.parametrize(("name", "source"), [("jobset-controller", "jobset/jobset"), ("kuberay-operator", "kuberay/kuberay-operator")])
def test_kueue_rule_catches_a_controller_the_owner_guard_would_refuse(name: str, source: str) -> None:
    def renamed(obj: dict[str, Any]) -> None:
        obj["spec"]["template"]["spec"]["serviceAccountName"] = "renamed"

    found = violations(edited(rendered("dev"), "Deployment", name, renamed), "kueue")
    assert [(v.source, v.message.split(",")[0]) for v in found] == [(source, f"runs as system:serviceaccount:{source.split('/')[0]}-system:renamed")]


def test_kueue_rule_catches_a_kueue_controller_the_gate_guard_would_refuse() -> None:
    """Renamed, Kueue's controller could not lift its own gate: no queued pod would start."""

    def renamed(obj: dict[str, Any]) -> None:
        obj["spec"]["template"]["spec"]["serviceAccountName"] = "renamed"

    found = violations(edited(rendered("dev"), "Deployment", "kueue-controller-manager", renamed), "kueue")
    assert [(v.source, v.message.split(",")[0]) for v in found] == [("kueue/kueue", "runs as system:serviceaccount:kueue-system:renamed")]
    assert "kueue-admission-gate does not let lift Kueue's scheduling gate" in found[0].message


def test_kueue_rule_catches_a_queue_on_a_missing_flavor() -> None:
    broken = with_objects(rendered("dev"), lambda objects: [o for o in objects if not (o.obj["kind"] == "ResourceFlavor" and o.key[3] == "l4")])
    assert {v.message for v in violations(broken, "kueue")} == {"ResourceFlavor l4 does not exist"}


def _group(flavors: dict[str, list[str]], covered: list[str] | None = None) -> dict[str, Any]:
    """A resource group as Kueue's test wrapper MakeFlavorQuotas(...).Resource(...) builds it:
    coveredResources from the first flavor's resources unless given."""
    first = next(iter(flavors.values()))
    return {
        "coveredResources": covered or first,
        "flavors": [{"name": name, "resources": [{"name": r, "nominalQuota": "0"} for r in resources]} for name, resources in flavors.items()],
    }


# kueue v0.19.2 pkg/webhooks/clusterqueue_webhook_test.go TestValidateClusterQueue: each case and
# the one error Kueue's webhook gives it.
@pytest.mark.parametrize(
    ("case", "groups", "found"),
    [
        (
            "resources in a flavor in different order",
            [_group({"alpha": ["cpu", "memory"], "beta": ["memory", "cpu"]})],
            ["resourceGroups[0]: flavor beta lists ['memory', 'cpu'], not the group's coveredResources ['cpu', 'memory'] in order"],
        ),
        (
            "resource in more than one resource group",
            [_group({"alpha": ["cpu", "memory"]}), _group({"beta": ["memory"]})],
            ["resourceGroups[1]: resource memory is covered by another group too (Kueue refuses a duplicate)"],
        ),
        (
            "flavor in more than one resource group",
            [_group({"alpha": ["cpu"], "beta": ["cpu"]}), _group({"beta": ["memory"]})],
            ["resourceGroups[1]: flavor beta is in another group too (Kueue refuses a duplicate)"],
        ),
        (
            "several resource groups (valid)",
            [_group({"alpha": ["cpu", "memory"], "beta": ["cpu", "memory"]}), _group({"gamma": ["example.com/gpu"], "omega": ["example.com/gpu"]})],
            [],
        ),
    ],
)
def test_kueue_rule_refuses_the_resource_groups_kueues_webhook_refuses(case: str, groups: list[dict[str, Any]], found: list[str]) -> None:
    assert list(resource_group_problems(groups)) == found, case


def test_kueue_rule_catches_a_queue_whose_flavor_names_a_resource_its_group_does_not_cover() -> None:
    def gpu_first(obj: dict[str, Any]) -> None:  # prod's queues: one group (a topology-aware pool)
        flavor = obj["spec"]["resourceGroups"][0]["flavors"][1]
        flavor["resources"] = [flavor["resources"][2], *flavor["resources"][:2]]

    found = violations(edited(rendered("prod"), "ClusterQueue", "vision", gpu_first), "kueue")
    assert [v.message for v in found] == [
        "resourceGroups[0]: flavor l4 lists ['nvidia.com/gpu', 'cpu', 'memory'], not the group's coveredResources ['cpu', 'memory', 'nvidia.com/gpu'] in order"
    ]


# --- sharing a cohort and the priority classes (issue 42, docs/teams.md "Sharing GPUs") -------------


def test_the_dev_renders_team_queues_reclaim_within_their_cohort_with_the_stack_files_weights() -> None:
    """tests/stacks/Pulumi.dev.yaml: nlp (weight 2) and research (the default, 1) share cohort
    research; vision is alone. Kueue's configuration turns fair sharing on."""
    queues = {o.key[3]: o.obj["spec"] for o in rendered("dev").objects if o.obj["kind"] == "ClusterQueue"}
    assert {name: (spec.get("cohortName"), spec.get("fairSharing")) for name, spec in queues.items()} == {
        "vision": (None, None),
        "nlp": ("research", {"weight": "2"}),
        "research": ("research", {"weight": "1"}),
    }
    assert all(spec["preemption"] == {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"} for spec in queues.values())
    config_map = _one(rendered("dev"), "ConfigMap", "kueue-system", "kueue-manager-config")
    config = yaml.safe_load(config_map["data"]["controller_manager_config.yaml"])
    assert config["fairSharing"] == {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}


def _kueue_config_edited(change: Any) -> FullRender:
    def edit(obj: dict[str, Any]) -> None:
        config = yaml.safe_load(obj["data"]["controller_manager_config.yaml"])
        change(config)
        obj["data"]["controller_manager_config.yaml"] = yaml.safe_dump(config)

    return edited(rendered("dev"), "ConfigMap", "kueue-manager-config", edit)


def test_cohort_sharing_rule_catches_a_queue_that_never_takes_back_what_it_lends() -> None:
    def no_reclaim(obj: dict[str, Any]) -> None:
        del obj["spec"]["preemption"]["reclaimWithinCohort"]  # Kueue's default: Never

    found = violations(edited(rendered("dev"), "ClusterQueue", "research", no_reclaim), "cohort-sharing")
    assert [(v.object, v.message.split(":")[0]) for v in found] == [
        ("ClusterQueue.kueue.x-k8s.io research", "it lends its quota to cohort research and never takes it back (preemption.reclaimWithinCohort Never)")
    ]


def test_cohort_sharing_rule_catches_weights_kueue_ignores_without_fair_sharing() -> None:
    found = violations(_kueue_config_edited(lambda config: config.pop("fairSharing")), "cohort-sharing")
    assert sorted((v.object, v.message.split(":")[0]) for v in found) == [
        ("ClusterQueue.kueue.x-k8s.io nlp", "fairSharing.weight 2, and Kueue's configuration has no fairSharing"),
        ("ClusterQueue.kueue.x-k8s.io research", "fairSharing.weight 1, and Kueue's configuration has no fairSharing"),
    ]


def test_cohort_sharing_rule_catches_borrow_within_cohort_under_fair_sharing() -> None:
    def classic(obj: dict[str, Any]) -> None:  # as the queues are with kueue.fairSharing false
        obj["spec"]["preemption"]["borrowWithinCohort"] = {"policy": "LowerPriority", "maxPriorityThreshold": -100}

    found = violations(edited(rendered("dev"), "ClusterQueue", "nlp", classic), "cohort-sharing")
    assert [v.message.split(":")[0] for v in found] == ["preemption.borrowWithinCohort works only with Kueue's classic preemption, and its configuration has fairSharing"]


def test_cohort_sharing_rule_catches_a_borrowing_limit_beyond_the_cohort_and_one_without_a_cohort() -> None:
    def beyond(obj: dict[str, Any]) -> None:  # research lends nlp 4 L4s
        obj["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0]["borrowingLimit"] = 6

    found = violations(edited(rendered("dev"), "ClusterQueue", "nlp", beyond), "cohort-sharing")
    assert [v.message.split(":")[0] for v in found] == ["flavor l4 nvidia.com/gpu"]
    assert "borrowingLimit 6 is more than the other queues of cohort research lend (4)" in found[0].message

    def alone(obj: dict[str, Any]) -> None:
        obj["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["borrowingLimit"] = "8"

    found = violations(edited(rendered("dev"), "ClusterQueue", "vision", alone), "cohort-sharing")
    assert [v.message for v in found] == ["flavor default cpu: a borrowingLimit without a cohort, which Kueue's webhook refuses; remove it"]


def test_priority_classes_rule_catches_a_workload_class_and_a_pod_class_that_do_not_exist() -> None:
    def urgent(obj: dict[str, Any]) -> None:
        obj["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "urgent"

    found = violations(edited(rendered("dev"), "RayCluster", "ray", urgent), "priority-classes")
    assert [(v.object, v.message.split(",")[0]) for v in found] == [
        ("RayCluster.ray.io nlp/ray", "labels its workloads kueue.x-k8s.io/priority-class: urgent")
    ]
    assert "(it has batch, interactive, preemptible)" in found[0].message
    without_batch = with_objects(rendered("dev"), lambda objects: [o for o in objects if not (o.obj["kind"] == "PriorityClass" and o.key[3] == "batch")])
    found = violations(without_batch, "priority-classes")
    assert {v.message for v in found} == {"its pods name PriorityClass batch, which the platform does not create: the API server refuses them"}
    assert {v.object.split()[0] for v in found} == {"ClusterTrainingRuntime.trainer.kubeflow.org"}


def test_priority_classes_rule_reads_the_class_argo_gives_every_pipeline_step() -> None:
    def renamed(obj: dict[str, Any]) -> None:
        obj["data"]["workflowDefaults"] = obj["data"]["workflowDefaults"].replace("priority-class: batch", "priority-class: training")

    found = violations(edited(rendered("kind"), "ConfigMap", "workflow-controller-configmap", renamed), "priority-classes")
    assert [v.message.split(",")[0] for v in found] == ["labels its workloads kueue.x-k8s.io/priority-class: training"]


def test_upstream_secret_rule_catches_the_release_cookie_secret() -> None:
    render = rendered("kind")
    proxy = next(o for o in render.objects if o.obj["kind"] == "Secret" and o.key[2] == "oauth2-proxy")
    assert proxy.original is not None
    unreplaced = with_objects(render, lambda objects: [replace(o, obj=o.original) if o is proxy else o for o in objects])  # type: ignore[arg-type]
    keys = sorted(v.message.split()[0] for v in violations(unreplaced, "upstream-secret"))
    assert keys == ["client-secret", "cookie-secret"]


@pytest.mark.parametrize("stack", ["kind", "dev", "prod"])
def test_full_render_matches_the_golden_snapshot(stack: str) -> None:
    """Every object of the full render, normalized, by digest (full-render/<stack>/index.yaml);
    a change shows the diff of the files that hold it (tests/support/snapshots.py). Review it,
    then `make snapshots`."""
    render = rendered(stack)
    golden = snapshots.read_index(stack)
    today = snapshots.index(snapshots.snapshot(render), render)
    changed = sorted(k for k in golden.keys() | today.keys() if golden.get(k) != today.get(k))
    assert not changed, f"{len(changed)} objects differ from full-render/{stack}/:\n" + snapshots.differences(stack, render, changed)
    assert list(golden) == list(today), "same objects, different apply order"


@pytest.mark.parametrize("stack", ["kind", "dev", "prod"])
def test_the_snapshot_files_hold_what_the_index_says(stack: str) -> None:
    """The YAML a reviewer reads is what the index digests: each file's objects, in order, and
    no file the index does not name."""
    folder = snapshots.FULL_RENDERS / stack
    listed: dict[str, list[str]] = {}
    for entry in snapshots.read_index(stack).values():
        name, digest = entry.split(" ")
        listed.setdefault(name, []).append(digest)
    files = {str(p.relative_to(folder)) for p in folder.rglob("*.yaml")} - {snapshots.INDEX}
    assert files == set(listed)
    for name, digests in listed.items():
        objects = list(yaml.load_all((folder / name).read_text(), Loader=yaml.CSafeLoader))
        assert [snapshots.object_digest(o) for o in objects] == digests, name


def test_the_full_render_reports_each_install_as_it_is_done() -> None:
    """A large stack renders for a while: one progress line per install, counted."""
    from plumbing.sources import mirror_sources
    from stackmodel.config import validate
    from tests.conftest import base_kind, with_changes
    from tooling.plan import evaluate

    only_jobset = {k: {"enabled": False} for k in ("certManager", "istio", "kubeflow", "trainer", "kuberay", "kueue")}
    raw = with_changes(base_kind(), {"mlplatform:components": {**base_kind()["mlplatform:components"], **only_jobset}})
    config = validate(raw, "test").model_copy(update={"sources": mirror_sources(mirror.MIRROR)})
    lines: list[str] = []
    render = fullrender.full_render(evaluate(config, "test"), progress=lines.append)
    count = len([o for o in render.objects if o.upstream])
    # "(cached)": the run's render cache had JobSet's chart with these inputs (another test rendered it)
    assert lines in ([f"[1/1] helm jobset/jobset: {count} objects"], [f"[1/1] helm jobset/jobset: {count} objects (cached)"])


@pytest.mark.parametrize("stack", ["kind", "dev", "prod"])
def test_full_render_ray_clusters_use_tokens_and_every_team_binds_the_kueue_guard(stack: str) -> None:
    """What the cluster receives: every team RayCluster with token authentication and the
    dashboard route through its token proxy; with GPU runtimes, the guard in every team namespace."""
    render = rendered(stack)
    objects = [o.obj for o in render.objects]
    teams = [t.name for t in load(stack).teams]
    clusters = [o for o in objects if o["kind"] == "RayCluster"]
    assert clusters or stack == "prod"
    for cluster in clusters:
        assert cluster["spec"]["authOptions"] == {"mode": "token"}
        containers = [c["name"] for c in cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"]]
        assert containers[0] == "ray-head" and "dashboard-auth" in containers
    guard = kueue_guard.TRAINJOB_GPU_POLICY
    policies = [o for o in objects if o["kind"] == "ValidatingAdmissionPolicy" and o["metadata"]["name"] == guard]
    bindings = {
        o["spec"]["matchResources"]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]: o
        for o in objects
        if o["kind"] == "ValidatingAdmissionPolicyBinding" and o["spec"]["policyName"] == guard
    }
    if stack == "kind":  # no GPU pools, no GPU runtimes to guard
        assert policies == [] and bindings == {}
        return
    (policy,) = policies
    assert sorted(bindings) == sorted(teams)
    assert {b["spec"]["policyName"] for b in bindings.values()} == {policy["metadata"]["name"]}


# --- serving (tooling/check/serving.py) ------------------------------------------------------


def test_serving_gpu_runtime_rule_catches_a_runtime_off_its_pool_and_one_larger_than_a_node() -> None:
    """dev's l4 pool is g2-standard-24: two L4s a node (facts/gpu_catalog.py)."""

    def elsewhere(obj: dict[str, Any]) -> None:
        obj["spec"]["nodeSelector"] = {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}

    def larger(obj: dict[str, Any]) -> None:
        for key in ("requests", "limits"):
            obj["spec"]["containers"][0]["resources"][key]["nvidia.com/gpu"] = "4"

    render = rendered("dev")
    assert not violations(render, "serving-gpu-runtime")
    [off] = violations(edited(render, "ClusterServingRuntime", "kserve-vllm-l4", elsewhere), "serving-gpu-runtime")
    assert off.object == "ClusterServingRuntime.serving.kserve.io kserve-vllm-l4"
    assert "selects no GPU pool of the stack (pools: l4)" in off.message
    [big] = violations(edited(render, "ClusterServingRuntime", "kserve-huggingface-l4", larger), "serving-gpu-runtime")
    assert "asks for 4 nvidia.com/gpu on pool l4, whose nodes (g2-standard-24) have 2" in big.message


def test_team_route_role_check_rule_catches_a_route_into_a_team_namespace_outside_the_team_routes() -> None:
    def widen(obj: dict[str, Any]) -> None:
        obj["spec"]["http"][0]["match"] = [{"uri": {"prefix": "/models/nlp/"}}, {"uri": {"regex": "/serving/nlp/.*"}}]

    render = rendered("dev")
    assert not violations(render, "team-route-role-check")
    broken = edited(render, "VirtualService", "model-router", widen)
    found = [v for v in violations(broken, "team-route-role-check") if v.object.endswith("nlp/model-router")]
    assert [v.message.split(" of the Kubeflow gateway")[0] for v in found] == ["routes prefix '/models/nlp/'", "routes regex '/serving/nlp/.*'"]
    assert "/serving/nlp/" in found[0].message


def test_control_plane_reach_judges_kserves_and_kedas_webhooks_and_kedas_metrics_api() -> None:
    """Serving's calls from the API server are among those the rule judges (and dev passes it):
    KServe's webhooks, KEDA's admission webhook and its external metrics APIService."""
    from tooling.check.network import control_plane_calls

    called = {(ref.get("namespace"), ref.get("name")) for _, _, ref in control_plane_calls(lint.Platform(rendered("dev")))}
    assert {("kserve", "kserve-webhook-server-service"), ("keda", "keda-admission-webhooks"), ("keda", "keda-operator-metrics-apiserver")} <= called
    assert not violations(rendered("dev"), "control-plane-reach")


def test_shutdown_within_grace_rule_catches_torchrun_killing_its_workers_before_the_grace_period_ends() -> None:
    """torch 2.13.0's torchrun SIGKILLs its workers 30 s after SIGTERM unless TORCH_ELASTIC_SHUTDOWN_TIMEOUT
    says otherwise (distributed/launcher/api.py); the runtimes give their pods 120 s."""

    def unset(obj: dict[str, Any]) -> None:
        for container in obj["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"]:
            container["env"] = [v for v in container["env"] if v["name"] != "TORCH_ELASTIC_SHUTDOWN_TIMEOUT"]

    found = violations(edited(rendered("dev"), "ClusterTrainingRuntime", "torch-distributed", unset), "shutdown-within-grace")
    assert [(v.object, v.message.split(":")[0]) for v in found] == [
        ("ClusterTrainingRuntime.trainer.kubeflow.org torch-distributed", "job node container node")
    ]
    assert "30 s after SIGTERM (TORCH_ELASTIC_SHUTDOWN_TIMEOUT unset) and the pod's grace period is 120 s" in found[0].message

    def too_long(obj: dict[str, Any]) -> None:
        for container in obj["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"]:
            for var in container["env"]:
                if var["name"] == "TORCH_ELASTIC_SHUTDOWN_TIMEOUT":
                    var["value"] = "120"

    found = violations(edited(rendered("dev"), "ClusterTrainingRuntime", "torch-distributed", too_long), "shutdown-within-grace")
    assert [v.message.split(":")[0] for v in found] == ["job node container node"]
    assert "120 s after SIGTERM and the pod's grace period is 120 s" in found[0].message


def test_gateway_exempt_issuer_confined_rule_catches_an_exempt_issuer_nothing_confines() -> None:
    """dev leaves the GKE cluster's tokens out of allowed-identities and serving-tokens confines
    them; without serving-tokens' first rule (every token of the issuer but the model clients'),
    any service account's token with the audience would pass the gateway."""

    def unconfined(obj: dict[str, Any]) -> None:
        obj["spec"]["rules"] = obj["spec"]["rules"][1:]

    render = rendered("dev")
    assert not violations(render, "gateway-exempt-issuer-confined")
    [found] = violations(edited(render, "AuthorizationPolicy", "serving-tokens", unconfined), "gateway-exempt-issuer-confined")
    assert found.object.endswith("istio-system/istio-ingressgateway-allowed-identities")
    assert "leaves out every token of https://container.googleapis.com/v1/projects/acme-ml-dev/locations/us-central1/clusters/ml-dev" in found.message
