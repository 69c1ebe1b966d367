"""`python -m stacks cost`: idle and ceiling per pool from the price table, and clear stops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from facts.gpu_catalog import ACCELERATORS
from facts.prices import AS_OF, PRICES, SHAPES, SOURCES, PriceError, machine_price
from stackmodel.config import load, validate
from tests.conftest import base_gke, base_kind, with_changes
from tooling.cli import EXIT_CONFIG_ERROR, main
from tooling.cost import cost_lines, cost_view

C = "mlplatform:cluster"


def lines(raw: dict[str, Any]) -> dict[str, Any]:
    return {line.what: line for line in cost_lines(validate(raw, "test")).lines}


def test_price_table_is_dated_and_sourced() -> None:
    assert AS_OF.year >= 2026
    for page in ("vm-instance-pricing", "gpus-pricing", "spot-vms/pricing", "kubernetes-engine/pricing"):
        assert any(page in url for url in SOURCES)
    assert "us-central1" in PRICES


def test_shipped_machine_types_are_priced() -> None:
    for stack in ("dev", "prod"):
        cluster = load(stack).cluster
        for machine in [cluster.system_pool.machine_type] + [p.machine_type for p in cluster.gpu_pools]:  # type: ignore[union-attr]
            assert machine_price("us-central1", machine) > 0


def test_catalog_machine_types_priced_or_named_as_missing() -> None:
    missing = sorted(m for acc in ACCELERATORS.values() for m in acc.machine_types if m not in SHAPES)
    assert missing == ["a3-megagpu-8g", "a3-ultragpu-8g", "a4-highgpu-8g"]  # see facts/prices.py docstring


def test_spot_is_cheaper_than_on_demand() -> None:
    for machine in ("e2-standard-8", "g2-standard-24", "a3-highgpu-8g", "n1-standard-8"):
        assert machine_price("us-central1", machine, spot=True) < machine_price("us-central1", machine)


# Hourly prices worked out by hand from facts/prices.py (us-central1):
# price = vCPUs x vCPU rate + GiB x GiB rate + bundled GPUs x GPU rate (+ attached GPUs).
E2_STANDARD_8 = 0.268024  # 8 x 0.021811 + 32 GiB x 0.002923
G2_STANDARD_24 = 2.000704  # 24 x 0.024988 + 96 GiB x 0.002927 + 2 L4 x 0.56
G2_STANDARD_24_SPOT = 0.80032  # 24 x 0.0100 + 96 GiB x 0.00117 + 2 L4 x 0.224
G2_STANDARD_4 = 0.706784  # 4 x 0.024988 + 16 GiB x 0.002927 + 1 L4 x 0.56
N1_STANDARD_8 = 0.379998  # 8 x 0.031611 + 30 GiB x 0.004237 (T4s are attached, priced apart)
A2_HIGHGPU_1G = 3.673385  # 12 x 0.031611 + 85 GiB x 0.004237 + 1 A100 x 2.933908
A3_HIGHGPU_8G = 88.252352  # 208 x 0.031611 + 1872 GiB x 0.004237 + 8 H100 x 9.2182


@pytest.mark.parametrize(
    ("machine", "spot", "price"),
    [
        ("e2-standard-8", False, E2_STANDARD_8),
        ("g2-standard-24", False, G2_STANDARD_24),
        ("g2-standard-24", True, G2_STANDARD_24_SPOT),
        ("g2-standard-4", False, G2_STANDARD_4),
        ("n1-standard-8", False, N1_STANDARD_8),
        ("a2-highgpu-1g", False, A2_HIGHGPU_1G),
        ("a3-highgpu-8g", False, A3_HIGHGPU_8G),
    ],
)
def test_machine_price_is_vcpus_memory_and_bundled_gpus(machine: str, spot: bool, price: float) -> None:
    assert machine_price("us-central1", machine, spot=spot) == pytest.approx(price, abs=1e-6)


def test_attached_gpus_are_priced_per_gpu_on_top() -> None:
    # n1-standard-8 + 4 T4 x 0.35
    assert machine_price("us-central1", "n1-standard-8", attached=("nvidia-tesla-t4", 4)) == pytest.approx(1.779998)


def test_a3_highgpu_8g_totals_its_long_standing_list_price() -> None:
    assert machine_price("us-central1", "a3-highgpu-8g") == pytest.approx(88.25, abs=0.01)


def test_dev_idles_without_gpu_cost(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cost", "dev"]) == 0
    out = capsys.readouterr().out
    gpu_line = next(line for line in out.splitlines() if line.startswith("GPU pool l4"))
    assert gpu_line.split()[-2] == "0.00" and float(gpu_line.split()[-1]) > 0
    assert f"as of {AS_OF.isoformat()}" in out and "spot" in gpu_line


def test_idle_is_fee_system_min_and_gpu_min() -> None:
    # A GPU pool keeps nodes only in prod (stackmodel/rules/ gpu-pools-scale-to-zero).
    prod = {"mlplatform:environment": "prod", f"{C}.masterAuthorizedNetworks": [{"cidr": "203.0.113.0/24", "name": "office"}]}
    raw = with_changes(base_gke(), {**prod, f"{C}.location": "us-central1-a", f"{C}.gpuPools.0.min": 1})
    found = lines(raw)
    assert found["control plane"].idle == 0.10  # GKE Standard, per cluster per hour
    # zonal: system pool 1..3 e2-standard-8, GPU pool 1..2 g2-standard-24
    assert found["system pool"].idle == pytest.approx(E2_STANDARD_8)
    assert found["system pool"].ceiling == pytest.approx(0.804072)  # 3 x 0.268024
    assert found["GPU pool l4"].idle == pytest.approx(G2_STANDARD_24)
    assert found["GPU pool l4"].ceiling == pytest.approx(4.001408)  # 2 x 2.000704


def test_regional_pools_count_three_zones() -> None:
    found = lines(base_gke())
    assert found["system pool"].idle == pytest.approx(0.804072)  # min 1 node x 3 zones x 0.268024


def test_spot_pool_uses_spot_prices() -> None:
    raw = with_changes(base_gke(), {f"{C}.location": "us-central1-a", f"{C}.gpuPools.0.provisioning": "spot"})
    assert lines(raw)["GPU pool l4"].ceiling == pytest.approx(1.60064)  # 2 nodes x 0.80032 (Spot)


def test_dws_pool_priced_on_demand_with_its_floor_in_a_note() -> None:
    raw = with_changes(base_gke(), {f"{C}.gpuPools.0.provisioning": "flex-start"})
    view = cost_lines(validate(raw, "test"))
    assert "(priced on-demand)" in next(line.detail for line in view.lines if line.what == "GPU pool l4")
    # g2-standard-24: (24 vCPUs x 0.024988 + 2 GPUs x 0.56) x 0.47 + 96 GiB x 0.002927
    # = (0.599712 + 1.12) x 0.47 + 0.280992 = 0.80826464 + 0.280992 = 1.08925664
    note = next(n for n in view.notes if n.startswith("pool l4:"))
    assert "flex-start (DWS) shown at on-demand, its upper bound" in note and "a node costs from 1.09/h" in note


def test_the_dws_floor_discounts_vcpus_and_gpus_not_memory() -> None:
    # a3-highgpu-8g: (208 x 0.031611 + 8 x 9.2182) x (1 - 0.53) + 1872 GiB x 0.004237
    # = 80.320688 x 0.47 + 7.931664 = 45.68238736 (on-demand: 88.252352)
    assert machine_price("us-central1", "a3-highgpu-8g", dws_floor=True) == pytest.approx(45.68238736)
    assert machine_price("us-central1", "a3-highgpu-8g") == pytest.approx(88.252352)


def test_autoprovisioning_headroom_priced_as_cheapest_machine() -> None:
    raw = with_changes(
        base_gke(),
        # the pools take 72 vCPUs and 288 GiB themselves (3 e2-standard-8, 2 g2-standard-24)
        {f"{C}.location": "us-central1-a", f"{C}.autoprovisioning.limits": {"cpu": 96, "memory": 384, "nvidia-l4": 8}},
    )
    nap = lines(raw)["autoprovisioning nvidia-l4"]
    # The pool reaches 2 nodes x 2 L4 = 4; NAP may add 4 more, as 4 x g2-standard-4 (cheapest per L4).
    assert "4 x g2-standard-4" in nap.detail
    assert nap.idle == 0 and nap.ceiling == pytest.approx(2.827136)  # 4 x 0.706784


def test_t4_pool_adds_attached_gpus() -> None:
    pool = {"name": "t4", "accelerator": "nvidia-tesla-t4", "machineType": "n1-standard-8", "max": 1}
    raw = with_changes(base_gke(), {f"{C}.location": "us-central1-a", f"{C}.gpuPools": [pool], f"{C}.autoprovisioning": {"enabled": False}})
    # 1 node: n1-standard-8 (0.379998) + its 4 T4s (the most N1 carries) x 0.35
    assert lines(raw)["GPU pool t4"].ceiling == pytest.approx(1.779998)


def test_kind_has_no_cloud_cost() -> None:
    assert "no cloud cost" in cost_view(validate(base_kind(), "test"))


def _write(tmp_path: Path, raw: dict[str, Any]) -> str:
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text(yaml.safe_dump({"config": raw}))
    return str(path)


def test_unknown_region_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = with_changes(base_gke(), {f"{C}.location": "europe-west4"})
    assert main(["cost", _write(tmp_path, raw)]) == EXIT_CONFIG_ERROR
    assert "no prices for region 'europe-west4'" in capsys.readouterr().err


def test_unknown_machine_type_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = with_changes(base_gke(), {f"{C}.systemPool": {"machineType": "c3-standard-8"}})
    assert main(["cost", _write(tmp_path, raw)]) == EXIT_CONFIG_ERROR
    assert "'c3-standard-8' is not a machine type facts/prices.py knows" in capsys.readouterr().err
    # Taken knowingly, the stack loads, and the cost view says what it cannot price.
    raw["mlplatform:overrides"] = {"machineTypes": ["c3-standard-8"]}
    assert main(["cost", _write(tmp_path, raw)]) == EXIT_CONFIG_ERROR
    assert "no price for machine type 'c3-standard-8'" in capsys.readouterr().err


def test_price_error_for_unpriced_gpu_machine() -> None:
    with pytest.raises(PriceError, match="a4-highgpu-8g"):
        machine_price("us-central1", "a4-highgpu-8g")
