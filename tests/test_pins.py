"""The upstream CRDs `make crds` downloads: every ref from the pin table, the layout of the
shared data, and a script that stands on the product alone (no test code)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from facts.versions import CRD_SOURCES, PINS
from tooling.schemas import REPO

SCRIPT = REPO / "scripts" / "fetch_crds.py"
SHARED_CRDS = REPO.parent / "shared" / "crds"


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
        "kubeflow/kubeflow": "v1.10.0",
        "kubeflow/manifests": "26.03",
        "prometheus-operator/prometheus-operator": "v0.93.0",
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


@pytest.mark.skipif(not SHARED_CRDS.is_dir(), reason=f"no shared CRDs at {SHARED_CRDS}")
def test_the_fetched_folders_are_the_shared_data_folders() -> None:
    assert sorted(f.folder for f in CRD_SOURCES) == sorted(p.name for p in SHARED_CRDS.iterdir() if p.is_dir())
