"""The GPU fabric fixture's full render, which the envtest suite renders anyway (test_apply.py):
held to `check` here, so the unit suite does not render it a second time; and what the rule
`admissible` (tooling/admission.py, tests/test_admission.py) says of it."""

from __future__ import annotations

from typing import Any

from tests.support import mirror, renders
from tests.support.renders import edited, rendered, violations
from tooling import admission
from tooling import check as lint
from tooling.admission import Status

STACK = "dev-fabric"


@mirror.needed
def test_the_fabric_fixture_renders_from_the_mirror_and_passes_every_rule() -> None:
    render = renders.rendered(STACK)
    assert renders.unmirrored_release_manifests(render) == []
    left_out = sorted(i.label for i in render.left_out)
    mirrored = sorted(i.label for i in render.installs if i.kind == "manifest")
    assert sorted(left_out + mirrored) == ["gpu-fabric/nccl-rdma-installer", "gpu-fabric/nccl-tcpxo-installer", "gpu-fabric/nri-device-injector"]
    kinds = [o.obj["kind"] for o in render.objects if o.source == "gpu-fabric"]
    assert kinds.count("Network") == 17 and kinds.count("GKENetworkParamSet") == 17
    assert [str(v) for v in lint.check(render)] == []


@mirror.needed
def test_every_team_can_run_every_runtime_variant_of_the_fabric_stack() -> None:
    render = rendered("dev-fabric")
    verdicts = admission.verdicts(render)
    runtimes = {o.key[3] for o in render.objects if o.key[1] == "ClusterTrainingRuntime"}
    assert {v.workload for v in verdicts if v.workload.startswith("TrainJob ")} == {f"TrainJob {r}" for r in runtimes}
    assert len(runtimes) == 12 and {v.team for v in verdicts} == {"llm"}
    assert [str(v) for v in verdicts if v.status is not Status.ADMISSIBLE and v.status is not Status.NOT_QUEUED] == []
    assert next(v for v in verdicts if v.workload == "TrainJob torch-distributed-h100").detail == "node x1 on h100"
    assert violations(render, "admissible") == []


@mirror.needed
def test_cpu_on_the_default_flavor_alone_fails_every_topology_aware_variant_naming_the_flavor() -> None:
    """The layout before issue 39: CPU and memory in a group of the default flavor, GPUs in another."""

    def old_layout(obj: dict[str, Any]) -> None:
        (group,) = obj["spec"]["resourceGroups"]
        _, *pools = group["flavors"]
        obj["spec"]["resourceGroups"] = [
            {"coveredResources": ["cpu", "memory"], "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "416"}, {"name": "memory", "nominalQuota": "3600Gi"}]}]},
            {"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": p["name"], "resources": [p["resources"][2]]} for p in pools]},
        ]

    found = violations(edited(rendered("dev-fabric"), "ClusterQueue", "llm", old_layout), "admissible")
    refused = sorted(v.message.split(" of team")[0] for v in found)
    assert refused == sorted(f"TrainJob {r}-distributed-{p}" for r in ("torch", "deepspeed", "mlx", "jax") for p in ("h100", "b200"))
    assert all('no flavor for cpu, memory: Flavor "default" does not support TopologyAwareScheduling' in v.message for v in found)
    assert {v.object for v in found} == {"ClusterQueue.kueue.x-k8s.io llm"}
