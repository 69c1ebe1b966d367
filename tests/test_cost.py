"""`python -m stacks cost`: idle and ceiling per pool from the price table, and clear stops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from facts.gpu_catalog import ACCELERATORS
from facts.prices import AS_OF, GKE_CLUSTER_FEE, PRICES, SHAPES, SOURCES, PriceError, machine_price
from tooling.cli import EXIT_CONFIG_ERROR, main
from stacks.config import load, validate
from tooling.cost import cost_lines, cost_view
from tests.conftest import base_gke, base_kind, with_changes

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


def test_bundled_gpu_list_prices() -> None:
    assert machine_price("us-central1", "a2-highgpu-1g") == pytest.approx(3.673385, abs=1e-5)
    assert machine_price("us-central1", "a3-highgpu-8g") == pytest.approx(88.25, abs=0.01)


def test_dev_idles_without_gpu_cost(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cost", "dev"]) == 0
    out = capsys.readouterr().out
    gpu_line = next(line for line in out.splitlines() if line.startswith("GPU pool l4"))
    assert gpu_line.split()[-2] == "0.00" and float(gpu_line.split()[-1]) > 0
    assert f"as of {AS_OF.isoformat()}" in out and "spot" in gpu_line


def test_idle_is_fee_system_min_and_gpu_min() -> None:
    raw = with_changes(base_gke(), {f"{C}.location": "us-central1-a", f"{C}.gpuPools.0.min": 1})
    found = lines(raw)
    system = machine_price("us-central1", "e2-standard-8")
    g2 = machine_price("us-central1", "g2-standard-24")
    assert found["control plane"].idle == GKE_CLUSTER_FEE
    assert found["system pool"].idle == pytest.approx(1 * system) and found["system pool"].ceiling == pytest.approx(3 * system)
    assert found["GPU pool l4"].idle == pytest.approx(g2) and found["GPU pool l4"].ceiling == pytest.approx(2 * g2)


def test_regional_pools_count_three_zones() -> None:
    found = lines(base_gke())
    assert found["system pool"].idle == pytest.approx(3 * machine_price("us-central1", "e2-standard-8"))


def test_spot_pool_uses_spot_prices() -> None:
    raw = with_changes(base_gke(), {f"{C}.location": "us-central1-a", f"{C}.gpuPools.0.provisioning": "spot"})
    assert lines(raw)["GPU pool l4"].ceiling == pytest.approx(2 * machine_price("us-central1", "g2-standard-24", spot=True))


def test_dws_pool_priced_on_demand_with_a_note() -> None:
    raw = with_changes(base_gke(), {f"{C}.gpuPools.0.provisioning": "flex-start"})
    view = cost_lines(validate(raw, "test"))
    assert any("no flex-start (DWS) price" in n for n in view.notes)
    assert "(priced on-demand)" in next(l.detail for l in view.lines if l.what == "GPU pool l4")


def test_autoprovisioning_headroom_priced_as_cheapest_machine() -> None:
    raw = with_changes(
        base_gke(),
        {f"{C}.location": "us-central1-a", f"{C}.autoprovisioning.limits": {"cpu": 64, "memory": 256, "nvidia-l4": 8}},
    )
    nap = lines(raw)["autoprovisioning nvidia-l4"]
    # The pool reaches 2 nodes x 2 L4 = 4; NAP may add 4 more, as 4 x g2-standard-4 (cheapest per L4).
    assert "4 x g2-standard-4" in nap.detail
    assert nap.idle == 0 and nap.ceiling == pytest.approx(4 * machine_price("us-central1", "g2-standard-4"))


def test_t4_pool_adds_attached_gpus() -> None:
    pool = {"name": "t4", "accelerator": "nvidia-tesla-t4", "machineType": "n1-standard-8", "max": 1}
    raw = with_changes(base_gke(), {f"{C}.location": "us-central1-a", f"{C}.gpuPools": [pool], f"{C}.autoprovisioning": {"enabled": False}})
    assert lines(raw)["GPU pool t4"].ceiling == pytest.approx(machine_price("us-central1", "n1-standard-8") + 4 * 0.35)


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
    assert "no price for machine type 'c3-standard-8'" in capsys.readouterr().err


def test_price_error_for_unpriced_gpu_machine() -> None:
    with pytest.raises(PriceError, match="a4-highgpu-8g"):
        machine_price("us-central1", "a4-highgpu-8g")
