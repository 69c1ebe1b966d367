"""Support windows (facts/support.py) and the `check` rules on them: a component past its end
of support on the check date, and the cluster's Kubernetes minor outside a component's range.
Each rule is broken with literal objects on a literal cluster and its message asserted."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from facts import support as facts
from facts.versions import PINS
from stacks.config import ConfigError, load, stack_file
from stacks.schema import GkeClusterConfig, ReleaseChannel
from tooling import check as lint
from tooling.fullrender import FullRender, Install, Rendered
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


def test_kinds_kubernetes_past_end_of_life_moves_to_a_minor_every_component_supports() -> None:
    current = ("docker.io/istio/pilot:1.30.1", "quay.io/jetstack/cert-manager-controller:v1.21.1")
    minor = facts.minor_label(facts.minor(lint.support.KIND_NODE_IMAGE.version))
    end = facts.KUBERNETES.line_of(minor)
    assert end is not None and end.ends.on is not None
    assert [v for v in violations(render("kind", *current), "support", end.ends.on) if "Kubernetes" in v.split(":")[1]] != []
    found = [v for v in violations(render("kind", *current), "support", date(2027, 3, 1)) if v.startswith("support: Kubernetes")]
    assert len(found) == 1
    # 1.35 ended 2027-02-28; Istio 1.30 and cert-manager 1.21 both reach 1.36.
    assert "move to Kubernetes 1.36 (ends 2027-06-28; every component's range includes it)" in found[0]
    assert "kubernetes.io/releases/" in found[0]


def test_no_kubernetes_to_move_to_when_a_component_caps_the_range() -> None:
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


def test_kind_node_image_outside_a_components_range(monkeypatch: pytest.MonkeyPatch) -> None:
    minor = facts.minor(lint.support.KIND_NODE_IMAGE.version)
    lowest = facts.minor_label((minor[0], minor[1] + 1))
    too_new = facts.Upstream("Probe", (facts.Line("*", facts.Ends(), facts.Source("test"), (lowest, None)),), image=r"probe:")
    monkeypatch.setattr(lint.support, "UPSTREAMS", (*facts.UPSTREAMS, too_new))
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
    found = {(d.upstream.name, d.version) for d in lint.deployed(lint.Platform(render("kind", "ghcr.io/dexidp/dex:v2.45.1@sha256:ab", installs=installs)))}
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
    assert set(facts.GKE_CHANNEL_DEFAULTS) == {"RAPID", "REGULAR", "STABLE"}


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
