"""Where charts and trees come from: the pin table's upstreams, or the stack's mirror, the
same strings for `pulumi up` (recorded in the plan) and the offline render."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from facts.versions import CERT_MANAGER, KUBE_PROMETHEUS_STACK, KUEUE_CHART
from plumbing.sources import ChartSource, chart_source, kubeflow_tree, mirror_sources
from stackmodel.schema import Sources
from tests.conftest import base_kind, with_changes
from tests.support import mirror
from tooling.plan import Plan
from tooling.render import upstream


def test_public_upstreams_by_default() -> None:
    assert chart_source(KUEUE_CHART, Sources()) == ChartSource("oci://registry.k8s.io/kueue/charts/kueue", "0.19.2")
    assert chart_source(KUBE_PROMETHEUS_STACK, Sources()) == ChartSource(
        "kube-prometheus-stack", "88.5.3", "https://prometheus-community.github.io/helm-charts"
    )
    assert (
        kubeflow_tree("common/dex/base", Sources())
        == "https://github.com/kubeflow/community-distribution//common/dex/base?ref=26.03.1-rc.2"
    )


def test_each_kind_of_chart_mirror() -> None:
    oci = Sources(charts="oci://europe-docker.pkg.dev/acme-ml/charts")  # a project ID has 6-30 characters
    assert chart_source(KUEUE_CHART, oci) == ChartSource("oci://europe-docker.pkg.dev/acme-ml/charts/kueue", "0.19.2")
    repo = Sources(charts="https://charts.acme.internal")
    assert chart_source(KUEUE_CHART, repo) == ChartSource("kueue", "0.19.2", "https://charts.acme.internal")
    local = Sources(charts="/srv/mirror/charts/")
    assert chart_source(KUEUE_CHART, local) == ChartSource("/srv/mirror/charts/kueue-0.19.2.tgz", "0.19.2")


def test_a_chart_versioned_with_its_v_keeps_it_in_every_source() -> None:
    # cert-manager publishes chart version `v1.21.1` (its Chart.yaml), so its archive is cert-manager-v1.21.1.tgz.
    assert chart_source(CERT_MANAGER, Sources()) == ChartSource("oci://quay.io/jetstack/charts/cert-manager", "v1.21.1")
    assert chart_source(CERT_MANAGER, Sources(charts="https://charts.acme.internal")) == ChartSource(
        "cert-manager", "v1.21.1", "https://charts.acme.internal"
    )
    local = chart_source(CERT_MANAGER, mirror_sources(mirror.MIRROR))
    assert local == ChartSource(f"{mirror.MIRROR}/charts/cert-manager-v1.21.1.tgz", "v1.21.1")
    if mirror.FOUND:
        assert Path(local.chart).is_file(), "the mirror holds the archive under that name"


def test_each_kind_of_manifests_mirror() -> None:
    git = Sources(kubeflow_manifests="https://git.acme.internal/kubeflow/manifests")
    assert kubeflow_tree("common/dex/base", git) == "https://git.acme.internal/kubeflow/manifests//common/dex/base?ref=26.03.1-rc.2"
    local = Sources(kubeflow_manifests="../mirror/kubeflow-manifests/26.03.1-rc.2")
    assert kubeflow_tree("common/dex/base", local) == "../mirror/kubeflow-manifests/26.03.1-rc.2/common/dex/base"


def test_a_mirror_directory_has_the_shared_layout() -> None:
    assert mirror_sources("../shared/upstream/") == Sources(
        charts="../shared/upstream/charts",
        kubeflow_manifests="../shared/upstream/kubeflow-manifests/26.03.1-rc.2",
        remote_bases="../shared/upstream/remote",
        release_manifests="../shared/upstream/manifests",
    )


def test_the_program_installs_from_the_stack_mirror(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    raw = with_changes(base_kind(), {"mlplatform:sources": {"charts": "/srv/charts", "kubeflowManifests": "/srv/kf"}})
    entries = {e["name"]: e for e in upstream(plan_of(raw))}
    assert entries["kueue"]["chart"] == "/srv/charts/kueue-0.19.2.tgz" and "repository" not in entries["kueue"]
    assert entries["istio-crds"]["directory"] == "/srv/kf/common/istio/istio-crds/base"
