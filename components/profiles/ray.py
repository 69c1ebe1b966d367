"""A team's RayCluster behind the Kubeflow gateway: the cluster with token authentication
(an elastic Kueue job where Kueue runs), its headless Service, the head's token proxy, the
access policies and the routes; and what a client of it needs (its address, its token).

Upstream facts:
- Ray under Istio: ray-project/ray doc/source/cluster/kubernetes/k8s-ecosystem/istio.md
  (ports pinned on head and workers, headless Service listing them).
- Ray under Kueue (kubernetes-sigs/kueue v0.19.2): see `ray_objects`.
"""

from __future__ import annotations

from typing import Any

from components.access import (
    KUBEFLOW_GATEWAY,
    RAY_DASHBOARD_AUTH_PROXY_PORT,
    RAY_DASHBOARD_PORT,
    RAY_SERVE_PORT,
    ray_dashboard_proxy_policy,
    ray_policy,
)
from components.profiles.args import TeamArgs
from components.profiles.groups import writers
from components.profiles.namespace import EDITOR_SA
from components.profiles.queues import LOCAL_QUEUE
from facts.labels import KUEUE_ELASTIC_JOB_ANNOTATION, KUEUE_ELASTIC_JOB_GATE, KUEUE_QUEUE_LABEL
from facts.naming import ray_dashboard_path, ray_serve_path
from facts.node_labels import GPU_RESOURCE, pool_selector, pool_taints
from facts.priorities import PRIORITY_LABEL, RAY_CLUSTER_PRIORITY
from facts.versions import RAY, RAY_DASHBOARD_AUTH_PROXY_IMAGE, RAY_GPU_IMAGE, RAY_IMAGE, image
from stackmodel.schema import Team as TeamConfig

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


RAY_IDLE_TIMEOUT_SECONDS = 300
"""Ray's autoscaler scales down a worker pod that uses no Ray resources this long (KubeRay
`autoscalerOptions.idleTimeoutSeconds`, read by the autoscaler, not the operator: ray-project/kuberay
ray-operator/apis/ray/v1/raycluster_types.go AutoscalerOptions), down to the group's minReplicas
(minWorkers, 0 by default): idle GPU workers, and their GPUs, go back; with Kueue, as smaller
workload slices (see ray_objects)."""


def _ray_start_params() -> dict[str, str]:
    return {key: str(port) for key, port in RAY_PORTS.items()} | {"max-worker-port": str(RAY_WORKER_PORTS[-1])}


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
# Its first line names where it comes from as first deployed (the module is now the package
# components/profiles/); it is in every live team's ConfigMap, so it stays as written.
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
    head_resources = {"cpu": ray.head_cpu, "memory": ray.head_memory}
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
        # Its Workload's priority: Kueue reads the class from the RayCluster's own label (facts/priorities.py).
        metadata["labels"] = {KUEUE_QUEUE_LABEL: LOCAL_QUEUE, PRIORITY_LABEL: RAY_CLUSTER_PRIORITY.name}
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
            "autoscalerOptions": {"upscalingMode": "Default", "idleTimeoutSeconds": RAY_IDLE_TIMEOUT_SECONDS},
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
        ray_policy(ns, name, writers(args)),
        ray_dashboard_proxy_policy(ns, name),
        dashboard,
        serve,
    ]

