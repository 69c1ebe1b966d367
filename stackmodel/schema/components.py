"""The stack file's components: which upstream projects the platform installs, and each
one's settings (Kubeflow's sign-in, Kueue's admission, monitoring, ...)."""

from __future__ import annotations

import datetime
import re
from decimal import Decimal
from enum import Enum
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    Field,
    StrictBool,
    StrictInt,
    field_validator,
)

from facts import versions
from facts.gpu_catalog import ACCELERATORS
from facts.limits import GO_DURATION_MAX_SECONDS
from stackmodel.schema.auth import KubeflowAuth
from stackmodel.schema.cluster import GkeClusterConfig
from stackmodel.schema.common import (
    DURATION,
    REGISTRY_PATH,
    RETENTION,
    RETENTION_SECONDS,
    Email,
    Model,
    ValueKind,
    VolumeSize,
    _unique,
    problems,
)
from stackmodel.schema.component import ComponentSpec, Need, Ready, Toggle, What

# --- chart values overlays (the escape hatch) ----------------------------------------
# Key names that hold a secret in the charts' own values (password, adminPassword, apiKey,
# token, clientSecret, ...): a stack file holds no secret in plain text, so such a value is
# refused; the chart's existingSecret-style keys (a Secret's name) stay allowed.
SECRET_VALUE_KEY = re.compile(r"(password|passwd|secret|token|apikey|api_key|credentials)$", re.IGNORECASE)
SECRET_REFERENCE_KEY = re.compile(r"^existing|secretname$|secretref$|^secretkey", re.IGNORECASE)


def _chart_values(values: dict[str, Any]) -> dict[str, Any]:
    """Values any chart could take (a mapping of YAML data), keys as written; dates and
    plain-text secrets refused, each where it is."""
    found: list[tuple[str, str]] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                where = f"{path}.{key}" if path else str(key)
                if isinstance(value, str) and value and SECRET_VALUE_KEY.search(str(key)) and not SECRET_REFERENCE_KEY.search(str(key)):
                    found.append(
                        (
                            where,
                            f"{key!r} holds a secret, and a stack file holds none in plain text; put it in a Kubernetes "
                            "Secret and give the chart that Secret's name (its existingSecret-style key)",
                        )
                    )
                walk(value, where)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, f"{path}[{i}]")
        elif isinstance(node, (datetime.date, datetime.datetime)):
            found.append((path, f"YAML reads {node} as a date, Pulumi passes it on as text: quote it"))
        elif node is None:
            found.append(
                (
                    path,
                    "null: Helm would drop the chart's default here, but Pulumi need not pass a null on to Helm as "
                    "the offline render does; give the value you want instead (false, 0, \"\", [] or {})",
                )
            )

    walk(values, "")
    if found:
        raise problems(found)
    return values


CHART_VALUES_KIND = ValueKind("chart values (a mapping)")
ChartValues = Annotated[dict[str, Any], AfterValidator(_chart_values), CHART_VALUES_KIND]
"""Helm values, any keys the chart takes."""

CHART_VALUES_RULE = (
    "Chart `values` (the escape hatch for a chart setting the schema has no key for, docs/chart-values.md) are "
    "merged last over the values the platform sets: mappings merge key by key, any other value (a list, a "
    "string, a number, a boolean) replaces the platform's whole, and null is refused. A key the platform sets or "
    "relies on is refused in an overlay, naming the stack key to use instead, and so is a value of another type "
    "than the chart takes; `python -m stacks check` judges the merged result like everything else."
)


def chart_values_field(chart: str) -> Any:
    """The `values` overlay of a component installed from `chart` (a Helm chart)."""
    return Field(default_factory=dict, description=f"Helm values for {chart}, merged last over the platform's (see above the tables).")


class CertManagerConfig(Toggle):
    """cert-manager from its own chart, with the issuer and NetworkPolicies the pinned Kubeflow release adds (webhook certificates)."""

    values: ChartValues = chart_values_field("the cert-manager chart")


CERT_MANAGER = ComponentSpec(
    "certManager",
    CertManagerConfig,
    "Webhook certificates; kubeflow needs it.",
    installed_by="components.cert_manager:INSTALLATION",
    on_by_default=True,
    pins=(versions.CERT_MANAGER,),
)


class IstioConfig(Toggle):
    """Istio with CNI and the ingress gateway, as the pinned Kubeflow release installs it."""



KUBEFLOW_NAMESPACES = Ready("kubeflowNamespaces")
"""Kubeflow's namespace tree, made before every component (Istio's and Trainer's objects live in it)."""
KUBEFLOW_POD_DEFAULTS = Ready("kubeflowPodDefaults")
"""Kubeflow's PodDefaults webhook, and with it the PodDefault CRD."""
KUBEFLOW_HTTPS_GATEWAY = Ready("kubeflowHttpsGateway")
"""On GKE behind an Ingress: the gateway whose address is the A record auth.hostname needs."""

ISTIO = ComponentSpec(
    "istio",
    IstioConfig,
    "Service mesh and ingress gateway; kubeflow needs it.",
    installed_by="components.istio:INSTALLATION",
    # Istio's Kubeflow install puts Sidecars into the `kubeflow` namespace.
    needs=(Need(KUBEFLOW_NAMESPACES, What.NAMESPACE, optional=True),),
    on_by_default=True,
    pins=(versions.ISTIO,),
)


class KubeflowConfig(Toggle):
    """Kubeflow multi-user core: dashboard, profiles + KFAM, PodDefaults, notebooks, auth."""

    auth: KubeflowAuth = Field(default=KubeflowAuth(), description="How people sign in.")
    notebook_registry: str | None = Field(
        default=None,
        description="Where the platform's notebook images are pulled from (`<registry>/notebook:<tag>`, "
        "images/notebook/Dockerfile). Default: the stack's Artifact Registry repository on gke, "
        "`localhost/mlplatform` on kind (`make notebook-images` builds them and loads them into the cluster).",
    )

    @field_validator("notebook_registry")
    @classmethod
    def _notebook_registry(cls, value: str | None) -> str | None:
        if value is not None and not REGISTRY_PATH.match(value):
            raise ValueError(
                f"{value!r} is not a registry path such as europe-docker.pkg.dev/acme/images: "
                "host and path, no scheme and no tag"
            )
        return value



KUBEFLOW = ComponentSpec(
    "kubeflow",
    KubeflowConfig,
    "Dashboard, notebooks, profiles and sign-in; teams need it.",
    installed_by="components.kubeflow:INSTALLATION",
    needs=(
        Need(KUBEFLOW_NAMESPACES, What.NAMESPACE),
        Need(ISTIO, What.CRDS),  # its Gateways, VirtualServices, AuthorizationPolicies
        Need(CERT_MANAGER, What.CRDS),  # the webhooks' Certificates and the Kubeflow Issuer
    ),
    on_by_default=True,
    parts=(KUBEFLOW_NAMESPACES, KUBEFLOW_POD_DEFAULTS, KUBEFLOW_HTTPS_GATEWAY),
    pins=(versions.KUBEFLOW_MANIFESTS,),
)


class JobSetConfig(Toggle):
    """JobSet, installed once (Trainer's own copy is switched off)."""

    values: ChartValues = chart_values_field("the JobSet chart")


JOBSET = ComponentSpec(
    "jobset",
    JobSetConfig,
    "JobSet, which TrainJobs run as; trainer needs it.",
    installed_by="components.jobset:INSTALLATION",
    on_by_default=True,
    pins=(versions.JOBSET_CHART,),
)


class TrainerConfig(Toggle):
    """Kubeflow Trainer v2 controller; our runtimes come from runtimes/."""

    values: ChartValues = chart_values_field("the Kubeflow Trainer chart")


TRAINER = ComponentSpec(
    "trainer",
    TrainerConfig,
    "Kubeflow Trainer and our training runtimes.",
    installed_by="components.trainer:INSTALLATION",
    needs=(
        Need(JOBSET, What.CRDS),  # Trainer's controller runs TrainJobs as JobSets: it watches that kind from its start
        Need(KUBEFLOW_NAMESPACES, What.NAMESPACE, optional=True),  # kubeflow-system, Kubeflow's tree's when Kubeflow is on
    ),
    on_by_default=True,
    pins=(versions.TRAINER_CHART,),
)


class RaySource(str, Enum):
    OPERATOR = "operator"
    GKE_ADDON = "gke-addon"


class KubeRayConfig(Toggle):
    """KubeRay: the upstream operator, or GKE's managed Ray operator add-on (never both)."""

    source: RaySource = Field(
        default=RaySource.OPERATOR,
        description="operator: the KubeRay chart; gke-addon: GKE's managed Ray operator (gke only).",
    )
    values: ChartValues = chart_values_field("the kuberay-operator chart (source operator)")


def _kuberay_overlays(settings: KubeRayConfig) -> dict[str, str]:
    if settings.source is RaySource.GKE_ADDON:
        return {"values": "source gke-addon is GKE's managed Ray operator, not the chart"}
    return {}


KUBERAY = ComponentSpec(
    "kuberay",
    KubeRayConfig,
    "Ray operator; team Ray clusters need it.",
    installed_by="components.kuberay:INSTALLATION",
    on_by_default=True,
    pins=(versions.KUBERAY_CHART,),
    unused_overlays=_kuberay_overlays,
)


class WaitForPodsReady(Model):
    """Kueue's all-or-nothing admission (its `waitForPodsReady`): a workload Kueue admitted whose
    pods are not all ready in time is evicted, its quota freed, and requeued with backoff, so
    a half-started multi-node job never holds GPUs for long."""

    timeout: str = Field(
        default="20m",
        description="How long an admitted workload may take until every pod is scheduled, running and ready "
        "(a GPU pool scaling from zero plus the image pull) before Kueue evicts and requeues it; a duration "
        "such as 20m or 1h30m.",
    )
    block_admission: StrictBool = Field(
        default=False,
        description="Admit nothing else until the admitted workload's pods are all ready: strict one-at-a-time "
        "admission, at the price of admissions waiting on every node scale-up.",
    )
    backoff_limit_count: StrictInt | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="Evictions for unready pods after which Kueue deactivates the workload; none: requeue "
        "it forever, backing off 60s doubling up to an hour.",
    )

    @field_validator("timeout")
    @classmethod
    def _timeout(cls, value: str) -> str:
        if not DURATION.match(value) or not any(c.isdigit() and c != "0" for c in value):
            raise ValueError(f"{value!r} is not a duration such as 20m or 1h30m: positive numbers with h, m or s")
        seconds = sum(
            Decimal(number) * {"h": 3600, "m": 60, "s": 1}[unit] for number, unit in re.findall(r"([0-9]+)([hms])", value)
        )
        if seconds > GO_DURATION_MAX_SECONDS:
            raise ValueError(
                f"{value!r} is longer than a Go duration holds (about 292 years): Kueue reads it with Go's "
                "time.ParseDuration, which refuses it; use a timeout such as 1h"
            )
        return value


class KueueConfig(Toggle):
    """Kueue with the TrainJob, JobSet and Ray integrations; one ResourceFlavor per GPU pool,
    and a ProvisioningRequest admission check per queued pool."""

    wait_for_pods_ready: WaitForPodsReady = Field(
        default=WaitForPodsReady(),
        description="All-or-nothing admission: a multi-node TrainJob or RayJob starts whole, or is evicted "
        "and requeued.",
    )
    values: ChartValues = chart_values_field("the Kueue chart")


# No need of Trainer, JobSet or KubeRay: Kueue defers an integration until its CRD appears
# (kubernetes-sigs/kueue pkg/controller/jobframework/setup.go, "deferring setting up controller").
KUEUE = ComponentSpec(
    "kueue",
    KueueConfig,
    "Queues and quotas per team; queued GPU pools need it.",
    installed_by="components.kueue:INSTALLATION",
    on_by_default=True,
    pins=(versions.KUEUE_CHART,),
)


class MetricsBackend(str, Enum):
    KUBE_PROMETHEUS_STACK = "kube-prometheus-stack"
    GKE_MANAGED = "gke-managed"


class MonitoringConfig(Toggle):
    """Prometheus + Grafana with GPU, Ray, Kueue and per-team dashboards, and GPU alerts.
    Grafana signs people in with the identity the Kubeflow gateway asserts: Viewer, or Admin
    for grafanaAdmins; it has no shared admin login."""

    backend: MetricsBackend = Field(
        default=MetricsBackend.KUBE_PROMETHEUS_STACK,
        description="kube-prometheus-stack in the cluster, or gke-managed: Google Cloud Managed Service "
        "for Prometheus (needs cluster.managedPrometheus).",
    )
    retention: str = Field(
        default="15d", description="kube-prometheus-stack: how long Prometheus keeps data, e.g. 15d (h, d, w or y)."
    )
    storage_size: VolumeSize = Field(
        default="50Gi", description="kube-prometheus-stack: Prometheus volume size, a Kubernetes quantity such as 50Gi."
    )
    idle_gpu_threshold: StrictInt = Field(
        default=10, ge=1, le=100, description="Alert when allocated GPUs stay below this utilisation (%)."
    )
    idle_gpu_minutes: StrictInt = Field(
        default=30, ge=5, le=1440, description="... for this many minutes (the idle-GPU alert's `for`)."
    )
    pending_workload_minutes: StrictInt = Field(
        default=30, ge=1, le=10080, description="Alert when a workload waits in Kueue longer than this."
    )
    gpu_temperature_celsius: StrictInt = Field(default=85, ge=50, le=110, description="Alert above this GPU temperature.")
    grafana_admins: list[Email] = Field(
        default_factory=list,
        description="Who is Admin in Grafana (dashboards, data sources, alerting); everyone else who signs in is a Viewer.",
    )
    values: ChartValues = chart_values_field("the kube-prometheus-stack chart (backend kube-prometheus-stack)")
    grafana_values: ChartValues = chart_values_field("the Grafana chart")

    @field_validator("retention")
    @classmethod
    def _retention(cls, value: str) -> str:
        if not RETENTION.match(value):
            raise ValueError(f"{value!r} is not a Prometheus retention such as 15d: a positive number and h, d, w or y")
        if Decimal(value[:-1]) * RETENTION_SECONDS[value[-1]] > GO_DURATION_MAX_SECONDS:
            raise ValueError(
                f"{value!r} is longer than Prometheus can hold (a Go duration, about 292 years: it refuses "
                "'duration out of range'); use a shorter retention such as 10y"
            )
        return value

    @field_validator("grafana_admins")
    @classmethod
    def _grafana_admins(cls, admins: list[str]) -> list[str]:
        _unique(admins, str.lower)
        return admins


def _monitoring_overlays(settings: MonitoringConfig) -> dict[str, str]:
    if settings.backend is MetricsBackend.GKE_MANAGED:
        return {"values": "backend gke-managed installs no kube-prometheus-stack (grafanaValues still reach Grafana)"}
    return {}


# Nothing waits for Monitoring: its monitors of others are Ties (components/platform.py).
MONITORING = ComponentSpec(
    "monitoring",
    MonitoringConfig,
    "Prometheus, Grafana, dashboards and GPU alerts.",
    installed_by="components.monitoring:INSTALLATION",
    # Grafana's pods get their sidecar from Istio's injection webhook (components/monitoring.py).
    needs=(Need(ISTIO, What.WEBHOOKS, optional=True),),
    on_by_default=True,
    pins=(versions.KUBE_PROMETHEUS_STACK, versions.GRAFANA),
    unused_overlays=_monitoring_overlays,
)


class DcgmSource(str, Enum):
    CHART = "chart"
    GKE_MANAGED = "gke-managed"


class DcgmExporterConfig(Model):
    """NVIDIA DCGM exporter: GPU metrics per pod. Default: on for GKE stacks with GPUs, off otherwise."""

    enabled: StrictBool | None = Field(
        default=None, description="Default: on for gke stacks with GPU pools or GPU autoprovisioning limits, off otherwise."
    )
    source: DcgmSource = Field(default=DcgmSource.CHART, description="NVIDIA's chart, or GKE's managed DCGM metrics.")
    values: ChartValues = chart_values_field("NVIDIA's dcgm-exporter chart (source chart)")


def gpu_stack(config: Any) -> bool:
    """The DCGM exporter's default: on for a GKE stack with GPU pools or GPU autoprovisioning limits."""
    cluster = config.cluster
    return isinstance(cluster, GkeClusterConfig) and (
        bool(cluster.gpu_pools) or any(k in ACCELERATORS for k in cluster.autoprovisioning.limits)
    )


def _dcgm_overlays(settings: DcgmExporterConfig) -> dict[str, str]:
    if settings.source is DcgmSource.GKE_MANAGED:
        return {"values": "source gke-managed is GKE's DCGM metrics, not NVIDIA's chart"}
    return {}


DCGM_EXPORTER = ComponentSpec(
    "dcgmExporter",
    DcgmExporterConfig,
    "GPU metrics per pod.",
    installed_by="components.dcgm:INSTALLATION",
    on_by_default=gpu_stack,
    pins=(versions.DCGM_EXPORTER,),
    unused_overlays=_dcgm_overlays,
)
