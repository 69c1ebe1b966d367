"""Kubernetes quantities: what the stack file may say, judged as the API server judges it."""

from __future__ import annotations

from decimal import Decimal

import pytest

from stackmodel import quantity
from stackmodel.components.monitoring import MONITORING
from stackmodel.config import ConfigError, validate
from tests.conftest import base_gke, base_kind, with_changes
from tests.support.cases import Case

ACCEPTED = [
    ("64", 64),
    ("0", 0),
    ("500m", "0.5"),
    (".5", "0.5"),
    ("5.", 5),
    ("1.5", "1.5"),
    ("+2", 2),
    ("1e3", 1000),
    ("1E3", 1000),
    ("1e+3", 1000),
    ("1.5e3", 1500),
    ("25e-3", "0.025"),
    ("100n", "1E-7"),
    ("10u", "0.00001"),
    ("1k", 1000),
    ("2M", 2_000_000),
    ("1G", 10**9),
    ("1E", 10**18),
    ("256Gi", 256 * 2**30),
    ("1.5Gi", 3 * 2**29),
    ("1Ei", 2**60),
]
# Beside plain nonsense: what kubernetes.utils.parse_quantity takes but the API server does not.
LAXER_THAN_THE_SERVER = [" 5", "5 ", "1_000", "NaN", "inf", "Infinity", "1K", "1mi", "1e3Mi", "٣"]
REJECTED = [*LAXER_THAN_THE_SERVER, "", "lots", ".", "1e", "1e3.5", "0x10", "1 Gi", "1GB", "1gi", "1ki", "--1"]


@pytest.mark.parametrize(("text", "value"), ACCEPTED, ids=[t for t, _ in ACCEPTED])
def test_quantity_is_read_as_the_api_server_reads_it(text: str, value: int | str) -> None:
    assert quantity.parse(text) == Decimal(value)


@pytest.mark.parametrize("text", REJECTED, ids=[repr(t) for t in REJECTED])
def test_what_the_api_server_rejects_is_rejected_with_how_to_write_one(text: str) -> None:
    with pytest.raises(ValueError) as caught:  # noqa: PT011 (the whole message is asserted below)
        quantity.parse(text)
    assert str(caught.value) == (
        f"{text!r} is not a Kubernetes quantity such as 64, 500m or 256Gi: "
        "a number, then nothing, m, k, M, G, T, Ki, Mi, Gi, Ti or an exponent such as e3"
    )


def test_the_grammar_is_needed_because_the_client_alone_is_laxer() -> None:
    from kubernetes.utils.quantity import parse_quantity

    for text in LAXER_THAN_THE_SERVER:
        parse_quantity(text)  # no error: the client takes it


T = "mlplatform:teams"
M = "mlplatform:components.monitoring"
HOW = quantity.HOW


def team(**fields: object) -> dict[str, object]:
    return {"name": "vision", "owner": "a@acme.com", **fields}


BAD_STACKS = [
    Case("cpu in capital K", {T: [team(quota={"cpu": "1K"})]}, f"{T}[0].quota.cpu", f"'1K' is not a Kubernetes quantity such as 64, 500m or 256Gi: {HOW}"),
    Case("memory with a space", {T: [team(quota={"memory": "16 Gi"})]}, f"{T}[0].quota.memory", f"'16 Gi' is not a Kubernetes quantity such as 64, 500m or 256Gi: {HOW}"),
    Case("negative memory", {T: [team(quota={"memory": "-1Gi"})]}, f"{T}[0].quota.memory", "'-1Gi' is negative; use 0 or more"),
    Case("cpu as a list", {T: [team(quota={"cpu": [1]})]}, f"{T}[0].quota.cpu", f"[1] is not a Kubernetes quantity such as 64, 500m or 256Gi: {HOW}"),
    Case("ray worker memory in GB", {T: [team(ray={"workerMemory": "16GB"})]}, f"{T}[0].ray.workerMemory", f"'16GB' is not a Kubernetes quantity such as 64, 500m or 256Gi: {HOW}"),
    Case("ray worker cpu negative", {T: [team(ray={"workerCpu": -2})]}, f"{T}[0].ray.workerCpu", "'-2' is negative; use 0 or more"),
    Case("storage not a quantity", {f"{M}.storageSize": "50 GB"}, f"{M}.storageSize", "'50 GB' is not a volume size such as 50Gi: a Kubernetes quantity of at least 1Mi (a bare number counts bytes)"),
    Case("storage in bytes", {f"{M}.storageSize": "1000"}, f"{M}.storageSize", "'1000' is not a volume size such as 50Gi: a Kubernetes quantity of at least 1Mi (a bare number counts bytes)"),
]


@pytest.mark.parametrize("case", BAD_STACKS, ids=[c.id for c in BAD_STACKS])
def test_bad_quantity_in_a_stack_names_its_path_and_the_fix(case: Case) -> None:
    with pytest.raises(ConfigError) as caught:
        validate(case.stack(), "bad.yaml")
    assert [(p.path, p.message) for p in caught.value.problems] == [(case.path, case.message)]


@pytest.mark.parametrize(("cpu", "kept"), [("1e3", "1e3"), (".5", ".5"), (0.5, "0.5"), (64, "64"), ("1.5", "1.5")])
def test_quantities_in_a_stack_are_kept_as_written(cpu: object, kept: str) -> None:
    # Default requests small enough for the smallest quota here (rule team-container-defaults-fit-quota).
    small = {"cpu": "100m", "cpuLimit": "100m"}
    config = validate(
        with_changes(base_kind(), {T: [team(quota={"cpu": cpu}, ray={"workerCpu": cpu, "headCpu": cpu}, containerDefaults=small)]}), "ok"
    )
    ray = config.teams[0].ray
    assert ray is not None and (config.teams[0].quota.cpu, ray.worker_cpu, ray.head_cpu) == (kept, kept, kept)


@pytest.mark.parametrize("size", ["50Gi", "1Mi", "100G", "1.5Ti", "2e12"])
def test_volume_sizes_are_any_quantity_from_1mi(size: str) -> None:
    config = validate(with_changes(base_gke(), {f"{M}.storageSize": size}), "ok")
    assert config.components[MONITORING].storage_size == size
