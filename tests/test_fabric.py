"""The in-cluster half of GPUDirect networking (components/fabric.py, runtimes/fabric.py): the
multi-networking objects against the shape of the GKE docs' examples (GKE serves their CRDs
and publishes none, so no schema judges them elsewhere), the installers' restriction to the
fabric pools, the runtime variants a data scientist trains on with no extra argument, the
release manifests' mirror and offline render, and the rules that catch a broken attachment."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from kubeflow.trainer.constants import constants as sdk_constants

from components import fabric
from facts.versions import GPUDIRECT_MANIFESTS, RELEASE_MANIFESTS, ReleaseManifest
from infra.args import fabric_pools
from plumbing.sources import MIRROR_RELEASE_MANIFESTS, mirror_sources, release_manifest_source
from runtimes.args import training_runtimes_args
from runtimes.catalog import cluster_training_runtimes
from stackmodel.config import ConfigError, load, read_stack_file, stack_file, validate
from stackmodel.schema import Sources
from tests.support.sdk import fake_sdk
from tooling import fullrender
from tooling.check import Platform
from tooling.check.network import fabric_attached
from tooling.fullrender import FullRender, Rendered, Unmirrored
from tooling.mirror import MirrorError, Request, build
from tooling.plan import Plan, Recorded, evaluate

STACK = "dev-fabric"
TCPXO_POOL, RDMA_POOL = "h100", "b200"


@cache
def runtimes() -> dict[str, dict[str, Any]]:
    return {r["metadata"]["name"]: r for r in cluster_training_runtimes(training_runtimes_args(load(STACK)))}


def pod_templates(runtime: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        yield job["name"], job["template"]["spec"]["template"]


def env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env") or [] if "value" in e}  # not TRAINJOB_NAME, from the Downward API


# --- the multi-networking objects -------------------------------------------------------


def test_network_objects_have_the_shape_of_the_gke_docs_examples() -> None:
    # The GKE docs' A3 Mega example (gpu-bandwidth-gpudirect-tcpx, "Create the GKENetworkParamSet
    # and Network objects"; read 2026-12-04) for one NIC, written out here.
    (tcpxo,) = [p for p in fabric_pools(load(STACK)) if p.pool == TCPXO_POOL]
    objects = fabric.network_objects(tcpxo)
    assert len(objects) == 16
    params, network = objects[0], objects[1]
    nic = tcpxo.nics[0]
    assert params == {
        "apiVersion": "networking.gke.io/v1",
        "kind": "GKENetworkParamSet",
        "metadata": {"name": "h100-vpc1"},
        "spec": {"vpc": nic.vpc, "vpcSubnet": nic.subnet, "deviceMode": "NetDevice"},
    }
    assert network == {
        "apiVersion": "networking.gke.io/v1",
        "kind": "Network",
        "metadata": {"name": "h100-vpc1"},
        "spec": {"type": "Device", "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": "h100-vpc1"}},
    }
    (rdma,) = [p for p in fabric_pools(load(STACK)) if p.pool == RDMA_POOL]
    modes = {o["metadata"]["name"]: o["spec"]["deviceMode"] for o in fabric.network_objects(rdma) if o["kind"] == "GKENetworkParamSet"}
    assert modes == {"b200-gvnic-1": "NetDevice", **{f"b200-rdma-{i}": "RDMA" for i in range(8)}}


def test_the_plan_creates_each_param_set_before_its_network_and_installs_the_pinned_manifests() -> None:
    plan = evaluate(load(STACK), STACK)
    networks = plan.of_type("kubernetes:networking.gke.io/v1:Network")
    param_sets = {r.urn: r for r in plan.of_type("kubernetes:networking.gke.io/v1:GKENetworkParamSet")}
    assert len(networks) == 17 and len(param_sets) == 17
    for network in networks:
        (waits,) = [u for u in network.dependencies if u in param_sets]
        assert param_sets[waits].inputs["metadata"]["name"] == network.inputs["spec"]["parametersRef"]["name"]
    files = sorted(r.inputs["file"] for r in plan.of_type("kubernetes:yaml/v2:ConfigFile"))
    commit = GPUDIRECT_MANIFESTS.version
    base = f"https://raw.githubusercontent.com/GoogleCloudPlatform/container-engine-accelerators/{commit}"
    assert files == [
        f"{base}/gpudirect-rdma/nccl-rdma-installer.yaml",
        f"{base}/gpudirect-tcpxo/nccl-tcpxo-installer.yaml",
        f"{base}/nri_device_injector/nri-device-injector.yaml",
    ]


def test_no_fabric_pool_installs_nothing_of_it() -> None:
    plan = evaluate(load("dev"), "dev")
    assert plan.of_type("kubernetes:yaml/v2:ConfigFile") == []
    assert plan.of_type("kubernetes:networking.gke.io/v1:Network") == []


def test_a_fabric_pool_without_the_component_is_refused_with_its_path() -> None:
    raw = read_stack_file(stack_file(STACK))
    raw["mlplatform:components"] = {**raw["mlplatform:components"], "gpuFabric": {"enabled": False}}
    with pytest.raises(ConfigError) as refused:
        validate(raw, STACK)
    text = str(refused.value)
    assert "mlplatform:cluster.gpuPools[0].network" in text and "mlplatform:cluster.gpuPools[1].network" in text
    assert "gpuFabric" in text


# --- the installers on the fabric pools' nodes ---------------------------------------------


DAEMONSET: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "DaemonSet",
    "metadata": {"name": "nccl-tcpxo-installer", "namespace": "kube-system"},
    "spec": {
        "template": {
            "spec": {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-h100-mega-80gb"]}]}
                            ]
                        }
                    }
                },
                "tolerations": [{"operator": "Exists"}],
                "containers": [{"name": "pause", "image": "pause"}],
            }
        }
    },
}


def test_the_installer_transform_puts_the_daemonset_on_the_given_pools_only() -> None:
    selectors = ((("cloud.google.com/gke-accelerator", "nvidia-h100-mega-80gb"), ("mlplatform.dev/gpu-pool", "a")), (("mlplatform.dev/gpu-pool", "b"),))
    changed = fabric.on_pool_nodes(json.loads(json.dumps(DAEMONSET)), "nccl-tcpxo-installer", selectors)
    assert changed is not None
    spec = changed["spec"]["template"]["spec"]
    assert spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [
        {
            "matchExpressions": [
                {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-h100-mega-80gb"]},
                {"key": "mlplatform.dev/gpu-pool", "operator": "In", "values": ["a"]},
            ]
        },
        {"matchExpressions": [{"key": "mlplatform.dev/gpu-pool", "operator": "In", "values": ["b"]}]},
    ]
    # GKE's GPU taint (nvidia.com/gpu=present:NoSchedule) is tolerated: upstream tolerates everything.
    assert spec["tolerations"] == [{"operator": "Exists"}]
    assert DAEMONSET["spec"]["template"]["spec"]["affinity"] != spec["affinity"]  # the input is left alone
    assert fabric.on_pool_nodes(DAEMONSET, "device-injector", selectors) is None
    assert fabric.on_pool_nodes({**DAEMONSET, "kind": "Deployment"}, "nccl-tcpxo-installer", selectors) is None


# --- the runtimes ---------------------------------------------------------------------------


def test_tcpxo_runtimes_run_the_daemon_as_a_native_sidecar_with_the_nccl_environment() -> None:
    for name in ("torch-distributed-h100", "deepspeed-distributed-h100", "jax-distributed-h100"):
        for job, template in pod_templates(runtimes()[name]):
            annotations = template["metadata"]["annotations"]
            assert json.loads(annotations["networking.gke.io/interfaces"]) == [
                {"interfaceName": "eth0", "network": "default"},
                *({"interfaceName": f"eth{i}", "network": f"h100-vpc{i}"} for i in range(1, 9)),
            ], (name, job)
            assert annotations["networking.gke.io/default-interface"] == "eth0"
            devices = annotations["devices.gke.io/container.tcpxo-daemon"].splitlines()
            assert devices[0] == "- path: /dev/nvidia0" and devices[-1] == "- path: /dev/dmabuf_import_helper" and len(devices) == 11
            spec = template["spec"]
            (daemon,) = spec["initContainers"]
            assert daemon["name"] == "tcpxo-daemon" and daemon["restartPolicy"] == "Always"
            assert daemon["image"] == "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21"
            assert daemon["securityContext"] == {"capabilities": {"add": ["NET_ADMIN", "NET_BIND_SERVICE"]}}
            volumes = {v["name"]: v for v in spec["volumes"]}
            assert {m["mountPath"]: volumes[m["name"]]["hostPath"]["path"] for m in daemon["volumeMounts"]} == {
                "/usr/local/nvidia/lib64": "/home/kubernetes/bin/nvidia/lib64",
                "/hostsysfs": "/sys",
                "/hostprocsysfs": "/proc/sys",
            }
            (node,) = spec["containers"]
            mounts = {m["mountPath"]: volumes[m["name"]] for m in node["volumeMounts"]}
            assert mounts["/dev/aperture_devices"]["hostPath"]["path"] == "/dev/aperture_devices"
            assert mounts["/usr/local/nvidia/lib64"]["hostPath"]["path"] == "/home/kubernetes/bin/nvidia/lib64"
            assert mounts["/dev/shm"] == {"name": "dshm", "emptyDir": {"medium": "Memory"}}
            variables = env(node)
            assert variables["NCCL_FASTRAK_IFNAME"] == "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8"
            assert variables["NCCL_FASTRAK_CTRL_DEV"] == "eth0" and variables["NCCL_SOCKET_IFNAME"] == "eth0"
            assert variables["NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY"] == "/dev/aperture_devices"
            assert variables["NCCL_TUNER_CONFIG_PATH"] == "/usr/local/nvidia/lib64/a3plus_tuner_config.textproto"
            assert variables["LD_LIBRARY_PATH"] == "/usr/local/nvidia/lib64"


def test_mpi_runtimes_forward_the_fabric_environment_to_every_rank() -> None:
    for name, forwarded in (("deepspeed-distributed-h100", "NCCL_FASTRAK_IFNAME"), ("mlx-distributed-b200", "BASH_ENV")):
        for job, template in pod_templates(runtimes()[name]):
            (node,) = template["spec"]["containers"]
            variables = env(node)
            names = variables["OMPI_MCA_mca_base_env_list"].split(";")
            assert forwarded in names and "LD_LIBRARY_PATH" in names, (name, job)
            assert set(names) <= set(variables), "forwards only what the launcher has"
    for _, template in pod_templates(runtimes()["torch-distributed-h100"]):
        assert "OMPI_MCA_mca_base_env_list" not in env(template["spec"]["containers"][0])


def test_rdma_runtimes_take_the_gib_plugins_own_settings_and_attach_the_rdma_nics() -> None:
    for name in ("torch-distributed-b200", "deepspeed-distributed-b200"):
        for _, template in pod_templates(runtimes()[name]):
            interfaces = json.loads(template["metadata"]["annotations"]["networking.gke.io/interfaces"])
            assert interfaces == [
                {"interfaceName": "eth0", "network": "default"},
                *({"interfaceName": f"eth{i + 2}", "network": f"b200-rdma-{i}"} for i in range(8)),
            ]
            assert "devices.gke.io/container.tcpxo-daemon" not in template["metadata"]["annotations"]
            spec = template["spec"]
            (init,) = spec["initContainers"]
            assert "restartPolicy" not in init, "runs to completion before the trainer"
            assert init["args"][0].startswith("test -r /usr/local/gib/scripts/set_nccl_env.sh || ")
            (node,) = spec["containers"]
            assert init["image"] == node["image"]
            # nccl-test-a4.yaml sources the plugin's script in the workload container: the trainer's bash does.
            assert env(node)["BASH_ENV"] == "/usr/local/gib/scripts/set_nccl_env.sh"
            assert "NCCL_CONF_FILE" not in env(node)
            volumes = {v["name"]: v for v in spec["volumes"]}
            paths = {m["mountPath"]: volumes[m["name"]] for m in node["volumeMounts"]}
            assert paths["/usr/local/gib"]["hostPath"]["path"] == "/home/kubernetes/bin/gib"
            assert paths["/usr/local/nvidia"]["hostPath"]["path"] == "/home/kubernetes/bin/nvidia"
            assert [volumes[m["name"]]["hostPath"]["path"] for m in init["volumeMounts"]] == ["/home/kubernetes/bin/gib"]


GIB_SCRIPT = "export NCCL_NET=gIB\nexport NCCL_CROSS_NIC=0\n"
"""A stand-in for the plugin's set_nccl_env.sh (its values are the release's, on the node): two
exports, one of which the image or the job already sets otherwise."""
SHOW = "import os; print(os.environ.get('NCCL_NET'), os.environ.get('NCCL_CROSS_NIC'))"


def _trainer_run(tmp_path: Path, variables: dict[str, str], command: list[str]) -> str:
    """Run `command` as the trainer container would: its environment, the node's gIB directory at
    the path the pod mounts it (here under tmp_path), python on PATH."""
    gib = tmp_path / "gib" / "scripts"
    gib.mkdir(parents=True, exist_ok=True)
    (gib / "set_nccl_env.sh").write_text(GIB_SCRIPT)
    mapped = {k: v.replace("/usr/local/gib", str(tmp_path / "gib")) for k, v in variables.items()}
    path = f"{Path(sys.executable).parent}:/usr/bin:/bin"
    done = subprocess.run(command, env={"PATH": path, **mapped}, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("name", ["torch-distributed-b200", "deepspeed-distributed-b200"])
def test_the_gib_settings_reach_the_training_process_over_what_was_set_before(name: str, tmp_path: Path) -> None:
    """The SDK's command is `bash -c <script>` (kubeflow 0.5.0 constants DEFAULT_COMMAND; torchrun
    and MPI ranks alike): run by a real bash with the trainer's environment plus an
    NCCL_CROSS_NIC the image set, the training code sees the plugin script's values. An NCCL
    configuration file could not do that: NCCL reads it with setenv(..., 0)."""
    command = list(sdk_constants.DEFAULT_COMMAND)
    command[-1] = command[-1].format(func_code=SHOW, func_file="train.py")
    for job, template in pod_templates(runtimes()[name]):
        (node,) = template["spec"]["containers"]
        variables = {**env(node), "NCCL_CROSS_NIC": "1", "NCCL_NET": "Socket"}
        assert _trainer_run(tmp_path, variables, command) == "gIB 0", (name, job)
        forwarded = variables.get("OMPI_MCA_mca_base_env_list")
        if forwarded:  # a rank on another pod: mpirun's ssh gives it only what the launcher forwards
            only = {k: variables[k] for k in forwarded.split(";")}
            assert _trainer_run(tmp_path, only, command) == "gIB 0", (name, job)


def test_runtimes_of_pools_without_a_fabric_are_unchanged() -> None:
    dev = {r["metadata"]["name"]: r for r in cluster_training_runtimes(training_runtimes_args(load("dev")))}
    for runtime in dev.values():
        for _, template in pod_templates(runtime):
            assert "initContainers" not in template["spec"]
            assert "annotations" not in template["metadata"]


@pytest.mark.parametrize("name", ["torch-distributed-h100", "deepspeed-distributed-h100", "torch-distributed-b200"])
def test_the_sdk_trains_on_a_fabric_runtime_with_no_extra_argument(name: str) -> None:
    from kubeflow.trainer import CustomTrainer

    def train() -> None:
        print("training")

    with fake_sdk(list(runtimes().values())) as (client, created):
        runtime = client.get_runtime(name)
        assert (runtime.trainer.device, runtime.trainer.device_count) == ("gpu", "8")
        client.train(runtime=runtime, trainer=CustomTrainer(func=train, num_nodes=2))
    (job,) = created
    spec = job["spec"] if isinstance(job, dict) else job.to_dict()["spec"]
    assert (spec.get("runtimeRef") or spec.get("runtime_ref"))["name"] == name
    trainer = spec["trainer"]
    # Nothing of the fabric in the TrainJob: the runtime carries it all.
    assert not trainer.get("env") and not spec.get("podTemplateOverrides") and not spec.get("pod_template_overrides")
    command = trainer["command"]
    assert "-x" not in command, "mpirun -x and OMPI_MCA_mca_base_env_list exclude each other"


# --- the release manifests: mirror and offline render -------------------------------------


SYNTHETIC = b"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: probe, namespace: kube-system}\nspec:\n  selector: {matchLabels: {app: probe}}\n  template:\n    metadata: {labels: {app: probe}}\n    spec:\n      containers: [{name: pause, image: 'registry.k8s.io/pause:3.10'}]\n"


def synthetic(data: bytes = SYNTHETIC) -> ReleaseManifest:
    return ReleaseManifest(GPUDIRECT_MANIFESTS, "probe/probe.yaml", hashlib.sha256(data).hexdigest())


def test_make_mirror_fetches_release_manifests_and_checks_their_sums(tmp_path: Path) -> None:
    served = tmp_path / "served" / GPUDIRECT_MANIFESTS.version / "probe"
    served.mkdir(parents=True)
    (served / "probe.yaml").write_bytes(SYNTHETIC)
    sources = {GPUDIRECT_MANIFESTS.location: (tmp_path / "served").as_uri()}
    request = Request(charts=(), kubeflow_folders=(), role_files=(), remote_bases=(), release_manifests=(synthetic(),))
    build(tmp_path / "upstream", request, sources, progress=lambda line: None)
    mirrored = tmp_path / "upstream" / MIRROR_RELEASE_MANIFESTS / synthetic().mirror_path
    assert mirrored.read_bytes() == SYNTHETIC
    recorded = json.loads((tmp_path / "upstream" / "mirror.json").read_text())
    assert recorded["fetched"][0]["digest"] == "sha256:" + hashlib.sha256(SYNTHETIC).hexdigest()
    assert recorded["request"]["releaseManifests"][0]["sha256"] == synthetic().sha256

    (served / "probe.yaml").write_bytes(SYNTHETIC + b"# changed upstream\n")
    with pytest.raises(MirrorError, match=r"has sha256 [0-9a-f]{64}, the pin table says"):
        build(tmp_path / "again", request, sources, progress=lambda line: None)


def test_every_release_manifest_is_pinned_at_the_commit_with_a_sum() -> None:
    for manifest in RELEASE_MANIFESTS:
        assert len(manifest.sha256) == 64 and len(manifest.pin.version) == 40
        assert manifest.url == f"https://raw.githubusercontent.com/{manifest.repository}/{manifest.pin.version}/{manifest.path}"
    gpudirect = [m for m in RELEASE_MANIFESTS if m.pin is GPUDIRECT_MANIFESTS]
    assert gpudirect and all(m.repository == "GoogleCloudPlatform/container-engine-accelerators" for m in gpudirect)
    assert release_manifest_source(RELEASE_MANIFESTS[0], Sources()) == RELEASE_MANIFESTS[0].url
    mirror = mirror_sources("/m")
    assert release_manifest_source(RELEASE_MANIFESTS[0], mirror) == f"/m/manifests/{RELEASE_MANIFESTS[0].mirror_path}"


def _config_file(target: str) -> Plan:
    urn = "urn:pulumi:t::mlplatform::mlplatform:components:GpuFabric$kubernetes:yaml/v2:ConfigFile::probe"
    return Plan("t", [Recorded("kubernetes:yaml/v2:ConfigFile", "probe", urn, None, None, (), {"file": target}, False)], config=load(STACK))


def test_the_render_reads_a_release_manifest_from_the_mirror_and_refuses_one_it_lacks(tmp_path: Path) -> None:
    path = tmp_path / "manifests" / synthetic().mirror_path
    path.parent.mkdir(parents=True)
    path.write_bytes(SYNTHETIC)
    (obj,) = fullrender.full_render(_config_file(str(path))).objects
    assert obj.obj["kind"] == "DaemonSet" and obj.upstream and obj.resource_urn.endswith("kubernetes:apps/v1:DaemonSet::probe:kube-system/probe")

    missing = str(tmp_path / "elsewhere" / "probe.yaml")
    with pytest.raises(Unmirrored) as refused:
        fullrender.full_render(_config_file(missing))
    assert missing in str(refused.value) and "`make mirror`" in str(refused.value) and "--allow-unmirrored" in str(refused.value)
    with pytest.raises(Unmirrored):
        fullrender.full_render(_config_file(RELEASE_MANIFESTS[0].url))  # no mirror: the stack's own URL, never fetched
    render = fullrender.full_render(_config_file(missing), allow_unmirrored=True)
    assert render.objects == [] and [i.target for i in render.left_out] == [missing]


def test_the_cli_refuses_an_unmirrored_render_or_renders_the_rest_and_exits_3(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tooling import cli

    def fake(name: str, mirror: Path | None, esc: Any = None, allow_unmirrored: bool = False) -> FullRender:
        return fullrender.full_render(_config_file(str(tmp_path / "absent.yaml")), allow_unmirrored=allow_unmirrored)

    monkeypatch.setattr(cli, "full_render_for", fake)
    assert cli.main(["check", STACK]) == 3
    assert "release manifests not in the mirror" in capsys.readouterr().err
    assert cli.main(["check", STACK, "--allow-unmirrored"]) == 3
    err = capsys.readouterr().err
    assert "left out of the render, not in the mirror (1; `make mirror` fetches them)" in err and "absent.yaml" in err


# --- check ----------------------------------------------------------------------------------


def _platform(*objects: dict[str, Any]) -> Platform:
    plan = Plan("t", [], config=load(STACK))
    return Platform(FullRender("t", plan, [], [Rendered(o, "gpu-fabric", "", False) for o in objects]))


def test_fabric_rule_catches_a_runtime_attached_to_a_network_nothing_creates() -> None:
    runtime = runtimes()["torch-distributed-h100"]
    (tcpxo,) = [p for p in fabric_pools(load(STACK)) if p.pool == TCPXO_POOL]
    objects = fabric.network_objects(tcpxo)
    assert list(fabric_attached(_platform(runtime, *objects))) == []

    without_vpc8 = [o for o in objects if o["metadata"]["name"] != "h100-vpc8" or o["kind"] == "GKENetworkParamSet"]
    (found,) = fabric_attached(_platform(runtime, *without_vpc8))
    assert "interface eth8 attaches Network 'h100-vpc8', which nothing in the platform creates" in found.message

    without_params = [o for o in objects if not (o["metadata"]["name"] == "h100-vpc1" and o["kind"] == "GKENetworkParamSet")]
    (found,) = fabric_attached(_platform(runtime, *without_params))
    assert "points at GKENetworkParamSet 'h100-vpc1'" in found.message

    renamed = json.loads(json.dumps(runtime))
    template = renamed["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    template["spec"]["initContainers"][0]["name"] = "rxdm"
    problems = [v.message for v in fabric_attached(_platform(renamed, *objects))]
    assert problems == ["devices.gke.io/container.tcpxo-daemon names container 'tcpxo-daemon', which the pod does not have: the NRI injector gives its devices to nothing"]

