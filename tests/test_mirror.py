"""`make mirror` (tooling/mirror.py): the upstream mirror built from the pin table, with helm
and git, from sources served on loopback out of the mirror the tests find (tests/support/
loopback.py): what it builds is what those sources hold, checked and summed; and where the
tools look for a mirror. The whole pin table is built by `make fork-trial` (a clone with no
mirror beside it); here one HTTP chart, one OCI chart (redirected to the loopback repository),
the Pipelines folder with its remote bases, and the role files, and pieces the sources do not
serve: optional where no stack enables their component, else the build stops naming them."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from facts.versions import (
    ARGO_WORKFLOWS,
    DCGM_EXPORTER,
    GPUDIRECT_MANIFESTS,
    GRAFANA,
    KUBEFLOW_FOLDERS,
    KUBEFLOW_MANIFESTS,
    KUBEFLOW_ROLE_FILES,
    KUEUE_CHART,
    NCCL_TCPXO_INSTALLER,
    NVIDIA_DRA_DRIVER_CHART,
    REMOTE_BASES,
)
from plumbing.sources import MIRROR_CHARTS, MIRROR_MANIFESTS, MIRROR_REMOTE
from stackmodel.config import load
from stackmodel.registry import COMPONENTS
from tests.support import mirror
from tests.support.loopback import CHARTS, serving
from tooling import mirror as make_mirror
from tooling.mirror import (
    MANIFEST,
    ROLES,
    SUMS,
    MirrorError,
    Request,
    build,
    load_sources,
    main,
    optional_pins,
    role_file_name,
    state,
    verify,
)
from tooling.plan import Plan
from tooling.render import upstream

REPO = Path(__file__).resolve().parents[1]
TAG = KUBEFLOW_MANIFESTS.version
PIPELINES = "applications/pipeline"
PART = Request(charts=(DCGM_EXPORTER, KUEUE_CHART), kubeflow_folders=(PIPELINES,), role_files=KUBEFLOW_ROLE_FILES, remote_bases=REMOTE_BASES, release_manifests=())
"""A part of the pin table, each kind of source once: an HTTP repository's chart, an OCI chart,
a Kubeflow folder naming remote bases, the role files."""
WITH_UNSERVED = dataclasses.replace(PART, charts=(*PART.charts, NVIDIA_DRA_DRIVER_CHART), release_manifests=(NCCL_TCPXO_INSTALLER,))
"""PART and two pieces the loopback sources of PART do not serve (`unserved`): the DRA driver's
chart, the TCPXO installer manifest."""
FORK_STACKS = REPO / "tests" / "data" / "fork"
"""A stacks/ whose one stack (`make fork-trial`'s) enables Kueue and DCGM, not the fabric or DRA."""
DRA_CHART = f"{MIRROR_CHARTS}/{NVIDIA_DRA_DRIVER_CHART.name}-{NVIDIA_DRA_DRIVER_CHART.version}.tgz"
TCPXO_INSTALLER = f"manifests/GoogleCloudPlatform/container-engine-accelerators/{GPUDIRECT_MANIFESTS.version}/gpudirect-tcpxo/nccl-tcpxo-installer.yaml"


def unserved(sources: dict[str, str], request: Request, tmp_path: Path) -> Path:
    """The `--sources` file for `request` of `sources` (loopback, of PART or less) that also sends
    the DRA chart and Kueue's to the loopback chart repository, whose index lacks them unless
    served, and the GPUDirect manifests to a path of its server that answers 404."""
    repository = sources[DCGM_EXPORTER.location]
    redirects = {KUEUE_CHART.location: repository, NVIDIA_DRA_DRIVER_CHART.location: repository, GPUDIRECT_MANIFESTS.location: f"{repository}/nowhere", **sources}
    path = tmp_path / "sources.yaml"
    path.write_text(yaml.safe_dump({k: v for k, v in redirects.items() if k in request.locations()}))
    return path


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_every_tree_the_fixture_stacks_install_lies_in_a_mirrored_folder(shipped_plan: Callable[[str], Plan]) -> None:
    prefix, suffix = f"{KUBEFLOW_MANIFESTS.location}//", f"?ref={TAG}"
    paths = {
        e["directory"].removeprefix(prefix).removesuffix(suffix)
        for stack in ("kind", "prod", "dev", "kind-kubeflow-options")  # kind and GKE; Katib, the Hub and Spark
        for e in upstream(shipped_plan(stack))
        if e["kind"] == "kustomize"
    }
    outside = sorted(p for p in paths if not any(p.startswith(f"{folder}/") for folder in KUBEFLOW_FOLDERS))
    assert outside == [], "add their folders to facts/versions.py KUBEFLOW_FOLDERS"
    unused = sorted(f for f in KUBEFLOW_FOLDERS if not any(p.startswith(f"{f}/") for p in paths))
    assert unused == [], "a folder no fixture stack installs from: mirrored for nothing"
    assert {b.named_by for b in REMOTE_BASES} <= set(KUBEFLOW_FOLDERS)


@mirror.needed
def test_make_mirror_builds_from_loopback_sources_exactly_what_they_serve(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    into = tmp_path / "upstream"
    stacks = ["--stacks", str(FORK_STACKS)]
    with serving(mirror.MIRROR, PART, tmp_path) as sources:
        assert sources[KUEUE_CHART.location].startswith("http://127.0.0.1:")  # the OCI chart, through the redirect
        assert main(["--into", str(into), "--sources", str(unserved(sources, WITH_UNSERVED, tmp_path)), *stacks], WITH_UNSERVED) == 0
    # What the sources did not serve is optional (the fork's stack enables neither component): named, why, and left out.
    out = capsys.readouterr().out
    assert f'  {DRA_CHART}: not fetched: dra-driver-nvidia-gpu {NVIDIA_DRA_DRIVER_CHART.version} from http://127.0.0.1:' in out
    assert 'chart "dra-driver-nvidia-gpu" matching 0.4.1 not found in repository0 index' in out
    assert "Optional: no stack enables nvidiaDraDriver; a stack that does stops at render naming this file and `make mirror`" in out
    assert f"  {TCPXO_INSTALLER}: not fetched: " in out and "HTTP Error 404" in out
    assert "Optional: no stack enables nvidiaDraDriver or gpuFabric;" in out
    assert f"their components enabled by no stack of tests/data/fork/: {DRA_CHART} (nvidiaDraDriver); {TCPXO_INSTALLER} (nvidiaDraDriver or gpuFabric)" in out
    assert not (into / DRA_CHART).exists() and not (into / "manifests").exists()
    left_out = json.loads((into / MANIFEST).read_text())["notFetched"]
    assert [(p["path"], p["pin"], p["components"]) for p in left_out] == [
        (DRA_CHART, "dra-driver-nvidia-gpu 0.4.1", ["nvidiaDraDriver"]),
        (TCPXO_INSTALLER, f"GoogleCloudPlatform/container-engine-accelerators {GPUDIRECT_MANIFESTS.version}", ["nvidiaDraDriver", "gpuFabric"]),
    ]

    for pin in PART.charts:
        name = f"{MIRROR_CHARTS}/{pin.name}-{pin.version}.tgz"
        assert (into / name).read_bytes() == (mirror.MIRROR / name).read_bytes()
    for folder in (f"{MIRROR_MANIFESTS}/{TAG}/{PIPELINES}", ROLES, *(f"{MIRROR_REMOTE}/{b.repository}/{b.pin.version}" for b in REMOTE_BASES)):
        assert _files(into / folder) == _files(mirror.MIRROR / folder), folder
    assert sorted(p.name for p in (into / ROLES).iterdir()) == sorted(map(role_file_name, KUBEFLOW_ROLE_FILES))
    # The remote bases: the four Argo paths the Pipelines tree names, and the repository's LICENSE.
    argo = into / MIRROR_REMOTE / REMOTE_BASES[0].repository / REMOTE_BASES[0].pin.version
    assert sorted(str(p.relative_to(argo)) for p in argo.glob("manifests/*/*")) == [
        "manifests/base/crds",
        "manifests/base/workflow-controller",
        "manifests/cluster-install-no-crds/workflow-controller-rbac",
        "manifests/namespace-install/workflow-controller-rbac",
    ]
    assert (argo / "LICENSE").is_file() and (into / MIRROR_MANIFESTS / TAG / "LICENSE").is_file()

    recorded = json.loads((into / MANIFEST).read_text())
    assert recorded["request"] == WITH_UNSERVED.as_json()
    kueue = next(r for r in recorded["fetched"] if r["path"] == f"{MIRROR_CHARTS}/kueue-{KUEUE_CHART.version}.tgz")
    assert kueue["digest"] == "sha256:" + hashlib.sha256((into / kueue["path"]).read_bytes()).hexdigest()
    listed = [line.split("  ", 1)[1] for line in (into / SUMS).read_text().splitlines()]
    assert listed == sorted(str(p.relative_to(into)) for p in into.rglob("*") if p.is_file() and p.name != SUMS)
    assert verify(into) == []
    assert "mirror: building" in out

    # A mirror of the same pins that matches its sums is left alone, and says what it lacks; one
    # that lacks what a stack now needs is rebuilt, as is one that does not match its sums.
    assert main(["--into", str(into), *stacks], WITH_UNSERVED) == 0
    assert f"holds the pinned upstreams and matches its SHA256SUMS ({len(listed)} files); but not these optional pieces" in capsys.readouterr().out
    assert state(into, WITH_UNSERVED) == (
        f"the mirror at {into} was built without {DRA_CHART} (nvidiaDraDriver), {TCPXO_INSTALLER} (nvidiaDraDriver or gpuFabric), "
        "which a stack now needs"
    )
    assert state(into, dataclasses.replace(WITH_UNSERVED, optional={NVIDIA_DRA_DRIVER_CHART: ("nvidiaDraDriver",)})) == (
        f"the mirror at {into} was built without {TCPXO_INSTALLER} (nvidiaDraDriver or gpuFabric), which a stack now needs"
    )
    changed = into / MIRROR_MANIFESTS / TAG / PIPELINES / "overlays" / "kustomization.yaml"
    changed.write_text(changed.read_text() + "# edited\n")
    assert state(into, WITH_UNSERVED) == f"{into} does not match its {SUMS}: {changed.relative_to(into)}: sha256 differs from {SUMS}"
    assert make_mirror.outdated(into) == f"the mirror at {into} was built from other pins than facts/versions.py has now"


@mirror.needed
def test_a_chart_that_is_not_what_the_repository_index_says_is_refused(tmp_path: Path) -> None:
    charts = Request(charts=(DCGM_EXPORTER,), kubeflow_folders=(), role_files=(), remote_bases=(), release_manifests=())
    with serving(mirror.MIRROR, charts, tmp_path) as sources:
        (index,) = tmp_path.glob(f"*/{CHARTS}/index.yaml")
        served = yaml.safe_load(index.read_text())
        served["entries"]["dcgm-exporter"][0]["digest"] = "0" * 64
        index.write_text(yaml.safe_dump(served))
        with pytest.raises(MirrorError) as refused:
            build(tmp_path / "upstream", charts, sources)
    assert f"dcgm-exporter-{DCGM_EXPORTER.version}.tgz has sha256 " in str(refused.value)
    assert f"the repository index says {'0' * 64}" in str(refused.value)


@mirror.needed
def test_a_piece_a_stack_needs_that_its_source_does_not_serve_stops_the_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The fabric fixture's stack in stacks/ makes the GPUDirect manifests required, and Kueue's
    chart (which every stack installs) is required anyway; a stack that does not load stops the
    build before anything is fetched."""
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    shutil.copy(REPO / "tests" / "stacks" / "Pulumi.dev-fabric.yaml", stacks)
    served = Request(charts=(DCGM_EXPORTER,), kubeflow_folders=(), role_files=(), remote_bases=(), release_manifests=())
    with serving(mirror.MIRROR, served, tmp_path) as sources:
        # The DRA chart stays optional (the fabric stack has no DRA pool); the installer does not.
        fabric = dataclasses.replace(served, charts=(NVIDIA_DRA_DRIVER_CHART,), release_manifests=(NCCL_TCPXO_INSTALLER,))
        options = ["--sources", str(unserved(sources, fabric, tmp_path)), "--stacks", str(stacks)]
        assert main(["--into", str(tmp_path / "fabric"), *options], fabric) == 1
        out, err = capsys.readouterr()
        assert f"  {DRA_CHART}: not fetched: " in out
        assert err.startswith(
            f"mirror: error: gpudirect-tcpxo/nccl-tcpxo-installer.yaml at 992db812: fetching {sources[DCGM_EXPORTER.location]}/nowhere/"
        ) and "HTTP Error 404" in err
        kueue = dataclasses.replace(served, charts=(KUEUE_CHART,))
        options = ["--sources", str(unserved(sources, kueue, tmp_path)), "--stacks", str(stacks)]
        assert main(["--into", str(tmp_path / "kueue"), *options], kueue) == 1
        assert capsys.readouterr().err.startswith(f"mirror: error: kueue {KUEUE_CHART.version} from http://127.0.0.1:")
    assert not (tmp_path / "fabric").exists() and not (tmp_path / "kueue").exists()

    (stacks / "Pulumi.broken.yaml").write_text("config:\n  mlplatform:environment: nowhere\n")
    assert main(["--into", str(tmp_path / "broken"), "--stacks", str(stacks)], served) == 1
    err = capsys.readouterr().err
    assert err.startswith("mirror: error: which upstreams the stacks need is unknown while a stack does not load")
    assert f"{stacks / 'Pulumi.broken.yaml'}: " in err and "mlplatform:environment" in err


def test_a_pin_is_optional_only_where_no_stack_enables_a_component_that_names_it() -> None:
    """The components and pins from the list (a component a fork adds, off by default, brings
    its pins in as optional, no table here to edit); the shipped ones' facts as they stand."""
    by_pin = Request().by_pin()
    kind = {name for name, on in load("kind").enabled_components().items() if on}
    optional = optional_pins(by_pin, COMPONENTS, kind)
    assert {pin: optional.get(pin) for pin in (DCGM_EXPORTER, NVIDIA_DRA_DRIVER_CHART, GPUDIRECT_MANIFESTS, KUEUE_CHART)} == {
        DCGM_EXPORTER: ("dcgmExporter",),
        NVIDIA_DRA_DRIVER_CHART: ("nvidiaDraDriver",),
        GPUDIRECT_MANIFESTS: ("nvidiaDraDriver", "gpuFabric"),
        KUEUE_CHART: None,
    }
    named_by_kind = {pin for spec in COMPONENTS if spec.name in kind for pin in spec.pins}
    assert not named_by_kind & set(optional), "a pin the kind stack installs is never optional"
    # The GPUDirect manifests' commit holds the fabric's NCCL installers and the DRA pools' COS driver installer.
    assert GPUDIRECT_MANIFESTS not in optional_pins(by_pin, COMPONENTS, kind | {"gpuFabric"})
    assert GPUDIRECT_MANIFESTS not in optional_pins(by_pin, COMPONENTS, kind | {"nvidiaDraDriver"})
    assert optional_pins(by_pin, COMPONENTS, {spec.name for spec in COMPONENTS}) == {}
    # No stack at all: each pin of a component is optional, one no component names (Argo, a remote base) is not.
    assert optional_pins((GRAFANA, ARGO_WORKFLOWS), COMPONENTS, set()) == {GRAFANA: ("monitoring",)}
    assert KUBEFLOW_MANIFESTS not in by_pin, "the Kubeflow release is a clone the tests read whole: required"


def test_sources_name_pinned_locations_and_urls(tmp_path: Path) -> None:
    with pytest.raises(MirrorError, match=r"sources: https://charts\.example\.com is the location of no pin; the pins' locations: "):
        build(tmp_path / "upstream", Request(charts=(KUEUE_CHART,), kubeflow_folders=(), role_files=(), remote_bases=(), release_manifests=()), {"https://charts.example.com": "http://127.0.0.1:1"})
    local = tmp_path / "sources.yaml"
    local.write_text(yaml.safe_dump({KUEUE_CHART.location: "../charts"}))
    with pytest.raises(MirrorError, match=r"oci://registry\.k8s\.io/kueue/charts/kueue: a source is a URL"):
        load_sources(local)


def test_the_sums_name_every_file_changed_missing_or_added(tmp_path: Path) -> None:
    (tmp_path / "charts").mkdir()
    (tmp_path / "charts" / "a.tgz").write_bytes(b"a")
    (tmp_path / "b.yaml").write_text("b")
    make_mirror.write_sums(tmp_path)
    assert (tmp_path / SUMS).read_text() == (
        f"{hashlib.sha256(b'b').hexdigest()}  b.yaml\n{hashlib.sha256(b'a').hexdigest()}  charts/a.tgz\n"
    )
    assert verify(tmp_path) == []
    (tmp_path / "charts" / "a.tgz").write_bytes(b"A")
    (tmp_path / "b.yaml").unlink()
    (tmp_path / "c.yaml").write_text("c")
    assert verify(tmp_path) == ["b.yaml: missing", "c.yaml: not in SHA256SUMS", "charts/a.tgz: sha256 differs from SHA256SUMS"]


def test_the_tools_find_the_clones_own_mirror_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local, env, shared = tmp_path / "clone" / ".mlplatform" / "upstream", tmp_path / "env", tmp_path / "shared" / "upstream"
    monkeypatch.setattr(make_mirror, "LOCAL_MIRROR", local)
    monkeypatch.setattr(make_mirror, "SHARED_MIRROR", shared)
    monkeypatch.setenv(make_mirror.MIRROR_ENV, str(env))
    shared.mkdir(parents=True)
    local.mkdir(parents=True)
    assert make_mirror.mirror_for(None) == env, "a local folder without mirror.json is no mirror (a build stopped half-way)"
    (local / MANIFEST).write_text("{}")
    assert make_mirror.mirror_for(None) == local
    assert make_mirror.mirror_for(tmp_path / "option") == tmp_path / "option"
    (local / MANIFEST).unlink()
    monkeypatch.delenv(make_mirror.MIRROR_ENV)
    assert make_mirror.mirror_for(None) == shared
    shared.rmdir()
    assert make_mirror.mirror_for(None) is None


def test_every_workflow_job_that_runs_the_suite_builds_the_mirror_first_cached_on_the_pins() -> None:
    """A fork's CI has no ../shared: each job that runs pytest (make test, make e2e) restores the
    mirror cached under the pin table's hash, then `make mirror` (which checks or rebuilds it)."""
    found = []
    for workflow in sorted((REPO / ".github" / "workflows").glob("*.yml")):
        for name, job in yaml.safe_load(workflow.read_text())["jobs"].items():
            runs = [step.get("run", "") for step in job.get("steps", [])]
            suite = next((i for i, run in enumerate(runs) if run in ("make test", "make e2e")), None)
            if suite is None:
                continue
            found.append(f"{workflow.name}:{name}")
            steps = job["steps"][:suite]
            assert "make mirror" in runs[:suite], f"{workflow.name} {name}: no make mirror before the suite"
            caches = [s for s in steps if str(s.get("uses", "")).startswith("actions/cache@")]
            assert [c["with"] for c in caches] == [
                {"path": ".mlplatform/upstream", "key": "upstream-mirror-${{ hashFiles('facts/versions.py') }}"}
            ], f"{workflow.name} {name}"
    assert found == ["e2e.yml:kind", "test.yml:unit"]
