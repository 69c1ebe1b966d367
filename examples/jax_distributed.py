"""JAX: data-parallel training of a small MLP on the `jax-distributed` runtime, one JAX
process per node, submitted with the Kubeflow SDK.

    python examples/jax_distributed.py                          # TrainJob on jax-distributed, 2 nodes
    python examples/jax_distributed.py --runtime jax-distributed-l4   # the same on the l4 GPU pool
    python examples/jax_distributed.py --local                  # a few steps here, on CPU
                                                                # (pip install -r examples/requirements.txt)

Kubeflow Trainer's JAX plugin gives every node JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES
and JAX_PROCESS_ID (kubeflow/trainer v2.3.0 pkg/runtime/framework/plugins/jax); the training
function joins them with `jax.distributed.initialize`, lays one mesh axis over every device
of every node and shards the batch along it: each process feeds its own slice of the data,
`jit` sums the gradients across all of them. The runtime's image (nvcr.io/nvidia/jax) has
JAX 0.7.2, the version examples/requirements.txt pins for the local run.
"""

from __future__ import annotations

import argparse

DEFAULT_RUNTIME = "jax-distributed"
NUM_NODES = 2


def train_jax_mlp(steps: int = 300, batch_size: int = 256, lr: float = 0.1, seed: int = 0) -> list[float]:
    """Train the MLP; returns the global loss per step (the same on every process).
    Self-contained (imports inside) because the SDK ships this function's source to the nodes."""
    import os

    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    processes = int(os.environ.get("JAX_NUM_PROCESSES", "1"))
    if processes > 1:  # on the runtime; a local run is one process
        jax.distributed.initialize(
            coordinator_address=os.environ["JAX_COORDINATOR_ADDRESS"],
            num_processes=processes,
            process_id=int(os.environ["JAX_PROCESS_ID"]),
        )
    mesh = Mesh(np.array(jax.devices()), ("data",))
    batch = NamedSharding(mesh, PartitionSpec("data"))
    replicated = NamedSharding(mesh, PartitionSpec())
    local_batch = batch_size // jax.process_count()
    if local_batch % jax.local_device_count():
        raise ValueError(f"batch_size {batch_size} does not split over {jax.device_count()} devices")

    # The task (same on every process): 10 classes told apart by a fixed random projection.
    projection = np.random.default_rng(seed).normal(size=(32, 10)).astype(np.float32)
    rng = np.random.default_rng(seed + 1 + jax.process_index())  # each process its own data
    init = jax.random.split(jax.random.key(seed), 2)
    params = {
        "w1": jax.random.normal(init[0], (32, 64)) / np.sqrt(32),
        "b1": jnp.zeros(64),
        "w2": jax.random.normal(init[1], (64, 10)) / np.sqrt(64),
        "b2": jnp.zeros(10),
    }
    params = jax.device_put(params, replicated)
    velocity = jax.tree.map(jnp.zeros_like, params)
    Params = dict[str, jax.Array]

    def loss_fn(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
        hidden = jax.nn.relu(x @ params["w1"] + params["b1"])
        logits = hidden @ params["w2"] + params["b2"]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))

    @jax.jit
    def step(params: Params, velocity: Params, x: jax.Array, y: jax.Array) -> tuple[Params, Params, jax.Array]:
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)  # the mean over the global batch
        velocity = jax.tree.map(lambda v, g: 0.9 * v + g, velocity, grads)
        params = jax.tree.map(lambda p, v: p - lr * v, params, velocity)
        return params, velocity, loss

    losses: list[float] = []
    for i in range(steps):
        x_local = rng.normal(size=(local_batch, 32)).astype(np.float32)
        y_local = np.argmax(x_local @ projection, axis=1).astype(np.int32)
        x = jax.make_array_from_process_local_data(batch, x_local)
        y = jax.make_array_from_process_local_data(batch, y_local)
        params, velocity, loss = step(params, velocity, x, y)
        losses.append(float(loss))
        if jax.process_index() == 0 and i % 50 == 0:
            print(f"step {i} loss {losses[-1]:.4f} ({jax.process_count()} processes, {jax.device_count()} devices)", flush=True)
    return losses


def submit(client: object, runtime: str = DEFAULT_RUNTIME, num_nodes: int = NUM_NODES) -> str:
    """Create the TrainJob (admitted whole, or not at all, through the namespace's `default`
    Kueue LocalQueue); returns its name."""
    from kubeflow.trainer import CustomTrainer, TrainerClient

    assert isinstance(client, TrainerClient)
    return client.train(runtime=runtime, trainer=CustomTrainer(func=train_jax_mlp, num_nodes=num_nodes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runtime", default=DEFAULT_RUNTIME, help="jax-distributed or jax-distributed-<pool>")
    parser.add_argument("--local", action="store_true", help="train a few steps here on CPU instead")
    args = parser.parse_args()
    if args.local:
        losses = train_jax_mlp(steps=60, batch_size=128)
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
