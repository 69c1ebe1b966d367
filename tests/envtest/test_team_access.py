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
