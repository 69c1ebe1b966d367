"""Teams as code: the exact objects per team, KFAM naming, queues and quotas, and the
access matrix evaluated against Kubeflow's own aggregated roles."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from args.teams import team_args
from components.profiles import (
    GATEWAY_PRINCIPAL,
    contributor_objects,
    kfam_binding_name,
    team_objects,
    team_service_account_id,
)
from facts.image_set import dockerfile, notebook_end, problems
from facts.versions import RAY, RAY_GPU_IMAGE, RAY_IMAGE, image
from stacks.config import load, validate
from stacks.schema import Role, Team
from tests.conftest import base_gke, base_kind, with_changes
from tests.support import crds, rbac
from tests.support.validation import validate as validate_object
from tooling.plan import Plan
from tooling.render import authored_objects

TEAM = {
    "name": "vision",
    "owner": "lead@acme.com",
    "contributors": [{"email": "Ana.Li@acme.com", "role": "edit"}, {"email": "bo@acme.com", "role": "view"}],
    "quota": {"gpus": {"nvidia-l4": 8}, "cpu": "64", "memory": "256Gi"},
}


@pytest.mark.parametrize(
    ("email", "role", "name"),
    [
        # kubeflow/dashboard components/access-management/kfam/bindings_test.go
        ("lalith.vaka@zq.msds.kp.org", "edit", "user-lalith-vaka-zq-msds-kp-org-clusterrole-edit"),
        ("397401@zq.msds.kp.org", "edit", "user-397401-zq-msds-kp-org-clusterrole-edit"),
        ("Jane.Doe@Example.com", "view", "user-jane-doe-example-com-clusterrole-view"),
        ("a+b__c@x.io", "edit", "user-a-b-c-x-io-clusterrole-edit"),
    ],
)
def test_kfam_binding_names(email: str, role: str, name: str) -> None:
    assert kfam_binding_name(email, role) == name


def test_contributor_objects_as_kfam_writes_them() -> None:
    team = Team.model_validate(TEAM)
    binding, policy = contributor_objects(team, "Ana.Li@acme.com", Role.EDIT)
    assert binding == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": "user-ana-li-acme-com-clusterrole-edit",
            "namespace": "vision",
            "annotations": {"user": "Ana.Li@acme.com", "role": "edit"},
        },
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kubeflow-edit"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "Ana.Li@acme.com"}],
    }
    assert policy["metadata"] == binding["metadata"]
    assert policy["apiVersion"] == "security.istio.io/v1beta1"
    assert "action" not in policy["spec"] and "selector" not in policy["spec"]
    (rule,) = policy["spec"]["rules"]
    assert rule["from"][0]["source"]["principals"][0] == GATEWAY_PRINCIPAL
    assert rule["when"] == [{"key": "request.headers[kubeflow-userid]", "values": ["Ana.Li@acme.com"]}]
    viewer, _ = contributor_objects(team, "bo@acme.com", Role.VIEW)
    assert viewer["roleRef"]["name"] == "kubeflow-view"
    assert viewer["metadata"]["annotations"] == {"user": "bo@acme.com", "role": "view"}


def _objects(raw: dict[str, Any], team: str = "vision") -> dict[tuple[str, str], dict[str, Any]]:
    config = validate(raw, "test")
    found = next(t for t in config.teams if t.name == team)
    return {(o["kind"], o["metadata"]["name"]): o for o in team_objects(team_args(config, found), "team-vision@p.iam.gserviceaccount.com")}


def test_profile_owner_quota_and_workload_identity() -> None:
    objects = _objects(with_changes(base_gke(), {"mlplatform:teams": [TEAM]}))
    profile = objects[("Profile", "vision")]
    assert profile["apiVersion"] == "kubeflow.org/v1"
    assert profile["spec"]["owner"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "lead@acme.com"}
    assert profile["spec"]["resourceQuotaSpec"]["hard"] == {"cpu": "64", "memory": "256Gi", "requests.nvidia.com/gpu": "8"}
    # No WorkloadIdentity plugin (the controller would call IAM itself): we annotate the KSA.
    assert "plugins" not in profile["spec"]
    account = objects[("ServiceAccount", "default-editor")]
    assert account["metadata"] == {
        "name": "default-editor",
        "namespace": "vision",
        "annotations": {"iam.gke.io/gcp-service-account": "team-vision@p.iam.gserviceaccount.com"},
    }
    namespace = objects[("Namespace", "vision")]
    assert namespace["metadata"]["annotations"] == {"owner": "lead@acme.com"}
    assert namespace["metadata"]["labels"]["istio-injection"] == "enabled"


def test_cluster_queue_quotas_per_pool_flavor_and_cohort() -> None:
    team = {**TEAM, "cohort": "research"}
    pools = [
        {"name": "l4-spot", "accelerator": "nvidia-l4", "machineType": "g2-standard-24", "max": 2, "provisioning": "spot"},
        {"name": "l4", "accelerator": "nvidia-l4", "machineType": "g2-standard-24", "max": 2},
    ]
    raw = with_changes(
        base_gke(),
        {
            "mlplatform:teams": [team],
            "mlplatform:cluster.gpuPools": pools,
            "mlplatform:cluster.autoprovisioning.limits.nvidia-l4": 24,  # 2 pools x 2 nodes x 2 GPUs x 3 zones
            # and with the system pool they take 360 vCPUs and 1440 GiB
            "mlplatform:cluster.autoprovisioning.limits.cpu": 512,
            "mlplatform:cluster.autoprovisioning.limits.memory": 2048,
        },
    )
    queue = _objects(raw)[("ClusterQueue", "vision")]["spec"]
    assert queue["cohortName"] == "research"
    assert queue["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "vision"}}
    cpu_group, gpu_group = queue["resourceGroups"]
    assert cpu_group["coveredResources"] == ["cpu", "memory"]
    assert cpu_group["flavors"] == [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "64"}, {"name": "memory", "nominalQuota": "256Gi"}]}]
    assert gpu_group["coveredResources"] == ["nvidia.com/gpu"]
    assert gpu_group["flavors"] == [
        {"name": "l4-spot", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]},
        {"name": "l4", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 0}]},
    ]


def test_default_local_queue_and_network_isolation() -> None:
    objects = _objects(with_changes(base_kind(), {"mlplatform:teams": [{**TEAM, "quota": {}}]}))
    assert objects[("LocalQueue", "default")]["spec"] == {"clusterQueue": "vision"}
    assert objects[("LocalQueue", "default")]["metadata"]["namespace"] == "vision"
    same = objects[("NetworkPolicy", "allow-same-namespace")]["spec"]
    assert same["ingress"] == [{"from": [{"podSelector": {}}]}]
    platform = objects[("NetworkPolicy", "allow-platform-namespaces")]["spec"]["ingress"][0]["from"]
    namespaces = {s["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] for s in platform}
    assert {"istio-system", "kubeflow"} <= namespaces and "default" not in namespaces


def test_ray_cluster_ports_pinned_for_istio_and_dashboard_route() -> None:
    team = {**TEAM, "ray": {"pool": "l4", "maxWorkers": 3}}
    objects = _objects(with_changes(base_gke(), {"mlplatform:teams": [team]}))
    cluster = objects[("RayCluster", "ray")]["spec"]
    assert cluster["enableInTreeAutoscaling"] is True
    head, (worker,) = cluster["headGroupSpec"], cluster["workerGroupSpecs"]
    for params in (head["rayStartParams"], worker["rayStartParams"]):
        assert params["node-manager-port"] == "6380" and params["max-worker-port"] == "10012"
    pod = worker["template"]["spec"]
    assert pod["serviceAccountName"] == "default-editor"
    assert pod["nodeSelector"]["cloud.google.com/gke-accelerator"] == "nvidia-l4"
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}]
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "2"
    assert worker["maxReplicas"] == 3
    headless = objects[("Service", "ray-headless")]["spec"]
    ports = {p["port"] for p in headless["ports"]}
    assert {6380, 6381, 6382, 6383, 52365, 8080} | set(range(10002, 10013)) == ports
    route = objects[("VirtualService", "ray-dashboard")]["spec"]
    assert route["http"][0]["match"] == [{"uri": {"prefix": "/ray/vision/ray/"}}]
    # The dashboard through the head's token proxy, Serve straight to KubeRay's head Service.
    assert route["http"][0]["route"][0]["destination"] == {"host": "ray-dashboard-auth.vision.svc.cluster.local", "port": {"number": 8266}}
    serve = objects[("VirtualService", "ray-serve")]["spec"]
    assert serve["http"][0]["route"][0]["destination"] == {"host": "ray-head-svc.vision.svc.cluster.local", "port": {"number": 8000}}
    internal = objects[("AuthorizationPolicy", "ray-ray-internal")]["spec"]
    assert internal["rules"][0]["from"][0]["source"]["principals"] == ["cluster.local/ns/vision/sa/default-editor"]


def test_pod_default_gives_notebooks_the_ray_cluster_and_the_mounted_bucket() -> None:
    team = {**TEAM, "ray": {"name": "ray"}, "bucket": {}}
    defaults = _objects(with_changes(base_gke(), {"mlplatform:teams": [team]}))[("PodDefault", "team-resources")]
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
    spec = _objects(with_changes(base_kind(), {"mlplatform:teams": [team]}))[("PodDefault", "team-resources")]["spec"]
    assert [e["name"] for e in spec["env"]] == ["RAY_ADDRESS", "RAY_DASHBOARD_ADDRESS", "RAY_SERVE_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN"]
    assert spec["env"][0]["value"] == "http://rc-head-svc.vision.svc.cluster.local:8265"
    assert spec["env"][4]["valueFrom"]["secretKeyRef"] == {"name": "rc", "key": "auth_token"}
    assert "volumes" not in spec and "annotations" not in spec


def test_pod_default_without_gcs_fuse_names_the_bucket_only() -> None:
    raw = with_changes(base_gke(), {"mlplatform:cluster.gcsFuse": False, "mlplatform:teams": [{**TEAM, "bucket": {"name": "b-1"}}]})
    spec = _objects(raw)[("PodDefault", "team-resources")]["spec"]
    assert spec["env"] == [{"name": "TEAM_BUCKET", "value": "b-1"}] and "volumes" not in spec


def test_no_pod_default_for_a_team_without_ray_or_bucket() -> None:
    assert not [k for k in _objects(with_changes(base_gke(), {"mlplatform:teams": [TEAM]})) if k[0] == "PodDefault"]


def test_pod_default_waits_for_its_crd(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("dev")
    defaults = plan.one("kubernetes:kubeflow.org/v1alpha1:PodDefault", "nlp/team-resources")
    assert plan.one("kubernetes:kustomize/v2:Directory", "poddefaults-webhook").urn in defaults.dependencies


def test_every_team_namespace_gets_container_defaults() -> None:
    # A plain TrainJob (no resources_per_node) passes the profile's ResourceQuota and is counted.
    limits = _objects(with_changes(base_gke(), {"mlplatform:teams": [TEAM]}))[("LimitRange", "container-defaults")]
    assert limits["metadata"]["namespace"] == "vision"
    assert limits["spec"]["limits"] == [
        {"type": "Container", "defaultRequest": {"cpu": "1", "memory": "2Gi"}, "default": {"cpu": "4", "memory": "16Gi"}}
    ]


def test_container_defaults_come_from_the_stack() -> None:
    team = {**TEAM, "containerDefaults": {"cpu": "500m", "memory": "1Gi", "cpuLimit": 2, "memoryLimit": "4Gi"}}
    (limit,) = _objects(with_changes(base_kind(), {"mlplatform:teams": [team], "mlplatform:teams.0.quota.gpus": {}}))[
        ("LimitRange", "container-defaults")
    ]["spec"]["limits"]
    assert limit["defaultRequest"] == {"cpu": "500m", "memory": "1Gi"} and limit["default"] == {"cpu": "2", "memory": "4Gi"}


@pytest.mark.parametrize("pool", [None, "l4"])
def test_ray_cluster_runs_the_notebook_image_sets_ray_and_python(pool: str | None) -> None:
    team = {**TEAM, "ray": {"pool": pool} if pool else {}}
    cluster = _objects(with_changes(base_gke(), {"mlplatform:teams": [team]}))[("RayCluster", "ray")]["spec"]
    head = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]["image"]
    worker = cluster["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["image"]
    assert head == image(RAY_IMAGE)
    assert worker == image(RAY_GPU_IMAGE if pool else RAY_IMAGE)
    notebook = notebook_end(dockerfile())
    assert cluster["rayVersion"] == notebook.ray == RAY.version
    assert problems(dockerfile(), [p for p in (RAY_IMAGE, RAY_GPU_IMAGE) if image(p) in (head, worker)]) == []


# Kueue v0.19.2 (kubernetes-sigs/kueue): the queue label (pkg/controller/constants/constants.go),
# the elastic-job annotation (pkg/constants/constants.go ElasticJobAnnotation = "true" opt-in)
# and scheduling gate (apis/kueue/v1beta2/constants.go ElasticJobSchedulingGate) that
# pkg/controller/jobs/raycluster/raycluster_webhook.go requires of an autoscaled RayCluster.
ELASTIC_GATE = [{"name": "kueue.x-k8s.io/elastic-job"}]


def test_ray_cluster_is_an_elastic_kueue_job_in_the_default_queue() -> None:
    team = {**TEAM, "ray": {"pool": "l4", "maxWorkers": 3}}
    cluster = _objects(with_changes(base_gke(), {"mlplatform:teams": [team]}))[("RayCluster", "ray")]
    assert cluster["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "default"}
    assert cluster["metadata"]["annotations"] == {"kueue.x-k8s.io/elastic-job": "true"}
    assert cluster["spec"]["enableInTreeAutoscaling"] is True  # allowed: the cluster is elastic
    assert cluster["spec"]["headGroupSpec"]["template"]["spec"]["schedulingGates"] == ELASTIC_GATE
    (worker,) = cluster["spec"]["workerGroupSpecs"]
    assert worker["template"]["spec"]["schedulingGates"] == ELASTIC_GATE
    assert worker["groupName"] != "head"  # Kueue reserves the name for the head PodSet


def test_ray_cluster_without_kueue_carries_no_kueue_gate() -> None:
    """A stack with teams always has Kueue (rule teams-need-kueue); the Args alone say without."""
    config = validate(with_changes(base_gke(), {"mlplatform:teams": [{**TEAM, "ray": {"pool": "l4"}}]}), "test")
    args = dataclasses.replace(team_args(config, config.teams[0]), kueue=False)
    cluster = next(o for o in team_objects(args) if o["kind"] == "RayCluster")
    assert "labels" not in cluster["metadata"] and "annotations" not in cluster["metadata"]
    pods = [cluster["spec"]["headGroupSpec"]["template"]["spec"], cluster["spec"]["workerGroupSpecs"][0]["template"]["spec"]]
    assert all("schedulingGates" not in pod for pod in pods)  # nothing would lift it


def test_ray_cluster_waits_for_kueue_and_kuberay(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    (cluster,) = [r for r in plan.of_type("kubernetes:ray.io/v1:RayCluster") if r.inputs["metadata"]["namespace"] == "nlp"]
    assert plan.one("kubernetes:helm.sh/v4:Chart", "kueue").urn in cluster.dependencies
    assert plan.one("kubernetes:helm.sh/v4:Chart", "kuberay-operator").urn in cluster.dependencies


def test_google_service_account_ids_are_length_safe() -> None:
    assert team_service_account_id(Team.model_validate({**TEAM, "name": "nlp"})) == "team-nlp"
    long = Team.model_validate({**TEAM, "name": "a" * 40})
    other = Team.model_validate({**TEAM, "name": "a" * 39 + "b"})
    assert 6 <= len(team_service_account_id(long)) <= 30
    assert team_service_account_id(long) != team_service_account_id(other)


def test_gke_team_identity_and_bucket(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    plan = plan_of(with_changes(base_gke(), {"mlplatform:teams": [{**TEAM, "bucket": {}}]}))
    member = plan.one("gcp:serviceaccount/iAMMember:IAMMember", "vision-gsa-workload-identity").inputs
    assert member["role"] == "roles/iam.workloadIdentityUser"
    assert member["member"] == "serviceAccount:acme-test.svc.id.goog[vision/default-editor]"
    bucket = plan.one("gcp:storage/bucket:Bucket", "vision-bucket").inputs
    assert bucket["name"] == "acme-test-vision" and bucket["uniformBucketLevelAccess"] is True
    admin = plan.one("gcp:storage/bucketIAMMember:BucketIAMMember", "vision-bucket-admin").inputs
    assert admin["role"] == "roles/storage.objectAdmin"
    assert admin["member"] == "serviceAccount:team-vision@acme-test.iam.gserviceaccount.com"
    account = plan.one("kubernetes:core/v1:ServiceAccount", "vision/default-editor").inputs
    assert account["metadata"]["annotations"]["iam.gke.io/gcp-service-account"] == "team-vision@acme-test.iam.gserviceaccount.com"


def test_team_objects_wait_for_kubeflow_kueue_and_their_namespace(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    queue = plan.one("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "vision/default")
    assert plan.one("kubernetes:core/v1:Namespace", "vision/vision").urn in queue.dependencies
    assert plan.one("kubernetes:helm.sh/v4:Chart", "kueue").urn in queue.dependencies
    profile = plan.one("kubernetes:kubeflow.org/v1:Profile", "vision/vision")
    assert plan.one("kubernetes:kustomize/v2:Directory", "profiles-kfam").urn in profile.dependencies


@pytest.mark.parametrize("stack", ["kind", "dev"])
def test_shipped_stacks_have_three_teams_one_with_ray(stack: str) -> None:
    config = load(stack)
    assert len(config.teams) >= 3
    assert any(t.ray for t in config.teams)
    if stack == "dev":
        assert any(t.bucket for t in config.teams)


@pytest.mark.skipif(not crds.available(), reason=crds.MISSING)
def test_rendered_team_objects_validate(shipped_plan: Callable[[str], Plan]) -> None:
    objects = [o for o in authored_objects(shipped_plan("dev")) if o["metadata"].get("namespace") in ("vision", "nlp", "research") or o["kind"] in ("Profile", "ClusterQueue")]
    kinds = {o["kind"] for o in objects}
    assert {"Profile", "RoleBinding", "AuthorizationPolicy", "ClusterQueue", "LocalQueue", "NetworkPolicy", "RayCluster", "Service", "VirtualService"} <= kinds
    for obj in objects:
        assert validate_object(obj) == [], f"{obj['kind']} {obj['metadata']['name']}"


@pytest.mark.skipif(not rbac.UPSTREAM_ROLES.is_dir(), reason="needs ../shared/upstream/kubeflow-roles beside the repo")
def test_access_matrix_against_kubeflow_roles(shipped_plan: Callable[[str], Plan]) -> None:
    objects = authored_objects(shipped_plan("kind"))
    # The profile controller binds the owner as `namespaceAdmin` to kubeflow-admin, and the
    # namespace's default-editor service account to kubeflow-edit (kubeflow/dashboard
    # components/profile-controller/controllers/profile_controller.go).
    controller_bindings = [
        {
            "kind": "RoleBinding",
            "metadata": {"name": "namespaceAdmin", "namespace": "vision"},
            "roleRef": {"kind": "ClusterRole", "name": "kubeflow-admin"},
            "subjects": [{"kind": "User", "name": "lead@example.com"}],
        },
        {
            "kind": "RoleBinding",
            "metadata": {"name": "default-editor", "namespace": "vision"},
            "roleRef": {"kind": "ClusterRole", "name": "kubeflow-edit"},
            "subjects": [{"kind": "ServiceAccount", "name": "default-editor", "namespace": "vision"}],
        },
    ]
    cluster = rbac.Authorizer(rbac.upstream_cluster_roles() + objects + controller_bindings)

    def can(who: str | rbac.UserInfo, verb: str, group: str, resource: str, namespace: str = "vision") -> bool:
        subject = rbac.user(who) if isinstance(who, str) else who
        return cluster.allows(subject, rbac.Request(verb, group, resource, namespace=namespace))

    for user in ("lead@example.com", "ana@example.com"):  # owner, editor
        assert can(user, "create", "trainer.kubeflow.org", "trainjobs")
        assert can(user, "create", "ray.io", "rayclusters")
    assert can("lead@example.com", "create", "rbac.authorization.k8s.io", "rolebindings")  # the owner shares
    assert not can("ana@example.com", "create", "rbac.authorization.k8s.io", "rolebindings")
    assert can("bo@example.com", "get", "trainer.kubeflow.org", "trainjobs")  # viewer reads
    assert not can("bo@example.com", "create", "trainer.kubeflow.org", "trainjobs")
    assert not can("bo@example.com", "create", "ray.io", "rayclusters")
    for outsider in ("kim@example.com", "raj@example.com"):  # other teams' people
        assert not can(outsider, "get", "trainer.kubeflow.org", "trainjobs")
        assert not can(outsider, "create", "ray.io", "rayclusters")
        # ... but, signed in, they see which runtimes exist (cluster-scoped, for the SDK)
        assert can(outsider, "list", "trainer.kubeflow.org", "clustertrainingruntimes", namespace="")
    assert not can(rbac.UserInfo("anonymous"), "list", "trainer.kubeflow.org", "clustertrainingruntimes", namespace="")
    # ana is an editor in vision but only a viewer in nlp
    assert not can("ana@example.com", "create", "trainer.kubeflow.org", "trainjobs", namespace="nlp")
    assert can("ana@example.com", "list", "trainer.kubeflow.org", "trainjobs", namespace="nlp")
    # notebooks run as default-editor: they may start TrainJobs in their own namespace only
    editor = rbac.service_account("vision", "default-editor")
    assert can(editor, "create", "trainer.kubeflow.org", "trainjobs")
    assert not can(editor, "create", "trainer.kubeflow.org", "trainjobs", namespace="nlp")
    assert not can(rbac.service_account("nlp", "default-editor"), "create", "trainer.kubeflow.org", "trainjobs")


def test_team_objects_are_named_namespace_slash_name(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    team = plan.one("mlplatform:components:Team", "vision")
    objects = [r for r in plan.children(team) if r.type.startswith("kubernetes:")]
    assert objects
    for r in objects:
        meta = r.inputs["metadata"]
        assert r.name == f"{meta.get('namespace', 'vision')}/{meta['name']}", r.type


def test_renamed_team_objects_keep_their_old_names_as_aliases(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    team = "urn:pulumi:kind::mlplatform::mlplatform:components:Team"
    expected = {
        ("kubernetes:core/v1:Namespace", "vision/vision"): "vision-namespace",
        ("kubernetes:kubeflow.org/v1:Profile", "vision/vision"): "vision-profile-vision",
        ("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "vision/default"): "vision-localqueue-default",
        ("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "vision/user-ana-example-com-clusterrole-edit"): (
            "vision-rolebinding-user-ana-example-com-clusterrole-edit"
        ),
    }
    for (type_, name), old in expected.items():
        assert f"{team}${type_}::{old}" in plan.one(type_, name).aliases


def test_contributors_kfam_names_alike_with_different_roles_get_both_bindings(
    plan_of: Callable[[dict[str, Any]], Plan],
) -> None:
    people = [{"email": "ana.b@x.com", "role": "edit"}, {"email": "ana-b@x.com", "role": "view"}]
    plan = plan_of(with_changes(base_kind(), {"mlplatform:teams": [{**TEAM, "contributors": people, "quota": {}}]}))
    bindings = {r.name for r in plan.of_type("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding") if r.name.startswith("vision/")}
    assert bindings == {"vision/user-ana-b-x-com-clusterrole-edit", "vision/user-ana-b-x-com-clusterrole-view"}


def test_every_team_ray_cluster_authenticates_with_a_token_no_object_but_the_secret_holds() -> None:
    team = {**TEAM, "ray": {"name": "rc"}, "quota": {}}
    objects = _objects(with_changes(base_kind(), {"mlplatform:teams": [team]}))
    cluster = objects[("RayCluster", "rc")]["spec"]
    assert cluster["authOptions"] == {"mode": "token"}  # KubeRay makes the Secret `rc`
    assert tuple(int(p) for p in cluster["rayVersion"].split(".")) >= (2, 52, 0)  # KubeRay's minimum for tokens
    assert not [o for o in objects.values() if o["kind"] == "Secret"]
    # No token, nor anything that looks like one, in what we write: only references to the Secret.
    assert "auth_token" not in json.dumps([o for o in objects.values() if o["kind"] == "ConfigMap"])
    (proxy,) = [c for c in cluster["headGroupSpec"]["template"]["spec"]["containers"] if c["name"] == "dashboard-auth"]
    assert cluster["headGroupSpec"]["template"]["spec"]["containers"][0]["name"] == "ray-head"  # KubeRay's Ray container
    assert {"name": "RAY_AUTH_TOKEN", "valueFrom": {"secretKeyRef": {"name": "rc", "key": "auth_token"}}} in proxy["env"]


def test_the_dashboard_proxy_swaps_the_gateways_token_for_the_clusters() -> None:
    """Ray reads Authorization first (ray 2.58.0 http_token_authentication.py): the proxy must
    clear the gateway's Dex token and send the cluster's as X-Ray-Authorization, substituting
    only its own variable (nginx's $host and friends stay nginx's)."""
    import re
    import shutil
    import subprocess

    team = {**TEAM, "ray": {"name": "rc"}, "quota": {}}
    objects = _objects(with_changes(base_kind(), {"mlplatform:teams": [team]}))
    template = objects[("ConfigMap", "rc-dashboard-auth")]["data"]["default.conf.template"]
    assert 'proxy_set_header Authorization "";' in template
    assert 'proxy_set_header X-Ray-Authorization "Bearer ${RAY_AUTH_TOKEN}";' in template
    assert "proxy_pass http://127.0.0.1:8265;" in template and "listen 8266;" in template
    (proxy,) = [c for c in objects[("RayCluster", "rc")]["spec"]["headGroupSpec"]["template"]["spec"]["containers"] if c["name"] == "dashboard-auth"]
    env = {e["name"]: e for e in proxy["env"]}
    substituted = [v for v in re.findall(r"\$\{?(\w+)", template) if re.search(env["NGINX_ENVSUBST_FILTER"]["value"], v)]
    assert substituted == ["RAY_AUTH_TOKEN"]  # $http_upgrade, $host, $connection_upgrade left alone
    # What the image's entrypoint does with it (GNU envsubst, the same SHELL-FORMAT argument).
    if shutil.which("envsubst"):  # gettext's, as in the image
        envsubst = subprocess.run(["envsubst", "${RAY_AUTH_TOKEN}"], input=template, capture_output=True, text=True, env={"RAY_AUTH_TOKEN": "t0k"}, check=True)
        assert 'X-Ray-Authorization "Bearer t0k";' in envsubst.stdout and "$http_upgrade" in envsubst.stdout
    service = objects[("Service", "rc-dashboard-auth")]["spec"]
    assert service["selector"] == {"ray.io/cluster": "rc", "ray.io/node-type": "head"}
    assert service["ports"][0]["port"] == 8266
    gateway_only = objects[("AuthorizationPolicy", "rc-ray-dashboard-gateway-only")]["spec"]
    assert gateway_only["action"] == "DENY"
    assert gateway_only["rules"] == [
        {"from": [{"source": {"notPrincipals": ["cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account"]}}], "to": [{"operation": {"ports": ["8266"]}}]}
    ]
