"""The components the stack installs, beside the cluster and one another: what each needs, where it
runs, what its settings reach."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from facts import networks
from facts.limits import PERSISTENT_DISK_MAX_BYTES
from stackmodel import quantity
from stackmodel.components.dcgm import DCGM_EXPORTER, DcgmSource
from stackmodel.components.idle_reclaim import IDLE_RECLAIM
from stackmodel.components.idle_reclaim import STEP_SECONDS as IDLE_RECLAIM_STEP_SECONDS
from stackmodel.components.inference_gateway import (
    DEFAULT_PROXY_ONLY_SUBNET_RANGE,
    INFERENCE_GATEWAY,
    PROXY_ONLY_SUBNET_SMALLEST_PREFIX,
    GatewayProvider,
)
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.kuberay import KUBERAY, RaySource
from stackmodel.components.leader_worker_set import LEADER_WORKER_SET
from stackmodel.components.model_registry import MODEL_REGISTRY, RegistryDatabase
from stackmodel.components.monitoring import MONITORING, MetricsBackend
from stackmodel.components.pipelines import PIPELINES
from stackmodel.components.serving import SERVING
from stackmodel.components.spec import ComponentSpec
from stackmodel.components.trainer import TRAINER
from stackmodel.rules.rule import (
    CLUSTER,
    ENABLED,
    KIND,
    MANAGED_PROMETHEUS,
    POOLS,
    REGISTRY,
    Found,
    gke_cluster,
    gpu_pools_of,
    stack_rule,
)
from stackmodel.schema import RETENTION_SECONDS, SharingStrategy
from stackmodel.schema.chart_values import CHART_VALUES_KIND
from stackmodel.schema.cluster import Environment
from stackmodel.stack import PlatformConfig


@stack_rule("component-needs", "A component the stack installs has the components it needs installed too.", reads=ENABLED)
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


@stack_rule("ray-addon-on-gke", "KubeRay from GKE's Ray add-on only on GKE.", reads=(KUBERAY.path, KIND))
def _ray_addon_on_gke(config: PlatformConfig) -> Found:
    if config.components[KUBERAY].source is RaySource.GKE_ADDON and gke_cluster(config) is None:
        yield f"{KUBERAY.path}.source", "gke-addon is GKE's managed Ray operator; on kind use source: operator"


@stack_rule("model-registry-has-a-database", "A Model Registry's database is one the cluster has: Cloud SQL only on GKE.", reads=(MODEL_REGISTRY.path, KIND))
def _model_registry_has_a_database(config: PlatformConfig) -> Found:
    registry = config.components[MODEL_REGISTRY]
    if registry.enabled and registry.database is RegistryDatabase.CLOUD_SQL and gke_cluster(config) is None:
        yield (
            f"{MODEL_REGISTRY.path}.database",
            "cloudSql is GKE's Cloud SQL: a registry on this cluster would have no database; use database: inCluster "
            "(the default off GKE)",
        )


@stack_rule("dcgm-on-gke", "The DCGM exporter is switched on only on GKE (kind has no GPUs).", reads=(DCGM_EXPORTER.path, KIND))
def _dcgm_on_gke(config: PlatformConfig) -> Found:
    if config.components[DCGM_EXPORTER].enabled and gke_cluster(config) is None:
        yield f"{DCGM_EXPORTER.path}.enabled", "kind clusters have no GPUs; remove dcgmExporter.enabled"


@stack_rule("managed-dcgm-needs-managed-prometheus", "GKE's managed DCGM metrics need managed Prometheus on the cluster.", reads=(DCGM_EXPORTER.path, KIND, MANAGED_PROMETHEUS))
def _managed_dcgm_needs_managed_prometheus(config: PlatformConfig) -> Found:
    gke, dcgm = gke_cluster(config), config.components[DCGM_EXPORTER]
    if gke and dcgm.enabled is not False and dcgm.source is DcgmSource.GKE_MANAGED and not gke.managed_prometheus:
        yield (
            f"{DCGM_EXPORTER.path}.source",
            "GKE's managed DCGM metrics need cluster.managedPrometheus: true; set it or use source: chart",
        )


@stack_rule("managed-backend-needs-managed-prometheus", "The gke-managed monitoring backend needs a GKE cluster with managed Prometheus.", reads=(MONITORING.path, KIND, MANAGED_PROMETHEUS))
def _managed_backend_needs_managed_prometheus(config: PlatformConfig) -> Found:
    monitoring = config.components[MONITORING]
    if not (monitoring.enabled and monitoring.backend is MetricsBackend.GKE_MANAGED):
        return
    gke = gke_cluster(config)
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


@stack_rule("gpu-metrics-reach-prometheus", "GPU metrics go to the Prometheus that dashboards and alerts read.", reads=ENABLED)
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


@stack_rule("idle-reclaim-can-judge", "The idle reclaim runs only where notebooks, Prometheus and GPU metrics are.", reads=ENABLED)
def _idle_reclaim_can_judge(config: PlatformConfig) -> Found:
    if config.components[IDLE_RECLAIM].enabled is not True:
        return
    needs = ((KUBEFLOW, "notebooks to stop"), (MONITORING, "the Prometheus it reads"), (DCGM_EXPORTER, "the GPUs' utilisation; kind has no GPUs"))
    missing = [f"{spec.name} ({why})" for spec, why in needs if not config.enabled(spec)]
    if missing:
        yield f"{IDLE_RECLAIM.path}.enabled", f"idle reclaim needs {' and '.join(missing)}; enable them or remove idleReclaim.enabled"


@stack_rule("idle-reclaim-period-within-retention", "The idle reclaim's period fits in the samples the stack's Prometheus keeps.", reads=(*ENABLED, IDLE_RECLAIM.path, MONITORING.path))
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


@stack_rule("idle-reclaim-reads-mig-slices", "The idle reclaim runs on MIG pools only with the chart's DCGM exporter, which reports each slice.", reads=(POOLS, IDLE_RECLAIM.path, DCGM_EXPORTER.path))
def _idle_reclaim_reads_mig_slices(config: PlatformConfig) -> Found:
    """On a MIG slice DCGM's utilisation reads 0 or is absent (dcgm-exporter#216, #430); the reclaim
    judges slices by DCGM_FI_PROF_GR_ENGINE_ACTIVE, which the chart's exporter collects per slice
    (components/dashboards/common.py gpu_activity). Which fields GKE's managed DCGM collection
    reports per slice is not confirmed here (docs/teams.md, "GPU notebooks"), so the reclaim is
    not run on MIG pools on it: off by default there, refused when switched on."""
    if config.components[IDLE_RECLAIM].enabled is not True or config.components[DCGM_EXPORTER].source is not DcgmSource.GKE_MANAGED:
        return
    for i, pool in enumerate(gpu_pools_of(config)):
        if pool.sharing is not None and pool.sharing.strategy is SharingStrategy.MIG:
            yield (
                f"{POOLS}[{i}].sharing",
                f"pool {pool.name}'s GPUs are MIG slices, whose utilisation the idle reclaim reads from "
                "DCGM_FI_PROF_GR_ENGINE_ACTIVE, which GKE's managed DCGM collection is not known to report per slice: it "
                "could stop a busy notebook or never an idle one; use dcgmExporter.source: chart, or remove "
                "idleReclaim.enabled (it is off by default on such a stack)",
            )


@stack_rule("notebook-images-have-a-registry", "A gke stack's notebook images come from its Artifact Registry repository or a named registry.", reads=(KIND, REGISTRY, KUBEFLOW.path))
def _notebook_images_have_a_registry(config: PlatformConfig) -> Found:
    gke, kubeflow = gke_cluster(config), config.components[KUBEFLOW]
    if gke and kubeflow.enabled and not gke.image_registry.enabled and not kubeflow.notebook_registry:
        yield (
            f"{KUBEFLOW.path}.notebookRegistry",
            "the notebook images need a registry the nodes pull from; set notebookRegistry, or leave "
            "cluster.imageRegistry enabled to use the stack's Artifact Registry repository",
        )


@stack_rule("notebook-registry-reachable", "On gke the notebook registry is one the nodes reach, not localhost.", reads=(KIND, KUBEFLOW.path))
def _notebook_registry_reachable(config: PlatformConfig) -> Found:
    """A registry on localhost is kind's (images loaded into its nodes); a GKE node pulling from
    localhost asks itself."""
    registry = config.components[KUBEFLOW].notebook_registry
    if gke_cluster(config) is None or registry is None:
        return
    host = registry.split("/", 1)[0].split(":", 1)[0]
    if host == "localhost" or host.startswith("127.") or host.endswith(".local") or "." not in host:
        yield (
            f"{KUBEFLOW.path}.notebookRegistry",
            f"{registry!r} is a registry on the machine itself (kind's `make notebook-images` loads images there); a "
            "GKE node would ask itself for the image; remove the key to use the stack's Artifact Registry repository, "
            "or name a registry the nodes reach",
        )


def _chart_values_fields(spec: ComponentSpec[Any]) -> list[tuple[str, str]]:
    """(attribute, key) of each chart-values overlay of a component's settings (a ChartValues field)."""
    return [
        (name, field.alias or name)
        for name, field in spec.model.model_fields.items()
        if CHART_VALUES_KIND in field.metadata
    ]


@stack_rule("chart-values-reach-a-chart", "A chart values overlay belongs to a component that installs that chart in this stack.", reads=ENABLED)
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


@stack_rule("pipelines-database-of-the-target", "Pipelines' database settings are the target's: Cloud SQL on gke, in-cluster MySQL elsewhere; Cloud SQL has a private path.", reads=(KIND, f"{CLUSTER}.network", PIPELINES.path))
def _pipelines_database_of_the_target(config: PlatformConfig) -> Found:
    """On GKE the pipelines database is Cloud SQL, elsewhere MySQL in the cluster: the other one's
    settings would be silently ignored."""
    pipelines = config.components[PIPELINES]
    if not pipelines.enabled:
        return
    gke = gke_cluster(config)
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


@stack_rule("volumes-fit-the-storage-class", "On gke each volume fits a Persistent Disk of the default StorageClass (64 TiB).", reads=(KIND, PIPELINES.path, MONITORING.path))
def _volumes_fit_the_storage_class(config: PlatformConfig) -> Found:
    """On GKE the volumes come from the default StorageClass, a Persistent Disk of at most 64 TiB."""
    if gke_cluster(config) is None:
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


@stack_rule(
    "one-leader-worker-set",
    "LeaderWorkerSet is installed once: not by Trainer's data cache beside the leaderWorkerSet component.",
    reads=(LEADER_WORKER_SET.path, f"{TRAINER.path}.values"),
)
def _one_leader_worker_set(config: PlatformConfig) -> Found:
    """kubeflow-trainer 2.3.0 installs lws 0.8.0 as a dependency where `dataCache.enabled` and
    `dataCache.lws.install` (Chart.yaml `condition: dataCache.enabled,dataCache.lws.install`): the
    same CRD, webhooks and controller a second time."""
    if not (config.enabled(LEADER_WORKER_SET) and config.enabled(TRAINER)):
        return
    cache = config.components[TRAINER].values.get("dataCache")
    if isinstance(cache, dict) and cache.get("enabled") is True:
        lws = cache.get("lws")
        if not (isinstance(lws, dict) and lws.get("install") is False):
            yield (
                f"{TRAINER.path}.values.dataCache",
                "Trainer's data cache would install a second LeaderWorkerSet beside the leaderWorkerSet component: "
                "set dataCache.lws.install: false (the component's serves it), or disable leaderWorkerSet",
            )


@stack_rule("gke-inference-gateway-on-gke", "GKE Inference Gateway only on GKE.", reads=(INFERENCE_GATEWAY.path, KIND))
def _gke_inference_gateway_on_gke(config: PlatformConfig) -> Found:
    if config.enabled(INFERENCE_GATEWAY) and config.components[INFERENCE_GATEWAY].provider is GatewayProvider.GKE:
        cluster = gke_cluster(config)
        if cluster is None:
            yield f"{INFERENCE_GATEWAY.path}.provider", "gke is GKE Inference Gateway; on kind use provider: istio"
        elif not cluster.gateway_api:
            yield (
                f"{INFERENCE_GATEWAY.path}.provider",
                "GKE Inference Gateway needs GKE's Gateway API: set cluster.gatewayApi: true, or use provider: istio",
            )


@stack_rule(
    "gke-proxy-only-subnet",
    "GKE Inference Gateway's proxy-only subnet: named for an existing network, a /26 or wider, apart from the cluster's ranges.",
    reads=(INFERENCE_GATEWAY.path, CLUSTER),
)
def _gke_proxy_only_subnet(config: PlatformConfig) -> Found:
    """The range GKE's load balancer proxies connect from (docs/serving.md, "The gateway, per cluster"):
    the teams' NetworkPolicies and the firewall rule admit it, so it must be the region's real
    proxy-only subnet. A network the platform creates gets one (the default range); an existing
    network has its own, which only the stack's author can name (one active per region and network:
    cloud.google.com/load-balancing/docs/proxy-only-subnets)."""
    settings = config.components[INFERENCE_GATEWAY]
    key = f"{INFERENCE_GATEWAY.path}.proxyOnlySubnetRange"
    given = settings.proxy_only_subnet_range
    gke = gke_cluster(config)
    if not config.enabled(INFERENCE_GATEWAY) or settings.provider is not GatewayProvider.GKE or gke is None:
        if given is not None:
            yield key, "the proxy-only subnet is GKE Inference Gateway's (provider: gke on a gke cluster); remove it"
        return
    existing = gke.network.existing
    if given is None and existing is not None:
        project = f" --project {existing.host_project}" if existing.host_project else ""
        yield (
            key,
            f"the cluster is on the existing network {existing.network}, whose proxy-only subnet in {gke.region} the "
            f"platform does not make: give its range (gcloud compute networks subnets list{project} --network "
            f"{existing.network} --filter purpose=REGIONAL_MANAGED_PROXY), or have one made in that region first",
        )
        return
    cidr = given or DEFAULT_PROXY_ONLY_SUBNET_RANGE
    if cidr.prefixlen > PROXY_ONLY_SUBNET_SMALLEST_PREFIX:
        yield key, f"{cidr} has fewer than the 64 addresses a proxy-only subnet needs; use a /{PROXY_ONLY_SUBNET_SMALLEST_PREFIX} or wider, e.g. a /23"
    reserved = networks.reserved_overlap(cidr)
    if reserved:
        yield key, f"{cidr} overlaps {reserved}, which no VPC range may use; pick a range in 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16"
    net = gke.network
    ranges = {"masterCidr": net.master_cidr} if gke.private_nodes else {}
    if existing is None:
        ranges |= {"subnetCidr": net.subnet_cidr, "podsCidr": net.pods_cidr, "servicesCidr": net.services_cidr}
    ranges |= {f"gpuPools[{i}].fabric.cidr": p.fabric.cidr for i, p in enumerate(gke.gpu_pools) if p.fabric and p.fabric.cidr}
    which = f"{cidr}" if given is not None else f"the default {cidr}"
    for name, other in ranges.items():
        if cidr.overlaps(other):
            yield key, f"{which} overlaps the cluster's {name} {other}; give the proxy-only subnet a range of its own"


@stack_rule(
    "serving-scale-to-zero-off-prod",
    "A prod stack keeps a replica of every model: zero replicas are for the other environments.",
    reads=("mlplatform:environment", f"{SERVING.path}.replicas.minReplicas"),
)
def _serving_zero_off_prod(config: PlatformConfig) -> Found:
    """An idle model at zero replicas waits for a replica (and maybe a GPU node) on its first
    request: KServe's standard mode does not scale from zero on HTTP requests (docs/serving.md)."""
    if config.enabled(SERVING) and config.environment is Environment.PROD and config.components[SERVING].replicas.min_replicas == 0:
        yield (
            f"{SERVING.path}.replicas.minReplicas",
            "0 on a prod stack: a model scaled to zero answers its first request only after a replica starts; "
            "use 1 or more on prod (zero is for dev, staging and ci)",
        )


@stack_rule(
    "serving-zero-needs-its-signals",
    "A model may go to zero replicas only where KEDA reads its signals: monitoring on kube-prometheus-stack.",
    reads=(f"{SERVING.path}.replicas.minReplicas", MONITORING.path),
)
def _serving_zero_needs_its_signals(config: PlatformConfig) -> Found:
    """The model servers' load signals and the router's wake signal are scraped by PodMonitors of
    kube-prometheus-stack and read by KEDA from its Prometheus (components/platform.py
    serving-metrics; docs/serving.md "Scale to zero, and back"). Elsewhere KEDA reads no series,
    an empty result counts as 0 (keda v2.20.2 prometheus_scaler.go ignoreNullValues), and a model
    at zero never wakes."""
    monitoring = config.components[MONITORING]
    scraped = monitoring.enabled and monitoring.backend is MetricsBackend.KUBE_PROMETHEUS_STACK
    if config.enabled(SERVING) and config.components[SERVING].replicas.min_replicas == 0 and not scraped:
        where = "monitoring off" if not monitoring.enabled else f"monitoring.backend {monitoring.backend.value}"
        yield (
            f"{SERVING.path}.replicas.minReplicas",
            f"0 with {where}: the serving and wake signals are scraped for kube-prometheus-stack's Prometheus only, "
            "so a model at zero would never wake; use minReplicas 1 or more, or monitoring on kube-prometheus-stack",
        )


@stack_rule(
    "serving-llm-needs",
    "KServe's LLM controller (serving.llm) needs leaderWorkerSet and inferenceGateway.",
    reads=(f"{SERVING.path}.llm", LEADER_WORKER_SET.path, INFERENCE_GATEWAY.path),
)
def _serving_llm_needs(config: PlatformConfig) -> Found:
    """It manages LeaderWorkerSets, HTTPRoutes and InferencePools only if their CRDs are served
    when it starts (kserve v0.20.0 pkg/controller/v1alpha2/llmisvc/controller.go, IsCrdAvailable),
    and the teams' routes attach to the inference gateway's Gateway."""
    if not (config.enabled(SERVING) and config.components[SERVING].llm):
        return
    for spec in (LEADER_WORKER_SET, INFERENCE_GATEWAY):
        if not config.enabled(spec):
            yield f"{SERVING.path}.llm", f"LLM serving needs {spec.key}; enable {spec.key} or set llm: false"
