"""The ClusterTrainingRuntimes: names, GPU-pool variants, the upstream wiring Trainer and
the SDK rely on, schema validity, lossless round-trips through the Trainer API models,
the SDK's own parsing, and the component under Pulumi's mocks."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from kubeflow_trainer_api import models

from facts.versions import (
    DEEPSPEED_RUNTIME_IMAGE,
    JAX_RUNTIME_IMAGE,
    MLX_RUNTIME_IMAGE,
    PINS,
    TORCH_RUNTIME_IMAGE,
    image,
)
from runtimes import catalog
from runtimes.args import training_runtimes_args
from runtimes.catalog import base_runtimes, cluster_training_runtimes, runtime_name
from runtimes.component import TrainingRuntimes
from stackmodel.config import validate
from stackmodel.schema import GpuPool
from stackmodel.stack import PlatformConfig
from tests.conftest import base_gke, base_kind, with_changes
from tests.support import crds
from tests.support.sdk import fake_sdk
from tests.support.validation import validate as validate_object
from tooling.plan import evaluate

CTR_TYPE = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"
BASE_NAMES = ["torch-distributed", "deepspeed-distributed", "mlx-distributed", "jax-distributed"]


def two_pools() -> PlatformConfig:
    """The base GKE stack plus a spot 8-GPU H100 pool after its 2-GPU L4 pool."""
    h100 = {
        "name": "h100",
        "accelerator": "nvidia-h100-80gb",
        "machineType": "a3-highgpu-8g",
        "max": 1,
        "provisioning": "spot",
    }
    raw = with_changes(
        base_gke(),
        {
            "mlplatform:cluster.gpuPools": base_gke()["mlplatform:cluster"]["gpuPools"] + [h100],
            "mlplatform:cluster.autoprovisioning.limits.nvidia-h100-80gb": 24,  # 1 node x 8 GPUs x 3 zones
            # with 3 a3-highgpu-8g (208 vCPUs, 1872 GiB each) the pools take 840 vCPUs and 6480 GiB
            "mlplatform:cluster.autoprovisioning.limits.cpu": 1024,
            "mlplatform:cluster.autoprovisioning.limits.memory": 8192,
        },
    )
    return validate(raw, "test")


def pod_specs(manifest: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for job in manifest["spec"]["template"]["spec"]["replicatedJobs"]:
        yield job["name"], job["template"]["spec"]["template"]


ALL = cluster_training_runtimes(training_runtimes_args(two_pools()))
BY_NAME = {m["metadata"]["name"]: m for m in ALL}


# --- names and variants ---------------------------------------------------------------


def test_base_runtimes_are_the_four_upstream_ones_with_the_sdk_framework_label() -> None:
    runtimes = base_runtimes()
    assert [r["metadata"]["name"] for r in runtimes] == BASE_NAMES
    assert [r["metadata"]["labels"][catalog.FRAMEWORK_LABEL] for r in runtimes] == ["torch", "deepspeed", "mlx", "jax"]
    assert {(r["apiVersion"], r["kind"]) for r in runtimes} == {("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime")}


def test_kind_stack_gets_only_the_base_runtimes() -> None:
    assert cluster_training_runtimes(training_runtimes_args(validate(base_kind(), "test"))) == base_runtimes()


def test_each_gpu_pool_gets_one_variant_of_each_runtime_in_pool_order() -> None:
    assert list(BY_NAME) == BASE_NAMES + [f"{n}-l4" for n in BASE_NAMES] + [f"{n}-h100" for n in BASE_NAMES]
    assert BY_NAME["torch-distributed-l4"]["metadata"]["labels"] == {
        catalog.FRAMEWORK_LABEL: "torch",
        "mlplatform.dev/gpu-pool": "l4",
    }


def test_same_config_gives_the_same_runtimes() -> None:
    assert cluster_training_runtimes(training_runtimes_args(two_pools())) == ALL


def test_longest_pool_name_fits_the_63_character_limit() -> None:
    longest = max(catalog.RUNTIMES, key=lambda s: len(s.name))
    pool = GpuPool.model_construct(name="p" * 40, accelerator="nvidia-l4", machine_type="g2-standard-4", max=1)  # the schema's longest pool name
    assert len(runtime_name(longest, pool)) <= 63


def test_a_name_over_63_characters_is_an_error_naming_the_pool() -> None:
    pool = GpuPool.model_construct(name="p" * 42, accelerator="nvidia-l4", machine_type="g2-standard-4", max=1)
    with pytest.raises(ValueError, match=r"more than 63; shorten GPU pool name 'p{42}'"):
        runtime_name(catalog.RUNTIMES[1], pool)


# The upstream runtimes, as github.com/kubeflow/trainer v2.3.0 (658725bd) ships them in
# charts/kubeflow-trainer/files/runtimes/<name>.yaml (images resolved with the chart's
# default values; the same in manifests/base/runtimes/ with the runtimes overlay), less the
# chart's labels and plus our one change, the Istio opt-out on every pod template.
UPSTREAM_TORCH = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
  labels: {trainer.kubeflow.org/framework: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
            spec:
              template:
                metadata:
                  labels: {sidecar.istio.io/inject: "false"}
                spec:
                  containers:
                    - {name: node, image: "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"}
"""
UPSTREAM_JAX = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: jax-distributed
  labels: {trainer.kubeflow.org/framework: jax}
spec:
  mlPolicy: {numNodes: 1, jax: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
            spec:
              template:
                metadata:
                  labels: {sidecar.istio.io/inject: "false"}
                spec:
                  containers:
                    - {name: node, image: "nvcr.io/nvidia/jax:25.10-py3"}
"""
# deepspeed-distributed.yaml and mlx-distributed.yaml differ only in name, label and image.
UPSTREAM_MPI = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: {framework}-distributed
  labels: {{trainer.kubeflow.org/framework: {framework}}}
spec:
  mlPolicy:
    numNodes: 1
    mpi: {{numProcPerNode: 1, mpiImplementation: OpenMPI, sshAuthMountPath: /home/mpiuser/.ssh, runLauncherAsNode: true}}
  template:
    spec:
      network: {{publishNotReadyAddresses: true}}
      successPolicy: {{operator: All, targetReplicatedJobs: [launcher]}}
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                metadata:
                  labels: {{sidecar.istio.io/inject: "false"}}
                spec:
                  securityContext: {{fsGroup: 1000}}
                  containers:
                    - name: node
                      image: {image}
                      securityContext: {{runAsUser: 1000}}
                      command: [/usr/sbin/sshd]
                      args: [-De, -f, /home/mpiuser/.sshd_config]
                      readinessProbe:
                        tcpSocket: {{port: 2222}}
                        initialDelaySeconds: 5
        - name: launcher
          dependsOn:
            - {{name: node, status: Ready}}
          template:
            metadata:
              labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                metadata:
                  labels: {{sidecar.istio.io/inject: "false"}}
                spec:
                  securityContext: {{fsGroup: 1000}}
                  containers:
                    - name: node
                      image: {image}
                      securityContext: {{runAsUser: 1000}}
"""
UPSTREAM_DEEPSPEED = UPSTREAM_MPI.format(framework="deepspeed", image="ghcr.io/kubeflow/trainer/deepspeed-runtime:v2.3.0")
UPSTREAM_MLX = UPSTREAM_MPI.format(framework="mlx", image="ghcr.io/kubeflow/trainer/mlx-runtime:v2.3.0")


PREEMPTION_SAFE: dict[str, Any] = {
    "priorityClassName": "batch",
    "terminationGracePeriodSeconds": 120,
    "label": ("team-checkpoints", "true"),
    "env": {"name": "TRAINJOB_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['jobset.sigs.k8s.io/jobset-name']"}}},
}
"""What every runtime's pods get beside upstream's (facts/priorities.py, facts/checkpoints.py)."""


def without_preemption_safety(manifest: dict[str, Any]) -> dict[str, Any]:
    """The runtime with PREEMPTION_SAFE taken out of every pod template (asserting each is there)."""
    stripped = json.loads(json.dumps(manifest))
    for _, template in pod_specs(stripped):
        spec, labels = template["spec"], template["metadata"]["labels"]
        assert spec.pop("priorityClassName") == PREEMPTION_SAFE["priorityClassName"]
        assert spec.pop("terminationGracePeriodSeconds") == PREEMPTION_SAFE["terminationGracePeriodSeconds"]
        key, value = PREEMPTION_SAFE["label"]
        assert labels.pop(key) == value
        for container in spec["containers"]:
            assert container.pop("env")[0] == PREEMPTION_SAFE["env"]  # first, so CHECKPOINT_DIR may name it
    return stripped


@pytest.mark.parametrize(
    "expected", [UPSTREAM_TORCH, UPSTREAM_DEEPSPEED, UPSTREAM_MLX, UPSTREAM_JAX], ids=lambda y: yaml.safe_load(y)["metadata"]["name"]
)
def test_base_runtime_is_the_upstream_v2_3_0_one_plus_the_istio_opt_out_and_preemption_safety(expected: str) -> None:
    manifest = yaml.safe_load(expected)
    assert without_preemption_safety(BY_NAME[manifest["metadata"]["name"]]) == manifest


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_every_runtimes_pods_run_at_batch_priority_with_time_and_a_place_to_checkpoint(name: str) -> None:
    without_preemption_safety(BY_NAME[name])  # asserts them on every pod template and container


def test_the_runtimes_priority_class_never_preempts_and_is_no_cluster_default() -> None:
    assert catalog.runtime_priority_class() == {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "batch"},
        "value": 100,
        "preemptionPolicy": "Never",
        "globalDefault": False,
        "description": catalog.RUNTIME_PRIORITY_CLASS.description,
    }


def test_torch_runtimes_run_the_pytorch_image_of_trainer_v2_3_0() -> None:
    # files/runtimes/torch-distributed.yaml at v2.3.0 (kubeflow/trainer#3780 moved it off 2.10.0-cuda12.8).
    for name in ["torch-distributed", "torch-distributed-l4", "torch-distributed-h100"]:
        (container,) = dict(pod_specs(BY_NAME[name]))["node"]["spec"]["containers"]
        assert container["image"] == "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime", name


# --- placement --------------------------------------------------------------------------


# GKE's taint on GPU nodes, as a toleration (cloud.google.com/kubernetes-engine/docs/how-to/gpus).
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("pool_name", "selector", "gpus"),
    [
        # g2-standard-24 carries 2 L4s (cloud.google.com/compute/docs/gpus, G2 machine types).
        ("l4", {"cloud.google.com/gke-accelerator": "nvidia-l4", "mlplatform.dev/gpu-pool": "l4"}, "2"),
        # a3-highgpu-8g carries 8 H100 80GB; the pool is Spot, so GKE's Spot label selects it too.
        (
            "h100",
            {
                "cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
                "mlplatform.dev/gpu-pool": "h100",
                "cloud.google.com/gke-spot": "true",
            },
            "8",
        ),
    ],
)
def test_gpu_variants_land_on_their_pool_with_all_its_gpus(pool_name: str, selector: dict[str, str], gpus: str) -> None:
    for base in BASE_NAMES:
        for job, template in pod_specs(BY_NAME[f"{base}-{pool_name}"]):
            spec = template["spec"]
            assert spec["nodeSelector"] == selector, (base, job)
            assert GPU_TOLERATION in spec["tolerations"], (base, job)
            (container,) = spec["containers"]
            assert container["resources"] == {"requests": {"nvidia.com/gpu": gpus}, "limits": {"nvidia.com/gpu": gpus}}


def test_spot_pool_variants_select_spot_nodes() -> None:
    spec = dict(pod_specs(BY_NAME["torch-distributed-h100"]))["node"]["spec"]
    assert spec["nodeSelector"]["cloud.google.com/gke-spot"] == "true"
    assert spec["nodeSelector"]["cloud.google.com/gke-accelerator"] == "nvidia-h100-80gb"


def test_mpi_gpu_variants_run_one_process_per_gpu() -> None:
    assert BY_NAME["deepspeed-distributed-l4"]["spec"]["mlPolicy"]["mpi"]["numProcPerNode"] == 2
    assert BY_NAME["mlx-distributed-h100"]["spec"]["mlPolicy"]["mpi"]["numProcPerNode"] == 8
    assert BY_NAME["deepspeed-distributed"]["spec"]["mlPolicy"]["mpi"]["numProcPerNode"] == 1


def test_base_runtimes_ask_for_no_gpus_and_no_nodes() -> None:
    for manifest in base_runtimes():
        for _, template in pod_specs(manifest):
            assert "nodeSelector" not in template["spec"] and "tolerations" not in template["spec"]
            assert "resources" not in template["spec"]["containers"][0]


# --- upstream wiring ----------------------------------------------------------------------


def test_every_pod_template_opts_out_of_istio_injection() -> None:
    for manifest in ALL:
        for job, template in pod_specs(manifest):
            assert template["metadata"]["labels"]["sidecar.istio.io/inject"] == "false", (manifest["metadata"]["name"], job)


@pytest.mark.parametrize("name", ["torch-distributed", "jax-distributed-l4"])
def test_torch_and_jax_have_one_node_job_marked_as_the_trainer(name: str) -> None:
    manifest = BY_NAME[name]
    (job,) = manifest["spec"]["template"]["spec"]["replicatedJobs"]
    assert job["name"] == "node"
    assert job["template"]["metadata"]["labels"] == {catalog.ANCESTOR_LABEL: "trainer"}
    assert job["template"]["spec"]["template"]["spec"]["containers"][0]["name"] == "node"


MPI_NAMES = [n for n in BY_NAME if n.startswith(("deepspeed-distributed", "mlx-distributed"))]


@pytest.mark.parametrize("name", ["deepspeed-distributed", "mlx-distributed", "deepspeed-distributed-h100"])
def test_mpi_runtimes_keep_the_launcher_and_ssh_wiring(name: str) -> None:
    manifest = BY_NAME[name]
    mpi = manifest["spec"]["mlPolicy"]["mpi"]
    assert (mpi["mpiImplementation"], mpi["sshAuthMountPath"], mpi["runLauncherAsNode"]) == (
        "OpenMPI",
        "/home/mpiuser/.ssh",
        True,
    )
    jobset = manifest["spec"]["template"]["spec"]
    assert jobset["network"] == {"publishNotReadyAddresses": True}
    assert jobset["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["launcher"]}
    node, launcher = jobset["replicatedJobs"]
    assert (node["name"], launcher["name"]) == ("node", "launcher")
    assert launcher["template"]["metadata"]["labels"] == {catalog.ANCESTOR_LABEL: "trainer"}
    assert "metadata" not in node["template"]
    sshd = node["template"]["spec"]["template"]["spec"]["containers"][0]
    assert sshd["command"] == ["/usr/sbin/sshd"] and sshd["args"] == ["-De", "-f", "/home/mpiuser/.sshd_config"]
    assert sshd["readinessProbe"]["tcpSocket"] == {"port": 2222}
    for _, template in pod_specs(manifest):
        assert template["spec"]["containers"][0]["securityContext"] == {"runAsUser": 1000}


@pytest.mark.parametrize("name", MPI_NAMES)
def test_mpi_pods_set_fs_group_1000_so_mpiuser_can_read_the_0640_root_owned_ssh_key(name: str) -> None:
    # Trainer v2.3.0 mounts the private key 0640 root:root (pkg/constants/constants.go
    # MPISSHPrivateKeyFileMode); files/runtimes/{deepspeed,mlx}-distributed.yaml set fsGroup 1000
    # on both pod templates so that uid 1000 reads it through the group.
    for job, template in pod_specs(BY_NAME[name]):
        assert template["spec"]["securityContext"] == {"fsGroup": 1000}, job


@pytest.mark.parametrize("name", MPI_NAMES)
def test_mpi_launcher_starts_only_once_the_node_job_is_ready(name: str) -> None:
    # files/runtimes/{deepspeed,mlx}-distributed.yaml at v2.3.0 (kubeflow/trainer#3748): JobSet
    # creates the launcher after every sshd node pod is Ready, so mpirun's first ssh succeeds.
    node, launcher = BY_NAME[name]["spec"]["template"]["spec"]["replicatedJobs"]
    assert (node["name"], launcher["name"]) == ("node", "launcher")
    assert launcher["dependsOn"] == [{"name": "node", "status": "Ready"}]
    assert "dependsOn" not in node


@pytest.mark.parametrize("name", list(BY_NAME))
def test_depends_on_passes_the_jobset_webhook_rules(name: str) -> None:
    # JobSet v0.12.0 pkg/webhooks/jobset_webhook.go rejects dependsOn on the first replicated
    # job and one naming a job not listed before it (neither is in the CRD schema); the API
    # docs say "only a single item is supported" although the schema allows 5.
    jobs = BY_NAME[name]["spec"]["template"]["spec"]["replicatedJobs"]
    assert "dependsOn" not in jobs[0]
    for index, job in enumerate(jobs):
        earlier = {j["name"] for j in jobs[:index]}
        assert len(job.get("dependsOn", [])) <= 1
        assert {d["name"] for d in job.get("dependsOn", [])} <= earlier, job["name"]


@pytest.mark.parametrize("name", [n for n in BY_NAME if n not in MPI_NAMES])
def test_torch_and_jax_pods_set_no_pod_security_context_as_upstream(name: str) -> None:
    # files/runtimes/torch-distributed.yaml, jax-distributed.yaml: one job, no pod securityContext.
    for job, template in pod_specs(BY_NAME[name]):
        assert "securityContext" not in template["spec"], job


def test_each_runtime_has_exactly_one_ml_policy() -> None:
    # CEL on the CRD: "Only one of the policy can be configured" (not checked by JSON schema).
    for manifest in ALL:
        policies = set(manifest["spec"]["mlPolicy"]) - {"numNodes"}
        assert len(policies) == 1, manifest["metadata"]["name"]


def test_runtimes_leave_gang_scheduling_and_queueing_to_kueue() -> None:
    for manifest in ALL:
        assert "podGroupPolicy" not in manifest["spec"]
        assert "kueue.x-k8s.io" not in json.dumps(manifest)  # no queue label: the namespace default
        assert "trainer.kubeflow.org/webhook-validation" not in manifest["metadata"]["labels"]


def test_images_come_from_the_pin_table() -> None:
    expected = {
        "torch-distributed": TORCH_RUNTIME_IMAGE,
        "deepspeed-distributed": DEEPSPEED_RUNTIME_IMAGE,
        "mlx-distributed": MLX_RUNTIME_IMAGE,
        "jax-distributed": JAX_RUNTIME_IMAGE,
    }
    for manifest in ALL:
        base = next(b for b in expected if manifest["metadata"]["name"].startswith(b))
        for _, template in pod_specs(manifest):
            assert template["spec"]["containers"][0]["image"] == image(expected[base])
    assert set(expected.values()) <= set(PINS)


# --- schemas, models and the SDK ----------------------------------------------------------


@pytest.mark.parametrize("name", list(BY_NAME))
def test_runtime_validates_against_the_trainer_crd(name: str) -> None:
    if not crds.available():
        pytest.skip(crds.MISSING)
    assert validate_object(BY_NAME[name]) == []


@pytest.mark.parametrize("name", list(BY_NAME))
def test_runtime_round_trips_through_the_trainer_api_models_without_losing_a_field(name: str) -> None:
    manifest = BY_NAME[name]
    back = models.TrainerV1alpha1ClusterTrainingRuntime.from_dict(manifest).to_dict()
    # Compare as JSON so that types count too (a quantity must stay the string "2").
    assert json.dumps(back, sort_keys=True) == json.dumps(manifest, sort_keys=True)


@pytest.fixture
def sdk() -> Iterator[Any]:
    with fake_sdk(ALL) as (client, _):
        yield client


def test_sdk_lists_every_runtime_as_a_custom_trainer_with_its_framework(sdk: Any) -> None:
    from kubeflow.trainer.types.types import TrainerType

    listed = {r.name: r.trainer for r in sdk.list_runtimes()}
    assert list(listed) == list(BY_NAME)
    for name, trainer in listed.items():
        assert trainer.trainer_type is TrainerType.CUSTOM_TRAINER
        assert trainer.framework == BY_NAME[name]["metadata"]["labels"][catalog.FRAMEWORK_LABEL]
        assert trainer.image == BY_NAME[name]["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["image"]
        assert trainer.num_nodes == 1


@pytest.mark.parametrize(
    ("name", "device", "count", "entrypoint"),
    [
        ("torch-distributed", "Unknown", "Unknown", "torchrun"),
        ("torch-distributed-l4", "gpu", "2", "torchrun"),
        ("deepspeed-distributed", "Unknown", "1", "mpirun"),
        ("deepspeed-distributed-h100", "gpu", "8", "mpirun"),
        ("mlx-distributed-l4", "gpu", "2", "mpirun"),
        ("jax-distributed-h100", "gpu", "8", "python"),
    ],
)
def test_sdk_reads_devices_and_entrypoint(sdk: Any, name: str, device: str, count: str, entrypoint: str) -> None:
    trainer = sdk.get_runtime(name).trainer
    assert (trainer.device, trainer.device_count) == (device, count)
    command = " ".join(trainer.command)
    assert command.startswith("mpirun") if entrypoint == "mpirun" else entrypoint in command


# --- the component under mocks ----------------------------------------------------------


def test_component_creates_one_custom_resource_per_runtime() -> None:
    config = two_pools()
    built: list[TrainingRuntimes] = []

    def build(c: PlatformConfig) -> None:
        built.append(TrainingRuntimes("runtimes", training_runtimes_args(c), []))

    plan = evaluate(config, "test", build=build)
    component = plan.one("mlplatform:runtimes:TrainingRuntimes", "runtimes")
    recorded = plan.of_type(CTR_TYPE)
    assert sorted(r.name for r in recorded) == sorted(BY_NAME)
    assert built[0].names == list(BY_NAME)
    for resource in recorded:
        manifest = BY_NAME[resource.name]
        assert resource.parent == component.urn
        assert resource.inputs["apiVersion"] == manifest["apiVersion"] and resource.inputs["kind"] == manifest["kind"]
        assert resource.inputs["metadata"] == manifest["metadata"]
        assert resource.inputs["spec"] == manifest["spec"]  # numbers come back as floats; equal


def test_component_children_use_the_provider_given_to_the_component() -> None:
    import pulumi
    import pulumi_kubernetes as k8s

    def build(c: PlatformConfig) -> None:
        provider = k8s.Provider("k8s", kubeconfig="apiVersion: v1")
        TrainingRuntimes("runtimes", training_runtimes_args(c), [], opts=pulumi.ResourceOptions(providers=[provider]))

    plan = evaluate(validate(base_kind(), "test"), "test", build=build)
    provider_urn = plan.one("pulumi:providers:kubernetes", "k8s").urn
    assert {r.provider_urn for r in plan.of_type(CTR_TYPE)} == {provider_urn}


def test_component_on_kind_creates_the_base_runtimes_only() -> None:
    def build(c: PlatformConfig) -> None:
        TrainingRuntimes("runtimes", training_runtimes_args(c), [])

    plan = evaluate(validate(base_kind(), "test"), "test", build=build)
    assert sorted(r.name for r in plan.of_type(CTR_TYPE)) == sorted(BASE_NAMES)


VAP_TYPE = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"


def test_component_with_kueue_and_gpu_pools_installs_the_kueue_guard_policy() -> None:
    from runtimes import kueue_guard

    config = two_pools()
    args = training_runtimes_args(config)
    assert args.kueue

    def build(c: PlatformConfig) -> None:
        TrainingRuntimes("runtimes", training_runtimes_args(c), [])

    plan = evaluate(config, "test", build=build)
    (policy,) = plan.of_type(VAP_TYPE)
    expected = kueue_guard.policy(args.gpu_pools)
    assert expected is not None and policy.inputs["metadata"] == expected["metadata"]
    assert policy.inputs["spec"]["validations"][0]["expression"] == "!variables.namesResources || variables.namesGpus"
    assert policy.parent == plan.one("mlplatform:runtimes:TrainingRuntimes", "runtimes").urn

    def build_without_kueue(c: PlatformConfig) -> None:
        TrainingRuntimes("runtimes", dataclasses.replace(args, kueue=False), [])

    assert evaluate(config, "test", build=build_without_kueue).of_type(VAP_TYPE) == []
