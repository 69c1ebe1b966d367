"""DeepSpeed: fine-tune T5 on 8 GPUs with the Kubeflow SDK; DeepSpeed checkpoints go to
the team's GCS bucket through a GCS Fuse mount.

    python examples/deepspeed_t5.py --bucket acme-ml-vision                  # 8 GPUs on deepspeed-distributed-l4
    python examples/deepspeed_t5.py --bucket B --runtime deepspeed-distributed-h100
    python examples/deepspeed_t5.py --local        # a few steps here, on CPU, tiny random T5
                                                   # (pip install torch transformers)

The GPU runtimes run one MPI process per GPU (mpi.numProcPerNode = GPUs per node), so 8
GPUs is 4 nodes of the l4 pool (g2-standard-24: 2 GPUs) or 1 node of an 8-GPU pool; the
script asks the runtime for its GPUs per node and picks the node count.

The bucket is mounted with the GKE GCS Fuse CSI driver at /mnt/team-bucket on every
node; the pods run as the namespace's `default-editor` service account, which needs
read/write access to the bucket (Workload Identity). The task is synthetic
(reverse a token sequence) so nothing but the pretrained model is downloaded; swap
`make_batch` for your tokenised dataset.
"""

from __future__ import annotations

import argparse

DEFAULT_RUNTIME = "deepspeed-distributed-l4"
TOTAL_GPUS = 8
MOUNT_PATH = "/mnt/team-bucket"
# The MPI runtimes run as mpiuser (uid/gid 1000); GCS Fuse mounts are root's unless told.
MOUNT_OPTIONS = "implicit-dirs,uid=1000,gid=1000"


def finetune_t5(
    checkpoint_dir: str = "/mnt/team-bucket/t5-deepspeed",
    model_name: str = "google-t5/t5-small",
    steps: int = 500,
    micro_batch_size: int = 8,
    seq_len: int = 32,
    checkpoint_every: int = 250,
    local: bool = False,
    seed: int = 0,
) -> list[float]:
    """Fine-tune T5; returns this rank's loss per step. With `local`, a tiny random T5 and
    plain PyTorch on CPU (no DeepSpeed, no download). Self-contained (imports inside)
    because the SDK ships this function's source to the training nodes."""
    import os

    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    if local:
        config = T5Config(
            vocab_size=128, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, decoder_start_token_id=0
        )
        model = T5ForConditionalGeneration(config)
        vocab = config.vocab_size
        rank, device = 0, torch.device("cpu")
        engine = None
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    else:
        import deepspeed

        # mpirun (the deepspeed-distributed runtimes) starts one process per GPU;
        # DeepSpeed discovers rank, world size and LOCAL_RANK from the MPI environment.
        deepspeed.init_distributed(dist_backend="nccl")
        rank = torch.distributed.get_rank()
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(device)
        model = T5ForConditionalGeneration.from_pretrained(model_name)
        vocab = min(model.config.vocab_size, 32_000)
        ds_config = {
            "train_micro_batch_size_per_gpu": micro_batch_size,
            "gradient_accumulation_steps": 1,
            "bf16": {"enabled": True},
            "zero_optimization": {"stage": 2},
            "optimizer": {"type": "AdamW", "params": {"lr": 3e-4}},
        }
        engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)

    generator = torch.Generator().manual_seed(seed + rank)  # each rank its own data

    def make_batch() -> tuple[torch.Tensor, torch.Tensor]:
        inputs = torch.randint(2, vocab, (micro_batch_size, seq_len), generator=generator)
        return inputs.to(device), inputs.flip(1).to(device)

    losses: list[float] = []
    for step in range(1, steps + 1):
        inputs, labels = make_batch()
        if engine is None:
            loss = model(input_ids=inputs, labels=labels).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        else:
            loss = engine(input_ids=inputs, labels=labels).loss
            engine.backward(loss)
            engine.step()
        losses.append(loss.item())
        if rank == 0 and step % 10 == 0:
            print(f"step {step} loss {losses[-1]:.4f}", flush=True)
        if step % checkpoint_every == 0 or step == steps:
            if engine is None:
                os.makedirs(checkpoint_dir, exist_ok=True)
                torch.save(model.state_dict(), os.path.join(checkpoint_dir, f"step{step}.pt"))
            else:
                # Every rank writes its ZeRO shard; all of them see the same bucket mount.
                engine.save_checkpoint(checkpoint_dir, tag=f"step{step}")
            if rank == 0:
                print(f"checkpoint step{step} written to {checkpoint_dir}", flush=True)
    return losses


def gcs_fuse_patch(bucket: str, replicated_jobs: tuple[str, ...] = ("launcher", "node")) -> object:
    """A TrainJob runtime patch that mounts `bucket` at MOUNT_PATH in the `node` container
    of every replicated job (launcher and nodes: every rank writes its shard)."""
    from kubeflow.trainer.options.kubernetes import (
        ContainerPatch,
        JobSetSpecPatch,
        JobSetTemplatePatch,
        JobSpecPatch,
        JobTemplatePatch,
        PodSpecPatch,
        PodTemplatePatch,
        ReplicatedJobPatch,
        RuntimePatch,
        TrainingRuntimeSpecPatch,
    )

    volume = {
        "name": "team-bucket",
        "csi": {
            "driver": "gcsfuse.csi.storage.gke.io",
            "volumeAttributes": {"bucketName": bucket, "mountOptions": MOUNT_OPTIONS},
        },
    }
    pod = PodTemplatePatch(
        # The GKE webhook adds the GCS Fuse sidecar to pods that ask for it.
        metadata={"annotations": {"gke-gcsfuse/volumes": "true"}},
        spec=PodSpecPatch(
            service_account_name="default-editor",
            volumes=[volume],
            containers=[ContainerPatch(name="node", volume_mounts=[{"name": "team-bucket", "mountPath": MOUNT_PATH}])],
        ),
    )
    jobs = [
        ReplicatedJobPatch(name=name, template=JobTemplatePatch(spec=JobSpecPatch(template=pod)))
        for name in replicated_jobs
    ]
    return RuntimePatch(
        training_runtime_spec=TrainingRuntimeSpecPatch(
            template=JobSetTemplatePatch(spec=JobSetSpecPatch(replicated_jobs=jobs))
        )
    )


def submit(client: object, bucket: str, runtime: str = DEFAULT_RUNTIME, total_gpus: int = TOTAL_GPUS) -> str:
    """Create the TrainJob on enough nodes of `runtime` for `total_gpus` GPUs."""
    from kubeflow.trainer import CustomTrainer, TrainerClient

    assert isinstance(client, TrainerClient)
    found = client.get_runtime(runtime)
    gpus_per_node = int(found.trainer.device_count) // found.trainer.num_nodes
    if found.trainer.device != "gpu" or total_gpus % gpus_per_node:
        raise SystemExit(f"{runtime} has {found.trainer.device} x {gpus_per_node} per node; pick a GPU runtime")
    return client.train(
        runtime=found,
        trainer=CustomTrainer(
            func=finetune_t5,
            # The deepspeed-runtime image brings deepspeed, torch and transformers.
            func_args={"checkpoint_dir": f"{MOUNT_PATH}/t5-deepspeed"},
            num_nodes=total_gpus // gpus_per_node,
        ),
        options=[gcs_fuse_patch(bucket)],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bucket", help="the team's GCS bucket (name only)")
    parser.add_argument("--runtime", default=DEFAULT_RUNTIME, help="deepspeed-distributed-<GPU pool>")
    parser.add_argument("--local", action="store_true", help="train a few steps here on CPU instead")
    args = parser.parse_args()
    if args.local:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            losses = finetune_t5(checkpoint_dir=tmp, steps=20, micro_batch_size=8, seq_len=8, local=True)
        print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}")
        return
    if not args.bucket:
        parser.error("--bucket is required unless --local")
    from kubeflow.trainer import TrainerClient

    client = TrainerClient()
    name = submit(client, args.bucket, args.runtime)
    print(f"TrainJob {name} created; checkpoints go to gs://{args.bucket}/t5-deepspeed")
    client.wait_for_job_status(name, timeout=6 * 3600)
    print("\n".join(client.get_job_logs(name)))


if __name__ == "__main__":
    main()
