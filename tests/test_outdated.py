"""`python -m stacks outdated` from recorded index files (tests/data/indexes): newer releases
per pin (pre-releases, yanked releases and other image flavours left out), the support
status beside each pin, and an exit code CI can act on."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from facts.versions import Pin, PinKind
from tooling import outdated
from tooling.cli import main

INDEXES = Path(__file__).parent / "data" / "indexes"
ON = date(2026, 12, 1)


def pin(name: str, kind: PinKind, version: str, location: str) -> Pin:
    return Pin(name=name, kind=kind, version=version, location=location, source="test")


ISTIO = pin("istio", PinKind.KUSTOMIZE, "1.28.0", "kubeflow/manifests 26.03: common/istio")
KPS = pin("kube-prometheus-stack", PinKind.HELM, "81.6.9", "https://prometheus-community.github.io/helm-charts")
RAY_IMAGE = pin("rayproject/ray", PinKind.IMAGE, "2.46.0-py311", "docker.io/rayproject/ray")
PROTOBUF = pin("protobuf", PinKind.PYTHON, "6.33.6", "https://pypi.org/project/protobuf/")
KUBEFLOW_RC = pin("kubeflow/community-distribution", PinKind.KUSTOMIZE, "26.03.1-rc.2", "https://github.com/kubeflow/community-distribution")


def one(p: Pin) -> outdated.PinStatus:
    [status] = outdated.outdated([p], INDEXES, ON)
    return status


def test_git_tags_newer_than_the_pin_without_pre_releases_and_the_support_status() -> None:
    status = one(ISTIO)
    assert status.newer == ["1.30.1", "1.30.0", "1.29.0", "1.28.3"]
    assert status.support_ended and status.support.startswith("Istio 1.28: ends 2026-07-01, Kubernetes 1.30 to 1.34 — ENDED 2026-07-01")


def test_a_helm_index_lists_the_charts_newer_releases() -> None:
    status = one(KPS)
    assert status.newer == ["88.5.3", "82.0.0"] and not status.support_ended
    assert status.support == "kube-prometheus-stack 81: end of support not stated, Kubernetes 1.25 or later"


def test_an_image_tag_keeps_its_flavour() -> None:
    assert one(RAY_IMAGE).newer == ["2.53.0-py311", "2.47.1-py311"]


def test_pypi_leaves_out_yanked_and_pre_releases_and_files_without_releases() -> None:
    assert one(PROTOBUF).newer == ["7.34.0"]


def test_a_pre_release_pin_sees_later_candidates_of_its_kind() -> None:
    assert one(KUBEFLOW_RC).newer == ["26.03.1-rc.3"]


def test_a_missing_index_file_says_what_to_save_where() -> None:
    status = one(pin("kueue", PinKind.HELM, "0.19.2", "oci://registry.k8s.io/kueue/charts/kueue"))
    assert status.error == f"{INDEXES}/oci-registry.k8s.io_kueue_charts_kueue.json: no such file (save registry.k8s.io/kueue/charts/kueue there)"


def test_exit_codes_say_what_ci_should_do() -> None:
    assert outdated.exit_code(outdated.outdated([ISTIO, KPS], INDEXES, ON)) == outdated.EXIT_SUPPORT_ENDED
    assert outdated.exit_code(outdated.outdated([KPS], INDEXES, ON)) == outdated.EXIT_NEWER
    missing = pin("kueue", PinKind.HELM, "0.19.2", "oci://registry.k8s.io/kueue/charts/kueue")
    assert outdated.exit_code(outdated.outdated([missing], INDEXES, ON)) == outdated.EXIT_UNREAD
    current = pin("kube-prometheus-stack", PinKind.HELM, "88.5.3", KPS.location)
    assert outdated.exit_code(outdated.outdated([current], INDEXES, ON)) == 0


def test_an_index_in_the_wrong_format_is_reported_not_raised(tmp_path: Path) -> None:
    (tmp_path / "git-github.com_istio_istio.txt").write_text("")
    (tmp_path / "helm-prometheus-community.github.io_helm-charts-kube-prometheus-stack.yaml").write_text("entries: [1, 2")
    [istio, kps] = outdated.outdated([ISTIO, KPS], tmp_path, ON)
    assert istio.newer == [] and istio.error == ""
    assert kps.error.startswith("https://prometheus-community.github.io/helm-charts/index.yaml: not a helm index")


def test_the_command_from_saved_indexes(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["outdated", "--indexes", str(INDEXES), "--on", "2026-12-01", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["on"] == "2026-12-01"
    names = {p["name"] for p in report["pins"]}
    assert {"istio", "kube-prometheus-stack", "ray", "kindest/node"} <= names
    assert code in (outdated.EXIT_SUPPORT_ENDED, outdated.EXIT_NEWER, outdated.EXIT_UNREAD)
    assert main(["outdated", "--indexes", str(INDEXES / "nope")]) == 2


def test_list_indexes_names_a_file_per_pin(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["outdated", "--list-indexes"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert ["git-github.com_istio_istio.txt", "https://github.com/istio/istio", "istio"] in rows
    assert all(len(r) == 3 for r in rows)


def test_outdated_lists_the_advisories_a_pin_runs_below_request_path_first_in_the_exit_code() -> None:
    """The request path below a fix is what `check` fails (exit 1); an advisory elsewhere is a
    fix to take (exit 5), listed with its identifiers."""
    day = date(2026, 12, 5)
    pipelines = pin("kubeflow/pipelines", PinKind.KUSTOMIZE, "2.16.1", "kubeflow/community-distribution 26.03.1-rc.2: applications/pipeline")
    [status] = outdated.outdated([pipelines], INDEXES, day)
    assert [(a.id, fixed) for a, fixed in status.advisories] == [("Kubeflow Pipelines 2.18.1 security fixes", "2.18.1")]
    assert outdated.exit_code([status]) == outdated.EXIT_NEWER
    assert "    advisory: Kubeflow Pipelines 2.18.1 security fixes, fixed in 2.18.1 (not in the request path) — GHSA-j53r-x5f5-j4hr" in outdated.report([status], day)
    proxy = pin("oauth2-proxy", PinKind.KUSTOMIZE, "v7.15.2", "kubeflow/community-distribution 26.03.1-rc.2: common/oauth2-proxy")
    [old] = outdated.outdated([proxy], INDEXES, day)
    assert [a.id for a, _ in old.advisories] == ["oauth2-proxy v7.15.3 security fixes"] and old.in_request_path
    assert outdated.exit_code([old]) == outdated.EXIT_SUPPORT_ENDED
    [before] = outdated.outdated([proxy], INDEXES, date(2026, 6, 8))
    assert before.advisories == [], "not known before it was published"


def test_a_patched_pin_is_judged_at_the_release_it_runs() -> None:
    from facts.versions import OAUTH2_PROXY

    [status] = outdated.outdated([OAUTH2_PROXY], INDEXES, date(2026, 12, 5))
    assert status.advisories == [] and status.as_dict()["runs"] == "v7.15.3" and status.as_dict()["version"] == "v7.15.2"
    assert outdated.report([status], date(2026, 12, 5))[0].startswith("oauth2-proxy v7.15.2 (images v7.15.3) (kustomize tree): ")
