"""Every example's `--local` run works on CPU with the pinned requirements, and every
framework an example imports is pinned in examples/requirements.txt (generated from the pin
table, tests/test_image_set.py keeps it current).

This file imports nothing of the platform, so it runs in a fresh virtualenv made from
examples/requirements.txt alone, as CI's examples job does (.github/workflows/test.yml):

    pip install -r examples/requirements.txt pytest --extra-index-url https://download.pytorch.org/whl/cpu
    MLPLATFORM_EXAMPLES=all python -m pytest --noconftest tests/test_examples_local.py

The unit suite's virtualenv has torch only: there the examples needing another framework
are skipped, each naming what is missing; with MLPLATFORM_EXAMPLES=all a missing framework
fails instead."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NAMES = ["pytorch_ddp_mnist", "mlx_distributed", "deepspeed_t5", "ray_train_serve", "jax_distributed", "kfp_pipeline"]


def test_every_example_is_covered() -> None:
    assert sorted(p.stem for p in EXAMPLES.glob("*.py")) == sorted(NAMES)


REQUIREMENTS = (EXAMPLES / "requirements.txt").read_text()
PINNED = {line.split("==")[0].split("[")[0] for line in REQUIREMENTS.splitlines() if line and not line.startswith("#")}
CLUSTER_ONLY = {"deepspeed": "the deepspeed-runtime image; the local run trains without it"}
COMES_WITH = {"numpy": "jax and torch"}
LOCAL_NEEDS = {
    "pytorch_ddp_mnist": ("torch",),
    "mlx_distributed": ("mlx",),
    "deepspeed_t5": ("torch", "transformers"),
    "ray_train_serve": ("ray", "torch"),
    "jax_distributed": ("jax",),
    "kfp_pipeline": ("kfp", "torch"),
}


def imported_packages(name: str) -> set[str]:
    """Top-level packages the example imports anywhere (inside its functions too)."""
    tree = ast.parse((EXAMPLES / f"{name}.py").read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m != "__future__"}


@pytest.mark.parametrize("name", NAMES)
def test_every_framework_an_example_imports_is_pinned(name: str) -> None:
    unpinned = imported_packages(name) - PINNED - set(CLUSTER_ONLY) - set(COMES_WITH)
    assert unpinned == set(), f"{name} imports {unpinned}: pin them in facts/image_set.py python_packages"
    assert set(LOCAL_NEEDS[name]) <= PINNED


@pytest.mark.parametrize("name", NAMES)
def test_example_runs_locally_on_cpu(name: str) -> None:
    missing = [m for m in LOCAL_NEEDS[name] if importlib.util.find_spec(m) is None]
    if missing:
        message = f"{name} --local needs {', '.join(missing)}: pip install -r examples/requirements.txt"
        if os.environ.get("MLPLATFORM_EXAMPLES") == "all":
            pytest.fail(message)
        pytest.skip(message)
    env = {**os.environ, "OMP_NUM_THREADS": "2", "RAY_USAGE_STATS_ENABLED": "0"}
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), "--local"], capture_output=True, text=True, timeout=600, env=env
    )
    assert run.returncode == 0, run.stderr[-3000:]
    if name == "ray_train_serve":  # trained, served, and queried over HTTP and a handle
        assert "predictions [" in run.stdout, run.stdout[-2000:]
        return
    if name == "kfp_pipeline":  # every step ran, the model was read back from the artifact store
        assert "Pipeline 'train-through-trainer' finished with status SUCCESS" in re.sub(r"\x1b\[[0-9;]*m", "", run.stdout + run.stderr)
        assert float(re.findall(r"^held-out mse (\S+)$", run.stdout, re.M)[-1]) < 0.01, run.stdout[-2000:]
    first, last = (float(v) for v in re.findall(r"^loss (\S+) -> (\S+)$", run.stdout, re.M)[-1])
    assert last < first, run.stdout[-2000:]  # it learns


def test_jax_example_trains_as_two_processes_the_way_the_runtime_starts_it() -> None:
    """Two local processes with the env Trainer's JAX plugin gives each node
    (JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID) join one mesh and see one loss."""
    if importlib.util.find_spec("jax") is None:
        message = "the two-process JAX run needs jax: pip install -r examples/requirements.txt"
        if os.environ.get("MLPLATFORM_EXAMPLES") == "all":
            pytest.fail(message)
        pytest.skip(message)
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = (
        f"import runpy; f = runpy.run_path({str(EXAMPLES / 'jax_distributed.py')!r})['train_jax_mlp']; "
        "losses = f(steps=40, batch_size=128); print('loss', losses[0], '->', losses[-1])"
    )
    base = {**os.environ, "JAX_COORDINATOR_ADDRESS": f"127.0.0.1:{port}", "JAX_NUM_PROCESSES": "2"}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", code], env={**base, "JAX_PROCESS_ID": str(i)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for i in range(2)
    ]
    outputs = [p.communicate(timeout=300) for p in processes]
    assert [p.returncode for p in processes] == [0, 0], [err[-2000:] for _, err in outputs]
    results = [re.findall(r"^loss (\S+) -> (\S+)$", out, re.M)[-1] for out, _ in outputs]
    assert results[0] == results[1], results  # one global loss
    assert "2 processes" in outputs[0][0]
