"""End to end on kind: `pulumi up` of the kind stack (with test users and a team), then the
platform as its users meet it, then an ordered `destroy`. Tests run in file order; the
last one tears the platform down and fails if a namespace is left terminating."""

from __future__ import annotations

import subprocess
import urllib.error
from dataclasses import replace

import pytest

from facts.versions import RAY_IMAGE, image
from tests.e2e.access import access_matrix, can_i
from tests.e2e.checks import (
    DEFAULT_QUEUE,
    QUOTA,
    admitted,
    component_crds,
    component_namespaces,
    crds_pending,
    daemonset_pending,
    deployment_pending,
    localqueue_pending,
    owned_by,
    quota_problems,
    rayjob_manifest,
    rayjob_state,
)
from tests.e2e.cluster import GATEWAY, port_forward
from tests.e2e.dex import Browser, LoginFailed, UrllibBrowser, dex_login, workgroup_namespaces
from tests.e2e.session import Platform
from tests.e2e.stack import DOMAIN, Person
from tooling.waiting import wait_for

pytestmark = pytest.mark.e2e

CPU_RUNTIME = "torch-distributed"
"""The CPU variant of torch-distributed (kind has no GPU pools; GPU variants are torch-distributed-<pool>)."""
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE = ("kueue.x-k8s.io", "v1beta2")


def test_component_deployments_and_daemonsets_are_ready(platform: Platform) -> None:
    cluster = platform.cluster
    namespaces = component_namespaces(platform.config.enabled_components())

    def pending() -> list[str]:
        found: list[str | None] = []
        for ns in namespaces:
            deployments = cluster.items(cluster.apps.list_namespaced_deployment(ns))
            daemonsets = cluster.items(cluster.apps.list_namespaced_daemon_set(ns))
            if not deployments and not daemonsets:  # a missing namespace lists nothing, too
                found.append(f"namespace {ns}: no Deployments or DaemonSets")
            found += [deployment_pending(d) for d in deployments] + [daemonset_pending(d) for d in daemonsets]
        return [p for p in found if p]

    wait_for("component Deployments and DaemonSets ready", pending, timeout=900)


def test_crds_are_established(platform: Platform) -> None:
    cluster = platform.cluster
    expected = component_crds(platform.config.enabled_components())
    wait_for(
        "CRDs established",
        lambda: crds_pending(cluster.items(cluster.extensions.list_custom_resource_definition()), expected),
        timeout=300,
    )


def test_each_team_has_its_namespace_quota_and_default_queue(platform: Platform) -> None:
    cluster = platform.cluster

    def pending() -> list[str]:
        found: list[str] = []
        for team in platform.config.teams:
            if cluster.get_or_none(cluster.core.read_namespace, team.name) is None:
                found.append(f"namespace {team.name}: missing")
                continue
            quota = cluster.get_or_none(cluster.core.read_namespaced_resource_quota, QUOTA, team.name)
            found += quota_problems(quota, team.name, team.quota.cpu, team.quota.memory)
            queue = cluster.get_or_none(
                cluster.custom.get_namespaced_custom_object, *KUEUE, team.name, "localqueues", DEFAULT_QUEUE
            )
            problem = localqueue_pending(queue, team.name)
            found += [problem] if problem else []
        return found

    wait_for("team namespaces with quota and default LocalQueue", pending, timeout=600)


def test_access_matrix_follows_team_roles(platform: Platform) -> None:
    """SubjectAccessReviews of the user alone, as the web apps and Pipelines send them: group
    members pass through the bindings the program writes for each of them."""
    checks = access_matrix(platform.config.teams, [p.email for p in platform.people.all()], groups=platform.people.groups())
    cluster = platform.cluster
    # The profile controller and KFAM bind people asynchronously: wait until every answer is right.
    wait_for(
        "SubjectAccessReviews match the access matrix",
        lambda: [str(c) for c in checks if cluster.allowed(c.user, c.namespace, c.verb, c.group, c.resource) != c.allowed],
        timeout=300,
        interval=10,
    )


def test_kubectl_auth_can_i_as_a_group_member_matches_the_matrix(platform: Platform) -> None:
    """`kubectl auth can-i --as <member> --as-group <group>`: each group's member as the matrix
    says; and someone the stack does not list, in the group only by what the authenticator says
    (GKE's Google Groups for RBAC), gets the group's role through its Group binding: kubectl
    follows the group live."""
    groups = platform.people.groups()
    members = {m: g for g, ms in groups.items() for m in ms}
    checks = [c for c in access_matrix(platform.config.teams, list(members), groups=groups) if c.user in members]
    unlisted = [
        (replace(c, user=f"e2e-new-hire@{DOMAIN}"), members[c.user]) for c in checks
    ]  # the same verbs, the same answers, as a person the stack never named
    kubeconfig = str(platform.cluster.kubeconfig)

    def wrong() -> list[str]:
        return [
            f"{check} (--as-group {group})"
            for check, group in [(c, members[c.user]) for c in checks] + unlisted
            if (subprocess.run(can_i(kubeconfig, check, group), check=False).returncode == 0) != check.allowed
        ]

    wait_for("kubectl auth can-i as group members matches the access matrix", wrong, timeout=300, interval=10)


def _sign_in(browser: Browser, base: str, person: Person) -> None:
    def pending() -> list[str]:
        try:
            dex_login(browser, base, person.email, person.password)
        except (LoginFailed, urllib.error.URLError, ConnectionError) as error:
            return [str(error)]
        return []

    # Dex and oauth2-proxy may still be settling right after `up`.
    wait_for(f"{person.email} signs in through Dex", pending, timeout=300, interval=10)


def test_gateway_sign_in_owner_reaches_team_view_outsider_is_denied(platform: Platform) -> None:
    team = platform.config.teams[0].name
    people = platform.people
    with port_forward(platform.cluster.kubeconfig, *GATEWAY) as port:
        base = f"http://127.0.0.1:{port}"
        notebooks = f"{base}/jupyter/api/namespaces/{team}/notebooks"

        owner = UrllibBrowser()
        _sign_in(owner, base, people.owner)

        def owner_sees_team() -> list[str]:
            page = owner.get(f"{base}/api/workgroup/env-info")
            if page.status != 200:
                return [f"env-info answered HTTP {page.status}"]
            roles = workgroup_namespaces(page.body)
            return [] if roles.get(team) == "owner" else [f"the dashboard lists {roles}, not {team} as owner"]

        wait_for("the owner's dashboard lists the team", owner_sees_team, timeout=300, interval=10)
        assert owner.get(f"{base}/").status == 200, "the central dashboard did not load for the owner"
        assert owner.get(notebooks).status == 200, f"the owner cannot list notebooks in {team}"

        outsider = UrllibBrowser()
        _sign_in(outsider, base, people.outsider)
        env_info = outsider.get(f"{base}/api/workgroup/env-info")
        assert env_info.status == 200
        assert team not in workgroup_namespaces(env_info.body), "the outsider's dashboard lists the team"
        denied = outsider.get(notebooks)
        assert denied.status == 403, f"outsider listing notebooks in {team}: HTTP {denied.status} {denied.body[:200]}"


def cpu_allreduce() -> None:
    """Runs in every process of the TrainJob: a gloo all-reduce over all of them, which
    only completes when the processes on both nodes found each other."""
    import os

    import torch
    import torch.distributed as dist

    dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    total = torch.tensor([float(rank)])
    dist.all_reduce(total)
    print(f"rank {rank} of {world}: sum of ranks {total.item()}")
    assert world > int(os.environ["LOCAL_WORLD_SIZE"]), "every process ran on one node"
    assert total.item() == world * (world - 1) / 2, total.item()
    dist.destroy_process_group()


def test_two_node_trainjob_on_cpu_runtime_is_admitted_by_kueue_and_completes(platform: Platform) -> None:
    from kubeflow.trainer import CustomTrainer, KubernetesBackendConfig, TrainerClient

    team = platform.config.teams[0].name
    cluster = platform.cluster
    client = TrainerClient(KubernetesBackendConfig(namespace=team, config_file=str(cluster.kubeconfig)))
    name = client.train(
        runtime=CPU_RUNTIME,
        trainer=CustomTrainer(func=cpu_allreduce, num_nodes=2, resources_per_node={"cpu": 1, "memory": "2Gi"}),
    )
    job = client.wait_for_job_status(name, status={"Complete", "Failed"}, timeout=1800, polling_interval=10)
    logs = "\n".join(client.get_job_logs(name))
    assert job.status == "Complete", f"TrainJob {team}/{name} ended {job.status}:\n{logs}"
    assert "rank 0 of " in logs, f"no all-reduce output from node 0:\n{logs}"

    trainjob = cluster.custom.get_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", team, "trainjobs", name)
    assert (trainjob["metadata"].get("labels") or {}).get(QUEUE_LABEL) == DEFAULT_QUEUE, "Kueue did not queue the TrainJob"
    workloads = [
        w for w in cluster.custom_items(*KUEUE, "workloads", team) if owned_by(w, trainjob["metadata"]["uid"])
    ]
    assert workloads, f"no Kueue Workload for TrainJob {team}/{name}"
    assert all(admitted(w) for w in workloads), f"Kueue did not admit the TrainJob: {[w.get('status') for w in workloads]}"


def test_rayjob_runs_cluster_resources(platform: Platform) -> None:
    team = platform.config.teams[0].name
    cluster = platform.cluster
    name = "e2e-cluster-resources"
    cluster.custom.create_namespaced_custom_object(
        "ray.io", "v1", team, "rayjobs", rayjob_manifest(name, team, image(RAY_IMAGE))
    )

    def pending() -> list[str]:
        rayjob = cluster.custom.get_namespaced_custom_object("ray.io", "v1", team, "rayjobs", name)
        state, detail = rayjob_state(rayjob)
        if state == "failed":
            raise AssertionError(f"RayJob {team}/{name} failed: {detail}")
        return [] if state == "succeeded" else [f"RayJob {team}/{name}: {detail}"]

    wait_for("the RayJob succeeds", pending, timeout=1500, interval=10)
    pods = cluster.items(cluster.core.list_namespaced_pod(team, label_selector=f"batch.kubernetes.io/job-name={name}"))
    logs = "".join(cluster.core.read_namespaced_pod_log(p["metadata"]["name"], team) for p in pods)
    assert "cluster_resources" in logs, f"the submitter's log does not show ray.cluster_resources(): {logs[-2000:]}"


def test_teardown_in_order_leaves_no_namespace_terminating(platform: Platform) -> None:
    platform.teardown()
