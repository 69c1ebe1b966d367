"""Katib v0.19.0, multi-user, from the pinned Kubeflow tree's own entry (kubeflow/community-
distribution 26.03.1-rc.2 `applications/katib/upstream/installs/katib-with-kubeflow`, what its
example/kustomization.yaml installs): the controller and its webhooks (cert-manager certificate),
the database manager and MySQL, the UI at /katib/ behind the gateway (SubjectAccessReviews of the
signed-in user), and the aggregated roles kubeflow-katib-admin/edit/view. docs/katib.md.

What the release gets wrong for us, and what changes here (each transform has one target):
- public credentials: the MySQL root password `test` (`katib-mysql-secrets`), which the database
  manager signs in with as root. A generated root password, and a user of its own for the
  database manager (DB_USER, KATIB_DB_USER; kubeflow/katib v0.19.0 pkg/db/v1beta1/mysql/mysql.go
  getDbName reads DB_USER, default root), which the image creates with every right on the
  `katib` database (docker-library/mysql entrypoint: MYSQL_USER, MYSQL_PASSWORD, MYSQL_DATABASE).
- `mysql:8.0`, whose support ended: the platform's MySQL 8.4 LTS (facts/versions.py
  UPSTREAM_FLOATING_IMAGES), which Katib's client speaks (facts/mysql_auth.py).
- trial kinds the platform does not install (Training Operator v1's TFJob, PyTorchJob, MPIJob,
  XGBoostJob in katib-config's trialResources): the controller watches only TrainJob and Job.
- the mutating webhook on pods of every namespace labelled for metrics-collector injection (team
  namespaces), failurePolicy Fail (unset): narrowed to pods a batch/v1 Job owns (a TrainJob's
  pods and a Job trial's), so a Katib outage holds back no notebook, Ray or pipeline pod.
- the trial templates the UI offers for everyone (ConfigMap `trial-templates` in kubeflow):
  Kubeflow's `pytorchJobTemplate` is a Training Operator v1 PyTorchJob; a TrainJob template on
  the platform's torch-distributed runtime stands in its place; the Job templates' pods opt out
  of the mesh (a sidecar would keep Katib's metrics collector, and so the trial, from ending).
- data: MySQL's volume is protected and retained (plumbing/base.py keep), sized from the stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import pulumi
import pulumi_random as random
import yaml

from components.kubeflow import with_secrets
from facts.admission import fail_closed_policy, teams_binding
from infra.cluster import Cluster
from plumbing.base import (
    PlatformComponent,
    PropsTransform,
    UpstreamArgs,
    apply_manifest,
    config_digest,
    matches,
    with_config_digest,
)
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.readiness import Readiness
from runtimes.catalog import RUNTIMES, Policy
from stackmodel.components.katib import KATIB, KatibConfig
from stackmodel.stack import PlatformConfig

TREE = "applications/katib/upstream/installs/katib-with-kubeflow"
INSTALL = "katib"
NAMESPACE = "kubeflow"
KATIB_CONFIG = "katib-config"
KATIB_CONFIG_KEY = "katib-config.yaml"
"""components/controller/katib-config.yaml at v0.19.0: the controller reads it at start (its
--katib-config flag, cmd/katib-controller/v1beta1/main.go), so its pods roll when it changes."""
TRIAL_RESOURCES = ("TrainJob.v1alpha1.trainer.kubeflow.org", "Job.v1.batch")
"""The trial kinds the platform offers: TrainJobs on its runtimes, and plain Jobs (both queued by
Kueue in team namespaces: components/kueue.py FRAMEWORKS)."""
TRIAL_TEMPLATES = "trial-templates"
TRAINJOB_TEMPLATE_KEY = "trainJobTemplate"
UPSTREAM_PYTORCHJOB_KEY = "pytorchJobTemplate"
TRAINJOB_RUNTIME = "torch-distributed"
DB_SECRET = "katib-mysql-secrets"
ROOT_PASSWORD_KEY = "MYSQL_ROOT_PASSWORD"
PASSWORD_KEY = "MYSQL_PASSWORD"
"""Ours, beside the release's root password: the database manager's user's password."""
DB_USER = "katib"
MYSQL = ("Deployment", "katib-mysql")
DB_MANAGER = ("Deployment", "katib-db-manager")
CONTROLLER = ("Deployment", "katib-controller")
VOLUME = "katib-mysql"
POD_WEBHOOK_CONFIGURATION = "katib.kubeflow.org"
POD_WEBHOOK = "mutator.pod.katib.kubeflow.org"
JOB_PODS = "job-owned-pods"
JOB_PODS_EXPRESSION = (
    "has(object.metadata.ownerReferences) && "
    "object.metadata.ownerReferences.exists(o, o.apiVersion == 'batch/v1' && o.kind == 'Job')"
)
"""A pod a Job made: a TrainJob's (Trainer's JobSet makes Jobs) or a Job trial's. The Job controller
sets the owner reference when it creates the pod (before admission), as JobSet does on its Jobs."""
INJECTION_LABEL = ("katib.kubeflow.org/metrics-collector-injection", "enabled")
"""The namespace label the webhook's namespaceSelector asks for (the tree's MutatingWebhookConfiguration;
Kubeflow's own install sets it on the profile: tests/katib_install.sh at 26.03.1-rc.2)."""
POD_REQUESTS = {"cpu": "50m", "memory": "10Mi"}
"""What Katib asks for each of its own pods and containers in a team namespace, a suggestion and
a metrics collector, at katib-config's defaults (v0.19.0 pkg/apis/config/v1beta1/defaults.go
DefaultCPURequest, DefaultMemRequest; the tree's katib-config sets no requests but the TensorFlow
collector's and ENAS's limits)."""
SECRET_LENGTH = 32
MESH_OPT_OUT = ("sidecar.istio.io/inject", "false")
"""The pod label that keeps Istio's injector away (its webhooks' objectSelector)."""
PRIMARY_POD_POLICY = "mlplatform-katib-mpi-trial-primary-pod"
"""In team namespaces: a TrainJob trial on an MPI runtime reads its metric from the launcher.
Katib defaults a TrainJob trial's primary pod to completion index 0 of replicated job `node`
(kubeflow/katib v0.19.0 pkg/apis/controller/experiments/v1beta1/constants.go
DefaultTrainJobPrimaryPodLabels, set by its Experiment webhook before this policy is evaluated),
and the Kubeflow SDK 0.5.0's OptimizerClient sets no primary pod: on our MPI runtimes that pod
runs sshd while the launcher runs mpirun and prints the metric (runtimes/catalog.py), so the
collector Katib puts there finds nothing and every trial ends without one."""
MPI_RUNTIMES = tuple(spec.name for spec in RUNTIMES if spec.policy is Policy.MPI)
"""Our MPI runtimes, each also `<name>-<pool>` (runtimes/catalog.py runtime_name)."""
REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
LAUNCHER = "launcher"
CONFIG_READERS = (MYSQL, DB_MANAGER, CONTROLLER)
"""What reads what the program writes into the tree, only at start: MySQL and the database
manager their credentials, the controller katib-config."""


@dataclass(frozen=True)
class KatibArgs(UpstreamArgs):
    settings: KatibConfig


def with_platform_trial_resources(props: dict[str, Any]) -> dict[str, Any] | None:
    """katib-config's trial kinds: those the platform installs (TRIAL_RESOURCES)."""
    if not matches(props, "ConfigMap", KATIB_CONFIG):
        return None
    config = yaml.safe_load(props["data"][KATIB_CONFIG_KEY])
    config["init"]["controller"]["trialResources"] = list(TRIAL_RESOURCES)
    return {**props, "data": {**props["data"], KATIB_CONFIG_KEY: yaml.safe_dump(config, sort_keys=False)}}


def trainjob_template(pytorchjob: dict[str, Any]) -> dict[str, Any]:
    """Kubeflow's PyTorchJob template as a TrainJob on the platform's torch runtime: the same
    image and command (the MNIST trainer of Katib's examples), on the runtime's nodes, the trial's
    metric read from its first node (Katib v0.19.0's TrainJob defaults)."""
    master = pytorchjob["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "spec": {
            "runtimeRef": {"name": TRAINJOB_RUNTIME},
            "trainer": {"numNodes": 1, "image": master["image"], "command": list(master["command"])},
        },
    }


def with_trainjob_template(props: dict[str, Any]) -> dict[str, Any] | None:
    """The UI's templates for everyone: a TrainJob template in place of the PyTorchJob one."""
    if not matches(props, "ConfigMap", TRIAL_TEMPLATES):
        return None
    data = dict(props["data"])
    pytorchjob = yaml.safe_load(data.pop(UPSTREAM_PYTORCHJOB_KEY))
    data[TRAINJOB_TEMPLATE_KEY] = yaml.safe_dump(trainjob_template(pytorchjob), sort_keys=False)
    return {**props, "data": data}


def with_job_templates_out_of_the_mesh(props: dict[str, Any]) -> dict[str, Any] | None:
    """The UI's Job templates for everyone, their pods out of the mesh (MESH_OPT_OUT): in a team
    namespace (istio-injection: enabled) a Job trial's pod would get the Istio sidecar, and
    Katib's metrics collector waits for every root process of the pod, the sidecar's too
    (kubeflow/katib v0.19.0 pkg/metricscollector/v1beta1/common/pns.go WaitMainProcesses,
    const.go DefaultWaitAllProcesses "true"; kubeflow/katib#1383, #2614), while the native
    sidecar waits for the collector to exit: the trial never ends. Our runtimes' TrainJob pods
    opt out already (runtimes/catalog.py)."""
    if not matches(props, "ConfigMap", TRIAL_TEMPLATES):
        return None
    data = dict(props["data"])
    for key, text in sorted(data.items()):
        job = yaml.safe_load(text) or {}
        if job.get("apiVersion") != "batch/v1" or job.get("kind") != "Job":
            continue
        pod = job["spec"]["template"]
        pod["metadata"] = {
            **(pod.get("metadata") or {}),
            "labels": {**((pod.get("metadata") or {}).get("labels") or {}), MESH_OPT_OUT[0]: MESH_OPT_OUT[1]},
        }
        data[key] = yaml.safe_dump(job, sort_keys=False)
    return {**props, "data": data}


def with_pod_webhook_for_job_pods(props: dict[str, Any]) -> dict[str, Any] | None:
    """Katib's pod webhook called only for pods a Job owns (JOB_PODS_EXPRESSION)."""
    if not matches(props, "MutatingWebhookConfiguration", POD_WEBHOOK_CONFIGURATION):
        return None
    condition = {"name": JOB_PODS, "expression": JOB_PODS_EXPRESSION}
    webhooks = [
        {**w, "matchConditions": [*(w.get("matchConditions") or []), condition]} if w.get("name") == POD_WEBHOOK else w
        for w in props.get("webhooks") or []
    ]
    return {**props, "webhooks": webhooks}


def with_database_credentials(props: dict[str, Any], root_password: Any, password: Any) -> dict[str, Any] | None:
    """`katib-mysql-secrets` (root's `test` upstream): generated passwords for root and our user."""
    if not matches(props, "Secret", DB_SECRET):
        return None
    return with_secrets(props, {ROOT_PASSWORD_KEY: root_password, PASSWORD_KEY: password})


def _secret_env(name: str, key: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": DB_SECRET, "key": key}}}


def _with_first_container_env(props: dict[str, Any], drop: tuple[str, ...], add: list[dict[str, Any]]) -> dict[str, Any]:
    template = props["spec"]["template"]
    first, *rest = template["spec"]["containers"]
    env = [e for e in first.get("env") or [] if e.get("name") not in drop] + add
    spec = {**template["spec"], "containers": [{**first, "env": env}, *rest]}
    return {**props, "spec": {**props["spec"], "template": {**template, "spec": spec}}}


def with_mysql_user(props: dict[str, Any]) -> dict[str, Any] | None:
    """Katib's MySQL with our user (the image creates it with every right on MYSQL_DATABASE) and
    no empty root password."""
    if not matches(props, *MYSQL):
        return None
    add = [{"name": "MYSQL_USER", "value": DB_USER}, _secret_env("MYSQL_PASSWORD", PASSWORD_KEY)]
    return _with_first_container_env(props, ("MYSQL_ALLOW_EMPTY_PASSWORD", "MYSQL_USER", "MYSQL_PASSWORD"), add)


def with_db_manager_user(props: dict[str, Any]) -> dict[str, Any] | None:
    """The database manager signs in as our user (DB_USER, DB_PASSWORD), not as root."""
    if not matches(props, *DB_MANAGER):
        return None
    return _with_first_container_env(props, ("DB_USER", "DB_PASSWORD"), [{"name": "DB_USER", "value": DB_USER}, _secret_env("DB_PASSWORD", PASSWORD_KEY)])


def with_volume_size(props: dict[str, Any], size: str) -> dict[str, Any] | None:
    if not matches(props, "PersistentVolumeClaim", VOLUME):
        return None
    spec = props["spec"]
    return {**props, "spec": {**spec, "resources": {**spec.get("resources", {}), "requests": {"storage": size}}}}


def holds_data(props: dict[str, Any]) -> bool:
    return matches(props, "PersistentVolumeClaim", VOLUME)


def katib_transforms(args: KatibArgs, root_password: Any, password: Any) -> tuple[PropsTransform, ...]:
    """Every change to the tree's objects, for this stack."""
    written = (root_password, password, TRIAL_RESOURCES)
    return (
        with_platform_trial_resources,
        with_trainjob_template,
        with_job_templates_out_of_the_mesh,
        with_pod_webhook_for_job_pods,
        partial(with_database_credentials, root_password=root_password, password=password),
        with_mysql_user,
        with_db_manager_user,
        partial(with_volume_size, size=args.settings.database_storage),
        partial(with_config_digest, workloads=CONFIG_READERS, digest=config_digest(*written)),
    )


def primary_pod_policy() -> list[dict[str, Any]]:
    """The policy (PRIMARY_POD_POLICY) and its binding to every team namespace."""
    template = "object.spec.trialTemplate"
    trial = f"{template}.trialSpec"
    runtime = f"{trial}.spec.runtimeRef.name"
    on_mpi = " || ".join(f"{runtime} == '{name}' || {runtime}.startsWith('{name}-')" for name in MPI_RUNTIMES)
    condition = (
        f"has(object.spec.trialTemplate) && has({template}.trialSpec) && has({trial}.kind) && {trial}.kind == 'TrainJob' && "
        f"has({trial}.spec) && has({trial}.spec.runtimeRef) && has({trial}.spec.runtimeRef.name) && ({on_mpi})"
    )
    labels = f"{template}.primaryPodLabels"
    policy = fail_closed_policy(
        PRIMARY_POD_POLICY,
        [
            {
                "apiGroups": ["kubeflow.org"],
                "apiVersions": ["v1beta1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["experiments"],
            }
        ],
        [{"name": "trainjob-trials-on-mpi-runtimes", "expression": condition}],
        [
            {
                "expression": f"has({labels}) && '{REPLICATED_JOB_LABEL}' in {labels} && {labels}['{REPLICATED_JOB_LABEL}'] == '{LAUNCHER}'",
                "messageExpression": f"'spec.trialTemplate.primaryPodLabels: the trials run on ' + {runtime} + ', an MPI runtime, "
                f"whose node pods run sshd while the launcher runs mpirun and prints the metric; Katib would read it from "
                f"node 0 and find none. Search on torch-distributed or jax-distributed (the Kubeflow SDK sets no primary pod), "
                f"or set primaryPodLabels {{{REPLICATED_JOB_LABEL}: {LAUNCHER}}} in the Experiment'",
                "reason": "Invalid",
            }
        ],
    )
    return [policy, teams_binding(PRIMARY_POD_POLICY)]


class Katib(PlatformComponent):
    """Katib for every team: the release's tree with the platform's credentials and trial kinds."""

    ready: pulumi.Resource
    """Done when the tree (its controller and webhooks among it) is ready."""

    def __init__(self, name: str, args: KatibArgs, cluster: Cluster, needs: list[pulumi.Resource], opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, args.sources)

        def generated(key: str) -> pulumi.Output[str]:
            return random.RandomPassword(f"{name}-{key}", random.RandomPasswordArgs(length=SECRET_LENGTH, special=False), opts=self.child()).result

        transforms = katib_transforms(args, generated("db-root-password"), generated("db-password"))
        own = [
            apply_manifest(
                o["metadata"]["name"] + ("-binding" if o["kind"].endswith("Binding") else ""), o, self.child(needs)
            )
            for o in primary_pod_policy()
        ]
        self.ready = self.kustomize(INSTALL, TREE, depends_on=[*needs, *own], transforms=transforms, kept=holds_data)
        self.register_outputs({"ready": self.ready.urn})


def katib_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> KatibArgs:
    return KatibArgs(sources=config.sources, settings=config.components[KATIB])


def _install(args: KatibArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return Katib("katib", args, cluster, ready.resources(KATIB.needs, "Katib"))


INSTALLATION = Installation(KATIB, katib_args, _install)
