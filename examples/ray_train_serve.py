"""Ray: train a small PyTorch regressor with Ray Train on 4 workers of the team's
RayCluster, then serve the trained model with Ray Serve and call it from a second step.

    export RAY_ADDRESS=ray://<raycluster>-head-svc:10001        # the team's RayCluster (KubeRay)
    python examples/ray_train_serve.py train --storage gs://<team bucket>/ray   # prints CHECKPOINT
    python examples/ray_train_serve.py serve CHECKPOINT          # deploys the model on Ray Serve
    python examples/ray_train_serve.py query                     # a second step calls the deployment
    python examples/ray_train_serve.py --local                   # all of it here, on CPU
                                                                 # (pip install "ray[train,serve]" torch)

Ray Train checkpoints must be on storage every worker reaches: the team's GCS bucket
(the RayCluster's service account needs access to it through Workload Identity).
"""

from __future__ import annotations

import argparse
from typing import Any

APP = "regressor"
FEATURES = 8


def build_model() -> Any:
    """The regressor: the same architecture in training and in serving."""
    from torch import nn

    return nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))


def train_loop_per_worker(config: dict[str, Any]) -> None:
    """Runs on each Ray Train worker: DDP over the workers (Ray sets up the process group),
    synthetic y = x . w + noise, one report (with rank 0's checkpoint) per epoch."""
    import os
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


def serve(checkpoint_uri: str) -> None:
    """Step 2: deploy the checkpoint's model as the Ray Serve app `regressor`."""
    from ray import serve as ray_serve

    @ray_serve.deployment(num_replicas=1)
    class Regressor:
        def __init__(self, uri: str) -> None:
            import os

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

    ray_serve.run(Regressor.bind(checkpoint_uri), name=APP, route_prefix=f"/{APP}")


def query(rows: list[list[float]]) -> list[float]:
    """A later step: call the deployed model through its Serve handle."""
    from ray import serve as ray_serve

    handle = ray_serve.get_app_handle(APP)
    result: list[float] = handle.predict.remote(rows).result()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--local", action="store_true", help="train, serve and query on a local Ray, on CPU")
    steps = parser.add_subparsers(dest="step")
    train_step = steps.add_parser("train")
    train_step.add_argument("--storage", required=True, help="gs://<team bucket>/ray")
    train_step.add_argument("--gpu", action="store_true", help="one GPU per worker")
    serve_step = steps.add_parser("serve")
    serve_step.add_argument("checkpoint")
    steps.add_parser("query")
    args = parser.parse_args()

    import ray

    rows = [[1.0] * FEATURES, [0.0] * FEATURES]  # expected about 4.5 and 0.0
    if args.local:
        import tempfile

        ray.init()
        with tempfile.TemporaryDirectory() as tmp:
            uri = train(tmp, num_workers=2, epochs=2, steps=20)
            serve(uri)
            print(query(rows))
        return
    ray.init()  # connects to RAY_ADDRESS
    if args.step == "train":
        print(train(args.storage, use_gpu=args.gpu))
    elif args.step == "serve":
        serve(args.checkpoint)
        print(f"deployed {APP}; call it with: python {__file__} query")
    elif args.step == "query":
        print(query(rows))
    else:
        parser.error("pick a step: train, serve or query (or --local)")


if __name__ == "__main__":
    main()
