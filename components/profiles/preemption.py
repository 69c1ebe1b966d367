"""What makes a team's work preemption-safe and gives it its priority, through Kubeflow's PodDefaults
(kubeflow.org/v1alpha1, applied by its webhook to the namespace's pods that carry the selector's
label; the webhook rejects a pod whose own labels, env or volumes conflict with one: kubeflow/
dashboard v2.0.0 components/poddefaults-webhooks/main.go safeToApplyPodDefaultsOnPod):

- `team-checkpoints`, selected by the label every runtime's pods carry (runtimes/catalog.py): the
  team's checkpoint store at /mnt/checkpoints and CHECKPOINT_DIR, the TrainJob's own folder there
  (facts/checkpoints.py). On GKE the team bucket's `checkpoints/` folder through Cloud Storage
  FUSE (the CSI ephemeral volume as components/profiles/pod_default.py mounts the bucket, with
  the `aiml-checkpointing` profile's settings), the pod running as default-editor, whose Google
  account administers the bucket; a GKE team without a bucket gets none (its jobs keep no
  checkpoints: docs/teams.md). On kind a PersistentVolumeClaim of the namespace, kind's default
  StorageClass (a local volume: the job's pods all run on its node).
- `interactive-priority`, preselected in the notebook form (components/kubeflow.py): a notebook's
  pod gets the `interactive` class, which Kueue reads from a GPU notebook's pod (its pod
  integration, facts/priorities.py). The form lists every PodDefault of the namespace by the first
  key of its selector's matchLabels (kubeflow/notebooks v1.11.0 crud-web-apps/jupyter/backend/apps/
  common/routes/get.py get_poddefaults), so it has one.
"""

from __future__ import annotations

from typing import Any

from components.profiles.args import TeamArgs
from components.profiles.namespace import EDITOR_SA
from components.profiles.pod_default import BUCKET_MOUNT_OPTIONS, GCS_FUSE_ANNOTATION, GCS_FUSE_DRIVER, bucket_name
from facts.checkpoints import (
    CHECKPOINT_BUCKET_FOLDER,
    CHECKPOINT_DIR_ENV,
    CHECKPOINT_LABEL,
    CHECKPOINT_MOUNT_OPTIONS,
    CHECKPOINT_MOUNT_PATH,
    TRAINJOB_NAME_ENV,
)
from facts.priorities import NOTEBOOK_PRIORITY, NOTEBOOK_PRIORITY_POD_DEFAULT, PRIORITY_LABEL

CHECKPOINT_VOLUME = "team-checkpoints"
CHECKPOINT_CLAIM = "checkpoints"
"""kind: the namespace's PersistentVolumeClaim for checkpoints."""
CHECKPOINT_CLAIM_SIZE = "20Gi"


def checkpoint_mount_options() -> str:
    """The checkpoint volume's mount options: the bucket's folder, the team bucket's file owners
    (pod_default.py), and Cloud Storage FUSE's checkpointing settings, each once (both set implicit-dirs)."""
    options = [f"only-dir={CHECKPOINT_BUCKET_FOLDER}", *BUCKET_MOUNT_OPTIONS.split(","), *CHECKPOINT_MOUNT_OPTIONS]
    return ",".join(dict.fromkeys(options))


def checkpoint_store(args: TeamArgs) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """(the pod volume, the PersistentVolumeClaim to create or None) of the team's checkpoint store;
    None where it has none (a GKE team without a bucket or without the GCS Fuse driver)."""
    team, google = args.team, args.google
    if google is None:
        claim = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": CHECKPOINT_CLAIM, "namespace": team.name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": CHECKPOINT_CLAIM_SIZE}}},
        }
        return {"name": CHECKPOINT_VOLUME, "persistentVolumeClaim": {"claimName": CHECKPOINT_CLAIM}}, claim
    if team.bucket is None or not google.gcs_fuse:
        return None
    attributes = {"bucketName": bucket_name(team, google), "mountOptions": checkpoint_mount_options()}
    return {"name": CHECKPOINT_VOLUME, "csi": {"driver": GCS_FUSE_DRIVER, "volumeAttributes": attributes}}, None


def checkpoint_objects(args: TeamArgs) -> list[dict[str, Any]]:
    """The team's checkpoint PodDefault and, on kind, its claim; nothing without a store."""
    store = checkpoint_store(args)
    if store is None:
        return []
    volume, claim = store
    spec: dict[str, Any] = {
        "desc": f"Team {args.team.name}: a TrainJob's checkpoints at {CHECKPOINT_DIR_ENV} (the runtimes ask for it)",
        "selector": {"matchLabels": {CHECKPOINT_LABEL: "true"}},
        "env": [{"name": CHECKPOINT_DIR_ENV, "value": f"{CHECKPOINT_MOUNT_PATH}/$({TRAINJOB_NAME_ENV})"}],
        "volumes": [volume],
        "volumeMounts": [{"name": CHECKPOINT_VOLUME, "mountPath": CHECKPOINT_MOUNT_PATH}],
    }
    if "csi" in volume:
        # As the team bucket's mount: the driver's webhook injects its sidecar for the annotation and
        # mounts as the pod's service account (Workload Identity).
        spec["annotations"] = {GCS_FUSE_ANNOTATION: "true"}
        spec["serviceAccountName"] = EDITOR_SA
    pod_default = {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "PodDefault",
        "metadata": {"name": CHECKPOINT_VOLUME, "namespace": args.team.name},
        "spec": spec,
    }
    return [pod_default] if claim is None else [claim, pod_default]


def priority_pod_default(args: TeamArgs) -> dict[str, Any] | None:
    """Notebooks' class, with Kueue (nothing reads it without)."""
    if not args.kueue:
        return None
    return {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "PodDefault",
        "metadata": {"name": NOTEBOOK_PRIORITY_POD_DEFAULT, "namespace": args.team.name},
        "spec": {
            "desc": "Interactive priority: a GPU notebook goes before the team's batch jobs in its queue",
            "selector": {"matchLabels": {NOTEBOOK_PRIORITY_POD_DEFAULT: "true"}},
            "labels": {PRIORITY_LABEL: NOTEBOOK_PRIORITY.name},
        },
    }
