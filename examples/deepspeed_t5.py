"""DeepSpeed: fine-tune T5 on 8 GPUs with the Kubeflow SDK; DeepSpeed checkpoints go to
the team's GCS bucket, mounted in every pod of the job the way the notebook has it.

    python examples/deepspeed_t5.py                          # 8 GPUs on deepspeed-distributed-l4
    python examples/deepspeed_t5.py --runtime deepspeed-distributed-h100
    python examples/deepspeed_t5.py --local        # a few steps here, on CPU, tiny random T5
                                                   # (pip install -r examples/requirements.txt);
                                                   # checkpoints to $TEAM_BUCKET_PATH/t5-deepspeed

The GPU runtimes run one MPI process per GPU (mpi.numProcPerNode = GPUs per node), so 8
GPUs is 4 nodes of the l4 pool (g2-standard-24: 2 GPUs) or 1 node of an 8-GPU pool; the
script asks the runtime for its GPUs per node and picks the node count.

The bucket: the platform gives each team with a bucket a PodDefault, `team-resources`,
that mounts it with GKE's GCS Fuse CSI driver at /mnt/team-bucket and runs the pod as the
namespace's `default-editor` (whose Google account may write the bucket). Select it under
"Configurations" when you create the notebook (it is preselected); this script puts its
label on the job's pods, so the launcher and every node see the same mount and DeepSpeed
writes `t5-deepspeed/step<N>/` there, i.e. gs://<bucket>/t5-deepspeed/. The task is
synthetic (reverse a token sequence) so nothing but the pretrained model is downloaded;
swap `make_batch` for your tokenised dataset.
"""

from __future__ import annotations

import argparse

DEFAULT_RUNTIME = "deepspeed-distributed-l4"
TOTAL_GPUS = 8
MOUNT_PATH = "/mnt/team-bucket"
# The team's PodDefault (the platform's components/profiles/pod_default.py): pods with this label get the
# bucket mount, its GCS Fuse annotation and the default-editor service account.
TEAM_RESOURCES_LABEL = "team-resources"


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


def team_bucket_patch(replicated_jobs: tuple[str, ...] = ("launcher", "node")) -> object:
    """A TrainJob runtime patch that labels the pods of every replicated job (launcher and
    nodes: every rank writes its shard) for the team's PodDefault, which mounts the team
    bucket at MOUNT_PATH exactly as in the notebook."""
    from kubeflow.trainer.options.kubernetes import (
        JobSetSpecPatch,
        JobSetTemplatePatch,
        JobSpecPatch,
        JobTemplatePatch,
        PodTemplatePatch,
        ReplicatedJobPatch,
        RuntimePatch,
        TrainingRuntimeSpecPatch,
    )

    pod = PodTemplatePatch(metadata={"labels": {TEAM_RESOURCES_LABEL: "true"}})
    jobs = [
        ReplicatedJobPatch(name=name, template=JobTemplatePatch(spec=JobSpecPatch(template=pod)))
        for name in replicated_jobs
    ]
    return RuntimePatch(
        training_runtime_spec=TrainingRuntimeSpecPatch(
            template=JobSetTemplatePatch(spec=JobSetSpecPatch(replicated_jobs=jobs))
        )
    )


def submit(client: object, runtime: str = DEFAULT_RUNTIME, total_gpus: int = TOTAL_GPUS) -> str:
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
        options=[team_bucket_patch()],
    )


def main() -> None:
    import os

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runtime", default=DEFAULT_RUNTIME, help="deepspeed-distributed-<GPU pool>")
    parser.add_argument("--local", action="store_true", help="train a few steps here on CPU instead")
    args = parser.parse_args()
    if args.local:
        import tempfile

        # Where the job writes them: the bucket's mount in a notebook (TEAM_BUCKET_PATH); elsewhere
        # a temporary folder, gone at exit (set TEAM_BUCKET_PATH to keep them).
        with tempfile.TemporaryDirectory() as tmp:
            root = os.environ.get("TEAM_BUCKET_PATH") or tmp
            losses = finetune_t5(checkpoint_dir=os.path.join(root, "t5-deepspeed"), steps=20, micro_batch_size=8, seq_len=8, local=True)
        print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}")
        return
    # Set by the team's PodDefault in the notebook; the job's pods get the same mount.
    bucket = os.environ.get("TEAM_BUCKET")
    if not os.environ.get("TEAM_BUCKET_PATH"):
        parser.error(
            "no team bucket is mounted here: run this in a notebook with the team-resources configuration "
            "(your team needs a bucket in the stack), or use --local"
        )
    from kubeflow.trainer import TrainerClient

    client = TrainerClient()
    name = submit(client, args.runtime)
    print(f"TrainJob {name} created; checkpoints go to gs://{bucket}/t5-deepspeed")
    client.wait_for_job_status(name, timeout=6 * 3600)
    print("\n".join(client.get_job_logs(name)))


if __name__ == "__main__":
    main()
