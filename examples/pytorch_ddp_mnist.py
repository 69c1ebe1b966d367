"""PyTorch DDP: a small CNN on MNIST-shaped data (60,000 28x28 images, 10 classes),
split across 3 nodes by DistributedSampler, submitted with the Kubeflow SDK.

    python examples/pytorch_ddp_mnist.py                          # TrainJob on torch-distributed, 3 nodes
    python examples/pytorch_ddp_mnist.py --runtime torch-distributed-l4   # the same on the l4 GPU pool
    python examples/pytorch_ddp_mnist.py --priority preemptible   # best effort: borrows idle GPUs, preempted first
    python examples/pytorch_ddp_mnist.py --local                  # a few steps here, on CPU
                                                                  # (pip install -r examples/requirements.txt)
    python examples/pytorch_ddp_mnist.py --local --checkpoint-dir /tmp/ckpt --max-steps 400
                                                                  # stop it (kill -TERM), run it again: it resumes

With `model_repository`, rank 0 also writes the trained model for serving, as TorchScript in
Triton's model repository layout (examples/kserve_mnist.py serves it with KServe).

The data is synthetic (a fixed pattern per class plus noise) so the example needs no
download; swap `make_dataset` for torchvision's MNIST to train on the real thing.

Preemption-safe: on the cluster the runtime gives the job $CHECKPOINT_DIR, a folder of its own in
the team bucket; the training checkpoints there every 100 steps and when Kueue preempts it
(SIGTERM), and a preempted job that Kueue admits again resumes from its newest checkpoint.
"""

from __future__ import annotations

import argparse

DEFAULT_RUNTIME = "torch-distributed"
NUM_NODES = 3
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
"""Kueue's label for a job's priority class: interactive, batch (the runtimes' default) or
preemptible (docs/teams.md, "Priorities")."""


def train_mnist_cnn(
    num_samples: int = 60_000,
    epochs: int = 1,
    batch_size: int = 64,
    lr: float = 0.05,
    max_steps: int = 0,
    seed: int = 0,
    checkpoint_dir: str = "",
    checkpoint_every: int = 100,
    log_every: int = 50,
    save_to: str = "",
    model_repository: str = "",
) -> list[float]:
    """Train the CNN; returns this run's loss per step. Self-contained (imports inside)
    because the SDK ships this function's source to the training nodes.

    Preemption-safe: with a checkpoint folder (`checkpoint_dir`, else $CHECKPOINT_DIR, which
    the platform's runtimes set to a folder of this TrainJob's own in the team bucket) it
    resumes from the newest checkpoint there, writes one every `checkpoint_every` steps, and on
    SIGTERM (Kueue preempting the job, a node going away) writes one at the end of the step it
    is in and exits with 143, so the job is not taken for finished. `max_steps` counts from the
    first run's step 0, resumed runs included.

    Rank 0 ends with a `loss=<value>` line (the mean of its last ten steps): the metric a Katib
    search over this function reads (examples/katib_mnist_search.py; Katib's StdOut collector
    parses `name=value` lines). `lr` may come as text: a search hands its trials their
    parameters through the command line. `save_to`: a path rank 0 saves the weights to
    (examples/model_registry_mnist.py registers them). With `model_repository` (a folder: the team
    bucket's mount on the cluster), rank 0 writes the model there as `mnist-cnn/1/model.pt`
    (TorchScript) and `mnist-cnn/config.pbtxt`: an entry of a Triton model repository, which
    KServe's Triton runtime serves (examples/kserve_mnist.py)."""
    import os
    import re
    import signal
    import sys

    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch import nn
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    # torchrun (the torch-distributed runtime) sets these; a local run has neither.
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    lr = float(lr)
    use_cuda = torch.cuda.is_available()
    device = torch.device(f"cuda:{local_rank}" if use_cuda else "cpu")
    if world_size > 1:
        dist.init_process_group(backend="nccl" if use_cuda else "gloo")
    if use_cuda:
        torch.cuda.set_device(device)

    # SIGTERM only raises a flag: the step in flight ends, every rank agrees to stop after it
    # (an all-reduce, so no rank waits for a step the others never take), rank 0 saves.
    terminated = []
    signal.signal(signal.SIGTERM, lambda signum, frame: terminated.append(signum))

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
    net: nn.Module = nn.Sequential(
        nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2),   # 28 -> 26 -> 13
        nn.Conv2d(16, 32, 3), nn.ReLU(), nn.MaxPool2d(2),  # 13 -> 11 -> 5
        nn.Flatten(), nn.Linear(32 * 5 * 5, 10),
    ).to(device)
    optimizer = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9)

    # Resume: the newest `step-<N>.pt` of the folder (written whole: see save()).
    directory = checkpoint_dir or os.environ.get("CHECKPOINT_DIR", "")
    step = 0
    if directory:
        os.makedirs(directory, exist_ok=True)
        found = sorted(int(m.group(1)) for m in (re.fullmatch(r"step-(\d+)\.pt", f) for f in os.listdir(directory)) if m)
        if found:
            path = os.path.join(directory, f"step-{found[-1]:08d}.pt")
            state = torch.load(path, map_location=device)
            net.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            step = state["step"]
            if rank == 0:
                print(f"resumed from step {step} ({path})", flush=True)
    model = nn.parallel.DistributedDataParallel(net, device_ids=[local_rank] if use_cuda else None) if world_size > 1 else net

    def save(why: str) -> None:
        """Rank 0 writes a new file under a temporary name and renames it: a file rename is atomic
        on a local disk and on Cloud Storage FUSE, so a reader never sees half a checkpoint. The
        two newest are kept. Every rank waits for it, so none exits before it is written."""
        if rank == 0:
            path = os.path.join(directory, f"step-{step:08d}.pt")
            torch.save({"step": step, "model": net.state_dict(), "optimizer": optimizer.state_dict()}, path + ".tmp")
            os.replace(path + ".tmp", path)
            older = sorted(f for f in os.listdir(directory) if re.fullmatch(r"step-\d+\.pt", f))[:-2]
            for name in older:
                os.remove(os.path.join(directory, name))
            print(f"checkpoint step {step} written to {directory} ({why})", flush=True)
        if world_size > 1:
            dist.barrier()

    def stopping() -> bool:
        flag = torch.tensor([1.0 if terminated else 0.0], device=device)
        if world_size > 1:
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        return bool(flag.item())

    steps_per_epoch = len(loader)
    losses: list[float] = []
    done = bool(max_steps) and step >= max_steps
    for epoch in range(step // steps_per_epoch, epochs):
        if done:
            break
        sampler.set_epoch(epoch)
        for index, (x, y) in enumerate(loader):
            if epoch * steps_per_epoch + index < step:
                continue  # taken before the checkpoint: the sampler's order is the same (seed, epoch)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
            step += 1
            losses.append(loss.item())
            if rank == 0 and step % log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}", flush=True)
            if stopping():
                if directory:
                    save("SIGTERM")
                if world_size > 1:
                    dist.destroy_process_group()
                sys.exit(128 + signal.SIGTERM)
            if directory and step % checkpoint_every == 0:
                save(f"every {checkpoint_every} steps")
            if max_steps and step >= max_steps:
                done = True
                break
    if directory and losses and step % checkpoint_every != 0:
        save("end")
    if rank == 0 and losses:
        print(f"rank 0 trained on {len(sampler)} of {num_samples} samples; step {step}; last loss {losses[-1]:.4f}")
        tail = losses[-10:]
        print(f"loss={sum(tail) / len(tail):.6f}", flush=True)
        if save_to:
            os.makedirs(os.path.dirname(os.path.abspath(save_to)), exist_ok=True)
            weights = model.module if world_size > 1 else model
            torch.save(weights.state_dict(), save_to)
            print(f"saved the weights to {save_to}")
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


def submit(client: object, runtime: str = DEFAULT_RUNTIME, num_nodes: int = NUM_NODES, priority: str | None = None) -> str:
    """Create the TrainJob (admitted through the namespace's `default` Kueue LocalQueue), at
    `priority` if given (else the runtime's default, batch); returns its name."""
    from kubeflow.trainer import CustomTrainer, TrainerClient
    from kubeflow.trainer.options import Labels

    assert isinstance(client, TrainerClient)
    return client.train(
        runtime=runtime,
        trainer=CustomTrainer(func=train_mnist_cnn, func_args={"epochs": 2}, num_nodes=num_nodes),
        options=[Labels({PRIORITY_LABEL: priority})] if priority else None,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runtime", default=DEFAULT_RUNTIME, help="torch-distributed or torch-distributed-<pool>")
    parser.add_argument("--priority", choices=("interactive", "batch", "preemptible"), help="the job's priority class (default: the runtime's, batch)")
    parser.add_argument("--local", action="store_true", help="train a few steps here on CPU instead")
    parser.add_argument("--checkpoint-dir", default="", help="--local: checkpoint and resume here (on the cluster: $CHECKPOINT_DIR)")
    parser.add_argument("--checkpoint-every", type=int, default=100, help="--local: steps between checkpoints")
    parser.add_argument("--max-steps", type=int, default=25, help="--local: stop at this step, counted from the first run's start")
    args = parser.parse_args()
    if args.local:
        losses = train_mnist_cnn(
            num_samples=1_000, batch_size=32, epochs=1_000, max_steps=args.max_steps,
            checkpoint_dir=args.checkpoint_dir, checkpoint_every=args.checkpoint_every, log_every=10,
        )
        if losses:
            print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}")
        return
    from kubeflow.trainer import TrainerClient

    client = TrainerClient()
    name = submit(client, args.runtime, priority=args.priority)
    print(f"TrainJob {name} created; waiting for it to finish")
    client.wait_for_job_status(name, timeout=3600)
    print("\n".join(client.get_job_logs(name)))


if __name__ == "__main__":
    main()
