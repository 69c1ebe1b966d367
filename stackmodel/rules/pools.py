"""The GPU pools beside autoprovisioning, the GKE version, the drivers, DRA, Kueue and the fabric
component."""

from __future__ import annotations

from decimal import Decimal

from facts import gpu_fabric
from facts.prices import SHAPES
from stackmodel.components.dra import NVIDIA_DRA_DRIVER
from stackmodel.components.fabric import GPU_FABRIC
from stackmodel.components.kueue import KUEUE
from stackmodel.rules.rule import CLUSTER, KIND, NAP, POOLS, Found, gke_cluster, gpu_pools_of, minor_number, stack_rule
from stackmodel.schema import RESERVED_POOL_NAMES, DriverVersion, Environment, Provisioning
from stackmodel.schema.pools import DRA_SOURCE
from stackmodel.stack import PlatformConfig


@stack_rule("pool-names-free", "No GPU pool takes the system pool's name or Kueue's CPU flavor name.", reads=(POOLS,))
def _pool_names_free(config: PlatformConfig) -> Found:
    for i, pool in enumerate(gpu_pools_of(config)):
        if pool.name in RESERVED_POOL_NAMES:
            yield (
                f"{CLUSTER}.gpuPools[{i}].name",
                f"{pool.name!r} is {RESERVED_POOL_NAMES[pool.name]}; pick another pool name",
            )


@stack_rule("autoprovisioning-covers-gpus", "With autoprovisioning on, its limits cover every GPU pool at full size.", reads=(CLUSTER,))
def _autoprovisioning_covers_gpus(config: PlatformConfig) -> Found:
    gke = gke_cluster(config)
    if gke is None or not gke.autoprovisioning.enabled:
        return
    needed: dict[str, int] = {}
    for pool in gke.gpu_pools:
        gpus = pool.max * pool.gpus_per_node * gke.zone_count(pool.zones)
        needed[pool.accelerator] = needed.get(pool.accelerator, 0) + gpus
    for acc, gpus in needed.items():
        limit = gke.autoprovisioning.limits.get(acc)
        if limit is None or limit < gpus:
            yield (
                f"{CLUSTER}.autoprovisioning.limits.{acc}",
                f"the GPU pools can grow to {gpus} {acc} GPUs but the limit is "
                f"{limit if limit is not None else 'missing'}; set it to at least {gpus}",
            )


@stack_rule("autoprovisioning-covers-pools", "With autoprovisioning on, its cluster-wide cpu and memory limits cover the system and GPU pools at full size.", reads=(CLUSTER,))
def _autoprovisioning_covers_pools(config: PlatformConfig) -> Found:
    """GKE's autoprovisioning limits "are checked against all the nodes in the cluster" and
    the "cluster autoscaler does not create new nodes if doing so would exceed one of the
    defined limits" (GKE "Using node auto-provisioning", Resource limits,
    cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning): limits below
    what the system and GPU pools take at full size keep those pools from ever reaching
    their max. Pools of a machine type facts/prices.py has no shape for are left out, so the
    sums are lower bounds."""
    gke = gke_cluster(config)
    if gke is None or not gke.autoprovisioning.enabled:
        return
    pools = [("the system pool", gke.system_pool.machine_type, gke.system_pool.max * gke.zone_count())]
    pools += [(f"pool {p.name}", p.machine_type, p.max * gke.zone_count(p.zones)) for p in gke.gpu_pools]
    sized = [(who, machine, nodes, SHAPES[machine]) for who, machine, nodes in pools if machine in SHAPES]
    for key, unit, size in (
        ("cpu", "vCPUs", lambda shape: Decimal(shape.vcpus)),
        ("memory", "GiB", lambda shape: Decimal(str(shape.gib))),
    ):
        limit = gke.autoprovisioning.limits.get(key)
        need = sum((nodes * size(shape) for _, _, nodes, shape in sized), Decimal(0))
        if limit is None or need <= limit:
            continue  # a missing cpu or memory limit is the schema's to report
        parts = ", ".join(f"{who} {nodes} x {machine} = {(nodes * size(shape)).normalize():f}" for who, machine, nodes, shape in sized)
        yield (
            f"{CLUSTER}.autoprovisioning.limits.{key}",
            f"the node pools at full size take {need.normalize():f} {unit} ({parts}), but the cluster-wide {key} limit is "
            f"{limit}: GKE counts every node against it, so the pools could never reach their max; set it to at least "
            f"{need.to_integral_value(rounding='ROUND_CEILING'):f} (more leaves room for autoprovisioned pools) or lower the pools' max",
        )


@stack_rule("gpu-pools-scale-to-zero", "Outside prod, GPU pools idle at zero nodes.", reads=("mlplatform:environment", KIND, POOLS))
def _gpu_pools_scale_to_zero(config: PlatformConfig) -> Found:
    """Outside prod a GPU pool idles at no cost: GKE starts it at `min` nodes per zone and keeps
    at least that many (infra/gke.py: initialNodeCount and minNodeCount are the pool's min)."""
    if config.environment is Environment.PROD:
        return
    for i, pool in enumerate(gpu_pools_of(config)):
        if pool.min:
            yield (
                f"{CLUSTER}.gpuPools[{i}].min",
                f"pool {pool.name} keeps {pool.min} GPU node(s) per zone running in a {config.environment.value} stack; "
                "GPU pools idle at 0 outside prod: set min to 0",
            )


DRA_MIN_GKE = (1, 34)
"""GKE runs DRA, with the resource.k8s.io/v1 API GPUs use, from 1.34 (DRA_SOURCE, Requirements)."""


@stack_rule("dra-pools-as-gke-allows", "A DRA GPU pool is one GKE runs: no autoprovisioning, GKE 1.34+, NVIDIA's DRA driver installed.", reads=(KIND, POOLS, NAP, f"{CLUSTER}.minMasterVersion", NVIDIA_DRA_DRIVER.path))
def _dra_pools_gke_allows(config: PlatformConfig) -> Found:
    """What GKE refuses of a DRA pool in the rest of the stack (DRA_SOURCE): node auto-provisioning
    (its limits must name every pool's accelerator, autoprovisioning-covers-gpus, and would then
    let NAP create pools of it), a GKE version below 1.34, and the driver component switched off."""
    gke = gke_cluster(config)
    if gke is None:
        return
    for i, pool in enumerate(gke.gpu_pools):
        if not pool.dra:
            continue
        path = f"{POOLS}[{i}].gpuAllocation"
        if gke.autoprovisioning.enabled:
            yield (
                path,
                f"GKE does not support DRA with node auto-provisioning ({DRA_SOURCE}), and pool {pool.name}'s "
                f"{pool.accelerator} is one autoprovisioning may create pools of; set autoprovisioning.enabled: false or "
                "gpuAllocation: device-plugin",
            )
        if gke.min_master_version is not None and minor_number(gke.min_master_version) < DRA_MIN_GKE:
            yield (
                path,
                f"GKE runs DRA from {'.'.join(map(str, DRA_MIN_GKE))} ({DRA_SOURCE}); minMasterVersion is "
                f"{gke.min_master_version}: raise it or use gpuAllocation: device-plugin",
            )
        if not config.enabled(NVIDIA_DRA_DRIVER):
            yield (
                path,
                f"pool {pool.name}'s GPUs are allocated by NVIDIA's DRA driver, which {NVIDIA_DRA_DRIVER.path}.enabled: "
                "false leaves out; remove that line or use gpuAllocation: device-plugin",
            )


@stack_rule("gpu-drivers-installed", "Every GPU pool gets GKE's NVIDIA driver installation.", reads=(KIND, POOLS))
def _gpu_drivers_installed(config: PlatformConfig) -> Found:
    """GKE installs the NVIDIA driver on a GPU pool's nodes unless the pool says otherwise; the
    runtimes, the DCGM exporter and GPU notebooks all need it, and nothing else installs it."""
    for i, pool in enumerate(gpu_pools_of(config)):
        if pool.driver_version is DriverVersion.INSTALLATION_DISABLED and not pool.dra:  # a DRA pool's: components/dra.py
            yield (
                f"{CLUSTER}.gpuPools[{i}].driverVersion",
                f"pool {pool.name} would get no GKE driver installation, and nothing else installs the NVIDIA driver; "
                "set driverVersion LATEST or DEFAULT",
            )


@stack_rule("gpu-drivers-fit-the-gke-version", "A pool on GKE's DEFAULT driver gets the driver branch its GPUs need at the cluster's GKE version.", reads=(KIND, POOLS, f"{CLUSTER}.minMasterVersion", f"{CLUSTER}.releaseChannel"))
def _gpu_drivers_fit_the_gke_version(config: PlatformConfig) -> Found:
    """A pool asking for GKE's DEFAULT driver where that default is older than the branch its GPUs
    need (facts/gpu_fabric.py MachineFabric.default_driver_from: A3 Ultra's H200 take R550, GKE's
    default from 1.31.5-gke.1169000; before it only LATEST installs it): the nodes would come up
    with a driver the GPUs do not run on."""
    gke = gke_cluster(config)
    if gke is None:
        return
    version, where = gke.effective_version()
    for i, pool in enumerate(gke.gpu_pools):
        machine = gpu_fabric.machine_fabric(pool.machine_type)
        if pool.driver_version is not DriverVersion.DEFAULT or machine is None:
            continue
        problem = gpu_fabric.default_driver_problem(machine, version)
        if problem:
            yield (
                f"{POOLS}[{i}].driverVersion",
                f"pool {pool.name}'s {pool.accelerator} GPUs need driver {machine.driver}, which GKE's DEFAULT installation "
                f"{problem.replace('needs', 'gives only on')}; the cluster is created at {version} ({where}): use "
                "driverVersion: LATEST (the default; remove the key) or raise minMasterVersion",
            )


@stack_rule("dra-driver-has-dra-pools", "NVIDIA's DRA driver is switched on only where a GPU pool has gpuAllocation: dra.", reads=(KIND, POOLS, NVIDIA_DRA_DRIVER.path))
def _dra_driver_has_dra_pools(config: PlatformConfig) -> Found:
    """nvidiaDraDriver switched on where no pool allocates GPUs through DRA: GKE's driver installer
    would run on no node, its DaemonSet's required node affinity an empty nodeSelectorTerms list
    (components/dra.py on_pool_nodes over no pool), which the API server refuses at `pulumi up`
    ("must have at least one node selector term": Kubernetes pkg/apis/core/validation
    validateNodeSelector; the envtest API server v1.36.2 answers so); kind has no GPUs at all."""
    if config.components[NVIDIA_DRA_DRIVER].enabled is not True or any(pool.dra for pool in gpu_pools_of(config)):
        return
    where = "this kind cluster has no GPUs" if gke_cluster(config) is None else "no GPU pool has gpuAllocation: dra"
    yield (
        f"{NVIDIA_DRA_DRIVER.path}.enabled",
        f"NVIDIA's DRA driver and GKE's driver installer serve the pools with gpuAllocation: dra, and {where}: the "
        "installer's DaemonSet would select no node, which the API server refuses; remove nvidiaDraDriver.enabled (it is "
        "on by itself where a pool has gpuAllocation: dra)",
    )


@stack_rule("queued-pools-need-kueue", "Queued GPU pools need Kueue, which creates their ProvisioningRequests.", reads=(KUEUE.path, KIND, POOLS))
def _queued_pools_need_kueue(config: PlatformConfig) -> Found:
    if config.components[KUEUE].enabled:
        return
    for i, pool in enumerate(gpu_pools_of(config)):
        if pool.provisioning is Provisioning.QUEUED:
            yield (
                f"{CLUSTER}.gpuPools[{i}].provisioning",
                "queued pools get nodes only through ProvisioningRequests, which Kueue creates; "
                "enable the kueue component or use provisioning: flex-start",
            )


@stack_rule("gpu-fabric-installed", "A GPU pool with network tcpxo or rdma has the gpuFabric component installing its Networks and NCCL plugin.", reads=(POOLS, GPU_FABRIC.path))
def _gpu_fabric_installed(config: PlatformConfig) -> Found:
    if config.enabled(GPU_FABRIC):
        return
    for i, pool in enumerate(gpu_pools_of(config)):
        if pool.fabric_kind != "none":
            yield (
                f"{CLUSTER}.gpuPools[{i}].network",
                f"pool {pool.name}'s training pods attach the {pool.fabric_kind} NICs' Networks, which the gpuFabric component "
                "creates (with the NCCL plugin on the nodes); remove `mlplatform:components.gpuFabric.enabled: false`, "
                "or set this pool's network: none",
            )


@stack_rule("gpu-fabric-has-fabric-pools", "The gpuFabric component is switched on only where a GPU pool has network tcpxo or rdma.", reads=(KIND, POOLS, GPU_FABRIC.path))
def _gpu_fabric_has_fabric_pools(config: PlatformConfig) -> Found:
    """gpuFabric switched on where no pool has a GPUDirect network installs nothing
    (infra/args.py gpu_fabric_args gives None): said, not ignored."""
    if config.components[GPU_FABRIC].enabled is not True or any(p.fabric_kind != "none" for p in gpu_pools_of(config)):
        return
    where = "this kind cluster has no GPU pools" if gke_cluster(config) is None else "no GPU pool has network tcpxo or rdma"
    yield (
        f"{GPU_FABRIC.path}.enabled",
        f"the GPU fabric (multi-networking objects, NCCL plugin installers) is for pools with network tcpxo or rdma, and "
        f"{where}, so it would install nothing; remove gpuFabric.enabled (it is on by itself where a pool has a fabric)",
    )
