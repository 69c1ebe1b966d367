"""Katib: a search over the learning rate of the PyTorch MNIST example (pytorch_ddp_mnist.py),
with the Kubeflow SDK's OptimizerClient. Each trial is a TrainJob on the platform's
torch-distributed runtime, queued by Kueue in your namespace's `default` queue like any
other TrainJob, so a search never takes more than your team's quota.

    python examples/katib_mnist_search.py                      # 6 trials, 2 at a time, on torch-distributed
    python examples/katib_mnist_search.py --runtime torch-distributed-l4   # the trials on the l4 GPU pool
    python examples/katib_mnist_search.py --local              # the same kind of search here, on CPU: a few
                                                               # steps per trial, no Katib (pip install -r
                                                               # examples/requirements.txt)

Katib reads each trial's metric from the `loss=<value>` line the training function prints (its
StdOut collector, the default); the objective is to minimise it. The search is an Experiment in
your namespace: `OptimizerClient().get_job(name)` shows its trials, the Katib UI too.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling example, wherever this runs from
from pytorch_ddp_mnist import train_mnist_cnn

DEFAULT_RUNTIME = "torch-distributed"
LR_MIN, LR_MAX = 0.001, 0.1
NUM_TRIALS = 6
PARALLEL_TRIALS = 2
TRIAL_ARGS = {"num_samples": 20_000, "epochs": 1, "max_steps": 300}
"""Each trial's training run: one node, a third of the MNIST example's data, at most 300 steps."""
METRIC = "loss"


def search(client: object, runtime: str = DEFAULT_RUNTIME, num_trials: int = NUM_TRIALS, parallel: int = PARALLEL_TRIALS) -> str:
    """Create the Katib Experiment (the SDK's OptimizationJob); returns its name."""
    from kubeflow.optimizer import Objective, OptimizerClient, RandomSearch, Search, TrainJobTemplate, TrialConfig
    from kubeflow.trainer import CustomTrainer

    assert isinstance(client, OptimizerClient)
    return client.optimize(
        trial_template=TrainJobTemplate(
            runtime=runtime, trainer=CustomTrainer(func=train_mnist_cnn, func_args=dict(TRIAL_ARGS), num_nodes=1)
        ),
        search_space={"lr": Search.loguniform(LR_MIN, LR_MAX)},
        objectives=[Objective(metric=METRIC)],  # minimised (the SDK's default direction)
        trial_config=TrialConfig(num_trials=num_trials, parallel_trials=parallel),
        algorithm=RandomSearch(),
    )


def local_search(num_trials: int = 4, seed: int = 0) -> list[tuple[float, float]]:
    """The search here, without Katib: learning rates drawn log-uniformly like Katib's random
    search, each trial a few steps of the same training function, its metric the one the
    function prints. Returns (lr, loss) per trial, best first; a trial that diverged counts as
    infinitely bad (Katib would fail it)."""
    draw = random.Random(seed)
    results = []
    for trial in range(num_trials):
        lr = math.exp(draw.uniform(math.log(LR_MIN), math.log(LR_MAX)))
        losses = train_mnist_cnn(num_samples=1_000, batch_size=32, max_steps=25, lr=lr)
        tail = losses[-10:]
        loss = sum(tail) / len(tail)
        results.append((lr, loss if math.isfinite(loss) else math.inf))
        print(f"trial {trial}: lr={lr:.5f} {METRIC}={loss:.4f}", flush=True)
    return sorted(results, key=lambda r: r[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runtime", default=DEFAULT_RUNTIME, help="torch-distributed or torch-distributed-<pool>")
    parser.add_argument("--trials", type=int, default=NUM_TRIALS)
    parser.add_argument("--local", action="store_true", help="search here on CPU instead, a few steps per trial")
    args = parser.parse_args()
    if args.local:
        results = local_search(num_trials=min(args.trials, 4))
        (best_lr, best), (worst_lr, worst) = results[0], results[-1]
        print(f"best lr={best_lr:.5f} {METRIC}={best:.4f}; worst lr={worst_lr:.5f} {METRIC}={worst:.4f}")
        return
    from kubeflow.optimizer import OptimizerClient

    client = OptimizerClient()
    name = search(client, args.runtime, num_trials=args.trials)
    print(f"Experiment {name} created; waiting for its trials")
    job = client.wait_for_job_status(name, timeout=7200)
    print(f"{job.name}: {job.status}; best trial: {client.get_best_results(name)}")


if __name__ == "__main__":
    main()
