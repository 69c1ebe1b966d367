"""Ray: train a small PyTorch regressor with Ray Train on the team's RayCluster, serve the
trained model with Ray Serve, and query the endpoint.

    python examples/ray_train_serve.py train      # Ray Train on 4 workers; prints CHECKPOINT
    python examples/ray_train_serve.py serve CHECKPOINT   # deploys the model as Serve app "regressor"
    python examples/ray_train_serve.py query      # a later step POSTs rows to the endpoint
    python examples/ray_train_serve.py --local    # all three here, on CPU
                                                  # (pip install -r examples/requirements.txt)

Where the cluster is: in a notebook created with the `team-resources` configuration (the
team's PodDefault, preselected in the form) RAY_ADDRESS is the team cluster's Ray Client
address, RAY_SERVE_ADDRESS its Serve endpoint and TEAM_BUCKET its GCS bucket. Ray Client
connects only when both ends run the same Ray and Python minor: the platform's notebook
image and the cluster's images are one set (2.46.0, Python 3.11).

The cluster's images are Ray's own, without torch: each step ships torch to the workers
through a runtime environment (RUNTIME_TORCH, the version the notebook image has).
Checkpoints go to gs://$TEAM_BUCKET/ray (every worker reaches it; the Ray pods and the
notebook run as the namespace's default-editor, whose Google account owns the bucket).
"""

from __future__ import annotations

import argparse
import json
import os
import urllib.request
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
    """The same through a Serve handle, over Ray Client, without the HTTP endpoint."""
    from ray import serve as ray_serve

    result: list[float] = ray_serve.get_app_handle(APP).predict.remote(rows).result()
    return result


def local() -> None:
    """Train, serve and query on a local Ray, on CPU, with a free local port for Serve."""
    import socket
    import tempfile

    import ray
    from ray import serve as ray_serve

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    rows = [[1.0] * FEATURES, [0.0] * FEATURES]  # expected about 4.5 and 0.0
    ray.init(num_cpus=4, include_dashboard=False)
    try:
        ray_serve.start(http_options={"host": "127.0.0.1", "port": port})
        with tempfile.TemporaryDirectory() as tmp:
            uri = train(tmp, num_workers=2, epochs=3, steps=40)
            serve(uri, ship_torch=False)  # the local Ray runs this interpreter, torch included
            predictions = query(f"http://127.0.0.1:{port}", rows)
            print(f"predictions {predictions} (expected about [4.5, 0.0])")
            assert predictions == query_handle(rows)
            ray_serve.shutdown()
    finally:
        ray.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--local", action="store_true", help="train, serve and query on a local Ray, on CPU")
    parser.add_argument("--gpu", action="store_true", help="GPU workers (the team cluster's on a GPU pool)")
    steps = parser.add_subparsers(dest="step")
    train_step = steps.add_parser("train")
    bucket = os.environ.get("TEAM_BUCKET")
    train_step.add_argument(
        "--storage", default=f"gs://{bucket}/ray" if bucket else None, help="default: gs://$TEAM_BUCKET/ray"
    )
    train_step.add_argument("--workers", type=int, default=4)
    serve_step = steps.add_parser("serve")
    serve_step.add_argument("checkpoint")
    query_step = steps.add_parser("query")
    query_step.add_argument("--address", default=os.environ.get("RAY_SERVE_ADDRESS"), help="default: $RAY_SERVE_ADDRESS")
    query_step.add_argument("--handle", action="store_true", help="through a Serve handle over Ray Client instead")
    args = parser.parse_args()

    if args.local:
        local()
        return
    rows = [[1.0] * FEATURES, [0.0] * FEATURES]
    if args.step == "query" and not args.handle:
        if not args.address:
            parser.error("no endpoint: set RAY_SERVE_ADDRESS (the team-resources configuration does) or --address")
        print(query(args.address, rows))
        return
    if args.step not in ("train", "serve", "query"):
        parser.error("pick a step: train, serve or query (or --local)")
    if not os.environ.get("RAY_ADDRESS"):
        parser.error("RAY_ADDRESS is not set: create the notebook with the team-resources configuration")
    import ray

    ray.init(runtime_env=runtime_env(args.gpu))  # Ray Client to RAY_ADDRESS (ray://<head>:10001)
    if args.step == "train":
        if not args.storage:
            parser.error("no storage for checkpoints: set TEAM_BUCKET (a team bucket) or --storage gs://<bucket>/ray")
        print(train(args.storage, num_workers=args.workers, use_gpu=args.gpu))
    elif args.step == "serve":
        serve(args.checkpoint, gpu=args.gpu)
        print(f"deployed {APP}; query it with: python {__file__} query")
    else:
        print(query_handle(rows))


if __name__ == "__main__":
    main()
