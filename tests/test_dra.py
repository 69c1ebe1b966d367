"""GPUs through Dynamic Resource Allocation (`gpuAllocation: dra`): the pool GKE needs, NVIDIA's
DRA driver and GKE's driver installer, the team's claim templates, the runtime variants'
claims and Kueue's count of them; the refusals are in tests/test_stack_rules.py and the corpus."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from components import kueue_owners
from components.dra import nvidia_dra_driver_args, nvidia_dra_driver_values
from components.kueue import manager_config
from runtimes.args import training_runtimes_args
from runtimes.catalog import cluster_training_runtimes
from runtimes.kueue_guard import gpu_runtimes
from stackmodel.components.dra import NVIDIA_DRA_DRIVER
from stackmodel.config import validate
from stackmodel.stack import PlatformConfig
from tests.conftest import base_gke, with_changes
from tests.support import crds
from tests.support.validation import validate as validate_object
from tooling.plan import evaluate
from tooling.render import authored_objects

TAINT = {"key": "acme.com/team", "value": "vision", "effect": "NoSchedule"}


def dra_stack(**pool: Any) -> PlatformConfig:
    """The base GKE stack, its L4 pool on DRA (autoprovisioning off: GKE refuses the two together)."""
    raw = with_changes(
        base_gke(),
        {
            "mlplatform:cluster.gpuPools.0.gpuAllocation": "dra",
            "mlplatform:cluster.gpuPools.0.taints": [TAINT],
            "mlplatform:cluster.autoprovisioning": {"enabled": False},
            "mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "quota": {"gpus": {"nvidia-l4": 4}}}],
            **{f"mlplatform:cluster.gpuPools.0.{k}": v for k, v in pool.items()},
        },
    )
    return validate(raw, "dra")


CONFIG = dra_stack()
PLAN = evaluate(CONFIG, "dra")


def test_the_driver_component_is_on_exactly_where_a_pool_uses_dra() -> None:
    assert CONFIG.enabled(NVIDIA_DRA_DRIVER)
    assert not validate(base_gke(), "plain").enabled(NVIDIA_DRA_DRIVER)


def test_the_pool_has_gkes_driver_installation_off_and_the_dra_labels() -> None:
    # docs.cloud.google.com/kubernetes-engine/docs/how-to/set-up-dra: gpu-driver-version=disabled and
    # gke-no-default-nvidia-gpu-device-plugin=true; the autoscaler's and NVIDIA's plugin labels.
    pool = next(r for r in PLAN.resources if r.type == "gcp:container/nodePool:NodePool" and r.name.endswith("-l4")).inputs
    (accelerator,) = pool["nodeConfig"]["guestAccelerators"]
    assert accelerator["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "INSTALLATION_DISABLED"}
    labels = pool["nodeConfig"]["labels"]
    assert labels["gke-no-default-nvidia-gpu-device-plugin"] == "true"
    assert labels["cloud.google.com/gke-nvidia-gpu-dra-driver"] == "true"
    assert labels["nvidia.com/gpu.present"] == "true"
    assert labels["mlplatform.dev/gpu-pool"] == "l4"


def test_a_device_plugin_pool_keeps_gkes_driver_and_no_dra_label() -> None:
    plan = evaluate(validate(base_gke(), "plain"), "plain")
    pool = next(r for r in plan.resources if r.type == "gcp:container/nodePool:NodePool" and r.name.endswith("-l4")).inputs
    assert pool["nodeConfig"]["guestAccelerators"][0]["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "LATEST"}
    assert "nvidia.com/gpu.present" not in pool["nodeConfig"]["labels"]


def test_the_chart_values_are_gkes_dra_recipe() -> None:
    values = nvidia_dra_driver_values(nvidia_dra_driver_args(CONFIG))
    assert values["nameOverride"] == "nvidia-dra-driver-gpu", "the objects keep NVIDIA's chart's names (docs/upgrade.md at v0.4.1)"
    assert values["nvidiaDriverRoot"] == "/home/kubernetes/bin/nvidia"
    assert values["gpuResourcesEnabledOverride"] is True
    assert values["resources"] == {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}}
    assert values["resourceApiVersion"] == "resource.k8s.io/v1"
    assert values["kubeletPlugin"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert values["kubeletPlugin"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
        {"key": "acme.com/team", "operator": "Equal", "value": "vision", "effect": "NoSchedule"},
    ]


def test_the_driver_installer_and_the_chart_are_installed_in_that_order() -> None:
    installer = PLAN.one("kubernetes:yaml/v2:ConfigFile", "nvidia-driver-installer")
    assert installer.inputs["file"].endswith(
        "GoogleCloudPlatform/container-engine-accelerators/992db81257553607f1477945f1b3219632991829/"
        "nvidia-driver-installer/cos/daemonset-preloaded.yaml"
    )
    chart = PLAN.one("kubernetes:helm.sh/v4:Chart", "nvidia-dra-driver-gpu")
    assert (chart.inputs["chart"], chart.inputs["version"]) == ("oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu", "0.4.1")
    assert installer.urn in chart.dependencies


def test_each_team_namespace_gets_a_claim_template_of_a_whole_node() -> None:
    (template,) = [o for o in authored_objects(PLAN) if o["kind"] == "ResourceClaimTemplate"]
    assert template == {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "l4-gpus", "namespace": "vision"},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2}}
                    ]
                }
            }
        },
    }


RUNTIMES = {r["metadata"]["name"]: r for r in cluster_training_runtimes(training_runtimes_args(CONFIG))}


@pytest.mark.parametrize("name", ["torch-distributed-l4", "deepspeed-distributed-l4", "mlx-distributed-l4", "jax-distributed-l4"])
def test_dra_variants_claim_the_nodes_gpus_instead_of_the_device_plugins(name: str) -> None:
    for job in RUNTIMES[name]["spec"]["template"]["spec"]["replicatedJobs"]:
        pod = job["template"]["spec"]["template"]["spec"]
        assert pod["resourceClaims"] == [{"name": "gpus", "resourceClaimTemplateName": "l4-gpus"}]
        (container,) = pod["containers"]
        assert container["resources"] == {"claims": [{"name": "gpus"}]}
        assert "nvidia.com/gpu" not in str(container)
    if crds.available():
        assert validate_object(RUNTIMES[name]) == []


def test_kueue_counts_the_claimed_gpus_as_the_quotas_nvidia_gpu() -> None:
    pools = training_runtimes_args(CONFIG).gpu_pools
    config = yaml.safe_load(manager_config(None, pools))
    assert config["resources"] == {"deviceClassMappings": [{"name": "nvidia.com/gpu", "deviceClassNames": ["gpu.nvidia.com"]}]}
    plain = yaml.safe_load(manager_config(None, training_runtimes_args(validate(base_gke(), "plain")).gpu_pools))
    assert "resources" not in plain


def test_the_gpu_count_guard_leaves_dra_variants_alone() -> None:
    assert gpu_runtimes(training_runtimes_args(CONFIG).gpu_pools) == {}


def test_an_explicitly_disabled_driver_installation_is_what_dra_does_anyway() -> None:
    config = dra_stack(driverVersion="INSTALLATION_DISABLED")
    assert config.cluster.gpu_pools[0].dra  # type: ignore[union-attr]


def test_the_dra_guard_is_installed_and_bound_in_each_team_namespace() -> None:
    vap = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
    policies = [r for r in PLAN.resources if r.type == vap and r.name not in kueue_owners.POLICIES]  # the owner guard: tests/test_kueue_owners.py
    assert [p.name for p in policies] == ["trainjob-dra-gpus"]
    bindings = [o for o in authored_objects(PLAN) if o["kind"] == "ValidatingAdmissionPolicyBinding" and o["spec"]["policyName"] not in kueue_owners.POLICIES]
    assert [(b["metadata"]["name"], b["spec"]["policyName"]) for b in bindings] == [("vision-trainjob-dra-gpus", "trainjob-dra-gpus")]
    # Its match: exactly the DRA pool's four variants (the CEL is judged by the API server in
    # tests/envtest/test_dra.py).
    (condition,) = policies[0].inputs["spec"]["matchConditions"]
    for name in ("torch-distributed-l4", "deepspeed-distributed-l4", "mlx-distributed-l4", "jax-distributed-l4"):
        assert f"'{name}'" in condition["expression"]
