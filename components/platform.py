"""The composition: which component module installs which key of `mlplatform:components`,
and the order the graph cannot see by itself (CRDs and webhooks before what uses them)."""

from __future__ import annotations

from typing import Callable

from components.dcgm import install_dcgm_exporter
from components.monitoring import install_monitoring
from infra.cluster import Cluster
from stacks.schema import PlatformConfig

Installer = Callable[[PlatformConfig, Cluster], None]

# Filled as each component lands; an enabled component without an installer is a config error.
# `install` runs them in this order: a component comes after the ones it depends on.
INSTALLERS: dict[str, Installer] = {
    "monitoring": install_monitoring,
    # after monitoring: its ServiceMonitor depends on the Prometheus Operator CRDs
    "dcgmExporter": install_dcgm_exporter,
}


def unimplemented(config: PlatformConfig) -> list[tuple[str, str]]:
    """Enabled components nothing installs yet, as (path, message): never a silent no-op."""
    return [
        (
            f"mlplatform:components.{key}.enabled",
            f"{key} is not implemented yet; set mlplatform:components.{key}.enabled: false",
        )
        for key, enabled in config.enabled_components().items()
        if enabled and key not in INSTALLERS
    ]


def install(config: PlatformConfig, cluster: Cluster) -> None:
    enabled = config.enabled_components()
    for key, installer in INSTALLERS.items():
        if enabled.get(key):
            installer(config, cluster)
