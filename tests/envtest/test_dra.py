"""The DRA objects a stack with a `gpuAllocation: dra` pool authors, judged by the real v1.36 API
server (its full render needs NVIDIA's chart, which the test mirror lacks, so test_apply cannot
apply it): the team's ResourceClaimTemplate in resource.k8s.io/v1, and a pod as a DRA runtime
variant's template makes it (the pod's claim from that template, its container using it)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from args.components import training_runtimes_args
from args.teams import teams_args
from components.profiles.dra import claim_templates
from runtimes.catalog import cluster_training_runtimes
from tests.envtest.conftest import kept
from tests.support.apiserver import Cluster
from tests.test_dra import CONFIG

NAMESPACE = "vision"


def test_the_api_server_serves_resource_v1_and_takes_the_claim_template_and_a_claiming_pod(cluster: Cluster) -> None:
    assert "ResourceClaimTemplate" in cluster.resources("resource.k8s.io/v1")
    (team,) = teams_args(CONFIG)
    (template,) = claim_templates(team)
    runtime = next(r for r in cluster_training_runtimes(training_runtimes_args(CONFIG)) if r["metadata"]["name"] == "torch-distributed-l4")
    pod_template = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "dra-node-0", "namespace": NAMESPACE, **pod_template["metadata"]},
        "spec": {**pod_template["spec"], "serviceAccountName": "default", "restartPolicy": "Never"},
    }
    world = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": NAMESPACE}},
        template,
    ]
    with kept(cluster, world):
        assert cluster.apply(pod, dry_run=True) in (200, 201)
        # The same pod whose container names a claim the pod does not have is refused: the
        # API server does judge the claims.
        broken = copy.deepcopy(pod)
        broken["spec"]["containers"][0]["resources"]["claims"] = [{"name": "elsewhere"}]
        with pytest.raises(ApiException) as refused:
            cluster.apply(broken, dry_run=True)
        assert refused.value.status == 422
