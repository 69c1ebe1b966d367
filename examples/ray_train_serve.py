"""Ray: train a small PyTorch regressor with Ray Train on the team's RayCluster, serve the
trained model with Ray Serve, and query the endpoint. Each cluster step is a Ray job,
submitted through the Ray Jobs API (Ray Client, `ray://`, is deprecated in Ray 2.58).

    python examples/ray_train_serve.py train      # a Ray job: Ray Train on 4 workers; prints CHECKPOINT
    python examples/ray_train_serve.py serve CHECKPOINT   # a Ray job that deploys the model as Serve app "regressor"
    python examples/ray_train_serve.py query      # POSTs rows to the endpoint
    python examples/ray_train_serve.py --local    # all three on a local Ray with token authentication, on CPU,
                                                  # through the same Jobs API (pip install -r examples/requirements.txt)
    python examples/ray_train_serve.py --local --local-storage DIR   # ... checkpoints in DIR (for gs://$TEAM_BUCKET/ray)

Where the cluster is: in a notebook created with the `team-resources` configuration (the
team's PodDefault, preselected in the form) RAY_ADDRESS is the team cluster's Jobs API
(http://<cluster>-head-svc.<team>.svc.cluster.local:8265), RAY_AUTH_MODE and RAY_AUTH_TOKEN
the cluster's token (the Ray SDK sends it), RAY_SERVE_ADDRESS its Serve endpoint and
TEAM_BUCKET its GCS bucket. The platform's notebook image and the cluster's images are one
set (Ray 2.58.0, Python 3.12): what runs in the notebook runs the same in the job.

The cluster's images are Ray's own, without torch: each job ships torch to its driver and
workers through its runtime environment (RUNTIME_TORCH, the version the notebook image has),
and this file as its working directory. Checkpoints go to gs://$TEAM_BUCKET/ray (every
worker reaches it; the Ray pods and the notebook run as the namespace's default-editor, whose
Google account owns the bucket).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

APP = "regressor"
FEATURES = 8
RUNTIME_TORCH = "torch==2.13.0"
"""The torch the workers install; the version of the notebook image and the torch runtime."""
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def build_model() -> Any:
    """The regressor: the same architecture in training and in serving."""
    from torch import nn

    return nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))


def runtime_env(gpu: bool) -> dict[str, Any]:
    """torch for the workers and Serve replicas: PyPI's CUDA build on GPU workers, the CPU
    build (a tenth of the size) on CPU workers."""
    pip: dict[str, Any] = {"packages": [RUNTIME_TORCH]}
    if not gpu:
        pip["pip_install_options"] = ["--extra-index-url", TORCH_CPU_INDEX]
    return {"pip": pip}


HERE = Path(__file__).resolve()
CHECKPOINT_LINE = re.compile(r"^CHECKPOINT (\S+)$", re.M)


def submit(address: str, step: list[str], env: dict[str, Any], python: str = "python", timeout_s: float = 3600) -> str:
    """Run this file's `step` as a Ray job through the Jobs API at `address` (the cluster's
    dashboard), wait for it and return its logs; a job that does not succeed stops here with
    them. The Ray SDK adds the cluster's token itself when RAY_AUTH_MODE is `token`."""
    from ray.job_submission import JobStatus, JobSubmissionClient

    client = JobSubmissionClient(address)
    entrypoint = shlex.join([python, HERE.name, "--on-cluster", *step])
    agent_deadline = time.monotonic() + 120
    while True:
        try:
            job = client.submit_job(entrypoint=entrypoint, runtime_env={"working_dir": str(HERE.parent), **env})
            break
        except RuntimeError as error:
            # A head whose job agent has not registered yet answers 500 "No available agent to
            # submit job, please try again later." (ray 2.58 dashboard/modules/job/job_head.py):
            # a just-started cluster on a busy machine. Anything else, or an agent that never comes, stops here.
            if "No available agent" not in str(error) or time.monotonic() > agent_deadline:
                raise
            time.sleep(1)
    print(f"submitted Ray job {job}: {entrypoint}")
    deadline = time.monotonic() + timeout_s
    while (status := client.get_job_status(job)) not in {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.STOPPED}:
        if time.monotonic() > deadline:
            client.stop_job(job)
            raise SystemExit(f"Ray job {job} did not finish in {timeout_s:.0f} s; stopped it")
        time.sleep(2)
    logs = client.get_job_logs(job)
    if status != JobStatus.SUCCEEDED:
        raise SystemExit(f"Ray job {job} {status.value}:\n{logs[-3000:]}")
    return logs


def train_loop_per_worker(config: dict[str, Any]) -> None:
    """Runs on each Ray Train worker: DDP over the workers (Ray sets up the process group),
    synthetic y = x . w + noise, one report (with rank 0's checkpoint) per epoch."""
    import tempfile

    import ray.train
    import ray.train.torch
    import torch
    import torch.nn.functional as F

    rank = ray.train.get_context().get_world_rank()
    generator = torch.Generator().manual_seed(config.get("seed", 0) + rank)  # own data per worker
    true_w = torch.arange(1.0, FEATURES + 1).unsqueeze(1) / FEATURES
    model = ray.train.torch.prepare_model(build_model())
    device = ray.train.torch.get_device()
    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"])
    for epoch in range(config["epochs"]):
        total = 0.0
        for _ in range(config["steps_per_epoch"]):
            x = torch.randn(config["batch_size"], FEATURES, generator=generator)
            y = x @ true_w + 0.05 * torch.randn(config["batch_size"], 1, generator=generator)
            loss = F.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        metrics = {"epoch": epoch, "loss": total / config["steps_per_epoch"]}
        if rank == 0:
            print(f"epoch {epoch} loss {metrics['loss']:.4f}", flush=True)  # in the job's logs
        with tempfile.TemporaryDirectory() as tmp:
            checkpoint = None
            if rank == 0:
                net = model.module if hasattr(model, "module") else model
                torch.save(net.state_dict(), os.path.join(tmp, "model.pt"))
                checkpoint = ray.train.Checkpoint.from_directory(tmp)
            ray.train.report(metrics, checkpoint=checkpoint)


def train(storage_path: str, num_workers: int = 4, use_gpu: bool = False, epochs: int = 10, steps: int = 50) -> str:
    """Step 1: Ray Train on `num_workers` workers; returns the checkpoint's URI."""
    from ray.train import RunConfig, ScalingConfig
    from ray.train.torch import TorchTrainer

    trainer = TorchTrainer(
        train_loop_per_worker,
        train_loop_config={"lr": 1e-2, "epochs": epochs, "steps_per_epoch": steps, "batch_size": 64},
        scaling_config=ScalingConfig(num_workers=num_workers, use_gpu=use_gpu),
        run_config=RunConfig(name=APP, storage_path=storage_path),
    )
    result = trainer.fit()
    assert result.checkpoint is not None
    print(f"final loss {result.metrics['loss']:.4f}")
    scheme = storage_path.split("://", 1)[0] + "://" if "://" in storage_path else ""
    return scheme + result.checkpoint.path


def serve(checkpoint_uri: str, gpu: bool = False, ship_torch: bool = True) -> None:
    """Step 2: deploy the checkpoint's model as the Ray Serve app `regressor` at /regressor;
    its replica gets torch through a runtime environment unless `ship_torch` is off."""
    from ray import serve as ray_serve

    options = {"runtime_env": runtime_env(gpu)} if ship_torch else {}

    @ray_serve.deployment(num_replicas=1, ray_actor_options=options)
    class Regressor:
        def __init__(self, uri: str) -> None:
            import torch
            from ray.train import Checkpoint

            self.model = build_model()
            with Checkpoint(path=uri).as_directory() as directory:
                self.model.load_state_dict(torch.load(os.path.join(directory, "model.pt")))
            self.model.eval()

        def predict(self, rows: list[list[float]]) -> list[float]:
            import torch

            with torch.no_grad():
                return [float(v) for v in self.model(torch.tensor(rows)).squeeze(1)]

        async def __call__(self, request: Any) -> dict[str, list[float]]:
            """HTTP: POST {"rows": [[...8 floats...], ...]} -> {"predictions": [...]}."""
            return {"predictions": self.predict((await request.json())["rows"])}

    ray_serve.run(Regressor.bind(checkpoint_uri), name=APP, route_prefix=f"/{APP}")


def query(address: str, rows: list[list[float]]) -> list[float]:
    """Step 3: POST rows to the app's endpoint at `address` (e.g. $RAY_SERVE_ADDRESS)."""
    request = urllib.request.Request(
        f"{address.rstrip('/')}/{APP}",
        data=json.dumps({"rows": rows}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        predictions: list[float] = json.load(response)["predictions"]
    return predictions


def query_handle(rows: list[list[float]]) -> list[float]:
    """The same through a Serve handle, from a driver on the cluster, without the HTTP endpoint."""
    from ray import serve as ray_serve

    result: list[float] = ray_serve.get_app_handle(APP).predict.remote(rows).result()
    return result


def http_status(url: str) -> int:
    """The status of a plain GET, without credentials."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


EPOCH_LOSS = re.compile(r"epoch (\d+) loss (\S+)$", re.M)


def local(storage: str = "") -> None:
    """Train, serve and query on a local Ray, on CPU, the way a notebook does on the team
    cluster: token authentication on, the notebook's variables set as the PodDefault sets
    them, each step a Ray job through the Jobs API; Serve on a free local port. Checkpoints
    go to `storage` (the local stand-in for gs://$TEAM_BUCKET/ray; default a temporary folder)."""
    import secrets
    import socket
    import tempfile

    # What the team PodDefault gives a notebook (the token from the cluster's Secret there),
    # before Ray is imported: Ray reads its configuration from the environment then.
    os.environ.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)})
    import ray
    from ray import serve as ray_serve

    def free_port() -> int:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            return int(probe.getsockname()[1])

    serve_port, dashboard_port = free_port(), free_port()
    rows = [[1.0] * FEATURES, [0.0] * FEATURES]  # expected about 4.5 and 0.0
    ray.init(num_cpus=4, include_dashboard=True, dashboard_port=dashboard_port)
    address = f"http://127.0.0.1:{dashboard_port}"
    try:
        if (status := http_status(f"{address}/api/jobs/")) != 401:
            raise SystemExit(f"the local Ray answered the Jobs API without its token: HTTP {status}")
        ray_serve.start(http_options={"host": "127.0.0.1", "port": serve_port})
        with tempfile.TemporaryDirectory() as tmp:
            # The local Ray runs this interpreter, torch included: no pip runtime environment.
            train_step = ["train", "--storage", storage or tmp, "--workers", "2", "--epochs", "3", "--steps", "40"]
            logs = submit(address, train_step, {}, sys.executable)
            losses = {int(epoch): loss for epoch, loss in EPOCH_LOSS.findall(logs)}  # rank 0's, per epoch
            print(f"loss {losses[min(losses)]} -> {losses[max(losses)]}")
            uri = CHECKPOINT_LINE.findall(logs)[-1]
            print(f"CHECKPOINT {uri}")
            submit(address, ["serve", uri, "--no-ship-torch"], {}, sys.executable)
            predictions = query(f"http://127.0.0.1:{serve_port}", rows)
            print(f"predictions {predictions} (expected about [4.5, 0.0])")
            assert predictions == query_handle(rows)
            ray_serve.shutdown()
    finally:
        ray.shutdown()


def on_cluster(args: argparse.Namespace) -> None:
    """A step as the driver of its Ray job, on the cluster (KubeRay sets RAY_ADDRESS there)."""
    import ray

    ray.init()
    if args.step == "train":
        print(f"CHECKPOINT {train(args.storage, num_workers=args.workers, use_gpu=args.gpu, epochs=args.epochs, steps=args.steps)}")
    elif args.step == "serve":
        serve(args.checkpoint, gpu=args.gpu, ship_torch=args.ship_torch)
    else:
        print(query_handle([[1.0] * FEATURES, [0.0] * FEATURES]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--local", action="store_true", help="train, serve and query on a local Ray, on CPU")
    parser.add_argument("--local-storage", default="", metavar="DIR", help="with --local: checkpoints in DIR (default: a temporary folder)")
    parser.add_argument("--gpu", action="store_true", help="GPU workers (the team cluster's on a GPU pool)")
    parser.add_argument("--on-cluster", action="store_true", help=argparse.SUPPRESS)  # the job's own driver
    steps = parser.add_subparsers(dest="step")
    train_step = steps.add_parser("train")
    bucket = os.environ.get("TEAM_BUCKET")
    train_step.add_argument(
        "--storage", default=f"gs://{bucket}/ray" if bucket else None, help="default: gs://$TEAM_BUCKET/ray"
    )
    train_step.add_argument("--workers", type=int, default=4)
    train_step.add_argument("--epochs", type=int, default=10)
    train_step.add_argument("--steps", type=int, default=50)
    serve_step = steps.add_parser("serve")
    serve_step.add_argument("checkpoint")
    serve_step.add_argument("--no-ship-torch", dest="ship_torch", action="store_false", help=argparse.SUPPRESS)
    query_step = steps.add_parser("query")
    query_step.add_argument("--address", default=os.environ.get("RAY_SERVE_ADDRESS"), help="default: $RAY_SERVE_ADDRESS")
    query_step.add_argument("--handle", action="store_true", help="through a Serve handle, in a Ray job, instead")
    args = parser.parse_args()

    if args.local:
        local(args.local_storage)
        return
    if args.step not in ("train", "serve", "query"):
        parser.error("pick a step: train, serve or query (or --local)")
    if args.on_cluster:
        on_cluster(args)
        return
    rows = [[1.0] * FEATURES, [0.0] * FEATURES]
    if args.step == "query" and not args.handle:
        if not args.address:
            parser.error("no endpoint: set RAY_SERVE_ADDRESS (the team-resources configuration does) or --address")
        print(query(args.address, rows))
        return
    address = os.environ.get("RAY_ADDRESS", "")
    if not address.startswith(("http://", "https://")):
        parser.error("RAY_ADDRESS is not the cluster's Jobs API (http://...:8265): create the notebook with the team-resources configuration")
    if args.step == "train" and not args.storage:
        parser.error("no storage for checkpoints: set TEAM_BUCKET (a team bucket) or --storage gs://<bucket>/ray")
    # The job's driver runs this file on the cluster, where no PodDefault sets TEAM_BUCKET: every
    # option goes explicitly.
    step = ["--gpu"] if args.gpu else []
    if args.step == "train":
        step += ["train", "--storage", args.storage, "--workers", str(args.workers), "--epochs", str(args.epochs), "--steps", str(args.steps)]
    elif args.step == "serve":
        step += ["serve", args.checkpoint]
    else:
        step += ["query", "--handle"]
    logs = submit(address, step, runtime_env(args.gpu))
    if args.step == "train":
        print(f"CHECKPOINT {CHECKPOINT_LINE.findall(logs)[-1]}")
    elif args.step == "serve":
        print(f"deployed {APP}; query it with: python {__file__} query")
    else:
        print(logs.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
