"""Every stack's full render, applied to a real kube-apiserver (tests/support/apiserver.py): the
API server itself judges each object (defaulting, its schema, CEL rules, admission) and takes
all of them, with none twice. Each fixture of tests/stacks/ and each stack of the project's own
stacks/ (a fork's, whatever they are); a shipped stack that says what its fixture says shares
the fixture's render and result."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

import pytest

from stackmodel.config import stack_names
from tests.envtest.conftest import applied
from tests.support import mirror
from tests.support.apiserver import Cluster
from tests.support.fixtures import PROJECT_STACKS
from tests.support.renders import rendered, rendered_project, unmirrored_release_manifests
from tooling.fullrender import FullRender
from tooling.render import manifest

pytestmark = mirror.needed

FIXTURES = stack_names()
PROJECT = sorted(PROJECT_STACKS.glob("Pulumi.*.yaml"))
STACKS = [f"tests/stacks/{name}" for name in FIXTURES] + [f"stacks/{path.name}" for path in PROJECT]


def render_of(stack: str) -> FullRender:
    if stack.startswith("tests/stacks/"):
        return rendered(stack.removeprefix("tests/stacks/"))
    return rendered_project(PROJECT_STACKS / Path(stack).name)


@pytest.mark.parametrize("stack", STACKS)
def test_the_api_server_takes_every_object_of_the_full_render(cluster: Cluster, stack: str) -> None:
    render = render_of(stack)
    assert unmirrored_release_manifests(render) == [], "only release manifests the test mirror lacks are left out"
    result = applied(cluster, stack, render)
    assert result.duplicates == []
    assert [str(r) for r in result.rejected] == []
    judged = set(result.applied) - set(result.provided)
    gke_only = [line for line in result.set_aside if "GKE serves" in line]
    assert len(judged) + len(gke_only) == len(render.objects)


def test_the_project_has_stacks_and_every_fixture_is_applied() -> None:
    assert PROJECT and {"kind", "dev", "prod"} <= set(FIXTURES)


def test_what_is_set_aside_is_what_would_call_a_pod(cluster: Cluster) -> None:
    """Webhook configurations, aggregated APIServices and CRD conversion webhooks: each judged
    by the API server all the same (a dry run; the CRD stored without its webhook)."""
    result = applied(cluster, "tests/stacks/dev", rendered("dev"))
    gke = [line for line in result.set_aside if "GKE serves this kind" in line]
    # The inference Gateway: its CRD is GKE's on a cluster with Gateway API on (kind's render applies it).
    assert [line.split(":", 1)[0] for line in gke] == ["Gateway.gateway.networking.k8s.io istio-system/kubeflow-llm"]
    kinds = {line.split(" ", 1)[0] for line in result.set_aside if line not in gke}
    assert kinds == {
        "MutatingWebhookConfiguration.admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration.admissionregistration.k8s.io",
        "APIService.apiregistration.k8s.io",
        "CustomResourceDefinition.apiextensions.k8s.io",
    }
    assert all(line.split(":", 1)[0] in result.applied for line in result.set_aside if line not in gke)


def test_a_refused_object_fails_naming_the_object_and_the_api_servers_message(cluster: Cluster) -> None:
    """The render before typed placeholders: the Cloud SQL address as the plan has it, null,
    and a ClusterQueue its CRD's schema refuses; both judged by the dry run, like the rest."""
    render = rendered("dev")
    recorded = next(r for r in render.plan.resources if r.type.endswith(":EndpointSlice") and r.name.endswith("pipelines-db"))
    queue = next(o for o in render.objects if o.obj["kind"] == "ClusterQueue")
    fast = copy.deepcopy(queue.obj)
    fast["spec"]["queueingStrategy"] = "Fastest"
    broken = replace(
        render,
        objects=[o for o in render.objects if o.obj["kind"] in ("Namespace", "CustomResourceDefinition")]
        + [replace(o, obj=manifest(recorded)) for o in render.objects if o.urn == recorded.urn]
        + [replace(queue, obj=fast)],
    )
    result = cluster.apply_render(broken)
    assert sorted((r.object, r.source) for r in result.rejected) == [
        (f"ClusterQueue.kueue.x-k8s.io {queue.key[3]}", queue.source),
        ("EndpointSlice.discovery.k8s.io kubeflow/pipelines-db", "pipelines"),
    ]
    messages = {r.object.split(" ")[0]: r.message for r in result.rejected}
    assert "explicit null" in messages["EndpointSlice.discovery.k8s.io"]
    assert 'spec.queueingStrategy: Unsupported value: "Fastest"' in messages["ClusterQueue.kueue.x-k8s.io"]
