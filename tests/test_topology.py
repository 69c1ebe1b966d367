"""Topology Aware Scheduling through Kueue (facts/topology.py, components/kueue.py,
runtimes/topology.py): which pools are placed by GKE's topology, the Topology and flavors the
fixtures render, the runtime variants' requests, and a TrainJob the Kubeflow SDK builds on one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from runtimes.args import training_runtimes_args
from runtimes.catalog import cluster_training_runtimes
from stackmodel.config import load, validate
from stackmodel.rules import WARNINGS
from stackmodel.schema import GpuPool
from tests.conftest import base_gke, with_changes
from tests.support import crds
from tests.support.sdk import fake_sdk
from tests.support.validation import validate as validate_object
from tooling.plan import Plan
from tooling.render import authored_objects

# GKE's guide, docs.cloud.google.com/ai-hypercomputer/docs/workloads/schedule-gke-workloads-tas
# (read Dec 2026): the Topology it gives, word for word.
GKE_LEVELS = [
    "cloud.google.com/gce-topology-block",
    "cloud.google.com/gce-topology-subblock",
    "cloud.google.com/gce-topology-host",
    "kubernetes.io/hostname",
]
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
GROUP = "kueue.x-k8s.io/podset-group-name"
SUBBLOCK = "cloud.google.com/gce-topology-subblock"


def pool(**fields: Any) -> GpuPool:
    base = {"name": "mega", "accelerator": "nvidia-h100-mega-80gb", "machineType": "a3-megagpu-8g", "min": 2, "max": 2}
    return GpuPool.model_validate({**base, **fields})


@pytest.mark.parametrize(
    ("fields", "aware"),
    [
        ({}, True),  # a fixed-size A3 Mega pool: nodes there, labelled
        ({"min": 0, "max": 2, "provisioning": "queued"}, True),  # Kueue's ProvisioningRequest brings them up first
        ({"min": 0, "max": 2, "provisioning": "reservation", "reservation": "r1"}, False),  # grows only for admitted pods
        ({"min": 1, "max": 2}, False),
        ({"provisioning": "spot"}, False),  # Spot: labelled only with compact placement
        ({"provisioning": "spot", "compactPlacement": True, "zones": ["us-central1-a"]}, True),
        ({"accelerator": "nvidia-h100-80gb", "machineType": "a3-highgpu-4g"}, False),  # A3 High: the 8-GPU shape only
        ({"accelerator": "nvidia-h100-80gb", "machineType": "a3-highgpu-8g"}, True),
        ({"accelerator": "nvidia-b200", "machineType": "a4-highgpu-8g"}, True),
        ({"accelerator": "nvidia-h200-141gb", "machineType": "a3-ultragpu-8g"}, True),
        ({"accelerator": "nvidia-l4", "machineType": "g2-standard-24"}, False),
        ({"accelerator": "nvidia-tesla-a100", "machineType": "a2-highgpu-8g"}, False),
    ],
)
def test_a_pool_is_topology_aware_when_its_nodes_carry_the_labels_and_exist_before_admission(fields: dict[str, Any], aware: bool) -> None:
    assert pool(**fields).topology_aware is aware


def _kinds(plan: Plan, kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in authored_objects(plan) if o["kind"] == kind}


def test_prod_gets_gkes_topology_and_its_queued_h100_flavor_names_it(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("prod")  # l4 on-demand g2 (no topology labels), h100 queued a3-highgpu-8g
    (topology,) = _kinds(plan, "Topology").values()
    assert topology == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Topology",
        "metadata": {"name": "gke-default"},
        "spec": {"levels": [{"nodeLabel": label} for label in GKE_LEVELS]},
    }
    flavors = _kinds(plan, "ResourceFlavor")
    assert flavors["h100"]["spec"]["topologyName"] == "gke-default"
    assert "topologyName" not in flavors["l4"]["spec"]
    assert "topologyName" not in flavors["default"]["spec"]
    # The flavor is applied after the Topology it names.
    flavor = plan.one("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor", "flavor-h100")
    assert plan.one("kubernetes:kueue.x-k8s.io/v1beta2:Topology", "topology-gke-default").urn in flavor.dependencies
    if crds.available():
        assert validate_object(topology) == []
        assert validate_object(flavors["h100"]) == []


@pytest.mark.parametrize("stack", ["dev", "kind"])
def test_stacks_without_a_topology_aware_pool_get_no_topology(shipped_plan: Callable[[str], Plan], stack: str) -> None:
    plan = shipped_plan(stack)  # dev: a spot L4 pool; kind: no GPU pools, none of GKE's labels
    assert _kinds(plan, "Topology") == {}
    assert all("topologyName" not in f["spec"] for f in _kinds(plan, "ResourceFlavor").values())


PROD_RUNTIMES = {r["metadata"]["name"]: r for r in cluster_training_runtimes(training_runtimes_args(load("prod")))}


def _templates(runtime: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {j["name"]: j["template"]["spec"]["template"] for j in runtime["spec"]["template"]["spec"]["replicatedJobs"]}


@pytest.mark.parametrize("name", ["torch-distributed-h100", "jax-distributed-h100"])
def test_single_job_runtimes_of_a_topology_aware_pool_prefer_one_sub_block(name: str) -> None:
    (template,) = _templates(PROD_RUNTIMES[name]).values()
    assert template["metadata"]["annotations"] == {PREFERRED: SUBBLOCK}


@pytest.mark.parametrize("name", ["deepspeed-distributed-h100", "mlx-distributed-h100"])
def test_mpi_runtimes_group_launcher_and_nodes_in_one_sub_block(name: str) -> None:
    templates = _templates(PROD_RUNTIMES[name])
    assert set(templates) == {"node", "launcher"}
    for template in templates.values():
        assert template["metadata"]["annotations"] == {PREFERRED: SUBBLOCK, GROUP: "launcher-and-nodes"}


@pytest.mark.parametrize("name", [n for n in PROD_RUNTIMES if not n.endswith("-h100")])
def test_runtimes_off_topology_aware_pools_ask_for_no_topology(name: str) -> None:
    # A topology request on a flavor without a Topology is never admitted (kueue@v0.19.2
    # pkg/scheduler/flavorassigner/tas_flavorassigner.go:182).
    for template in _templates(PROD_RUNTIMES[name]).values():
        assert "annotations" not in template["metadata"]


def test_a_trainjob_the_sdk_builds_on_such_a_runtime_keeps_the_runtimes_request() -> None:
    """Kueue reads the request from the runtime's pod templates after Trainer's merge with the
    TrainJob (runtimes/topology.py): the SDK's TrainJob names the runtime and writes no
    pod-template metadata of its own that could override or drop it."""
    from kubeflow.trainer import CustomTrainer

    def train() -> None:
        print("training")

    with fake_sdk(list(PROD_RUNTIMES.values())) as (client, created):
        client.train(runtime=client.get_runtime("torch-distributed-h100"), trainer=CustomTrainer(func=train, num_nodes=4))
    (job,) = created
    assert job["spec"]["runtimeRef"]["name"] == "torch-distributed-h100"
    assert job["spec"]["trainer"]["numNodes"] == 4
    assert "runtimePatches" not in job["spec"] and "podTemplateOverrides" not in job["spec"]
    assert not (job["metadata"].get("annotations") or {})
    if crds.available():
        assert validate_object(job) == []



def test_the_same_pool_queued_is_placed_by_topology_and_not_warned_about() -> None:
    # The warning's own case is in tests/test_stack_rules.py (WARNING_CASES).
    mega = {"name": "mega", "accelerator": "nvidia-h100-mega-80gb", "machineType": "a3-megagpu-8g", "max": 2, "provisioning": "queued"}
    raw = with_changes(base_gke(), {"mlplatform:cluster.gpuPools": [mega], "mlplatform:cluster.autoprovisioning": {"enabled": False}})
    (rule,) = [r for r in WARNINGS if r.name == "topology-labels-unused"]
    config = validate(raw, "test")
    assert rule.problems(config) == []
    assert config.cluster.gpu_pools[0].topology_aware  # type: ignore[union-attr]


def test_the_fabric_fixture_places_both_fabric_pools_by_topology(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("dev-fabric")  # an A3 Mega (tcpxo) and an A4 (rdma) pool, both queued
    assert [t["spec"]["levels"] for t in _kinds(plan, "Topology").values()] == [[{"nodeLabel": label} for label in GKE_LEVELS]]
    flavors = _kinds(plan, "ResourceFlavor")
    assert {name: f["spec"].get("topologyName") for name, f in flavors.items()} == {"default": None, "h100": "gke-default", "b200": "gke-default"}
    runtimes = {r["metadata"]["name"]: r for r in authored_objects(plan) if r["kind"] == "ClusterTrainingRuntime"}
    for pool in ("h100", "b200"):
        (node,) = _templates(runtimes[f"torch-distributed-{pool}"]).values()
        assert node["metadata"]["annotations"][PREFERRED] == SUBBLOCK
        for template in _templates(runtimes[f"deepspeed-distributed-{pool}"]).values():
            assert template["metadata"]["annotations"][GROUP] == "launcher-and-nodes"
