"""The Args each component gets (each cut beside what takes it): pure functions of the stack model, no engine."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from components.istio import IstioArgs
from components.kubeflow import KubeflowInstallArgs
from components.kueue import KueueArgs, kueue_args
from components.platform import PlatformArgs
from components.trainer import TrainerInstallArgs
from infra.args import GkeClusterArgs, KindClusterArgs
from plumbing.base import ChartArgs
from program import args_of as platform_args
from stackmodel.components.dcgm import DCGM_EXPORTER
from stackmodel.components.istio import ISTIO
from stackmodel.components.jobset import JOBSET
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.kuberay import KUBERAY
from stackmodel.components.kueue import KUEUE
from stackmodel.components.trainer import TRAINER
from stackmodel.config import load, validate
from stackmodel.secrets import DEX_PASSWORD_HASHES, IAP_CLIENT_SECRET
from tests.conftest import base_gke, base_kind, with_changes

C = "mlplatform:components"


def args_of(raw: dict[str, Any], secrets: Any = None) -> PlatformArgs:
    return platform_args(validate(raw, "test"), secrets or {})


def test_args_are_frozen() -> None:
    args = args_of(base_gke())
    with pytest.raises(dataclasses.FrozenInstanceError):
        args.teams = ()  # type: ignore[misc]


def test_a_component_switched_off_gets_no_args() -> None:
    args = args_of(with_changes(base_kind(), {f"{C}.kuberay": {"enabled": False}}))
    assert args.of(KUBERAY, ChartArgs) is None and args.of(JOBSET, ChartArgs) is not None


def test_gke_addons_replace_their_components() -> None:
    raw = with_changes(
        base_gke(),
        {
            "mlplatform:cluster.managedPrometheus": True,
            f"{C}.kuberay": {"source": "gke-addon"},
            f"{C}.dcgmExporter": {"enabled": True, "source": "gke-managed"},
        },
    )
    args = args_of(raw)
    assert args.of(KUBERAY, ChartArgs) is None and args.of(DCGM_EXPORTER, object) is None
    assert isinstance(args.cluster, GkeClusterArgs)
    assert args.cluster.ray_operator and args.cluster.managed_dcgm


def test_kind_gets_a_kind_cluster_and_no_gpu_pools() -> None:
    args = args_of(base_kind())
    assert isinstance(args.cluster, KindClusterArgs)
    kueue, trainer = args.of(KUEUE, KueueArgs), args.of(TRAINER, TrainerInstallArgs)
    assert kueue is not None and kueue.gpu_pools == ()
    assert trainer is not None and trainer.runtimes.gpu_pools == ()


def test_gpu_pools_reach_kueue_and_the_runtimes_in_stack_order() -> None:
    config = validate(base_gke(), "test")
    assert [p.name for p in kueue_args(config).gpu_pools] == ["l4"]
    trainer = platform_args(config, {}).of(TRAINER, TrainerInstallArgs)
    assert trainer is not None and trainer.runtimes.gpu_pools == kueue_args(config).gpu_pools


def test_the_https_gateway_only_on_gke_with_a_hostname_and_its_secret_from_the_edge() -> None:
    prod = load("prod")
    iap = object()
    args = platform_args(prod, {IAP_CLIENT_SECRET: iap})  # type: ignore[dict-item]
    kubeflow, istio = args.of(KUBEFLOW, KubeflowInstallArgs), args.of(ISTIO, IstioArgs)
    assert kubeflow is not None and kubeflow.https_gateway is not None and kubeflow.https_gateway.iap_client_secret is iap
    assert istio is not None and istio.gke_ingress
    dev = platform_args(load("dev"), {}).of(KUBEFLOW, KubeflowInstallArgs)
    assert dev is not None and dev.https_gateway is None


def test_secrets_reach_only_the_component_that_needs_them() -> None:
    hashes = object()
    args = args_of(with_changes(base_kind(), {f"{C}.kubeflow": {"auth": {"staticUsers": ["a@acme.com"]}}}), {DEX_PASSWORD_HASHES: hashes})
    kubeflow = args.of(KUBEFLOW, KubeflowInstallArgs)
    assert kubeflow is not None and kubeflow.kubeflow.dex_password_hashes is hashes
    assert kubeflow.kubeflow.oidc_client_secret is None


def test_teams_get_a_google_identity_only_on_gke() -> None:
    team = {"name": "vision", "owner": "lead@acme.com"}
    (kind,) = args_of(with_changes(base_kind(), {"mlplatform:teams": [team]})).teams
    (gke,) = args_of(with_changes(base_gke(), {"mlplatform:teams": [team]})).teams
    assert kind.google is None
    assert gke.google is not None and gke.google.project == "acme-test" and gke.google.region == "us-central1"
