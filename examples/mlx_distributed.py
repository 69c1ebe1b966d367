"""MLX distributed: data-parallel training of a small MLP on the `mlx-distributed` runtime
(mpirun over the runtime's SSH-wired nodes), submitted with the Kubeflow SDK.

    python examples/mlx_distributed.py              # TrainJob on mlx-distributed, 2 nodes
    python examples/mlx_distributed.py --local      # a few steps here, on CPU
                                                    # (pip install -r examples/requirements.txt)

Each rank draws its own shard of synthetic data; gradients are averaged across ranks
with `mx.distributed.all_sum`, so every rank holds the same model.
"""

from __future__ import annotations

import argparse

DEFAULT_RUNTIME = "mlx-distributed"
NUM_NODES = 2


def train_mlx_mlp(steps: int = 200, batch_size: int = 256, lr: float = 0.1, seed: int = 0) -> list[float]:
    """Train the MLP; returns rank 0's averaged loss per step. Self-contained (imports
    inside) because the SDK ships this function's source to the training nodes."""
    import mlx.core as mx
    import mlx.nn as nn
    import mlx.optimizers as optim
    from mlx.utils import tree_map

    # Under mpirun (the runtime's launcher) join the MPI world; run alone, a group of one.
    try:
        group = mx.distributed.init(strict=True, backend="mpi")
    except Exception:
        group = mx.distributed.init()
    rank, size = group.rank(), group.size()

    # The task (same on every rank): 10 classes told apart by a fixed random projection.
    mx.random.seed(seed)
    projection = mx.random.normal((32, 10))
    key = mx.random.key(seed + 1 + rank)  # a different data shard per rank

    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    # Same initial weights everywhere: average them once.
    model.update(tree_map(lambda p: mx.distributed.all_sum(p, group=group) / size, model.parameters()))
    optimizer = optim.SGD(learning_rate=lr, momentum=0.9)

    def loss_fn(model: nn.Module, x: mx.array, y: mx.array) -> mx.array:
        return nn.losses.cross_entropy(model(x), y, reduction="mean")

    loss_and_grad = nn.value_and_grad(model, loss_fn)
    losses: list[float] = []
    for step in range(steps):
        key, sub = mx.random.split(key)
        x = mx.random.normal((batch_size, 32), key=sub)
        y = mx.argmax(x @ projection, axis=1)
        loss, grads = loss_and_grad(model, x, y)
        grads = tree_map(lambda g: mx.distributed.all_sum(g, group=group) / size, grads)
        optimizer.update(model, grads)
        loss = mx.distributed.all_sum(loss, group=group) / size
        mx.eval(model.parameters(), optimizer.state, loss)
        losses.append(loss.item())
        if rank == 0 and step % 20 == 0:
            print(f"step {step} loss {losses[-1]:.4f} ({size} ranks)", flush=True)
    return losses


def submit(client: object, runtime: str = DEFAULT_RUNTIME, num_nodes: int = NUM_NODES) -> str:
    """Create the TrainJob (admitted through the namespace's `default` Kueue LocalQueue)."""
    from kubeflow.trainer import CustomTrainer, TrainerClient

    assert isinstance(client, TrainerClient)
    return client.train(runtime=runtime, trainer=CustomTrainer(func=train_mlx_mlp, num_nodes=num_nodes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runtime", default=DEFAULT_RUNTIME)
    parser.add_argument("--local", action="store_true", help="train a few steps here on CPU instead")
    args = parser.parse_args()
    if args.local:
        losses = train_mlx_mlp(steps=30, batch_size=64)
        print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}")
        return
    from kubeflow.trainer import TrainerClient

    client = TrainerClient()
    name = submit(client, args.runtime)
    print(f"TrainJob {name} created; waiting for it to finish")
    client.wait_for_job_status(name, timeout=3600)
    print("\n".join(client.get_job_logs(name)))


if __name__ == "__main__":
    main()
