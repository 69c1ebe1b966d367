"""Admissible by construction: every workload the platform offers each team, built from the full
render the way the controllers build it, judged by Kueue v0.19.2's own admission rules
(`python -m stacks check`, rule `admissible`; docs/teams.md, "Admissible by construction").

Long by design: Kueue's view of the render, the workloads, and one function per admission
condition, each naming the Kueue source it reproduces (tests/test_admission.py takes a case from
Kueue's own tests for each).

The workloads, per team namespace (one whose `default` LocalQueue points at a ClusterQueue):
- every ClusterTrainingRuntime through `TrainerClient().train(runtime=...)`: the Kubeflow SDK
  0.5.0 creates a TrainJob of the runtime reference alone (tests/test_admission.py holds our copy
  to the SDK's); Kueue counts it as the JobSet that Trainer's runtime library builds from the
  runtime (kueue pkg/controller/jobs/trainjob/trainjob_controller.go getChildJobSet, then
  pkg/controller/jobs/jobset/jobset_controller.go PodSets: one pod set per replicated job, its
  pod template, its annotations' topology request); the trainer job's pods are the runtime's
  `mlPolicy.numNodes`, another job's its `parallelism` (kubeflow/trainer v2.3.0
  pkg/runtime/core/trainingruntime.go:186-196, jobset builder.go Trainer: env, image, command,
  never a container or a resource without `resourcesPerNode`, which `train()` does not set);
- a CPU notebook and a GPU notebook per pool the form offers, as the Jupyter web app writes the
  Notebook from the form's defaults (kubeflow/notebooks v1.11.0 crud-web-apps/jupyter/backend/
  apps/common/form.py set_notebook_cpu, _memory, _gpus, _affinity, _tolerations: requests the
  form's values, limits times `limitFactor`, the GPUs as a limit) and the notebook controller's
  StatefulSet makes its pod, with the mesh sidecar the injector adds;
- a CPU pipeline step with its driver pod (facts/pod_overhead.py pipeline_step_pods, with Argo's
  executor resources as the render configures them);
- the team's RayCluster, head and worker groups at their largest (Kueue's
  pkg/controller/jobs/raycluster/common.go BuildPodSets: the head with the autoscaler sidecar
  KubeRay adds, each worker group's replicas);
- with Katib, each TrainJob trial template Katib offers every team, as its trial controller
  creates the trial's TrainJob (katib_trial_job); Kueue gives it the namespace's `default`
  LocalQueue like any TrainJob, its controller (the Trial) being no kind Kueue manages (kueue
  v0.19.2 pkg/controller/jobframework/defaults.go defaultLocalQueueApplies,
  integrationmanager.go IsOwnerManagedByKueueForObject);
- with the Spark operator and a GPU pool, a Spark executor asking for a GPU (a plain pod);
- with KServe's LLM controller (`serving.llm`) on a stack with GPU pools, a GPU LLMInferenceService
  of the team as examples/llm_openai.py deploys it (LLM_GPUS on the `main` container, the team's
  `team-llm` and, for workers, `team-llm-workers` configs: no mesh sidecar, the GPU taint
  tolerated) on KServe's presets (the render's LLMInferenceServiceConfigs
  `kserve-config-llm-template` and `-worker-data-parallel`, merged by container name: kserve v0.20.0
  pkg/controller/v1alpha2/llmisvc/config_merge.go): single-node, the Deployment's pod, a plain pod
  Kueue's pod integration queues; multi-node, a LeaderWorkerSet of LLM_GROUP_SIZE pods, which
  Kueue's LeaderWorkerSet integration makes one Workload of, pod sets `leader` (1) and `worker`
  (size-1) (kueue v0.19.2 pkg/controller/jobs/leaderworkerset/leaderworkerset_reconciler.go podSets);
  its model from the team's bucket (`pvc://`, no storage-initializer init container);
- a GPU InferenceService on each GPU ClusterServingRuntime the render holds (components/
  serving_runtimes.py), one replica of its predictor as KServe v0.20.0 builds the pod of an
  InferenceService that names the runtime and sets nothing else of its pod (pkg/controller/
  v1beta1/inferenceservice/components/predictor.go buildPodSpec: the runtime's containers,
  MergeServingRuntimeAndInferenceServiceSpecs its nodeSelector, affinity, tolerations and
  volumes; buildObjectMeta the labels the deployment reconciler gives the pod template), with the
  team's serving PodDefault's labels and the mesh sidecar (team namespaces inject it; KServe sets
  no `sidecar.istio.io/inject`). Its owners are ReplicaSet, Deployment, InferenceService, none of
  which Kueue manages here, so each replica is one plain-pod Workload (components/kueue_pods.py),
  queued like a GPU notebook. A model from the team's store (`pvc://`) gets no init container;
  KServe's storage initializer (`gs://`, 100m CPU and 100Mi by inferenceservice-config) asks less
  than the runtime's container, and Kueue counts the larger of the two (Kubernetes PodRequests).
  With the Model Registry on, each predictor is judged again with the init container of the Hub's
  storage initializer (a `model-registry://` URI; its ClusterStorageContainer's container, which
  KServe merges into its own: storage_initializer_injector.go CommonStorageInitialization).
  (Ray Serve runs on the team's RayCluster, judged with it.)
Each pod template gets the namespace's LimitRange defaults the way Kueue applies them to a
Workload (facts/pod_resources.py as_kueue_counts; a plain pod's Workload is made from the pod as
stored, after the API server's LimitRanger: as_admitted). A pod Kueue does not queue (a plain pod
without GPUs: components/kueue_pods.py) is not judged by the queue; its room is the namespace's
ResourceQuota's (rule quota-admits-queue).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum
from typing import Any

import yaml

from components.argo import EXECUTOR_KEY, WORKFLOW_CONTROLLER_CONFIG
from components.kueue import CONFIG_MAP as KUEUE_CONFIG_MAP
from components.kueue import CONFIG_MAP_KEY as KUEUE_CONFIG_KEY
from components.kueue import NAMESPACE as KUEUE_NAMESPACE
from components.kueue import PROVISIONING_REQUEST_CONTROLLER
from facts.labels import INFERENCE_SERVICE_LABEL, KUEUE_DEFAULT_LOCAL_QUEUE
from facts.node_labels import GPU_RESOURCE
from facts.pod_overhead import pipeline_step_pods
from facts.pod_resources import Requests, as_admitted, as_kueue_counts, pod_requests
from facts.topology import PREFERRED_ANNOTATION, REQUIRED_ANNOTATION
from stackmodel import quantity
from stackmodel.schema import GkeClusterConfig, GpuPool, Provisioning
from tooling.fullrender import FullRender, Rendered

UNCONSTRAINED_ANNOTATION = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE_REQUIRED_ANNOTATION = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE_ANNOTATION = "kueue.x-k8s.io/podset-slice-size"
SLICE_CONSTRAINTS_ANNOTATION = "kueue.x-k8s.io/podset-slice-required-topology-constraints"
"""kueue v0.19.2 apis/kueue/v1beta2/topology_types.go:28-69, beside facts/topology.py's."""
TRAINER_ANCESTOR = ("trainer.kubeflow.org/trainjob-ancestor-step", "trainer")
KATIB_TRIAL_TEMPLATES = "trial-templates"
"""Katib's trial templates for every team (components/katib.py TRIAL_TEMPLATES)."""
SPARK_CONTROLLER = "spark-operator-controller"
"""The Spark operator's controller (applications/spark/spark-operator: components/spark.py)."""
RAY_AUTOSCALER = {"name": "autoscaler", "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}}}
"""The autoscaler sidecar KubeRay adds to an autoscaling head, as Kueue counts it (kueue v0.19.2
pkg/controller/jobs/raycluster/common.go:153-185 autoscalerContainer, defaultAutoscalerResources)."""
NO_SCHEDULE_EFFECTS = ("NoSchedule", "NoExecute")
LLM_PRESET = "kserve-config-llm-template"
LLM_MULTI_NODE_PRESET = "kserve-config-llm-worker-data-parallel"
"""KServe v0.20.0's presets of a single-node and a multi-node (LeaderWorkerSet) LLMInferenceService
(charts/kserve-runtime-configs files/llmisvcconfigs/resources.yaml)."""
TEAM_LLM_CONFIG = "team-llm"
TEAM_LLM_WORKERS_CONFIG = "team-llm-workers"
"""components/profiles/serving_llm.py: what a team's services name in `baseRefs`."""
LLM_CONTAINER = "main"
LLM_GPUS = {GPU_RESOURCE: "1"}
"""The `main` container's requests and limits in examples/llm_openai.py llm_service(gpus=1)
(tests/test_admission.py holds them equal)."""
LLM_GROUP_SIZE = 2
"""A multi-node replica's pods: a leader and one worker, one GPU each."""


# --- Kueue's view of the render -----------------------------------------------------------


@dataclass(frozen=True)
class Flavor:
    name: str
    labels: dict[str, str]
    taints: list[dict[str, Any]]
    tolerations: list[dict[str, Any]]
    topology: str | None


@dataclass(frozen=True)
class Group:
    covered: tuple[str, ...]
    flavors: tuple[str, ...]


@dataclass
class Queue:
    name: str
    groups: list[Group]
    reach: dict[tuple[str, str], Decimal]
    """(flavor, resource) -> the most it may hold at once: nominal quota and what it may borrow."""
    checks: dict[str, list[str]]
    """flavor -> the AdmissionChecks Kueue runs on it (admissionChecksStrategy)."""


@dataclass
class Kueue:
    """What Kueue knows that the admission rules read, from the render."""

    flavors: dict[str, Flavor]
    queues: dict[str, Queue]
    topologies: dict[str, list[str]]
    """Topology -> its levels' node labels."""
    provisioning: dict[str, list[str] | None]
    """AdmissionCheck of Kueue's ProvisioningRequest controller -> its config's managedResources
    (None: the config is missing)."""
    device_classes: dict[str, str]
    """DeviceClass -> the resource Kueue counts its devices as (deviceClassMappings)."""
    claim_templates: dict[tuple[str, str], list[tuple[str, int]]]
    """(namespace, ResourceClaimTemplate) -> its requests' (deviceClassName, count), ExactCount."""
    limit_ranges: dict[str, list[dict[str, Any]]]
    pools: dict[str, GpuPool] = field(default_factory=dict)
    """Flavor name -> the GPU pool it stands for (components/kueue.py names each after its pool)."""


def _amount(value: Any) -> Decimal:
    return quantity.parse(str(value))


def _quotas(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for group in spec.get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for resource in flavor.get("resources") or []:
                yield flavor.get("name", ""), resource.get("name", ""), resource


def queue_reach(specs: dict[str, dict[str, Any]]) -> dict[str, dict[tuple[str, str], Decimal]]:
    """ClusterQueue -> (flavor, resource) -> the most it may hold at once on an empty cluster:
    its nominal quota and what it may borrow (its borrowingLimit, at most what the other queues
    of its cohort lend: their lendingLimit, else their nominal quota), Kueue's maximum capacity
    (kueue v0.19.2 pkg/scheduler/flavorassigner/flavorassigner.go fitsResourceQuota,
    `a.cq.PotentialAvailable`)."""
    reach: dict[str, dict[tuple[str, str], Decimal]] = {}
    for name, spec in specs.items():
        cohort = spec.get("cohortName")
        peers = [s for n, s in specs.items() if n != name and cohort and s.get("cohortName") == cohort]
        own: dict[tuple[str, str], Decimal] = {}
        for flavor, resource, quota in _quotas(spec):
            lent = sum(
                (_amount(q.get("lendingLimit", q.get("nominalQuota", 0))) for peer in peers for f, r, q in _quotas(peer) if (f, r) == (flavor, resource)),
                Decimal(0),
            )
            borrow = min(lent, _amount(quota["borrowingLimit"])) if "borrowingLimit" in quota else lent
            own[(flavor, resource)] = _amount(quota.get("nominalQuota", 0)) + borrow
        reach[name] = own
    return reach


def kueue_of(render: FullRender) -> Kueue:
    """Kueue's view of the render."""

    def of_kind(kind: str) -> list[Rendered]:
        return [o for o in render.objects if o.key[1] == kind]

    flavors = {}
    for o in of_kind("ResourceFlavor"):
        spec = o.obj.get("spec") or {}
        flavors[o.key[3]] = Flavor(
            o.key[3], dict(spec.get("nodeLabels") or {}), list(spec.get("nodeTaints") or []), list(spec.get("tolerations") or []), spec.get("topologyName")
        )
    specs = {o.key[3]: o.obj.get("spec") or {} for o in of_kind("ClusterQueue")}
    reach = queue_reach(specs)
    queues = {}
    for name, spec in specs.items():
        groups = [
            Group(tuple(g.get("coveredResources") or []), tuple(f.get("name", "") for f in g.get("flavors") or [])) for g in spec.get("resourceGroups") or []
        ]
        checks: dict[str, list[str]] = {}
        for check in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []:
            for flavor in check.get("onFlavors") or [f for g in groups for f in g.flavors]:
                checks.setdefault(flavor, []).append(check.get("name"))
        queues[name] = Queue(name, groups, reach[name], checks)
    configs = {o.key[3]: (o.obj.get("spec") or {}).get("managedResources") or [] for o in of_kind("ProvisioningRequestConfig")}
    provisioning: dict[str, list[str] | None] = {}
    for o in of_kind("AdmissionCheck"):
        spec = o.obj.get("spec") or {}
        if spec.get("controllerName") == PROVISIONING_REQUEST_CONTROLLER:
            provisioning[o.key[3]] = configs.get(str((spec.get("parameters") or {}).get("name")))
    config_map = next((o.obj for o in of_kind("ConfigMap") if o.key[2:] == (KUEUE_NAMESPACE, KUEUE_CONFIG_MAP)), {})
    config = yaml.safe_load((config_map.get("data") or {}).get(KUEUE_CONFIG_KEY) or "") or {}
    device_classes = {
        device_class: mapping["name"]
        for mapping in (config.get("resources") or {}).get("deviceClassMappings") or []
        for device_class in mapping.get("deviceClassNames") or []
    }
    templates = {}
    for o in of_kind("ResourceClaimTemplate"):
        requests = (((o.obj.get("spec") or {}).get("spec") or {}).get("devices") or {}).get("requests") or []
        templates[(o.key[2], o.key[3])] = [
            ((r.get("exactly") or {}).get("deviceClassName", ""), int((r.get("exactly") or {}).get("count", 1))) for r in requests
        ]
    limit_ranges: dict[str, list[dict[str, Any]]] = {}
    for o in of_kind("LimitRange"):
        limit_ranges.setdefault(o.key[2], []).append(o.obj)
    cluster = render.plan.config.cluster if render.plan.config else None
    pools = {pool.name: pool for pool in cluster.gpu_pools} if isinstance(cluster, GkeClusterConfig) else {}
    topologies = {o.key[3]: [level.get("nodeLabel", "") for level in (o.obj.get("spec") or {}).get("levels") or []] for o in of_kind("Topology")}
    return Kueue(flavors, queues, topologies, provisioning, device_classes, templates, limit_ranges, pools)


# --- the workloads, as the controllers build them ----------------------------------------


@dataclass(frozen=True)
class PodSet:
    name: str
    count: int
    template: dict[str, Any]
    """{metadata, spec}, the namespace's LimitRange defaults applied as Kueue counts them."""

    @property
    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self.template.get("spec") or {}
        return spec

    @property
    def annotations(self) -> dict[str, str]:
        return dict((self.template.get("metadata") or {}).get("annotations") or {})


@dataclass(frozen=True)
class Workload:
    name: str
    """What a reader calls it: `TrainJob torch-distributed-h100`, `GPU notebook on pool l4`."""
    pod_sets: tuple[PodSet, ...]
    queued: bool = True
    """Kueue admits it; False: a pod Kueue's webhook never sees (judged by the ResourceQuota)."""


def asks_for_gpus(spec: dict[str, Any]) -> bool:
    """The pod asks for GPUs as components/kueue_pods.py's webhook match condition says (its CEL is
    evaluated in tests/test_kueue_pods.py): `nvidia.com/gpu` in a container or a resource claim."""
    containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    named = any(GPU_RESOURCE in ((c.get("resources") or {}).get(k) or {}) for c in containers for k in ("requests", "limits"))
    return named or bool(spec.get("resourceClaims"))


def trainjob(runtime: dict[str, Any]) -> dict[str, Any]:
    """The TrainJob `TrainerClient().train(runtime=TrainerClient().get_runtime(name))` creates:
    the runtime's reference alone (kubeflow 0.5.0; tests/test_admission.py compares it with the
    SDK's own)."""
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "spec": {"runtimeRef": {"kind": runtime["kind"], "name": runtime["metadata"]["name"]}},
    }


def trainjob_pod_sets(runtime: dict[str, Any], job: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    """(replicated job, pods, pod template) of the JobSet Trainer builds for `job` on `runtime`:
    the trainer job's pods the TrainJob's numNodes, else the runtime's mlPolicy.numNodes, another
    job's its parallelism (module docstring)."""
    spec = runtime.get("spec") or {}
    num_nodes = ((job.get("spec") or {}).get("trainer") or {}).get("numNodes") or (spec.get("mlPolicy") or {}).get("numNodes") or 1
    found = []
    for replicated in ((spec.get("template") or {}).get("spec") or {}).get("replicatedJobs") or []:
        template = replicated.get("template") or {}
        labels = (template.get("metadata") or {}).get("labels") or {}
        job_spec = template.get("spec") or {}
        count = num_nodes if labels.get(TRAINER_ANCESTOR[0]) == TRAINER_ANCESTOR[1] else job_spec.get("parallelism", 1)
        found.append((replicated.get("name", ""), int(count) * int(replicated.get("replicas", 1)), job_spec.get("template") or {}))
    return found


def _kueue_template(template: dict[str, Any], limit_ranges: list[dict[str, Any]]) -> dict[str, Any]:
    return {"metadata": template.get("metadata") or {}, "spec": as_kueue_counts(template.get("spec") or {}, limit_ranges)}


def _pod_template(spec: dict[str, Any], limit_ranges: list[dict[str, Any]], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """A plain pod's template as its Workload holds it: the pod as stored."""
    return {"metadata": {"annotations": annotations or {}}, "spec": as_admitted(spec, limit_ranges)}


def _sidecar(render_objects: list[Rendered]) -> dict[str, Any] | None:
    """The mesh sidecar the injector adds to a pod of a team namespace, with its requests."""
    injector = next((o.obj for o in render_objects if o.key[1] == "ConfigMap" and o.key[2:] == ("istio-system", "istio-sidecar-injector")), None)
    if injector is None:
        return None
    values = json.loads((injector.get("data") or {}).get("values") or "{}")
    requests = (((values.get("global") or {}).get("proxy") or {}).get("resources") or {}).get("requests") or {}
    return {"name": "istio-proxy", "resources": {"requests": dict(requests)}}


def _form(render_objects: list[Rendered]) -> dict[str, Any]:
    for o in render_objects:
        data = o.obj.get("data") or {} if o.key[1] == "ConfigMap" else {}
        if "spawner_ui_config.yaml" in data:
            return (yaml.safe_load(data["spawner_ui_config.yaml"]) or {}).get("spawnerFormDefaults") or {}
    return {}


def _times(value: str, factor: str, unit: str = "") -> str:
    """form.py: str(round(float(value) * float(limitFactor), 1)), the unit kept."""
    return f"{round(float(value.removesuffix(unit)) * float(factor), 1)}{unit}"


def notebook_pod(form: dict[str, Any], sidecar: dict[str, Any] | None, option: tuple[dict[str, Any], list[dict[str, Any]]] | None) -> dict[str, Any]:
    """A notebook's pod from the form's defaults (module docstring); `option`: the GPU pool's
    affinity and tolerations the form offers, with one GPU of the form's first vendor."""
    cpu, memory = str((form.get("cpu") or {}).get("value", "0.5")), str((form.get("memory") or {}).get("value", "1.0Gi"))
    resources: dict[str, Any] = {"requests": {"cpu": cpu, "memory": memory}, "limits": {}}
    cpu_factor, memory_factor = (form.get("cpu") or {}).get("limitFactor", "none"), (form.get("memory") or {}).get("limitFactor", "none")
    if cpu_factor != "none":
        resources["limits"]["cpu"] = _times(cpu, cpu_factor)
    if memory_factor != "none":
        resources["limits"]["memory"] = _times(memory, memory_factor, "Gi")
    spec: dict[str, Any] = {"containers": [{"name": "notebook", "resources": resources}]}
    if option is not None:
        affinity, tolerations = option
        vendors = ((form.get("gpus") or {}).get("value") or {}).get("vendors") or [{"limitsKey": GPU_RESOURCE}]
        resources["limits"][vendors[0].get("limitsKey", GPU_RESOURCE)] = "1"
        spec["affinity"] = affinity
        spec["tolerations"] = tolerations
    if sidecar is not None:
        spec["containers"].append(json.loads(json.dumps(sidecar)))
    return spec


RUNTIME_POD_FIELDS = ("nodeSelector", "affinity", "tolerations", "volumes")
"""What a ServingRuntime's pod spec gives the predictor's pod besides its containers and what Kueue
reads of it (kserve v0.20.0 pkg/apis/serving/v1alpha1/servingruntime_types.go ServingRuntimePodSpec)."""


def predictor_pod(runtime_spec: dict[str, Any], sidecar: dict[str, Any] | None) -> dict[str, Any]:
    """One replica's pod of an InferenceService that names the runtime and sets nothing else of its
    pod (module docstring): the runtime's containers, `kserve-container` first, and its placement."""
    containers = json.loads(json.dumps(runtime_spec.get("containers") or []))
    containers.sort(key=lambda c: c.get("name") != "kserve-container")
    spec: dict[str, Any] = {key: json.loads(json.dumps(runtime_spec[key])) for key in RUNTIME_POD_FIELDS if key in runtime_spec}
    spec["containers"] = containers + ([json.loads(json.dumps(sidecar))] if sidecar is not None else [])
    return spec


def registry_loaders(objects: list[Rendered]) -> list[tuple[str, dict[str, Any]]]:
    """The init container of each ClusterStorageContainer for `model-registry://` URIs: KServe
    adds it to a predictor whose storageUri names a registered model (module docstring)."""
    found = []
    for o in objects:
        spec = o.obj.get("spec") or {}
        formats = spec.get("supportedUriFormats") or []
        if o.key[1] == "ClusterStorageContainer" and not spec.get("disabled") and any(f.get("prefix") == "model-registry://" for f in formats):
            found.append((o.key[3], json.loads(json.dumps(spec.get("container") or {}))))
    return found


def _serving_pod_labels(objects: list[Rendered], namespace: str) -> dict[str, str]:
    """The labels the team's PodDefaults give a pod KServe labels as an InferenceService's."""
    labels: dict[str, str] = {}
    for o in objects:
        if o.key[1] == "PodDefault" and o.key[2] == namespace:
            spec = o.obj.get("spec") or {}
            selector = spec.get("selector") or {}
            every_one = {"key": INFERENCE_SERVICE_LABEL, "operator": "Exists"}
            if every_one in (selector.get("matchExpressions") or []) and not selector.get("matchLabels"):
                labels.update(spec.get("labels") or {})
    return labels


def workloads(render: FullRender, kueue: Kueue, namespace: str) -> list[Workload]:
    """Every workload the platform offers the team of `namespace`, in a fixed order."""
    objects = render.objects
    limit_ranges = kueue.limit_ranges.get(namespace, [])
    found: list[Workload] = []
    for o in objects:
        if o.key[1] == "ClusterTrainingRuntime":
            job = trainjob(o.obj)
            pod_sets = tuple(PodSet(name, count, _kueue_template(t, limit_ranges)) for name, count, t in trainjob_pod_sets(o.obj, job))
            found.append(Workload(f"TrainJob {o.key[3]}", pod_sets))
    form, sidecar = _form(objects), _sidecar(objects)
    if form:
        cpu = notebook_pod(form, sidecar, None)
        found.append(Workload("notebook (CPU)", (PodSet("main", 1, _pod_template(cpu, limit_ranges)),), queued=asks_for_gpus(cpu)))
        tolerations = {g.get("groupKey"): g.get("tolerations") or [] for g in (form.get("tolerationGroup") or {}).get("options") or []}
        for option in (form.get("affinityConfig") or {}).get("options") or []:
            key = option.get("configKey", "")
            gpu = notebook_pod(form, sidecar, (option.get("affinity") or {}, tolerations.get(key, [])))
            found.append(Workload(f"GPU notebook ({key})", (PodSet("main", 1, _pod_template(gpu, limit_ranges)),), queued=asks_for_gpus(gpu)))
    config = next((o.obj for o in objects if o.key[1] == "ConfigMap" and o.key[3] == WORKFLOW_CONTROLLER_CONFIG), None)
    if config is not None:
        executor = (yaml.safe_load((config.get("data") or {}).get(EXECUTOR_KEY) or "") or {}).get("resources") or {}
        for name, spec in pipeline_step_pods(executor).items():
            found.append(Workload(f"pipeline step (CPU): its {name} pod", (PodSet("main", 1, _pod_template(spec, limit_ranges)),), queued=asks_for_gpus(spec)))
    found += katib_trials(objects, limit_ranges)
    found += spark_gpu_executors(objects, kueue, limit_ranges)
    found += llm_workloads(objects, kueue, namespace)
    serving_labels = _serving_pod_labels(objects, namespace)
    for o in objects:
        spec = o.obj.get("spec") or {}
        if o.key[1] == "ClusterServingRuntime" and not spec.get("disabled"):
            pod = predictor_pod(spec, sidecar)
            if asks_for_gpus(pod):
                for loader, init in ((None, None), *registry_loaders(objects)):
                    with_init = {**pod, "initContainers": [init]} if init is not None else pod
                    template = _pod_template(with_init, limit_ranges, dict(spec.get("annotations") or {}))
                    template["metadata"]["labels"] = {**(spec.get("labels") or {}), **serving_labels}
                    name = f"GPU InferenceService on {o.key[3]}" + (f" loading a registered model ({loader})" if loader else "")
                    found.append(Workload(name, (PodSet("predictor", 1, template),)))
    for o in objects:
        if o.key[1] == "RayCluster" and o.key[2] == namespace:
            spec = o.obj.get("spec") or {}
            head = json.loads(json.dumps((spec.get("headGroupSpec") or {}).get("template") or {}))
            if spec.get("enableInTreeAutoscaling"):
                head.setdefault("spec", {}).setdefault("containers", []).append(dict(RAY_AUTOSCALER))
            ray_sets = [PodSet("head", 1, _kueue_template(head, limit_ranges))]
            for group in spec.get("workerGroupSpecs") or []:
                count = int(group.get("maxReplicas", group.get("replicas", 1))) * int(group.get("numOfHosts", 1) or 1)
                ray_sets.append(PodSet(group.get("groupName", ""), count, _kueue_template(group.get("template") or {}, limit_ranges)))
            found.append(Workload(f"RayCluster {o.key[3]} (workers at maxReplicas)", tuple(ray_sets)))
    return found


KATIB_TRIAL_PARAMETER = "${{trialParameters.{}}}"
"""kubeflow/katib v0.19.0 pkg/controller.v1beta1/consts/const.go TrialTemplateParamReplaceFormat."""


def katib_trial_job(experiment: dict[str, Any], assignments: dict[str, str], trial: str) -> dict[str, Any]:
    """The job Katib's trial controller creates for one trial of `experiment` (`assignments`: the
    suggestion's value per search parameter): the trial template's text with each trial
    parameter's placeholder replaced by the value of the parameter it references, named after the
    trial in the experiment's namespace (kubeflow/katib v0.19.0 pkg/controller.v1beta1/experiment/
    manifest/generator.go GetRunSpecWithHyperParameters, applyParameters), the Trial its
    controller (pkg/controller.v1beta1/trial/trial_controller.go reconcileJob,
    SetControllerReference). Trial parameters that reference the trial's own metadata are not
    modelled: a KeyError names them."""
    template = experiment["spec"]["trialTemplate"]
    text = json.dumps(template["trialSpec"])
    for parameter in template.get("trialParameters") or []:
        text = text.replace(KATIB_TRIAL_PARAMETER.format(parameter["name"]), assignments[parameter["reference"]])
    job: dict[str, Any] = json.loads(text)
    owner = {"apiVersion": "kubeflow.org/v1beta1", "kind": "Trial", "name": trial, "controller": True, "blockOwnerDeletion": True}
    job["metadata"] = {**(job.get("metadata") or {}), "name": trial, "namespace": experiment["metadata"]["namespace"], "ownerReferences": [owner]}
    return job


def trainjob_workload(name: str, job: dict[str, Any], runtime: dict[str, Any], limit_ranges: list[dict[str, Any]]) -> Workload:
    """A TrainJob on `runtime` as Kueue counts it (the JobSet Trainer builds: trainjob_pod_sets)."""
    return Workload(name, tuple(PodSet(n, count, _kueue_template(t, limit_ranges)) for n, count, t in trainjob_pod_sets(runtime, job)))


def katib_trials(objects: list[Rendered], limit_ranges: list[dict[str, Any]]) -> list[Workload]:
    """Each TrainJob trial template Katib offers every team (its ConfigMap `trial-templates`,
    components/katib.py), as the trial controller creates it: the template with the trial's
    parameters substituted, owned by the Trial, nothing else changed (kubeflow/katib v0.19.0
    pkg/controller.v1beta1/trial/trial_controller.go reconcileJob); Kueue counts it as any TrainJob
    of the runtime it names (the metrics collector Katib then adds to its first pod is the quota's,
    components/profiles/namespace.py katib_requests)."""
    runtimes = {o.key[3]: o.obj for o in objects if o.key[1] == "ClusterTrainingRuntime"}
    found = []
    for o in objects:
        if o.key[1] != "ConfigMap" or o.key[3] != KATIB_TRIAL_TEMPLATES:
            continue
        for key, text in sorted((o.obj.get("data") or {}).items()):
            job = yaml.safe_load(text) or {}
            if job.get("kind") != "TrainJob":
                continue
            runtime = runtimes.get(((job.get("spec") or {}).get("runtimeRef") or {}).get("name", ""))
            if runtime is None:
                found.append(Workload(f"Katib trial {key} (no such runtime)", ()))
                continue
            found.append(trainjob_workload(f"Katib trial {key} on {runtime['metadata']['name']}", job, runtime, limit_ranges))
    return found


SPARK_EXECUTOR_MEMORY_MIB = 4096
SPARK_MEMORY_OVERHEAD = (0.1, 384)
"""Spark on Kubernetes: an executor's memory overhead is the larger of 10% of its memory and
384 MiB, and its pod requests memory plus overhead, as request and limit, its cores as its CPU
request, and each custom resource (`spark.executor.resource.gpu.amount`, vendor `nvidia.com`)
as a limit (Spark's BasicExecutorFeatureStep, execResources.totalMemMiB)."""


def spark_executor_pod(gpus: int, memory_mib: int = SPARK_EXECUTOR_MEMORY_MIB, cores: int = 1) -> dict[str, Any]:
    """A Spark executor's pod spec as Spark builds it (SPARK_MEMORY_OVERHEAD), asking for `gpus`."""
    total = memory_mib + max(int(memory_mib * SPARK_MEMORY_OVERHEAD[0]), SPARK_MEMORY_OVERHEAD[1])
    resources = {"requests": {"cpu": str(cores), "memory": f"{total}Mi"}, "limits": {"memory": f"{total}Mi", GPU_RESOURCE: str(gpus)}}
    # GKE's ExtendedResourceToleration admission plugin tolerates the GPU taint for a pod that asks
    # for nvidia.com/gpu (components/kueue.py flavor_tolerations), before Kueue's webhook sees it.
    tolerations = [{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}]
    return {"containers": [{"name": "spark-kubernetes-executor", "resources": resources}], "tolerations": tolerations, "restartPolicy": "Never"}


def spark_gpu_executors(objects: list[Rendered], kueue: Kueue, limit_ranges: list[dict[str, Any]]) -> list[Workload]:
    """With the Spark operator: an executor asking for one GPU, a plain pod Kueue's pod
    integration queues (components/kueue_pods.py; docs/spark.md): each GPU pool's flavor must take it."""
    if not any(o.key[1] == "Deployment" and o.key[3] == SPARK_CONTROLLER for o in objects):
        return []
    if not any(not pool.dra for pool in kueue.pools.values()):
        return []  # no pool serves nvidia.com/gpu to a plain pod: no GPU executor to offer
    spec = spark_executor_pod(gpus=1)
    return [Workload("Spark executor (1 GPU)", (PodSet("main", 1, _pod_template(spec, limit_ranges)),), queued=asks_for_gpus(spec))]


def _llm_pod(preset: dict[str, Any], team: dict[str, Any]) -> dict[str, Any]:
    """A preset's pod spec, the team config's over it and the service's `main` container merged in
    by name, as KServe's config merge does (a strategic merge of the pod specs in `baseRefs` order,
    then the service's: containers by name, tolerations added)."""
    spec = json.loads(json.dumps(preset))
    for key, value in team.items():
        spec[key] = [*(spec.get(key) or []), *value] if key == "tolerations" else value
    for container in spec.get("containers") or []:
        if container.get("name") == LLM_CONTAINER:
            container["resources"] = {"requests": dict(LLM_GPUS), "limits": dict(LLM_GPUS)}
    return spec


def llm_workloads(objects: list[Rendered], kueue: Kueue, namespace: str) -> list[Workload]:
    """The team's GPU LLMInferenceServices (module docstring): none without the LLM presets, the
    team's `team-llm` config, or a GPU pool to run on."""
    configs = {(o.key[2], o.key[3]): o.obj.get("spec") or {} for o in objects if o.key[1] == "LLMInferenceServiceConfig"}
    single = next((spec for (_, name), spec in configs.items() if name == LLM_PRESET), None)
    multi = next((spec for (_, name), spec in configs.items() if name == LLM_MULTI_NODE_PRESET), None)
    team = configs.get((namespace, TEAM_LLM_CONFIG))
    if single is None or team is None or not kueue.pools:
        return []
    limit_ranges = kueue.limit_ranges.get(namespace, [])
    pod = _llm_pod(single.get("template") or {}, team.get("template") or {})
    template = _pod_template(pod, limit_ranges, dict(team.get("annotations") or {}))
    template["metadata"]["labels"] = dict(team.get("labels") or {})  # KServe's spec.labels, on the pod (workload_single_node.go)
    found = [Workload("GPU LLMInferenceService (one node)", (PodSet("main", 1, template),), queued=asks_for_gpus(pod))]
    workers = configs.get((namespace, TEAM_LLM_WORKERS_CONFIG), {})
    if multi is not None:
        leader = {"spec": _llm_pod(multi.get("template") or {}, team.get("template") or {})}
        worker = {"spec": _llm_pod(multi.get("worker") or {}, workers.get("worker") or {})}
        found.append(
            Workload(
                f"GPU LLMInferenceService (LeaderWorkerSet of {LLM_GROUP_SIZE} nodes)",
                (PodSet("leader", 1, _kueue_template(leader, limit_ranges)), PodSet("worker", LLM_GROUP_SIZE - 1, _kueue_template(worker, limit_ranges))),
            )
        )
    return found


# --- Kueue's admission rules ---------------------------------------------------------------


def requests_of(pod_set: PodSet, kueue: Kueue, namespace: str) -> tuple[Requests, str | None]:
    """What one pod of the pod set counts against the queue, and why Kueue could not count it:
    its containers' requests (kueue v0.19.2 pkg/resources/factory.go:71-77 NewRequestsFromPodSpec,
    Kubernetes' PodRequests) and, for each claim made from a ResourceClaimTemplate, its devices as
    the resource its DeviceClass maps to (pkg/dra/claims.go GetResourceRequestsForResourceClaimTemplates:
    "DeviceClass %s is not mapped in DRA configuration for podset %s"; a claim named directly is not
    supported: site/content/en/docs/concepts/dynamic_resource_allocation.md, Limitations)."""
    requests = pod_requests(pod_set.spec)
    for claim in pod_set.spec.get("resourceClaims") or []:
        template = claim.get("resourceClaimTemplateName")
        if template is None:
            return requests, f"pod set {pod_set.name} names ResourceClaim {claim.get('resourceClaimName')} directly, which Kueue cannot count"
        devices = kueue.claim_templates.get((namespace, template))
        if devices is None:
            return requests, f"pod set {pod_set.name}: ResourceClaimTemplate {template} does not exist in namespace {namespace}"
        for device_class, count in devices:
            resource = kueue.device_classes.get(device_class)
            if resource is None:
                return requests, f"DeviceClass {device_class} is not mapped in DRA configuration for podset {pod_set.name}"
            requests[resource] = requests.get(resource, Decimal(0)) + count
    return {name: value for name, value in requests.items() if value > 0}, None


def uncovered(requests: Requests, queue: Queue) -> str | None:
    """Every resource the pod set requests is covered by a resource group of the queue (kueue
    v0.19.2 pkg/scheduler/flavorassigner/flavorassigner.go:1069-1072 findFlavorForPodSets,
    "resource %s unavailable in ClusterQueue")."""
    covered = {r for g in queue.groups for r in g.covered}
    for name in sorted(requests):
        if name not in covered:
            return f"resource {name} unavailable in ClusterQueue"
    return None


def explicit_topology(pod_set: PodSet) -> bool:
    """The pod set asks for a topology (kueue v0.19.2 pkg/workload/workload.go:515-522
    IsExplicitlyRequestingTAS, from the annotations jobframework/tas.go Build reads)."""
    annotations = pod_set.annotations
    return (
        any(key in annotations for key in (REQUIRED_ANNOTATION, PREFERRED_ANNOTATION, UNCONSTRAINED_ANNOTATION, SLICE_CONSTRAINTS_ANNOTATION))
        or (SLICE_REQUIRED_ANNOTATION in annotations and SLICE_SIZE_ANNOTATION in annotations)
    )


def topology_mismatch(pod_set: PodSet, requests: Requests, flavor: Flavor, group: Group, kueue: Kueue, queue: Queue) -> str | None:
    """Topology only where every flavor of the pod set has one (kueue v0.19.2 pkg/scheduler/
    flavorassigner/tas_flavorassigner.go:166-217 checkPodSetAndFlavorMatchForTAS and
    hasOverlapWithPodRequestedResources): a pod set that asks for a topology (or any, on a queue whose flavors all have one: isTASImplied) takes a
    flavor without one only for a group that covers nothing it requests; a flavor with a topology
    takes only such pod sets, and only with the requested level."""
    tas_only = all(kueue.flavors[f].topology for g in queue.groups for f in g.flavors if f in kueue.flavors)
    if explicit_topology(pod_set) or tas_only:
        if tas_only and not explicit_topology(pod_set):
            return None
        if flavor.topology is None:
            if not any(name in group.covered for name in requests):
                return None
            return f'Flavor "{flavor.name}" does not support TopologyAwareScheduling'
        level = pod_set.annotations.get(REQUIRED_ANNOTATION) or pod_set.annotations.get(PREFERRED_ANNOTATION)
        if level is not None and level not in kueue.topologies.get(flavor.topology, []):
            return f'Flavor "{flavor.name}" does not contain the requested level'
        return None
    if flavor.topology is not None:
        return f'Flavor "{flavor.name}" supports only TopologyAwareScheduling'
    return None


def _tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    """Kubernetes' Toleration.ToleratesTaint (k8s.io/api core/v1 toleration.go)."""
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    if toleration.get("key") and toleration.get("key") != taint.get("key"):
        return False
    if toleration.get("operator", "Equal") == "Exists":
        return True
    return bool(toleration.get("key")) and toleration.get("value", "") == taint.get("value", "")


def _matches(expression: dict[str, Any], labels: dict[str, str]) -> bool:
    key, operator, values = expression.get("key", ""), expression.get("operator"), expression.get("values") or []
    if operator == "In":
        return labels.get(key) in values
    if operator == "NotIn":
        return labels.get(key) not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return True  # Gt, Lt: no flavor label of ours is a number


def flavor_mismatch(pod_set: PodSet, flavor: Flavor) -> str | None:
    """The flavor's taints are tolerated (by the pod's tolerations and the flavor's own) and its
    node labels match the pod's node selector and required node affinity, read only for the
    flavor's own label keys (kueue v0.19.2 pkg/scheduler/flavorassigner/flavorassigner.go:1208-1257
    checkFlavorForPodSets, :1278 flavorSelector)."""
    tolerations = [*(pod_set.spec.get("tolerations") or []), *flavor.tolerations]
    for taint in flavor.taints:
        if taint.get("effect") in NO_SCHEDULE_EFFECTS and not any(_tolerates(t, taint) for t in tolerations):
            return f"untolerated taint {taint.get('key')}={taint.get('value', '')}:{taint.get('effect')} in flavor {flavor.name}"
    keys = set(flavor.labels)
    selector = {k: v for k, v in (pod_set.spec.get("nodeSelector") or {}).items() if k in keys}
    if any(flavor.labels.get(k) != v for k, v in selector.items()):
        return f"flavor {flavor.name} doesn't match node affinity"
    required = ((((pod_set.spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")) or {})
    terms = []
    for term in required.get("nodeSelectorTerms") or []:
        kept = [e for e in term.get("matchExpressions") or [] if e.get("key") in keys]
        if not kept:
            return None  # a term left empty matches every flavor
        terms.append(kept)
    if terms and not any(all(_matches(e, flavor.labels) for e in term) for term in terms):
        return f"flavor {flavor.name} doesn't match node affinity"
    return None


def exceeds_quota(request: Decimal, used: Decimal, flavor: str, resource: str, queue: Queue) -> str | None:
    """What the pod set asks of a resource, with what earlier pod sets of the workload took of
    the flavor, fits the queue's maximum capacity there (kueue v0.19.2 pkg/scheduler/flavorassigner/
    flavorassigner.go:1330-1352 fitsResourceQuota: "insufficient quota for %s in flavor %s,
    previously considered podsets requests (%s) + current podset request (%s) > maximum capacity (%s)")."""
    capacity = queue.reach.get((flavor, resource), Decimal(0))
    if used + request > capacity:
        return (
            f"insufficient quota for {resource} in flavor {flavor}, previously considered podsets requests ({quantity.text(used)}) "
            f"+ current podset request ({quantity.text(request)}) > maximum capacity ({quantity.text(capacity)})"
        )
    return None


def dra_with_topology(pod_set: PodSet, flavor: Flavor) -> str | None:
    """DRA and topology never together: Kueue documents "No DRA + Topology Aware Scheduling"
    (kueue v0.19.2 site/content/en/docs/concepts/dynamic_resource_allocation.md, Limitations): its
    topology placement sizes pods from their containers' requests, not their claims
    (tas_flavorassigner.go podSetTopologyRequest, resources.NewRequestsFromPodSpec)."""
    if flavor.topology and pod_set.spec.get("resourceClaims"):
        return f"pod set {pod_set.name} claims devices through DRA on flavor {flavor.name}, which places by topology: Kueue supports no DRA with topology-aware scheduling"
    return None


def uses(spec: dict[str, Any], resources: list[str]) -> bool:
    """kueue v0.19.2 pkg/controller/admissionchecks/provisioning/controller.go:511-541 podUses:
    a container or init container requests or limits one of `resources`."""
    containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    return any(name in ((c.get("resources") or {}).get(k) or {}) for c in containers for k in ("requests", "limits") for name in resources)


def no_provisioning_request(pod_set: PodSet, flavor: Flavor, kueue: Kueue, queue: Queue) -> str | None:
    """A ProvisioningRequest wherever the pool only grows through one: a queued pool's nodes come
    only for a ProvisioningRequest (GKE queued provisioning), which Kueue makes for the pod sets of
    a workload given the flavor of a check of its ProvisioningRequest controller, and only for pod
    sets that use a managed resource (kueue v0.19.2 pkg/controller/admissionchecks/provisioning/
    controller.go:478-509 reqIsNeeded, requiredPodSets, podUses; "NoRequestNeeded" otherwise)."""
    pool = kueue.pools.get(flavor.name)
    if pool is None or pool.provisioning is not Provisioning.QUEUED or pod_set.count == 0:
        return None
    checks = [c for c in queue.checks.get(flavor.name, []) if c in kueue.provisioning]
    if not checks:
        return f"pool {pool.name} grows only through ProvisioningRequests, and ClusterQueue {queue.name} runs no ProvisioningRequest check on flavor {flavor.name}"
    for check in checks:
        managed = kueue.provisioning[check]
        if managed is None:
            return f"AdmissionCheck {check} names a ProvisioningRequestConfig that does not exist"
        if managed and not uses(pod_set.spec, managed):
            return (
                f"pod set {pod_set.name} uses none of {', '.join(managed)} in its containers, so Kueue's check {check} makes no "
                f"ProvisioningRequest for it (NoRequestNeeded) and pool {pool.name} never grows"
            )
    return None


def gpus_not_as_pool_offers(pod_set: PodSet, flavor: Flavor, kueue: Kueue) -> str | None:
    """GPUs requested the way the pool offers them: a DRA pool's nodes run without GKE's device
    plugin and advertise no `nvidia.com/gpu` (facts/node_labels.py DRA_NODE_LABELS), a device-plugin
    pool's run no DRA kubelet plugin (components/dra.py: its node selector is the DRA pools' label).
    Kueue does not look (it admits by quota, pkg/scheduler/flavorassigner): the pod would never be
    scheduled."""
    pool = kueue.pools.get(flavor.name)
    if pool is None:
        return None
    asks = uses(pod_set.spec, [GPU_RESOURCE])
    if pool.dra and asks:
        return f"pod set {pod_set.name} asks for {GPU_RESOURCE} on pool {pool.name}, whose GPUs come through DRA: its nodes advertise no {GPU_RESOURCE}"
    if not pool.dra and pod_set.spec.get("resourceClaims"):
        return f"pod set {pod_set.name} claims devices through DRA on pool {pool.name}, whose GPUs come through the device plugin"
    return None


def gpu_pool_takes_cpu_work(pod_set: PodSet, requests: Requests, group: Group, kueue: Kueue, queue: Queue) -> str | None:
    """A pod set that asks for no GPUs can never be given a GPU pool's flavor. Kueue tries a
    group's flavors in order and, with the ClusterQueue's default flavorFungibility
    (whenCanPreempt: TryNextFlavor, kueue v0.19.2 apis/kueue/v1beta2/clusterqueue_types.go:460-479)
    and no preemption, goes on to the next flavor whenever the first one is full
    (flavorassigner.go:1259-1276 shouldTryNextFlavor); a flavor's taints keep a pod set off only
    if neither the pod nor the flavor's own tolerations tolerate them (:1239), and the admitted
    pods get the flavor's node labels and tolerations (pkg/podset/podset.go:78-91 FromAssignment).
    A CPU-only job given a pool's flavor therefore runs on that pool's GPU nodes: GKE scales a GPU
    node up for it, and on a queued pool, whose nodes come only for ProvisioningRequests, Kueue
    makes none for it (no_provisioning_request) and it waits for ever."""
    if GPU_RESOURCE in requests or pod_set.spec.get("resourceClaims"):
        return None
    wanted = {name: value * pod_set.count for name, value in requests.items() if name in group.covered}
    for name in group.flavors:
        pool, flavor = kueue.pools.get(name), kueue.flavors.get(name)
        if pool is None or flavor is None:
            continue
        if topology_mismatch(pod_set, requests, flavor, group, kueue, queue) or flavor_mismatch(pod_set, flavor):
            continue
        if all(value <= queue.reach.get((name, r), Decimal(0)) for r, value in wanted.items()):
            return (
                f"pod set {pod_set.name} asks for no GPUs, yet once the default flavor is full Kueue gives it flavor {name} "
                f"(it tolerates the flavor's taints through the flavor's own tolerations), and it runs on pool {pool.name}'s GPU nodes"
            )
    return None


class Status(str, Enum):
    ADMISSIBLE = "admissible"
    NOT_QUEUED = "not queued"
    NO_QUOTA = "no quota"
    REFUSED = "not admissible"
    ON_GPU_NODES = "admissible on GPU nodes"


@dataclass(frozen=True)
class Verdict:
    team: str
    queue: str
    workload: str
    status: Status
    detail: str

    def __str__(self) -> str:
        return f"{self.team}: {self.workload}: {self.status.value}: {self.detail}"


def others_hold(kueue: Kueue, flavor: str, resource: str) -> bool:
    """Some team's queue has quota of `resource` on `flavor`: a team without it is not given it
    (status NO_QUOTA); one that nobody has (GPUs on the default flavor) is no quota to give."""
    return any(q.reach.get((flavor, resource), Decimal(0)) > 0 for q in kueue.queues.values())


def judge(workload: Workload, queue: Queue, kueue: Kueue, namespace: str) -> tuple[Status, str]:
    """Kueue's verdict on `workload` in an empty cluster, pod set by pod set in order (each takes,
    per resource group, the first flavor that matches and fits: flavorassigner.go
    findFlavorForPodSets), then what Kueue admits but never runs, and what it could place on a GPU
    pool's nodes without asking for GPUs (gpu_pool_takes_cpu_work)."""
    if not workload.queued:
        return Status.NOT_QUEUED, "Kueue does not queue it (no GPUs); the namespace's ResourceQuota counts it"
    used: dict[tuple[str, str], Decimal] = {}
    placed: list[str] = []
    misplaced: list[str] = []
    for pod_set in workload.pod_sets:
        one, problem = requests_of(pod_set, kueue, namespace)
        problem = problem or uncovered(one, queue)
        if problem:
            return Status.REFUSED, f"pod set {pod_set.name}: {problem}"
        flavors: list[str] = []
        for group in queue.groups:
            wanted = {name: value * pod_set.count for name, value in one.items() if name in group.covered}
            if not wanted:
                continue
            reasons: list[str] = []
            chosen = None
            empty: list[bool] = []  # per flavor that matched: the team has none of a resource it asks there, others have
            for name in group.flavors:
                flavor = kueue.flavors.get(name)
                if flavor is None:
                    reasons.append(f"flavor {name} not found")
                    continue
                mismatch = topology_mismatch(pod_set, one, flavor, group, kueue, queue) or flavor_mismatch(pod_set, flavor)
                if mismatch:
                    reasons.append(mismatch)
                    continue
                short = [m for r, value in sorted(wanted.items()) if (m := exceeds_quota(value, used.get((name, r), Decimal(0)), name, r, queue))]
                if short:
                    reasons += short
                    empty.append(any(queue.reach.get((name, r), Decimal(0)) == 0 and others_hold(kueue, name, r) for r in wanted))
                    continue
                chosen = flavor
                break
            if chosen is None:
                status = Status.NO_QUOTA if empty and all(empty) else Status.REFUSED
                return status, f"pod set {pod_set.name}: no flavor for {', '.join(sorted(wanted))}: " + "; ".join(reasons)
            for r, value in wanted.items():
                used[(chosen.name, r)] = used.get((chosen.name, r), Decimal(0)) + value
            problem = dra_with_topology(pod_set, chosen) or no_provisioning_request(pod_set, chosen, kueue, queue) or gpus_not_as_pool_offers(pod_set, chosen, kueue)
            if problem:
                return Status.REFUSED, problem
            misplaced.append(gpu_pool_takes_cpu_work(pod_set, one, group, kueue, queue) or "")
            flavors.append(chosen.name)
        if flavors:  # one per resource group it asks of: `default+l4` where the GPUs have a group of their own
            placed.append(f"{pod_set.name} x{pod_set.count} on {'+'.join(flavors)}")
    if any(misplaced):
        return Status.ON_GPU_NODES, "; ".join(m for m in misplaced if m)
    return Status.ADMISSIBLE, ", ".join(dict.fromkeys(placed)) or "asks for nothing"


def team_queues(render: FullRender) -> dict[str, str]:
    """Team namespace -> its ClusterQueue (the one its `default` LocalQueue points at)."""
    return {
        o.key[2]: (o.obj.get("spec") or {}).get("clusterQueue", "")
        for o in render.objects
        if o.key[1] == "LocalQueue" and o.key[3] == KUEUE_DEFAULT_LOCAL_QUEUE
    }


def verdicts(render: FullRender) -> list[Verdict]:
    """Per team and workload, Kueue's verdict."""
    kueue = kueue_of(render)
    found = []
    for namespace, queue_name in sorted(team_queues(render).items()):
        queue = kueue.queues.get(queue_name)
        if queue is None:
            continue  # the kueue rule reports the missing ClusterQueue
        for workload in workloads(render, kueue, namespace):
            status, detail = judge(workload, queue, kueue, namespace)
            found.append(Verdict(namespace, queue_name, workload.name, status, detail))
    return found
