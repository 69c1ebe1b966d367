"""The move from the previous pins (Kubeflow 26.03, cert-manager from its tree, Istio 1.28/1.29)
to today's, as `pulumi up` will do it: what the previous release created keeps its Pulumi
resource (same URN, or an alias where it moved between installs), so nothing is deleted and
created again and no create collides with a live object; the one workload whose selector
changes is named; NVIDIA's DRA driver keeps its objects across its chart's move to
kubernetes-sigs; and the render stops on a transform whose upstream object is gone."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from components.kubeflow import GCS_FUSE_WEBHOOK_CONFIGURATION, dashboard_links, dashboard_menu, kubeflow_args
from facts.resource_types import KUSTOMIZE
from facts.versions import NVIDIA_DRA_DRIVER_CHART
from plumbing.base import InstallRecord, child_name, child_type, matches
from plumbing.sources import MIRROR_CHARTS
from tests.support import mirror, previous_pins, renders
from tooling import fullrender
from tooling.fullrender import FullRender, RenderError
from tooling.mirror import MANIFEST
from tooling.plan import Plan, Recorded
from tooling.removals import stackless

pytestmark = mirror.needed

PREVIOUS = "mlplatform::mlplatform:components"
"""The start of every recorded URN (the stack's own name left out)."""


def _by_key(render: FullRender) -> dict[str, fullrender.Rendered]:
    return {previous_pins.object_key(o.obj): o for o in render.objects}


@pytest.mark.parametrize("stack", ["kind", "prod"])
def test_every_object_the_previous_pins_created_keeps_its_resource(stack: str) -> None:
    before = previous_pins.urns(previous_pins.load(stack))
    now = _by_key(renders.rendered(stack))
    lost = [
        f"{key}: was {urn}, now {stackless(now[key].resource_urn)}"
        for key, urn in sorted(before.items())
        if key in now and urn not in {stackless(now[key].resource_urn), *map(stackless, now[key].aliases)}
    ]
    assert lost == [], "Pulumi would create these anew (AlreadyExists) and delete the old resource:\n" + "\n".join(lost)


def test_cert_manager_moves_from_its_tree_to_its_chart_without_a_delete() -> None:
    now = _by_key(renders.rendered("kind"))
    tree = f"{PREVIOUS}:CertManager$kubernetes:kustomize/v2:Directory"
    crd = now["apiextensions.k8s.io/v1 CustomResourceDefinition /certificates.cert-manager.io"]
    assert stackless(crd.resource_urn) == (
        f"{PREVIOUS}:CertManager$kubernetes:helm.sh/v4:Chart$kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
        "::cert-manager:certificates.cert-manager.io"
    )
    assert [stackless(a) for a in crd.aliases] == [
        f"{tree}$kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition::cert-manager:certificates.cert-manager.io"
    ]
    issuer = now["cert-manager.io/v1 ClusterIssuer /kubeflow-self-signing-issuer"]
    assert [stackless(a) for a in issuer.aliases] == [f"{tree}$kubernetes:cert-manager.io/v1:ClusterIssuer::cert-manager:kubeflow-self-signing-issuer"]
    namespace = now["v1 Namespace /cert-manager"]  # ours now: the chart creates no namespace
    assert not namespace.upstream
    assert [stackless(a) for a in namespace.aliases] == [f"{tree}$kubernetes:core/v1:Namespace::cert-manager:cert-manager"]


def test_the_poddefaults_policy_moves_from_the_namespace_tree_to_the_webhook_tree() -> None:
    policy = _by_key(renders.rendered("kind"))["networking.k8s.io/v1 NetworkPolicy kubeflow/poddefaults"]
    assert policy.source == "kubeflow/poddefaults-webhook"
    assert [stackless(a) for a in policy.aliases] == [
        f"{PREVIOUS}:KubeflowNamespaces$kubernetes:kustomize/v2:Directory$kubernetes:networking.k8s.io/v1:NetworkPolicy"
        "::kubeflow-namespace:kubeflow/poddefaults"
    ]


@pytest.mark.parametrize("stack", ["kind", "prod"])
def test_the_only_workload_whose_selector_changes_is_the_profile_controller(stack: str) -> None:
    """Selectors are immutable: pulumi-kubernetes replaces a Deployment whose selector changes,
    deleting it before it creates it again under the same name (provider/pkg/provider/diff.go
    `deployment` force-new paths; provider.go Diff `deleteBeforeReplace`). Profiles stay: only
    the controller's pods go and come back (docs/upgrading.md)."""
    before = previous_pins.load(stack)["selectors"]
    now = {k: o.obj["spec"].get("selector") for k, o in _by_key(renders.rendered(stack)).items() if k in before}
    changed = sorted(k for k in now if now[k] != before[k])
    assert changed == ["apps/v1 Deployment kubeflow/profiles-deployment"]


@pytest.mark.parametrize("stack", ["kind", "dev", "prod"])
def test_the_poddefaults_webhook_runs_before_gcs_fuse_and_keeps_its_name(stack: str) -> None:
    webhooks = [o for o in renders.rendered(stack).objects if o.obj["kind"] == "MutatingWebhookConfiguration" and o.source == "kubeflow/poddefaults-webhook"]
    (webhook,) = webhooks
    assert webhook.obj["metadata"]["name"] == "admission-webhook-mutating-webhook-configuration" < GCS_FUSE_WEBHOOK_CONFIGURATION
    assert webhook.obj["webhooks"][0]["clientConfig"]["service"]["name"] == "poddefaults-webhook-service"


@pytest.mark.parametrize("stack", ["kind", "prod"])
def test_the_dashboard_menu_reaches_the_renamed_configmap(stack: str) -> None:
    render = renders.rendered(stack)
    (config,) = [o for o in render.objects if matches(o.obj, "ConfigMap", "dashboard-config")]
    assert render.plan.config is not None
    assert config.obj["data"]["links"] == dashboard_links(dashboard_menu(kubeflow_args(render.plan.config, {})))


def test_the_dra_driver_keeps_every_object_and_selector_across_its_chart_move() -> None:
    """nvidia-dra-driver-gpu 25.12.0 (NVIDIA's) -> dra-driver-nvidia-gpu 0.4.1 (kubernetes-sigs): with
    `nameOverride` every object keeps its name, so its Pulumi resource (release, namespace/name), and
    the kubelet plugin's immutable selector stays; the record is 25.12.0's, rendered before the move."""
    chart = mirror.MIRROR / MIRROR_CHARTS / f"{NVIDIA_DRA_DRIVER_CHART.name}-{NVIDIA_DRA_DRIVER_CHART.version}.tgz"
    if not chart.is_file():  # a fork's mirror whose stacks have no DRA pool leaves the optional chart out, saying so
        left_out = json.loads((mirror.MIRROR / MANIFEST).read_text())["notFetched"]
        assert f"{MIRROR_CHARTS}/{chart.name}" in [p["path"] for p in left_out]
        return
    before = previous_pins.load(previous_pins.DRA_RECORD)
    now = previous_pins.chart_record(previous_pins.dra_driver(mirror.MIRROR))
    assert now["objects"] == before["objects"]
    assert now["selectors"] == before["selectors"] == {
        "apps/v1 DaemonSet nvidia-dra-driver-gpu/nvidia-dra-driver-gpu-kubelet-plugin": {"matchLabels": {"nvidia-dra-driver-gpu-component": "kubelet-plugin"}}
    }


def test_child_resources_are_named_as_pulumi_kubernetes_names_them() -> None:
    daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "istio-cni-node", "namespace": "kube-system"}}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "istio-system"}}
    assert (child_type(daemonset), child_name("istio", daemonset)) == ("kubernetes:apps/v1:DaemonSet", "istio:kube-system/istio-cni-node")
    assert (child_type(namespace), child_name("istio-namespace", namespace)) == ("kubernetes:core/v1:Namespace", "istio-namespace:istio-system")


# --- a transform that changes nothing ----------------------------------------------------


def _tree(root: Path, name: str, objects: str) -> str:
    (root / name).mkdir()
    (root / name / "objects.yaml").write_text(objects)
    (root / name / "kustomization.yaml").write_text("resources: [objects.yaml]\n")
    return str(root / name)


def _install(name: str, directory: str) -> Recorded:
    urn = f"urn:pulumi:t::mlplatform::mlplatform:components:Kubeflow$kubernetes:kustomize/v2:Directory::{name}"
    return Recorded(KUSTOMIZE, name, urn, None, None, (), {"directory": directory, "namespace": "kubeflow"}, False)


def with_label(props: dict[str, Any], kind: str, name: str) -> dict[str, Any] | None:
    if not matches(props, kind, name):
        return None
    return {**props, "metadata": {**props["metadata"], "labels": {"changed": "yes"}}}


def test_a_transform_that_changes_nothing_stops_the_render_naming_each(tmp_path: Path) -> None:
    menu = _tree(tmp_path, "menu", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dashboard-config}\ndata: {links: '{}'}\n")
    spawner = _tree(tmp_path, "spawner", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: jupyter-web-app-config}\n")
    plan = Plan(
        "t",
        [_install("central-dashboard", menu), _install("jupyter-web-app", spawner)],
        record=InstallRecord(
            transforms={
                (KUSTOMIZE, "central-dashboard"): (
                    partial(with_label, kind="ConfigMap", name="dashboard-config"),
                    partial(with_label, kind="ConfigMap", name="centraldashboard-config"),
                ),
                (KUSTOMIZE, "jupyter-web-app"): (partial(with_label, kind="ConfigMap", name="spawner-config"),),
            }
        ),
    )
    with pytest.raises(RenderError) as raised:
        fullrender.full_render(plan)
    message = str(raised.value)
    assert "central-dashboard: transform with_label changes none of its 1 objects" in message
    assert "jupyter-web-app: transform with_label changes none of its 1 objects" in message, "every such transform at once"
    assert message.count("with_label") == 2, "the transform that did change its object is not reported"


def test_a_render_whose_transforms_all_change_something_passes(tmp_path: Path) -> None:
    menu = _tree(tmp_path, "menu", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dashboard-config}\ndata: {links: '{}'}\n")
    record = InstallRecord(transforms={(KUSTOMIZE, "central-dashboard"): (partial(with_label, kind="ConfigMap", name="dashboard-config"),)})
    plan = Plan("t", [_install("central-dashboard", menu)], record=record)
    (obj,) = fullrender.full_render(plan).objects
    assert obj.obj["metadata"]["labels"] == {"changed": "yes"} and obj.original is not None and "labels" not in obj.original["metadata"]
    assert obj.resource_urn.endswith("Directory$kubernetes:core/v1:ConfigMap::central-dashboard:kubeflow/dashboard-config")
