"""The full render and `stacks check`: the shipped stacks pass every rule from the mirror,
each rule fails on a render broken the way it guards against, the object counts per install
match the reviewed snapshot, and helm renders the same bytes twice."""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from facts.image_set import notebook_tag
from stacks.config import load
from tests.support import renders
from tooling import check as lint
from tooling import fullrender, schemas, support
from tooling.fullrender import FullRender, Rendered
from tooling.render import ordered

REPO = Path(__file__).resolve().parents[1]
MIRROR = REPO.parent / "shared" / "upstream"
SNAPSHOT = REPO / "tests" / "snapshots" / "object-counts.yaml"
pytestmark = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"no upstream mirror at {MIRROR} (../shared/upstream)")


def rendered(stack: str) -> FullRender:
    """The stack's full render, shared with the other test files (tests/support/renders.py)."""
    return renders.rendered(stack)


def with_objects(render: FullRender, change: Callable[[list[Rendered]], list[Rendered]]) -> FullRender:
    return replace(render, objects=change(list(render.objects)))


def edited(render: FullRender, kind: str, name: str, edit: Callable[[dict[str, Any]], None]) -> FullRender:
    """`render` with one object changed by `edit` (on a copy)."""

    def change(objects: list[Rendered]) -> list[Rendered]:
        result = []
        for o in objects:
            if o.obj.get("kind") == kind and o.key[3] == name:
                obj = copy.deepcopy(o.obj)
                edit(obj)
                o = replace(o, obj=obj)
            result.append(o)
        return result

    return with_objects(render, change)


def violations(render: FullRender, rule: str) -> list[lint.Violation]:
    chosen = [r for r in lint.RULES if r.name == rule]
    assert chosen, rule
    return lint.check(render, chosen)


@pytest.mark.parametrize("stack", ["kind", "dev", "prod"])
def test_shipped_stack_passes_every_rule(stack: str) -> None:
    assert [str(v) for v in lint.check(rendered(stack))] == []


def test_object_counts_per_install_match_the_reviewed_snapshot() -> None:
    """A version bump shows what it changes here; UPDATE_SNAPSHOTS=1 rewrites the file."""
    counts = {stack: fullrender.counts(rendered(stack)) for stack in ("dev", "kind", "prod")}
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(yaml.safe_dump(counts, sort_keys=True))
    assert yaml.safe_load(SNAPSHOT.read_text()) == counts


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
        again = schemas.parsed(fullrender.render_chart(install, capabilities, support.kubernetes_version(render.plan.config)))
        assert canonical(again) == canonical(originals[install.resource.urn]), install.label


def test_a_tree_is_built_once_per_run_by_the_workers_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SHARED_TREES: what one worker's kustomize built, another reads back."""
    tree = next(i for i in rendered("kind").installs if i.kind == "kustomize")
    built: list[list[str]] = []

    def kustomize(args: list[str], what: str) -> str:
        built.append(args)
        return "kind: Namespace\n"

    monkeypatch.setattr(fullrender, "_run", kustomize)
    monkeypatch.setattr(fullrender, "SHARED_TREES", tmp_path)
    for _worker in range(2):
        monkeypatch.setattr(fullrender, "_TREES", {})
        assert fullrender.build_tree(tree) == "kind: Namespace\n"
    assert len(built) == 1 and built[0][-1] == tree.target


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
    assert form["configurations"]["value"] == ["team-resources"]

    ray_team = next(t for t in load("dev").teams if t.ray and t.bucket)
    defaults = _one(render, "PodDefault", ray_team.name, "team-resources")["spec"]
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in defaults["env"]}
    assert env["RAY_ADDRESS"] == env["RAY_DASHBOARD_ADDRESS"] == f"http://ray-head-svc.{ray_team.name}.svc.cluster.local:8265"
    assert env["RAY_AUTH_TOKEN"] == {"secretKeyRef": {"name": "ray", "key": "auth_token"}}
    (volume,) = defaults["volumes"]
    assert volume["csi"]["driver"] == "gcsfuse.csi.storage.gke.io"
    assert volume["csi"]["volumeAttributes"]["bucketName"] == env["TEAM_BUCKET"] == f"acme-ml-dev-{ray_team.name}"
    assert defaults["volumeMounts"] == [{"name": "team-bucket", "mountPath": "/mnt/team-bucket"}]
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


def test_webhook_rule_catches_a_network_policy_that_drops_the_api_server() -> None:
    """kubeflow-system's `trainer-webhook` policy selects a label the chart's pods lack unless we add it."""

    def unlabel(obj: dict[str, Any]) -> None:
        del obj["spec"]["template"]["metadata"]["labels"]["service.istio.io/canonical-name"]

    broken = edited(rendered("kind"), "Deployment", "kubeflow-trainer-controller-manager", unlabel)
    found = violations(broken, "webhook")
    assert found and all("drop the API server's traffic to port 9443" in v.message for v in found)


def test_webhook_rule_catches_a_port_the_private_cluster_firewall_keeps_closed() -> None:
    render = rendered("dev")
    plan = render.plan
    firewall = plan.of_type(lint.FIREWALL)[0]
    closed = replace(firewall, inputs={**firewall.inputs, "allows": [{"protocol": "tcp", "ports": ["8443", "9443", "15017"]}]})
    broken = replace(render, plan=replace(plan, resources=[closed if r.urn == firewall.urn else r for r in plan.resources]))
    messages = {v.message for v in violations(broken, "webhook")}
    assert any("poddefaults-webhook-service" in m and "does not open port 4443" in m for m in messages)


def test_load_balancer_rule_catches_the_istio_system_policy_alone() -> None:
    render = rendered("prod")
    without = with_objects(render, lambda objects: [o for o in objects if o.key[3] != "allow-google-load-balancer"])
    found = violations(without, "load-balancer")
    assert {v.message for v in found} >= {
        "NetworkPolicies in istio-system drop 130.211.0.0/22 to port 15021",
        "NetworkPolicies in istio-system drop 35.191.0.0/16 to port 8080",
    }


def test_monitor_rule_catches_a_selector_the_chart_narrowed() -> None:
    def narrow(obj: dict[str, Any]) -> None:
        obj["spec"]["serviceMonitorSelector"] = {"matchLabels": {"release": "kube-prometheus-stack"}}

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


def test_image_rule_catches_latest_and_untagged() -> None:
    def latest(obj: dict[str, Any]) -> None:
        obj["spec"]["template"]["spec"]["containers"][0]["image"] = "quay.io/jetstack/cert-manager-webhook:latest"

    broken = edited(rendered("kind"), "Deployment", "cert-manager-webhook", latest)
    assert len(violations(broken, "image")) == 1
    assert lint.is_pinned("registry.k8s.io/kueue/kueue:v0.19.2") and lint.is_pinned("nvcr.io/x@sha256:" + "0" * 64)
    assert not lint.is_pinned("rayproject/ray") and not lint.is_pinned("localhost:5000/ray")


def test_image_list_names_every_platform_image() -> None:
    images = lint.image_list(rendered("dev"))
    assert "registry.k8s.io/kueue/kueue:v0.19.2" in images and "quay.io/jetstack/cert-manager-webhook:v1.21.1" in images
    assert images == sorted(set(images))


def test_kueue_rule_catches_an_autoscaling_ray_cluster_that_is_not_elastic() -> None:
    def not_elastic(obj: dict[str, Any]) -> None:
        obj["metadata"]["annotations"].pop("kueue.x-k8s.io/elastic-job")

    broken = edited(rendered("kind"), "RayCluster", "ray", not_elastic)
    assert [v.object for v in violations(broken, "kueue")] == ["RayCluster.ray.io nlp/ray"]


def test_kueue_rule_catches_a_queue_on_a_missing_flavor() -> None:
    broken = with_objects(rendered("dev"), lambda objects: [o for o in objects if not (o.obj["kind"] == "ResourceFlavor" and o.key[3] == "l4")])
    assert {v.message for v in violations(broken, "kueue")} == {"ResourceFlavor l4 does not exist"}


def test_upstream_secret_rule_catches_the_release_cookie_secret() -> None:
    render = rendered("kind")
    proxy = next(o for o in render.objects if o.obj["kind"] == "Secret" and o.key[2] == "oauth2-proxy")
    assert proxy.original is not None
    unreplaced = with_objects(render, lambda objects: [replace(o, obj=o.original) if o is proxy else o for o in objects])  # type: ignore[arg-type]
    keys = sorted(v.message.split()[0] for v in violations(unreplaced, "upstream-secret"))
    assert keys == ["client-secret", "cookie-secret"]


def content_digest(obj: dict[str, Any]) -> str:
    """The digest of an object's content in the apply order's canonical form (JSON, keys
    sorted): any change to a value, a type (1 vs "1") or a key shows; quick, unlike dumping
    ~590 objects through the pure-Python YAML dumper."""
    text = json.dumps(ordered(obj), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def object_digests(render: FullRender) -> dict[str, str]:
    """Each object the cluster receives, keyed as the API server keys it, with its source and
    the digest of its content: a change to any object shows here by name."""
    return {
        f"{o.obj.get('apiVersion', '')} {o.obj.get('kind', '')} {o.key[2]}/{o.key[3]}": f"{o.source} {content_digest(o.obj)}"
        for o in render.objects
    }


@pytest.mark.parametrize("stack", ["kind", "dev", "prod"])
def test_full_render_matches_the_golden_snapshot(stack: str) -> None:
    """Every object of the full render, by digest. A change lists the objects it touches:
    review them with `python -m stacks render <stack> --full`, then UPDATE_SNAPSHOTS=1."""
    path = REPO / "tests" / "snapshots" / "full-render" / f"{stack}.yaml"
    digests = object_digests(rendered(stack))
    if os.environ.get("UPDATE_SNAPSHOTS"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(digests, sort_keys=False, width=200))
    golden = yaml.safe_load(path.read_text())
    changed = sorted(k for k in golden.keys() | digests.keys() if golden.get(k) != digests.get(k))
    assert not changed, f"{len(changed)} objects differ from {path.name}: {changed[:20]}"
    assert list(golden) == list(digests), "same objects, different apply order"


def test_the_full_render_reports_each_install_as_it_is_done() -> None:
    """A large stack renders for a while: one progress line per install, counted."""
    from components.sources import mirror_sources
    from stacks.config import validate
    from tests.conftest import base_kind, with_changes
    from tooling.plan import evaluate

    only_jobset = {k: {"enabled": False} for k in ("certManager", "istio", "kubeflow", "trainer", "kuberay", "kueue")}
    raw = with_changes(base_kind(), {"mlplatform:components": {**base_kind()["mlplatform:components"], **only_jobset}})
    config = validate(raw, "test").model_copy(update={"sources": mirror_sources(MIRROR)})
    lines: list[str] = []
    render = fullrender.full_render(evaluate(config, "test"), progress=lines.append)
    count = len([o for o in render.objects if o.upstream])
    assert lines == [f"[1/1] helm jobset/jobset: {count} objects"]


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
    policies = [o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"]
    bindings = {o["spec"]["matchResources"]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]: o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding"}
    if stack == "kind":  # no GPU pools, no GPU runtimes to guard
        assert policies == [] and bindings == {}
        return
    (policy,) = policies
    assert sorted(bindings) == sorted(teams)
    assert {b["spec"]["policyName"] for b in bindings.values()} == {policy["metadata"]["name"]}
