"""The idle reclaim's rights and its exemption policy (components/idle_reclaim.py), asked of a
real API server that holds the dev stack's RBAC (Kubeflow's roles aggregated by its controller
manager, the bindings the profile controller adds) and enforces the policy, whose condition asks
that server's authorizer about the requester: the job's service account gets, lists and
patches Notebooks and creates events in team namespaces only; only a team owner sets, changes
or removes a Notebook's exemption label, and anyone who may edit a Notebook changes the rest."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from components import idle_reclaim
from facts import labels
from tests.envtest.conftest import kept, rbac_of
from tests.support import mirror
from tests.support.apiserver import Cluster, api_message, service_account
from tests.support.renders import rendered
from tooling.waiting import wait_for

pytestmark = mirror.needed

TEAMS = ("vision", "nlp", "research")
OWNER, EDITOR = "lead@acme.com", "ana@acme.com"
"""vision's owner and an edit contributor (tests/stacks/Pulumi.dev.yaml)."""
EXEMPT = {labels.IDLE_RECLAIM_LABEL: labels.IDLE_RECLAIM_EXEMPT}
NOTEBOOKS = "/apis/kubeflow.org/v1/namespaces/vision/notebooks"
REFUSED = "only a team owner (who may manage the namespace's RoleBindings) sets, changes or removes the label"


def notebook(name: str, labels_: dict[str, str] | None = None) -> dict[str, Any]:
    """A Notebook as the notebook UI creates it (kubeflow.org/v1)."""
    container = {"name": name, "image": "notebook:gpu", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "Notebook",
        "metadata": {"name": name, "namespace": "vision", "labels": labels_ or {}},
        "spec": {"template": {"spec": {"containers": [container]}}},
    }


def refusal(cluster: Cluster, method: str, body: dict[str, Any], user: str, dry_run: bool = False) -> str | None:
    """None when the API server takes the request from `user`, else its message."""
    path = NOTEBOOKS if method == "POST" else f"{NOTEBOOKS}/{body['metadata']['name']}"
    try:
        cluster.request(method, path, body, [("dryRun", "All")] if dry_run else [], as_user=user)
    except ApiException as error:
        return api_message(error)
    return None


@pytest.fixture(scope="module", autouse=True)
def dev_world(cluster: Cluster) -> Iterator[None]:
    """The dev render's RBAC, the Notebook CRD and the exemption policy, until the policy is in force."""
    objects = [o.obj for o in rendered("dev").objects]
    crd = [o for o in objects if o["kind"] == "CustomResourceDefinition" and o["metadata"]["name"] == "notebooks.kubeflow.org"]
    policy = [o for o in objects if o["kind"].startswith("ValidatingAdmissionPolicy") and o["metadata"]["name"] == idle_reclaim.EXEMPTION_POLICY]
    assert len(crd) == 1 and len(policy) == 2
    with kept(cluster, crd + rbac_of(objects) + policy):

        def pending() -> list[str]:
            refused = refusal(cluster, "POST", notebook("probe", EXEMPT), EDITOR, dry_run=True)
            return [] if refused is not None and REFUSED in refused else [f"the exemption policy is not in force yet ({refused})"]

        wait_for("the exemption policy", pending, timeout=60, interval=0.1)
        yield
        cluster.request("DELETE", NOTEBOOKS)


def test_its_rights_are_notebooks_and_events_in_team_namespaces_only(cluster: Cluster) -> None:
    job = service_account("monitoring", idle_reclaim.NAME)

    def may(verb: str, resource: str, namespace: str, group: str = "kubeflow.org") -> bool:
        return cluster.allows(job, verb, resource, namespace, group)

    for team in TEAMS:
        assert all(may(verb, "notebooks", team) for verb in ("get", "list", "patch"))
        assert may("create", "events", team, "")
        assert not any(may(verb, "notebooks", team) for verb in ("delete", "create", "update"))
        assert not may("get", "secrets", team, "") and not may("list", "pods", team, "")
    assert not may("list", "notebooks", "kubeflow") and not may("list", "notebooks", "")  # nowhere else, not cluster-wide


def test_only_the_owner_sets_the_exemption_anyone_who_edits_creates_a_notebook_without_it(cluster: Cluster) -> None:
    message = refusal(cluster, "POST", notebook("by-editor", EXEMPT), EDITOR)
    assert message is not None and REFUSED in message and f"ValidatingAdmissionPolicy '{idle_reclaim.EXEMPTION_POLICY}'" in message
    assert refusal(cluster, "POST", notebook("by-editor", {"app": "x"}), EDITOR) is None
    assert refusal(cluster, "POST", notebook("by-owner", EXEMPT), OWNER) is None


def test_only_the_owner_removes_the_exemption_and_an_editor_still_stops_and_starts_the_notebook(cluster: Cluster) -> None:
    assert refusal(cluster, "POST", notebook("exempt", EXEMPT), OWNER) is None
    stored = cluster.request("GET", f"{NOTEBOOKS}/exempt")
    stopped = copy.deepcopy(stored)
    stopped["metadata"].setdefault("annotations", {})["kubeflow-resource-stopped"] = "2026-12-01T16:00:00Z"  # the UI's stop
    assert refusal(cluster, "PUT", stopped, EDITOR) is None
    removed = cluster.request("GET", f"{NOTEBOOKS}/exempt")
    del removed["metadata"]["labels"][labels.IDLE_RECLAIM_LABEL]
    message = refusal(cluster, "PUT", removed, EDITOR)
    assert message is not None and REFUSED in message
    assert refusal(cluster, "PUT", removed, OWNER) is None
