"""The team's PodDefault: what Kubeflow's PodDefaults webhook adds to the team's labelled pods
(notebooks, TrainJobs that ask): where the team's Ray cluster is and its token, and on GKE the
team bucket, mounted through GCS Fuse."""

from __future__ import annotations

from typing import Any

from components.access import RAY_DASHBOARD_PORT, RAY_SERVE_PORT
from components.profiles.args import GoogleCloud, TeamArgs
from components.profiles.namespace import EDITOR_SA
from components.profiles.ray import ray_head_host, ray_token_env
from components.team_pipelines import pipeline_token_access
from facts import naming
from facts.naming import TEAM_POD_DEFAULT
from stackmodel.schema import Team as TeamConfig


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

