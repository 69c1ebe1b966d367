"""Where a training job keeps its checkpoints, so that a preempted TrainJob resumes: a folder of its
own, named after the TrainJob, in the team's store, and the variables that find it. Imports nothing.

- On GKE the store is the team bucket's `checkpoints/` folder, mounted by GKE's Cloud Storage FUSE
  CSI driver with the settings of Cloud Storage FUSE's `aiml-checkpointing` profile written out
  (CHECKPOINT_MOUNT_OPTIONS). The profile itself cannot be named in a CSI ephemeral volume: the
  driver drops a `profile` mount option unless its profiles feature is on for the node's sidecar
  (GoogleCloudPlatform/gcs-fuse-csi-driver at 5fcdc04a pkg/csi_driver/utils.go:781-798
  generateDisallowedFlagsMap; GKE offers the profile through its `gcsfusecsi-checkpointing`
  StorageClass, deploy/base/setup/storageclass.yaml, a PersistentVolume per bucket).
- On kind the store is a PersistentVolumeClaim of the team namespace (kind's default StorageClass,
  a local volume of one node: the job's pods then all run on that node).
- A TrainJob's JobSet is named after it (kubeflow/trainer v2.3.0 pkg/runtime/framework/plugins/
  jobset/jobset.go:413) and JobSet labels every pod with its name (JOBSET_NAME_LABEL), which the
  runtimes' containers read through the Downward API into TRAINJOB_NAME_ENV; the team's
  checkpoint PodDefault appends CHECKPOINT_DIR_ENV after the container's own variables (Kubeflow's
  PodDefault webhook appends, kubeflow/dashboard v2.0.0 components/poddefaults-webhooks/main.go
  mergeEnv), so Kubernetes expands `$(TRAINJOB_NAME)` in it (dependent environment variables refer
  to those listed before them).
"""

from __future__ import annotations

CHECKPOINT_DIR_ENV = "CHECKPOINT_DIR"
"""The job's own checkpoint folder: `<mount>/<trainjob name>`; the same for every pod of the job and
for every run of it (a TrainJob Kueue preempted and admits again keeps its name)."""
TRAINJOB_NAME_ENV = "TRAINJOB_NAME"
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
"""JobSet v0.12.0 api/jobset/v1alpha2/jobset_types.go JobSetNameKey, on every pod of a JobSet."""
CHECKPOINT_LABEL = "team-checkpoints"
"""On a pod template (the runtimes set it): the team's checkpoint PodDefault mounts the store."""
CHECKPOINT_MOUNT_PATH = "/mnt/checkpoints"
CHECKPOINT_BUCKET_FOLDER = "checkpoints"
"""The bucket's folder the checkpoint volume shows (`only-dir`)."""

CHECKPOINT_MOUNT_OPTIONS = (
    "implicit-dirs",
    "metadata-cache:ttl-secs:-1",
    "metadata-cache:stat-cache-max-size-mb:-1",
    "metadata-cache:type-cache-max-size-mb:-1",
    "metadata-cache:negative-ttl-secs:0",
    "file-system:rename-dir-limit:200000",
)
"""What Cloud Storage FUSE's `aiml-checkpointing` profile sets, as mount options of the CSI volume
(GoogleCloudPlatform/gcsfuse cfg/params.yaml at 0095346c, `optimizations.profiles` entries named
aiml-checkpointing: implicit-dirs true; metadata-cache ttl-secs -1, stat-cache-max-size-mb -1,
type-cache-max-size-mb -1, negative-ttl-secs 0; file-system rename-dir-limit 200000; and
file-cache cache-file-for-range-read true, left out: it only acts with a file cache, which the
volume has none of). `config-path:value` is the CSI driver's form of a config-file field
(cloud.google.com/kubernetes-engine/docs/how-to/cloud-storage-fuse-csi-driver-perf, "Configure
mount options"). Metadata is cached for the life of the mount: right for write-to-new files
(a checkpoint is a new file; a resumed job mounts afresh and lists what is there)."""

TERMINATION_GRACE_SECONDS = 120
"""How long a training pod has between SIGTERM (Kueue preempted its job, a node drains) and
SIGKILL, to write its checkpoint: the runtimes' `terminationGracePeriodSeconds` (Kubernetes'
default is 30). It bounds how long a team waits for GPUs it reclaims: Kueue releases a preempted
TrainJob's quota once the job has no active pods (kueue v0.19.2 pkg/controller/jobframework/
reconciler.go:580-610, TrainJob IsActive)."""
