"""PyTorch DDP: a small CNN on MNIST-shaped data (60,000 28x28 images, 10 classes),
split across 3 nodes by DistributedSampler, submitted with the Kubeflow SDK.

    python examples/pytorch_ddp_mnist.py                          # TrainJob on torch-distributed, 3 nodes
    python examples/pytorch_ddp_mnist.py --runtime torch-distributed-l4   # the same on the l4 GPU pool
    python examples/pytorch_ddp_mnist.py --local                  # a few steps here, on CPU
                                                                  # (pip install -r examples/requirements.txt)

With `model_repository`, rank 0 also writes the trained model for serving, as TorchScript in
Triton's model repository layout (examples/kserve_mnist.py serves it with KServe).

The data is synthetic (a fixed pattern per class plus noise) so the example needs no
download; swap `make_dataset` for torchvision's MNIST to train on the real thing.
"""

from __future__ import annotations

import argparse

DEFAULT_RUNTIME = "torch-distributed"
NUM_NODES = 3


def train_mnist_cnn(
    num_samples: int = 60_000,
    epochs: int = 1,
    batch_size: int = 64,
    lr: float = 0.05,
    max_steps: int = 0,
    seed: int = 0,
    model_repository: str = "",
) -> list[float]:
    """Train the CNN; returns this process's loss per step. Self-contained (imports inside)
    because the SDK ships this function's source to the training nodes. With `model_repository`
    (a folder: the team bucket's mount on the cluster), rank 0 writes the model there as
    `mnist-cnn/1/model.pt` (TorchScript) and `mnist-cnn/config.pbtxt`: an entry of a Triton model
    repository, which KServe's Triton runtime serves (examples/kserve_mnist.py)."""
    import os

    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch import nn
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    # torchrun (the torch-distributed runtime) sets these; a local run has neither.
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    use_cuda = torch.cuda.is_available()
    device = torch.device(f"cuda:{local_rank}" if use_cuda else "cpu")
    if world_size > 1:
        dist.init_process_group(backend="nccl" if use_cuda else "gloo")
    if use_cuda:
        torch.cuda.set_device(device)

    # MNIST-shaped data, the same on every rank (same seed): one template image per class.
    generator = torch.Generator().manual_seed(seed)
    templates = torch.randn(10, 1, 28, 28, generator=generator)
    labels = torch.randint(0, 10, (num_samples,), generator=generator)
    images = templates[labels] + 0.8 * torch.randn(num_samples, 1, 28, 28, generator=generator)
    dataset = TensorDataset(images, labels)
    # Each rank sees its own 1/world_size of the samples: 20,000 each on 3 nodes.
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)

    torch.manual_seed(seed)
    model: nn.Module = nn.Sequential(
        nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2),   # 28 -> 26 -> 13
        nn.Conv2d(16, 32, 3), nn.ReLU(), nn.MaxPool2d(2),  # 13 -> 11 -> 5
        nn.Flatten(), nn.Linear(32 * 5 * 5, 10),
    ).to(device)
    if world_size > 1:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank] if use_cuda else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    losses: list[float] = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if rank == 0 and len(losses) % 50 == 0:
                print(f"epoch {epoch} step {len(losses)} loss {loss.item():.4f}", flush=True)
            if max_steps and len(losses) >= max_steps:
                break
    if rank == 0:
        print(f"rank 0 trained on {len(sampler)} of {num_samples} samples; last loss {losses[-1]:.4f}")
    if rank == 0 and model_repository:
        # Triton's PyTorch backend runs TorchScript and names the tensors <name>__<index>
        # (triton-inference-server/pytorch_backend README, "Naming convention"); the batch
        # dimension is implied by max_batch_size (model_config.proto).
        plain = model.module if isinstance(model, nn.parallel.DistributedDataParallel) else model
        folder = os.path.join(model_repository, "mnist-cnn")
        os.makedirs(os.path.join(folder, "1"), exist_ok=True)
        torch.jit.script(plain.cpu().eval()).save(os.path.join(folder, "1", "model.pt"))
        with open(os.path.join(folder, "config.pbtxt"), "w") as config:
            config.write(
                'name: "mnist-cnn"\nplatform: "pytorch_libtorch"\nmax_batch_size: 64\n'
                'input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 1, 28, 28 ] } ]\n'
                'output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 10 ] } ]\n'
            )
        print(f"model written to {folder}")
    if world_size > 1:
        dist.destroy_process_group()
    return losses


def submit(client: object, runtime: str = DEFAULT_RUNTIME, num_nodes: int = NUM_NODES) -> str:
    """Create the TrainJob (admitted through the namespace's `default` Kueue LocalQueue);
    returns its name."""
    from kubeflow.trainer import CustomTrainer, TrainerClient

    assert isinstance(client, TrainerClient)
    return client.train(
        runtime=runtime,
        trainer=CustomTrainer(func=train_mnist_cnn, func_args={"epochs": 2}, num_nodes=num_nodes),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runtime", default=DEFAULT_RUNTIME, help="torch-distributed or torch-distributed-<pool>")
    parser.add_argument("--local", action="store_true", help="train a few steps here on CPU instead")
    args = parser.parse_args()
    if args.local:
        losses = train_mnist_cnn(num_samples=1_000, batch_size=32, max_steps=25)
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
