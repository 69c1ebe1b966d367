"""The cost view of a stack: what it costs per hour idle, and at full autoscale.

Idle: the GKE cluster fee, the system pool at its minimum, each GPU pool at its
minimum, and the pipelines database (Cloud SQL, always on). Ceiling: every pool at its maximum, plus what node auto-provisioning may add
on top within its limits (GPUs as the cheapest machine that carries each accelerator,
CPUs as the system pool's machine). Node counts are per zone, as GKE counts them.
Prices come from facts/prices.py; an unknown region or machine type stops the view.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from facts.gpu_catalog import ACCELERATORS
from facts.prices import (
    AS_OF,
    DWS_MAX_DISCOUNT,
    DWS_SOURCE,
    FABRIC_NETWORKS_HOURLY,
    GKE_CLUSTER_FEE,
    INTER_ZONE_PER_GIB,
    NETWORK_PRICING,
    SOURCES,
    PriceError,
    cloud_sql_price,
    machine_price,
    vcpus,
)
from infra.args import fabric_pools
from stackmodel.components.pipelines import PIPELINES
from stackmodel.schema import GkeClusterConfig, GpuPool, Provisioning
from stackmodel.stack import PlatformConfig

__all__ = ["CostLine", "CostView", "PriceError", "cost_lines", "cost_view"]

DWS = (Provisioning.QUEUED, Provisioning.FLEX_START)


@dataclass(frozen=True)
class CostLine:
    """One thing that costs money, USD per hour idle and at its ceiling."""

    what: str
    detail: str
    idle: float
    ceiling: float


@dataclass
class CostView:
    lines: list[CostLine]
    notes: list[str] = field(default_factory=list)

    @property
    def idle(self) -> float:
        return sum(line.idle for line in self.lines)

    @property
    def ceiling(self) -> float:
        return sum(line.ceiling for line in self.lines)


def zones(cluster: GkeClusterConfig, pool_zones: list[str] | None = None) -> int:
    """Zones a pool's nodes spread over (the schema's rule, so cost and NAP checks agree)."""
    return cluster.zone_count(pool_zones)


def node_price(region: str, pool: GpuPool) -> float:
    """One node of a GPU pool: spot at spot prices; DWS pools at on-demand (their upper bound)."""
    attached = (pool.accelerator, pool.gpus_per_node) if ACCELERATORS[pool.accelerator].attached else None
    return machine_price(region, pool.machine_type, spot=pool.provisioning is Provisioning.SPOT, attached=attached)


def cheapest_node(region: str, accelerator: str) -> tuple[str, int, float]:
    """(machine type, GPUs per node, USD per hour) of the cheapest priced node per GPU for an accelerator."""
    acc = ACCELERATORS[accelerator]
    options = []
    for machine in acc.machine_types:
        gpus = acc.gpus_per_node(machine)
        attached = (accelerator, gpus) if acc.attached else None
        try:
            options.append((machine_price(region, machine, attached=attached) / gpus, machine, gpus))
        except PriceError:
            continue
    if not options:
        raise PriceError(f"no price for any machine carrying {accelerator} in {region} in facts/prices.py")
    per_gpu, machine, gpus = min(options)
    return machine, gpus, per_gpu * gpus


def fabric_lines(config: PlatformConfig) -> CostView:
    """Each GPUDirect pool's extra networks (infra/args.py): what the program creates, at no
    hourly charge (facts/prices.py FABRIC_NETWORKS_HOURLY), and a note where its traffic may
    cross zones."""
    cluster = config.cluster
    assert isinstance(cluster, GkeClusterConfig)
    view = CostView(lines=[])
    pools = {pool.name: pool for pool in cluster.gpu_pools}
    for fabric in fabric_pools(config):
        vpcs, subnets = len({nic.vpc for nic in fabric.nics}), len(fabric.nics)
        rules = sum(1 for vpc in {nic.vpc for nic in fabric.nics} if vpc not in fabric.gpu_vpcs or fabric.fabric.firewall)
        made = f"{vpcs} VPCs, {subnets} subnets, {rules} firewall rule{'s' if rules != 1 else ''}" if fabric.created else f"{subnets} existing subnets"
        view.lines.append(
            CostLine(
                f"fabric {fabric.pool}",
                f"{fabric.fabric.title}: {made}, no charge ({NETWORK_PRICING})",
                FABRIC_NETWORKS_HOURLY,
                FABRIC_NETWORKS_HOURLY,
            )
        )
        if zones(cluster, pools[fabric.pool].zones) > 1:
            view.notes.append(
                f"fabric {fabric.pool}: its nodes span zones, and GPU traffic between zones is billed at "
                f"{_money(INTER_ZONE_PER_GIB)} USD/GiB ({NETWORK_PRICING}); set one zone to keep it free"
            )
    return view


def cost_lines(config: PlatformConfig) -> CostView:
    cluster = config.cluster
    assert isinstance(cluster, GkeClusterConfig)
    region = cluster.region
    view = CostView(lines=[CostLine("control plane", "GKE cluster management fee", GKE_CLUSTER_FEE, GKE_CLUSTER_FEE)])

    system = cluster.system_pool
    system_zones = zones(cluster)
    system_node = machine_price(region, system.machine_type)
    view.lines.append(
        CostLine(
            "system pool",
            f"{system.machine_type} on-demand, {system.min}..{system.max} nodes/zone x {system_zones} zones",
            system.min * system_zones * system_node,
            system.max * system_zones * system_node,
        )
    )
    pool_gpus: dict[str, int] = {}
    pool_vcpus = system.max * system_zones * vcpus(system.machine_type)
    for pool in cluster.gpu_pools:
        n = zones(cluster, pool.zones)
        node = node_price(region, pool)
        model = pool.provisioning.value
        if pool.provisioning in DWS:
            attached = (pool.accelerator, pool.gpus_per_node) if ACCELERATORS[pool.accelerator].attached else None
            floor = machine_price(region, pool.machine_type, attached=attached, dws_floor=True)
            model += " (priced on-demand)"
            view.notes.append(
                f"pool {pool.name}: {pool.provisioning.value} (DWS) shown at on-demand, its upper bound; with DWS's "
                f"discount of up to {DWS_MAX_DISCOUNT:.0%} on vCPUs and GPUs a node costs from {_money(floor)}/h "
                f"(ceiling from {_money(pool.max * n * floor)}/h; {DWS_SOURCE})"
            )
        view.lines.append(
            CostLine(
                f"GPU pool {pool.name}",
                f"{pool.machine_type} {model}, {pool.min}..{pool.max} nodes/zone x {n} zone{'s' if n != 1 else ''}",
                pool.min * n * node,
                pool.max * n * node,
            )
        )
        pool_gpus[pool.accelerator] = pool_gpus.get(pool.accelerator, 0) + pool.max * n * pool.gpus_per_node
        pool_vcpus += pool.max * n * vcpus(pool.machine_type)

    fabric = fabric_lines(config)
    view.lines += fabric.lines
    view.notes += fabric.notes

    pipelines = config.components[PIPELINES]
    if pipelines.enabled:
        sql = pipelines.cloud_sql
        price = cloud_sql_price(region, sql.tier, sql.disk_size_gb, sql.high_availability)
        standby = ", with a standby (HA)" if sql.high_availability else ""
        view.lines.append(
            CostLine("pipelines database", f"Cloud SQL {sql.tier} + {sql.disk_size_gb} GB SSD{standby}", price, price)
        )
        view.notes.append(
            f"pipelines database: backups ({sql.retained_backups} kept) and binary logs are billed by the GB they hold, "
            "and its disk grows by itself when full; not in the figures"
        )

    nap = cluster.autoprovisioning
    if nap.enabled:
        nap_vcpus = 0
        for accelerator, limit in sorted(nap.limits.items()):
            if accelerator not in ACCELERATORS:
                continue
            if pool_gpus.get(accelerator, 0) > limit:
                view.notes.append(
                    f"the GPU pools can reach {pool_gpus[accelerator]} {accelerator} over their zones but the "
                    f"autoprovisioning limit caps the cluster at {limit}; the ceiling shows the pools uncapped"
                )
            extra = max(0, limit - pool_gpus.get(accelerator, 0))
            machine, gpus, price = cheapest_node(region, accelerator)
            nodes = math.ceil(extra / gpus)
            nap_vcpus += nodes * vcpus(machine)
            view.lines.append(
                CostLine(
                    f"autoprovisioning {accelerator}",
                    f"limit {limit} GPUs, {extra} beyond the pools: {nodes} x {machine} on-demand",
                    0.0,
                    nodes * price,
                )
            )
        cpu_extra = max(0, nap.limits.get("cpu", 0) - pool_vcpus - nap_vcpus)
        nodes = math.ceil(cpu_extra / vcpus(system.machine_type))
        view.lines.append(
            CostLine(
                "autoprovisioning cpu",
                f"limit {nap.limits.get('cpu', 0)} vCPUs, {cpu_extra} beyond the pools: {nodes} x {system.machine_type} on-demand",
                0.0,
                nodes * system_node,
            )
        )
    return view


def _money(value: float) -> str:
    return f"{value:,.2f}"


def cost_view(config: PlatformConfig) -> str:
    """The view as printed by `python -m stacks cost <stack>`."""
    cluster = config.cluster
    if not isinstance(cluster, GkeClusterConfig):
        return f"kind cluster {cluster.name}: runs on your own machine, no cloud cost."
    view = cost_lines(config)
    rows = [(line.what, line.detail, _money(line.idle), _money(line.ceiling)) for line in view.lines]
    rows.append(("total", "", _money(view.idle), _money(view.ceiling)))
    widths = [max(len(r[i]) for r in [*rows, ("", "", "idle", "ceiling")]) for i in range(4)]
    head = (
        f"GKE cluster {cluster.name} in {cluster.region}: USD per hour, list prices as of {AS_OF.isoformat()} "
        "(facts/prices.py; re-check them against the pages below)"
    )
    lines = [head, f"{'':<{widths[0]}}  {'':<{widths[1]}}  {'idle':>{widths[2]}}  {'ceiling':>{widths[3]}}"]
    for what, detail, idle, ceiling in rows:
        lines.append(f"{what:<{widths[0]}}  {detail:<{widths[1]}}  {idle:>{widths[2]}}  {ceiling:>{widths[3]}}")
    notes = [*view.notes, "ceiling: every pool at its maximum plus what autoprovisioning may add within its limits", "not included: disks, network egress, load balancers, Cloud NAT, buckets, committed-use discounts"]
    lines += ["", "notes:"] + [f"  - {n}" for n in notes] + ["sources:"] + [f"  - {s}" for s in SOURCES]
    return "\n".join(lines)
