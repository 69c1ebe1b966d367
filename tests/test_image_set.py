"""The image set: the notebook image (its committed Dockerfile) and the team Ray clusters'
images run one Ray version on one Python minor, all from the pin table; bumping one of
them alone fails; the generated files are current."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from facts import image_set
from facts.image_set import RayEnd, dockerfile, notebook_end, problems, ray_image_end
from facts.versions import (
    KUBEFLOW_SDK,
    NOTEBOOK_BASE_PYTHON,
    RAY,
    RAY_GPU_IMAGE,
    RAY_IMAGE,
    TORCH,
    TORCH_RUNTIME_IMAGE,
)
from tests.support.fixtures import GKE_STACKS_MATRIX

REPO = Path(__file__).resolve().parents[1]
COMMITTED = (REPO / image_set.DOCKERFILE).read_text()


def test_the_committed_dockerfile_is_the_generated_one() -> None:
    assert dockerfile() == COMMITTED, "run: python scripts/generate_pinned.py"


def test_the_examples_requirements_are_current() -> None:
    assert (REPO / image_set.REQUIREMENTS).read_text() == image_set.requirements(), "run: python scripts/generate_pinned.py"


def test_notebook_and_ray_images_run_one_ray_on_one_python() -> None:
    notebook = notebook_end(COMMITTED)
    assert notebook == RayEnd(ray=RAY.version, python=NOTEBOOK_BASE_PYTHON)
    assert ray_image_end(RAY_IMAGE) == ray_image_end(RAY_GPU_IMAGE) == notebook
    assert problems(COMMITTED) == []


BUMPS = {
    "ray image's ray": ((replace(RAY_IMAGE, version="2.59.0-py312"), RAY_GPU_IMAGE), COMMITTED),
    "ray gpu image's python": ((RAY_IMAGE, replace(RAY_GPU_IMAGE, version="2.58.0-py313-gpu")), COMMITTED),
    "notebook's ray": ((RAY_IMAGE, RAY_GPU_IMAGE), dockerfile(ray=replace(RAY, version="2.59.0"))),
    "notebook's python": ((RAY_IMAGE, RAY_GPU_IMAGE), dockerfile(python="3.13")),
}


@pytest.mark.parametrize("bump", list(BUMPS))
def test_bumping_one_image_alone_breaks_the_set(bump: str) -> None:
    ray_images, notebook = BUMPS[bump]
    found = problems(notebook, ray_images)
    assert found and all("Ray Client refuses the connection" in p for p in found), found


def test_a_ray_tag_without_its_python_is_refused() -> None:
    # rayproject/ray:<version> without -py3xx has the release's lowest Python (Ray's installation docs).
    with pytest.raises(ValueError, match="py3xx"):
        ray_image_end(replace(RAY_IMAGE, version="2.58.0"))


def test_the_notebook_image_installs_the_pinned_sdk_and_the_runtimes_torch() -> None:
    assert f'"{KUBEFLOW_SDK.name}=={KUBEFLOW_SDK.version}"' in COMMITTED
    assert TORCH_RUNTIME_IMAGE.version.startswith(f"{TORCH.version}-")
    assert COMMITTED.count(f'"torch=={TORCH.version}"') == 2  # cpu and gpu targets
    assert " AS cpu" in COMMITTED and " AS gpu" in COMMITTED
    # The GPU target takes the CUDA build of the torch runtime image (cuda13.0 -> cu130).
    assert image_set.torch_cuda_index() == "https://download.pytorch.org/whl/cu130"


def test_the_notebook_tag_changes_with_the_dockerfile() -> None:
    tag, gpu = image_set.notebook_tag(), image_set.notebook_tag(gpu=True)
    assert tag.startswith(f"{RAY.version}-py312-") and gpu == f"{tag}-gpu"
    assert image_set.notebook_image("europe-docker.pkg.dev/p/r") == f"europe-docker.pkg.dev/p/r/notebook:{tag}"


def test_the_workflow_builds_every_target_for_every_gke_stack() -> None:
    import re

    import yaml

    workflow = yaml.safe_load((REPO / ".github/workflows/notebook-image.yml").read_text())
    job = workflow["jobs"]["build"]
    targets = [t for t in re.findall(r"^FROM \S+ AS (\S+)$", COMMITTED, re.M) if t != "base"]
    assert job["strategy"]["matrix"]["target"] == targets == ["cpu", "gpu"]
    assert job["strategy"]["matrix"]["stack"] == GKE_STACKS_MATRIX  # every GKE stack of stacks/ (tests/test_fork.py)
    build = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("docker/build-push-action"))
    assert build["with"]["context"] == str(Path(image_set.DOCKERFILE).parent)


def test_ci_runs_the_examples_on_the_notebook_images_python() -> None:
    import yaml

    workflow = yaml.safe_load((REPO / ".github/workflows/test.yml").read_text())
    setup = next(s for s in workflow["jobs"]["examples"]["steps"] if str(s.get("uses", "")).startswith("actions/setup-python"))
    assert setup["with"]["python-version"] == NOTEBOOK_BASE_PYTHON
