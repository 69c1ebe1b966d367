"""The kind stack: a local cluster created and deleted through pulumi-command."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

from facts.versions import KIND_NODE_IMAGE
from tests.conftest import base_kind, with_changes
from tooling.plan import Plan


def test_kind_cluster_is_created_and_deleted_by_command(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    command = plan.one("command:local:Command", "mlplatform").inputs
    assert command["create"].startswith("kind create cluster --name mlplatform --config -")
    assert command["delete"] == "kind delete cluster --name mlplatform"
    assert command["logging"] == "stderr"  # stdout is the kubeconfig


def test_a_new_node_image_deletes_the_old_cluster_before_creating_the_new(shipped_plan: Callable[[str], Plan]) -> None:
    """The config is the replacement trigger; `kind create` of a name that exists fails."""
    command = shipped_plan("kind").one("command:local:Command", "mlplatform")
    assert command.inputs["triggers"] == [command.inputs["stdin"]]
    assert command.delete_before_replace


def test_kind_config_pins_image_and_topology(shipped_plan: Callable[[str], Plan]) -> None:
    command = shipped_plan("kind").one("command:local:Command", "mlplatform").inputs
    config = yaml.safe_load(command["stdin"])
    assert [n["role"] for n in config["nodes"]] == ["control-plane", "worker", "worker"]
    assert {n["image"] for n in config["nodes"]} == {f"kindest/node:{KIND_NODE_IMAGE.version}"}
    patch = yaml.safe_load(config["nodes"][0]["kubeadmConfigPatches"][0])
    assert patch["apiServer"]["extraArgs"]["service-account-issuer"] == "https://kubernetes.default.svc"
    # No apiVersion: kind matches the patch to v1beta3 and v1beta4 alike (1.36 nodes get v1beta4).
    assert set(patch) == {"kind", "apiServer"} and patch["kind"] == "ClusterConfiguration"


def test_kind_provider_gets_the_secret_kubeconfig(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    provider = plan.one("pulumi:providers:kubernetes", "k8s")
    command = plan.one("command:local:Command", "mlplatform")
    assert provider.inputs["kubeconfig"] == "[secret]"
    assert command.urn in provider.dependencies


def test_kind_provider_drops_the_objects_of_a_deleted_cluster_from_state(shipped_plan: Callable[[str], Plan]) -> None:
    """`kind delete cluster` takes every object with it; refresh and destroy then forget them."""
    assert shipped_plan("kind").one("pulumi:providers:kubernetes", "k8s").inputs["deleteUnreachable"] == "true"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_gke_provider_keeps_unreachable_objects_in_state(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    assert "deleteUnreachable" not in shipped_plan(stack).one("pulumi:providers:kubernetes", "k8s").inputs


def test_existing_context_creates_no_cluster(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    plan = plan_of(with_changes(base_kind(), {"mlplatform:cluster.existingContext": "kind-dev"}))
    assert plan.of_type("command:local:Command") == []
    provider = plan.one("pulumi:providers:kubernetes", "k8s").inputs
    assert provider["context"] == "kind-dev"
    assert "deleteUnreachable" not in provider  # not our cluster: its objects stay in the state


def test_no_gcp_resources_on_kind(shipped_plan: Callable[[str], Plan]) -> None:
    assert not [r for r in shipped_plan("kind").resources if r.type.startswith("gcp:")]
