"""The upstream CRDs `make crds` downloads: every ref from the pin table, the layout of the
shared data, and a script that stands on the product alone (no test code)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from facts.versions import CRD_SOURCES, PINS
from tooling import schemas
from tooling.schemas import REPO, SHARED_CRD_ROOTS, crd_folders, missing_crd_folders

SCRIPT = REPO / "scripts" / "fetch_crds.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fetch_crds", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fetch_crds_imports_no_test_code_and_writes_no_ref_of_its_own() -> None:
    tree = ast.parse(SCRIPT.read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m and m.split(".")[0] == "tests"}
    docstring = ast.get_docstring(tree, clean=False)
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    assert not [s for s in strings if s != docstring and ("github" in s or "://" in s)], "URLs belong in facts/versions.py"


def test_every_crd_source_is_at_a_pinned_version() -> None:
    pinned = {p.version for p in PINS} | {f"v{p.version}" for p in PINS}
    assert [f.ref for f in CRD_SOURCES if f.ref not in pinned] == []


def test_the_crds_of_the_pinned_releases_are_fetched_at_their_tags() -> None:
    refs = {f.repository: f.ref for f in CRD_SOURCES}
    assert refs == {
        "kubeflow/trainer": "v2.3.0",
        "kubernetes-sigs/jobset": "v0.12.0",
        "ray-project/kuberay": "v1.7.0",
        "kubernetes-sigs/kueue": "v0.19.2",
        "kubeflow/dashboard": "v2.0.0",
        "kubeflow/notebooks": "v1.11.0",
        "kubeflow/community-distribution": "26.03.1-rc.2",
        "cert-manager/cert-manager": "v1.21.1",
        "prometheus-operator/prometheus-operator": "v0.93.1",
        "GoogleCloudPlatform/gke-managed-certs": "3498c2a06d023eeedd1f8da125beb62a809ea4c8",
    }


def test_downloads_name_a_raw_github_url_and_a_file_per_source_path(tmp_path: Path) -> None:
    found = _script().downloads(tmp_path)
    assert len(found) == sum(len(f.paths) for f in CRD_SOURCES)
    assert (
        "https://raw.githubusercontent.com/kubeflow/trainer/v2.3.0/manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml",
        tmp_path / "kubeflow-trainer-v2.3.0" / "kubeflow_trainer_trainer.kubeflow.org_trainjobs.yaml",
    ) in found
    assert len({destination for _, destination in found}) == len(found), "no two files land on one path"


@pytest.mark.skipif(not any(r.is_dir() for r in SHARED_CRD_ROOTS), reason=f"no shared CRDs at {SHARED_CRD_ROOTS}")
def test_every_pinned_folder_is_in_one_of_the_shared_roots() -> None:
    assert missing_crd_folders(SHARED_CRD_ROOTS) == []


def _crd(group: str, kind: str, version: str) -> str:
    plural = f"{kind.lower()}s"
    return (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        f"metadata: {{name: {plural}.{group}}}\n"
        f"spec: {{group: {group}, scope: Namespaced, names: {{kind: {kind}, plural: {plural}}}, "
        f"versions: [{{name: {version}, served: true, storage: true, schema: {{openAPIV3Schema: {{type: object}}}}}}]}}\n"
    )


def test_the_lookup_reads_each_pinned_folder_from_the_first_root_and_no_other_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pinned, other = CRD_SOURCES[0].folder, CRD_SOURCES[1].folder
    first, second = tmp_path / "crds", tmp_path / "crds-next"
    for root, folder, group in ((first, pinned, "first.example"), (second, pinned, "second.example"), (second, other, "other.example"), (first, "unpinned-v0.0.1", "unpinned.example")):
        (root / folder).mkdir(parents=True)
        (root / folder / "crd.yaml").write_text(_crd(group, "Thing", "v1"))
    monkeypatch.setattr(schemas, "crd_roots", lambda: (first, second))
    schemas._shared_crds.cache_clear()
    try:
        assert crd_folders() == {pinned: first / pinned, other: second / other}
        groups = sorted(d["spec"]["group"] for d in schemas._shared_crds())
    finally:
        schemas._shared_crds.cache_clear()
    assert groups == ["first.example", "other.example"], "the second root's copy and the unpinned folder are never read"
    assert set(missing_crd_folders((first, second))) == {f.folder for f in CRD_SOURCES} - {pinned, other}


def test_crd_dir_names_roots_searched_before_the_shared_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CRD_DIR", f"{tmp_path / 'a'}:{tmp_path / 'b'}")
    assert schemas.crd_roots() == (tmp_path / "a", tmp_path / "b", *SHARED_CRD_ROOTS, schemas.CACHE)


@pytest.mark.skipif(not any(r.is_dir() for r in SHARED_CRD_ROOTS), reason=f"no shared CRDs at {SHARED_CRD_ROOTS}")
def test_a_kind_the_render_lacks_is_read_from_its_groups_files_alone() -> None:
    """GKE's ManagedCertificate has no CRD in any render: its schema comes from the pinned
    files named after its group, not from parsing every pinned CRD (megabytes)."""
    found = schemas._group_schemas("networking.gke.io")
    assert ("networking.gke.io/v1", "ManagedCertificate") in found
    assert {key[0].split("/")[0] for key in found} == {"networking.gke.io"}
    assert found[("networking.gke.io/v1", "ManagedCertificate")] == schemas.shared_schemas()[("networking.gke.io/v1", "ManagedCertificate")]
