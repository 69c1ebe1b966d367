"""Model Registry: train the MNIST example's CNN (pytorch_ddp_mnist.py), keep its weights where
a model server can read them, and register them in your team's Model Registry with the
Kubeflow SDK's ModelRegistryClient. Every team has its own registry, in its namespace.

    python examples/model_registry_mnist.py                 # from a notebook of your team (GKE): train
                                                            # here, save to the team bucket, register
    python examples/model_registry_mnist.py --version v2    # a second version of the same model
    python examples/model_registry_mnist.py --uri-prefix s3://my-store/models   # weights kept elsewhere
    python examples/model_registry_mnist.py --local         # train and save here; registers nothing

`--local` trains and saves the weights only: no Model Registry server runs outside the
cluster (the server ships as a container image only), so registering needs your team's.
The registry keeps names, versions and URIs; the weights stay where the URI points.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling example, wherever this runs from
from pytorch_ddp_mnist import train_mnist_cnn

MODEL = "mnist-cnn"
REGISTRY_SERVICE = "model-registry-service"
"""The registry's Service in your namespace, and its REST port (kubeflow/hub v0.3.9 manifests/kustomize
base/model-registry-service.yaml: port `http-api` 8080)."""
REGISTRY_PORT = 8080
SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
WEIGHTS = "model.pt"


def registry_url(namespace: str) -> str:
    """Your team's registry, as a pod of your namespace reaches it (plain HTTP inside the mesh)."""
    return f"http://{REGISTRY_SERVICE}.{namespace}.svc.cluster.local"


def own_namespace() -> str:
    """The notebook's namespace: your team's."""
    return Path(SERVICE_ACCOUNT_NAMESPACE).read_text().strip()


def uri_prefix(given: str | None) -> str:
    """Where the weights go, as a URI: the one given, else your team bucket (GKE)."""
    if given:
        return given.rstrip("/")
    bucket = os.environ.get("TEAM_BUCKET")
    if not bucket:
        raise SystemExit("no TEAM_BUCKET here (a GKE team's notebook has one); pass --uri-prefix with a store a model server can read")
    return f"gs://{bucket}/models"


def local_path(uri: str) -> str:
    """Where this process writes `uri`: the team bucket's mount for gs://<team bucket>/..."""
    bucket, mount = os.environ.get("TEAM_BUCKET"), os.environ.get("TEAM_BUCKET_PATH")
    if bucket and mount and uri.startswith(f"gs://{bucket}/"):
        return os.path.join(mount, uri.removeprefix(f"gs://{bucket}/"))
    raise SystemExit(f"{uri}: write the weights there yourself, then register them (this script writes to the team bucket only)")


def register(client: object, uri: str, version: str, loss: float) -> object:
    """Register `uri` as `version` of the model, with the loss it reached."""
    from importlib.metadata import version as installed

    from kubeflow.hub import ModelRegistryClient

    assert isinstance(client, ModelRegistryClient)
    return client.register_model(
        MODEL,
        uri,
        version=version,
        model_format_name="pytorch",
        model_format_version=installed("torch"),
        version_description="the CNN of examples/pytorch_ddp_mnist.py",
        metadata={"loss": loss},
    )


def train(save_to: str, samples: int, steps: int) -> float:
    losses = train_mnist_cnn(num_samples=samples, batch_size=32, max_steps=steps, save_to=save_to)
    print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    tail = losses[-10:]
    return sum(tail) / len(tail)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", default="v1", help="the version to register")
    parser.add_argument("--uri-prefix", help="where the weights go (default gs://$TEAM_BUCKET/models)")
    parser.add_argument("--local", action="store_true", help="train and save here, register nothing")
    parser.add_argument("--out", help="--local: the folder for the weights (default a temporary one)")
    args = parser.parse_args()
    if args.local:
        out = Path(args.out or tempfile.mkdtemp(prefix="mnist-cnn-"))
        path = out / MODEL / args.version / WEIGHTS
        train(str(path), samples=1_000, steps=25)
        print(f"weights at {path}; not registered: no Model Registry runs outside the cluster")
        return
    from kubeflow.hub import ModelRegistryClient

    uri = f"{uri_prefix(args.uri_prefix)}/{MODEL}/{args.version}/{WEIGHTS}"
    loss = train(local_path(uri), samples=5_000, steps=150)
    namespace = own_namespace()
    client = ModelRegistryClient(registry_url(namespace), port=REGISTRY_PORT, author=os.environ.get("NB_USER", namespace))
    model = register(client, uri, args.version, loss)
    print(f"registered {MODEL} {args.version} ({uri}) in {namespace}'s registry: {model}")


if __name__ == "__main__":
    main()
