"""Support windows (facts/support.py) and the `check` rules on them: a component past its end
of support on the check date, and the cluster's Kubernetes minor outside a component's range.
Each rule is broken with literal objects on a literal cluster and its message asserted."""

from __future__ import annotations

import dataclasses
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from facts import support as facts
from facts.resource_types import HELM_CHART
from facts.versions import PINS
from stackmodel.config import ConfigError, load, stack_file
from stackmodel.registry import COMPONENTS
from stackmodel.schema import GkeClusterConfig, ReleaseChannel
from tooling import check as lint
from tooling import cluster_version, support
from tooling.check.upstreams import deployed
from tooling.fullrender import FullRender, Install, Rendered, RenderError, full_render
from tooling.plan import Plan, Recorded

TODAY = date(2026, 12, 1)


def deployment(image: str, name: str = "app") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}},
    }


def render(stack: str, *images: str, installs: list[Install] | None = None, **cluster: Any) -> FullRender:
    """A render of literal Deployments (one per image) on the cluster of stacks/Pulumi.<stack>.yaml,
    with `cluster` fields overridden."""
    config = load(stack)
    if cluster:
        config = config.model_copy(update={"cluster": config.cluster.model_copy(update=cluster)})
    objects = [Rendered(deployment(image, f"app{i}"), f"component{i}/install", "urn", True) for i, image in enumerate(images)]
    return FullRender(stack, Plan(stack, [], config=config), installs or [], objects)


def violations(r: FullRender, rule: str, on: date = TODAY) -> list[str]:
    return [str(v) for v in lint.check(r, [x for x in lint.RULES if x.name == rule], on=on)]


def test_a_component_past_its_end_of_support_names_since_when_what_to_move_to_and_the_source() -> None:
    found = violations(render("dev", "gcr.io/istio-release/pilot:1.28.0"), "support")
    assert len(found) == 1
    assert found[0].startswith("support: Istio 1.28.0 [component0/install]: Istio 1.28 support ended 2026-07-01, 153 days before 2026-12-01")
    assert "move to Istio 1.30 (Kubernetes 1.32 to 1.36" in found[0]
    assert "istio/istio.io/master/data/compatibility/supportStatus.yml" in found[0]


def test_cert_manager_1_19_is_out_of_support_since_1_21_was_released() -> None:
    found = violations(render("dev", "quay.io/jetstack/cert-manager-controller:v1.19.4"), "support")
    assert len(found) == 1 and "cert-manager 1.19 support ended 2026-07-08" in found[0]
    assert "move to cert-manager 1.21 (Kubernetes 1.33 to 1.36" in found[0]
    assert "cert-manager/website content/docs/releases/README.md" in found[0]


def test_the_check_date_decides_and_a_firm_date_counts_from_its_day() -> None:
    r = render("dev", "quay.io/jetstack/cert-manager-controller:v1.19.4")
    assert violations(r, "support", date(2026, 7, 7)) == []
    assert len(violations(r, "support", date(2026, 7, 8))) == 1


def test_an_expected_end_counts_only_after_the_grace() -> None:
    """Istio publishes 1.30's end as "~Nov 2026 (Expected)": not a violation in December, one
    90 days after the end of November."""
    r = render("dev", "docker.io/istio/pilot:1.30.1")
    assert violations(r, "support", date(2027, 2, 27)) == []
    [found] = violations(r, "support", date(2027, 2, 28))
    assert "Istio 1.30 support ended 2026-11-30 (upstream's estimate: ~Nov 2026 (Expected); counted 90 days later)" in found


def kind_node(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    """The kind stack's node image at `version` (a literal cluster, whatever the pin is)."""
    pin = dataclasses.replace(cluster_version.KIND_NODE_IMAGE, version=f"{version}@sha256:{'0' * 64}")
    monkeypatch.setattr(cluster_version, "KIND_NODE_IMAGE", pin)


def test_kinds_kubernetes_past_end_of_life_moves_to_a_minor_every_component_supports(monkeypatch: pytest.MonkeyPatch) -> None:
    kind_node(monkeypatch, "v1.35.8")
    current = ("docker.io/istio/pilot:1.30.1", "quay.io/jetstack/cert-manager-controller:v1.21.1")
    assert [v for v in violations(render("kind", *current), "support", date(2027, 2, 27)) if v.startswith("support: Kubernetes")] == []
    found = [v for v in violations(render("kind", *current), "support", date(2027, 3, 1)) if v.startswith("support: Kubernetes")]
    assert len(found) == 1
    assert found[0].startswith("support: Kubernetes 1.35 [kind node image kindest/node:v1.35.8]: Kubernetes 1.35 support ended 2027-02-28")
    # Istio 1.30 and cert-manager 1.21 both reach 1.36 (and neither 1.37).
    assert "move to Kubernetes 1.36 (ends 2027-06-28; every component's range includes it)" in found[0]
    assert "kubernetes.io/releases/1.35/" in found[0]


def test_the_pinned_kind_node_image_is_inside_every_range_and_supported_today() -> None:
    """What the kind stack really runs: no violation of either rule on the day the facts were read."""
    current = ("docker.io/istio/pilot:1.30.1", "quay.io/jetstack/cert-manager-controller:v1.21.1")
    assert violations(render("kind", *current), "support", facts.READ) == []
    assert violations(render("kind", *current), "kubernetes-range", facts.READ) == []


def test_no_kubernetes_to_move_to_when_a_component_caps_the_range(monkeypatch: pytest.MonkeyPatch) -> None:
    kind_node(monkeypatch, "v1.35.8")
    found = [v for v in violations(render("kind", "gcr.io/istio-release/pilot:1.28.0"), "support", date(2027, 3, 1)) if v.startswith("support: Kubernetes")]
    assert found and "no Kubernetes minor in facts/support.py is supported then and inside every component's range" in found[0]


def test_a_release_line_without_a_fact_is_a_violation() -> None:
    [found] = violations(render("dev", "docker.io/istio/pilot:1.31.0"), "support")
    assert "no support fact for Istio 1.31.0 in facts/support.py" in found


def test_gke_channel_default_outside_a_components_range() -> None:
    """GKE's Regular channel creates clusters at 1.35, which Istio 1.28 does not support."""
    [found] = violations(render("dev", "gcr.io/istio-release/pilot:1.28.0", release_channel=ReleaseChannel.REGULAR), "kubernetes-range")
    assert found.startswith("kubernetes-range: Istio 1.28.0 [component0/install]: Istio 1.28 supports Kubernetes 1.30 to 1.34; the cluster runs 1.35")
    assert "GKE REGULAR channel default 1.35.5-gke.1241004 as of 2026-07-09" in found
    assert "gke-regular-channel-release-notes.xml" in found
    assert "move to Istio 1.30" in found


def test_the_stacks_pinned_minimum_is_judged_too() -> None:
    found = violations(render("dev", "quay.io/jetstack/cert-manager-controller:v1.21.1", min_master_version="1.31"), "kubernetes-range")
    assert len(found) == 1 and "cert-manager 1.21 supports Kubernetes 1.33 to 1.36; the cluster runs 1.31 (minMasterVersion 1.31" in found[0]


def test_a_minimum_below_the_channel_default_is_judged_beside_it() -> None:
    """Created at the minimum, auto-upgraded to the channel's default: both minors are run."""
    found = violations(render("dev", "docker.io/istio/pilot:1.28.0", min_master_version="1.29"), "kubernetes-range")
    assert len(found) == 2
    assert "the cluster runs 1.29 (minMasterVersion 1.29; source: the stack file)" in found[0]
    assert "the cluster runs 1.35 (GKE REGULAR channel default 1.35.5-gke.1241004" in found[1]


def test_a_minimum_above_the_channel_default_is_all_the_cluster_runs() -> None:
    """GKE never downgrades: a cluster created at 1.36 on a channel whose default is 1.35 runs 1.36."""
    [found] = violations(render("dev", "docker.io/istio/pilot:1.29.0", min_master_version="1.36.4-gke.1391000"), "kubernetes-range")
    assert "Istio 1.29 supports Kubernetes 1.31 to 1.35; the cluster runs 1.36 (minMasterVersion 1.36.4-gke.1391000" in found
    assert violations(render("dev", "docker.io/istio/pilot:1.30.1", min_master_version="1.36"), "kubernetes-range") == []


@pytest.mark.parametrize(
    ("stack", "cluster", "expected"),
    [
        ("dev", {}, "v1.35.5-gke.1241004"),
        ("prod", {}, "v1.35.6-gke.1250000"),
        ("dev", {"min_master_version": "1.36"}, "v1.36.0"),
        ("dev", {"min_master_version": "1.34.2-gke.100"}, "v1.34.2-gke.100"),
    ],
)
def test_a_gke_cluster_is_created_at_its_minimum_else_its_channels_default(stack: str, cluster: dict[str, Any], expected: str) -> None:
    config = load(stack)
    config = config.model_copy(update={"cluster": config.cluster.model_copy(update=cluster)})
    assert cluster_version.kubernetes_version(config) == expected


def test_a_kind_cluster_is_created_at_its_node_images_version(monkeypatch: pytest.MonkeyPatch) -> None:
    kind_node(monkeypatch, "v1.35.8")
    assert cluster_version.kubernetes_version(load("kind")) == "v1.35.8"


def test_kind_node_image_outside_a_components_range(monkeypatch: pytest.MonkeyPatch) -> None:
    minor = facts.minor(cluster_version.KIND_NODE_IMAGE.version)
    lowest = facts.minor_label((minor[0], minor[1] + 1))
    too_new = facts.Upstream("Probe", (facts.Line("*", facts.Ends(), facts.Source("test"), (lowest, None)),), image=r"probe:")
    monkeypatch.setattr(support, "UPSTREAMS", (*facts.UPSTREAMS, too_new))
    [found] = violations(render("kind", "example.com/probe:1.0"), "kubernetes-range")
    assert f"supports Kubernetes {lowest} or later; the cluster runs {facts.minor_label(minor)} (kind node image kindest/node:" in found


def test_versions_come_from_what_the_render_deploys_images_trees_and_charts() -> None:
    def install(kind: str, target: str, version: str | None = None) -> Install:
        return Install(Recorded("t", "n", "urn", None, None, (), {}, True), "c", kind, target, None, version=version)

    installs = [
        install("kustomize", "/mirror/kubeflow-manifests/26.03.1-rc.2/common/istio/istio-install/base"),
        install("kustomize", "https://github.com/kubeflow/manifests//common/dex/overlays/oauth2-proxy?ref=26.03"),
        install("helm", "/mirror/charts/kube-prometheus-stack-88.5.3.tgz"),
        install("helm", "kube-prometheus-stack", "81.6.9"),
    ]
    found = {(d.upstream.name, d.version) for d in deployed(lint.Platform(render("kind", "ghcr.io/dexidp/dex:v2.45.1@sha256:ab", installs=installs)))}
    assert found == {("Kubeflow", "26.03.1-rc.2"), ("Kubeflow", "26.03"), ("kube-prometheus-stack", "88.5.3"), ("kube-prometheus-stack", "81.6.9"), ("Dex", "v2.45.1")}


@pytest.mark.parametrize(
    ("upstream", "versions"),
    [
        ("Kubeflow", ["26.03", "26.03.1-rc.2"]),
        ("Istio", ["1.28.0", "1.29.0", "1.30.1"]),
        ("cert-manager", ["v1.19.4", "v1.20.2", "v1.21.1"]),
        ("kube-prometheus-stack", ["81.6.9", "88.5.3"]),
        ("Grafana", ["12.3.3", "13.2.0"]),
        ("Ray", ["2.46.0-py311", "2.55.0-py312"]),
        ("Kubeflow Trainer", ["v2.3.0"]),
        ("JobSet", ["v0.12.0"]),
        ("KubeRay", ["v1.7.0"]),
        ("Kueue", ["v0.19.2"]),
        ("DCGM exporter", ["4.5.3-4.8.2-distroless"]),
        ("Dex", ["v2.45.0", "v2.45.1"]),
        ("oauth2-proxy", ["v7.14.3", "v7.15.2"]),
    ],
)
def test_facts_cover_todays_pins_and_the_next_ones(upstream: str, versions: list[str]) -> None:
    [found] = [u for u in facts.UPSTREAMS if u.name == upstream]
    for version in versions:
        line = found.line_of(version)
        assert line is not None, f"{upstream} {version}"
        assert line.source.where and line.ends.when


def test_kubernetes_minors_of_both_clusters_have_facts() -> None:
    for version in ("1.34", "1.35", "1.36"):
        assert facts.KUBERNETES.line_of(version) is not None
    assert set(facts.GKE_CHANNEL_DEFAULTS) == {c.value for c in ReleaseChannel} == {"RAPID", "REGULAR", "STABLE"}


def test_every_pin_of_every_component_has_its_support_facts() -> None:
    """A component's pins (its spec's `pins`, from the list) each stand beside their upstream's
    support facts: a pin added without them fails here, and `check` fails a stack that installs it."""
    missing = [f"{spec.name}: {pin.label}" for spec in COMPONENTS for pin in spec.pins if facts.upstream_of_pin(pin.name) is None]
    assert missing == []


def test_check_fails_an_installed_component_whose_pin_has_no_support_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(facts, "UPSTREAMS", tuple(u for u in facts.UPSTREAMS if u.name != "JobSet"))
    [found] = violations(render("kind"), "support")
    assert found == (
        "support: jobset 0.12.0 [mlplatform:components.jobset]: no support facts for jobset 0.12.0 in facts/support.py: add its "
        "upstream with its release lines, each with where it was read (or that upstream publishes none), and name the pin in its `pins`"
    )


def test_every_pin_a_fact_names_exists() -> None:
    names = {p.name for p in PINS}
    for upstream in (facts.KUBERNETES, *facts.UPSTREAMS):
        assert set(upstream.pins) <= names, upstream.name


def test_a_gke_version_that_is_not_one_is_refused_with_its_path(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=re.escape("is not a GKE version: give a minor such as 1.35, or <minor>.<patch>[-gke.<build>]")):
        GkeClusterConfig.model_validate({"kind": "gke", "name": "ml", "location": "us-central1", "minMasterVersion": "1.35.x"})
    stack = tmp_path / "Pulumi.x.yaml"
    text = stack_file("dev").read_text().replace("releaseChannel: REGULAR", "releaseChannel: REGULAR\n    minMasterVersion: latest")
    stack.write_text(text)
    with pytest.raises(ConfigError) as err:
        load(str(stack))
    assert "minMasterVersion" in str(err.value)


def test_check_on_takes_an_iso_date_and_names_the_option_otherwise(capsys: pytest.CaptureFixture[str]) -> None:
    from tooling.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["check", "kind", "--on", "31-12-2027"])
    assert exit_.value.code == 2
    assert "argument --on: '31-12-2027' is not a date: give YYYY-MM-DD, e.g. 2027-12-31" in capsys.readouterr().err


def _probe_chart(root: Path, kube_version: str = "") -> Recorded:
    """A local chart whose one ConfigMap says the Kubernetes version helm rendered it for."""
    chart = root / "probe"
    (chart / "templates").mkdir(parents=True)
    constraint = f"kubeVersion: '{kube_version}'\n" if kube_version else ""
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: probe\nversion: 0.1.0\n{constraint}")
    (chart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: probe}\ndata: {kube: '{{ .Capabilities.KubeVersion.Version }}'}\n"
    )
    urn = "urn:pulumi:t::mlplatform::mlplatform:components:Probe$kubernetes:helm.sh/v4:Chart::probe"
    return Recorded(HELM_CHART, "probe", urn, None, None, (), {"chart": str(chart), "namespace": "probe"}, False)


@pytest.mark.parametrize(
    ("stack", "cluster", "expected"),
    [
        ("kind", {}, cluster_version.KIND_NODE_IMAGE.version.split("@")[0]),
        ("dev", {}, "v" + facts.GKE_CHANNEL_DEFAULTS["REGULAR"].version),
        ("dev", {"min_master_version": "1.36"}, "v1.36.0"),
    ],
)
def test_charts_are_rendered_for_the_version_the_stacks_cluster_is_created_at(
    tmp_path: Path, stack: str, cluster: dict[str, Any], expected: str
) -> None:
    config = load(stack)
    config = config.model_copy(update={"cluster": config.cluster.model_copy(update=cluster)})
    (obj,) = full_render(Plan(stack, [_probe_chart(tmp_path)], config=config)).objects
    assert obj.obj["data"] == {"kube": expected}


def test_a_chart_whose_kube_version_the_cluster_is_outside_stops_the_render(tmp_path: Path) -> None:
    with pytest.raises(RenderError) as raised:
        full_render(Plan("dev", [_probe_chart(tmp_path, ">= 1.36.0-0")], config=load("dev")))
    assert str(raised.value).startswith("probe: ")
    assert "chart requires kubeVersion: >= 1.36.0-0 which is incompatible with Kubernetes v1.35.5-gke.1241004" in str(raised.value)


def test_built_in_kinds_are_validated_for_the_minor_the_stacks_cluster_is_created_at(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pod spec.schedulingGroup is new in Kubernetes 1.36 (kubernetes-validate's 1.35 and 1.36
    strict schemas): a 1.36 kind cluster takes it, a GKE cluster created at 1.35 does not."""
    kind_node(monkeypatch, "v1.36.4")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "image": "example.com/c:1"}], "schedulingGroup": {"podGroupName": "g"}},
    }

    def schema(stack: str, **cluster: Any) -> list[str]:
        r = render(stack, **cluster)
        r.objects.append(Rendered(pod, "component/install", "urn", True))
        return violations(r, "schema")

    assert schema("kind") == []
    [found] = schema("dev")
    assert found.startswith("schema: Pod ns/p [component/install]: spec: Additional properties are not allowed ('schedulingGroup'")
    assert schema("dev", min_master_version="1.36") == []
