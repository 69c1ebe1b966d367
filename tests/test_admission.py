"""Admissible by construction (tooling/admission.py, `check` rule `admissible`): every workload the
platform offers each team, judged by Kueue v0.19.2's admission rules. Each condition is tested on
a case of Kueue's own tests at the tag (named on the test), then the rule on the fixtures' renders."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from components.serving_registry import STORAGE_INITIALIZER
from runtimes.catalog import cluster_training_runtimes
from stackmodel.config import load
from stackmodel.schema import GpuPool
from tests.support import mirror
from tests.support.renders import edited, rendered, violations
from tests.support.sdk import fake_sdk
from tooling import admission
from tooling.admission import Flavor, Group, Kueue, PodSet, Queue, Status, Workload

# --- Kueue's own cases, condition by condition ----------------------------------------------


def _pod_set(requests: dict[str, str] | None = None, count: int = 1, annotations: dict[str, str] | None = None, **spec: Any) -> PodSet:
    container: dict[str, Any] = {"name": "c", "resources": {"requests": dict(requests or {})}}
    return PodSet("main", count, {"metadata": {"annotations": annotations or {}}, "spec": {"containers": [container], **spec}})


def _queue(groups: list[tuple[tuple[str, ...], dict[str, dict[str, str]]]], checks: dict[str, list[str]] | None = None) -> Queue:
    """A ClusterQueue as Kueue's tests write one: per group, its resources and per flavor the nominal quota."""
    reach = {(flavor, resource): Decimal(admission.quantity.parse(value)) for _, flavors in groups for flavor, quotas in flavors.items() for resource, value in quotas.items()}
    return Queue("test-clusterqueue", [Group(covered, tuple(flavors)) for covered, flavors in groups], reach, checks or {})


def _kueue(*flavors: Flavor, **more: Any) -> Kueue:
    return Kueue({f.name: f for f in flavors}, {}, more.get("topologies", {}), more.get("provisioning", {}), more.get("device_classes", {}), more.get("templates", {}), {}, more.get("pools", {}))


def _flavor(name: str, labels: dict[str, str] | None = None, taints: list[dict[str, Any]] | None = None, tolerations: list[dict[str, Any]] | None = None, topology: str | None = None) -> Flavor:
    return Flavor(name, labels or {}, taints or [], tolerations or [], topology)


def test_a_resource_no_group_covers_is_unavailable() -> None:
    # pkg/scheduler/flavorassigner/flavorassigner_test.go TestAssignFlavors "resource not listed in clusterQueue".
    queue = _queue([(("cpu",), {"one": {"cpu": "4"}})])
    assert admission.uncovered({"example.com/gpu": Decimal(2)}, queue) == "resource example.com/gpu unavailable in ClusterQueue"
    assert admission.uncovered({"cpu": Decimal(1)}, queue) is None


def test_a_pod_set_above_the_flavors_maximum_capacity_does_not_fit_it() -> None:
    # TestAssignFlavors "multiple resource groups, fits": flavor one holds 2 CPUs, the pod set asks 3.
    queue = _queue([(("cpu",), {"one": {"cpu": "2"}, "two": {"cpu": "4"}})])
    assert admission.exceeds_quota(Decimal(3), Decimal(0), "one", "cpu", queue) == (
        "insufficient quota for cpu in flavor one, previously considered podsets requests (0) + current podset request (3) > maximum capacity (2)"
    )
    assert admission.exceeds_quota(Decimal(3), Decimal(0), "two", "cpu", queue) is None
    kueue = _kueue(_flavor("one", {"type": "one"}), _flavor("two", {"type": "two"}))
    status, detail = admission.judge(Workload("w", (_pod_set({"cpu": "3"}),)), queue, kueue, "ns")
    assert (status, detail) == (Status.ADMISSIBLE, "main x1 on two")


TAINT = {"key": "instance", "value": "spot", "effect": "NoSchedule"}


def test_an_untolerated_taint_skips_the_flavor_and_the_flavors_own_toleration_counts() -> None:
    # TestAssignFlavors "multiple flavors, fits while skipping tainted flavor" and
    # "single flavor, fits tainted flavor with toleration" (flavor taint_and_toleration).
    tainted = _flavor("tainted", taints=[TAINT])
    assert admission.flavor_mismatch(_pod_set({"cpu": "3"}), tainted) == "untolerated taint instance=spot:NoSchedule in flavor tainted"
    kueue = _kueue(tainted, _flavor("two", {"type": "two"}))
    queue = _queue([(("cpu",), {"tainted": {"cpu": "4"}, "two": {"cpu": "4"}})])
    assert admission.judge(Workload("w", (_pod_set({"cpu": "3"}),)), queue, kueue, "ns") == (Status.ADMISSIBLE, "main x1 on two")
    toleration = {"key": "instance", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}
    assert admission.flavor_mismatch(_pod_set({"cpu": "1"}), _flavor("taint_and_toleration", taints=[TAINT], tolerations=[toleration])) is None


GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}


def test_a_pod_set_without_gpus_that_a_gpu_pools_flavor_would_take_is_named() -> None:
    # TestAssignFlavors "single flavor, fits tainted flavor with toleration" (the flavor's own
    # toleration lets any pod set in) and "multiple flavors, fits while skipping tainted flavor"
    # (an untolerated taint keeps it out), on a queue whose pool flavor holds CPU too: once the
    # default flavor is full, Kueue moves on to it (shouldTryNextFlavor) and the CPU-only pod set
    # runs on the pool's GPU nodes.
    pool = GpuPool.model_validate({"name": "l4", "accelerator": "nvidia-l4", "machineType": "g2-standard-24", "max": 2})
    queue = _queue([(("cpu", "nvidia.com/gpu"), {"default": {"cpu": "4"}, "l4": {"cpu": "4", "nvidia.com/gpu": "2"}})])
    tolerating = _kueue(PLAIN, _flavor("l4", {"pool": "l4"}, [GPU_TAINT], [GPU_TOLERATION]), pools={"l4": pool})
    status, detail = admission.judge(Workload("w", (_pod_set({"cpu": "3"}),)), queue, tolerating, "ns")
    assert status is Status.ON_GPU_NODES
    assert detail == (
        "pod set main asks for no GPUs, yet once the default flavor is full Kueue gives it flavor l4 "
        "(it tolerates the flavor's taints through the flavor's own tolerations), and it runs on pool l4's GPU nodes"
    )
    tainted = _kueue(PLAIN, _flavor("l4", {"pool": "l4"}, [GPU_TAINT]), pools={"l4": pool})
    assert admission.judge(Workload("w", (_pod_set({"cpu": "3"}),)), queue, tainted, "ns") == (Status.ADMISSIBLE, "main x1 on default")
    gpu_job = _pod_set({"cpu": "1", "nvidia.com/gpu": "2"}, tolerations=[GPU_TOLERATION], nodeSelector={"pool": "l4"})
    assert admission.judge(Workload("w", (gpu_job,)), queue, tainted, "ns") == (Status.ADMISSIBLE, "main x1 on l4")
    too_big = _pod_set({"cpu": "5"})  # more than the pool flavor holds: Kueue never gives it that flavor
    assert admission.gpu_pool_takes_cpu_work(too_big, {"cpu": Decimal(5)}, queue.groups[0], tolerating, queue) is None


def test_a_node_selector_picks_the_flavor_with_its_labels_and_ignores_other_keys() -> None:
    # TestAssignFlavors "multiple flavors, fits a node selector": nodeSelector {type: two, ignored1: foo}.
    pod_set = _pod_set({"cpu": "1"}, nodeSelector={"type": "two", "ignored1": "foo"})
    assert admission.flavor_mismatch(pod_set, _flavor("one", {"type": "one"})) == "flavor one doesn't match node affinity"
    assert admission.flavor_mismatch(pod_set, _flavor("two", {"type": "two"})) is None


TAS = _flavor("tas-default", {"tas-node": "true"}, topology="tas-single-level")
PLAIN = _flavor("default")
TOPOLOGIES = {"tas-single-level": ["kubernetes.io/hostname"]}


def test_a_pod_set_asking_for_a_topology_skips_a_flavor_without_one() -> None:
    # pkg/scheduler/scheduler_tas_test.go TestScheduleForTAS "workload requiring TAS skips the non-TAS
    # flavor": flavors default then tas-default, 50 CPUs each; one pod set requiring kubernetes.io/hostname.
    queue = _queue([(("cpu",), {"default": {"cpu": "50"}, "tas-default": {"cpu": "50"}})])
    kueue = _kueue(PLAIN, TAS, topologies=TOPOLOGIES)
    pod_set = _pod_set({"cpu": "1"}, annotations={"kueue.x-k8s.io/podset-required-topology": "kubernetes.io/hostname"})
    group = queue.groups[0]
    assert admission.topology_mismatch(pod_set, {"cpu": Decimal(1)}, PLAIN, group, kueue, queue) == 'Flavor "default" does not support TopologyAwareScheduling'
    assert admission.judge(Workload("w", (pod_set,)), queue, kueue, "ns") == (Status.ADMISSIBLE, "main x1 on tas-default")


def test_a_pod_set_without_a_topology_request_skips_a_flavor_with_one() -> None:
    # TestScheduleForTAS "workload which does not need TAS skips the TAS flavor": tas-default first.
    queue = _queue([(("cpu",), {"tas-default": {"cpu": "50"}, "default": {"cpu": "50"}})])
    kueue = _kueue(PLAIN, TAS, topologies=TOPOLOGIES)
    pod_set = _pod_set({"cpu": "1"})
    assert admission.topology_mismatch(pod_set, {"cpu": Decimal(1)}, TAS, queue.groups[0], kueue, queue) == 'Flavor "tas-default" supports only TopologyAwareScheduling'
    assert admission.judge(Workload("w", (pod_set,)), queue, kueue, "ns") == (Status.ADMISSIBLE, "main x1 on default")


def test_a_topology_request_with_any_resource_on_a_flavor_without_one_is_never_admitted() -> None:
    # The defect of issue 39, in TestScheduleForTAS's terms: CPU in a group of the non-TAS flavor
    # only, GPUs on the TAS flavor: the pod set's CPU can come from no flavor.
    queue = _queue([(("cpu",), {"default": {"cpu": "50"}}), (("example.com/gpu",), {"tas-default": {"example.com/gpu": "8"}})])
    kueue = _kueue(PLAIN, TAS, topologies=TOPOLOGIES)
    pod_set = _pod_set({"cpu": "1", "example.com/gpu": "8"}, annotations={"kueue.x-k8s.io/podset-preferred-topology": "kubernetes.io/hostname"})
    status, detail = admission.judge(Workload("w", (pod_set,)), queue, kueue, "ns")
    assert (status, detail) == (Status.REFUSED, 'pod set main: no flavor for cpu: Flavor "default" does not support TopologyAwareScheduling')


def _dra_pod_set(template: str = "gpu-template") -> PodSet:
    """workload_controller_dra_test.go's pod set: a claim `gpu` of ResourceClaimTemplate gpu-template."""
    pod_set = _pod_set({}, resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": template}])
    pod_set.spec["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return pod_set


def test_a_claim_of_an_unmapped_device_class_cannot_be_counted() -> None:
    # pkg/controller/core/workload_controller_dra_test.go "reconcile DRA ResourceClaimTemplate with
    # unmapped device class": gpu-template requests 1 device of unmapped.example.com.
    kueue = _kueue(templates={("ns", "gpu-template"): [("unmapped.example.com", 1)]})
    assert admission.requests_of(_dra_pod_set(), kueue, "ns")[1] == "DeviceClass unmapped.example.com is not mapped in DRA configuration for podset main"
    mapped = _kueue(templates={("ns", "gpu-template"): [("gpu.example.com", 2)]}, device_classes={"gpu.example.com": "gpu"})
    assert admission.requests_of(_dra_pod_set(), mapped, "ns") == ({"gpu": Decimal(2)}, None)


def test_dra_claims_on_a_flavor_with_a_topology_are_refused() -> None:
    # No Kueue test admits or refuses this: site/content/en/docs/concepts/dynamic_resource_allocation.md
    # documents "No DRA + Topology Aware Scheduling". The pod set of workload_controller_dra_test.go
    # on scheduler_tas_test.go's TAS flavor.
    assert admission.dra_with_topology(_dra_pod_set(), TAS) is not None
    assert admission.dra_with_topology(_dra_pod_set(), PLAIN) is None


QUEUED = GpuPool.model_validate({"name": "flv1", "accelerator": "nvidia-h100-80gb", "machineType": "a3-highgpu-8g", "max": 2, "provisioning": "queued"})


def test_a_queued_pools_pod_set_gets_a_provisioning_request_only_if_it_uses_a_managed_resource() -> None:
    # pkg/controller/admissionchecks/provisioning/controller_test.go TestReconcile "when no request is
    # needed" (pod sets of cpu and memory, config managing example.org/gpu: NoRequestNeeded) and
    # "with config" (no managedResources: a request for every pod set).
    flavor = _flavor("flv1")
    queue = _queue([(("cpu", "memory"), {"flv1": {"cpu": "8", "memory": "8M"}})], checks={"flv1": ["check1"]})
    pod_set = PodSet("ps1", 4, {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})
    managed = _kueue(flavor, provisioning={"check1": ["example.org/gpu"]}, pools={"flv1": QUEUED})
    assert "makes no ProvisioningRequest for it (NoRequestNeeded)" in (admission.no_provisioning_request(pod_set, flavor, managed, queue) or "")
    every = _kueue(flavor, provisioning={"check1": []}, pools={"flv1": QUEUED})
    assert admission.no_provisioning_request(pod_set, flavor, every, queue) is None
    unchecked = _queue([(("cpu",), {"flv1": {"cpu": "8"}})])
    assert "runs no ProvisioningRequest check on flavor flv1" in (admission.no_provisioning_request(pod_set, flavor, every, unchecked) or "")


def test_gpus_are_asked_the_way_the_pool_offers_them() -> None:
    # Not a Kueue rule (Kueue admits by quota): a DRA pool's nodes advertise no nvidia.com/gpu (GKE's
    # device plugin off, facts/node_labels.py), a device-plugin pool's run no DRA kubelet plugin.
    dra = GpuPool.model_validate({"name": "flv1", "accelerator": "nvidia-l4", "machineType": "g2-standard-24", "max": 2, "gpuAllocation": "dra"})
    kueue = _kueue(_flavor("flv1"), pools={"flv1": dra})
    assert "advertise no nvidia.com/gpu" in (admission.gpus_not_as_pool_offers(_pod_set({"nvidia.com/gpu": "8"}), _flavor("flv1"), kueue) or "")
    assert admission.gpus_not_as_pool_offers(_dra_pod_set(), _flavor("flv1"), kueue) is None
    plugin = _kueue(_flavor("flv1"), pools={"flv1": QUEUED})
    assert "come through the device plugin" in (admission.gpus_not_as_pool_offers(_dra_pod_set(), _flavor("flv1"), plugin) or "")


def test_a_team_without_quota_of_what_a_workload_asks_is_listed_not_refused_if_other_teams_have_it() -> None:
    queue = _queue([(("cpu", "example.com/gpu"), {"default": {"cpu": "4", "example.com/gpu": "0"}})])
    other = _queue([(("cpu", "example.com/gpu"), {"default": {"cpu": "4", "example.com/gpu": "2"}})])
    kueue = _kueue(PLAIN)
    workload = Workload("w", (_pod_set({"cpu": "1", "example.com/gpu": "1"}),))
    kueue.queues = {"team": queue, "other": other}
    status, detail = admission.judge(workload, queue, kueue, "ns")
    assert status is Status.NO_QUOTA and "maximum capacity (0)" in detail
    kueue.queues = {"team": queue}  # nobody has any: nothing to give, the workload is never admitted
    assert admission.judge(workload, queue, kueue, "ns")[0] is Status.REFUSED


# --- the workloads, as the controllers build them --------------------------------------------


def test_the_trainjob_the_rule_judges_is_the_one_the_sdk_creates() -> None:
    runtimes = cluster_training_runtimes_of("dev-fabric")
    with fake_sdk(runtimes) as (client, created):
        for runtime in runtimes:
            client.train(runtime=client.get_runtime(runtime["metadata"]["name"]))
    assert [{k: v for k, v in job.items() if k != "metadata"} for job in created] == [admission.trainjob(r) for r in runtimes]


def cluster_training_runtimes_of(stack: str) -> list[dict[str, Any]]:
    from runtimes.args import training_runtimes_args

    return cluster_training_runtimes(training_runtimes_args(load(stack)))


def test_an_mpi_runtime_takes_its_launcher_and_a_node_as_trainer_builds_them() -> None:
    # kubeflow/trainer v2.3.0 pkg/runtime/core/trainingruntime.go:186-196: the trainer-ancestor job
    # (the launcher) gets mlPolicy.numNodes pods, the node job its parallelism (1); the MPI plugin
    # changes the node count only for a TrainJob's numNodes (mpi.go:117-125, case "runLauncherAsNode is
    # true": numNodes 10 -> 9 nodes and the launcher).
    runtime = next(r for r in cluster_training_runtimes_of("dev-fabric") if r["metadata"]["name"] == "deepspeed-distributed-h100")
    assert [(name, count) for name, count, _ in admission.trainjob_pod_sets(runtime, admission.trainjob(runtime))] == [("node", 1), ("launcher", 1)]


# --- the rule on the renders (dev-fabric's: tests/envtest/test_fabric_render.py) -------------


@mirror.needed
# dev-fabric's in tests/envtest/test_fabric_render.py (the suite that renders it anyway), dev-shared-vpc's
# through `check` in tests/test_landing_zone.py.
@pytest.mark.parametrize("stack", ["dev", "prod", "kind", "dev-groups"])
def test_every_workload_of_every_fixture_is_admissible_or_not_queued(stack: str) -> None:
    verdicts = admission.verdicts(rendered(stack))
    assert verdicts and [str(v) for v in verdicts if v.status not in (Status.ADMISSIBLE, Status.NOT_QUEUED)] == []
    assert {v.workload for v in verdicts} >= {"notebook (CPU)", "TrainJob torch-distributed"}


@mirror.needed
def test_the_team_ray_cluster_and_gpu_notebooks_are_judged_on_their_pool() -> None:
    # dev has no topology-aware pool: CPU and memory from `default`, GPUs from the pool (stackmodel/team_quota.py).
    verdicts = {(v.team, v.workload): v for v in admission.verdicts(rendered("dev"))}
    ray = verdicts[("nlp", "RayCluster ray (workers at maxReplicas)")]
    assert (ray.status, ray.detail) == (Status.ADMISSIBLE, "head x1 on default, l4 x2 on default+l4")
    assert verdicts[("vision", "GPU notebook (gpu-pool-l4)")].detail == "main x1 on default+l4"
    assert verdicts[("vision", "pipeline step (CPU): its executor pod")].status is Status.NOT_QUEUED


@mirror.needed
def test_a_gpu_notebook_the_form_offers_on_a_topology_aware_pool_is_refused() -> None:
    """Before issue 39 the form offered every pool: a notebook on prod's h100 pool asks for no topology."""

    def offer_h100(obj: dict[str, Any]) -> None:
        import yaml

        config = yaml.safe_load(obj["data"]["spawner_ui_config.yaml"])
        form = config["spawnerFormDefaults"]
        (l4,) = form["affinityConfig"]["options"]
        h100 = {**l4, "configKey": "gpu-pool-h100"}
        h100["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "mlplatform.dev/gpu-pool", "operator": "In", "values": ["h100"]}]}]}}}
        form["affinityConfig"]["options"].append(h100)
        form["tolerationGroup"]["options"].append({**form["tolerationGroup"]["options"][0], "groupKey": "gpu-pool-h100"})
        obj["data"]["spawner_ui_config.yaml"] = yaml.safe_dump(config)

    render = rendered("prod")
    name = next(o.key[3] for o in render.objects if o.key[1] == "ConfigMap" and "spawner_ui_config.yaml" in (o.obj.get("data") or {}))
    (found,) = violations(edited(render, "ConfigMap", name, offer_h100), "admissible")
    assert found.message.startswith("GPU notebook (gpu-pool-h100) of team vision is never admitted: pod set main: no flavor for cpu, memory, nvidia.com/gpu")
    assert 'Flavor "h100" supports only TopologyAwareScheduling' in found.message


@mirror.needed
def test_check_prints_the_verdict_of_every_team_and_workload(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tooling import cli

    render = rendered("dev")
    monkeypatch.setattr(cli, "full_render_for", lambda *args: render)
    assert cli.main(["check", "dev"]) == 0
    out = capsys.readouterr().out
    assert "admission, per team and workload (Kueue's rules; rule admissible):" in out
    assert "  nlp: RayCluster ray (workers at maxReplicas): admissible: head x1 on default, l4 x2 on default+l4\n" in out
    assert "  vision: notebook (CPU): not queued: Kueue does not queue it (no GPUs); the namespace's ResourceQuota counts it\n" in out
    assert cli.main(["check", "dev", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["admission"]
    assert {"team": "research", "workload": "TrainJob torch-distributed-l4", "status": "admissible", "detail": "node x1 on default+l4"} in listed


@mirror.needed
def test_a_katib_trial_is_a_workload_of_the_team_queue_and_a_spark_gpu_executor_waits_on_a_gpu_pool() -> None:
    """dev-groups installs Katib and Spark: the trial template Katib offers (a TrainJob on the
    platform's torch runtime) is admitted by each team's queue like the runtime's own TrainJob,
    and a Spark executor asking for a GPU (a plain pod Kueue queues) on the l4 pool's flavor (its CPU
    and memory from `default`: without a topology-aware pool the queue keeps them there)."""
    verdicts = {(v.team, v.workload): v for v in admission.verdicts(rendered("dev-groups"))}
    for team in ("vision", "nlp", "research"):
        trial = verdicts[(team, "Katib trial trainJobTemplate on torch-distributed")]
        assert (trial.status, trial.detail, trial.queue) == (Status.ADMISSIBLE, "node x1 on default", team)
        executor = verdicts[(team, "Spark executor (1 GPU)")]
        assert (executor.status, executor.detail) == (Status.ADMISSIBLE, "main x1 on default+l4")


def test_a_spark_executor_is_counted_with_sparks_memory_overhead() -> None:
    """Spark asks for its executor's memory plus the larger of 10% and 384 MiB (BasicExecutorFeatureStep)."""
    small, large = admission.spark_executor_pod(1, memory_mib=1024), admission.spark_executor_pod(1, memory_mib=8192)
    assert small["containers"][0]["resources"]["requests"]["memory"] == "1408Mi"
    assert large["containers"][0]["resources"]["requests"]["memory"] == "9011Mi"
    assert admission.asks_for_gpus(small)



@mirror.needed
@pytest.mark.parametrize(("runtime", "placed"), [("torch-distributed", "node x1 on default"), ("torch-distributed-l4", "node x1 on default+l4")])
def test_the_example_searchs_trials_are_workloads_of_each_teams_queue(runtime: str, placed: str) -> None:
    """The Experiment examples/katib_mnist_search.py makes through the Kubeflow SDK, its trial as
    Katib's trial controller creates it (a TrainJob with the suggested learning rate, owned by the
    Trial): Kueue gives it the team's `default` queue and admits it there on the runtime's pool, so
    a search takes no more than the team's quota."""
    from tests.test_examples import load

    search = load("katib_mnist_search").search
    render = rendered("dev-groups")
    kueue = admission.kueue_of(render)
    runtimes = {o.key[3]: o.obj for o in render.objects if o.key[1] == "ClusterTrainingRuntime"}
    with fake_sdk(list(runtimes.values()), client="optimizer") as (client, created):
        search(client, runtime=runtime)
    (experiment,) = created
    experiment["metadata"]["namespace"] = "vision"
    job = admission.katib_trial_job(experiment, {"lr": "0.0123"}, "search-abc-trial-1")
    assert (job["kind"], job["metadata"]["ownerReferences"][0]["kind"]) == ("TrainJob", "Trial")
    assert "'lr': '0.0123'" in " ".join(job["spec"]["trainer"]["command"]) and "trialParameters" not in json.dumps(job)
    assert "labels" not in job["metadata"]  # no queue named: Kueue's default LocalQueue of the namespace
    queues = admission.team_queues(render)
    assert set(queues) == {"vision", "nlp", "research"}
    for team, queue in queues.items():
        workload = admission.trainjob_workload("trial", job, runtimes[runtime], kueue.limit_ranges.get(team, []))
        assert admission.judge(workload, kueue.queues[queue], kueue, team) == (Status.ADMISSIBLE, placed), team
        assert queue == team


@mirror.needed
def test_a_gpu_inference_service_is_queued_like_a_gpu_notebook_on_its_runtimes_pool() -> None:
    """Every team with L4 quota may run a replica of a model on either L4 runtime; the pod Kueue
    sees is the runtime's server with its GPU and the mesh sidecar, with the serving PodDefault's
    priority class; a runtime placed where no flavor of the queue goes is never admitted."""
    render = rendered("dev")
    verdicts = {(v.team, v.workload): v for v in admission.verdicts(render)}
    for team in ("nlp", "research", "vision"):
        for runtime in ("kserve-vllm-l4", "kserve-huggingface-l4"):
            found = verdicts[(team, f"GPU InferenceService on {runtime}")]
            assert (found.status, found.detail) == (Status.ADMISSIBLE, "predictor x1 on default+l4")
    kueue = admission.kueue_of(render)
    (workload,) = [w for w in admission.workloads(render, kueue, "nlp") if w.name == "GPU InferenceService on kserve-vllm-l4"]
    (pod_set,) = workload.pod_sets
    assert workload.queued and [c["name"] for c in pod_set.spec["containers"]] == ["kserve-container", "istio-proxy"]
    assert pod_set.spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert pod_set.template["metadata"]["labels"] == {"kueue.x-k8s.io/priority-class": "interactive"}

    def elsewhere(obj: dict[str, Any]) -> None:
        obj["spec"]["nodeSelector"] = {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}

    refused = violations(edited(render, "ClusterServingRuntime", "kserve-vllm-l4", elsewhere), "admissible")
    # The same predictor loading a registered model by name (its init container added) too.
    loaded = f"GPU InferenceService on kserve-vllm-l4 loading a registered model ({STORAGE_INITIALIZER})"
    assert {v.message.split(" is never admitted")[0] for v in refused} == {
        f"{workload} of team {t}" for t in ("nlp", "research", "vision") for workload in ("GPU InferenceService on kserve-vllm-l4", loaded)
    }
