"""Hourly list prices (USD) for the cost view (`python -m stacks cost <stack>`), as data.

Compute Engine bills a VM by its vCPUs, memory and GPUs; the accelerator-optimized
families (G2, A2, A3) bundle their GPUs, so a machine's price here is
vCPUs x vCPU rate + GiB x memory rate + bundled GPUs x GPU rate of its family, and N1
machines add their attached GPUs (T4) at the GPU rate.

Sources (us-central1, on-demand and Spot list prices, no discounts):
- https://cloud.google.com/compute/vm-instance-pricing
- https://cloud.google.com/compute/gpus-pricing
- https://cloud.google.com/spot-vms/pricing
- https://cloud.google.com/kubernetes-engine/pricing (cluster management fee)
- https://cloud.google.com/sql/pricing (Cloud SQL for MySQL, Enterprise edition: the pipelines database)

These figures must be re-checked against those pages before anyone budgets on them:
Spot prices change up to once a day, GPU list prices moved in 2025, and the figures here
were transcribed, not fetched (no network in this change). A3 on-demand is set so that
a3-highgpu-8g totals its long-standing list price. Dynamic Workload Scheduler (queued,
flex-start) SKUs are not in this table: GKE documents them as discounted up to 53% on
vCPUs and GPUs (DWS_MAX_DISCOUNT), so the view prices those pools on-demand, an upper
bound, and shows the floor the maximum discount gives beside it. Machine types and regions not listed here are
reported as unknown, never estimated: a3-megagpu-8g, a3-ultragpu-8g and a4-highgpu-8g
are sold mostly through reservations and DWS and have no row yet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from types import MappingProxyType

from facts.gpu_catalog import bundled_gpus

AS_OF = date(2026, 11, 30)
SOURCES = (
    "https://cloud.google.com/compute/vm-instance-pricing",
    "https://cloud.google.com/compute/gpus-pricing",
    "https://cloud.google.com/spot-vms/pricing",
    "https://cloud.google.com/kubernetes-engine/pricing",
    "https://cloud.google.com/sql/pricing",
)
DWS_MAX_DISCOUNT = 0.53
"""Dynamic Workload Scheduler's largest discount on vCPUs and GPUs (memory is not named),
per GKE's "About flex-start provisioning mode", section "Flex-start pricing"
(https://cloud.google.com/kubernetes-engine/docs/concepts/dws, read 2026-12-01): "discounts
(up to 53%) for vCPU, GPU and TPU". The per-SKU DWS prices are on the GPU pricing page."""
DWS_SOURCE = "https://cloud.google.com/kubernetes-engine/docs/concepts/dws"
NETWORK_PRICING = "https://cloud.google.com/vpc/network-pricing"
NETWORK_PRICING_READ = "2026-12-04"
FABRIC_NETWORKS_HOURLY = 0.0
"""What a GPU pool's fabric VPCs, subnets and firewall rules cost by the hour: nothing. Google's
network pricing page (NETWORK_PRICING, as transcribed in a stored copy dated 2026-09-20; the
full page was not among the stored copies) prices data transfer, IP addresses and the network
services, and no VPC network, subnet or VPC firewall rule; "data transfer to the same Google
Cloud zone using internal IPv4/IPv6 within same VPC: no charge"."""
INTER_ZONE_PER_GIB = 0.01
"""The same page: VM-to-VM data transfer between zones of one region, USD per GiB (a fabric pool
spread over zones pays it for its GPU traffic; an rdma pool is always in one zone)."""
GKE_CLUSTER_FEE = 0.10
"""Per cluster per hour, Standard edition, regional or zonal (the free-tier credit covers one zonal cluster)."""


@dataclass(frozen=True)
class Rates:
    """One machine family's hourly rates in one region."""

    vcpu: float
    gib: float
    gpu: float = 0.0
    """Per bundled (G2/A2/A3) or attached (N1) GPU."""


@dataclass(frozen=True)
class FamilyPrices:
    on_demand: Rates
    spot: Rates


@dataclass(frozen=True)
class Shape:
    """A predefined machine type: vCPUs, memory, and the GPUs it bundles."""

    vcpus: int
    gib: float
    gpus: int = 0
    """From the GPU catalog (facts/gpu_catalog.py `bundled_gpus`), the one home of GPU counts."""


def _shape(machine_type: str, vcpus: int, gib: float) -> Shape:
    return Shape(vcpus, gib, bundled_gpus(machine_type))


def _shapes() -> dict[str, Shape]:
    sizes: dict[str, tuple[int, float]] = {}
    for n in (2, 4, 8, 16, 32):
        sizes[f"e2-standard-{n}"] = (n, 4 * n)
    for n in (1, 2, 4, 8, 16, 32, 64, 96):
        sizes[f"n1-standard-{n}"] = (n, 3.75 * n)
    for n in (2, 4, 8, 16, 32, 64, 96):
        sizes[f"n1-highmem-{n}"] = (n, 6.5 * n)
    for n in (4, 8, 12, 16, 24, 32, 48, 96):
        sizes[f"g2-standard-{n}"] = (n, 4 * n)
    # A2/A3 sizes grow with the GPUs in the name: 12 vCPUs + 85 (ultra: 170) GiB, or
    # 26 vCPUs + 234 GiB, per GPU.
    for gpus in (1, 2, 4, 8):
        sizes[f"a2-highgpu-{gpus}g"] = (12 * gpus, 85 * gpus)
        sizes[f"a2-ultragpu-{gpus}g"] = (12 * gpus, 170 * gpus)
        sizes[f"a3-highgpu-{gpus}g"] = (26 * gpus, 234 * gpus)
    sizes["a2-megagpu-16g"] = (96, 1360)
    return {name: _shape(name, vcpus, gib) for name, (vcpus, gib) in sizes.items()}


SHAPES: Mapping[str, Shape] = MappingProxyType(_shapes())

FAMILY_OF_PREFIX = (
    ("e2-", "e2"),
    ("n1-", "n1"),
    ("g2-", "g2"),
    ("a2-ultragpu-", "a2-ultra"),
    ("a2-", "a2"),
    ("a3-highgpu-", "a3-high"),
)

PRICES: Mapping[str, Mapping[str, FamilyPrices]] = MappingProxyType(
    {
        "us-central1": MappingProxyType(
            {
                "e2": FamilyPrices(Rates(0.021811, 0.002923), Rates(0.00872, 0.001169)),
                "n1": FamilyPrices(Rates(0.031611, 0.004237), Rates(0.00663, 0.000889)),
                "g2": FamilyPrices(Rates(0.024988, 0.002927, gpu=0.56), Rates(0.0100, 0.00117, gpu=0.224)),
                "a2": FamilyPrices(Rates(0.031611, 0.004237, gpu=2.933908), Rates(0.01264, 0.001695, gpu=1.17)),
                "a2-ultra": FamilyPrices(Rates(0.031611, 0.004237, gpu=3.9692), Rates(0.01264, 0.001695, gpu=1.57)),
                "a3-high": FamilyPrices(Rates(0.031611, 0.004237, gpu=9.2182), Rates(0.0102, 0.000888, gpu=2.25)),
            }
        )
    }
)

ATTACHED_GPUS: Mapping[str, Mapping[str, FamilyPrices]] = MappingProxyType(
    {"us-central1": MappingProxyType({"nvidia-tesla-t4": FamilyPrices(Rates(0, 0, gpu=0.35), Rates(0, 0, gpu=0.14))})}
)
"""GPUs attached to N1 machines, priced per GPU on top of the machine."""


class PriceError(Exception):
    """A region, machine type or accelerator this table has no price for."""


def _family(machine_type: str) -> str:
    for prefix, family in FAMILY_OF_PREFIX:
        if machine_type.startswith(prefix):
            return family
    raise PriceError(f"no price for machine type {machine_type!r} in facts/prices.py; add it from {SOURCES[0]}")


def _region(region: str) -> Mapping[str, FamilyPrices]:
    if region not in PRICES:
        raise PriceError(
            f"no prices for region {region!r} in facts/prices.py (have: {', '.join(PRICES)}); add them from {SOURCES[0]}"
        )
    return PRICES[region]


def machine_price(
    region: str, machine_type: str, spot: bool = False, attached: tuple[str, int] | None = None, dws_floor: bool = False
) -> float:
    """USD per hour for one node: the machine with its bundled GPUs, plus attached GPUs (N1).
    `dws_floor`: on-demand with DWS's largest discount on vCPUs and GPUs (a lower bound)."""
    family = _region(region).get(_family(machine_type))
    shape = SHAPES.get(machine_type)
    if family is None or shape is None:
        raise PriceError(f"no price for machine type {machine_type!r} in {region} in facts/prices.py; add it from {SOURCES[0]}")
    rates = family.spot if spot else family.on_demand
    discounted = 1 - DWS_MAX_DISCOUNT if dws_floor else 1.0
    price = (shape.vcpus * rates.vcpu + shape.gpus * rates.gpu) * discounted + shape.gib * rates.gib
    if attached is not None:
        accelerator, count = attached
        gpu = ATTACHED_GPUS.get(region, {}).get(accelerator)
        if gpu is None:
            raise PriceError(f"no price for GPU {accelerator!r} in {region} in facts/prices.py; add it from {SOURCES[1]}")
        price += count * (gpu.spot if spot else gpu.on_demand).gpu * discounted
    return price


# --- Cloud SQL for MySQL (the pipelines database on GKE) ------------------------------------

CLOUD_SQL_SOURCE = "https://cloud.google.com/sql/pricing"
HOURS_PER_MONTH = 730
"""What Google's pricing pages take a month to be when they turn monthly prices into hourly ones."""


@dataclass(frozen=True)
class CloudSqlRates:
    """Cloud SQL Enterprise edition (MySQL) list prices in one region, zonal; a regional (HA)
    instance pays twice for each."""

    vcpu: float
    """Per vCPU hour."""
    gib: float
    """Per GiB of memory hour."""
    ssd_gb_month: float
    """Per GB of SSD storage month."""


CLOUD_SQL: Mapping[str, CloudSqlRates] = MappingProxyType({"us-central1": CloudSqlRates(vcpu=0.0413, gib=0.0070, ssd_gb_month=0.170)})
CLOUD_SQL_SHARED_CORE: Mapping[str, float] = MappingProxyType({"db-f1-micro": 0.0105, "db-g1-small": 0.0350})
"""Shared-core tiers, per hour in us-central1 (zonal; their price includes the machine)."""


def cloud_sql_price(region: str, tier: str, disk_gb: int, high_availability: bool) -> float:
    """USD per hour of one instance: the machine and its SSD (backups, binary logs and network are
    billed by use and not here). Tiers: db-custom-<vCPUs>-<memory MiB> or a shared core."""
    rates = CLOUD_SQL.get(region)
    if rates is None:
        raise PriceError(f"no Cloud SQL prices for region {region!r} in facts/prices.py (have: {', '.join(CLOUD_SQL)}); add them from {CLOUD_SQL_SOURCE}")
    copies = 2 if high_availability else 1
    if tier in CLOUD_SQL_SHARED_CORE:
        machine = CLOUD_SQL_SHARED_CORE[tier]
    else:
        parts = tier.split("-")
        if len(parts) != 4 or parts[:2] != ["db", "custom"]:
            raise PriceError(f"no price for Cloud SQL tier {tier!r} in facts/prices.py; add it from {CLOUD_SQL_SOURCE}")
        machine = int(parts[2]) * rates.vcpu + int(parts[3]) / 1024 * rates.gib
    return copies * (machine + disk_gb * rates.ssd_gb_month / HOURS_PER_MONTH)


def vcpus(machine_type: str) -> int:
    shape = SHAPES.get(machine_type)
    if shape is None:
        raise PriceError(f"no shape for machine type {machine_type!r} in facts/prices.py")
    return shape.vcpus
