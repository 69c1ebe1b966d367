"""Images, on plain data and under mocks: references parse as runtimes resolve them, retired
registries are replaced, the mirror's path scheme, the one inventory of where objects name
images (and its rewrite), `mlplatform:images.mirror` validated, our own objects rewritten in
the plan, and the GKE nodes' read access to an Artifact Registry mirror."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from facts.image_refs import ImagePolicy, floating, parse
from facts.registries import RETIRED_REGISTRIES
from facts.versions import RAY_IMAGE, image
from plumbing.images import image_sites, image_transform, images, rewrite
from stackmodel.config import ConfigError, validate
from tests.conftest import base_gke, base_kind, with_changes
from tests.support.cases import Case
from tooling.plan import Plan

MIRROR = "europe-docker.pkg.dev/acme-ml/mirror"
IMAGES = "mlplatform:images"


# --- references ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "name", "repository", "tag"),
    [
        ("busybox", "docker.io/library/busybox", "library/busybox", None),
        ("busybox:1.28", "docker.io/library/busybox", "library/busybox", "1.28"),
        ("rayproject/ray:2.46.0-py311", "docker.io/rayproject/ray", "rayproject/ray", "2.46.0-py311"),
        ("index.docker.io/istio/pilot:1.28.0", "docker.io/istio/pilot", "istio/pilot", "1.28.0"),
        ("gcr.io/istio-release/pilot:1.28.0", "gcr.io/istio-release/pilot", "istio-release/pilot", "1.28.0"),
        ("localhost:5000/ray", "localhost:5000/ray", "ray", None),
        ("localhost/mlplatform/notebook:x", "localhost/mlplatform/notebook", "mlplatform/notebook", "x"),
        ("nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless", "nvcr.io/nvidia/k8s/dcgm-exporter", "nvidia/k8s/dcgm-exporter", "4.5.3-4.8.2-distroless"),
    ],
)
def test_references_parse_as_container_runtimes_resolve_them(reference: str, name: str, repository: str, tag: str | None) -> None:
    ref = parse(reference)
    assert (ref.name, ref.repository, ref.tag) == (name, repository, tag)
    assert str(ref) == reference


@pytest.mark.parametrize("reference", ["", "Ray:1", "quay.io/x/y:bad tag", "x@sha256:short", "$VOLUME_VIEWER_IMAGE", "{{ .ProxyImage }}"])
def test_what_is_no_image_reference_is_refused(reference: str) -> None:
    with pytest.raises(ValueError, match=r"is not (an image reference|a digest|a tag|a repository path)"):
        parse(reference)


@pytest.mark.parametrize(
    ("reference", "why"),
    [
        ("quay.io/jetstack/cert-manager-webhook:latest", "floating tag 'latest'"),
        ("ghcr.io/x/y:main", "floating tag 'main'"),
        ("ghcr.io/x/y:master", "floating tag 'master'"),
        ("rayproject/ray", "has no tag"),
        ("busybox:1.28", "'1.28', a bare version"),
        ("node:20", "'20', a bare version"),
        ("ghcr.io/x/y:v2", "'v2', a bare version"),
    ],
)
def test_floating_and_missing_tags_are_named(reference: str, why: str) -> None:
    found = floating(parse(reference))
    assert found is not None and why in found


@pytest.mark.parametrize(
    "reference",
    ["registry.k8s.io/kueue/kueue:v0.19.2", "nvcr.io/nvidia/jax:25.10-py3", "busybox:1.28.4", "x/y:latest@sha256:" + "0" * 64],
)
def test_release_tags_and_digests_are_pinned(reference: str) -> None:
    assert floating(parse(reference)) is None


# --- the policy: retired registries, floating upstream images, the mirror ------------------


def test_every_retired_registry_has_a_successor_a_date_and_a_source() -> None:
    prefixes = {r.prefix for r in RETIRED_REGISTRIES}
    assert {"gcr.io/istio-release", "registry.istio.io/release", "k8s.gcr.io"} <= prefixes
    for retired in RETIRED_REGISTRIES:
        assert retired.successor not in prefixes and retired.source and retired.retires.year >= 2023


@pytest.mark.parametrize(
    ("reference", "pulled"),
    [
        ("gcr.io/istio-release/pilot:1.28.0", "docker.io/istio/pilot:1.28.0"),
        ("registry.istio.io/release/proxyv2:1.30.0", "docker.io/istio/proxyv2:1.30.0"),
        ("k8s.gcr.io/pause:3.9", "registry.k8s.io/pause:3.9"),
        ("gcr.io/istio-release-other/x:1.0.0", "gcr.io/istio-release-other/x:1.0.0"),
        ("busybox:1.28", "library/busybox:1.28.4"),
        ("quay.io/kuberay/operator:v1.7.0", "quay.io/kuberay/operator:v1.7.0"),
    ],
)
def test_without_a_mirror_only_retired_registries_and_floating_upstream_images_change(reference: str, pulled: str) -> None:
    assert ImagePolicy().image(reference) == pulled


PATCHED = {"istio/pilot": {"1.30.1": "1.30.5"}, "oauth2-proxy/oauth2-proxy": {"v7.15.2": "v7.15.3"}}


@pytest.mark.parametrize(
    ("reference", "pulled"),
    [
        ("quay.io/oauth2-proxy/oauth2-proxy:v7.15.2", "quay.io/oauth2-proxy/oauth2-proxy:v7.15.3"),
        ("registry.istio.io/release/pilot:1.30.1", "docker.io/istio/pilot:1.30.5"),  # the successor's path is the pin's
        ("pilot:1.30.1", "pilot:1.30.1"),  # library/pilot: another image
        ("quay.io/oauth2-proxy/oauth2-proxy:v7.14.3", "quay.io/oauth2-proxy/oauth2-proxy:v7.14.3"),  # not the tag the tree ships
        ("quay.io/oauth2-proxy/oauth2-proxy:v7.15.2@sha256:" + "b" * 64, "quay.io/oauth2-proxy/oauth2-proxy:v7.15.2@sha256:" + "b" * 64),
    ],
)
def test_a_patched_pins_image_runs_its_patch_release_by_tag_only(reference: str, pulled: str) -> None:
    policy = ImagePolicy(patched=PATCHED)
    assert policy.image(reference) == pulled
    assert policy.image(pulled) == pulled, "idempotent"
    assert ImagePolicy(mirror=MIRROR, patched=PATCHED).image(reference) == f"{MIRROR}/{parse(pulled).normalized()}"


def test_the_pin_tables_patches_are_what_the_policy_moves() -> None:
    """Each patched pin's images, as its chart or tree names them, move to the release it runs."""
    moved = {(repository, shipped): runs for repository, tags in ImagePolicy().patched.items() for shipped, runs in tags.items()}
    assert moved[("istio/pilot", "1.30.1")] == "1.30.5"
    assert moved[("oauth2-proxy/oauth2-proxy", "v7.15.2")] == "v7.15.3"
    assert moved[("jetstack/cert-manager-controller", "v1.21.1")] == "v1.21.2"


def test_retired_hubs_move_to_their_successor() -> None:
    policy = ImagePolicy()
    assert policy.hub("gcr.io/istio-release") == "docker.io/istio"
    assert policy.hub("registry.istio.io/release") == "docker.io/istio"
    assert policy.hub("docker.io/istio") == "docker.io/istio"


@pytest.mark.parametrize(
    ("reference", "pulled"),
    [
        ("gcr.io/istio-release/pilot:1.28.0", f"{MIRROR}/docker.io/istio/pilot:1.28.0"),
        ("rayproject/ray:2.46.0-py311", f"{MIRROR}/docker.io/rayproject/ray:2.46.0-py311"),
        ("tensorflow/tensorflow:2.5.1", f"{MIRROR}/docker.io/tensorflow/tensorflow:2.5.1"),
        ("busybox:1.28", f"{MIRROR}/docker.io/library/busybox:1.28.4"),
        ("quay.io/prometheus/prometheus:v3.9.1", f"{MIRROR}/quay.io/prometheus/prometheus:v3.9.1"),
        ("ghcr.io/a/b@sha256:" + "a" * 64, f"{MIRROR}/ghcr.io/a/b@sha256:" + "a" * 64),
        ("localhost/mlplatform/notebook:x", "localhost/mlplatform/notebook:x"),
        ("localhost:5001/ray:1.0.0", "localhost:5001/ray:1.0.0"),
        (f"{MIRROR}/team/own:1.0.0", f"{MIRROR}/team/own:1.0.0"),
    ],
)
def test_the_mirror_path_keeps_the_source_registry(reference: str, pulled: str) -> None:
    policy = ImagePolicy(mirror=MIRROR)
    assert policy.image(reference) == pulled
    assert policy.image(pulled) == pulled, "idempotent"


def test_quay_and_docker_hub_images_of_one_path_do_not_collide_in_the_mirror() -> None:
    policy = ImagePolicy(mirror=MIRROR)
    assert policy.image("quay.io/prometheus/prometheus:v3.9.1") != policy.image("prometheus/prometheus:v3.9.1")


def test_a_mirror_copy_names_its_source() -> None:
    policy = ImagePolicy(mirror=MIRROR)
    assert policy.origin(f"{MIRROR}/docker.io/istio/pilot:1.28.0") == "docker.io/istio/pilot:1.28.0"
    assert policy.origin(f"{MIRROR}/team/own:1.0.0") is None, "put into the mirror directly, no copy"
    assert policy.origin("docker.io/istio/pilot:1.28.0") is None
    assert policy.hub("gcr.io/istio-release") == f"{MIRROR}/docker.io/istio"
    assert policy.hub("istio") == f"{MIRROR}/docker.io/istio"


# --- the inventory and its rewrite ---------------------------------------------------------


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "operator", "namespace": "x"},
        "spec": {
            "template": {
                "spec": {
                    "initContainers": [{"name": "init", "image": "busybox:1.28"}],
                    "containers": [
                        {
                            "name": "main",
                            "image": "quay.io/prometheus-operator/prometheus-operator:v0.88.1",
                            "args": [
                                "--prometheus-config-reloader=quay.io/prometheus-operator/prometheus-config-reloader:v0.88.1",
                                "--log-level=info",
                            ],
                            "env": [{"name": "VOLUME_VIEWER_IMAGE", "value": "filebrowser/filebrowser:v2.25.0"}, {"name": "X", "value": "y:1"}],
                        }
                    ],
                    "ephemeralContainers": [{"name": "debug", "image": "k8s.gcr.io/pause:3.9"}],
                }
            }
        },
    }


def injector() -> dict[str, Any]:
    values = {"global": {"hub": "gcr.io/istio-release", "tag": "1.28.0", "proxy": {"image": "proxyv2"}, "proxy_init": {"image": "proxyv2"}}}
    templates = 'grpc-simple: |\n  spec:\n    initContainers:\n      - name: grpc-bootstrap-init\n        image: busybox:1.28\n        image: "{{ .ProxyImage }}"\n'
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "istio-sidecar-injector", "namespace": "istio-system"},
        "data": {"values": json.dumps(values), "config": templates},
    }


def test_the_inventory_finds_every_place_a_pod_spec_names_an_image() -> None:
    found = {(s.where, s.reference) for s in image_sites(deployment())}
    prefix = "spec.template.spec"
    assert found == {
        (f"{prefix}.initContainers[0].image", "busybox:1.28"),
        (f"{prefix}.containers[0].image", "quay.io/prometheus-operator/prometheus-operator:v0.88.1"),
        (
            f"{prefix}.containers[0].args[0] --prometheus-config-reloader",
            "quay.io/prometheus-operator/prometheus-config-reloader:v0.88.1",
        ),
        (f"{prefix}.containers[0].env[0].value (VOLUME_VIEWER_IMAGE)", "filebrowser/filebrowser:v2.25.0"),
        (f"{prefix}.ephemeralContainers[0].image", "k8s.gcr.io/pause:3.9"),
    }


def test_the_inventory_reads_istio_values_and_templates() -> None:
    sites = image_sites(injector())
    hubs = [s.reference for s in sites if s.hub]
    assert hubs == ["gcr.io/istio-release"]
    derived = sorted((s.where, s.reference) for s in sites if s.derived)
    assert [r for _, r in derived] == ["gcr.io/istio-release/proxyv2:1.28.0"] * 2
    assert [s.reference for s in sites if not s.hub and not s.derived] == ["busybox:1.28"], "literal lines only"


def test_the_inventory_reads_operator_resources_the_form_and_image_keys() -> None:
    prometheus = {"apiVersion": "monitoring.coreos.com/v1", "kind": "Prometheus", "metadata": {"name": "p"}, "spec": {"image": "quay.io/prometheus/prometheus:v3.9.1"}}
    form = {"spawnerFormDefaults": {"image": {"value": "a/b:1.0.0", "options": ["a/b:1.0.0", "c/d:2.0.0"]}, "imageGroupOne": {"value": "e/f:3.0.0", "options": ["e/f:3.0.0"]}}}
    spawner = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w"}, "data": {"spawner_ui_config.yaml": yaml.safe_dump(form)}}
    tensorboard = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"}, "data": {"TENSORBOARD_IMAGE": "tensorflow/tensorflow:2.5.1", "ISTIO_HOST": "*"}}
    assert list(images(prometheus)) == ["quay.io/prometheus/prometheus:v3.9.1"]
    assert sorted(images(spawner)) == ["a/b:1.0.0", "a/b:1.0.0", "c/d:2.0.0", "e/f:3.0.0", "e/f:3.0.0"]
    assert list(images(tensorboard)) == ["tensorflow/tensorflow:2.5.1"]
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "c"}, "spec": {"containers": [{"image": "x:1"}]}}
    assert image_sites(crd) == []


@pytest.mark.parametrize("obj", [deployment(), injector()], ids=["deployment", "injector"])
def test_with_a_mirror_every_site_is_rewritten_and_stays_readable(obj: dict[str, Any]) -> None:
    changed = image_transform(ImagePolicy(mirror=MIRROR))(obj)
    assert changed is not None and changed is not obj
    sites = image_sites(changed)
    assert sites and all(s.reference.startswith(f"{MIRROR}/") for s in sites), [s.reference for s in sites]
    assert image_transform(ImagePolicy(mirror=MIRROR))(changed) is None, "a second pass changes nothing"
    if obj["kind"] == "ConfigMap":
        values = json.loads(changed["data"]["values"])["global"]
        assert values["hub"] == f"{MIRROR}/docker.io/istio" and values["tag"] == "1.28.0"
        assert "{{ .ProxyImage }}" in changed["data"]["config"], "templates stay templates"
    else:
        container = changed["spec"]["template"]["spec"]["containers"][0]
        assert container["env"][1] == {"name": "X", "value": "y:1"}, "only image variables"
        assert container["args"][1] == "--log-level=info"


def test_an_object_without_images_is_left_alone() -> None:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}
    assert rewrite(service, lambda site: "changed") is None


# --- mlplatform:images.mirror --------------------------------------------------------------

MIRROR_CASES = [
    Case("mirror with a scheme", {IMAGES: {"mirror": f"https://{MIRROR}"}}, f"{IMAGES}.mirror", f"without a scheme, e.g. '{MIRROR}'"),
    Case("mirror with a tag", {IMAGES: {"mirror": f"{MIRROR}:v1"}}, f"{IMAGES}.mirror", "names a tag or digest; give the registry prefix alone"),
    Case("mirror with a digest", {IMAGES: {"mirror": f"{MIRROR}@sha256:{'0' * 64}"}}, f"{IMAGES}.mirror", "names a tag or digest"),
    Case("mirror on docker hub", {IMAGES: {"mirror": "docker.io/acme"}}, f"{IMAGES}.mirror", "Docker Hub repositories cannot hold"),
    Case("artifact registry without repository", {IMAGES: {"mirror": "europe-docker.pkg.dev/acme-ml"}}, f"{IMAGES}.mirror", "<location>-docker.pkg.dev/<project>/<repository>"),
    Case("mirror with capitals", {IMAGES: {"mirror": "Registry.Acme/Mirror"}}, f"{IMAGES}.mirror", "is not a registry prefix"),
    Case("misspelt images key", {IMAGES: {"miror": MIRROR}}, f"{IMAGES}.miror", "unknown key"),
]


@pytest.mark.parametrize("case", MIRROR_CASES, ids=[c.id for c in MIRROR_CASES])
def test_a_bad_mirror_names_the_key_and_the_fix(case: Case) -> None:
    with pytest.raises(ConfigError) as caught:
        validate(case.stack(), "test")
    problems = [(p.path, p.message) for p in caught.value.problems]
    assert any(path == case.path and case.message in message for path, message in problems), problems


@pytest.mark.parametrize("mirror", [MIRROR, "registry.acme.internal:5000", "registry.acme.internal/mirror/", "harbor.acme.io/proxy/cache"])
def test_registry_prefixes_are_mirrors(mirror: str) -> None:
    config = validate(with_changes(base_kind(), {IMAGES: {"mirror": mirror}}), "test")
    assert config.images.mirror == mirror.rstrip("/")


# --- the program: our own objects, the GKE nodes -------------------------------------------


def test_our_own_objects_reach_the_plan_through_the_mirror(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    """The recorder runs the program's stack transform as the engine does: the RayCluster and
    the training runtimes we author name mirrored images, and the plan keeps the transform
    for the render's upstream objects."""
    raw = with_changes(base_kind(), {IMAGES: {"mirror": MIRROR}})
    raw["mlplatform:teams"] = [{"name": "nlp", "owner": "lead@example.com", "ray": {"maxWorkers": 1}}]
    raw["mlplatform:components"] = {**raw["mlplatform:components"], "kubeflow": {"auth": {"kind": "dex", "staticUsers": ["lead@example.com"]}}}
    plan = plan_of(raw)
    assert len(plan.record.platform_transforms) == 1
    ours = [r for r in plan.resources if r.type in ("kubernetes:ray.io/v1:RayCluster", "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime")]
    named = [image for r in ours for image in images(r.inputs)]
    assert len({r.type for r in ours}) == 2 and named
    assert all(image.startswith(f"{MIRROR}/") for image in named), named
    assert f"{MIRROR}/docker.io/{image(RAY_IMAGE)}" in named


def test_without_a_mirror_our_objects_keep_their_images(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("dev")
    (cluster,) = [r for r in plan.resources if r.type == "kubernetes:ray.io/v1:RayCluster"]
    assert image(RAY_IMAGE) in images(cluster.inputs)


IAM = "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember"


def test_gke_nodes_read_an_artifact_registry_mirror(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    plan = plan_of(with_changes(base_gke(), {IMAGES: {"mirror": "europe-docker.pkg.dev/acme-shared/mirror"}}))
    (member,) = [r for r in plan.of_type(IAM) if r.name.endswith("-nodes-image-mirror")]
    assert {k: member.inputs[k] for k in ("project", "location", "repository", "role")} == {
        "project": "acme-shared",
        "location": "europe",
        "repository": "mirror",
        "role": "roles/artifactregistry.reader",
    }
    assert member.inputs["member"].startswith("serviceAccount:")
    cluster = plan.one("gcp:container/cluster:Cluster", "ml-test")
    assert member.urn in cluster.dependencies, "before the first node boots"


def test_another_registry_gets_no_binding_from_here(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    plan = plan_of(with_changes(base_gke(), {IMAGES: {"mirror": "harbor.acme.io/proxy"}}))
    assert not [r for r in plan.of_type(IAM) if r.name.endswith("-nodes-image-mirror")]
