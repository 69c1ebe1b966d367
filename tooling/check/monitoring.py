"""Monitoring: every monitor and rule selected by a Prometheus, the DCGM exporter's metric names as
the platform's queries read them."""

from __future__ import annotations

import re
from collections.abc import Iterator

from facts.versions import DCGM_EXPORTER, DCGM_METRIC_NAMES
from tooling.check.platform import Platform, Violation, check_rule, image_site_label, label, selects

MONITOR_SELECTORS = {
    "ServiceMonitor": ("serviceMonitorSelector", "serviceMonitorNamespaceSelector"),
    "PodMonitor": ("podMonitorSelector", "podMonitorNamespaceSelector"),
    "PrometheusRule": ("ruleSelector", "ruleNamespaceSelector"),
}


@check_rule("monitor", "every monitor and rule selected by a Prometheus")
def monitors_selected(platform: Platform) -> Iterator[Violation]:
    """Every ServiceMonitor, PodMonitor and PrometheusRule is picked up by a Prometheus in the
    platform (Prometheus Operator: a nil selector selects nothing, {} everything; a nil
    namespace selector means the Prometheus' own namespace only)."""
    prometheuses = [o for o in platform.of_kind("Prometheus") if o.key[0] == "monitoring.coreos.com"]
    for o in platform.of_kind(*MONITOR_SELECTORS):
        if o.key[0] != "monitoring.coreos.com":
            continue
        selector_key, namespace_key = MONITOR_SELECTORS[o.obj["kind"]]
        labels = (o.obj.get("metadata") or {}).get("labels") or {}
        namespace_labels = platform.namespaces.get(o.key[2], {})
        picked = False
        for prometheus in prometheuses:
            spec = prometheus.obj.get("spec") or {}
            selector, namespace_selector = spec.get(selector_key), spec.get(namespace_key)
            if selector is None or not selects(selector, labels):
                continue
            if namespace_selector is None and o.key[2] != prometheus.key[2]:
                continue
            if namespace_selector is not None and not selects(namespace_selector, namespace_labels):
                continue
            picked = True
        if not picked:
            where = ", ".join(label(p) for p in prometheuses) or "no Prometheus in the platform"
            yield Violation("monitor", label(o), o.source, f"selected by no Prometheus ({where})")


DCGM_EXPORTER_TAG = re.compile(r"^\d+(?:\.\d+)*-(?P<major>\d+)\.(?P<minor>\d+)\.\d+")
"""`<DCGM>-<exporter>[-<variant>]`, the dcgm-exporter image's tags (4.5.3-4.8.2-distroless)."""


@check_rule("dcgm-metric-names", "the DCGM exporter names its metrics as the platform's queries read them")
def dcgm_metric_names(platform: Platform) -> Iterator[Violation]:
    """The DCGM exporter names its metrics as the platform's queries read them: none newer
    than facts/versions.py DCGM_METRIC_NAMES (4.9 renames them and changes their units)."""
    (repository,) = DCGM_EXPORTER.image_tags()
    for o, site in platform.image_sites:
        identity = platform.source_of(site.reference)
        found = DCGM_EXPORTER_TAG.match(identity.tag or "") if identity and identity.repository == repository else None
        if found and (int(found["major"]), int(found["minor"])) > DCGM_METRIC_NAMES:
            yield Violation(
                "dcgm-metric-names", label(o), o.source,
                f"{image_site_label(site)} runs dcgm-exporter {found['major']}.{found['minor']}, which renames the default fields "
                "to DCGM 4.7's names and changes their units (utilisation a 0-1 ratio, not percent) from 4.9.0; the "
                "platform's alerts (components/alerts.py), dashboards (components/dashboards/), GPU-hours "
                "(components/gpu_hours.py) and idle reclaim (components/idle_reclaim_job.py) read the "
                f"{DCGM_METRIC_NAMES[0]}.{DCGM_METRIC_NAMES[1]} names and would see nothing or wrong values: stay on "
                f"{DCGM_METRIC_NAMES[0]}.{DCGM_METRIC_NAMES[1]}.x until they are migrated (facts/versions.py DCGM_METRIC_NAMES)",
            )
