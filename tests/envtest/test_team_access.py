"""Who may do what in a team's namespace of the kind stack, asked of a real API server's RBAC
authorizer (SubjectAccessReviews) holding the full render's RBAC, Kubeflow's aggregated roles
aggregated by a real kube-controller-manager, and the bindings the profile controller adds at
run time (tests/support/profile_controller.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.envtest.conftest import kept, rbac_of
from tests.support import mirror
from tests.support.apiserver import ANONYMOUS, Cluster, Who, service_account, user
from tests.support.renders import rendered

pytestmark = mirror.needed

LEAD, ANA, BO = user("lead@example.com"), user("ana@example.com"), user("bo@example.com")
"""vision's owner, editor and viewer in the kind fixture (ana is a viewer in nlp)."""
OUTSIDERS = (user("kim@example.com"), user("raj@example.com"))
"""Other teams' people."""
TRAINER, RAY, RBAC = "trainer.kubeflow.org", "ray.io", "rbac.authorization.k8s.io"
VISION_EDITOR_ACCOUNT = service_account("vision", "default-editor")
"""What vision's notebooks run as."""

CASES: list[tuple[Who, str, str, str, str, bool]] = [
    # (who, verb, API group, resource, namespace, allowed)
    (LEAD, "create", TRAINER, "trainjobs", "vision", True),
    (LEAD, "create", RAY, "rayclusters", "vision", True),
    (ANA, "create", TRAINER, "trainjobs", "vision", True),
    (ANA, "create", RAY, "rayclusters", "vision", True),
    (LEAD, "create", RBAC, "rolebindings", "vision", True),  # the owner shares
    (ANA, "create", RBAC, "rolebindings", "vision", False),
    (BO, "get", TRAINER, "trainjobs", "vision", True),  # the viewer reads
    (BO, "create", TRAINER, "trainjobs", "vision", False),
    (BO, "create", RAY, "rayclusters", "vision", False),
    *((who, "get", TRAINER, "trainjobs", "vision", False) for who in OUTSIDERS),
    *((who, "create", RAY, "rayclusters", "vision", False) for who in OUTSIDERS),
    # signed in, anyone sees which runtimes exist (cluster-scoped, for the SDK) ...
    *((who, "list", TRAINER, "clustertrainingruntimes", "", True) for who in OUTSIDERS),
    # ... nobody else does
    (ANONYMOUS, "list", TRAINER, "clustertrainingruntimes", "", False),
    # an editor in vision is a viewer in nlp
    (ANA, "create", TRAINER, "trainjobs", "nlp", False),
    (ANA, "list", TRAINER, "trainjobs", "nlp", True),
    # notebooks start TrainJobs in their own namespace only
    (VISION_EDITOR_ACCOUNT, "create", TRAINER, "trainjobs", "vision", True),
    (VISION_EDITOR_ACCOUNT, "create", TRAINER, "trainjobs", "nlp", False),
    (service_account("nlp", "default-editor"), "create", TRAINER, "trainjobs", "vision", False),
]


@pytest.fixture(scope="module", autouse=True)
def kind_rbac(cluster: Cluster) -> Iterator[None]:
    with kept(cluster, rbac_of([o.obj for o in rendered("kind").objects])):
        yield


@pytest.mark.parametrize(
    ("who", "verb", "group", "resource", "namespace", "allowed"),
    CASES,
    ids=[f"{c[0].name} {c[1]} {c[3]} in {c[4] or 'the cluster'}" for c in CASES],
)
def test_the_authorizer_gives_each_role_what_its_team_grants(
    cluster: Cluster, who: Who, verb: str, group: str, resource: str, namespace: str, allowed: bool
) -> None:
    assert cluster.allows(who, verb, resource, namespace, group) is allowed


def test_kubeflow_edit_holds_what_the_controller_manager_aggregated_into_it(cluster: Cluster) -> None:
    """The render gives kubeflow-edit no rules of its own, only selectors: every rule above comes
    from the ClusterRoles they pick (ours for Trainer and KubeRay among them), as aggregated."""
    (edit,) = [o.obj for o in rendered("kind").objects if o.obj["kind"] == "ClusterRole" and o.key[3] == "kubeflow-edit"]
    assert not edit.get("rules") and edit["aggregationRule"]["clusterRoleSelectors"]
    rules = cluster.request("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/kubeflow-edit")["rules"]
    assert any(rule["apiGroups"] == [RAY] and rule["resources"] == ["*"] for rule in rules)  # kubeflow-kuberay-edit
    assert any(rule["apiGroups"] == [TRAINER] and rule["resources"] == ["trainjobs"] for rule in rules)  # kubeflow-trainer-edit


# --- the queue a data scientist sees (docs/teams.md, "Your queue") ----------------------------------
# Kueue's visibility API (visibility.kueue.x-k8s.io/v1beta2): a LocalQueue's pending workloads are
# the subresource `pendingworkloads` of `localqueues` in the team's namespace, a ClusterQueue's of
# cluster-scoped `clusterqueues` (kueue v0.19.2 pkg/visibility/storage/pending_workloads_lq.go and
# _cq.go; the chart's roles pending_workloads_lq_viewer_role.yaml, _cq_viewer_role.yaml). The API
# server authorizes the request before it reaches Kueue's aggregated server: this is that answer.
VISIBILITY, KUEUE = "visibility.kueue.x-k8s.io", "kueue.x-k8s.io"
NLP_EDITOR_ACCOUNT = service_account("nlp", "default-editor")
QUEUE_READERS: list[tuple[Who, str, bool]] = [
    # (who, team namespace, may read its queue)
    (LEAD, "vision", True),
    (LEAD, "nlp", False),  # owning one team gives nothing of another
    (ANA, "vision", True),
    (BO, "vision", True),  # a viewer of vision sees vision's queue ...
    (BO, "nlp", False),  # ... and nothing of nlp's
    (BO, "research", False),
    (ANA, "nlp", True),  # a viewer there
    *((who, "vision", False) for who in OUTSIDERS),
    (VISION_EDITOR_ACCOUNT, "vision", True),  # queue-status in a vision notebook
    (VISION_EDITOR_ACCOUNT, "nlp", False),
    (NLP_EDITOR_ACCOUNT, "vision", False),
    (ANONYMOUS, "vision", False),
]


@pytest.mark.parametrize(("who", "namespace", "allowed"), QUEUE_READERS, ids=[f"{c[0].name} in {c[1]}" for c in QUEUE_READERS])
def test_a_member_reads_their_teams_queue_and_nothing_of_another_team(cluster: Cluster, who: Who, namespace: str, allowed: bool) -> None:
    """What queue-status reads: the LocalQueue's pending workloads (positions) and the Workloads
    (reasons, who preempted), each in one namespace."""
    assert cluster.allows(who, "get", "localqueues", namespace, VISIBILITY, subresource="pendingworkloads", name="default") is allowed
    assert cluster.allows(who, "list", "workloads", namespace, KUEUE) is allowed


@pytest.mark.parametrize("who", [LEAD, ANA, BO, VISION_EDITOR_ACCOUNT, *OUTSIDERS], ids=lambda w: w.name)
def test_nobody_of_a_team_reads_every_teams_queue(cluster: Cluster, who: Who) -> None:
    """A ClusterQueue's pending workloads list every namespace's (pending_workloads_cq.go): the
    chart aggregates that role into Kubernetes' view/edit/admin, which no team member is bound to,
    and a team's RoleBindings cannot grant a cluster-scoped resource."""
    assert not cluster.allows(who, "get", "clusterqueues", "", VISIBILITY, subresource="pendingworkloads", name="vision")
    assert not cluster.allows(who, "list", "workloads", "", KUEUE)  # every namespace's Workloads
