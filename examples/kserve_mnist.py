"""Serve what you trained: the CNN of pytorch_ddp_mnist.py, saved to the team bucket as a
TorchScript model, served by KServe and queried over the Open Inference Protocol (KServe's v2).

    python examples/kserve_mnist.py train                # TrainJob: train, write gs://$TEAM_BUCKET/models/mnist-cnn
    python examples/kserve_mnist.py deploy               # InferenceService mnist-cnn from there (Triton, CPU)
    python examples/kserve_mnist.py register --version v1   # or: register it in your team's Model Registry,
    python examples/kserve_mnist.py deploy --registered v1  # and deploy it by name (model-registry://)
    python examples/kserve_mnist.py query                # POST 8 images, print the classes
    python examples/kserve_mnist.py query --url https://kubeflow.example.com/serving/<team>/mnist-cnn \\
        --token "$(kubectl create token default-viewer -n <team> --audience <the stack's serving audience>)"
    python examples/kserve_mnist.py --local              # all of it here: train a few steps, KServe's own
                                                         # Python model server in this process, query it

The model: TorchScript in Triton's model repository layout, `<repository>/mnist-cnn/config.pbtxt`
and `<repository>/mnist-cnn/1/model.pt` (Triton's PyTorch backend runs TorchScript; its inputs and
outputs are named `INPUT__0`, `OUTPUT__0`: triton-inference-server/pytorch_backend README, "Naming
convention"). KServe serves the `pytorch` format with Triton (the runtime `kserve-tritonserver` of
its runtime-configs chart; TorchServe is in limited maintenance), which speaks the same v2 protocol
as KServe's Python model server: the query below is the same locally and on the cluster. A
torch 2.13 TorchScript file loads in the Triton of KServe v0.20.0's runtime (23.05, PyTorch 2.0):
the archive format it writes, 10, has been the newest every libtorch since 2022 reads
(caffe2/serialize/versions.h, kProducedFileFormatVersion; the local run asserts it).

On the cluster (a notebook of your team, the `team-resources` configuration): the TrainJob writes
to the bucket's mount, the InferenceService reads the same objects through the team's model store
(`pvc://team-models/...`, the bucket mounted read-only by GCS Fuse; docs/serving.md), and the
query goes through the Kubeflow gateway at /serving/<team>/<name>/ (your browser session, or a
token of your team's service account for a program). With the Model Registry on, `register` records
the repository's URI as a version in your team's registry and `deploy --registered <version>` names
it, `model-registry://mnist-cnn-triton/<version>`: KServe's storage initializer asks your team's
registry for the URI and downloads it (docs/serving.md, "A registered model by name").
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from model_registry_mnist import REGISTRY_PORT, own_namespace, registry_url
from pytorch_ddp_mnist import DEFAULT_RUNTIME, train_mnist_cnn

MODEL_NAME = "mnist-cnn"
"""The model's name in its repository, in the InferenceService and in /v2/models/<name>/infer
(pytorch_ddp_mnist.train_mnist_cnn writes it under this name)."""
INPUT, OUTPUT = "INPUT__0", "OUTPUT__0"
"""Its tensors, as the config.pbtxt train_mnist_cnn writes names them."""
MOUNT_PATH = "/mnt/team-bucket"
"""Where the team's PodDefault mounts the bucket in a notebook and in the TrainJob's pods."""
MODELS_PREFIX = "models"
"""The bucket's folder of model repositories: gs://<bucket>/models/<name>/..."""
MODEL_STORE_PVC = "team-models"
"""The team's read-only view of its bucket for serving (docs/serving.md, "Where models load from")."""
REGISTERED_MODEL = "mnist-cnn-triton"
"""Its name in the team's Model Registry: the Triton repository (model_registry_mnist.py registers the
bare weights as `mnist-cnn`)."""
TEAM_RESOURCES_LABEL = "team-resources"
"""The team PodDefault's label: pods with it mount the bucket (examples/deepspeed_t5.py)."""
RUNTIME = "kserve-tritonserver"
"""KServe v0.20.0's Triton runtime: it lists the `pytorch` format without autoSelect, so it is named."""
PROMETHEUS = "http://kube-prometheus-stack-prometheus.monitoring.svc:9090"
"""The platform's Prometheus, which scrapes every model server (docs/serving.md, "Replicas follow load")."""
REQUESTS_PER_REPLICA = "20"
"""The load one replica takes: KEDA asks for a replica per 20 requests a second (Triton's counter)."""
WAKE_THRESHOLD = "1"
"""The wake query is 0 or 1: at most one replica of its own, any request wakes the model."""


def sample_images(count: int = 8, seed: int = 0) -> tuple[Any, Any]:
    """Images of the training data's distribution (pytorch_ddp_mnist: one template per class plus
    noise) and their classes."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    templates = torch.randn(10, 1, 28, 28, generator=generator)
    labels = torch.arange(count) % 10
    images = templates[labels] + 0.8 * torch.randn(count, 1, 28, 28, generator=torch.Generator().manual_seed(seed + 1))
    return images.numpy(), labels.numpy()


def request(images: Any) -> Any:
    """The v2 inference request for a batch of images."""
    from kserve import InferInput, InferRequest

    tensor = InferInput(name=INPUT, shape=list(images.shape), datatype="FP32")
    tensor.set_data_from_numpy(images, binary_data=False)
    return InferRequest(model_name=MODEL_NAME, infer_inputs=[tensor])


def query(base_url: str, images: Any, token: str | None = None) -> Any:
    """POST the images to <base_url>/v2/models/mnist-cnn/infer (KServe's REST client); the logits.
    `base_url`: the server itself, or its path on the Kubeflow gateway; `token`: a bearer token the
    gateway accepts (a service-account token of your team, docs/serving.md)."""
    import asyncio

    from kserve import InferenceRESTClient, RESTConfig

    async def infer() -> Any:
        client = InferenceRESTClient(RESTConfig(protocol="v2", timeout=60))
        try:
            headers = {"Authorization": f"Bearer {token}"} if token else None
            response = await client.infer(base_url, request(images), model_name=MODEL_NAME, headers=headers)
        finally:
            await client.close()
        (output,) = [o for o in response.outputs if o.name == OUTPUT]
        return output.as_numpy()

    return asyncio.run(infer())


def torchscript_model_server(repository: str) -> Any:
    """A kserve.Model serving the repository's TorchScript file as Triton would: the same name,
    tensor names and shapes, over the same protocol (KServe's Python model server, in-process)."""
    import torch
    from kserve import InferOutput, InferRequest, InferResponse, Model

    class TorchScriptModel(Model):
        def __init__(self) -> None:
            super().__init__(MODEL_NAME)
            self.module: Any = None

        def load(self) -> bool:
            self.module = torch.jit.load(str(Path(repository) / MODEL_NAME / "1" / "model.pt")).eval()
            self.ready = True
            return self.ready

        async def predict(self, payload: InferRequest, headers: Any = None, response_headers: Any = None) -> InferResponse:
            (tensor,) = [i for i in payload.inputs if i.name == INPUT]
            with torch.no_grad():
                logits = self.module(torch.from_numpy(tensor.as_numpy()).float()).numpy()
            output = InferOutput(name=OUTPUT, shape=list(logits.shape), datatype="FP32")
            output.set_data_from_numpy(logits, binary_data=False)
            return InferResponse(response_id=payload.id or "", model_name=MODEL_NAME, infer_outputs=[output])

    model = TorchScriptModel()
    model.load()
    return model


def archive_version(model_file: Path) -> int:
    """The file format version a TorchScript archive records (its `<archive>/version` entry)."""
    import zipfile

    with zipfile.ZipFile(model_file) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith("/version") and n.count("/") == 1]
        return int(archive.read(name).decode().strip())


def run_local(repository: str, port: int) -> None:
    """Train a few steps, write the repository, serve it with KServe's ModelServer on 127.0.0.1:`port`
    in this process, query it over v2 from a thread, stop the server."""
    import signal
    import threading
    import time
    import urllib.request

    import numpy as np
    import torch
    from kserve import ModelServer

    losses = train_mnist_cnn(num_samples=1_000, batch_size=32, max_steps=40, model_repository=repository)
    print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    model_file = Path(repository) / MODEL_NAME / "1" / "model.pt"
    print(f"torchscript archive version {archive_version(model_file)}")
    images, labels = sample_images()
    expected = torch.jit.load(str(model_file))(torch.from_numpy(images)).detach().numpy()
    base_url = f"http://127.0.0.1:{port}"
    outcome: dict[str, Any] = {}

    def client() -> None:
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"{base_url}/v2/models/{MODEL_NAME}/ready", timeout=2) as ready:
                        if ready.status == 200:
                            break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            logits = query(base_url, images)
            outcome["classes"] = logits.argmax(axis=1)
            outcome["same"] = bool(np.allclose(logits, expected, atol=1e-4))
        except BaseException as error:  # reported by the main thread
            outcome["error"] = error
        finally:
            os.kill(os.getpid(), signal.SIGINT)  # the model server stops on SIGINT (ModelServer.stop)

    threading.Thread(target=client, daemon=True).start()
    ModelServer(http_port=port, enable_grpc=False, workers=1).start([torchscript_model_server(repository)])
    if "error" in outcome:
        raise SystemExit(f"query failed: {outcome['error']!r}")
    classes = outcome["classes"]
    print(f"served {MODEL_NAME} over v2 at {base_url}: classes {classes.tolist()} for labels {labels.tolist()}")
    print(f"served logits equal the TorchScript model's: {outcome['same']}")
    print(f"accuracy {float((classes == labels).mean()):.2f}")


def load_query(namespace: str) -> str:
    """The model's load as the platform's Prometheus sees it: Triton's successful requests a second
    (nv_inference_request_success), all replicas together; `inferenceservice` is the label the
    platform's monitor gives each model server's series."""
    return f'sum(rate(nv_inference_request_success{{namespace="{namespace}",inferenceservice="{MODEL_NAME}"}}[1m]))'


def wake_query(namespace: str) -> str:
    """1 while the team's model router passed on a request for the model in the last 2 minutes,
    else 0: its Istio sidecar counts them (istio_requests_total) even while the model has no
    replica, so a request brings it back from zero (docs/serving.md, "Scale to zero, and back")."""
    selector = (
        f'namespace="{namespace}",reporter="source",'
        f'destination_service_namespace="{namespace}",destination_service_name="{MODEL_NAME}-predictor"'
    )
    return f"sum(increase(istio_requests_total{{{selector}}}[2m])) > bool 0"


def inference_service(namespace: str, storage_uri: str, gpus: int = 0, min_replicas: int = 1) -> Any:
    """The InferenceService, through the kserve SDK's models: Triton, the TorchScript repository at
    `storage_uri`, `min_replicas` (0 where the stack's floor allows: an idle model holds nothing) to
    2 replicas that follow its load through KEDA. The platform's defaults do the rest (its routes,
    its queue for a GPU replica, the floor and ceiling: docs/serving.md)."""
    from kserve import (
        V1beta1AutoScalingSpec,
        V1beta1ExternalMetrics,
        V1beta1ExternalMetricSource,
        V1beta1InferenceService,
        V1beta1InferenceServiceSpec,
        V1beta1MetricsSpec,
        V1beta1MetricTarget,
        V1beta1ModelFormat,
        V1beta1ModelSpec,
        V1beta1PredictorSpec,
        constants,
    )
    from kubernetes.client import V1ObjectMeta, V1ResourceRequirements

    limits: dict[str, Any] = {"cpu": "1", "memory": "2Gi"}
    if gpus:
        limits["nvidia.com/gpu"] = str(gpus)
    model = V1beta1ModelSpec(
        model_format=V1beta1ModelFormat(name="pytorch"),
        runtime=RUNTIME,
        storage_uri=storage_uri,
        resources=V1ResourceRequirements(requests=dict(limits), limits=limits),
    )
    def external(query: str, per_replica: str) -> Any:
        return V1beta1MetricsSpec(
            type="External",
            external=V1beta1ExternalMetricSource(
                metric=V1beta1ExternalMetrics(backend="prometheus", server_address=PROMETHEUS, query=query),
                target=V1beta1MetricTarget(type="Value", value=per_replica),
            ),
        )

    # Its load sets the replicas; a request through the router wakes it from zero.
    metrics = [external(load_query(namespace), REQUESTS_PER_REPLICA), external(wake_query(namespace), WAKE_THRESHOLD)]
    predictor = V1beta1PredictorSpec(
        model=model,
        min_replicas=min_replicas,
        max_replicas=2,
        auto_scaling=V1beta1AutoScalingSpec(metrics=metrics),
    )
    return V1beta1InferenceService(
        api_version=constants.KSERVE_V1BETA1,
        kind=constants.KSERVE_KIND_INFERENCESERVICE,
        # KEDA, not KServe's default HPA (CPU only), scales it on that query.
        metadata=V1ObjectMeta(name=MODEL_NAME, namespace=namespace, annotations={"serving.kserve.io/autoscalerClass": "keda"}),
        spec=V1beta1InferenceServiceSpec(predictor=predictor),
    )


def registered_uri(version: str) -> str:
    """The storageUri of a registered version: KServe gives `model-registry://` URIs to the Model
    Registry's storage initializer, which asks the registry of the pod's own namespace."""
    return f"model-registry://{REGISTERED_MODEL}/{version}"


def register(client: object, repository_uri: str, version: str) -> object:
    """Record the Triton repository at `repository_uri` as `version` (format `pytorch`, as Triton serves it)."""
    from kubeflow.hub import ModelRegistryClient

    assert isinstance(client, ModelRegistryClient)
    return client.register_model(REGISTERED_MODEL, repository_uri, version=version, model_format_name="pytorch", model_format_version="1")


def team_namespace() -> str:
    """The notebook's namespace (its service account's)."""
    return Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace").read_text().strip()


def submit(client: object, runtime: str = DEFAULT_RUNTIME) -> str:
    """The TrainJob: the CNN on one node of `runtime`, its pod labelled for the team's PodDefault
    (the bucket's mount), written to <mount>/models on node 0; returns its name."""
    from kubeflow.trainer import CustomTrainer, TrainerClient
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

    assert isinstance(client, TrainerClient)
    pod = PodTemplatePatch(metadata={"labels": {TEAM_RESOURCES_LABEL: "true"}})
    node = ReplicatedJobPatch(name="node", template=JobTemplatePatch(spec=JobSpecPatch(template=pod)))
    bucket = RuntimePatch(
        training_runtime_spec=TrainingRuntimeSpecPatch(template=JobSetTemplatePatch(spec=JobSetSpecPatch(replicated_jobs=[node])))
    )
    return client.train(
        runtime=runtime,
        trainer=CustomTrainer(
            func=train_mnist_cnn, func_args={"epochs": 2, "model_repository": f"{MOUNT_PATH}/{MODELS_PREFIX}"}, num_nodes=1
        ),
        options=[bucket],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", nargs="?", choices=("train", "register", "deploy", "query"), help="on the cluster, from a notebook")
    parser.add_argument("--local", action="store_true", help="train, serve and query here, on CPU")
    parser.add_argument("--repository", help="--local: where to write the model repository (default: a temporary folder)")
    parser.add_argument("--port", type=int, default=8080, help="--local: the model server's port on 127.0.0.1")
    parser.add_argument("--runtime", default=DEFAULT_RUNTIME, help="train: torch-distributed or torch-distributed-<pool>")
    parser.add_argument("--gpus", type=int, default=0, help="deploy: GPUs per replica (queued in your team's quota)")
    parser.add_argument("--min-replicas", type=int, default=1, help="deploy: 0 lets it scale to zero when idle (off prod; docs/serving.md)")
    parser.add_argument("--version", default="v1", help="register: the version to record")
    parser.add_argument("--registered", metavar="VERSION", help="deploy: this registered version, by name (the Model Registry)")
    parser.add_argument("--url", help="query: the model's base URL (default: its Service, from inside the cluster)")
    parser.add_argument("--token", default=os.environ.get("SERVING_TOKEN"), help="query: a bearer token for the gateway")
    args = parser.parse_args()
    if args.local:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            run_local(args.repository or tmp, args.port)
        return
    if args.step is None:
        parser.error("name a step (train, register, deploy, query) or use --local")
    if args.step == "train":
        if not os.environ.get("TEAM_BUCKET_PATH"):
            parser.error("no team bucket is mounted here: run this in a notebook with the team-resources configuration")
        from kubeflow.trainer import TrainerClient

        client = TrainerClient()
        name = submit(client, args.runtime)
        print(f"TrainJob {name} created; waiting for it to finish")
        client.wait_for_job_status(name, timeout=3600)
        print(f"model in gs://{os.environ.get('TEAM_BUCKET')}/{MODELS_PREFIX}/{MODEL_NAME}")
    elif args.step == "register":
        from kubeflow.hub import ModelRegistryClient

        namespace = own_namespace()
        uri = f"gs://{os.environ.get('TEAM_BUCKET')}/{MODELS_PREFIX}"
        register(ModelRegistryClient(registry_url(namespace), port=REGISTRY_PORT, author=namespace), uri, args.version)
        print(f"registered {REGISTERED_MODEL} {args.version} ({uri}) in {namespace}'s registry")
    elif args.step == "deploy":
        from kserve import KServeClient

        namespace = team_namespace()
        client = KServeClient()
        storage_uri = registered_uri(args.registered) if args.registered else f"pvc://{MODEL_STORE_PVC}/{MODELS_PREFIX}"
        client.create(inference_service(namespace, storage_uri, args.gpus, args.min_replicas))
        client.wait_isvc_ready(MODEL_NAME, namespace=namespace, timeout_seconds=1800)
        print(f"InferenceService {MODEL_NAME} ready in {namespace}")
    else:
        url = args.url or f"http://{MODEL_NAME}-predictor.{team_namespace()}.svc.cluster.local"
        images, labels = sample_images()
        classes = query(url, images, args.token).argmax(axis=1)
        print(f"classes {classes.tolist()} for labels {labels.tolist()}")


if __name__ == "__main__":
    main()
