"""The Kubernetes a stack's cluster runs: the version it is created at and every minor it
runs in its life, read from the stack's config and the pin table and dated facts (kind's
node image; GKE's minMasterVersion and release channel default). The full render renders
charts for the first, `check` validates built-in kinds for its minor, and the support rules
(tooling/support.py) judge every component's range against each minor.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from facts.support import GKE_CHANNEL_DEFAULTS, minor
from facts.versions import KIND_NODE_IMAGE
from stackmodel.schema import GkeClusterConfig, KindClusterConfig
from stackmodel.stack import PlatformConfig


@dataclass(frozen=True)
class ClusterMinor:
    """A Kubernetes minor the cluster runs, and why we think so."""

    minor: tuple[int, int]
    label: str
    source: str
    version: str
    """the version as Helm's `--kube-version` takes it: `v1.36.4`, `v1.35.5-gke.1241004`, `v1.35.0` for a bare minor"""


def _semver(version: str) -> str:
    """`1.35` -> `v1.35.0`, `1.35.5-gke.1241004` -> `v1.35.5-gke.1241004`."""
    version = version.removeprefix("v")
    return f"v{version}.0" if re.fullmatch(r"\d+\.\d+", version) else f"v{version}"


def cluster_minors(config: PlatformConfig | None) -> list[ClusterMinor]:
    """The Kubernetes minors the cluster runs, the one it is created at first. kind: its node
    image. GKE: the stack's minMasterVersion, which the cluster is created at and never goes
    below; and the release channel's default, which GKE auto-upgrades a channel cluster to,
    unless it is older than that minimum (GKE does not downgrade). No minimum: the default."""
    cluster = config.cluster if config else None
    if isinstance(cluster, KindClusterConfig):
        version = KIND_NODE_IMAGE.version.split("@")[0]
        return [
            ClusterMinor(minor(version), f"kind node image kindest/node:{version}", "facts/versions.py KIND_NODE_IMAGE", _semver(version))
        ]
    if isinstance(cluster, GkeClusterConfig):
        found = []
        if cluster.min_master_version:
            found.append(
                ClusterMinor(
                    minor(cluster.min_master_version),
                    f"minMasterVersion {cluster.min_master_version}",
                    "the stack file",
                    _semver(cluster.min_master_version),
                )
            )
        default = GKE_CHANNEL_DEFAULTS[cluster.release_channel.value]
        if not found or minor(default.version) >= found[0].minor:
            found.append(
                ClusterMinor(
                    minor(default.version),
                    f"GKE {default.channel} channel default {default.version} as of {default.as_of}",
                    str(default.source),
                    _semver(default.version),
                )
            )
        return found
    return []


def kubernetes_version(config: PlatformConfig | None) -> str:
    """The Kubernetes version the stack's cluster is created at (the first of `cluster_minors`):
    the full render renders charts for it and `check` validates built-in kinds for its minor.
    A plan without a config (tests of single objects) gets kind's node image."""
    found = cluster_minors(config)
    return found[0].version if found else _semver(KIND_NODE_IMAGE.version.split("@")[0])
