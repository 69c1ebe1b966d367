"""Rules across parts of a stack file, as a table (the way policy/rules.py holds the
plan's guardrails): the schema types each part on its own, these judge how the parts
fit together (pools vs autoprovisioning, components vs the cluster kind, teams vs pools).

Each rule is a small function with a name and a one-line description, yielding
(config path, message) per problem. `cross_checks` runs them all once every part has
its type, so a stack file's problems are reported together.

Long by design: one table of rules, each a few lines; split by domain, a reader would look
for a rule in several files and the table would be assembled from them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from typing import Any

from facts import gpu_fabric, networks, regions
from facts.allocatable import allocatable
from facts.dra import DCGM_DRA_RESOURCE_SLICES
from facts.gpu_catalog import ACCELERATORS
from facts.limits import PERSISTENT_DISK_MAX_BYTES, QUEUED_POOL_READY_MIN_SECONDS
from facts.naming import (
    SECRET_KEY_MAX,
    TEAM_NAMESPACE_SECRETS,
    bucket_name_problem,
    contributor_binding_name,
    dex_password_env,
    gmp_service_account_id,
    node_service_account_id,
    team_bucket_name,
    team_service_account_id,
)
from facts.oidc_issuers import PUBLISHED as PUBLISHED_ISSUERS
from facts.prices import SHAPES
from facts.support import GKE_CHANNEL_MINORS, GKE_CHANNEL_MINORS_SOURCE
from facts.versions import KUEUE_CHART
from stackmodel import quantity, team_quota
from stackmodel.components.dcgm import DCGM_EXPORTER, DcgmSource
from stackmodel.components.dra import NVIDIA_DRA_DRIVER
from stackmodel.components.fabric import GPU_FABRIC
from stackmodel.components.idle_reclaim import IDLE_RECLAIM
from stackmodel.components.idle_reclaim import STEP_SECONDS as IDLE_RECLAIM_STEP_SECONDS
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.kuberay import KUBERAY, RaySource
from stackmodel.components.kueue import KUEUE
from stackmodel.components.monitoring import MONITORING, MetricsBackend
from stackmodel.components.pipelines import PIPELINES
from stackmodel.components.spec import ComponentSpec
from stackmodel.schema import (
    DNS_SUBDOMAIN_MAX,
    GCP_REGION,
    GCP_ZONE,
    GOOGLE_ISSUER,
    RESERVED_POOL_NAMES,
    RETENTION_SECONDS,
    AuthKind,
    DriverVersion,
    Environment,
    GkeClusterConfig,
    GpuPool,
    GroupDefinition,
    GroupSource,
    Provisioning,
    SharingStrategy,
    zone_region,
)
from stackmodel.schema.chart_values import CHART_VALUES_KIND
from stackmodel.schema.pools import DRA_SOURCE
from stackmodel.schema.sources import artifact_registry_location
from stackmodel.stack import PlatformConfig

Found = Iterator[tuple[str, str]]
"""(config path, message) per problem, the path as the stack file spells it."""

CLUSTER = "mlplatform:cluster"
COMPONENTS = "mlplatform:components"


EVERYTHING = ""
"""A rule's `reads` that overlaps every path: the rule needs the whole stack parsed."""


def overlaps(a: str, b: str) -> bool:
    """Whether config paths `a` and `b` are one the other's part (or the same)."""
    if a == EVERYTHING or b == EVERYTHING:
        return True
    return a == b or any(long.startswith(short + sep) for long, short in ((a, b), (b, a)) for sep in (".", "["))


@dataclass(frozen=True)
class Rule:
    """A rule over the whole stack. `reads`: the config paths its check looks at (through the
    helpers it calls too), so it still runs, and only then, when the schema refused parts of
    the stack elsewhere (stackmodel/config.py)."""

    name: str
    description: str
    check: Callable[[PlatformConfig], Found]
    reads: tuple[str, ...] = (EVERYTHING,)

    def problems(self, config: PlatformConfig) -> list[tuple[str, str]]:
        return list(self.check(config))


@dataclass(frozen=True)
class TeamRule:
    """A rule over one team, `check(config, i)` for mlplatform:teams[i]; the team's
    place in the stack is passed because rules compare it with the teams before it."""

    name: str
    description: str
    check: Callable[[PlatformConfig, int], Found]
    reads: tuple[str, ...] = (EVERYTHING,)

    def problems(self, config: PlatformConfig) -> list[tuple[str, str]]:
        return [found for i in range(len(config.teams)) for found in self.check(config, i)]


# --- helpers --------------------------------------------------------------------------


def _gke(config: PlatformConfig) -> GkeClusterConfig | None:
    return config.cluster if isinstance(config.cluster, GkeClusterConfig) else None


def _pools(config: PlatformConfig) -> list[GpuPool]:
    gke = _gke(config)
    return gke.gpu_pools if gke else []


def _team(i: int) -> str:
    return f"mlplatform:teams[{i}]"


# --- the stack ------------------------------------------------------------------------


def _pool_names_free(config: PlatformConfig) -> Found:
    for i, pool in enumerate(_pools(config)):
        if pool.name in RESERVED_POOL_NAMES:
            yield (
                f"{CLUSTER}.gpuPools[{i}].name",
                f"{pool.name!r} is {RESERVED_POOL_NAMES[pool.name]}; pick another pool name",
            )


def _autoprovisioning_covers_gpus(config: PlatformConfig) -> Found:
    gke = _gke(config)
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


def _autoprovisioning_covers_pools(config: PlatformConfig) -> Found:
    """GKE's autoprovisioning limits "are checked against all the nodes in the cluster" and
    the "cluster autoscaler does not create new nodes if doing so would exceed one of the
    defined limits" (GKE "Using node auto-provisioning", Resource limits,
    cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning): limits below
    what the system and GPU pools take at full size keep those pools from ever reaching
    their max. Pools of a machine type facts/prices.py has no shape for are left out, so the
    sums are lower bounds."""
    gke = _gke(config)
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


def _gpu_pools_scale_to_zero(config: PlatformConfig) -> Found:
    """Outside prod a GPU pool idles at no cost: GKE starts it at `min` nodes per zone and keeps
    at least that many (infra/gke.py: initialNodeCount and minNodeCount are the pool's min)."""
    if config.environment is Environment.PROD:
        return
    for i, pool in enumerate(_pools(config)):
        if pool.min:
            yield (
                f"{CLUSTER}.gpuPools[{i}].min",
                f"pool {pool.name} keeps {pool.min} GPU node(s) per zone running in a {config.environment.value} stack; "
                "GPU pools idle at 0 outside prod: set min to 0",
            )


def _gpu_drivers_installed(config: PlatformConfig) -> Found:
    """GKE installs the NVIDIA driver on a GPU pool's nodes unless the pool says otherwise; the
    runtimes, the DCGM exporter and GPU notebooks all need it, and nothing else installs it."""
    for i, pool in enumerate(_pools(config)):
        if pool.driver_version is DriverVersion.INSTALLATION_DISABLED and not pool.dra:  # a DRA pool's: components/dra.py
            yield (
                f"{CLUSTER}.gpuPools[{i}].driverVersion",
                f"pool {pool.name} would get no GKE driver installation, and nothing else installs the NVIDIA driver; "
                "set driverVersion LATEST or DEFAULT",
            )


def _gpu_drivers_fit_the_gke_version(config: PlatformConfig) -> Found:
    """A pool asking for GKE's DEFAULT driver where that default is older than the branch its GPUs
    need (facts/gpu_fabric.py MachineFabric.default_driver_from: A3 Ultra's H200 take R550, GKE's
    default from 1.31.5-gke.1169000; before it only LATEST installs it): the nodes would come up
    with a driver the GPUs do not run on."""
    gke = _gke(config)
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


DRA_MIN_GKE = (1, 34)
"""GKE runs DRA, with the resource.k8s.io/v1 API GPUs use, from 1.34 (DRA_SOURCE, Requirements)."""


def _dra_pools_gke_allows(config: PlatformConfig) -> Found:
    """What GKE refuses of a DRA pool in the rest of the stack (DRA_SOURCE): node auto-provisioning
    (its limits must name every pool's accelerator, autoprovisioning-covers-gpus, and would then
    let NAP create pools of it), a GKE version below 1.34, and the driver component switched off."""
    gke = _gke(config)
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
        if gke.min_master_version is not None and _minor_number(gke.min_master_version) < DRA_MIN_GKE:
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


def _dra_driver_has_dra_pools(config: PlatformConfig) -> Found:
    """nvidiaDraDriver switched on where no pool allocates GPUs through DRA: GKE's driver installer
    would run on no node, its DaemonSet's required node affinity an empty nodeSelectorTerms list
    (components/dra.py on_pool_nodes over no pool), which the API server refuses at `pulumi up`
    ("must have at least one node selector term": Kubernetes pkg/apis/core/validation
    validateNodeSelector; the envtest API server v1.36.2 answers so); kind has no GPUs at all."""
    if config.components[NVIDIA_DRA_DRIVER].enabled is not True or any(pool.dra for pool in _pools(config)):
        return
    where = "this kind cluster has no GPUs" if _gke(config) is None else "no GPU pool has gpuAllocation: dra"
    yield (
        f"{NVIDIA_DRA_DRIVER.path}.enabled",
        f"NVIDIA's DRA driver and GKE's driver installer serve the pools with gpuAllocation: dra, and {where}: the "
        "installer's DaemonSet would select no node, which the API server refuses; remove nvidiaDraDriver.enabled (it is "
        "on by itself where a pool has gpuAllocation: dra)",
    )


def _prod_cluster_private(config: PlatformConfig) -> Found:
    """A prod cluster's nodes have no public IPs and its control plane answers only the ranges
    the stack lists, never the whole internet."""
    gke = _gke(config)
    if gke is None or config.environment is not Environment.PROD:
        return
    if not gke.private_nodes:
        yield f"{CLUSTER}.privateNodes", "a prod cluster needs private nodes; set privateNodes: true"
    if not gke.master_authorized_networks:
        yield (
            f"{CLUSTER}.masterAuthorizedNetworks",
            "a prod cluster's control plane needs authorized networks (empty: anyone may reach it); list the ranges "
            "that need it",
        )
    for i, network in enumerate(gke.master_authorized_networks):
        if network.cidr.prefixlen == 0:
            yield (
                f"{CLUSTER}.masterAuthorizedNetworks[{i}].cidr",
                f"{network.cidr} opens a prod cluster's control plane to the internet; list only the ranges that need it",
            )


def _prod_deletion_protected(config: PlatformConfig) -> Found:
    """In prod the cluster, the pipelines database and the team data are deletion-protected: the
    cloud APIs' flags and Pulumi's protect all follow the stack's deletion protection."""
    gke = _gke(config)
    if gke is not None and config.environment is Environment.PROD and gke.deletion_protection is False:
        yield (
            f"{CLUSTER}.deletionProtection",
            "a prod stack keeps deletion protection on (the cluster, the pipelines database and Pulumi's protect "
            "follow it); remove deletionProtection: false",
        )


def _unlisted_region(config: PlatformConfig, region: str) -> str | None:
    """Why `region` is refused, or None: it is in facts/regions.py or taken knowingly."""
    if region in regions.REGIONS or region in config.overrides.regions:
        return None
    close = difflib.get_close_matches(region, sorted(regions.REGIONS), n=2, cutoff=0.8)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    return (
        f"{region!r} is not a Google Cloud region facts/regions.py knows (as of {regions.AS_OF}){hint}: check the "
        f"spelling against `gcloud compute regions list`; if Google opened it since, add it to facts/regions.py, or "
        f"take it knowingly with mlplatform:overrides: {{regions: [{region}]}}"
    )


def _places(config: PlatformConfig) -> Iterator[tuple[str, str]]:
    """(config path, region) of every place the stack names."""
    if config.region:
        yield "gcp:region", config.region
    if config.zone:
        yield "gcp:zone", zone_region(config.zone)
    gke = _gke(config)
    if gke is None:
        return
    yield f"{CLUSTER}.location", gke.region
    location = gke.image_registry.location
    if location and GCP_REGION.match(location):
        yield f"{CLUSTER}.imageRegistry.location", location
    for i, team in enumerate(config.teams):
        bucket = team.bucket.location.lower() if team.bucket and team.bucket.location else None
        if bucket and GCP_REGION.match(bucket):
            yield f"{_team(i)}.bucket.location", bucket


def _registry_places(config: PlatformConfig) -> Iterator[tuple[str, str]]:
    """(config path, region) of the Artifact Registry hosts the stack pulls from: the mirrors'."""
    for path, value in (("mlplatform:images.mirror", config.images.mirror), ("mlplatform:sources.charts", config.sources.charts)):
        region = artifact_registry_location(value)
        if region:
            yield path, region


def _regions_known(config: PlatformConfig) -> Found:
    for path, region in (*_places(config), *_registry_places(config)):
        found = _unlisted_region(config, region)
        if found:
            yield path, found


def _provider_defaults_in_cluster_region(config: PlatformConfig) -> Found:
    """gcp:region and gcp:zone are the Google provider's defaults, for resources that name no
    region; the program names the cluster's everywhere, so another one only misleads."""
    gke = _gke(config)
    if gke is None:
        return
    if config.region and config.region != gke.region:
        yield (
            "gcp:region",
            f"the provider's default region {config.region} is not the cluster's ({gke.region}), where the program puts "
            f"everything; set gcp:region: {gke.region} or remove it",
        )
    if config.zone and zone_region(config.zone) != gke.region:
        yield (
            "gcp:zone",
            f"the provider's default zone {config.zone} is outside the cluster's region {gke.region}; use a zone of "
            f"{gke.region} or remove gcp:zone",
        )


def _machine_types_known(config: PlatformConfig) -> Found:
    """The system pool's machine type is one facts/prices.py SHAPES knows (its vCPUs and memory
    size the pool, the Ray workers it takes and autoprovisioning's totals); GPU pools are held
    to the GPU catalog by the schema."""
    gke = _gke(config)
    if gke is None:
        return
    machine = gke.system_pool.machine_type
    if machine in SHAPES or machine in config.overrides.machine_types:
        return
    close = difflib.get_close_matches(machine, sorted(SHAPES), n=2, cutoff=0.8)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    yield (
        f"{CLUSTER}.systemPool.machineType",
        f"{machine!r} is not a machine type facts/prices.py knows{hint}: check the spelling (gcloud compute "
        f"machine-types list); for a newer one, add its shape to facts/prices.py SHAPES, or take it knowingly with "
        f"mlplatform:overrides: {{machineTypes: [{machine}]}} (its sizes and cost are then not checked)",
    )


def _oidc_issuer_as_published(config: PlatformConfig) -> Found:
    """Dex's OIDC library compares the issuer with the one the provider publishes byte for
    byte (facts/oidc_issuers.py). Nearly every provider publishes it without a trailing '/',
    so one written with it is refused unless the stack says the provider publishes it so."""
    auth = config.components[KUBEFLOW].auth
    if auth.kind is not AuthKind.OIDC or auth.oidc is None:
        return
    issuer = auth.oidc.issuer
    host = issuer.removeprefix("https://").split("/", 1)[0]
    if issuer.endswith("/") and host not in PUBLISHED_ISSUERS and issuer not in config.overrides.oidc_issuers:
        yield (
            f"{AUTH}.oidc.issuer",
            f"{issuer!r} ends in '/': Dex's OIDC library (go-oidc) refuses the provider unless its discovery document "
            f"names the issuer exactly so, and most publish it without (https://accounts.google.com); write "
            f"{issuer.rstrip('/')!r}, or, if {issuer.rstrip('/')}/.well-known/openid-configuration says {issuer!r}, take "
            f"it knowingly with mlplatform:overrides: {{oidcIssuers: [{issuer!r}]}}",
        )


def _prod_on_gke(config: PlatformConfig) -> Found:
    if config.environment is Environment.PROD and _gke(config) is None:
        yield "mlplatform:environment", "a kind cluster is never prod; use dev, staging or ci, or a gke cluster"


def _queued_pools_need_kueue(config: PlatformConfig) -> Found:
    if config.components[KUEUE].enabled:
        return
    for i, pool in enumerate(_pools(config)):
        if pool.provisioning is Provisioning.QUEUED:
            yield (
                f"{CLUSTER}.gpuPools[{i}].provisioning",
                "queued pools get nodes only through ProvisioningRequests, which Kueue creates; "
                "enable the kueue component or use provisioning: flex-start",
            )


def _gpu_fabric_installed(config: PlatformConfig) -> Found:
    if config.enabled(GPU_FABRIC):
        return
    for i, pool in enumerate(_pools(config)):
        if pool.fabric_kind != "none":
            yield (
                f"{CLUSTER}.gpuPools[{i}].network",
                f"pool {pool.name}'s training pods attach the {pool.fabric_kind} NICs' Networks, which the gpuFabric component "
                "creates (with the NCCL plugin on the nodes); remove `mlplatform:components.gpuFabric.enabled: false`, "
                "or set this pool's network: none",
            )


def _gpu_fabric_has_fabric_pools(config: PlatformConfig) -> Found:
    """gpuFabric switched on where no pool has a GPUDirect network installs nothing
    (infra/args.py gpu_fabric_args gives None): said, not ignored."""
    if config.components[GPU_FABRIC].enabled is not True or any(p.fabric_kind != "none" for p in _pools(config)):
        return
    where = "this kind cluster has no GPU pools" if _gke(config) is None else "no GPU pool has network tcpxo or rdma"
    yield (
        f"{GPU_FABRIC.path}.enabled",
        f"the GPU fabric (multi-networking objects, NCCL plugin installers) is for pools with network tcpxo or rdma, and "
        f"{where}, so it would install nothing; remove gpuFabric.enabled (it is on by itself where a pool has a fabric)",
    )


def _ray_addon_on_gke(config: PlatformConfig) -> Found:
    if config.components[KUBERAY].source is RaySource.GKE_ADDON and _gke(config) is None:
        yield f"{KUBERAY.path}.source", "gke-addon is GKE's managed Ray operator; on kind use source: operator"


def _dcgm_on_gke(config: PlatformConfig) -> Found:
    if config.components[DCGM_EXPORTER].enabled and _gke(config) is None:
        yield f"{DCGM_EXPORTER.path}.enabled", "kind clusters have no GPUs; remove dcgmExporter.enabled"


def _managed_dcgm_needs_managed_prometheus(config: PlatformConfig) -> Found:
    gke, dcgm = _gke(config), config.components[DCGM_EXPORTER]
    if gke and dcgm.enabled is not False and dcgm.source is DcgmSource.GKE_MANAGED and not gke.managed_prometheus:
        yield (
            f"{DCGM_EXPORTER.path}.source",
            "GKE's managed DCGM metrics need cluster.managedPrometheus: true; set it or use source: chart",
        )


def _managed_backend_needs_managed_prometheus(config: PlatformConfig) -> Found:
    monitoring = config.components[MONITORING]
    if not (monitoring.enabled and monitoring.backend is MetricsBackend.GKE_MANAGED):
        return
    gke = _gke(config)
    if gke is None:
        yield (
            f"{MONITORING.path}.backend",
            "gke-managed is GKE's managed Prometheus; on kind use backend: kube-prometheus-stack",
        )
    elif not gke.managed_prometheus:
        yield (
            f"{MONITORING.path}.backend",
            "backend gke-managed needs cluster.managedPrometheus: true; set it or use backend: kube-prometheus-stack",
        )


def _gpu_metrics_reach_prometheus(config: PlatformConfig) -> Found:
    dcgm, monitoring = config.components[DCGM_EXPORTER], config.components[MONITORING]
    if not (monitoring.enabled and config.enabled(DCGM_EXPORTER)):
        return
    managed_dcgm = dcgm.source is DcgmSource.GKE_MANAGED
    managed_backend = monitoring.backend is MetricsBackend.GKE_MANAGED
    if managed_dcgm and not managed_backend:
        yield (
            f"{DCGM_EXPORTER.path}.source",
            "GKE's managed DCGM metrics go to managed Prometheus, which kube-prometheus-stack does not read; "
            "use source: chart or monitoring.backend: gke-managed",
        )
    if managed_backend and not managed_dcgm:
        yield (
            f"{DCGM_EXPORTER.path}.source",
            "with monitoring.backend gke-managed use source: gke-managed "
            "(the chart's ServiceMonitor is for kube-prometheus-stack)",
        )


def _idle_reclaim_can_judge(config: PlatformConfig) -> Found:
    if config.components[IDLE_RECLAIM].enabled is not True:
        return
    needs = ((KUBEFLOW, "notebooks to stop"), (MONITORING, "the Prometheus it reads"), (DCGM_EXPORTER, "the GPUs' utilisation; kind has no GPUs"))
    missing = [f"{spec.name} ({why})" for spec, why in needs if not config.enabled(spec)]
    if missing:
        yield f"{IDLE_RECLAIM.path}.enabled", f"idle reclaim needs {' and '.join(missing)}; enable them or remove idleReclaim.enabled"


def _idle_reclaim_period_within_retention(config: PlatformConfig) -> Found:
    """The reclaim reads a notebook's samples of the whole period and two steps before it
    (components/idle_reclaim_job.py prometheus_range); a Prometheus of the stack that keeps less
    never holds a stretch that long, and no notebook would ever be stopped. GKE's managed
    Prometheus keeps 24 months."""
    monitoring, reclaim = config.components[MONITORING], config.components[IDLE_RECLAIM]
    if not config.enabled(IDLE_RECLAIM) or monitoring.backend is not MetricsBackend.KUBE_PROMETHEUS_STACK:
        return
    kept = int(Decimal(monitoring.retention[:-1]) * RETENTION_SECONDS[monitoring.retention[-1]])
    needed = reclaim.period_seconds + 2 * IDLE_RECLAIM_STEP_SECONDS
    if needed > kept:
        yield (
            f"{IDLE_RECLAIM.path}.period",
            f"the idle reclaim judges {reclaim.period} of samples (and {2 * IDLE_RECLAIM_STEP_SECONDS // 60} minutes before "
            f"them), and the stack's Prometheus keeps {monitoring.retention} (monitoring.retention): no notebook could ever "
            "be idle that long to it; shorten idleReclaim.period or lengthen monitoring.retention",
        )


def _idle_reclaim_reads_mig_slices(config: PlatformConfig) -> Found:
    """On a MIG slice DCGM's utilisation reads 0 or is absent (dcgm-exporter#216, #430); the reclaim
    judges slices by DCGM_FI_PROF_GR_ENGINE_ACTIVE, which the chart's exporter collects per slice
    (components/dashboards/common.py gpu_activity). Which fields GKE's managed DCGM collection
    reports per slice is not confirmed here (docs/teams.md, "GPU notebooks"), so the reclaim is
    not run on MIG pools on it: off by default there, refused when switched on."""
    if config.components[IDLE_RECLAIM].enabled is not True or config.components[DCGM_EXPORTER].source is not DcgmSource.GKE_MANAGED:
        return
    for i, pool in enumerate(_pools(config)):
        if pool.sharing is not None and pool.sharing.strategy is SharingStrategy.MIG:
            yield (
                f"{POOLS}[{i}].sharing",
                f"pool {pool.name}'s GPUs are MIG slices, whose utilisation the idle reclaim reads from "
                "DCGM_FI_PROF_GR_ENGINE_ACTIVE, which GKE's managed DCGM collection is not known to report per slice: it "
                "could stop a busy notebook or never an idle one; use dcgmExporter.source: chart, or remove "
                "idleReclaim.enabled (it is off by default on such a stack)",
            )


def _gateway_exposed_on_gke(config: PlatformConfig) -> Found:
    auth = config.components[KUBEFLOW].auth
    if _gke(config) is None and (auth.hostname or auth.iap):
        yield f"{KUBEFLOW.path}.auth", "hostname and iap expose the gateway on GKE; on kind remove them"


def _teams_need_kubeflow(config: PlatformConfig) -> Found:
    if config.teams and not config.components[KUBEFLOW].enabled:
        yield "mlplatform:teams", "teams are Kubeflow profiles; enable kubeflow or remove the teams"


def _notebook_images_have_a_registry(config: PlatformConfig) -> Found:
    gke, kubeflow = _gke(config), config.components[KUBEFLOW]
    if gke and kubeflow.enabled and not gke.image_registry.enabled and not kubeflow.notebook_registry:
        yield (
            f"{KUBEFLOW.path}.notebookRegistry",
            "the notebook images need a registry the nodes pull from; set notebookRegistry, or leave "
            "cluster.imageRegistry enabled to use the stack's Artifact Registry repository",
        )


# --- each team ------------------------------------------------------------------------


def _team_names_unique(config: PlatformConfig, i: int) -> Found:
    team = config.teams[i]
    if team.name in {earlier.name for earlier in config.teams[:i]}:
        yield f"{_team(i)}.name", f"duplicate team {team.name!r}; team names must be unique"


def _team_gpus_provided(config: PlatformConfig, i: int) -> Found:
    known = {p.accelerator for p in _pools(config)}
    gke = _gke(config)
    if gke and gke.autoprovisioning.enabled:
        known |= {k for k in gke.autoprovisioning.limits if k in ACCELERATORS}
    for acc in config.teams[i].quota.gpus:
        if acc not in known:
            have = ", ".join(sorted(known)) or "none (this stack has no GPU pools)"
            yield (
                f"{_team(i)}.quota.gpus.{acc}",
                f"no GPU pool or autoprovisioning limit provides {acc}; use one of: {have}",
            )


def _contributor_binding_names_unique(config: PlatformConfig, i: int) -> Found:
    """ana.b@x.com and ana-b@x.com with one role get one RoleBinding and
    AuthorizationPolicy name from KFAM: one object, so only one of them has access. Groups
    likewise (`group-<group>-clusterrole-<role>`, kubeflow/dashboard PR #317)."""
    first: dict[str, tuple[int, str]] = {}
    for j, entry in enumerate(config.teams[i].contributors):
        name = contributor_binding_name(entry.who, entry.role.value, entry.key)
        if name not in first:
            first[name] = (j, entry.who)
            continue
        k, other = first[name]
        yield (
            f"{_team(i)}.contributors[{j}].{entry.key}",
            f"{entry.who} and {other} (contributors[{k}]) get one Kubeflow binding name {name!r} "
            "(KFAM turns every run of characters other than letters and digits into '-'); "
            "keep one of them, or give them different roles",
        )


def _groups(config: PlatformConfig) -> dict[str, tuple[int, GroupDefinition]]:
    return {g.name: (k, g) for k, g in enumerate(config.components[KUBEFLOW].auth.groups)}


def _contributor_groups_defined(config: PlatformConfig, i: int) -> Found:
    """A group contributor is one the stack says where it comes from: nothing else resolves it."""
    defined = _groups(config)
    for j, entry in enumerate(config.teams[i].contributors):
        if entry.group is None or entry.group in defined:
            continue
        alike = [name for name in defined if name.lower() == entry.group.lower()]
        hint = f"; the stack defines {alike[0]} (group names are compared exactly)" if alike else ""
        yield (
            f"{_team(i)}.contributors[{j}].group",
            f"group {entry.group} is defined nowhere, so nothing resolves its members: add it to {AUTH}.groups with "
            f"its source (stack: its members listed; provider: the identity provider's groups claim){hint}",
        )


def _member_binding_collisions(config: PlatformConfig, i: int) -> Found:
    """A group's members get a KFAM binding each, `user-<e-mail>-clusterrole-<role>` (the web
    apps and Pipelines review the person only): a person the team also lists with that role
    would have the very same RoleBinding and AuthorizationPolicy, written twice."""
    team, defined = config.teams[i], _groups(config)
    people = {contributor_binding_name(str(p.email), p.role.value): j for j, p in enumerate(team.contributors) if p.email}
    for j, entry in enumerate(team.contributors):
        if entry.group is None or entry.group not in defined:
            continue
        if defined[entry.group][1].source is GroupSource.CLOUD_IDENTITY:
            continue  # read at `pulumi up`, not the stack's to edit: the person's own binding is kept
        for member in defined[entry.group][1].members:
            name = contributor_binding_name(member, entry.role.value)
            if name in people:
                k = people[name]
                yield (
                    f"{_team(i)}.contributors[{j}].group",
                    f"{member} is a member of group {entry.group} ({entry.role.value}) and listed as a person with that "
                    f"role (contributors[{k}]): both would be the binding {name!r}; remove the person's entry (the group "
                    "grants it), or give the group or the person another role",
                )


def _member_binding_names_unique(config: PlatformConfig, i: int) -> Found:
    """Two members of the team's groups with one role whose e-mails differ only in what KFAM
    turns into '-' (ana.b@ and ana-b@) would get one binding name: one object, and a duplicate
    resource that stops `pulumi up`. Checked again once cloudIdentity groups are read (program.py)."""
    defined = _groups(config)
    first: dict[str, tuple[str, str]] = {}
    for j, entry in enumerate(config.teams[i].contributors):
        if entry.group is None or entry.group not in defined:
            continue
        for member in defined[entry.group][1].members:
            name = contributor_binding_name(member, entry.role.value)
            other, other_group = first.setdefault(name, (member, entry.group))
            if other != member:
                yield (
                    f"{_team(i)}.contributors[{j}].group",
                    f"{member} (group {entry.group}) and {other} (group {other_group}) get one Kubeflow binding name "
                    f"{name!r} (KFAM turns every run of characters other than letters and digits into '-'); keep one "
                    "of them in the group, or give the groups different roles",
                )


def _stack_groups_not_also_googles(config: PlatformConfig) -> Found:
    """With Google Groups for RBAC the API server gives RBAC the Google groups a person is in,
    so a group's RoleBinding (a Group subject) follows Google's membership for kubectl, while a
    stack group's members are the stack's everywhere else: two memberships of one group."""
    gke = _gke(config)
    if gke is None or gke.security_group is None:
        return
    for k, group in enumerate(config.components[KUBEFLOW].auth.groups):
        if group.source is GroupSource.STACK and "@" in group.name:
            yield (
                f"{AUTH}.groups[{k}].source",
                f"group {group.name} lists its members in the stack, but {CLUSTER}.securityGroup makes kubectl "
                "follow the Google group of that name (Google Groups for RBAC): the two memberships would "
                "disagree; use source: cloudIdentity (Google's membership on every surface), or drop securityGroup",
            )


def _groups_can_be_supplied(config: PlatformConfig) -> Found:
    """Where each group's membership comes from exists in this stack: a provider group needs an
    OIDC upstream that sends groups; a stack group's members are people who can sign in."""
    auth = config.components[KUBEFLOW].auth
    for k, group in enumerate(auth.groups):
        path = f"{AUTH}.groups[{k}]"
        if group.source is GroupSource.PROVIDER:
            if auth.kind is AuthKind.DEX:
                yield (
                    f"{path}.source",
                    f"group {group.name}: with Dex static users there is no identity provider to send groups; the stack "
                    "is the group's source (source: stack, with its members)",
                )
            elif auth.oidc is not None and auth.oidc.issuer.rstrip("/") == GOOGLE_ISSUER:
                yield (
                    f"{path}.source",
                    f"group {group.name}: this stack signs in with Google, whose ID token carries no groups claim; use "
                    "source: cloudIdentity (gke: its members read from Cloud Identity at `pulumi up`) or list the group's "
                    "members with source: stack (docs/teams.md, \"Google Workspace\"; kubectl on GKE follows the Google "
                    "group itself through mlplatform:cluster.securityGroup)",
                )
            elif auth.oidc is None or auth.oidc.groups is None:
                yield (
                    f"{path}.source",
                    f"group {group.name}: this stack's sign-in sends no groups ({AUTH}.oidc.groups is not set); set it "
                    "(claim, scopes) as docs/teams.md says for your identity provider, or list the members with "
                    "source: stack",
                )
        if group.source is GroupSource.CLOUD_IDENTITY and _gke(config) is None:
            yield (
                f"{path}.source",
                f"group {group.name}: Cloud Identity is read through the Google provider, on gke stacks only; on "
                f"{config.cluster.kind} list the group's members with source: stack",
            )
        for m, member in enumerate(group.members):
            found = _sign_in_problem(config, member)
            if found:
                yield f"{path}.members[{m}]", found


def with_read_members(config: PlatformConfig, read: Mapping[str, Sequence[str]]) -> tuple[PlatformConfig, list[tuple[str, str]]]:
    """`config` with each cloudIdentity group's members as Cloud Identity gave them (`read`: group
    -> member e-mails, infra/cloud_identity.py), so they feed exactly what a stack group's members
    feed; and (path, why) of each member left out. A member who could never sign in to this
    stack (the rule stack members meet, _sign_in_problem) is left out and reported, not refused:
    who joins a Google group is not the stack's to edit, and a binding for them would open nothing."""
    auth = config.components[KUBEFLOW].auth
    groups, left_out = [], []
    for k, group in enumerate(auth.groups):
        if group.source is not GroupSource.CLOUD_IDENTITY:
            groups.append(group)
            continue
        members = []
        for member in read.get(group.name, ()):
            found = _sign_in_problem(config, member)
            if found:
                left_out.append((f"{AUTH}.groups[{k}]", f"group {group.name} (Cloud Identity): left out, {found}"))
            else:
                members.append(member)
        groups.append(group.model_copy(update={"members": members}))
    kubeflow = config.components[KUBEFLOW]
    components = config.components.replaced(KUBEFLOW, kubeflow.model_copy(update={"auth": auth.model_copy(update={"groups": groups})}))
    return config.model_copy(update={"components": components}), left_out


def _team_bucket_on_gke(config: PlatformConfig, i: int) -> Found:
    if config.teams[i].bucket and _gke(config) is None:
        yield f"{_team(i)}.bucket", "buckets are GCS buckets; only gke stacks have them"


def _team_pipelines_need_bucket_on_gke(config: PlatformConfig, i: int) -> Found:
    """On GKE a team's pipeline root is its bucket (components/team_pipelines.py): runs write
    their artifacts there as the team's Google account, which no other team's can read."""
    team = config.teams[i]
    if _gke(config) and config.components[PIPELINES].enabled and team.bucket is None:
        yield (
            f"{_team(i)}.bucket",
            f"team {team.name} runs pipelines, whose artifacts go to the team's own bucket on gke; add `bucket: {{}}` "
            f"to the team (or disable {PIPELINES.path})",
        )


def _team_ray_pool_exists(config: PlatformConfig, i: int) -> Found:
    ray, pools = config.teams[i].ray, _pools(config)
    if ray and ray.pool and ray.pool not in {p.name for p in pools}:
        known = ", ".join(p.name for p in pools) or "none (this stack has no GPU pools)"
        yield f"{_team(i)}.ray.pool", f"no GPU pool named {ray.pool!r}; use one of: {known}"


def _team_ray_pool_serves_gpus(config: PlatformConfig, i: int) -> Found:
    """A team Ray cluster's GPU workers request `nvidia.com/gpu` (components/profiles/ray.py), which
    a DRA pool's nodes do not advertise (GKE's device plugin is off there:
    `gke-no-default-nvidia-gpu-device-plugin`, facts/node_labels.py DRA_NODE_LABELS): the workers
    would never be scheduled."""
    ray = config.teams[i].ray
    pool = next((p for p in _pools(config) if ray and p.name == ray.pool), None)
    if ray and pool is not None and pool.dra:
        others = ", ".join(p.name for p in _pools(config) if not p.dra) or "none in this stack"
        yield (
            f"{_team(i)}.ray.pool",
            f"pool {pool.name} gives its GPUs through DRA claims, and the Ray workers ask for nvidia.com/gpu, which its "
            f"nodes do not advertise (GKE's device plugin is off on a DRA pool): they would never start; use a pool with "
            f"gpuAllocation: device-plugin ({others})",
        )


def _team_ray_pool_not_topology_aware(config: PlatformConfig, i: int) -> Found:
    """Kueue admits the team RayCluster as an elastic job (components/profiles/ray.py), and a
    topology-aware pool's flavor takes only pod sets that ask for a topology
    (kueue v0.19.2 pkg/scheduler/flavorassigner/tas_flavorassigner.go checkPodSetAndFlavorMatchForTAS,
    "supports only TopologyAwareScheduling"); elastic jobs with a topology need Kueue's
    ElasticJobsViaWorkloadSlicesWithTAS, alpha and off in 0.19.2 (pkg/features/kube_features.go:716-718):
    its workers would never be admitted."""
    ray = config.teams[i].ray
    pool = next((p for p in _pools(config) if ray and p.name == ray.pool), None)
    if pool is not None and pool.topology_aware and config.enabled(KUEUE):
        yield (
            f"{_team(i)}.ray.pool",
            f"Kueue places pool {pool.name}'s {pool.machine_type} nodes by GKE's topology (docs/gke-cluster.md, "
            f"Topology-aware scheduling), and Kueue {KUEUE_CHART.version} admits an elastic RayCluster's workers there only with an alpha "
            "feature the platform leaves off: they would wait for ever; pick a pool Kueue does not place by topology",
        )


def _team_ray_needs_kuberay(config: PlatformConfig, i: int) -> Found:
    if config.teams[i].ray and not config.components[KUBERAY].enabled:
        yield f"{_team(i)}.ray", "a team Ray cluster needs the kuberay component; enable it"


# --- what the stack derives: physical names, sign-in, sizes ----------------------------


def _teams_need_kueue(config: PlatformConfig) -> Found:
    if config.teams and not config.components[KUEUE].enabled:
        yield (
            f"{KUEUE.path}.enabled",
            "every team gets a Kueue ClusterQueue and a `default` LocalQueue, which need Kueue; "
            "enable kueue or remove the teams",
        )


def _service_account_ids(config: PlatformConfig) -> Iterator[tuple[str, str, Callable[[], str]]]:
    """(config path, whose, id) of every Google service account the stack creates."""
    gke = _gke(config)
    if gke is None:
        return
    yield f"{CLUSTER}.name", "the nodes' account", partial(node_service_account_id, gke.name)
    monitoring = config.components[MONITORING]
    if monitoring.enabled and monitoring.backend is MetricsBackend.GKE_MANAGED:
        yield f"{MONITORING.path}.backend", "the managed-Prometheus query account", partial(gmp_service_account_id, gke.name)
    named = set()
    for i, team in enumerate(config.teams):
        if team.name not in named:  # two teams of one name: team-names-unique says so
            named.add(team.name)
            yield f"{_team(i)}.name", f"team {team.name}'s account", partial(team_service_account_id, team.name)


def _service_account_ids_unique(config: PlatformConfig) -> Found:
    """Google service-account ids are unique in the project: the second create fails (or,
    with an id already there, two parts of the platform would share one identity)."""
    first: dict[str, tuple[str, str]] = {}
    for path, whose, derive in _service_account_ids(config):
        try:
            account_id = derive()
        except ValueError as err:
            yield path, f"{whose} would get an invalid Google service-account id: {err}; pick another name"
            continue
        if account_id in first:
            other_path, other = first[account_id]
            yield (
                path,
                f"{whose} would get the Google service-account id {account_id!r}, which {other} ({other_path}) "
                "already has; rename one of them",
            )
        else:
            first[account_id] = (path, whose)


def _bucket_of(config: PlatformConfig, i: int) -> tuple[str, str] | None:
    """(config path, name) of team i's bucket; None without a bucket or a known name."""
    team = config.teams[i]
    if team.bucket is None or _gke(config) is None:
        return None
    if team.bucket.name:
        return f"{_team(i)}.bucket.name", team.bucket.name
    if config.project is None:
        return None  # reported as missing, or it comes from an ESC environment
    return f"{_team(i)}.bucket", team_bucket_name(config.project, team.name)


def _team_default_bucket_name_valid(config: PlatformConfig, i: int) -> Found:
    bucket = _bucket_of(config, i)
    if bucket is None or bucket[0].endswith(".name"):
        return  # a name written out is judged where it is declared (schema.TeamBucket)
    reason = bucket_name_problem(bucket[1])
    if reason:
        yield (
            bucket[0],
            f"the default bucket name {bucket[1]!r} (<project>-<team>) is not a valid Cloud Storage name: "
            f"{reason}; set bucket.name",
        )


def _team_bucket_names_unique(config: PlatformConfig, i: int) -> Found:
    bucket = _bucket_of(config, i)
    if bucket is None:
        return
    for j in range(i):
        earlier = _bucket_of(config, j)
        if earlier and earlier[1] == bucket[1] and config.teams[j].name != config.teams[i].name:
            yield (
                bucket[0],
                f"bucket {bucket[1]!r} is also team {config.teams[j].name}'s ({_team(j)}); bucket names are "
                "global, so each team needs its own: change bucket.name",
            )
            return


def _contributor_binding_names_fit(config: PlatformConfig, i: int) -> Found:
    """KFAM's binding name is also an AuthorizationPolicy's, a custom resource, so a DNS
    subdomain of at most 253 characters (apiextensions-apiserver customresource validator:
    NameIsDNSSubdomain). A group's name is `group-<group>-clusterrole-<role>`."""
    for j, entry in enumerate(config.teams[i].contributors):
        name = contributor_binding_name(entry.who, entry.role.value, entry.key)
        if len(name) > DNS_SUBDOMAIN_MAX:
            yield (
                f"{_team(i)}.contributors[{j}].{entry.key}",
                f"KFAM names this contributor's RoleBinding and AuthorizationPolicy {'user-<e-mail>' if entry.email else 'group-<group>'}"
                f"-clusterrole-<role>: {len(name)} characters, and Kubernetes allows {DNS_SUBDOMAIN_MAX}; use a shorter "
                f"{'address' if entry.email else 'group name'}",
            )


def _worker_size(config: PlatformConfig, i: int) -> tuple[Decimal, Decimal] | None:
    ray = config.teams[i].ray
    return (quantity.parse(ray.worker_cpu), quantity.parse(ray.worker_memory)) if ray else None


def _gib(size: Decimal) -> str:
    return f"{(size / 2**30).quantize(Decimal('0.1'))}Gi"


def _team_ray_fits_a_node(config: PlatformConfig, i: int) -> Found:
    """A Ray worker is one pod: it must fit the allocatable CPU and memory of one node it
    may land on: its GPU pool's machine, else (CPU workers) the system pool's, or with
    autoprovisioning the cluster-wide cpu and memory limits."""
    ray, gke, size = config.teams[i].ray, _gke(config), _worker_size(config, i)
    if ray is None or gke is None or size is None:
        return
    pool = next((p for p in gke.gpu_pools if p.name == ray.pool), None)
    cpu, memory = size
    ray_path = f"{_team(i)}.ray"
    if pool is None and ray.pool is None and gke.autoprovisioning.enabled:
        limits = gke.autoprovisioning.limits
        if cpu > limits.get("cpu", cpu):
            yield f"{ray_path}.workerCpu", f"a Ray worker of {cpu} CPUs exceeds autoprovisioning's cluster-wide limit of {limits['cpu']}; lower workerCpu"
        if memory > limits.get("memory", 0) * 2**30:
            yield f"{ray_path}.workerMemory", f"a Ray worker of {_gib(memory)} exceeds autoprovisioning's cluster-wide limit of {limits['memory']}Gi; lower workerMemory"
        return
    if pool is None and ray.pool is not None:
        return  # team-ray-pool-exists reports it
    machine, where = (pool.machine_type, f"pool {pool.name}") if pool else (gke.system_pool.machine_type, "the system pool")
    room = allocatable(machine)
    if room is None:
        return  # a machine type facts/prices.py has no shape for: not judged
    if cpu > room.cpu:
        yield (
            f"{ray_path}.workerCpu",
            f"a Ray worker of {cpu} CPUs never fits a {machine} node of {where}: GKE leaves {room.cpu.normalize()} "
            "of its CPUs to pods; lower workerCpu or use a larger machine type",
        )
    if memory > room.memory:
        yield (
            f"{ray_path}.workerMemory",
            f"a Ray worker of {_gib(memory)} never fits a {machine} node of {where}: GKE leaves {_gib(room.memory)} "
            "of its memory to pods; lower workerMemory or use a larger machine type",
        )


def _quota_reach(config: PlatformConfig, i: int, pool: str | None) -> tuple[dict[str, Decimal], str]:
    """The most CPU and memory one pod of team `i` may take, and what that is, for the output:
    with Kueue, the part of the team's quota on the flavor the pod gets (`pool`'s, else the
    default flavor's: stackmodel/team_quota.py) and what its cohort may lend of that part; without
    Kueue, the team's whole quota (its namespace's ResourceQuota)."""
    team = config.teams[i]
    if not config.enabled(KUEUE):
        return {"cpu": quantity.parse(team.quota.cpu), "memory": quantity.parse(team.quota.memory)}, "the team's whole quota"
    pools = _pools(config)
    peers = [t for t in config.teams if team.cohort and t.cohort == team.cohort and t.name != team.name]
    reach = {name: Decimal(0) for name in team_quota.RESOURCES}
    for member in (team, *peers):
        part = team_quota.shares(member, pools).of(pool if pool in {p.name for p in pools} else None)
        for name in team_quota.RESOURCES:
            reach[name] += part[name]
    flavor = f"flavor {pool}" if pool else "default flavor"
    return reach, f"the team's quota on Kueue's {flavor}{' with what its cohort lends' if peers else ''} (stackmodel/team_quota.py)"


def _team_ray_head_within_quota(config: PlatformConfig, i: int) -> Found:
    """The head is a pod of the namespace too: a head larger than the quota Kueue gives it (the
    default flavor's part) or, without Kueue, than the namespace's ResourceQuota, never starts
    the cluster."""
    team = config.teams[i]
    if team.ray is None:
        return
    cpu, memory = quantity.parse(team.ray.head_cpu), quantity.parse(team.ray.head_memory)
    reach, what = _quota_reach(config, i, None)
    ray_path = f"{_team(i)}.ray"
    if cpu > reach["cpu"]:
        yield f"{ray_path}.headCpu", f"a Ray head of {cpu} CPUs is more than {what}, {quantity.text(reach['cpu'])}; lower headCpu or raise quota.cpu"
    if memory > reach["memory"]:
        yield f"{ray_path}.headMemory", f"a Ray head of {_gib(memory)} is more than {what}, {_gib(reach['memory'])}; lower headMemory or raise quota.memory"


def _team_ray_worker_within_quota(config: PlatformConfig, i: int) -> Found:
    """The team's quota must admit one worker (on its pool's flavor with Kueue, stacks/
    team_quota.py; the namespace's ResourceQuota without), or the Ray cluster never grows."""
    team, size = config.teams[i], _worker_size(config, i)
    if team.ray is None or size is None:
        return
    cpu, memory = size
    ray_path = f"{_team(i)}.ray"
    reach, what = _quota_reach(config, i, team.ray.pool)
    if team.ray.pool is not None and reach["cpu"] == 0:
        reach = {}  # the team has no GPUs of the pool: the pool's own problem below says so
    pool_node = next((allocatable(p.machine_type) for p in _pools(config) if p.name == team.ray.pool), None)
    if reach and pool_node is not None and (cpu > pool_node.cpu or memory > pool_node.memory):
        reach = {}  # larger than a node of its pool: team-ray-fits-a-node says so (a part is at most its nodes)
    if reach and cpu > reach["cpu"]:
        yield f"{ray_path}.workerCpu", f"a Ray worker of {cpu} CPUs is more than {what}, {quantity.text(reach['cpu'])}; lower workerCpu or raise quota.cpu"
    if reach and memory > reach["memory"]:
        yield f"{ray_path}.workerMemory", f"a Ray worker of {_gib(memory)} is more than {what}, {_gib(reach['memory'])}; lower workerMemory or raise quota.memory"
    pool = next((p for p in _pools(config) if p.name == team.ray.pool), None)
    if pool is None:
        return
    gpus = team.quota.gpus.get(pool.accelerator, 0)
    if pool.accelerator not in team.quota.gpus:
        yield (
            f"{ray_path}.pool",
            f"a Ray worker on pool {pool.name} takes {pool.gpus_per_node} {pool.accelerator} GPUs, and the team's quota "
            f"has none of that accelerator (quota.gpus: {', '.join(sorted(team.quota.gpus)) or 'empty'}), so no worker "
            f"is ever admitted; add quota.gpus.{pool.accelerator} or pick a pool of an accelerator the team has",
        )
    elif pool.gpus_per_node > gpus:
        yield (
            f"{ray_path}.pool",
            f"a Ray worker on pool {pool.name} takes all {pool.gpus_per_node} GPUs of a node, more than the "
            f"team's {pool.accelerator} quota of {gpus}; raise quota.gpus.{pool.accelerator} or pick another pool",
        )


# --- who may sign in -----------------------------------------------------------------

AUTH = f"{KUBEFLOW.path}.auth"


def _sign_in_problem(config: PlatformConfig, email: str) -> str | None:
    """Why `email` could never sign in to this stack, or None (it can, or the stack does not
    say who may: Dex without static users)."""
    auth = config.components[KUBEFLOW].auth
    address = email.lower()
    if auth.kind is AuthKind.OIDC:
        if address in {e.lower() for e in auth.allowed_emails} or address.rsplit("@", 1)[-1] in auth.allowed_domains:
            return None
        return f"{email} cannot sign in: its domain is not in {AUTH}.allowedDomains and it is not in allowedEmails; add one of them, or correct the address"
    if auth.static_users and address not in {u.lower() for u in auth.static_users}:
        return f"{email} cannot sign in: it is not one of {AUTH}.staticUsers; add it there (with its hash in mlplatform:dexPasswordHashes), or correct the address"
    return None


def _dex_has_static_users(config: PlatformConfig) -> Found:
    kubeflow = config.components[KUBEFLOW]
    if kubeflow.enabled and kubeflow.auth.kind is AuthKind.DEX and not kubeflow.auth.static_users:
        yield (
            f"{AUTH}.staticUsers",
            "Dex without static users lets nobody sign in (it has no other login); list who may sign in, "
            "each with a bcrypt hash in mlplatform:dexPasswordHashes, or use kind: oidc",
        )


def _dex_password_envs_unique(config: PlatformConfig) -> Found:
    """Each static user's hash reaches Dex as an environment variable named after the
    e-mail (facts/naming.py dex_password_env); two users sharing a name would share one
    hash, so one person's password would sign in as the other. The encoding is injective,
    so this holds by construction; the rule refuses the stack anyway should it ever not."""
    auth = config.components[KUBEFLOW].auth
    if auth.kind is not AuthKind.DEX:
        return
    first: dict[str, int] = {}
    for i, email in enumerate(auth.static_users):
        name = dex_password_env(email)
        if len(name) > SECRET_KEY_MAX:
            yield (
                f"{AUTH}.staticUsers[{i}]",
                f"its password hash would go into the Secret key {name[:40]}... of {len(name)} characters, and "
                f"Kubernetes allows {SECRET_KEY_MAX} (each character other than a letter or digit takes 3); "
                "use a shorter address",
            )
        elif name in first and auth.static_users[first[name]] != email:
            yield (
                f"{AUTH}.staticUsers[{i}]",
                f"{email} and staticUsers[{first[name]}] {auth.static_users[first[name]]} would read their password "
                f"hash from one environment variable {name}, so either password would sign in as both; "
                "report this as a bug of facts/naming.py dex_password_env",
            )
        first.setdefault(name, i)


def _addresses(config: PlatformConfig) -> Iterator[tuple[str, str]]:
    """(config path, address) of everyone the stack names, the identity provider's own
    lists first: Dex sends a static user as staticUsers writes it."""
    auth = config.components[KUBEFLOW].auth
    yield from ((f"{AUTH}.staticUsers[{i}]", e) for i, e in enumerate(auth.static_users))
    yield from ((f"{AUTH}.allowedEmails[{i}]", e) for i, e in enumerate(auth.allowed_emails))
    yield from ((f"{MONITORING.path}.grafanaAdmins[{i}]", e) for i, e in enumerate(config.components[MONITORING].grafana_admins))
    for i, team in enumerate(config.teams):
        yield f"{_team(i)}.owner", team.owner
        yield from ((f"{_team(i)}.contributors[{j}].email", c.email) for j, c in enumerate(team.contributors) if c.email)
    for k, group in enumerate(auth.groups):
        yield from ((f"{AUTH}.groups[{k}].members[{m}]", e) for m, e in enumerate(group.members))


def _identities_spelled_alike(config: PlatformConfig) -> Found:
    """Dex and oauth2-proxy take `Ana@acme.com` and `ana@acme.com` for one account, but the
    profile controller, KFAM and Istio compare the kubeflow-userid header exactly (stackmodel/schema/common.py,
    "e-mail addresses"): only the spelling the identity provider sends reaches the team. So
    one person is spelled one way throughout the stack."""
    first: dict[str, tuple[str, str]] = {}
    for path, address in _addresses(config):
        key = address.lower()
        if key not in first:
            first[key] = (path, address)
            continue
        other_path, other = first[key]
        if other != address:
            source = "Dex signs static users in as staticUsers writes them" if ".staticUsers[" in other_path else (
                "the identity provider sends one spelling"
            )
            yield (
                path,
                f"{address} and {other} ({other_path}) differ only in letter case: Dex and oauth2-proxy take them for one "
                f"account, but the profile controller, KFAM and Istio compare addresses exactly, and {source}; "
                f"write {other} here too",
            )


def _grafana_admins_can_sign_in(config: PlatformConfig) -> Found:
    if not config.components[KUBEFLOW].enabled:
        return
    for i, email in enumerate(config.components[MONITORING].grafana_admins):
        found = _sign_in_problem(config, email)
        if found:
            yield f"{MONITORING.path}.grafanaAdmins[{i}]", found


def _grafana_signs_in_through_kubeflow(config: PlatformConfig) -> Found:
    if config.components[MONITORING].enabled and not config.components[KUBEFLOW].enabled:
        yield (
            f"{MONITORING.path}.enabled",
            "Grafana signs people in with the identity the Kubeflow gateway asserts and has no login of its own; "
            "enable kubeflow or disable monitoring",
        )


def _team_people_can_sign_in(config: PlatformConfig, i: int) -> Found:
    if not config.components[KUBEFLOW].enabled:
        return
    team = config.teams[i]
    found = _sign_in_problem(config, team.owner)
    if found:
        yield f"{_team(i)}.owner", found
    for j, person in enumerate(team.contributors):
        found = _sign_in_problem(config, person.email) if person.email else None
        if found:
            yield f"{_team(i)}.contributors[{j}].email", found


def _team_container_defaults_fit_quota(config: PlatformConfig, i: int) -> Found:
    team = config.teams[i]
    defaults, quota = team.container_defaults, team.quota
    for key, request, hard in (("cpu", defaults.cpu, quota.cpu), ("memory", defaults.memory, quota.memory)):
        if quantity.parse(request) > quantity.parse(hard):
            yield (
                f"{_team(i)}.containerDefaults.{key}",
                f"the default {key} request {request} is above the team's {key} quota {hard}, so no container "
                f"without requests could start; lower it or raise quota.{key}",
            )


def _team_push_images_needs_registry(config: PlatformConfig, i: int) -> Found:
    gke = _gke(config)
    if config.teams[i].push_images and not (gke and gke.image_registry.enabled):
        yield (
            f"{_team(i)}.pushImages",
            "pushImages grants push to the stack's Artifact Registry repository, which only a gke stack with "
            "cluster.imageRegistry enabled has; remove it or enable the registry",
        )


# --- the cluster's landing zone and the chart overlays --------------------------------


def _secrets_key_in_cluster_region(config: PlatformConfig) -> Found:
    """Google: "Ensure that the key is in the same location as the cluster to decrease latency
    and to prevent cases where resources depend on services spread across multiple failure
    domains" (cloud.google.com/kubernetes-engine/docs/how-to/encrypting-secrets, read 2026-12-01)."""
    gke = _gke(config)
    if gke is None or gke.secrets_encryption is None:
        return
    location = gke.secrets_encryption.location
    if location != gke.region:
        yield (
            f"{CLUSTER}.secretsEncryption.key",
            f"the key is in {location}, the cluster in {gke.region}: a control plane that decrypts its Secrets through "
            f"another location depends on it being up (Google: keep the key in the cluster's location); use a key "
            f"ring in {gke.region}",
        )


def _host_project_is_another_project(config: PlatformConfig) -> Found:
    gke = _gke(config)
    existing = gke.network.existing if gke else None
    if existing and existing.host_project and existing.host_project == config.project:
        yield (
            f"{CLUSTER}.network.existing.hostProject",
            f"{existing.host_project} is the stack's own project (gcp:project); remove hostProject, which names a "
            "Shared VPC host project",
        )


def _chart_values_fields(spec: ComponentSpec[Any]) -> list[tuple[str, str]]:
    """(attribute, key) of each chart-values overlay of a component's settings (a ChartValues field)."""
    return [
        (name, field.alias or name)
        for name, field in spec.model.model_fields.items()
        if CHART_VALUES_KIND in field.metadata
    ]


def _chart_values_reach_a_chart(config: PlatformConfig) -> Found:
    """An overlay for a chart the stack does not install would be silently ignored."""
    for spec in config.components.specs:
        settings = config.components[spec]
        unused = spec.unused_overlays(settings) if spec.unused_overlays else {}
        for name, key in _chart_values_fields(spec):
            if not getattr(settings, name):
                continue
            if not config.enabled(spec):
                yield f"{spec.path}.{key}", f"{spec.name} is off here, so no chart takes these values; remove them or enable {spec.name}"
            elif key in unused:
                yield f"{spec.path}.{key}", f"{unused[key]}; remove {key}"


def _components_needed(config: PlatformConfig) -> Found:
    """A component the stack installs has what it needs installed too (its spec's needs that are
    not optional: stackmodel/components/spec.py)."""
    for spec in config.components.specs:
        if not config.enabled(spec):
            continue
        for needed in spec.required():
            if needed in config.components.specs and not config.enabled(needed):
                yield (
                    f"{needed.path}.enabled",
                    f"{spec.name} needs {needed.name}; enable {needed.name} or disable {spec.name}",
                )


# --- zones, versions and the target's own settings ------------------------------------------


def _zones(config: PlatformConfig) -> Iterator[tuple[str, str]]:
    """(config path, zone) of every zone the stack names."""
    if config.zone:
        yield "gcp:zone", config.zone
    gke = _gke(config)
    if gke is None:
        return
    if GCP_ZONE.match(gke.location):
        yield f"{CLUSTER}.location", gke.location
    for i, pool in enumerate(gke.gpu_pools):
        for zone in pool.zones or []:
            yield f"{POOLS}[{i}].zones", zone


def _zones_known(config: PlatformConfig) -> Found:
    """A zone of a known region is one facts/regions.py lists (a zone of a region taken knowingly is not judged)."""
    for path, zone in _zones(config):
        region = zone_region(zone)
        if zone in regions.ZONES or zone in config.overrides.zones or region not in regions.REGIONS:
            continue
        have = sorted(z for z in regions.ZONES if zone_region(z) == region)
        yield (
            path,
            f"{zone!r} is not a zone of {region} (facts/regions.py lists {', '.join(have)}, as of {regions.AS_OF}): check "
            f"it against `gcloud compute zones list --filter=region:{region}`; if Google opened it since, add it to "
            f"facts/regions.py, or take it knowingly with mlplatform:overrides: {{zones: [{zone}]}}",
        )


def _minor_number(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor.split("-")[0])


def _gke_version_offered(config: PlatformConfig) -> Found:
    """minMasterVersion is a minor the release channel offers for new clusters (facts/support.py)."""
    gke = _gke(config)
    if gke is None or gke.min_master_version is None or gke.min_master_version in config.overrides.gke_versions:
        return
    channel = gke.release_channel.value
    oldest, newest = GKE_CHANNEL_MINORS[channel]
    version = gke.min_master_version
    minor = _minor_number(version)
    if _minor_number(oldest) <= minor <= _minor_number(newest):
        return
    side = "older than the oldest" if minor < _minor_number(oldest) else "newer than the newest"
    yield (
        f"{CLUSTER}.minMasterVersion",
        f"{version} is {side} minor the {channel} channel offers ({oldest} to {newest}, {GKE_CHANNEL_MINORS_SOURCE}), so "
        f"GKE refuses to create the cluster at it; pick one of {oldest} to {newest} (`gcloud container get-server-config "
        f"--flatten=channels --filter=channels.channel={channel}`), remove it for the channel's default, or take a newer "
        f"one knowingly with mlplatform:overrides: {{gkeVersions: [\"{version}\"]}}",
    )




def _pipelines_database_of_the_target(config: PlatformConfig) -> Found:
    """On GKE the pipelines database is Cloud SQL, elsewhere MySQL in the cluster: the other one's
    settings would be silently ignored."""
    pipelines = config.components[PIPELINES]
    if not pipelines.enabled:
        return
    gke = _gke(config)
    if gke is None and "cloud_sql" in pipelines.model_fields_set:
        yield (
            f"{PIPELINES.path}.cloudSql",
            f"cloudSql is the database of a gke stack; on {config.cluster.kind} Pipelines keeps MySQL in the cluster "
            "(its volume: databaseStorage); remove cloudSql",
        )
    if gke is not None and "database_storage" in pipelines.model_fields_set:
        yield (
            f"{PIPELINES.path}.databaseStorage",
            "on gke the pipelines database is Cloud SQL (cloudSql.diskSizeGb sizes it), and databaseStorage, the "
            "in-cluster MySQL's volume, would be ignored; remove it or set cloudSql.diskSizeGb",
        )
    if gke is not None and gke.network.existing is None and pipelines.cloud_sql.private_service_access is False:
        yield (
            f"{PIPELINES.path}.cloudSql.privateServiceAccess",
            "the stack creates its network, which has no Private Service Access unless the program makes it, and the "
            "Cloud SQL instance has a private IP only: it would have no path to the cluster; remove "
            "privateServiceAccess: false (it is for an existing network that has one)",
        )


def _volumes_fit_the_storage_class(config: PlatformConfig) -> Found:
    """On GKE the volumes come from the default StorageClass, a Persistent Disk of at most 64 TiB."""
    if _gke(config) is None:
        return
    volumes = []
    if config.components[PIPELINES].enabled:
        volumes.append((f"{PIPELINES.path}.objectStoreStorage", config.components[PIPELINES].object_store_storage))
    monitoring = config.components[MONITORING]
    if monitoring.enabled and monitoring.backend is MetricsBackend.KUBE_PROMETHEUS_STACK:
        volumes.append((f"{MONITORING.path}.storageSize", monitoring.storage_size))
    for path, size in volumes:
        if quantity.parse(size) > PERSISTENT_DISK_MAX_BYTES:
            yield (
                path,
                f"{size} is more than GKE's default StorageClass provisions (a Persistent Disk of at most 64Ti); "
                "give at most 64Ti",
            )


def _network_holds_the_pools(config: PlatformConfig) -> Found:
    """The created subnet has an IP for every node the pools may have, and the Pod range a /24
    for each (facts/networks.py); an existing subnet's sizes are not known here."""
    gke = _gke(config)
    if gke is None or gke.network.existing is not None:
        return
    first = gke.system_pool.min * gke.zone_count() + sum(p.min * gke.zone_count(p.zones) for p in gke.gpu_pools)
    most = gke.system_pool.max * gke.zone_count() + sum(p.max * gke.zone_count(p.zones) for p in gke.gpu_pools)
    network = gke.network
    for key, cidr, holds, what in (
        ("subnetCidr", network.subnet_cidr, networks.nodes_in_subnet(network.subnet_cidr.prefixlen), "node IPs"),
        ("podsCidr", network.pods_cidr, networks.nodes_in_pod_range(network.pods_cidr.prefixlen), "nodes' Pod ranges (a /24 each)"),
    ):
        if holds < first:
            yield (
                f"{CLUSTER}.network.{key}",
                f"{cidr} holds {holds} {what}, and the pools start with {first} nodes: the cluster could not be created; "
                "use a larger range",
            )
        elif holds < most:
            yield (
                f"{CLUSTER}.network.{key}",
                f"{cidr} holds {holds} {what}, and the pools may grow to {most} nodes (their max per zone times their "
                "zones), which they never could; use a larger range or lower the pools' max",
            )


def _people_not_groups(config: PlatformConfig) -> Found:
    """An owner, a person contributor and a Grafana admin are people: a group's address there
    would be compared with the signed-in person's and match no one."""
    groups = {g.name.lower(): f"{AUTH}.groups[{k}]" for k, g in enumerate(config.components[KUBEFLOW].auth.groups)}
    gke = _gke(config)
    if gke and gke.security_group:
        groups.setdefault(gke.security_group.lower(), f"{CLUSTER}.securityGroup")
    if not groups:
        return
    for i, team in enumerate(config.teams):
        where = groups.get(team.owner.lower())
        if where:
            yield (
                f"{_team(i)}.owner",
                f"{team.owner} is a group ({where}), and a team's owner is one person; name a person as owner and the "
                f"group as a contributor, {{group: {team.owner}, role: admin}}",
            )
        for j, entry in enumerate(team.contributors):
            where = groups.get(entry.email.lower()) if entry.email else None
            if where:
                yield (
                    f"{_team(i)}.contributors[{j}].email",
                    f"{entry.email} is a group ({where}): as email it is taken for one person, who does not exist; "
                    f"write {{group: {entry.email}, role: {entry.role.value}}}",
                )
    for j, admin in enumerate(config.components[MONITORING].grafana_admins):
        where = groups.get(admin.lower())
        if where:
            yield (
                f"{MONITORING.path}.grafanaAdmins[{j}]",
                f"{admin} is a group ({where}), and Grafana admins are people (the gateway asserts a person); list the "
                "group's members here instead",
            )


def _team_ray_name_free(config: PlatformConfig, i: int) -> Found:
    """KubeRay names the cluster's token Secret after the cluster: not a Secret the platform already writes there."""
    ray = config.teams[i].ray
    if ray is not None and ray.name in TEAM_NAMESPACE_SECRETS:
        yield (
            f"{_team(i)}.ray.name",
            f"KubeRay names the Ray cluster's token Secret after the cluster, and {ray.name!r} is "
            f"{TEAM_NAMESPACE_SECRETS[ray.name]} in every team namespace: one would overwrite the other; pick another "
            "name, e.g. ray",
        )


def _notebook_registry_reachable(config: PlatformConfig) -> Found:
    """A registry on localhost is kind's (images loaded into its nodes); a GKE node pulling from
    localhost asks itself."""
    registry = config.components[KUBEFLOW].notebook_registry
    if _gke(config) is None or registry is None:
        return
    host = registry.split("/", 1)[0].split(":", 1)[0]
    if host == "localhost" or host.startswith("127.") or host.endswith(".local") or "." not in host:
        yield (
            f"{KUBEFLOW.path}.notebookRegistry",
            f"{registry!r} is a registry on the machine itself (kind's `make notebook-images` loads images there); a "
            "GKE node would ask itself for the image; remove the key to use the stack's Artifact Registry repository, "
            "or name a registry the nodes reach",
        )


# What the rules read, as config paths.
PROJECT = "gcp:project"
KIND = f"{CLUSTER}.kind"
POOLS = f"{CLUSTER}.gpuPools"
NAP = f"{CLUSTER}.autoprovisioning"
REGISTRY = f"{CLUSTER}.imageRegistry"
MANAGED_PROMETHEUS = f"{CLUSTER}.managedPrometheus"
TEAMS = "mlplatform:teams"
OVERRIDES = "mlplatform:overrides"
# config.enabled(): the toggles, and defaults such as dcgmExporter's from the cluster.
ENABLED = (COMPONENTS, KIND, POOLS, NAP)

RULES: tuple[Rule | TeamRule, ...] = (
    Rule("component-needs", "A component the stack installs has the components it needs installed too.", _components_needed, ENABLED),
    Rule("pool-names-free", "No GPU pool takes the system pool's name or Kueue's CPU flavor name.", _pool_names_free, (POOLS,)),
    Rule("autoprovisioning-covers-gpus", "With autoprovisioning on, its limits cover every GPU pool at full size.", _autoprovisioning_covers_gpus, (CLUSTER,)),
    Rule(
        "autoprovisioning-covers-pools",
        "With autoprovisioning on, its cluster-wide cpu and memory limits cover the system and GPU pools at full size.",
        _autoprovisioning_covers_pools,
        (CLUSTER,),
    ),
    Rule("gpu-pools-scale-to-zero", "Outside prod, GPU pools idle at zero nodes.", _gpu_pools_scale_to_zero, ("mlplatform:environment", KIND, POOLS)),
    Rule("dra-pools-as-gke-allows", "A DRA GPU pool is one GKE runs: no autoprovisioning, GKE 1.34+, NVIDIA's DRA driver installed.", _dra_pools_gke_allows, (KIND, POOLS, NAP, f"{CLUSTER}.minMasterVersion", NVIDIA_DRA_DRIVER.path)),
    Rule("gpu-drivers-installed", "Every GPU pool gets GKE's NVIDIA driver installation.", _gpu_drivers_installed, (KIND, POOLS)),
    Rule(
        "gpu-drivers-fit-the-gke-version",
        "A pool on GKE's DEFAULT driver gets the driver branch its GPUs need at the cluster's GKE version.",
        _gpu_drivers_fit_the_gke_version,
        (KIND, POOLS, f"{CLUSTER}.minMasterVersion", f"{CLUSTER}.releaseChannel"),
    ),
    Rule("dra-driver-has-dra-pools", "NVIDIA's DRA driver is switched on only where a GPU pool has gpuAllocation: dra.", _dra_driver_has_dra_pools, (KIND, POOLS, NVIDIA_DRA_DRIVER.path)),
    Rule(
        "prod-cluster-private",
        "A prod cluster has private nodes and a control plane only the listed ranges reach, never 0.0.0.0/0.",
        _prod_cluster_private,
        ("mlplatform:environment", KIND, f"{CLUSTER}.privateNodes", f"{CLUSTER}.masterAuthorizedNetworks"),
    ),
    Rule("prod-deletion-protected", "A prod stack keeps deletion protection on.", _prod_deletion_protected, ("mlplatform:environment", KIND, f"{CLUSTER}.deletionProtection")),
    Rule("regions-known", "Every region the stack names is in facts/regions.py or taken knowingly (mlplatform:overrides).", _regions_known, ("gcp:region", "gcp:zone", CLUSTER, TEAMS, OVERRIDES)),
    Rule(
        "provider-defaults-in-cluster-region",
        "gcp:region and gcp:zone, if set, are the cluster's region and a zone of it.",
        _provider_defaults_in_cluster_region,
        ("gcp:region", "gcp:zone", KIND, f"{CLUSTER}.location"),
    ),
    Rule(
        "machine-types-known",
        "The system pool's machine type is in facts/prices.py or taken knowingly (mlplatform:overrides).",
        _machine_types_known,
        (KIND, f"{CLUSTER}.systemPool", OVERRIDES),
    ),
    Rule(
        "oidc-issuer-as-published",
        "An OIDC issuer ending in '/' is taken only knowingly (most providers publish theirs without).",
        _oidc_issuer_as_published,
        (f"{KUBEFLOW.path}.auth", OVERRIDES),
    ),
    Rule("identities-spelled-alike", "One person is spelled one way throughout the stack (upstream compares exactly).", _identities_spelled_alike, (f"{KUBEFLOW.path}.auth", f"{MONITORING.path}.grafanaAdmins", TEAMS)),
    Rule("prod-on-gke", "A prod stack runs on a GKE cluster, never kind.", _prod_on_gke, ("mlplatform:environment", KIND)),
    Rule("queued-pools-need-kueue", "Queued GPU pools need Kueue, which creates their ProvisioningRequests.", _queued_pools_need_kueue, (KUEUE.path, KIND, POOLS)),
    Rule("ray-addon-on-gke", "KubeRay from GKE's Ray add-on only on GKE.", _ray_addon_on_gke, (KUBERAY.path, KIND)),
    Rule("dcgm-on-gke", "The DCGM exporter is switched on only on GKE (kind has no GPUs).", _dcgm_on_gke, (DCGM_EXPORTER.path, KIND)),
    Rule("managed-dcgm-needs-managed-prometheus", "GKE's managed DCGM metrics need managed Prometheus on the cluster.", _managed_dcgm_needs_managed_prometheus, (DCGM_EXPORTER.path, KIND, MANAGED_PROMETHEUS)),
    Rule("managed-backend-needs-managed-prometheus", "The gke-managed monitoring backend needs a GKE cluster with managed Prometheus.", _managed_backend_needs_managed_prometheus, (MONITORING.path, KIND, MANAGED_PROMETHEUS)),
    Rule("gpu-metrics-reach-prometheus", "GPU metrics go to the Prometheus that dashboards and alerts read.", _gpu_metrics_reach_prometheus, ENABLED),
    Rule("idle-reclaim-can-judge", "The idle reclaim runs only where notebooks, Prometheus and GPU metrics are.", _idle_reclaim_can_judge, ENABLED),
    Rule(
        "idle-reclaim-period-within-retention",
        "The idle reclaim's period fits in the samples the stack's Prometheus keeps.",
        _idle_reclaim_period_within_retention,
        (*ENABLED, IDLE_RECLAIM.path, MONITORING.path),
    ),
    Rule("idle-reclaim-reads-mig-slices", "The idle reclaim runs on MIG pools only with the chart's DCGM exporter, which reports each slice.", _idle_reclaim_reads_mig_slices, (POOLS, IDLE_RECLAIM.path, DCGM_EXPORTER.path)),
    Rule("gateway-exposed-on-gke", "A public hostname and IAP for the Kubeflow gateway only on GKE.", _gateway_exposed_on_gke, (f"{KUBEFLOW.path}.auth", KIND)),
    Rule("teams-need-kubeflow", "Teams are Kubeflow profiles, so they need the kubeflow component.", _teams_need_kubeflow, (TEAMS, KUBEFLOW.path)),
    Rule("teams-need-kueue", "Teams get Kueue queues, so they need the kueue component.", _teams_need_kueue, (TEAMS, KUEUE.path)),
    Rule("service-account-ids-unique", "Every Google service account the stack creates gets a valid id of its own.", _service_account_ids_unique, (KIND, f"{CLUSTER}.name", MONITORING.path, TEAMS)),
    TeamRule("team-names-unique", "No two teams share a name.", _team_names_unique, (TEAMS,)),
    TeamRule("team-gpus-provided", "A team's GPU quota names accelerators a GPU pool or autoprovisioning provides.", _team_gpus_provided, (TEAMS, KIND, POOLS, NAP)),
    TeamRule("contributor-binding-names-unique", "No two contributors of a team get one KFAM binding name.", _contributor_binding_names_unique, (TEAMS,)),
    TeamRule("contributor-groups-defined", "A team's group contributor is a group the stack defines (auth.groups).", _contributor_groups_defined, (TEAMS, f"{KUBEFLOW.path}.auth")),
    TeamRule("member-binding-names-unique", "No two members of a team's groups get one KFAM binding name.", _member_binding_names_unique, (TEAMS, f"{KUBEFLOW.path}.auth")),
    TeamRule("member-binding-names-free", "A group member's binding is not also a person contributor's (one name, one role).", _member_binding_collisions, (TEAMS, f"{KUBEFLOW.path}.auth")),
    Rule("stack-groups-not-also-googles", "A stack group is not also a Google group that Google Groups for RBAC hands kubectl.", _stack_groups_not_also_googles, (f"{KUBEFLOW.path}.auth", f"{CLUSTER}.securityGroup")),
    Rule("groups-can-be-supplied", "Each group's membership has a source in this stack's sign-in; its members can sign in.", _groups_can_be_supplied, (f"{KUBEFLOW.path}.auth",)),
    TeamRule("team-bucket-on-gke", "Team buckets (GCS) only on GKE.", _team_bucket_on_gke, (TEAMS, KIND)),
    TeamRule("team-pipelines-need-bucket-on-gke", "On GKE a team that runs pipelines has a bucket: its pipeline root.", _team_pipelines_need_bucket_on_gke, (TEAMS, KIND, f"{PIPELINES.path}")),
    TeamRule("team-default-bucket-name-valid", "A team bucket's default name, <project>-<team>, is a valid Cloud Storage name.", _team_default_bucket_name_valid, (TEAMS, KIND, PROJECT)),
    TeamRule("team-bucket-names-unique", "No two teams get one bucket name (bucket names are global).", _team_bucket_names_unique, (TEAMS, KIND, PROJECT)),
    TeamRule("contributor-binding-names-fit", "KFAM's binding name of every contributor is a valid Kubernetes name (at most 253 characters).", _contributor_binding_names_fit, (TEAMS,)),
    TeamRule("team-ray-fits-a-node", "A team Ray worker fits the allocatable CPU and memory of a node it can land on.", _team_ray_fits_a_node, (TEAMS, CLUSTER)),
    TeamRule("team-ray-head-within-quota", "The team's quota admits the Ray head (CPU, memory) on its flavor.", _team_ray_head_within_quota, (TEAMS, POOLS, KUEUE.path)),
    TeamRule("team-ray-worker-within-quota", "The team's quota admits one Ray worker (CPU, memory, the GPUs of a node) on its flavor.", _team_ray_worker_within_quota, (TEAMS, KIND, POOLS, KUEUE.path)),
    TeamRule("team-ray-pool-exists", "A team Ray cluster's pool is one of the stack's GPU pools.", _team_ray_pool_exists, (TEAMS, KIND, POOLS)),
    TeamRule("team-ray-pool-advertises-gpus", "A team Ray cluster's pool gives GPUs through the device plugin its workers ask (not DRA).", _team_ray_pool_serves_gpus, (TEAMS, KIND, POOLS)),
    TeamRule("team-ray-pool-not-topology-aware", "A team Ray cluster's workers are not on a pool Kueue places by topology.", _team_ray_pool_not_topology_aware, (TEAMS, KIND, POOLS, KUEUE.path)),
    TeamRule("team-ray-needs-kuberay", "A team Ray cluster needs the kuberay component.", _team_ray_needs_kuberay, (TEAMS, KUBERAY.path)),
    Rule("gpu-fabric-installed", "A GPU pool with network tcpxo or rdma has the gpuFabric component installing its Networks and NCCL plugin.", _gpu_fabric_installed, (POOLS, GPU_FABRIC.path)),
    Rule("gpu-fabric-has-fabric-pools", "The gpuFabric component is switched on only where a GPU pool has network tcpxo or rdma.", _gpu_fabric_has_fabric_pools, (KIND, POOLS, GPU_FABRIC.path)),
    Rule("grafana-signs-in-through-kubeflow", "Grafana trusts the Kubeflow gateway's identity, so monitoring needs kubeflow.", _grafana_signs_in_through_kubeflow, (MONITORING.path, KUBEFLOW.path)),
    Rule("dex-has-static-users", "With Dex, someone can sign in: at least one static user.", _dex_has_static_users, (KUBEFLOW.path,)),
    Rule("dex-password-envs-unique", "Every Dex static user reads its password hash from an environment variable of its own.", _dex_password_envs_unique, (f"{KUBEFLOW.path}.auth",)),
    Rule("grafana-admins-can-sign-in", "Every Grafana admin is someone the stack lets sign in.", _grafana_admins_can_sign_in, (KUBEFLOW.path, f"{MONITORING.path}.grafanaAdmins")),
    TeamRule("team-people-can-sign-in", "A team's owner and contributors are people the stack lets sign in.", _team_people_can_sign_in, (TEAMS, KUBEFLOW.path)),
    TeamRule("team-container-defaults-fit-quota", "A team's default container requests fit in its quota.", _team_container_defaults_fit_quota, (TEAMS,)),
    Rule("notebook-images-have-a-registry", "A gke stack's notebook images come from its Artifact Registry repository or a named registry.", _notebook_images_have_a_registry, (KIND, REGISTRY, KUBEFLOW.path)),
    TeamRule("team-push-images-needs-registry", "A team pushes images only to a gke stack's Artifact Registry repository.", _team_push_images_needs_registry, (TEAMS, KIND, REGISTRY)),
    Rule("secrets-key-in-cluster-region", "The Cloud KMS key that encrypts Secrets is in the cluster's region, as Google advises.", _secrets_key_in_cluster_region, (KIND, f"{CLUSTER}.location", f"{CLUSTER}.secretsEncryption")),
    Rule("host-project-is-another-project", "A Shared VPC host project is not the stack's own project.", _host_project_is_another_project, (PROJECT, f"{CLUSTER}.network")),
    Rule("chart-values-reach-a-chart", "A chart values overlay belongs to a component that installs that chart in this stack.", _chart_values_reach_a_chart, ENABLED),
    Rule("zones-known", "Every zone the stack names is in facts/regions.py or taken knowingly (mlplatform:overrides).", _zones_known, ("gcp:zone", CLUSTER, OVERRIDES)),
    Rule("gke-version-offered", "minMasterVersion is a minor the release channel offers (facts/support.py) or taken knowingly.", _gke_version_offered, (KIND, f"{CLUSTER}.minMasterVersion", f"{CLUSTER}.releaseChannel", OVERRIDES)),
    Rule("pipelines-database-of-the-target", "Pipelines' database settings are the target's: Cloud SQL on gke, in-cluster MySQL elsewhere; Cloud SQL has a private path.", _pipelines_database_of_the_target, (KIND, f"{CLUSTER}.network", PIPELINES.path)),
    Rule("volumes-fit-the-storage-class", "On gke each volume fits a Persistent Disk of the default StorageClass (64 TiB).", _volumes_fit_the_storage_class, (KIND, PIPELINES.path, MONITORING.path)),
    Rule("network-holds-the-pools", "The created subnet and Pod range hold every node the pools may have.", _network_holds_the_pools, (CLUSTER,)),
    Rule("people-not-groups", "An owner, a person contributor and a Grafana admin are not a group the stack defines.", _people_not_groups, (TEAMS, f"{KUBEFLOW.path}.auth", f"{CLUSTER}.securityGroup", f"{MONITORING.path}.grafanaAdmins")),
    TeamRule("team-ray-name-free", "A team Ray cluster's token Secret is not one the platform writes into the namespace.", _team_ray_name_free, (TEAMS,)),
    Rule("notebook-registry-reachable", "On gke the notebook registry is one the nodes reach, not localhost.", _notebook_registry_reachable, (KIND, KUBEFLOW.path)),
)


# --- warnings: exit 0, printed with the path ------------------------------------------------


def _cohort_shared(config: PlatformConfig) -> Found:
    """A Kueue cohort lends and borrows between the teams in it: one team alone in it gets nothing."""
    named: dict[str, list[int]] = {}
    for i, team in enumerate(config.teams):
        if team.cohort:
            named.setdefault(team.cohort, []).append(i)
    for cohort, teams in named.items():
        if len(teams) == 1:
            i = teams[0]
            yield (
                f"{_team(i)}.cohort",
                f"no other team names cohort {cohort!r}, so team {config.teams[i].name} borrows from and lends to nobody "
                "(a typo of another team's cohort?)",
            )


def _queued_pools_can_get_ready(config: PlatformConfig) -> Found:
    """A queued pool's nodes come up only after Kueue admits the workload (facts/limits.py)."""
    queued = [p.name for p in _pools(config) if p.provisioning is Provisioning.QUEUED]
    kueue = config.components[KUEUE]
    if not queued or not kueue.enabled:
        return
    timeout = kueue.wait_for_pods_ready.timeout
    seconds = sum(int(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in re.findall(r"([0-9]+)([hms])", timeout))
    if seconds < QUEUED_POOL_READY_MIN_SECONDS:
        yield (
            f"{KUEUE.path}.waitForPodsReady.timeout",
            f"{timeout} is shorter than a queued pool ({', '.join(queued)}) can have its pods ready: its nodes boot, "
            f"install the GPU driver and pull images only after Kueue admits the workload, and cluster autoscaler alone "
            f"gives its pods {QUEUED_POOL_READY_MIN_SECONDS // 60}m; such workloads would be evicted again and again",
        )


def _topology_labels_unused(config: PlatformConfig) -> Found:
    """A pool whose machines GKE labels with their block and sub-block, but that Kueue cannot
    place by them (GpuPool.topology_aware, facts/topology.py): said, as the stack may mean it."""
    if not config.components[KUEUE].enabled:
        return
    for i, pool in enumerate(_pools(config)):
        if pool.topology_labelled and not pool.topology_aware:
            yield (
                f"{POOLS}[{i}]",
                f"pool {pool.name}'s {pool.machine_type} nodes carry GKE's topology labels, but its nodes come only for pods "
                "Kueue has admitted and Kueue's topology-aware scheduling counts only nodes that exist: its jobs are placed "
                "without topology. For block and sub-block placement set min equal to max (a fixed pool, e.g. on a "
                "reservation) or provisioning: queued",
            )


def _ray_gpu_workers_scale_to_zero(config: PlatformConfig) -> Found:
    """With the idle reclaim on, GPUs are given back when idle; a team Ray cluster gives its GPU
    workers back through its autoscaler (components/profiles/ray.py RAY_IDLE_TIMEOUT_SECONDS),
    down to minWorkers only."""
    if not config.enabled(IDLE_RECLAIM):
        return
    for i, team in enumerate(config.teams):
        if team.ray and team.ray.pool and team.ray.min_workers > 0:
            yield (
                f"{_team(i)}.ray.minWorkers",
                f"team {team.name}'s Ray cluster keeps {team.ray.min_workers} GPU worker(s) of pool {team.ray.pool} even when "
                "idle, while the idle reclaim gives idle notebook GPUs back; set minWorkers: 0 for its autoscaler to remove "
                "idle GPU workers (Ray then starts them again for the next task)",
            )


def _gpu_metrics_of_dra_pools_carry_no_team(config: PlatformConfig) -> Found:
    """At the pinned DCGM exporter the GPUs of a DRA pool get no pod attribution (facts/dra.py
    DCGM_DRA_ATTRIBUTION_OFF): their metrics reach Prometheus without pod or team, so the per-team
    dashboards, GPU-hours and the idle-GPU alert leave them out. Said, as the pools still work."""
    if not config.enabled(DCGM_EXPORTER):
        return
    for i, pool in enumerate(_pools(config)):
        if pool.dra:
            yield (
                f"{POOLS}[{i}].gpuAllocation",
                f"pool {pool.name}'s GPUs are given through DRA, and the DCGM exporter of this release attributes DRA GPUs to "
                f"pods only through {DCGM_DRA_RESOURCE_SLICES} ResourceSlices, which GKE does not serve: their metrics carry "
                "no pod or team, so per-team dashboards, GPU-hours and the idle-GPU alert leave this pool's work out "
                "(docs/observability.md, \"GPUs through DRA\"); use gpuAllocation: device-plugin where that matters",
            )


WARNINGS: tuple[Rule, ...] = (
    Rule("cohort-shared", "A team's Kueue cohort is named by another team too.", _cohort_shared, (TEAMS,)),
    Rule("topology-labels-unused", "A GPU pool whose nodes carry GKE's topology labels is one Kueue can place by them.", _topology_labels_unused, (POOLS, KUEUE.path)),
    Rule("queued-pools-can-get-ready", "Kueue's pods-ready timeout leaves a queued pool's nodes time to come up.", _queued_pools_can_get_ready, (POOLS, KUEUE.path)),
    Rule("ray-gpu-workers-scale-to-zero", "With the idle reclaim on, team Ray clusters let idle GPU workers go.", _ray_gpu_workers_scale_to_zero, (TEAMS, ENABLED[0])),
    Rule("gpu-metrics-of-dra-pools-carry-no-team", "A DRA pool's GPU metrics carry no pod or team at the pinned DCGM exporter.", _gpu_metrics_of_dra_pools_carry_no_team, ENABLED),
)


def warnings(config: PlatformConfig) -> list[tuple[str, str]]:
    """What may be meant but usually is not: (path, message) of every warning rule, for a stack that validated."""
    return [found for rule in WARNINGS for found in rule.check(config)]


def cross_checks(config: PlatformConfig, unparsed: Sequence[str] = ()) -> list[tuple[str, str]]:
    """Every problem of every rule, as (path, message): the stack's rules in table order,
    then team by team, each team's rules in table order. `unparsed`: config paths the schema
    refused (and `config` has at their defaults): a rule that reads any of them is skipped."""
    rules = [rule for rule in RULES if not any(overlaps(read, path) for read in rule.reads for path in unparsed)]
    problems = [found for rule in rules if isinstance(rule, Rule) for found in rule.check(config)]
    for i in range(len(config.teams)):
        problems += [found for rule in rules if isinstance(rule, TeamRule) for found in rule.check(config, i)]
    return problems


def missing_keys(raw: dict[str, Any]) -> list[tuple[str, str]]:
    """Keys one part of the stack makes required elsewhere; checked on the raw file, before
    the schema, so they are reported together with every type error."""
    cluster = raw.get(CLUSTER)
    if isinstance(cluster, dict) and cluster.get("kind") == "gke" and not raw.get("gcp:project"):
        return [("gcp:project", "a gke cluster needs the GCP project; set gcp:project")]
    return []
