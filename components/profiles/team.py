"""A team as one component: every object of its namespace, in apply order, each waiting only
for what it needs, and on GKE its Google identity."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi

from components.access import team_policies
from components.idle_reclaim import team_binding as idle_reclaim_binding
from components.model_registry import install_team_registry
from components.profiles.args import TeamArgs
from components.profiles.dra import dra_objects
from components.profiles.google import editor_service_account, google_identity
from components.profiles.groups import group_access_objects, readers, writers
from components.profiles.names import OldNames, resource_name
from components.profiles.namespace import contributor_objects, limit_range, namespace, profile
from components.profiles.network import network_policies
from components.profiles.pod_default import pod_default
from components.profiles.preemption import checkpoint_objects, priority_pod_default
from components.profiles.queues import queue_objects
from components.profiles.ray import ray_objects
from components.profiles.serving import team_serving_objects, token_minters
from components.profiles.serving_llm import team_llm_objects
from components.profiles.spark import SPARK_SERVICE_ACCOUNT, spark_objects
from components.team_pipelines import ObjectStoreKeys, pipeline_objects
from infra.cluster import Cluster
from infra.component import type_token
from plumbing.base import PlatformComponent, apply_manifest
from plumbing.readiness import Need, Readiness, What, WiringError
from stackmodel.components.istio import ISTIO
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.kubeflow_parts import KUBEFLOW_POD_DEFAULTS
from stackmodel.components.kuberay import KUBERAY
from stackmodel.components.kueue import KUEUE
from stackmodel.components.model_registry import MODEL_REGISTRY
from stackmodel.components.serving import SERVING


def team_objects(
    args: TeamArgs, gcp_service_account: pulumi.Input[str] | None = None, pipeline_keys: ObjectStoreKeys | None = None
) -> list[dict[str, Any]]:
    """Every Kubernetes object of one team, in apply order; `pipeline_keys`: its key pair of the
    in-cluster object store, when its pipelines keep their artifacts there."""
    team = args.team
    objects = [namespace(team, katib=args.katib is not None)]
    if gcp_service_account:
        objects.append(editor_service_account(team, gcp_service_account))
    objects += [profile(args), limit_range(team)]
    for person in team.people:
        objects += contributor_objects(team, str(person.email), person.role)
    objects += group_access_objects(args)
    objects += team_policies(team.name, writers(args))
    objects += network_policies(team)
    objects += queue_objects(args)
    objects += dra_objects(args)
    objects += ray_objects(args)
    if args.pipelines:
        objects += pipeline_objects(team.name, args.pipelines, pipeline_keys)
    if args.idle_reclaim:
        objects.append(idle_reclaim_binding(team.name))
    if args.spark:
        objects += spark_objects(team, gcp_service_account)
    defaults = pod_default(args)
    if defaults:
        objects.append(defaults)
    objects += checkpoint_objects(args)
    priority = priority_pod_default(args)
    if priority:
        objects.append(priority)
    if args.serving:
        minters = token_minters(team.owner, [str(p.email) for p in team.people], [g.name for g in args.groups])
        objects += team_serving_objects(team.name, minters, args.serving.bucket)
        if args.serving.llm:
            store = args.serving.bucket is not None
            objects += team_llm_objects(team.name, store, readers(args), args.serving.gke_gateway_sources)
    return objects


# What each kind of team object waits for besides its namespace: only the CRD, webhook or
# controller it really needs. Built-in kinds wait for nothing else (a RoleBinding may name its
# ClusterRole before Kubeflow creates it; the guard's binding its policy before the runtimes
# make it). A RayCluster waits for KubeRay's CRD where we install KubeRay (GKE's add-on comes
# with the cluster) and for Kueue's webhooks, which must be serving when it is created, to
# suspend it until it is admitted and to check it is a valid elastic job (see ray_objects).
# Every kind a team renders has an entry: a new kind without one is an error at plan time.
OBJECT_NEEDS: dict[str, tuple[Need, ...]] = {
    "Namespace": (),
    "ServiceAccount": (),
    "LimitRange": (),
    "RoleBinding": (),
    "NetworkPolicy": (),
    "ConfigMap": (),
    "Secret": (),
    "PersistentVolumeClaim": (),
    "Service": (),
    "ValidatingAdmissionPolicyBinding": (),
    "ResourceClaimTemplate": (),
    "EndpointSlice": (),  # a team registry's way to its Cloud SQL instance (components/model_registry.py)
    "Deployment": (),
    "Role": (),
    "PersistentVolume": (),
    "Profile": (Need(KUBEFLOW, What.CRDS),),
    "AuthorizationPolicy": (Need(ISTIO, What.CRDS),),
    "VirtualService": (Need(ISTIO, What.CRDS),),
    "Telemetry": (Need(ISTIO, What.CRDS),),
    "ClusterQueue": (Need(KUEUE, What.CRDS),),
    "LocalQueue": (Need(KUEUE, What.CRDS),),
    "RayCluster": (Need(KUBERAY, What.CRDS, optional=True), Need(KUEUE, What.WEBHOOKS)),
    "PodDefault": (Need(KUBEFLOW_POD_DEFAULTS, What.CRDS),),
    "LLMInferenceServiceConfig": (Need(SERVING, What.WEBHOOKS),),  # its validating webhook is the LLM controller's
}


def needs_of(obj: dict[str, Any]) -> tuple[Need, ...]:
    """What a team object waits for besides its namespace (OBJECT_NEEDS)."""
    kind = obj["kind"]
    if kind not in OBJECT_NEEDS:
        raise WiringError(
            f"team object {kind} {obj['metadata']['name']}: its kind has no entry in OBJECT_NEEDS "
            "(components/profiles/team.py); say what it waits for, () for a built-in kind"
        )
    return OBJECT_NEEDS[kind]


# What Pulumi must never delete on its own (docs/teams.md, "Removing a team"): a config
# mistake that drops a team then stops `pulumi up` at these instead of deleting them. The
# namespace holds the notebook volumes (PVCs the Jupyter web app made, which Pulumi never
# knew) and is also kept on a deliberate removal, for its last step to be a person's; the
# Profile holds the team's access and quota, and is recreated as it was if the team is re-added.
KEPT: dict[str, dict[str, Any]] = {
    "Namespace": {"protect": True, "retain_on_delete": True},
    "Profile": {"protect": True},
    # The team's checkpoints on kind, and the model store's claim and volume
    # (components/profiles/serving.py): a read-only view of the team bucket, kept like every
    # claim (check's data-kept) and removed with the team.
    "PersistentVolumeClaim": {"protect": True, "retain_on_delete": True},
    "PersistentVolume": {"protect": True, "retain_on_delete": True},
}


class Team(PlatformComponent):
    """One team: its namespace and everything in it, and on GKE its Google identity."""

    namespace: pulumi.Output[str]
    google_service_account: pulumi.Output[str] | None
    """On GKE: the e-mail of the Google account the namespace's workloads act as."""

    def __init__(
        self,
        name: str,
        args: TeamArgs,
        cluster: Cluster,
        ready: Readiness,
        opts: pulumi.ResourceOptions | None = None,
        old_names: OldNames | None = None,
        pipeline_keys: ObjectStoreKeys | None = None,
    ):
        """`ready`: what each component made ready (OBJECT_NEEDS says what each object waits
        for); `old_names`: shared by all teams of the stack (see OldNames); `pipeline_keys`: see
        team_objects."""
        super().__init__(name, cluster, opts, args.model_registry.sources if args.model_registry else None)
        team = args.team
        old_names = old_names or OldNames()
        kind = type_token(type(self))
        also_for = (SPARK_SERVICE_ACCOUNT,) if args.spark else ()
        gsa_email = google_identity(team, args.google, cluster.image_registry, self.child, also_for) if args.google else None
        ns, *rest = team_objects(args, gcp_service_account=gsa_email, pipeline_keys=pipeline_keys)
        namespace_resource = apply_manifest(
            resource_name(team, ns), ns, self.child(aliases=old_names.aliases(team, ns, kind), **KEPT["Namespace"])
        )
        editor: list[pulumi.Resource] = []
        for obj in rest:
            needs = ready.resources(needs_of(obj), f"team {team.name}'s {obj['kind']} {obj['metadata']['name']}")
            if obj["kind"] == "Profile":
                needs += editor  # our default-editor exists before the controller looks for it
            created = apply_manifest(
                resource_name(team, obj),
                obj,
                self.child([*needs, namespace_resource], aliases=old_names.aliases(team, obj, kind), **KEPT.get(obj["kind"], {})),
            )
            if obj["kind"] == "ServiceAccount":
                editor.append(created)
        if args.model_registry is not None:
            needs = ready.resources((Need(MODEL_REGISTRY, What.CONTROLLER),), f"team {team.name}'s Model Registry")
            install_team_registry(self, args.model_registry, team.name, [namespace_resource, *needs], cluster)
        self.namespace = pulumi.Output.from_input(team.name)
        self.google_service_account = gsa_email
        self.register_outputs({"namespace": self.namespace, "googleServiceAccount": gsa_email})


def install_teams(
    teams: Sequence[TeamArgs],
    cluster: Cluster,
    ready: Readiness,
    pipeline_keys: Mapping[str, ObjectStoreKeys] | None = None,
) -> list[Team]:
    """Every team of the stack, each named after it (see Team for `ready`; `pipeline_keys`: per
    team, its key pair of the in-cluster object store, components/pipelines.py)."""
    old_names = OldNames()
    keys = pipeline_keys or {}
    return [Team(args.team.name, args, cluster, ready, old_names=old_names, pipeline_keys=keys.get(args.team.name)) for args in teams]
