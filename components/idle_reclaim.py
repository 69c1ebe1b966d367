"""Idle reclaim: GPU notebooks whose GPUs did nothing for the stack's period are stopped the way
the notebook UI stops them, their volumes kept (mlplatform:components.idleReclaim).

Why a job of ours: Kubeflow's own culler (kubeflow/notebooks v1.11.0 components/notebook-controller/
controllers/culling_controller.go, ENABLE_CULLING / CULL_IDLE_TIME) judges a notebook by its
Jupyter kernels (`/api/kernels` execution_state and last_activity): a notebook whose kernel holds a
GPU and sleeps, or whose user left a terminal open, is not idle to it, and a kernel that computes
on CPUs only keeps its GPU; it never reads the GPUs. So a CronJob runs a short, tested Python
script (components/idle_reclaim_job.py, the file itself in a ConfigMap, on the pinned Python image)
that reads DCGM's utilisation from the platform's Prometheus, the idle-GPU alert's signal, and
patches Notebooks. It runs in the monitoring namespace, whose NetworkPolicies let its pods reach
Prometheus, and without a mesh sidecar (that namespace has no injection), so its pods end.

Least privilege: its ClusterRole (get, list, patch Notebooks; create events) is bound by a
RoleBinding in each team namespace (`team_binding`, made with the team), never cluster-wide.

What it did: each run logs one JSON line per GPU notebook; a stopped or warned notebook carries
the time in an annotation, which kube-state-metrics exports (components/notebook_metrics.py) to
the "GPUs by team" dashboard, and a Warning event the notebook UI lists.

The exemption label (IDLE_RECLAIM_LABEL=exempt on the Notebook) is a team owner's to set: a
ValidatingAdmissionPolicy refuses setting, changing or removing it to anyone who may not manage
the namespace's RoleBindings (kubeflow-admin, the owner's role, may; kubeflow-edit may not:
kubeflow/manifests 26.03.1-rc.2 common/kubeflow-roles/base/cluster-roles.yaml), asked of the API
server's authorizer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi

from components import idle_reclaim_job as job
from components.monitoring import NAMESPACE, datasource_url_of
from facts.admission import fail_closed_policy, teams_binding
from facts.labels import IDLE_RECLAIM_LABEL
from facts.versions import PYTHON_IMAGE, image
from infra.cluster import Cluster
from plumbing.base import CONFIG_DIGEST_ANNOTATION, PlatformComponent, apply_manifest, config_digest
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.readiness import Readiness
from stackmodel.components.idle_reclaim import IDLE_RECLAIM, RUN_INTERVAL_SECONDS, STEP_SECONDS, IdleReclaimConfig
from stackmodel.components.monitoring import MONITORING, MetricsBackend
from stackmodel.stack import PlatformConfig

NAME = "idle-reclaim"
CLUSTER_ROLE = "mlplatform-idle-reclaim"
EXEMPTION_POLICY = "mlplatform-idle-reclaim-exemption"
SCHEDULE = f"*/{RUN_INTERVAL_SECONDS // 60} * * * *"
"""Every 10 minutes: a notebook is warned at least one run before it is stopped, and stopped at
most that long after its period ends."""
SCRIPT = Path(job.__file__).name
"""The job's own labels and annotations are literals there (it runs alone, from the ConfigMap);
tests/test_idle_reclaim.py holds them equal to facts/labels.py."""
MOUNT = "/etc/idle-reclaim"
RBAC = "rbac.authorization.k8s.io"

RULES = [
    {"apiGroups": ["kubeflow.org"], "resources": ["notebooks"], "verbs": ["get", "list", "patch"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
]


@dataclass(frozen=True)
class IdleReclaimArgs:
    """The idle reclaim (components/idle_reclaim.py): the stack's period, where Prometheus is,
    which namespaces it judges and the idle threshold it shares with the idle-GPU alert."""

    settings: IdleReclaimConfig
    backend: MetricsBackend
    namespaces: tuple[str, ...]
    threshold: int


def settings(args: IdleReclaimArgs) -> job.Settings:
    return job.Settings(
        prometheus=datasource_url_of(args.backend),
        namespaces=args.namespaces,
        period_seconds=args.settings.period_seconds,
        warning_seconds=args.settings.warning_seconds,
        threshold=float(args.threshold),
        step_seconds=STEP_SECONDS,
    )


def config_json(found: job.Settings) -> str:
    """The job's config.json (job.Settings.from_json reads it back)."""
    return json.dumps(
        {
            "prometheus": found.prometheus,
            "namespaces": list(found.namespaces),
            "periodSeconds": found.period_seconds,
            "warningSeconds": found.warning_seconds,
            "threshold": found.threshold,
            "stepSeconds": found.step_seconds,
        },
        sort_keys=True,
        indent=1,
    )


def team_binding(namespace: str) -> dict[str, Any]:
    """The job's rights in one team namespace."""
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": NAME, "namespace": namespace},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": CLUSTER_ROLE},
        "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}],
    }


def _label(of: str) -> str:
    return f"(has({of}.metadata.labels) && '{IDLE_RECLAIM_LABEL}' in {of}.metadata.labels ? {of}.metadata.labels['{IDLE_RECLAIM_LABEL}'] : '')"


LABEL_CHANGED = f"request.operation == 'CREATE' ? {_label('object')} != '' : {_label('object')} != {_label('oldObject')}"
OWNER = f"authorizer.group('{RBAC}').resource('rolebindings').namespace(object.metadata.namespace).check('create').allowed()"


def exemption_policy() -> list[dict[str, Any]]:
    """Only a team owner sets, changes or removes a Notebook's exemption label."""
    name = EXEMPTION_POLICY
    policy = fail_closed_policy(
        name,
        [{"apiGroups": ["kubeflow.org"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["notebooks"]}],
        [{"name": "exemption-label-set-or-changed", "expression": LABEL_CHANGED}],
        [
            {
                "expression": "variables.mayManageAccess",
                "message": f"only a team owner (who may manage the namespace's RoleBindings) sets, changes or removes the label "
                f"{IDLE_RECLAIM_LABEL} of a Notebook: it exempts the notebook from the idle reclaim (docs/teams.md)",
                "reason": "Forbidden",
            }
        ],
        variables=[{"name": "mayManageAccess", "expression": OWNER}],
    )
    return [policy, teams_binding(name)]


def objects(args: IdleReclaimArgs) -> list[dict[str, Any]]:
    """The job and its rights, in apply order (the team RoleBindings come with the teams)."""
    source = Path(job.__file__).read_text()
    config = config_json(settings(args))
    meta = {"name": NAME, "namespace": NAMESPACE}
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": dict(meta), "data": {SCRIPT: source, "config.json": config}}
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": dict(meta)}
    role = {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": CLUSTER_ROLE}, "rules": RULES}
    container = {
        "name": NAME,
        "image": image(PYTHON_IMAGE),
        "command": ["python", f"{MOUNT}/{SCRIPT}", "--config", f"{MOUNT}/config.json"],
        "env": [{"name": "PYTHONDONTWRITEBYTECODE", "value": "1"}],
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "runAsUser": 65534,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "volumeMounts": [{"name": "job", "mountPath": MOUNT, "readOnly": True}],
    }
    cron_job = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": dict(meta),
        "spec": {
            "schedule": SCHEDULE,
            "concurrencyPolicy": "Forbid",
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 3,
            "jobTemplate": {
                "spec": {
                    "backoffLimit": 1,
                    "activeDeadlineSeconds": 300,
                    "template": {
                        # A run reads the ConfigMap at its start; the digest says which one it ran.
                        "metadata": {"labels": {"app.kubernetes.io/name": NAME}, "annotations": {CONFIG_DIGEST_ANNOTATION: config_digest(source, config)}},
                        "spec": {
                            "serviceAccountName": NAME,
                            "restartPolicy": "Never",
                            "containers": [container],
                            "volumes": [{"name": "job", "configMap": {"name": NAME}}],
                        },
                    },
                }
            },
        },
    }
    return [config_map, account, role, cron_job, *exemption_policy()]


class IdleReclaim(PlatformComponent):
    """Stops GPU notebooks whose GPUs stayed idle for the stack's period."""

    ready: pulumi.Resource
    """Done when its CronJob exists."""

    def __init__(self, name: str, args: IdleReclaimArgs, cluster: Cluster, needs: list[pulumi.Resource], opts: pulumi.ResourceOptions | None = None):
        """`needs`: the monitoring namespace, where it runs beside Prometheus."""
        super().__init__(name, cluster, opts)
        made = {o["kind"]: apply_manifest(f"{NAME}-{o['kind'].lower()}", o, self.child(needs)) for o in objects(args)}
        self.ready = made["CronJob"]
        self.register_outputs({"ready": self.ready.urn})


def idle_reclaim_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> IdleReclaimArgs:
    return IdleReclaimArgs(
        settings=config.components[IDLE_RECLAIM],
        backend=config.components[MONITORING].backend,
        namespaces=tuple(t.name for t in config.teams),
        threshold=config.components[MONITORING].idle_gpu_threshold,
    )


def _install(args: IdleReclaimArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return IdleReclaim("idle-reclaim", args, cluster, ready.resources(IDLE_RECLAIM.needs, "the idle reclaim"))


INSTALLATION = Installation(IDLE_RECLAIM, idle_reclaim_args, _install)
