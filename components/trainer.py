"""Kubeflow Trainer v2: the controller from its chart (without the bundled JobSet and
without the hook-installed runtimes: ours come from runtimes/), and the roles that let
profile members create TrainJobs and every signed-in user read ClusterTrainingRuntimes.

Values: kubeflow/trainer v2.3.0 charts/kubeflow-trainer/values.yaml (`jobset.install`,
`runtimes.defaultEnabled`, `manager.podAnnotations`). Roles: kubeflow/manifests
applications/trainer/upstream/overlays/kubeflow-platform/kubeflow-trainer-roles.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from facts.versions import TRAINER_CHART
from infra.cluster import Cluster
from plumbing.base import ChartArgs, PlatformComponent
from plumbing.charts import ChartValues, Hint, Relied, built_by, exactly
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.readiness import Readiness
from plumbing.roles import VERBS_READ, Rule, cluster_role
from runtimes.args import TrainingRuntimesArgs, training_runtimes_args
from stackmodel.components.jobset import JOBSET
from stackmodel.components.trainer import TRAINER
from stackmodel.stack import PlatformConfig

NAMESPACE = "kubeflow-system"
WEBHOOK_PORT = 9443
# Istio must not intercept the webhook port (Kubeflow's trainer overlay sets the same).
ISTIO_EXCLUDE_INBOUND = "traffic.sidecar.istio.io/excludeInboundPorts"


# kubeflow/manifests 26.03 common/kubeflow-namespace/base/kubeflow-system: the NetworkPolicy
# `trainer-webhook` admits the API server to pods labelled so; the 2.3.0 chart's pods carry
# only its selector labels, so we add it through `manager.labels` (values.yaml: "Extra labels
# for manager resources (including the Deployment and pods)").
WEBHOOK_POLICY_LABELS = {"service.istio.io/canonical-name": "trainer"}


@dataclass(frozen=True)
class TrainerInstallArgs:
    """What installing Trainer takes: the controller, and our training runtimes after it."""

    trainer: ChartArgs
    runtimes: TrainingRuntimesArgs


def trainer_values() -> dict[str, Any]:
    """With no built-in runtime enabled, the chart renders neither its runtime installer
    hook Job nor its pre-delete cleanup Job (charts/kubeflow-trainer/templates/runtimes/
    installer-job.yaml and cleanup-job.yaml are gated on `trainer.runtimes.enabled`):
    helm.v4.Chart drops hooks anyway (pulumi-kubernetes helm/v4/chart.go: DisableHooks), so
    the chart's runtimes would silently never be installed: ours come from runtimes/."""
    return {
        "jobset": {"install": False},
        "runtimes": {"defaultEnabled": False},
        "manager": {"podAnnotations": {ISTIO_EXCLUDE_INBOUND: str(WEBHOOK_PORT)}, "labels": WEBHOOK_POLICY_LABELS},
    }


GROUP = ("trainer.kubeflow.org",)
EDIT_RULES = (
    Rule(GROUP, ("trainingruntimes",), VERBS_READ),
    Rule(GROUP, ("trainjobs",), ("create", "patch", "get", "list", "watch", "delete")),
    Rule(("",), ("pods", "pods/log", "events"), VERBS_READ),
)
VIEW_RULES = (Rule(GROUP, ("trainingruntimes", "trainjobs"), VERBS_READ),)
CLUSTER_RUNTIME_READER = "kubeflow-trainer-view-cluster-runtimes"


class Trainer(PlatformComponent):
    """Kubeflow Trainer's controller, and the roles that let profile members run TrainJobs."""

    ready: pulumi.Resource
    """Done when the controller and its webhook are ready (TrainJob/runtime CRDs exist)."""
    namespace: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: ChartArgs,
        cluster: Cluster,
        needs: list[pulumi.Resource],
        namespace: pulumi.Resource | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`namespace`: what creates kubeflow-system when Kubeflow does (its namespace tree);
        None creates it here."""
        super().__init__(name, cluster, opts, args.sources)
        namespace = namespace or self.create_namespace(NAMESPACE)
        self.ready = self.chart(
            "kubeflow-trainer", TRAINER_CHART, NAMESPACE, trainer_values(), [namespace, *needs], overlay=args.values
        )
        opts_ = self.child()
        cluster_role("kubeflow-trainer-admin", ("kubeflow-admin",), aggregates="kubeflow-trainer-admin", opts=opts_)
        cluster_role("kubeflow-trainer-edit", ("kubeflow-edit", "kubeflow-trainer-admin"), EDIT_RULES, opts=opts_)
        cluster_role("kubeflow-trainer-view", ("kubeflow-view", "kubeflow-trainer-view"), VIEW_RULES, opts=opts_)
        reader = cluster_role(CLUSTER_RUNTIME_READER, (), (Rule(GROUP, ("clustertrainingruntimes",), VERBS_READ),), opts=opts_)
        k8s.rbac.v1.ClusterRoleBinding(
            CLUSTER_RUNTIME_READER,
            metadata=k8s.meta.v1.ObjectMetaArgs(name=CLUSTER_RUNTIME_READER),
            role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=reader.metadata.name),
            subjects=[k8s.rbac.v1.SubjectArgs(kind="Group", name="system:authenticated", api_group="rbac.authorization.k8s.io")],
            opts=opts_,
        )
        self.namespace = pulumi.Output.from_input(NAMESPACE)
        self.register_outputs({"namespace": self.namespace, "ready": self.ready.urn})


def trainer_install_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> TrainerInstallArgs:
    return TrainerInstallArgs(trainer=ChartArgs(sources=config.sources, values=config.components[TRAINER].values), runtimes=training_runtimes_args(config))


def _install(args: TrainerInstallArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    jobset, namespace = TRAINER.needs
    needs = ready.resources((jobset,), "Trainer")
    return Trainer("trainer", args.trainer, cluster, needs, namespace=ready.get(namespace.on))


# What the platform needs of the chart's values beyond what it sets (plumbing/charts.py): the
# keys it relies on, each read in the chart at its pinned version, and why it sets the keys it sets.
RELIED = (
    Relied(("crds", "enabled"), exactly(True), "crds.enabled true, the chart's default",
           "values.yaml, templates/crd/*.yaml (`if .Values.crds.enabled`)",
           "the platform's training runtimes (runtimes/) and every TrainJob are of the kinds these CRDs define"),
    Relied(("runtimes", "*", "enabled"), exactly(False), "each built-in runtime off, the chart's default",
           "values.yaml `runtimes`, templates/runtimes/_runtimes.tpl (trainer.runtimes.enabled renders the installer hook Job)",
           "the chart installs its runtimes from a Helm hook Job, which helm.v4.Chart never runs (the runtime would silently never "
           "exist); the platform's runtimes come from runtimes/ (docs/runtimes.md)"),
    Relied(("runtimes", "torchtuneDistributed", "*", "enabled"), exactly(False), "each built-in runtime off, the chart's default",
           "values.yaml `runtimes.torchtuneDistributed`, templates/runtimes/_runtimes.tpl",
           "the chart installs its runtimes from a Helm hook Job, which helm.v4.Chart never runs; the platform's runtimes come from runtimes/"),
    Relied(("dataCache", "runtimes", "*", "enabled"), exactly(False), "the data-cache runtime off, the chart's default",
           "values.yaml `dataCache.runtimes`, templates/runtimes/_runtimes.tpl",
           "the chart installs its runtimes from a Helm hook Job, which helm.v4.Chart never runs; the platform's runtimes come from runtimes/"),
    Relied(("manager", "config", "certManagement", "enable"), exactly(True), "certManagement.enable true, the chart's default",
           "values.yaml, templates/manager/configmap.yaml",
           "Trainer's controller makes its own webhook certificate; nothing else in the platform issues one for it"),
)
HINTS = (
    Hint(("jobset", "install"), "JobSet is installed once, by the jobset component, before Trainer; a second copy from Trainer's "
         "chart would claim the same CRDs, webhooks and controller", f"{JOBSET.path} (its chart values: {JOBSET.path}.values)"),
    Hint(("runtimes", "defaultEnabled"), "the chart installs its runtimes from a Helm hook Job, which helm.v4.Chart never runs; "
         "the platform's runtimes come from runtimes/ (docs/runtimes.md)"),
    Hint(("manager", "podAnnotations"), "Istio must not intercept Trainer's webhook port 9443"),
    Hint(("manager", "labels"), "Kubeflow's trainer-webhook NetworkPolicy admits the API server to pods labelled so"),
)


# Our ClusterTrainingRuntimes (runtimes/) follow the controller: the composition installs them.
INSTALLATION = Installation(
    TRAINER,
    trainer_install_args,
    _install,
    charts=(ChartValues("values", TRAINER_CHART, lambda args: trainer_values(), lambda args: args.trainer.values, built_by(trainer_values), relied=RELIED, hints=HINTS),),
)
