"""The data scientists' examples: importable without the optional frameworks, training
functions the SDK can ship (self-contained source), TrainJobs the SDK accepts on our
runtimes. Their pinned requirements and `--local` runs: tests/examples/ (`make examples`)."""

from __future__ import annotations

import importlib.util
import inspect
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from components.profiles.pod_default import BUCKET_MOUNT_PATH, POD_DEFAULT_LABEL
from facts import priorities
from facts.image_set import TORCH_CPU_INDEX
from facts.versions import NOTEBOOK_BASE_PYTHON, TORCH
from runtimes.args import training_runtimes_args
from runtimes.catalog import cluster_training_runtimes
from stackmodel.config import validate
from tests.conftest import base_gke
from tests.support import crds
from tests.support.sdk import fake_sdk
from tests.support.validation import validate as validate_object

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
OPTIONAL = ("mlx", "deepspeed", "ray", "transformers", "jax", "pyspark", "model_registry", "kserve")
NAMES = [
    "pytorch_ddp_mnist",
    "mlx_distributed",
    "deepspeed_t5",
    "ray_train_serve",
    "jax_distributed",
    "katib_mnist_search",
    "model_registry_mnist",
    "spark_mnist_stats",
    "kserve_mnist",
]
RUNTIMES = cluster_training_runtimes(training_runtimes_args(validate(base_gke(), "test")))  # base four + the l4 variants


def load(name: str) -> ModuleType:
    """Import examples/<name>.py as a module (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", NAMES)
def test_example_imports_without_the_optional_frameworks(name: str) -> None:
    before = set(sys.modules)
    module = load(name)
    assert module.__doc__ and "python examples/" in module.__doc__
    assert not [m for m in set(sys.modules) - before if m.split(".")[0] in OPTIONAL]


SHIPPED = [
    ("pytorch_ddp_mnist", "train_mnist_cnn"),
    ("mlx_distributed", "train_mlx_mlp"),
    ("deepspeed_t5", "finetune_t5"),
    ("jax_distributed", "train_jax_mlp"),
    ("spark_mnist_stats", "mnist_stats"),
]


@pytest.mark.parametrize(("module", "function"), SHIPPED)
def test_training_function_is_self_contained(module: str, function: str) -> None:
    # The SDK ships only the function's source (inspect.getsource) to the nodes: defined
    # alone, it must compile and reference no name of its module.
    source = textwrap.dedent(inspect.getsource(getattr(load(module), function)))
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<{function}>", "exec"), namespace)
    assert inspect.getclosurevars(namespace[function]).globals == {}


def submitted(submit: Callable[..., str], *args: Any) -> dict[str, Any]:
    with fake_sdk(RUNTIMES) as (client, created):
        submit(client, *args)
    (trainjob,) = created
    assert trainjob["kind"] == "TrainJob"
    assert "labels" not in trainjob["metadata"] or not trainjob["metadata"]["labels"]  # Kueue defaults the queue
    if crds.available():
        assert validate_object(trainjob) == []
    return trainjob


def test_pytorch_example_submits_three_nodes_on_torch_distributed() -> None:
    module = load("pytorch_ddp_mnist")
    spec = submitted(module.submit)["spec"]
    assert spec["runtimeRef"]["name"] == "torch-distributed"
    assert spec["trainer"]["numNodes"] == 3
    assert "def train_mnist_cnn(" in " ".join(spec["trainer"]["command"])


@pytest.mark.parametrize("priority", [c.name for c in priorities.CLASSES])
def test_a_priority_chosen_with_the_sdk_reaches_the_trainjob_as_kueues_label(priority: str) -> None:
    """`--priority` (the SDK's `options=[Labels(...)]`) labels the TrainJob itself, the object whose
    labels Kueue reads the class from (facts/priorities.py); without it the job names none and
    runs at its runtime's default."""
    module = load("pytorch_ddp_mnist")
    assert module.PRIORITY_LABEL == priorities.PRIORITY_LABEL
    with fake_sdk(RUNTIMES) as (client, created):
        module.submit(client, priority=priority)
    (trainjob,) = created
    assert trainjob["metadata"]["labels"] == {priorities.PRIORITY_LABEL: priority}
    if crds.available():
        assert validate_object(trainjob) == []


def test_serving_example_trains_on_one_node_and_writes_the_model_to_the_team_bucket() -> None:
    module = load("kserve_mnist")
    spec = submitted(module.submit)["spec"]
    assert spec["runtimeRef"]["name"] == "torch-distributed" and spec["trainer"]["numNodes"] == 1
    command = " ".join(spec["trainer"]["command"])
    assert "def train_mnist_cnn(" in command
    assert f"'model_repository': '{BUCKET_MOUNT_PATH}/models'" in command  # the bucket's mount, as the PodDefault has it
    (patch,) = spec["runtimePatches"]
    (job,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert job["name"] == "node" and job["template"]["spec"]["template"]["metadata"]["labels"] == {POD_DEFAULT_LABEL: "true"}
    assert module.MOUNT_PATH == BUCKET_MOUNT_PATH and module.TEAM_RESOURCES_LABEL == POD_DEFAULT_LABEL
    # It deploys from the team's model store, the claim the platform makes (components/serving.py).
    from components.profiles.serving import MODEL_STORE
    from components.serving import RUNTIMES_KEPT

    assert module.MODEL_STORE_PVC == MODEL_STORE and module.RUNTIME.removeprefix("kserve-") in RUNTIMES_KEPT
    # Its replicas follow the load the platform's signal for Triton reads, from the platform's Prometheus.
    from components.monitoring import PROMETHEUS_URL
    from components.serving_autoscaling import WAKE_THRESHOLD, serving_signal, wake_signal

    assert module.PROMETHEUS == PROMETHEUS_URL and module.load_query("nlp") == serving_signal("triton", "nlp", module.MODEL_NAME)
    # and a request through the team's router wakes it from zero, as the platform's wake signal says.
    assert module.wake_query("nlp") == wake_signal("nlp", module.MODEL_NAME) and module.WAKE_THRESHOLD == WAKE_THRESHOLD


def test_mlx_example_submits_on_mlx_distributed_through_mpirun() -> None:
    spec = submitted(load("mlx_distributed").submit)["spec"]
    assert spec["runtimeRef"]["name"] == "mlx-distributed"
    assert spec["trainer"]["command"][0] == "mpirun"


def test_deepspeed_example_takes_eight_gpus_and_mounts_the_team_bucket() -> None:
    module = load("deepspeed_t5")
    spec = submitted(module.submit)["spec"]
    assert spec["runtimeRef"]["name"] == "deepspeed-distributed-l4"
    assert spec["trainer"]["numNodes"] == 4  # g2-standard-24: 2 L4s per node
    (patch,) = spec["runtimePatches"]
    jobs = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert [j["name"] for j in jobs] == ["launcher", "node"]
    # The team's PodDefault (components/profiles/pod_default.py) mounts the bucket in every labelled pod.
    for job in jobs:
        assert job["template"]["spec"]["template"]["metadata"]["labels"] == {POD_DEFAULT_LABEL: "true"}
    assert module.MOUNT_PATH == BUCKET_MOUNT_PATH and module.TEAM_RESOURCES_LABEL == POD_DEFAULT_LABEL


def test_deepspeed_example_refuses_a_cpu_runtime() -> None:
    with pytest.raises(SystemExit, match="pick a GPU runtime"):
        submitted(load("deepspeed_t5").submit, "deepspeed-distributed")


def test_jax_example_submits_two_nodes_on_jax_distributed() -> None:
    spec = submitted(load("jax_distributed").submit)["spec"]
    assert spec["runtimeRef"]["name"] == "jax-distributed"
    assert spec["trainer"]["numNodes"] == 2
    assert "def train_jax_mlp(" in " ".join(spec["trainer"]["command"])


def test_ray_example_ships_the_clusters_torch_to_its_workers() -> None:
    module = load("ray_train_serve")
    assert f"torch=={TORCH.version}" == module.RUNTIME_TORCH
    assert module.runtime_env(gpu=True) == {"pip": {"packages": [module.RUNTIME_TORCH]}}
    assert module.runtime_env(gpu=False)["pip"]["pip_install_options"] == ["--extra-index-url", TORCH_CPU_INDEX]


def test_ray_example_runs_its_cluster_steps_as_ray_jobs_with_every_option_spelt_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """The job's driver runs on the cluster, where no PodDefault sets TEAM_BUCKET."""
    module = load("ray_train_serve")
    calls: list[tuple[str, list[str], dict[str, Any]]] = []

    def submit(address: str, step: list[str], env: dict[str, Any], python: str = "python") -> str:
        calls.append((address, step, env))
        return "noise\nCHECKPOINT gs://b/ray/regressor/checkpoint_1\n"

    monkeypatch.setattr(module, "submit", submit)
    monkeypatch.setenv("RAY_ADDRESS", "http://ray-head-svc.vision.svc.cluster.local:8265")
    monkeypatch.setenv("TEAM_BUCKET", "b")
    monkeypatch.setattr(sys, "argv", ["ray_train_serve.py", "--gpu", "train", "--workers", "2"])
    module.main()
    ((address, step, env),) = calls
    assert address == "http://ray-head-svc.vision.svc.cluster.local:8265"
    assert step == ["--gpu", "train", "--storage", "gs://b/ray", "--workers", "2", "--epochs", "10", "--steps", "50"]
    assert env == module.runtime_env(gpu=True)


def test_ray_example_refuses_a_ray_client_address(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    module = load("ray_train_serve")
    monkeypatch.setenv("RAY_ADDRESS", "ray://ray-head-svc.vision.svc.cluster.local:10001")
    monkeypatch.setattr(sys, "argv", ["ray_train_serve.py", "serve", "gs://b/ray/x"])
    with pytest.raises(SystemExit):
        module.main()
    assert "RAY_ADDRESS is not the cluster's Jobs API" in capsys.readouterr().err


def _constants(name: str) -> dict[str, Any]:
    """The module-level constants of an example, read without importing it (the Pipelines
    example imports kfp, which the unit suite's environment cannot hold: facts/versions.py KFP_SDK)."""
    import ast

    tree = ast.parse((EXAMPLES / f"{name}.py").read_text())
    return {
        node.targets[0].id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Constant)
    }


def test_the_pipeline_example_trains_on_a_platform_runtime_in_the_notebooks_python() -> None:
    constants = _constants("kfp_pipeline")
    assert constants["RUNTIME"] in {r["metadata"]["name"] for r in RUNTIMES}
    tag = constants["BASE_IMAGE"].split(":", 1)[1]
    assert tag.startswith(f"{NOTEBOOK_BASE_PYTHON}."), f"the steps run Python {tag}, the notebooks {NOTEBOOK_BASE_PYTHON}"


def test_the_search_is_a_katib_experiment_of_trainjob_trials_on_a_platform_runtime() -> None:
    """The Kubeflow SDK's OptimizerClient builds the Experiment: each trial a TrainJob on
    torch-distributed, its learning rate handed in through Katib's trial parameter (Katib v0.19.0
    substitutes `${trialParameters.lr}` in the trial spec), the metric the MNIST function prints."""
    module = load("katib_mnist_search")
    with fake_sdk(RUNTIMES, client="optimizer") as (client, created):
        module.search(client)
    (experiment,) = created
    assert (experiment["apiVersion"], experiment["kind"]) == ("kubeflow.org/v1beta1", "Experiment")
    spec = experiment["spec"]
    assert (spec["maxTrialCount"], spec["parallelTrialCount"]) == (module.NUM_TRIALS, module.PARALLEL_TRIALS)
    assert spec["objective"] == {"objectiveMetricName": "loss", "type": "minimize"}
    (parameter,) = spec["parameters"]
    assert parameter["name"] == "lr" and parameter["feasibleSpace"]["min"] == str(module.LR_MIN)
    template = spec["trialTemplate"]
    assert template["primaryContainerName"] == "node"  # the runtimes' trainer container (runtimes/catalog.py NODE)
    trial = template["trialSpec"]
    assert (trial["apiVersion"], trial["kind"]) == ("trainer.kubeflow.org/v1alpha1", "TrainJob")
    assert trial["spec"]["runtimeRef"]["name"] == "torch-distributed"
    command = " ".join(trial["spec"]["trainer"]["command"])
    assert "def train_mnist_cnn(" in command and "'lr': '${trialParameters.lr}'" in command
    assert "labels" not in trial.get("metadata", {})  # Kueue gives the trial its namespace's default queue


def test_the_registry_example_registers_the_weights_it_saved_under_their_uri(monkeypatch: pytest.MonkeyPatch) -> None:
    from unittest.mock import Mock

    from kubeflow.hub import ModelRegistryClient

    module = load("model_registry_mnist")
    client = Mock(spec=ModelRegistryClient)
    module.register(client, "gs://acme-vision/models/mnist-cnn/v1/model.pt", "v1", 0.25)
    ((name, uri), kwargs) = client.register_model.call_args
    assert (name, uri) == ("mnist-cnn", "gs://acme-vision/models/mnist-cnn/v1/model.pt")
    assert kwargs["version"] == "v1" and kwargs["model_format_name"] == "pytorch" and kwargs["metadata"] == {"loss": 0.25}
    assert module.registry_url("vision") == "http://model-registry-service.vision.svc.cluster.local"
    monkeypatch.setenv("TEAM_BUCKET", "acme-vision")
    monkeypatch.setenv("TEAM_BUCKET_PATH", BUCKET_MOUNT_PATH)
    assert module.uri_prefix(None) == "gs://acme-vision/models"
    assert module.local_path("gs://acme-vision/models/mnist-cnn/v1/model.pt") == f"{BUCKET_MOUNT_PATH}/models/mnist-cnn/v1/model.pt"


def test_the_registry_example_wants_a_store_a_model_server_can_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEAM_BUCKET", raising=False)
    with pytest.raises(SystemExit, match="pass --uri-prefix"):
        load("model_registry_mnist").uri_prefix(None)


def test_the_serving_example_registers_its_repository_and_deploys_it_by_its_registry_name() -> None:
    """`register` records the Triton repository `train` wrote; `deploy --registered` names it as the
    Hub's storage initializer (the platform's ClusterStorageContainer, components/serving_registry.py) reads it."""
    from unittest.mock import Mock

    from kubeflow.hub import ModelRegistryClient

    from components.serving_registry import REGISTRY_PREFIX

    module = load("kserve_mnist")
    client = Mock(spec=ModelRegistryClient)
    module.register(client, "gs://acme-vision/models", "v2")
    ((name, uri), kwargs) = client.register_model.call_args
    assert (name, uri, kwargs["version"], kwargs["model_format_name"]) == ("mnist-cnn-triton", "gs://acme-vision/models", "v2", "pytorch")
    storage_uri = module.registered_uri("v2")
    assert storage_uri == "model-registry://mnist-cnn-triton/v2" and storage_uri.startswith(REGISTRY_PREFIX)
