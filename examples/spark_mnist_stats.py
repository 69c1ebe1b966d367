"""Spark: per-class statistics of the MNIST-shaped data of pytorch_ddp_mnist.py, as a Spark
batch job of the Kubeflow SDK's SparkClient: a SparkApplication in your namespace, run by the
Spark operator under your team's Spark service account (on GKE, your team's Google identity).

    python examples/spark_mnist_stats.py                  # 2 executors, 1 CPU and 2Gi each
    python examples/spark_mnist_stats.py --executors 4

Cluster only: the job runs in the Spark image the SDK names (apache/spark, Spark 4.0), which
brings PySpark; a local run would need a JVM and PySpark's jars, a few hundred MB, for a
dozen lines. The driver prints one `class <label>: <count> images, mean pixel <value>` line
per class; `SparkClient().get_job_logs(name)` shows them.
"""

from __future__ import annotations

import argparse

EXECUTORS = 2
EXECUTOR_RESOURCES = {"cpu": "1", "memory": "2Gi"}


def mnist_stats(num_samples: int = 60_000, seed: int = 0) -> None:
    """Runs in the Spark driver (the SDK ships this function's source): the same synthetic
    images as the PyTorch example (a template per class plus noise), counted per class."""
    import random

    from pyspark.sql import SparkSession, functions

    spark = SparkSession.builder.appName("mnist-stats").getOrCreate()
    draw = random.Random(seed)
    rows = [(draw.randrange(10), draw.gauss(0.0, 1.0)) for _ in range(num_samples)]
    frame = spark.createDataFrame(rows, ["label", "pixel"]).repartition(8)
    for row in frame.groupBy("label").agg(functions.count("*").alias("n"), functions.avg("pixel").alias("mean")).orderBy("label").collect():
        print(f"class {row['label']}: {row['n']} images, mean pixel {row['mean']:.4f}", flush=True)
    spark.stop()


def submit(client: object, executors: int = EXECUTORS) -> str:
    """Create the SparkApplication; returns its name."""
    from kubeflow.spark import FuncJob, SparkClient

    assert isinstance(client, SparkClient)
    return client.submit_job(
        FuncJob(func=mnist_stats, func_args={"num_samples": 60_000}),
        num_executors=executors,
        resources_per_executor=dict(EXECUTOR_RESOURCES),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--executors", type=int, default=EXECUTORS)
    args = parser.parse_args()
    from kubeflow.spark import SparkClient

    client = SparkClient()
    name = submit(client, args.executors)
    print(f"SparkApplication {name} created; waiting for it to finish")
    client.wait_for_job_status(name, timeout=3600)
    print("\n".join(client.get_job_logs(name)))


if __name__ == "__main__":
    main()
