"""Teams as code: per team a Kubeflow profile namespace with its owner, contributors
written exactly as KFAM writes them, a quota, a Kueue ClusterQueue + `default`
LocalQueue, NetworkPolicies, and on GKE a Google service account (Workload Identity)
and an optional bucket; optionally a RayCluster behind the Kubeflow gateway.

Upstream facts (kubeflow/dashboard v2 code line, same in kubeflow/kubeflow v1.10):
- KFAM binding names and objects: components/access-management/kfam/bindings.go
  (`[^a-zA-Z0-9]+` -> '-', `User-<email>-ClusterRole-<role>`, lowercased; the function is
  in facts/naming.py, where the schema reads it too) and kfam/api_default.go
  (AuthorizationPolicy of the same name, header kubeflow-userid).
- What the profile controller makes: components/profile-controller/controllers/
  profile_controller.go (ResourceQuota kf-resource-quota from resourceQuotaSpec, the
  `owner` namespace annotation it accepts, labels it only adds when absent) and
  plugin_workload_identity.go (WorkloadIdentity plugin, annotates default-editor).
- Ray under Istio: ray-project/ray doc/source/cluster/kubernetes/k8s-ecosystem/istio.md
  (ports pinned on head and workers, headless Service listing them).
- Ray under Kueue (kubernetes-sigs/kueue v0.19.2): see `ray_objects`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_gcp as gcp

from args.teams import GoogleCloud, TeamArgs
from components.access import GATEWAY_PRINCIPAL as GATEWAY_PRINCIPAL  # the gateway's identity, re-exported
from components.access import KFP_UI_PRINCIPAL as KFP_UI_PRINCIPAL
from components.access import (
    KUBEFLOW_GATEWAY,
    RAY_DASHBOARD_AUTH_PROXY_PORT,
    RAY_DASHBOARD_PORT,
    RAY_SERVE_PORT,
    ray_dashboard_proxy_policy,
    ray_policy,
    team_policies,
)
from components.access import USER_HEADER as USER_HEADER
from components.base import PlatformComponent, apply_manifest, workload_identity_account
from components.kueue import DEFAULT_FLAVOR, admission_check_name, queued_pools
from components.team_pipelines import ObjectStoreKeys, pipeline_objects, pipeline_token_access
from facts import naming
from facts.naming import TEAM_POD_DEFAULT, kfam_binding_name, ray_dashboard_path, ray_serve_path
from facts.node_labels import GPU_RESOURCE, pool_selector, pool_taints
from facts.versions import RAY, RAY_DASHBOARD_AUTH_PROXY_IMAGE, RAY_GPU_IMAGE, RAY_IMAGE, image
from infra.cluster import Cluster
from infra.registry import WRITER, ImageRegistry
from runtimes import kueue_guard
from stacks.schema import Role
from stacks.schema import Team as TeamConfig

CLUSTER_ROLES = {"admin": "kubeflow-admin", "edit": "kubeflow-edit", "view": "kubeflow-view"}
EDITOR_SA = "default-editor"
LOCAL_QUEUE = "default"
RBAC = "rbac.authorization.k8s.io"
# Namespaces whose traffic a team namespace accepts: the gateway, Kubeflow's web apps and
# notebook culling, the operators that probe workloads, and metrics scraping.
PLATFORM_NAMESPACES = ("istio-system", "kubeflow", "kuberay-system", "kubeflow-system", "monitoring")
# Profile namespaces run training images as root: the Pod Security level is ours, set here (the
# profile controller's `kubeflow` overlay sets none; its `kubeflow-pss` overlay would add
# `enforce: baseline`, applications/dashboard/upstream/profile-controller/overlays/kubeflow-pss).
NAMESPACE_LABELS = {
    "istio-injection": "enabled",
    "app.kubernetes.io/part-of": "kubeflow-profile",
    "pod-security.kubernetes.io/enforce": "baseline",
    "pod-security.kubernetes.io/warn": "baseline",
}
# Ray ports pinned for Istio (Ray's Istio guide): same on head and workers.
RAY_PORTS = {
    "node-manager-port": 6380,
    "object-manager-port": 6381,
    "runtime-env-agent-port": 6382,
    "dashboard-agent-grpc-port": 6383,
    "dashboard-agent-listen-port": 52365,
    "metrics-export-port": 8080,
}
RAY_WORKER_PORTS = range(10002, 10013)
# Ray Serve's HTTP proxy binds the loopback address unless told (ray 2.58.0 serve/config.py
# HTTPOptions.host: serve/_private/constants.py DEFAULT_HTTP_HOST, this variable, or localhost); the Istio sidecar forwards inbound traffic to the
# pod's address, not localhost, so Serve must listen on every address to be reachable.
RAY_SERVE_HOST_ENV = {"name": "RAY_SERVE_DEFAULT_HTTP_HOST", "value": "0.0.0.0"}
# Kueue v0.19.2: the queue label (pkg/controller/constants/constants.go QueueLabel), the
# per-job elastic opt-in (pkg/constants/constants.go ElasticJobAnnotation, value "true" in
# pkg/workloadslicing/workloadslicing.go) and the scheduling gate an elastic job's pod
# templates carry (apis/kueue/v1beta2/constants.go ElasticJobSchedulingGate).
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_ELASTIC_JOB_ANNOTATION = "kueue.x-k8s.io/elastic-job"
KUEUE_ELASTIC_JOB_GATE = "kueue.x-k8s.io/elastic-job"


def gpu_total(team: TeamConfig) -> int:
    return sum(team.quota.gpus.values())


def team_service_account_id(team: TeamConfig) -> str:
    """The id of the team's Google service account: `team-<name>`, length-safe."""
    return naming.team_service_account_id(team.name)


def profile(team: TeamConfig) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "owner": {"apiGroup": RBAC, "kind": "User", "name": team.owner},
        "resourceQuotaSpec": {
            "hard": {
                "cpu": team.quota.cpu,
                "memory": team.quota.memory,
                f"requests.{GPU_RESOURCE}": str(gpu_total(team)),
            }
        },
    }
    return {"apiVersion": "kubeflow.org/v1", "kind": "Profile", "metadata": {"name": team.name}, "spec": spec}


# GKE Workload Identity: the KSA names its Google service account in this annotation
# (cloud.google.com/kubernetes-engine/docs/how-to/workload-identity).
GSA_ANNOTATION = "iam.gke.io/gcp-service-account"


def editor_service_account(team: TeamConfig, gcp_service_account: pulumi.Input[str]) -> dict[str, Any]:
    """`default-editor`, made by us with its Workload Identity annotation. Not the profile
    controller's WorkloadIdentity plugin: that plugin calls IAM to grant the binding itself,
    with credentials the controller lacks here, and error-loops; our IAM member grants it.
    The controller creates the account only when absent and leaves an existing one alone
    (kubeflow/dashboard components/profile-controller/controllers/profile_controller.go
    updateServiceAccount: Get, Create on NotFound)."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": EDITOR_SA, "namespace": team.name, "annotations": {GSA_ANNOTATION: gcp_service_account}},
    }


def namespace(team: TeamConfig) -> dict[str, Any]:
    """Created by us (so our objects can land in it at once) the way the controller accepts it."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": team.name, "labels": dict(NAMESPACE_LABELS), "annotations": {"owner": team.owner}},
    }


LIMIT_RANGE = "container-defaults"


def limit_range(team: TeamConfig) -> dict[str, Any]:
    """Requests and limits for containers that name none. The profile's ResourceQuota
    (cpu, memory) refuses a pod whose containers have no requests, so without this a
    TrainJob submitted without `resources_per_node` never starts; with it the pod is admitted
    and counted. Kueue counts a workload's containers the same way (kubernetes-sigs/kueue
    v0.19.2 pkg/workload/resources.go applies the namespace's LimitRanges before admission)."""
    defaults = team.container_defaults
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": LIMIT_RANGE, "namespace": team.name},
        "spec": {
            "limits": [
                {
                    "type": "Container",
                    "defaultRequest": {"cpu": defaults.cpu, "memory": defaults.memory},
                    "default": {"cpu": defaults.cpu_limit, "memory": defaults.memory_limit},
                }
            ]
        },
    }


def contributor_objects(team: TeamConfig, email: str, role: Role) -> list[dict[str, Any]]:
    """The RoleBinding and AuthorizationPolicy KFAM writes when the owner adds a contributor."""
    name = kfam_binding_name(email, role.value)
    meta = {"name": name, "namespace": team.name, "annotations": {"user": email, "role": role.value}}
    return [
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "RoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": CLUSTER_ROLES[role.value]},
            "subjects": [{"apiGroup": RBAC, "kind": "User", "name": email}],
        },
        {
            "apiVersion": "security.istio.io/v1beta1",
            "kind": "AuthorizationPolicy",
            "metadata": meta,
            "spec": {
                "rules": [
                    {
                        "from": [{"source": {"principals": [GATEWAY_PRINCIPAL, KFP_UI_PRINCIPAL]}}],
                        "when": [{"key": f"request.headers[{USER_HEADER}]", "values": [email]}],
                    }
                ]
            },
        },
    ]


def writers(team: TeamConfig) -> list[str]:
    """Who may act (not only read) on the team's routes: the owner and `edit` contributors."""
    return [team.owner] + [c.email for c in team.contributors if c.role is Role.EDIT]


def cluster_queue(args: TeamArgs) -> dict[str, Any]:
    """CPU/memory in one resource group (default flavor), GPUs in another (one flavor per
    pool), so a GPU pod takes its CPU from the team's CPU quota and its GPUs from a pool.
    An accelerator's quota goes to its first pool; later pools of it can borrow.

    A workload given a queued pool's flavor is admitted only once its ProvisioningRequest
    is provisioned: the pool's AdmissionCheck (components/kueue.py) runs on that flavor
    alone (v1beta2 `admissionChecksStrategy.admissionChecks[].onFlavors`; v1beta2 has no
    plain `admissionChecks` list)."""
    team = args.team
    groups: list[dict[str, Any]] = [
        {
            "coveredResources": ["cpu", "memory"],
            "flavors": [
                {
                    "name": DEFAULT_FLAVOR,
                    "resources": [
                        {"name": "cpu", "nominalQuota": team.quota.cpu},
                        {"name": "memory", "nominalQuota": team.quota.memory},
                    ],
                }
            ],
        }
    ]
    seen: set[str] = set()
    gpu_flavors = []
    for pool in args.gpu_pools:
        quota = team.quota.gpus.get(pool.accelerator, 0) if pool.accelerator not in seen else 0
        seen.add(pool.accelerator)
        resource: dict[str, Any] = {"name": GPU_RESOURCE, "nominalQuota": quota}
        gpu_flavors.append({"name": pool.name, "resources": [resource]})
    if gpu_flavors:
        groups.append({"coveredResources": [GPU_RESOURCE], "flavors": gpu_flavors})
    spec: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": team.name}},
        "resourceGroups": groups,
    }
    if team.cohort:
        spec["cohortName"] = team.cohort
    checks = [{"name": admission_check_name(pool), "onFlavors": [pool.name]} for pool in queued_pools(args.gpu_pools)]
    if checks:
        spec["admissionChecksStrategy"] = {"admissionChecks": checks}
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": team.name}, "spec": spec}


def local_queue(team: TeamConfig) -> dict[str, Any]:
    """Named `default`: Kueue queues TrainJobs, RayJobs and RayClusters without a queue label here."""
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": LOCAL_QUEUE, "namespace": team.name},
        "spec": {"clusterQueue": team.name},
    }


def network_policies(team: TeamConfig) -> list[dict[str, Any]]:
    """Allow the namespace itself and the platform's namespaces; everything else is denied."""
    def policy(name: str, sources: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": team.name},
            "spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [{"from": sources}]},
        }

    return [
        policy("allow-same-namespace", [{"podSelector": {}}]),
        policy(
            "allow-platform-namespaces",
            [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}} for ns in PLATFORM_NAMESPACES],
        ),
    ]


def _ray_start_params() -> dict[str, str]:
    return {key: str(port) for key, port in RAY_PORTS.items()} | {"max-worker-port": str(RAY_WORKER_PORTS[-1])}


def bucket_name(team: TeamConfig, google: GoogleCloud) -> str:
    """The team bucket's name: the stack's, or `<project>-<team>`."""
    assert team.bucket is not None
    return team.bucket.name or naming.team_bucket_name(google.project, team.name)


# The team's PodDefault (Kubeflow's admission webhook, kubeflow.org/v1alpha1; CRD in
# ../shared/crds/kubeflow-dashboard-v2.0.0): pods in the team namespace that carry the label
# POD_DEFAULT_LABEL: "true" get its env, volumes, mounts and annotations. The Jupyter web app
# offers it in the notebook form under `desc` and sets the label on the notebook: its
# "configurations" are the first matchLabels key of each PodDefault (kubeflow/kubeflow
# v1.10.0 components/crud-web-apps/jupyter/backend/apps/common/routes/get.py and
# form.py set_notebook_configurations). A TrainJob gets the same by putting the label on its
# pod templates (examples/deepspeed_t5.py). The webhook rejects a pod whose own env or
# annotations conflict with the PodDefault's (kubeflow/dashboard components/poddefaults-webhooks/main.go
# safeToApplyPodDefaultsOnPod), so Ray's own pods never carry the label: KubeRay sets their
# RAY_ADDRESS itself (ray-project/kuberay v1.7.0 ray-operator/controllers/ray/common/pod.go).
POD_DEFAULT = TEAM_POD_DEFAULT
POD_DEFAULT_LABEL = TEAM_POD_DEFAULT
BUCKET_VOLUME = "team-bucket"
BUCKET_MOUNT_PATH = "/mnt/team-bucket"
# GKE's GCS Fuse CSI driver (GoogleCloudPlatform/gcs-fuse-csi-driver at 5fcdc04a, v1.24):
# the pod annotation that makes its webhook inject the gcsfuse sidecar (pkg/webhook/
# mutatingwebhook.go GcsFuseVolumeEnableAnnotation), the CSI ephemeral volume's driver and
# its volumeAttributes bucketName and mountOptions (pkg/csi_driver/utils.go). Its webhook runs
# after Kubeflow's PodDefaults webhook has added the annotation, as their configurations' names
# sort (components/kubeflow.py poddefaults_webhook_before_gcs_fuse).
GCS_FUSE_DRIVER = "gcsfuse.csi.storage.gke.io"
GCS_FUSE_ANNOTATION = "gke-gcsfuse/volumes"
# Files owned by uid 1000, the notebooks' jovyan and the MPI runtimes' mpiuser, group 100
# (the notebooks' fsGroup, users); directories without objects of their own listed too.
BUCKET_MOUNT_OPTIONS = "implicit-dirs,uid=1000,gid=100"
# With an Istio sidecar (notebooks), the driver's docs/istio.md: hold the application until
# the proxy runs, and leave the metadata server (Workload Identity tokens) outside the mesh.
ISTIO_GCS_FUSE_ANNOTATIONS = {
    "proxy.istio.io/config": '{ "holdApplicationUntilProxyStarts": true }',
    "traffic.sidecar.istio.io/excludeOutboundIPRanges": "169.254.169.254/32",
}
# KubeRay's head Service `<cluster>-head-svc` with its default ports (ray-project/kuberay
# v1.7.0 ray-operator/controllers/ray/common/service.go getDefaultPorts: client 10001,
# dashboard 8265, serve 8000; the head container names no ports, so these are the defaults).


def ray_head_host(team: TeamConfig) -> str:
    assert team.ray is not None
    return f"{team.ray.name}-head-svc.{team.name}.svc.cluster.local"


# Ray token authentication, as KubeRay v1.7.0 sets it up for `spec.authOptions.mode: token`
# (ray-operator/controllers/ray/raycluster_controller.go reconcileAuthSecret, createAuthSecret;
# common/pod.go SetContainerTokenAuthEnvVars; utils/constant.go): the operator creates a Secret
# named after the cluster (utils.CheckName, which keeps a name of at most 50 characters that
# starts with a letter as it is: the schema's ShortName), owned by the RayCluster, with a random
# token under `auth_token`, and gives the Ray containers RAY_AUTH_MODE=token and RAY_AUTH_TOKEN
# from it. Ray (>= 2.52) then refuses requests without the token on GCS, the raylets, the Ray
# client server, the dashboard and the agents; Serve's HTTP proxy is not guarded (ray 2.58.0
# serve/_private/proxy.py checks no token). The token never passes through Pulumi: it is made in
# the cluster, and everything else reads it from that Secret.
RAY_AUTH_MODE_ENV = "RAY_AUTH_MODE"
RAY_AUTH_TOKEN_ENV = "RAY_AUTH_TOKEN"
RAY_AUTH_TOKEN_KEY = "auth_token"


def ray_auth_secret(team: TeamConfig) -> str:
    """The Secret KubeRay makes for the team cluster's token: the cluster's own name."""
    assert team.ray is not None
    return team.ray.name


def ray_token_env(team: TeamConfig) -> list[dict[str, Any]]:
    """What a client of the team cluster needs, as KubeRay gives it to the Ray containers: the
    mode (the Ray SDK sends the token only when it is `token`) and the token from the Secret."""
    ref = {"name": ray_auth_secret(team), "key": RAY_AUTH_TOKEN_KEY}
    return [
        {"name": RAY_AUTH_MODE_ENV, "value": "token"},
        {"name": RAY_AUTH_TOKEN_ENV, "valueFrom": {"secretKeyRef": ref}},
    ]


# The gateway's way into a token-guarded dashboard. Every request the Kubeflow gateway passes on
# carries `Authorization: Bearer <Dex token>` (kubeflow/manifests 26.03.1-rc.2 common/oauth2-proxy:
# oauth2-proxy `set_authorization_header`, the dex-jwt RequestAuthentication `forwardOriginalToken:
# true`), and Ray reads that header first, then X-Ray-Authorization, then its cookie (ray 2.58.0
# _private/authentication/http_token_authentication.py get_token_auth_middleware): the Dex token
# would be refused. The dashboard's own sign-in (POST /api/authenticate with the Ray token as a
# bearer) cannot pass the gateway either, whose JWT check refuses a bearer that is not a Dex token.
# So a proxy on the head answers the gateway only (access.ray_dashboard_proxy_policy): it drops
# the Dex token and sends the cluster's token as X-Ray-Authorization, which Ray documents "for
# proxies and KubeRay", read from the Secret into its environment and put into its configuration
# when it starts (the nginx image's 20-envsubst-on-templates.sh, only the variables
# NGINX_ENVSUBST_FILTER matches). No Kubernetes object but the Secret holds the token; the
# VirtualService cannot add a header without writing its value into the route. Who may do what
# stays the gateway's and the mesh's (viewers GET only, components/access.py).
RAY_DASHBOARD_AUTH_PROXY = "dashboard-auth"
RAY_DASHBOARD_AUTH_PROXY_TEMPLATE = f"""# The Kubeflow gateway's way into the Ray dashboard (mlplatform components/profiles.py).
map $http_upgrade $connection_upgrade {{
    default upgrade;
    '' close;
}}
server {{
    listen {RAY_DASHBOARD_AUTH_PROXY_PORT};
    # Ray accepts job packages of up to 100 MiB (its DASHBOARD_CLIENT_MAX_SIZE).
    client_max_body_size 100m;
    location / {{
        proxy_pass http://127.0.0.1:{RAY_DASHBOARD_PORT};
        proxy_http_version 1.1;
        proxy_set_header Host $host;
        proxy_set_header Authorization "";
        proxy_set_header X-Ray-Authorization "Bearer ${{{RAY_AUTH_TOKEN_ENV}}}";
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $connection_upgrade;
        proxy_buffering off;
        proxy_request_buffering off;
        proxy_read_timeout 1h;
    }}
}}
"""
RAY_DASHBOARD_AUTH_PROXY_RESOURCES = {"requests": {"cpu": "50m", "memory": "32Mi"}, "limits": {"cpu": "500m", "memory": "128Mi"}}
# nginx's image renders /etc/nginx/templates/<file>.template into /etc/nginx/conf.d/<file>,
# where its nginx.conf includes every *.conf inside `http {}`: default.conf replaces its welcome page.
NGINX_TEMPLATES = "/etc/nginx/templates"
NGINX_TEMPLATE_FILE = "default.conf.template"


def ray_dashboard_auth_proxy(team: TeamConfig) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The head pod's token proxy container, its configuration (no secret in it) and the Service
    the gateway's dashboard route goes to (KubeRay's head Service lists only the Ray container's ports)."""
    assert team.ray is not None
    ns, name = team.name, team.ray.name
    config = f"{name}-{RAY_DASHBOARD_AUTH_PROXY}"
    container = {
        "name": RAY_DASHBOARD_AUTH_PROXY,
        "image": image(RAY_DASHBOARD_AUTH_PROXY_IMAGE),
        "env": [
            ray_token_env(team)[1],
            {"name": "NGINX_ENVSUBST_FILTER", "value": f"^{RAY_AUTH_TOKEN_ENV}$"},
        ],
        "ports": [{"name": "dash-auth", "containerPort": RAY_DASHBOARD_AUTH_PROXY_PORT}],
        "readinessProbe": {"tcpSocket": {"port": RAY_DASHBOARD_AUTH_PROXY_PORT}},
        "resources": RAY_DASHBOARD_AUTH_PROXY_RESOURCES,
        "volumeMounts": [{"name": config, "mountPath": NGINX_TEMPLATES, "readOnly": True}],
    }
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": config, "namespace": ns},
        "data": {NGINX_TEMPLATE_FILE: RAY_DASHBOARD_AUTH_PROXY_TEMPLATE},
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": config, "namespace": ns},
        "spec": {
            # KubeRay v1.7.0 labels the head pod so (utils/constant.go RayClusterLabelKey, RayNodeTypeLabelKey).
            "selector": {"ray.io/cluster": name, "ray.io/node-type": "head"},
            "ports": [
                {"name": "http-dash-auth", "port": RAY_DASHBOARD_AUTH_PROXY_PORT, "targetPort": RAY_DASHBOARD_AUTH_PROXY_PORT, "appProtocol": "http"}
            ],
        },
    }
    return container, config_map, service


def pod_default(args: TeamArgs) -> dict[str, Any] | None:
    """The team's PodDefault: where its Ray cluster is (the Jobs API and dashboard, Serve) and
    its token, read from the Secret KubeRay made (the Ray SDK and CLI send it), and, on GKE, its
    bucket mounted through GCS Fuse at BUCKET_MOUNT_PATH, the pod running as default-editor;
    None for a team with neither."""
    team, google = args.team, args.google
    env: list[dict[str, Any]] = []
    spec: dict[str, Any] = {}
    said = []
    if team.ray:
        host = ray_head_host(team)
        jobs_api = f"http://{host}:{RAY_DASHBOARD_PORT}"
        # The Jobs API, not Ray Client: ray 2.58.0 marks `ray://` deprecated (client_builder.py
        # ClientBuilder). The job CLI and SDK and the state API take their server from RAY_ADDRESS
        # (dashboard/utils.py get_address_for_submission_client), and `ray.init()` in a notebook
        # refuses an http address with Ray's own message (client_builder.py
        # _get_builder_from_address) rather than start a Ray of its own there.
        env += [
            {"name": "RAY_ADDRESS", "value": jobs_api},
            {"name": "RAY_DASHBOARD_ADDRESS", "value": jobs_api},
            {"name": "RAY_SERVE_ADDRESS", "value": f"http://{host}:{RAY_SERVE_PORT}"},
            *ray_token_env(team),
        ]
        said.append(f"Ray cluster {team.ray.name} (RAY_ADDRESS, its token)")
    if team.bucket and google:
        bucket = bucket_name(team, google)
        env.append({"name": "TEAM_BUCKET", "value": bucket})
        if google.gcs_fuse:
            env.append({"name": "TEAM_BUCKET_PATH", "value": BUCKET_MOUNT_PATH})
            spec["annotations"] = {GCS_FUSE_ANNOTATION: "true", **ISTIO_GCS_FUSE_ANNOTATIONS}
            spec["volumes"] = [
                {
                    "name": BUCKET_VOLUME,
                    "csi": {
                        "driver": GCS_FUSE_DRIVER,
                        "volumeAttributes": {"bucketName": bucket, "mountOptions": BUCKET_MOUNT_OPTIONS},
                    },
                }
            ]
            spec["volumeMounts"] = [{"name": BUCKET_VOLUME, "mountPath": BUCKET_MOUNT_PATH}]
            # The driver mounts as the pod's service account (Workload Identity): default-editor's
            # Google account administers the bucket. Notebooks run as it already; a TrainJob's
            # pods would otherwise run as `default`.
            spec["serviceAccountName"] = EDITOR_SA
            said.append(f"bucket gs://{bucket} at {BUCKET_MOUNT_PATH}")
        else:
            said.append(f"bucket gs://{bucket} (TEAM_BUCKET)")
    if args.pipelines:
        token = pipeline_token_access()
        env += token.env
        spec["volumes"] = [*spec.get("volumes", []), *token.volumes]
        spec["volumeMounts"] = [*spec.get("volumeMounts", []), *token.volume_mounts]
        said.append("Kubeflow Pipelines (kfp.Client(), its token)")
    if not env:
        return None
    return {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "PodDefault",
        "metadata": {"name": POD_DEFAULT, "namespace": team.name},
        "spec": {
            "desc": f"Team {team.name}: " + " and ".join(said),
            "selector": {"matchLabels": {POD_DEFAULT_LABEL: "true"}},
            "env": env,
            **spec,
        },
    }


def ray_objects(args: TeamArgs) -> list[dict[str, Any]]:
    """RayCluster with token authentication (KubeRay `authOptions`), its headless Service (the
    ports Istio must know), the head's token proxy (its configuration, its Service and the
    policy that lets only the gateway reach it), the head-access policies and the routes:
    the dashboard under /ray/<namespace>/<cluster>/, Serve under /ray-serve/<namespace>/<cluster>/.

    The RayCluster is a Kueue *elastic job* in the team's `default` LocalQueue: admitted
    against the team's quota, and still autoscaled in-tree between minWorkers and
    maxWorkers. Kueue v0.19.2 rejects a Kueue-managed RayCluster with
    `enableInTreeAutoscaling` unless it is elastic ("a kueue-managed RayCluster can use
    autoscaling only as an elastic job: enable the ElasticJobsViaWorkloadSlices feature
    gate and set the "kueue.x-k8s.io/elastic-job": "true" annotation",
    pkg/controller/jobs/raycluster/raycluster_webhook.go validateCreate), and a RayCluster
    in a namespace with a `default` LocalQueue is Kueue-managed (LocalQueueDefaulting).
    ElasticJobsViaWorkloadSlices is beta and on by default since 0.18
    (pkg/features/kube_features.go), so no gate is set in the manager config; the
    RayCluster task page (site/content/en/docs/tasks/run/rayclusters.md) documents this
    set-up and test/e2e/singlecluster/extended/kuberay_autoscaling_test.go exercises it.
    Each scale-up is admitted as a new workload slice on the flavor first assigned.

    Why not the alternatives: a fixed-size cluster would hold maxWorkers GPUs of quota
    while idle; leaving the cluster outside Kueue would let it take GPUs past the team's
    queues (Kueue has no per-object opt-out once a `default` LocalQueue exists).

    We write what Kueue's webhook would otherwise add itself, so every `pulumi up` sends
    the same object and Kueue's update validation keeps passing: the queue label (set
    explicitly, so the cluster is managed even if it is created before its LocalQueue) and
    the elastic-job scheduling gate on the head and every worker group (validateElasticJob
    requires it; Kueue lifts it from each pod once its slice is admitted). Without Kueue in
    the stack none of this is written: nothing would lift the gate."""
    team, ray = args.team, args.team.ray
    if ray is None:
        return []
    pool = next((p for p in args.gpu_pools if p.name == ray.pool), None)
    ns, name = team.name, ray.name
    # One image set with the notebook image (facts/image_set.py): Ray Client needs the same
    # Ray and Python minor on both ends.
    ray_image = image(RAY_GPU_IMAGE if pool else RAY_IMAGE)
    worker_resources: dict[str, Any] = {"cpu": ray.worker_cpu, "memory": ray.worker_memory}
    if pool:
        worker_resources[GPU_RESOURCE] = str(pool.gpus_per_node)
    worker_pod: dict[str, Any] = {
        "serviceAccountName": EDITOR_SA,
        "containers": [
            {
                "name": "ray-worker",
                "image": ray_image,
                "env": [dict(RAY_SERVE_HOST_ENV)],
                "resources": {"requests": worker_resources, "limits": worker_resources},
            }
        ],
    }
    if pool:
        worker_pod["nodeSelector"] = pool_selector(pool)
        worker_pod["tolerations"] = [t.toleration() for t in pool_taints(pool)]
    head_resources = {"cpu": "2", "memory": "8Gi"}
    auth_proxy, auth_proxy_config, auth_proxy_service = ray_dashboard_auth_proxy(team)
    head_pod: dict[str, Any] = {
        "serviceAccountName": EDITOR_SA,
        "containers": [
            {
                "name": "ray-head",
                "image": image(RAY_IMAGE),
                "env": [dict(RAY_SERVE_HOST_ENV)],
                "resources": {"requests": head_resources, "limits": head_resources},
            },
            auth_proxy,  # KubeRay treats the first container as Ray's (utils/constant.go RayContainerIndex)
        ],
        "volumes": [{"name": auth_proxy_config["metadata"]["name"], "configMap": {"name": auth_proxy_config["metadata"]["name"]}}],
    }
    metadata: dict[str, Any] = {"name": name, "namespace": ns}
    if args.kueue:
        metadata["labels"] = {KUEUE_QUEUE_LABEL: LOCAL_QUEUE}
        metadata["annotations"] = {KUEUE_ELASTIC_JOB_ANNOTATION: "true"}
        for pod in (head_pod, worker_pod):
            pod["schedulingGates"] = [{"name": KUEUE_ELASTIC_JOB_GATE}]
    cluster = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": metadata,
        "spec": {
            "rayVersion": RAY.version,
            # KubeRay makes the token's Secret and hands it to Ray (see ray_auth_secret).
            "authOptions": {"mode": "token"},
            "enableInTreeAutoscaling": True,
            "autoscalerOptions": {"upscalingMode": "Default", "idleTimeoutSeconds": 300},
            "headGroupSpec": {
                "rayStartParams": _ray_start_params() | {"dashboard-host": "0.0.0.0", "num-gpus": "0"},
                "template": {"spec": head_pod},
            },
            "workerGroupSpecs": [
                {
                    "groupName": pool.name if pool else "cpu",
                    "replicas": ray.min_workers,
                    "minReplicas": ray.min_workers,
                    "maxReplicas": ray.max_workers,
                    "rayStartParams": _ray_start_params(),
                    "template": {"spec": worker_pod},
                }
            ],
        },
    }
    grpc_ports = [
        {"name": key.removesuffix("-port")[:15], "port": port, "appProtocol": "grpc"}
        for key, port in RAY_PORTS.items()
        if port < 7000
    ]
    http_ports = [
        {"name": "dash-agent", "port": RAY_PORTS["dashboard-agent-listen-port"], "appProtocol": "http"},
        {"name": "metrics", "port": RAY_PORTS["metrics-export-port"], "appProtocol": "http"},
    ]
    worker_ports = [{"name": f"p{p}", "port": p, "appProtocol": "grpc"} for p in RAY_WORKER_PORTS]
    headless = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": f"{name}-headless", "namespace": ns, "labels": {"ray.io/headless-worker-svc": name}},
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": {"ray.io/cluster": name},
            "ports": grpc_ports + http_ports + worker_ports,
        },
    }
    intra = {
        "apiVersion": "security.istio.io/v1",
        "kind": "AuthorizationPolicy",
        "metadata": {"name": f"{name}-ray-internal", "namespace": ns},
        "spec": {
            "action": "ALLOW",
            "selector": {"matchLabels": {"ray.io/cluster": name}},
            "rules": [{"from": [{"source": {"principals": [f"cluster.local/ns/{ns}/sa/{EDITOR_SA}"]}}]}],
        },
    }
    def route(suffix: str, prefix: str, host: str, port: int) -> dict[str, Any]:
        """`prefix` on the Kubeflow gateway -> `port` of the Service `host`: the head's token proxy
        for the dashboard, KubeRay's head Service (<cluster>-head-svc, its serve port) for Serve."""
        return {
            "apiVersion": "networking.istio.io/v1",
            "kind": "VirtualService",
            "metadata": {"name": f"{name}-{suffix}", "namespace": ns},
            "spec": {
                "gateways": [KUBEFLOW_GATEWAY],
                "hosts": ["*"],
                "http": [
                    {
                        "match": [{"uri": {"prefix": prefix}}],
                        "rewrite": {"uri": "/"},
                        "route": [{"destination": {"host": host, "port": {"number": port}}}],
                    }
                ],
            },
        }

    head_service = f"{name}-head-svc.{ns}.svc.cluster.local"
    proxy_service = f"{auth_proxy_service['metadata']['name']}.{ns}.svc.cluster.local"
    dashboard = route("dashboard", ray_dashboard_path(team.name, ray.name), proxy_service, RAY_DASHBOARD_AUTH_PROXY_PORT)
    serve = route("serve", ray_serve_path(team.name, ray.name), head_service, RAY_SERVE_PORT)
    return [
        auth_proxy_config,
        cluster,
        headless,
        auth_proxy_service,
        intra,
        ray_policy(ns, name, writers(team)),
        ray_dashboard_proxy_policy(ns, name),
        dashboard,
        serve,
    ]


def team_objects(
    args: TeamArgs, gcp_service_account: pulumi.Input[str] | None = None, pipeline_keys: ObjectStoreKeys | None = None
) -> list[dict[str, Any]]:
    """Every Kubernetes object of one team, in apply order; `pipeline_keys`: its key pair of the
    in-cluster object store, when its pipelines keep their artifacts there."""
    team = args.team
    objects = [namespace(team)]
    if gcp_service_account:
        objects.append(editor_service_account(team, gcp_service_account))
    objects += [profile(team), limit_range(team)]
    for person in team.contributors:
        objects += contributor_objects(team, person.email, person.role)
    objects += team_policies(team.name, writers(team))
    objects += network_policies(team)
    objects += [cluster_queue(args), local_queue(team)]
    if args.kueue and kueue_guard.gpu_runtimes(args.gpu_pools):
        objects.append(kueue_guard.binding(team.name))
    objects += ray_objects(args)
    if args.pipelines:
        objects += pipeline_objects(team.name, args.pipelines, pipeline_keys)
    defaults = pod_default(args)
    if defaults:
        objects.append(defaults)
    return objects


POD_DEFAULTS = "kubeflowPodDefaults"
"""Ready key of Kubeflow's PodDefaults webhook tree (its CRD), set by the composition."""
# What each kind of team object waits for, by component key (components/platform.py):
# only the CRD or controller it really needs. Namespaces, RBAC and NetworkPolicies are
# built-in kinds and wait for nothing but the namespace (a RoleBinding may name its
# ClusterRole before Kubeflow creates it). A RayCluster also waits for Kueue when Kueue is
# installed: Kueue's webhooks must be serving when it is created, to suspend it until it is
# admitted and to check it is a valid elastic job (see ray_objects).
OBJECT_NEEDS: dict[str, tuple[str, ...]] = {
    "Profile": ("kubeflow",),
    "AuthorizationPolicy": ("istio",),
    "VirtualService": ("istio",),
    "ClusterQueue": ("kueue",),
    "LocalQueue": ("kueue",),
    "RayCluster": ("kuberay", "kueue"),
    "PodDefault": (POD_DEFAULTS,),
}


# What Pulumi must never delete on its own (docs/teams.md, "Removing a team"): a config
# mistake that drops a team then stops `pulumi up` at these instead of deleting them. The
# namespace holds the notebook volumes (PVCs the Jupyter web app made, which Pulumi never
# knew) and is also kept on a deliberate removal, for its last step to be a person's; the
# Profile holds the team's access and quota, and is recreated as it was if the team is re-added.
KEPT: dict[str, dict[str, Any]] = {
    "Namespace": {"protect": True, "retain_on_delete": True},
    "Profile": {"protect": True},
}


def resource_name(team: TeamConfig, obj: dict[str, Any]) -> str:
    """The Pulumi name of a team object: `<namespace>/<name>`, the name pulumi-kubernetes
    gives each object of a yaml/v2 ConfigFile (pulumi-kubernetes v4.32.0
    provider/pkg/provider/yaml/v2/yaml.go, `register`); cluster-scoped objects (the namespace, Profile, ClusterQueue) under the
    team's name. Kubernetes names never contain '/' (Pulumi names may hold any string), and
    the Pulumi type carries the kind, so two team objects share a URN only when they are
    one Kubernetes object."""
    meta = obj["metadata"]
    return f"{meta.get('namespace', team.name)}/{meta['name']}"


def legacy_resource_name(team: TeamConfig, obj: dict[str, Any]) -> str:
    """The name team objects had before `resource_name`; `<team>-<kind>-<name>` let team
    `a` with Ray cluster `x-service-y` and team `a-service-x` with Ray cluster `y` share one."""
    if obj["kind"] == "Namespace":
        return f"{team.name}-namespace"
    return f"{team.name}-{obj['kind'].lower()}-{obj['metadata']['name']}"


class OldNames:
    """The rename to `resource_name` keeps live objects: each object gets its old name as an
    alias, so the engine finds it in the state (drop once every stack has run `pulumi up`
    with the new names). Each old name goes to the first object that had it: where two had
    one, the engine stopped at the second, so only the first can be in a stack's state, and
    two aliases of one URN would stop the engine again (error 2008)."""

    def __init__(self) -> None:
        self._given: set[tuple[str, str, str]] = set()

    def aliases(self, team: TeamConfig, obj: dict[str, Any]) -> list[pulumi.Input[pulumi.Alias | str]]:
        old = (obj["apiVersion"], obj["kind"], legacy_resource_name(team, obj))
        if old in self._given:
            return []
        self._given.add(old)
        return [pulumi.Alias(name=old[2])]


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
        ready: dict[str, pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
        old_names: OldNames | None = None,
        pipeline_keys: ObjectStoreKeys | None = None,
    ):
        """`ready`: component key -> the resource that is done when that component is ready;
        `old_names`: shared by all teams of the stack (see OldNames); `pipeline_keys`: see team_objects."""
        super().__init__(name, cluster, opts)
        team = args.team
        old_names = old_names or OldNames()
        gsa_email = self._google_identity(team, args.google, cluster.image_registry) if args.google else None
        ns, *rest = team_objects(args, gcp_service_account=gsa_email, pipeline_keys=pipeline_keys)
        namespace_resource = apply_manifest(
            resource_name(team, ns), ns, self.child(aliases=old_names.aliases(team, ns), **KEPT["Namespace"])
        )
        editor: list[pulumi.Resource] = []
        for obj in rest:
            needs = [ready[k] for k in OBJECT_NEEDS.get(obj["kind"], ()) if k in ready]
            if obj["kind"] == "Profile":
                needs += editor  # our default-editor exists before the controller looks for it
            created = apply_manifest(
                resource_name(team, obj),
                obj,
                self.child([*needs, namespace_resource], aliases=old_names.aliases(team, obj), **KEPT.get(obj["kind"], {})),
            )
            if obj["kind"] == "ServiceAccount":
                editor.append(created)
        self.namespace = pulumi.Output.from_input(team.name)
        self.google_service_account = gsa_email
        self.register_outputs({"namespace": self.namespace, "googleServiceAccount": gsa_email})

    def _google_identity(
        self, team: TeamConfig, google: GoogleCloud, registry: ImageRegistry | None
    ) -> pulumi.Output[str]:
        """A Google service account for the namespace's default-editor (Workload Identity),
        the team bucket with that account as object admin, and with `pushImages` write
        access to the stack's image repository (pulling needs nothing: the nodes pull)."""
        account = workload_identity_account(
            f"{team.name}-gsa",
            google.project or "",
            team_service_account_id(team),
            f"Kubeflow profile {team.name} (default-editor)",
            (team.name, EDITOR_SA),
            self.child(),
        )
        if team.bucket:
            bucket = gcp.storage.Bucket(
                f"{team.name}-bucket",
                gcp.storage.BucketArgs(
                    project=google.project,
                    name=bucket_name(team, google),
                    location=(team.bucket.location or google.region).upper(),
                    uniform_bucket_level_access=True,
                    public_access_prevention="enforced",
                    force_destroy=False,
                ),
                # Datasets and checkpoints outlive the team: never deleted by Pulumi, even on a
                # deliberate removal (force_destroy off: GCS would refuse a non-empty one anyway).
                opts=self.child(protect=True, retain_on_delete=True),
            )
            gcp.storage.BucketIAMMember(
                f"{team.name}-bucket-admin",
                gcp.storage.BucketIAMMemberArgs(
                    bucket=bucket.name,
                    role="roles/storage.objectAdmin",
                    member=account.email.apply(lambda e: f"serviceAccount:{e}"),
                ),
                opts=self.child(),
            )
        if team.push_images:
            if registry is None:  # stacks/rules.py team-push-images-needs-registry refuses such a stack
                raise ValueError(f"team {team.name} pushes images but the stack has no image registry")
            registry.member(
                f"{team.name}-image-pusher",
                WRITER,
                account.email.apply(lambda e: f"serviceAccount:{e}"),
                opts=self.child(),
            )
        return account.email


def install_teams(
    teams: Sequence[TeamArgs],
    cluster: Cluster,
    ready: dict[str, pulumi.Resource],
    pipeline_keys: Mapping[str, ObjectStoreKeys] | None = None,
) -> list[Team]:
    """Every team of the stack, each named after it (see Team for `ready`; `pipeline_keys`: per
    team, its key pair of the in-cluster object store, components/pipelines.py)."""
    old_names = OldNames()
    keys = pipeline_keys or {}
    return [Team(args.team.name, args, cluster, ready, old_names=old_names, pipeline_keys=keys.get(args.team.name)) for args in teams]
