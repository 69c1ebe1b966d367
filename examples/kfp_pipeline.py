"""A Kubeflow Pipelines (KFP v2) pipeline that prepares data, trains through Kubeflow Trainer
and keeps the model in the team's artifact store.

    python examples/kfp_pipeline.py                  # run it in your namespace, from a notebook
    python examples/kfp_pipeline.py --host https://kubeflow.acme.com/pipeline --token "$TOKEN" --namespace nlp
                                                     # the same from outside, through the gateway
    python examples/kfp_pipeline.py --compile kfp_pipeline.yaml   # only compile (upload it in the UI)
    python examples/kfp_pipeline.py --local          # KFP's local runner, here, on CPU
                                                     # (pip install -r examples/requirements.txt)
    python examples/kfp_pipeline.py --local --pipeline-root DIR   # ... keeping its artifacts in DIR

Three steps:
1. prepare-data writes a regression dataset (y = x.w + b + noise, seeded: no download) as a
   Dataset artifact;
2. train submits a TrainJob on the platform's `torch-distributed` runtime through the Kubeflow
   SDK (`TrainerClient().train`), the dataset as the training function's argument, and writes the
   weights the job fitted as a Model artifact. KFP's launcher uploads every artifact to the
   namespace's pipeline root: the team's own bucket on GKE (as the team's Workload Identity), its
   own prefix of the in-cluster store on kind (docs/pipelines.md). With --local there is no
   cluster, so the step runs the same training function in its own process;
3. evaluate reads the model back from the artifact store and reports the held-out mean squared
   error as Metrics.

In a notebook, `kfp.Client()` finds the API server and authenticates with the token the team's
PodDefault mounts; from outside it needs the gateway's address and a token (docs/pipelines.md,
"Tokens"). Components install the Kubeflow SDK this script runs with, so the cluster sees the
version it was written for.
"""

# No `from __future__ import annotations`: KFP reads the components' annotations as types.
import argparse
import tempfile
from importlib.metadata import version
from typing import NamedTuple

from kfp import compiler, dsl
from kfp.dsl import Dataset, Input, Metrics, Model, Output

RUNTIME = "torch-distributed"
"""The platform's CPU PyTorch runtime (docs/runtimes.md); torch-distributed-<pool> for a GPU pool."""
BASE_IMAGE = "python:3.12.13-slim"
"""What the steps run in: the notebook image's Python (3.12.13; tests/test_examples.py keeps the
minor equal), slim, KFP installing the SDK each step names. For real work, your team's image."""
KUBEFLOW_SDK = f"kubeflow=={version('kubeflow')}"


@dsl.component(base_image=BASE_IMAGE)
def prepare_data(dataset: Output[Dataset], samples: int = 2_000, seed: int = 0) -> None:
    """A linear regression problem with a known answer, as JSON rows of [x1..x4, y]."""
    import json
    import random

    rng = random.Random(seed)
    weights, bias = [1.5, -2.0, 0.5, 3.0], 0.25
    rows = []
    for _ in range(samples):
        x = [rng.uniform(-1, 1) for _ in weights]
        rows.append([*x, sum(w * v for w, v in zip(weights, x, strict=True)) + bias + rng.gauss(0, 0.05)])
    with open(dataset.path, "w") as f:
        json.dump(rows, f)
    dataset.metadata.update({"samples": samples, "features": len(weights)})


@dsl.component(base_image=BASE_IMAGE, packages_to_install=[KUBEFLOW_SDK])
def train(
    dataset: Input[Dataset],
    model: Output[Model],
    runtime: str,
    epochs: int = 200,
    on_cluster: bool = True,
) -> NamedTuple("Losses", [("first_loss", float), ("last_loss", float)]):  # type: ignore[valid-type]
    """Fit a linear model on the dataset in a TrainJob; write its weights as the Model."""
    import json
    from collections import namedtuple

    def fit(rows: list[list[float]], epochs: int) -> None:
        """The training function the TrainJob runs (the SDK ships its source): full-batch
        gradient descent; prints its losses and the fitted weights as JSON lines."""
        import json

        import torch

        data = torch.tensor(rows)
        x, y = data[:, :-1], data[:, -1:]
        layer = torch.nn.Linear(x.shape[1], 1)
        optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
        losses = []
        for _ in range(epochs):
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(layer(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        weights = {"weight": layer.weight.detach().flatten().tolist(), "bias": layer.bias.item()}
        print("LOSSES " + json.dumps([losses[0], losses[-1]]), flush=True)
        print("MODEL " + json.dumps(weights), flush=True)

    with open(dataset.path) as f:
        rows = json.load(f)
    if on_cluster:
        from kubeflow.trainer import CustomTrainer, TrainerClient

        client = TrainerClient()  # in the run's namespace, as its service account (default-editor)
        name = client.train(runtime=runtime, trainer=CustomTrainer(func=fit, func_args={"rows": rows, "epochs": epochs}, num_nodes=1))
        print(f"TrainJob {name} on {runtime}", flush=True)
        client.wait_for_job_status(name, timeout=3600)
        lines = list(client.get_job_logs(name))
    else:
        import contextlib
        import io

        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            fit(rows, epochs)
        lines = output.getvalue().splitlines()
    found = {line.split(" ", 1)[0]: json.loads(line.split(" ", 1)[1]) for line in lines if line.startswith(("LOSSES ", "MODEL "))}
    with open(model.path, "w") as f:
        json.dump(found["MODEL"], f)
    model.metadata.update({"framework": "torch", "runtime": runtime if on_cluster else "local"})
    first, last = found["LOSSES"]
    return namedtuple("Losses", ["first_loss", "last_loss"])(first, last)


@dsl.component(base_image=BASE_IMAGE)
def evaluate(model: Input[Model], metrics: Output[Metrics], samples: int = 500, seed: int = 1) -> float:
    """The model from the artifact store against fresh data: mean squared error."""
    import json
    import random

    with open(model.path) as f:
        fitted = json.load(f)
    rng = random.Random(seed)
    weights, bias = [1.5, -2.0, 0.5, 3.0], 0.25
    error = 0.0
    for _ in range(samples):
        x = [rng.uniform(-1, 1) for _ in weights]
        y = sum(w * v for w, v in zip(weights, x, strict=True)) + bias
        predicted = sum(w * v for w, v in zip(fitted["weight"], x, strict=True)) + fitted["bias"]
        error += (predicted - y) ** 2
    mse = error / samples
    metrics.log_metric("mse", mse)
    return mse


@dsl.pipeline(name="train-through-trainer", description="Prepare data, train in a TrainJob, keep the model in the team's artifact store.")
def pipeline(samples: int = 2_000, epochs: int = 200, runtime: str = RUNTIME, on_cluster: bool = True) -> NamedTuple(  # type: ignore[valid-type]
    "Outputs", [("first_loss", float), ("last_loss", float), ("mse", float)]
):
    data = prepare_data(samples=samples)
    trained = train(dataset=data.outputs["dataset"], runtime=runtime, epochs=epochs, on_cluster=on_cluster)
    scored = evaluate(model=trained.outputs["model"])
    from collections import namedtuple

    outputs = namedtuple("Outputs", ["first_loss", "last_loss", "mse"])
    return outputs(trained.outputs["first_loss"], trained.outputs["last_loss"], scored.outputs["Output"])


def run_locally(pipeline_root: str = "") -> None:
    """The whole pipeline in this process's Python, each step a subprocess, artifacts under
    `pipeline_root` (the local stand-in for the team's artifact store; default a temporary folder)."""
    from kfp import local

    with tempfile.TemporaryDirectory() as tmp:
        root = pipeline_root or tmp
        local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=root)
        run = pipeline(samples=500, epochs=150, on_cluster=False)
        outputs = run.outputs
        print(f"held-out mse {outputs['mse']:.4f}")
        print(f"loss {outputs['first_loss']:.3f} -> {outputs['last_loss']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--local", action="store_true", help="run it here with KFP's local runner, on CPU")
    parser.add_argument("--pipeline-root", default="", metavar="DIR", help="with --local: keep the artifacts in DIR (default: a temporary folder)")
    parser.add_argument("--compile", metavar="FILE", help="only write the compiled pipeline")
    parser.add_argument("--runtime", default=RUNTIME, help="torch-distributed or torch-distributed-<pool>")
    parser.add_argument("--host", help="the Pipelines endpoint from outside: https://<gateway>/pipeline")
    parser.add_argument("--token", help="with --host: a token the gateway accepts (docs/pipelines.md)")
    parser.add_argument("--namespace", help="your team's namespace (default: the notebook's)")
    args = parser.parse_args()
    if args.local:
        run_locally(args.pipeline_root)
        return
    if args.compile:
        compiler.Compiler().compile(pipeline, args.compile)
        print(f"wrote {args.compile}")
        return
    import kfp

    client = kfp.Client(host=args.host, existing_token=args.token) if args.host else kfp.Client()
    run = client.create_run_from_pipeline_func(
        pipeline, arguments={"runtime": args.runtime}, experiment_name="examples", namespace=args.namespace
    )
    print(f"run {run.run_id} started; waiting for it to finish")
    finished = client.wait_for_run_completion(run.run_id, timeout=3600)
    print(f"run {run.run_id}: {finished.state}")


if __name__ == "__main__":
    main()
