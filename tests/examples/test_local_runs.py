"""Every example's `--local` run works on CPU with the pinned requirements, and shows what a data
scientist looks at: the loss goes down, the checkpoint or model is where the example says (a
local folder standing in for the team bucket or artifact store), Ray Serve answers over HTTP with
what the model learned, the pipeline's steps run in order. The two distributed frameworks also
run as two processes, the way their runtimes start them. Every framework an example imports is
pinned in examples/requirements.txt (generated from the pin table; tests/test_image_set.py keeps
it current).

This folder runs in the examples' own virtualenv, made from examples/requirements.txt alone
(`make examples`; the unit suite's cannot hold Ray, and tests/conftest.py leaves this folder to
it). With MLPLATFORM_EXAMPLES=all, as there, a missing framework fails instead of skipping."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
NAMES = [
    "pytorch_ddp_mnist",
    "mlx_distributed",
    "deepspeed_t5",
    "ray_train_serve",
    "jax_distributed",
    "kfp_pipeline",
    "katib_mnist_search",
    "model_registry_mnist",
    "spark_mnist_stats",
    "kserve_mnist",
    "llm_openai",
]
NO_LOCAL_RUN = {"spark_mnist_stats": "its job runs in the Spark image; PySpark's jars and a JVM for a dozen lines (its docstring)"}


def test_every_example_is_covered() -> None:
    assert sorted(p.stem for p in EXAMPLES.glob("*.py")) == sorted(NAMES)


REQUIREMENTS = (EXAMPLES / "requirements.txt").read_text()
PINNED = {line.split("==")[0].split("[")[0] for line in REQUIREMENTS.splitlines() if line and not line.startswith("#")}
CLUSTER_ONLY = {
    "deepspeed": "the deepspeed-runtime image; the local run trains without it",
    "pyspark": "the Spark image the SDK's Spark jobs run (facts/versions.py SPARK_IMAGE); the example has no local run",
}
COMES_WITH = {"numpy": "jax and torch", "kubernetes": "kserve and kfp", "tokenizers": "transformers"}
LOCAL_NEEDS = {
    "pytorch_ddp_mnist": ("torch",),
    "mlx_distributed": ("mlx",),
    "deepspeed_t5": ("torch", "transformers"),
    "ray_train_serve": ("ray", "torch"),
    "jax_distributed": ("jax",),
    "kfp_pipeline": ("kfp", "torch"),
    "katib_mnist_search": ("torch",),
    "model_registry_mnist": ("torch",),
    "spark_mnist_stats": (),
    "llm_openai": ("transformers", "torch", "openai"),
    "kserve_mnist": ("torch", "kserve"),
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
    # A sibling example (the MNIST one, which the search and the registry examples train) is no package.
    return {m for m in found if m not in sys.stdlib_module_names and m != "__future__" and m not in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_every_framework_an_example_imports_is_pinned(name: str) -> None:
    unpinned = imported_packages(name) - PINNED - set(CLUSTER_ONLY) - set(COMES_WITH) - set(NAMES)
    assert unpinned == set(), f"{name} imports {unpinned}: pin them in facts/image_set.py python_packages"
    assert set(LOCAL_NEEDS[name]) <= PINNED


def needs(*modules: str) -> None:
    """Skip (fail under MLPLATFORM_EXAMPLES=all) where a framework is not installed."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        message = f"needs {', '.join(missing)}: pip install -r examples/requirements.txt (or `make examples`)"
        if os.environ.get("MLPLATFORM_EXAMPLES") == "all":
            pytest.fail(message)
        pytest.skip(message)


# The local Ray on 127.0.0.1, not the machine's routable address (ray 2.58.0 _private/services.py
# get_node_ip_address: what Ray does for a laptop's local cluster).
ENV = {**os.environ, "OMP_NUM_THREADS": "2", "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
LOSS_LINE = re.compile(r"^loss (\S+) -> (\S+)$", re.M)


def run_local(name: str, *args: str, env: dict[str, str] | None = None) -> str:
    """`python examples/<name>.py --local ARGS`: its stdout (stderr too for KFP's runner), after
    asserting it succeeded."""
    needs(*LOCAL_NEEDS[name])
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), "--local", *args],
        capture_output=True, text=True, timeout=600, env={**ENV, **(env or {})}, cwd=REPO,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def learned(name: str, output: str) -> tuple[float, float]:
    """The `loss FIRST -> LAST` line the example prints: the loss went down."""
    found = LOSS_LINE.findall(output)
    assert found, f"{name} printed no `loss FIRST -> LAST` line:\n{output[-2000:]}"
    first, last = (float(v) for v in found[-1])
    assert last < first, f"{name} did not learn: loss {first} -> {last}"
    print(f"\n{name}: loss {first} -> {last}")
    return first, last


def test_pytorch_ddp_learns_on_every_sample() -> None:
    output = run_local("pytorch_ddp_mnist")
    learned("pytorch_ddp_mnist", output)
    assert "rank 0 trained on 1000 of 1000 samples" in output  # one process: every sample
    # The metric line a Katib search reads (Katib v0.19.0 StdOut collector: `name=value`).
    assert re.search(r"^loss=[0-9.]+$", output, re.M)


TRIAL = re.compile(r"^trial \d+: lr=(\S+) loss=(\S+)$", re.M)


def test_the_learning_rate_search_runs_its_trials_and_tells_them_apart() -> None:
    output = run_local("katib_mnist_search")
    trials = [(float(lr), float(loss)) for lr, loss in TRIAL.findall(output)]
    assert len(trials) == 4, output[-2000:]
    assert all(0.001 <= lr <= 0.1 for lr, _ in trials)  # drawn from the search space
    best = min(loss for _, loss in trials)
    worst = max(loss for _, loss in trials)
    assert best < worst, f"every learning rate gave the same loss: {trials}"
    found = re.search(r"^best lr=(\S+) loss=(\S+);", output, re.M)
    assert found and float(found[2]) == pytest.approx(best, abs=1e-4)


def test_the_registry_example_trains_and_keeps_the_weights_it_would_register(tmp_path: Path) -> None:
    needs("torch")
    output = run_local("model_registry_mnist", "--out", str(tmp_path), "--version", "v3")
    learned("model_registry_mnist", output)
    weights = tmp_path / "mnist-cnn" / "v3" / "model.pt"
    assert weights.is_file()
    import torch

    state = torch.load(weights)
    assert state["0.weight"].shape == (16, 1, 3, 3)  # the example's first convolution
    assert "not registered: no Model Registry runs outside the cluster" in output


def test_mlx_learns_as_a_group_of_one() -> None:
    output = run_local("mlx_distributed")
    learned("mlx_distributed", output)
    assert "(1 ranks)" in output


def test_jax_learns_on_one_process() -> None:
    output = run_local("jax_distributed")
    learned("jax_distributed", output)
    assert "(1 processes, " in output


def test_deepspeed_t5_learns_and_checkpoints_to_the_team_bucket_path(tmp_path: Path) -> None:
    """The job writes t5-deepspeed/step<N> under the bucket's mount (TEAM_BUCKET_PATH in the
    notebook); here a folder stands in for the mount."""
    bucket = tmp_path / "team-bucket"
    output = run_local("deepspeed_t5", env={"TEAM_BUCKET_PATH": str(bucket)})
    learned("deepspeed_t5", output)
    checkpoint = bucket / "t5-deepspeed" / "step20.pt"
    assert f"checkpoint step20 written to {checkpoint.parent}" in output
    import torch

    state = torch.load(checkpoint)  # what a data scientist reloads: the model's weights
    assert {key.split(".")[0] for key in state} >= {"shared", "encoder", "decoder", "lm_head"}
    assert all(isinstance(value, torch.Tensor) for value in state.values())
    print(f"deepspeed_t5: checkpoint {checkpoint.relative_to(tmp_path)}, {len(state)} tensors")


def test_ray_trains_checkpoints_to_its_storage_and_serve_answers_over_http(tmp_path: Path) -> None:
    """Train and serve as Ray jobs through the token-guarded Jobs API, then a POST to Serve: the
    checkpoint lies under the storage (here a folder standing in for gs://$TEAM_BUCKET/ray), and
    the served model predicts what the data says: y = x . (1..8)/8, so 4.5 for a row of ones, 0
    for zeros."""
    storage = tmp_path / "ray"
    output = run_local("ray_train_serve", "--local-storage", str(storage))
    learned("ray_train_serve", output)
    (checkpoint,) = re.findall(r"^CHECKPOINT (\S+)$", output, re.M)
    assert Path(checkpoint).parent == storage / "regressor" and (Path(checkpoint) / "model.pt").is_file()
    found = re.findall(r"^predictions \[(\S+), (\S+)\]", output, re.M)
    assert found, output[-2000:]
    ones, zeros = (float(v) for v in found[-1])
    assert abs(ones - 4.5) < 0.5 and abs(zeros) < 0.5, (ones, zeros)
    print(f"ray_train_serve: checkpoint {Path(checkpoint).relative_to(tmp_path)}; Serve answered [{ones:.2f}, {zeros:.2f}]")


def test_the_pipeline_runs_its_steps_in_order_and_keeps_the_model_in_its_store(tmp_path: Path) -> None:
    """KFP's local runner: prepare-data, train, evaluate, each to SUCCESS in that order; the Model
    artifact in the pipeline root (the team's artifact store there) holds the weights the data was
    made with (y = x . [1.5, -2, 0.5, 3] + 0.25)."""
    root = tmp_path / "pipeline-root"
    needs(*LOCAL_NEEDS["kfp_pipeline"])
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / "kfp_pipeline.py"), "--local", "--pipeline-root", str(root)],
        capture_output=True, text=True, timeout=600, env=ENV, cwd=REPO,
    )
    log = re.sub(r"\x1b\[[0-9;]*m", "", run.stdout + run.stderr)
    assert run.returncode == 0, log[-3000:]
    events = re.findall(r"(Executing task|Task) '([\w-]+)'(?: finished with status (\w+))?", log)
    started = [task for kind, task, _ in events if kind == "Executing task"]
    finished = [(task, status) for kind, task, status in events if kind == "Task" and status]
    assert started == ["prepare-data", "train", "evaluate"], events
    assert finished == [("prepare-data", "SUCCESS"), ("train", "SUCCESS"), ("evaluate", "SUCCESS")]
    assert "Pipeline 'train-through-trainer' finished with status SUCCESS" in log
    learned("kfp_pipeline", run.stdout)
    assert float(re.findall(r"^held-out mse (\S+)$", run.stdout, re.M)[-1]) < 0.01, run.stdout[-2000:]
    (model,) = root.glob("train-through-trainer-*/train/model")
    fitted = json.loads(model.read_text())
    assert [round(w, 1) for w in fitted["weight"]] == [1.5, -2.0, 0.5, 3.0] and abs(fitted["bias"] - 0.25) < 0.05, fitted
    print(f"kfp_pipeline: steps {' -> '.join(started)}; model {model.relative_to(tmp_path)} {fitted}")


def test_kserve_serves_the_trained_cnn_over_v2_as_triton_would(tmp_path: Path) -> None:
    """The model pytorch_ddp_mnist trains, written as a Triton model repository entry (TorchScript
    and its config.pbtxt, in a folder standing in for gs://$TEAM_BUCKET/models), served by KServe's
    own Python model server in the example's process and queried over the v2 protocol with KServe's
    REST client: the served logits are the TorchScript model's, the classes the data's, and the
    archive is one the Triton of KServe v0.20.0's runtime (PyTorch 2.0) reads (format <= 10,
    caffe2/serialize/versions.h kMaxSupportedFileFormatVersion, unchanged since 2022)."""
    repository = tmp_path / "models"
    output = run_local("kserve_mnist", "--repository", str(repository), "--port", str(free_port()))
    learned("kserve_mnist", output)
    example = runpy_example("kserve_mnist")
    folder = repository / str(example["MODEL_NAME"])
    config = (folder / "config.pbtxt").read_text()
    assert 'platform: "pytorch_libtorch"' in config and f'name: "{example["INPUT"]}"' in config and f'name: "{example["OUTPUT"]}"' in config
    assert (folder / "1" / "model.pt").is_file()
    version = int(re.findall(r"^torchscript archive version (\d+)$", output, re.M)[-1])
    assert 3 <= version <= 10, version
    assert "served logits equal the TorchScript model's: True" in output, output[-2000:]
    accuracy = float(re.findall(r"^accuracy (\S+)$", output, re.M)[-1])
    assert accuracy >= 0.75, output[-2000:]
    print(f"kserve_mnist: {folder.relative_to(tmp_path)} served over v2, archive format {version}, accuracy {accuracy:.2f}")


def runpy_example(name: str) -> dict[str, object]:
    import runpy

    return runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="example")


def test_the_inference_service_the_example_deploys_is_the_kserve_sdks() -> None:
    """What `deploy` sends, as the Kubernetes client serialises the kserve SDK's models: Triton
    for the pytorch format, the team's model store, 1-2 replicas on KEDA (woken from zero by the
    router's requests), a GPU only when asked."""
    needs("kserve")
    from kubernetes.client import ApiClient

    example = runpy_example("kserve_mnist")
    build = example["inference_service"]
    body = ApiClient().sanitize_for_serialization(build("team-a", "pvc://team-models/models"))  # type: ignore[operator]
    assert body["apiVersion"] == "serving.kserve.io/v1beta1" and body["kind"] == "InferenceService"
    assert (body["metadata"]["name"], body["metadata"]["namespace"]) == ("mnist-cnn", "team-a")
    predictor = body["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (1, 2)
    model = predictor["model"]
    assert model["modelFormat"] == {"name": "pytorch"} and model["runtime"] == "kserve-tritonserver"
    assert model["storageUri"] == "pvc://team-models/models"
    assert "nvidia.com/gpu" not in model["resources"]["limits"]
    # Replicas follow Triton's requests through KEDA (KServe v0.20.0 makes a ScaledObject of it).
    assert body["metadata"]["annotations"] == {"serving.kserve.io/autoscalerClass": "keda"}
    assert predictor["autoScaling"] == {
        "metrics": [
            {
                "type": "External",
                "external": {
                    "metric": {
                        "backend": "prometheus",
                        "serverAddress": "http://kube-prometheus-stack-prometheus.monitoring.svc:9090",
                        "query": 'sum(rate(nv_inference_request_success{namespace="team-a",inferenceservice="mnist-cnn"}[1m]))',
                    },
                    "target": {"type": "Value", "value": "20"},
                },
            },
            {
                # and a request through the team's router wakes it from zero (docs/serving.md).
                "type": "External",
                "external": {
                    "metric": {
                        "backend": "prometheus",
                        "serverAddress": "http://kube-prometheus-stack-prometheus.monitoring.svc:9090",
                        "query": (
                            'sum(increase(istio_requests_total{namespace="team-a",reporter="source",'
                            'destination_service_namespace="team-a",destination_service_name="mnist-cnn-predictor"}[2m])) > bool 0'
                        ),
                    },
                    "target": {"type": "Value", "value": "1"},
                },
            },
        ]
    }
    idle = ApiClient().sanitize_for_serialization(build("team-a", "pvc://team-models/models", 0, 0))  # type: ignore[operator]
    assert idle["spec"]["predictor"]["minReplicas"] == 0
    # At zero, what the envtest holds the platform's replica policy to (tests/envtest/test_serving.py
    # KSERVE_MNIST_IDLE, built in a team namespace of its own): exactly what the SDK sends.
    idle_there = ApiClient().sanitize_for_serialization(build("serving-a", "pvc://team-models/models", 0, 0))  # type: ignore[operator]
    assert idle_there == json.loads((REPO / "tests" / "data" / "serving" / "kserve_mnist_idle.json").read_text())
    gpu = ApiClient().sanitize_for_serialization(build("team-a", "pvc://team-models/models", 1))  # type: ignore[operator]
    assert gpu["spec"]["predictor"]["model"]["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert gpu["spec"]["predictor"]["model"]["resources"]["requests"]["nvidia.com/gpu"] == "1"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_llm_answers_over_the_openai_api_what_it_was_taught() -> None:
    """The tiny model, trained on one exchange, answers it through an OpenAI-compatible server and
    the OpenAI client: the answer is the sentence it was taught (greedy decoding), and the server
    counted the tokens it generated."""
    needs("fastapi", "uvicorn")  # transformers' `serving` extra
    output = run_local("llm_openai")
    learned("llm_openai", output)
    assert re.search(r"^serving model over the OpenAI API at http://127\.0\.0\.1:\d+/v1$", output, re.M), output[-2000:]
    assert "answer 'the platform serves models to every team'" in output, output[-2000:]
    (completion,) = re.findall(r"^usage: \d+ prompt \+ (\d+) completion tokens$", output, re.M)
    assert 0 < int(completion) <= 12
    print("llm_openai: answered over the OpenAI API with the sentence it was taught")


def test_pytorch_example_trains_as_two_processes_the_way_torchrun_starts_it(tmp_path: Path) -> None:
    """The torch-distributed runtime starts the function with torchrun: two local processes over
    gloo, each on its half of the samples (DistributedSampler)."""
    needs("torch")
    script = tmp_path / "train.py"
    script.write_text(
        f"import os, pathlib, runpy; f = runpy.run_path({str(EXAMPLES / 'pytorch_ddp_mnist.py')!r})['train_mnist_cnn']; "
        # Each rank reports to its own file: the two ranks share stdout, and under PYTHONUNBUFFERED
        # one rank's line lands inside the other's (print writes the text and its newline apart).
        "losses = f(num_samples=1_000, batch_size=32, max_steps=10); "
        f"pathlib.Path({str(tmp_path)!r}, 'rank' + os.environ['RANK']).write_text(f'loss {{losses[0]}} -> {{losses[-1]}}')\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc-per-node=2",
         "--master-addr=127.0.0.1", f"--master-port={free_port()}", str(script)],
        capture_output=True, text=True, timeout=300, env=ENV,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "rank 0 trained on 500 of 1000 samples" in run.stdout, run.stdout[-2000:]
    for rank in ("rank0", "rank1"):  # both ranks trained and their loss fell
        first, last = map(float, LOSS_LINE.fullmatch((tmp_path / rank).read_text()).groups())  # type: ignore[union-attr]
        assert last < first, f"{rank}: loss {first} -> {last}"
    print(f"pytorch_ddp_mnist under torchrun: 2 ranks, {run.stdout.count('trained on 500')} reported 500 samples")


def test_jax_example_trains_as_two_processes_the_way_the_runtime_starts_it() -> None:
    """Two local processes with the env Trainer's JAX plugin gives each node
    (JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID) join one mesh and see one loss."""
    needs("jax")
    code = (
        f"import runpy; f = runpy.run_path({str(EXAMPLES / 'jax_distributed.py')!r})['train_jax_mlp']; "
        "losses = f(steps=40, batch_size=128); print('loss', losses[0], '->', losses[-1])"
    )
    base = {**ENV, "JAX_COORDINATOR_ADDRESS": f"127.0.0.1:{free_port()}", "JAX_NUM_PROCESSES": "2"}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", code], env={**base, "JAX_PROCESS_ID": str(i)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for i in range(2)
    ]
    outputs = [p.communicate(timeout=300) for p in processes]
    assert [p.returncode for p in processes] == [0, 0], [err[-2000:] for _, err in outputs]
    results = [LOSS_LINE.findall(out)[-1] for out, _ in outputs]
    assert results[0] == results[1], results  # one global loss
    assert float(results[0][1]) < float(results[0][0])
    assert "2 processes" in outputs[0][0]
    print(f"jax_distributed as 2 processes: loss {results[0][0]} -> {results[0][1]} on both")


# --- preemption-safe: SIGTERM, checkpoint, run again, resume --------------------------------

STEP_LINE = re.compile(r"^epoch \d+ step (\d+) loss", re.M)
RESUMED = re.compile(r"^resumed from step (\d+) \((\S+)\)$", re.M)
WRITTEN = re.compile(r"^checkpoint step (\d+) written to (\S+) \((.+)\)$", re.M)


def run_until_terminated(command: list[str], after_step: int, exit_code: int = 143) -> str:
    """Start `command`, wait until it has logged step `after_step` or later, send it SIGTERM (what
    the kubelet sends a preempted TrainJob's pods), and return its output once it has exited with
    `exit_code` (the example's 143, 128 + SIGTERM: a job stopped, not finished)."""
    import signal
    import time

    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV, cwd=REPO)
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 300
    for line in process.stdout:
        lines.append(line)
        found = STEP_LINE.match(line)
        if found and int(found.group(1)) >= after_step:
            process.send_signal(signal.SIGTERM)
            break
        assert time.monotonic() < deadline, "".join(lines)[-2000:]
    else:
        process.wait(timeout=60)
        raise AssertionError(f"ended (exit {process.returncode}) before step {after_step}:\n" + "".join(lines)[-3000:])
    rest, _ = process.communicate(timeout=120)
    output = "".join(lines) + rest
    assert process.returncode == exit_code, f"exit {process.returncode}:\n{output[-3000:]}"
    return output


def test_a_run_stopped_by_sigterm_checkpoints_and_the_next_run_resumes_from_that_step(tmp_path: Path) -> None:
    """`make examples`' preemption drill, as a data scientist runs it locally: train with a
    checkpoint folder (the job's $CHECKPOINT_DIR on the cluster), send SIGTERM mid-run, start it
    again: it resumes from the step of the checkpoint SIGTERM wrote (> 0), with the model as
    trained (its first loss is the trained model's, far below a fresh start's ~2.3), and goes on
    to the step it was asked for."""
    needs("torch")
    folder = tmp_path / "checkpoints"
    command = [sys.executable, str(EXAMPLES / "pytorch_ddp_mnist.py"), "--local", "--checkpoint-dir", str(folder), "--checkpoint-every", "20"]
    first = run_until_terminated([*command, "--max-steps", "100000"], after_step=30)
    written = [(int(step), why) for step, where, why in WRITTEN.findall(first) if where == str(folder)]
    assert (20, "every 20 steps") in written, first[-2000:]  # on the schedule
    stopped, why = written[-1]
    assert why == "SIGTERM" and stopped >= 30, written
    assert sorted(p.name for p in folder.iterdir()) == [f"step-{s:08d}.pt" for s in sorted({s for s, _ in written})[-2:]]  # the two newest, nothing half-written

    second = run_local("pytorch_ddp_mnist", "--checkpoint-dir", str(folder), "--checkpoint-every", "20", "--max-steps", str(stopped + 15))
    (resumed, path), = RESUMED.findall(second)
    assert int(resumed) == stopped > 0 and path == str(folder / f"step-{stopped:08d}.pt"), second[-2000:]
    assert f"; step {stopped + 15};" in second  # it went on from there, not from 0
    first_loss, _ = (float(v) for v in LOSS_LINE.findall(second)[-1])
    assert first_loss < 1.0, second[-2000:]  # the trained model, not a fresh one (~2.3)
    print(f"\npytorch_ddp_mnist: SIGTERM at step {stopped} (checkpoints {written}); the next run resumed from step {resumed}, first loss {first_loss:.3f}")


def test_two_torchrun_ranks_stop_together_on_sigterm_and_resume_together(tmp_path: Path) -> None:
    """In a pod, SIGTERM reaches torchrun (the runtime's entrypoint; the SDK's `bash -c` execs it
    as its last command), which passes it to its workers: both ranks agree to stop after the
    same step and rank 0 writes the checkpoint once (torchrun itself then exits 1: its
    SignalException, torch/distributed/elastic/multiprocessing/api.py _terminate_process_handler);
    two ranks started again resume from it."""
    needs("torch")
    folder = tmp_path / "checkpoints"
    script = tmp_path / "train.py"
    script.write_text(
        f"import runpy, sys; f = runpy.run_path({str(EXAMPLES / 'pytorch_ddp_mnist.py')!r})['train_mnist_cnn']\n"
        f"f(num_samples=1_000, batch_size=32, epochs=1_000, max_steps=int(sys.argv[1]), checkpoint_dir={str(folder)!r}, "
        "checkpoint_every=1_000, log_every=5)\n"
    )

    def torchrun(*args: str) -> list[str]:
        return [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc-per-node=2", "--master-addr=127.0.0.1",
                f"--master-port={free_port()}", str(script), *args]

    first = run_until_terminated(torchrun("100000"), after_step=15, exit_code=1)
    ((stopped, _, why),) = WRITTEN.findall(first)  # rank 0 alone writes, once
    assert why == "SIGTERM" and int(stopped) >= 15, first[-2000:]
    run = subprocess.run(torchrun(str(int(stopped) + 10)), capture_output=True, text=True, timeout=300, env=ENV)
    assert run.returncode == 0, run.stderr[-3000:]
    assert RESUMED.findall(run.stdout)[0][0] == stopped, run.stdout[-2000:]
    assert run.stdout.count(f"; step {int(stopped) + 10};") == 1  # rank 0 reports; both ranks took the same steps (DDP would hang otherwise)
    print(f"\npytorch_ddp_mnist under torchrun: both ranks stopped at step {stopped} on SIGTERM; two new ranks resumed there")


@pytest.mark.parametrize(("shutdown_timeout", "written"), [("1", False), ("10", True)])
def test_torchrun_gives_its_workers_after_sigterm_what_torch_elastic_shutdown_timeout_says(tmp_path: Path, shutdown_timeout: str, written: bool) -> None:
    """Why the torch runtimes set TORCH_ELASTIC_SHUTDOWN_TIMEOUT (runtimes/catalog.py): torchrun, which
    gets the pod's SIGTERM, passes it on to its workers and SIGKILLs them after that many seconds (30
    unset), whatever the pod's grace period. A worker that needs 4 s to write its checkpoint is killed
    with 1 s and writes it with 10 s."""
    import signal
    import time

    needs("torch")
    script, ready, checkpoint = tmp_path / "worker.py", tmp_path / "ready", tmp_path / "checkpoint"
    script.write_text(
        "import pathlib, signal, sys, time\n"
        "def stop(*_):\n"
        f"    time.sleep(4); pathlib.Path({str(checkpoint)!r}).write_text('step'); sys.exit(143)\n"
        "signal.signal(signal.SIGTERM, stop)\n"
        f"pathlib.Path({str(ready)!r}).write_text('ready')\n"
        "while True: time.sleep(0.1)\n"
    )
    command = [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc-per-node=1", "--master-addr=127.0.0.1",
               f"--master-port={free_port()}", str(script)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**ENV, "TORCH_ELASTIC_SHUTDOWN_TIMEOUT": shutdown_timeout})
    deadline = time.monotonic() + 120
    while not ready.exists():
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()[0][-2000:] if process.poll() is not None else "no worker"
        time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=60)
    assert checkpoint.exists() is written, output[-2000:]
