"""The team's PodDefault (components/profiles/pod_default.py): the Ray cluster's address and token,
the bucket and its GCS Fuse mount."""

from __future__ import annotations

from tests.conftest import base_gke, base_kind, with_changes
from tests.support import crds
from tests.support.teams import TEAM, objects_of
from tests.support.validation import validate as validate_object


def test_pod_default_gives_notebooks_the_ray_cluster_and_the_mounted_bucket() -> None:
    team = {**TEAM, "ray": {"name": "ray"}, "bucket": {}}
    defaults = objects_of(with_changes(base_gke(), {"mlplatform:teams": [team]}))[("PodDefault", "team-resources")]
    spec = defaults["spec"]
    assert defaults["metadata"]["namespace"] == "vision"
    assert spec["selector"] == {"matchLabels": {"team-resources": "true"}}
    assert spec["desc"] == "Team vision: Ray cluster ray (RAY_ADDRESS, its token) and bucket gs://acme-test-vision at /mnt/team-bucket"
    head = "ray-head-svc.vision.svc.cluster.local"
    assert spec["env"] == [
        {"name": "RAY_ADDRESS", "value": f"http://{head}:8265"},  # the Jobs API: Ray Client is deprecated
        {"name": "RAY_DASHBOARD_ADDRESS", "value": f"http://{head}:8265"},
        {"name": "RAY_SERVE_ADDRESS", "value": f"http://{head}:8000"},
        {"name": "RAY_AUTH_MODE", "value": "token"},
        # KubeRay v1.7.0's Secret: the cluster's name, key auth_token; never the token itself.
        {"name": "RAY_AUTH_TOKEN", "valueFrom": {"secretKeyRef": {"name": "ray", "key": "auth_token"}}},
        {"name": "TEAM_BUCKET", "value": "acme-test-vision"},
        {"name": "TEAM_BUCKET_PATH", "value": "/mnt/team-bucket"},
    ]
    assert spec["annotations"]["gke-gcsfuse/volumes"] == "true"
    assert spec["annotations"]["traffic.sidecar.istio.io/excludeOutboundIPRanges"] == "169.254.169.254/32"
    (volume,) = spec["volumes"]
    assert volume == {
        "name": "team-bucket",
        "csi": {
            "driver": "gcsfuse.csi.storage.gke.io",
            "volumeAttributes": {"bucketName": "acme-test-vision", "mountOptions": "implicit-dirs,uid=1000,gid=100"},
        },
    }
    assert spec["volumeMounts"] == [{"name": "team-bucket", "mountPath": "/mnt/team-bucket"}]
    assert spec["serviceAccountName"] == "default-editor"  # Workload Identity to the bucket
    if crds.available():
        assert validate_object(defaults) == []


def test_pod_default_on_kind_carries_the_ray_cluster_only() -> None:
    team = {**TEAM, "ray": {"name": "rc"}, "quota": {}}
    spec = objects_of(with_changes(base_kind(), {"mlplatform:teams": [team]}))[("PodDefault", "team-resources")]["spec"]
    assert [e["name"] for e in spec["env"]] == ["RAY_ADDRESS", "RAY_DASHBOARD_ADDRESS", "RAY_SERVE_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN"]
    assert spec["env"][0]["value"] == "http://rc-head-svc.vision.svc.cluster.local:8265"
    assert spec["env"][4]["valueFrom"]["secretKeyRef"] == {"name": "rc", "key": "auth_token"}
    assert "volumes" not in spec and "annotations" not in spec


def test_pod_default_without_gcs_fuse_names_the_bucket_only() -> None:
    raw = with_changes(base_gke(), {"mlplatform:cluster.gcsFuse": False, "mlplatform:teams": [{**TEAM, "bucket": {"name": "b-1"}}]})
    spec = objects_of(raw)[("PodDefault", "team-resources")]["spec"]
    assert spec["env"] == [{"name": "TEAM_BUCKET", "value": "b-1"}] and "volumes" not in spec


def test_no_team_resources_pod_default_for_a_team_without_ray_or_bucket() -> None:
    """Nor a checkpoint store on GKE without a bucket; the notebooks' priority class all the same."""
    found = [k for k in objects_of(with_changes(base_gke(), {"mlplatform:teams": [TEAM]})) if k[0] == "PodDefault"]
    assert found == [("PodDefault", "interactive-priority")]



# --- preemption-safe jobs and the notebooks' priority (components/profiles/preemption.py) ----------


def test_a_gke_teams_trainjobs_checkpoint_to_their_own_folder_of_the_bucket_with_the_checkpointing_settings() -> None:
    objects = objects_of(with_changes(base_gke(), {"mlplatform:teams": [{**TEAM, "bucket": {}}]}))
    spec = objects[("PodDefault", "team-checkpoints")]["spec"]
    assert spec["selector"] == {"matchLabels": {"team-checkpoints": "true"}}  # what every runtime's pods carry
    # Appended after the runtime's own TRAINJOB_NAME (the webhook appends), so Kubernetes expands it.
    assert spec["env"] == [{"name": "CHECKPOINT_DIR", "value": "/mnt/checkpoints/$(TRAINJOB_NAME)"}]
    (volume,) = spec["volumes"]
    assert volume["csi"]["driver"] == "gcsfuse.csi.storage.gke.io"
    assert volume["csi"]["volumeAttributes"]["bucketName"] == "acme-test-vision"
    # Cloud Storage FUSE's aiml-checkpointing profile, written out (gcsfuse cfg/params.yaml).
    assert volume["csi"]["volumeAttributes"]["mountOptions"].split(",") == [
        "only-dir=checkpoints", "implicit-dirs", "uid=1000", "gid=100",
        "metadata-cache:ttl-secs:-1", "metadata-cache:stat-cache-max-size-mb:-1",
        "metadata-cache:type-cache-max-size-mb:-1", "metadata-cache:negative-ttl-secs:0", "file-system:rename-dir-limit:200000",
    ]
    assert spec["volumeMounts"] == [{"name": "team-checkpoints", "mountPath": "/mnt/checkpoints"}]
    assert spec["annotations"] == {"gke-gcsfuse/volumes": "true"} and spec["serviceAccountName"] == "default-editor"
    if crds.available():
        assert validate_object(objects[("PodDefault", "team-checkpoints")]) == []


def test_a_kind_teams_checkpoints_are_a_kept_claim_of_its_namespace() -> None:
    objects = objects_of(with_changes(base_kind(), {"mlplatform:teams": [{**TEAM, "quota": {}}]}))
    claim = objects[("PersistentVolumeClaim", "checkpoints")]
    assert claim["metadata"]["namespace"] == "vision" and claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    spec = objects[("PodDefault", "team-checkpoints")]["spec"]
    assert spec["volumes"] == [{"name": "team-checkpoints", "persistentVolumeClaim": {"claimName": "checkpoints"}}]
    assert "serviceAccountName" not in spec and "annotations" not in spec


def test_a_gke_team_without_a_bucket_has_no_checkpoint_store() -> None:
    assert ("PodDefault", "team-checkpoints") not in objects_of(with_changes(base_gke(), {"mlplatform:teams": [TEAM]}))


def test_notebooks_get_the_interactive_class_through_a_pod_default_the_form_preselects() -> None:
    defaults = objects_of(with_changes(base_gke(), {"mlplatform:teams": [TEAM]}))[("PodDefault", "interactive-priority")]
    assert defaults["spec"]["selector"] == {"matchLabels": {"interactive-priority": "true"}}
    assert defaults["spec"]["labels"] == {"kueue.x-k8s.io/priority-class": "interactive"}
    if crds.available():
        assert validate_object(defaults) == []
