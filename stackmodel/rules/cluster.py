"""The cluster and its landing zone: prod's protections, the regions, zones, machine types and GKE
versions it names, its network and keys."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from facts import networks, regions
from facts.prices import SHAPES
from facts.support import GKE_CHANNEL_MINORS, GKE_CHANNEL_MINORS_SOURCE
from stackmodel.rules.rule import (
    CLUSTER,
    KIND,
    OVERRIDES,
    POOLS,
    PROJECT,
    TEAMS,
    Found,
    gke_cluster,
    minor_number,
    stack_rule,
    team_path,
)
from stackmodel.schema import GCP_REGION, GCP_ZONE, Environment, zone_region
from stackmodel.schema.sources import artifact_registry_location
from stackmodel.stack import PlatformConfig


@stack_rule("prod-cluster-private", "A prod cluster has private nodes and a control plane only the listed ranges reach, never 0.0.0.0/0.", reads=("mlplatform:environment", KIND, f"{CLUSTER}.privateNodes", f"{CLUSTER}.masterAuthorizedNetworks"))
def _prod_cluster_private(config: PlatformConfig) -> Found:
    """A prod cluster's nodes have no public IPs and its control plane answers only the ranges
    the stack lists, never the whole internet."""
    gke = gke_cluster(config)
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


@stack_rule("prod-deletion-protected", "A prod stack keeps deletion protection on.", reads=("mlplatform:environment", KIND, f"{CLUSTER}.deletionProtection"))
def _prod_deletion_protected(config: PlatformConfig) -> Found:
    """In prod the cluster, the pipelines database and the team data are deletion-protected: the
    cloud APIs' flags and Pulumi's protect all follow the stack's deletion protection."""
    gke = gke_cluster(config)
    if gke is not None and config.environment is Environment.PROD and gke.deletion_protection is False:
        yield (
            f"{CLUSTER}.deletionProtection",
            "a prod stack keeps deletion protection on (the cluster, the pipelines database and Pulumi's protect "
            "follow it); remove deletionProtection: false",
        )


@stack_rule("prod-on-gke", "A prod stack runs on a GKE cluster, never kind.", reads=("mlplatform:environment", KIND))
def _prod_on_gke(config: PlatformConfig) -> Found:
    if config.environment is Environment.PROD and gke_cluster(config) is None:
        yield "mlplatform:environment", "a kind cluster is never prod; use dev, staging or ci, or a gke cluster"


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
    gke = gke_cluster(config)
    if gke is None:
        return
    yield f"{CLUSTER}.location", gke.region
    location = gke.image_registry.location
    if location and GCP_REGION.match(location):
        yield f"{CLUSTER}.imageRegistry.location", location
    for i, team in enumerate(config.teams):
        bucket = team.bucket.location.lower() if team.bucket and team.bucket.location else None
        if bucket and GCP_REGION.match(bucket):
            yield f"{team_path(i)}.bucket.location", bucket


def _registry_places(config: PlatformConfig) -> Iterator[tuple[str, str]]:
    """(config path, region) of the Artifact Registry hosts the stack pulls from: the mirrors'."""
    for path, value in (("mlplatform:images.mirror", config.images.mirror), ("mlplatform:sources.charts", config.sources.charts)):
        region = artifact_registry_location(value)
        if region:
            yield path, region


@stack_rule("regions-known", "Every region the stack names is in facts/regions.py or taken knowingly (mlplatform:overrides).", reads=("gcp:region", "gcp:zone", CLUSTER, TEAMS, OVERRIDES))
def _regions_known(config: PlatformConfig) -> Found:
    for path, region in (*_places(config), *_registry_places(config)):
        found = _unlisted_region(config, region)
        if found:
            yield path, found


@stack_rule("provider-defaults-in-cluster-region", "gcp:region and gcp:zone, if set, are the cluster's region and a zone of it.", reads=("gcp:region", "gcp:zone", KIND, f"{CLUSTER}.location"))
def _provider_defaults_in_cluster_region(config: PlatformConfig) -> Found:
    """gcp:region and gcp:zone are the Google provider's defaults, for resources that name no
    region; the program names the cluster's everywhere, so another one only misleads."""
    gke = gke_cluster(config)
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


@stack_rule("machine-types-known", "The system pool's machine type is in facts/prices.py or taken knowingly (mlplatform:overrides).", reads=(KIND, f"{CLUSTER}.systemPool", OVERRIDES))
def _machine_types_known(config: PlatformConfig) -> Found:
    """The system pool's machine type is one facts/prices.py SHAPES knows (its vCPUs and memory
    size the pool, the Ray workers it takes and autoprovisioning's totals); GPU pools are held
    to the GPU catalog by the schema."""
    gke = gke_cluster(config)
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


@stack_rule("secrets-key-in-cluster-region", "The Cloud KMS key that encrypts Secrets is in the cluster's region, as Google advises.", reads=(KIND, f"{CLUSTER}.location", f"{CLUSTER}.secretsEncryption"))
def _secrets_key_in_cluster_region(config: PlatformConfig) -> Found:
    """Google: "Ensure that the key is in the same location as the cluster to decrease latency
    and to prevent cases where resources depend on services spread across multiple failure
    domains" (cloud.google.com/kubernetes-engine/docs/how-to/encrypting-secrets, read 2026-12-01)."""
    gke = gke_cluster(config)
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


@stack_rule("host-project-is-another-project", "A Shared VPC host project is not the stack's own project.", reads=(PROJECT, f"{CLUSTER}.network"))
def _host_project_is_another_project(config: PlatformConfig) -> Found:
    gke = gke_cluster(config)
    existing = gke.network.existing if gke else None
    if existing and existing.host_project and existing.host_project == config.project:
        yield (
            f"{CLUSTER}.network.existing.hostProject",
            f"{existing.host_project} is the stack's own project (gcp:project); remove hostProject, which names a "
            "Shared VPC host project",
        )


def _zones(config: PlatformConfig) -> Iterator[tuple[str, str]]:
    """(config path, zone) of every zone the stack names."""
    if config.zone:
        yield "gcp:zone", config.zone
    gke = gke_cluster(config)
    if gke is None:
        return
    if GCP_ZONE.match(gke.location):
        yield f"{CLUSTER}.location", gke.location
    for i, pool in enumerate(gke.gpu_pools):
        for zone in pool.zones or []:
            yield f"{POOLS}[{i}].zones", zone


@stack_rule("zones-known", "Every zone the stack names is in facts/regions.py or taken knowingly (mlplatform:overrides).", reads=("gcp:zone", CLUSTER, OVERRIDES))
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


@stack_rule("gke-version-offered", "minMasterVersion is a minor the release channel offers (facts/support.py) or taken knowingly.", reads=(KIND, f"{CLUSTER}.minMasterVersion", f"{CLUSTER}.releaseChannel", OVERRIDES))
def _gke_version_offered(config: PlatformConfig) -> Found:
    """minMasterVersion is a minor the release channel offers for new clusters (facts/support.py)."""
    gke = gke_cluster(config)
    if gke is None or gke.min_master_version is None or gke.min_master_version in config.overrides.gke_versions:
        return
    channel = gke.release_channel.value
    oldest, newest = GKE_CHANNEL_MINORS[channel]
    version = gke.min_master_version
    minor = minor_number(version)
    if minor_number(oldest) <= minor <= minor_number(newest):
        return
    side = "older than the oldest" if minor < minor_number(oldest) else "newer than the newest"
    yield (
        f"{CLUSTER}.minMasterVersion",
        f"{version} is {side} minor the {channel} channel offers ({oldest} to {newest}, {GKE_CHANNEL_MINORS_SOURCE}), so "
        f"GKE refuses to create the cluster at it; pick one of {oldest} to {newest} (`gcloud container get-server-config "
        f"--flatten=channels --filter=channels.channel={channel}`), remove it for the channel's default, or take a newer "
        f"one knowingly with mlplatform:overrides: {{gkeVersions: [\"{version}\"]}}",
    )


@stack_rule("network-holds-the-pools", "The created subnet and Pod range hold every node the pools may have.", reads=(CLUSTER,))
def _network_holds_the_pools(config: PlatformConfig) -> Found:
    """The created subnet has an IP for every node the pools may have, and the Pod range a /24
    for each (facts/networks.py); an existing subnet's sizes are not known here."""
    gke = gke_cluster(config)
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
