"""The policy pack's rules: the shipped stacks pass, and each rule catches a stack that breaks it.

Where the schema or the program already rule a breakage out, the broken stack is a
recorded plan with one resource edited (`edit`, `drop`, `add`); the test says so.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pulumi
import pytest

from policy.offline import stack_view, violations
from policy.rules import RULES, Resource, StackView, Violation, check
from tests.conftest import base_kind, with_changes
from tests.support.fixtures import PROJECT_STACKS
from tooling.plan import Plan, evaluate

CLUSTER = "gcp:container/cluster:Cluster"
POOL = "gcp:container/nodePool:NodePool"
C = "mlplatform:cluster"
TEAM = {"name": "vision", "owner": "lead@acme.com", "contributors": [{"email": "ana@acme.com", "role": "edit"}]}


def rules_hit(found: list[Violation]) -> set[str]:
    return {v.rule for v in found}


def only(found: list[Violation], rule: str) -> list[Violation]:
    assert rules_hit(found) == {rule}, [str(v) for v in found]
    return found


def find(view: StackView, match: Callable[[Resource], bool]) -> Resource:
    hits = [r for r in view.resources if match(r)]
    assert len(hits) == 1, [r.urn for r in hits]
    return hits[0]


def edit(view: StackView, match: Callable[[Resource], bool], change: Callable[[dict[str, Any]], None], **fields: Any) -> StackView:
    """A copy of `view` with one resource's props changed in place by `change`."""
    target = find(view, match)
    props = copy.deepcopy(dict(target.props))
    change(props)
    edited = replace(target, props=props, **fields)
    return replace(view, resources=[edited if r is target else r for r in view.resources])


def drop(view: StackView, match: Callable[[Resource], bool]) -> StackView:
    target = find(view, match)
    return replace(view, resources=[r for r in view.resources if r is not target])


def add(view: StackView, resource: Resource) -> StackView:
    return replace(view, resources=[*view.resources, resource])


def kind_of(kind: str, name: str | None = None) -> Callable[[Resource], bool]:
    return lambda r: r.type.endswith(f":{kind}") and (name is None or r.props.get("metadata", {}).get("name") == name)


def gpu_pool(r: Resource) -> bool:
    return r.type == POOL and r.props.get("name") == "l4"


# --- the shipped stacks and the rule set ----------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod", "kind"])
def test_shipped_stacks_pass_every_rule(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    assert violations(shipped_plan(stack)) == []


# Here, beside the fixtures' test: while stacks/ holds acme's examples (the fixtures' copies),
# this worker has planned them already (tests/conftest.py `evaluated`).
@pytest.mark.parametrize("path", sorted(PROJECT_STACKS.glob("Pulumi.*.yaml")), ids=lambda p: p.name)
def test_the_projects_own_stacks_pass_every_rule(path: Path, project_plan: Callable[[Path], Plan]) -> None:
    """Whatever stacks/ holds, a fork's own stacks included: planned, and held to the guardrails
    (`make check-stacks` renders and checks each)."""
    assert violations(project_plan(path)) == []


def test_rule_names_are_unique_and_described() -> None:
    names = [r.name for r in RULES]
    assert len(names) == len(set(names)) and all(r.description for r in RULES)


def test_rule_constants_match_the_program() -> None:
    from components.profiles.namespace import NAMESPACE_LABELS
    from infra.gke import ENVIRONMENT_LABEL
    from policy import rules

    assert rules.ENVIRONMENT_LABEL == ENVIRONMENT_LABEL
    key, value = rules.PROFILE_NAMESPACE_LABEL
    assert NAMESPACE_LABELS[key] == value


def test_cluster_carries_environment_label_and_protect(shipped_plan: Callable[[str], Plan]) -> None:
    prod = shipped_plan("prod").one(CLUSTER, "ml-prod")
    dev = shipped_plan("dev").one(CLUSTER, "ml-dev")
    assert prod.inputs["resourceLabels"] == {"mlplatform-environment": "prod"} and prod.protect
    assert dev.inputs["resourceLabels"] == {"mlplatform-environment": "dev"} and not dev.protect


def test_violation_format() -> None:
    assert str(Violation("team-quota", "urn:x", "no quota")) == "team-quota: urn:x: no quota"


# --- GPU pools --------------------------------------------------------------------------


def test_gpu_pool_without_label_or_taint(shipped_plan: Callable[[str], Plan]) -> None:
    # infra/gke.py always sets both: the broken pool is an edited recorded plan.
    def strip(props: dict[str, Any]) -> None:
        props["nodeConfig"]["labels"] = {}
        props["nodeConfig"]["taints"] = []

    found = only(check(edit(stack_view(shipped_plan("dev")), gpu_pool, strip)), "gpu-pool-nodes")
    messages = " ".join(v.message for v in found)
    assert "label mlplatform.dev/gpu-pool=l4" in messages and "taint nvidia.com/gpu=present:NoSchedule" in messages


def test_gpu_pool_without_kueue_flavor(shipped_plan: Callable[[str], Plan]) -> None:
    # components/kueue.py derives one flavor per pool: the missing flavor is an edited plan.
    view = drop(stack_view(shipped_plan("dev")), kind_of("ResourceFlavor", "l4"))
    [violation] = only(check(view), "gpu-pool-nodes")
    assert "no ResourceFlavor 'l4'" in violation.message


def test_a_gpu_pool_flavor_that_tolerates_the_gpu_taint_or_lists_none(shipped_plan: Callable[[str], Plan]) -> None:
    # Kueue counts a flavor's own tolerations as the pod's (components/kueue.py flavor_tolerations):
    # the l4 flavor of a recorded plan edited as it was before the review of issue 39, then untainted.
    toleration = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
    tolerating = edit(stack_view(shipped_plan("dev")), kind_of("ResourceFlavor", "l4"), lambda p: p["spec"].update(tolerations=[toleration]))
    [violation] = only(check(tolerating), "gpu-pool-nodes")
    assert violation.message == "flavor l4: must not tolerate nvidia.com/gpu=present:NoSchedule, or Kueue gives it CPU-only jobs"
    untainted = edit(stack_view(shipped_plan("dev")), kind_of("ResourceFlavor", "l4"), lambda p: p["spec"].update(nodeTaints=[]))
    [violation] = only(check(untainted), "gpu-pool-nodes")
    assert violation.message == "flavor l4: nodeTaints must list nvidia.com/gpu=present:NoSchedule, or Kueue gives it CPU-only jobs"
    assert "gpu-pool-nodes" not in rules_hit(check(stack_view(shipped_plan("prod"))))  # its TAS h100 flavor keeps the toleration


# --- environment and prod hardening -----------------------------------------------------


def test_cluster_without_environment_label(shipped_plan: Callable[[str], Plan]) -> None:
    # infra/gke.py always labels the cluster: the label is removed from a recorded plan.
    view = edit(stack_view(shipped_plan("dev")), lambda r: r.type == CLUSTER, lambda p: p.pop("resourceLabels"))
    [violation] = only(check(view), "environment-known")
    assert "no mlplatform-environment label" in violation.message


def test_prod_cluster_without_shielded_nodes(shipped_plan: Callable[[str], Plan]) -> None:
    # infra/gke.py always enables shielded nodes: switched off in a recorded plan.
    view = edit(stack_view(shipped_plan("prod")), lambda r: r.type == CLUSTER, lambda p: p.update(enableShieldedNodes=False))
    [violation] = only(check(view), "prod-cluster-hardened")
    assert violation.message == "prod cluster needs shielded nodes"


def test_the_pipelines_database_is_private_and_backed_up(shipped_plan: Callable[[str], Plan]) -> None:
    # infra/cloudsql.py always makes it so: weakened in a recorded plan. Its deletion protection
    # follows the stack's, which the loader keeps on in prod (stackmodel/rules/ prod-deletion-protected).
    instance = "gcp:sql/databaseInstance:DatabaseInstance"
    assert [v for v in check(stack_view(shipped_plan("prod"))) if v.rule == "databases-kept"] == []

    def weaken(props: dict[str, Any]) -> None:
        props["settings"] = {**props["settings"], "ipConfiguration": {"ipv4Enabled": True}, "backupConfiguration": {"enabled": True, "binaryLogEnabled": False}}

    view = edit(stack_view(shipped_plan("prod")), lambda r: r.type == instance, weaken)
    assert [v.message for v in only(check(view), "databases-kept")] == [
        "database instance ml-prod-pipelines needs no public IP (ipConfiguration.ipv4Enabled: false)",
        "database instance ml-prod-pipelines needs binary logs for point-in-time recovery",
    ]


def test_a_database_without_backups(shipped_plan: Callable[[str], Plan]) -> None:
    assert [v for v in check(stack_view(shipped_plan("dev"))) if v.rule == "databases-kept"] == []
    view = edit(stack_view(shipped_plan("dev")), lambda r: r.type == "gcp:sql/databaseInstance:DatabaseInstance", lambda p: p["settings"].update(backupConfiguration={"enabled": False, "binaryLogEnabled": True}))
    assert [v.message for v in only(check(view), "databases-kept")] == ["database instance ml-dev-pipelines needs automated backups"]


# --- teams ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def team_view() -> StackView:
    from stackmodel.config import validate

    raw = with_changes(base_kind(), {"mlplatform:teams": [TEAM]})
    return stack_view(evaluate(validate(raw, "test"), "test"))


def test_team_stack_passes(team_view: StackView) -> None:
    assert check(team_view) == []


def test_team_profile_without_quota(team_view: StackView) -> None:
    # components/profiles/namespace.py always writes the quota: removed from a recorded plan.
    view = edit(team_view, kind_of("Profile", "vision"), lambda p: p["spec"].pop("resourceQuotaSpec"))
    [violation] = only(check(view), "team-quota")
    assert violation.message.split(": ", 1)[1] == "resourceQuotaSpec.hard lacks cpu, memory"


def test_team_without_a_queue_needs_a_gpu_quota(team_view: StackView) -> None:
    # Kueue's LocalQueue admits the team's GPU pods; without it the ResourceQuota must limit GPUs.
    view = drop(team_view, kind_of("LocalQueue", "default"))
    [violation] = [v for v in check(view) if v.rule == "team-quota"]
    assert violation.message == "team vision: resourceQuotaSpec.hard lacks requests.nvidia.com/gpu"


def test_team_namespace_without_profile(team_view: StackView) -> None:
    # Every team gets its Profile: the Profile is dropped from a recorded plan.
    [violation] = only(check(drop(team_view, kind_of("Profile", "vision"))), "team-quota")
    assert violation.message == "team namespace vision has no Profile, so no ResourceQuota"


def test_team_without_default_local_queue(team_view: StackView) -> None:
    # Every team gets LocalQueue `default`: dropped from a recorded plan.
    found = check(drop(team_view, kind_of("LocalQueue", "default")))
    assert rules_hit(found) == {"team-default-queue", "team-quota"}  # and so no queue admits its GPU pods
    [violation] = [v for v in found if v.rule == "team-default-queue"]
    assert "no LocalQueue 'default'" in violation.message


def test_team_allow_all_authorization_policy(team_view: StackView) -> None:
    # We never write such a policy: one is added to a recorded plan.
    allow_all = Resource(
        type="kubernetes:security.istio.io/v1beta1:AuthorizationPolicy",
        name="vision-open",
        urn="urn:pulumi:test::mlplatform::kubernetes:security.istio.io/v1beta1:AuthorizationPolicy::vision-open",
        props={
            "apiVersion": "security.istio.io/v1beta1",
            "kind": "AuthorizationPolicy",
            "metadata": {"name": "open", "namespace": "vision"},
            "spec": {"action": "ALLOW", "rules": [{}]},
        },
    )
    deny = replace(allow_all, urn=allow_all.urn + "-deny", props={**allow_all.props, "spec": {"action": "DENY", "rules": [{}]}})
    [violation] = only(check(add(add(team_view, allow_all), deny)), "team-no-allow-all")
    assert violation.message == "AuthorizationPolicy vision/open: rules[0] has no from/to/when and allows everyone"


def test_contributor_policies_are_not_allow_all(team_view: StackView) -> None:
    policies = [r for r in team_view.resources if r.type.endswith(":AuthorizationPolicy")]
    assert policies and check(team_view) == []


# --- upstream pins ----------------------------------------------------------------------


def test_unpinned_chart_tree_and_manifest(shipped_plan: Callable[[str], Plan]) -> None:
    # The pin table makes every install pinned: unpinned ones are edited into a recorded plan.
    view = stack_view(shipped_plan("kind"))
    view = edit(view, lambda r: r.type.endswith("helm.sh/v4:Chart") and r.name == "kueue", lambda p: p.pop("version"))
    view = edit(
        view,
        lambda r: r.type.endswith("kustomize/v2:Directory") and r.name == "kubeflow-issuer",
        lambda p: p.update(directory=p["directory"].split("?")[0]),
    )
    view = add(
        view,
        Resource(
            "kubernetes:yaml/v2:ConfigFile",
            "latest",
            "urn:x:latest",
            {"file": "https://github.com/kubernetes-sigs/jobset/releases/latest/download/manifests.yaml"},
        ),
    )
    view = add(
        view,
        Resource(
            "kubernetes:yaml/v2:ConfigFile",
            "pinned",
            "urn:x:pinned",
            {"file": "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml"},
        ),
    )
    found = only(check(view), "upstream-pinned")
    assert len(found) == 3
    assert {v.resource for v in found} >= {"urn:x:latest"}
    assert any("needs ?ref=" in v.message for v in found) and any("no pinned version" in v.message for v in found)


def test_kustomize_branch_ref_is_not_a_pin() -> None:
    tree = Resource(
        "kubernetes:kustomize/v2:Directory", "t", "urn:t", {"directory": "https://github.com/kubeflow/manifests//common?ref=master"}
    )
    assert rules_hit(check(StackView([tree]))) == {"upstream-pinned"}


# --- secrets ----------------------------------------------------------------------------


def test_plain_kubeconfig_output(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    from infra.args import cluster_args
    from infra.cluster import build_cluster
    from stackmodel.config import validate

    def leaky(config: Any) -> None:
        cluster = build_cluster(cluster_args(config))
        pulumi.export("kubeconfig", pulumi.Output.unsecret(cluster.kubeconfig))

    plan = evaluate(validate(base_kind(), "test"), "test", build=leaky)
    [violation] = only(violations(plan), "no-plain-secret-outputs")
    assert violation.resource == "stack" and "'kubeconfig' names a secret" in violation.message


def test_credentials_in_any_plain_output() -> None:
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIE...\n-----END RSA PRIVATE KEY-----"
    view = StackView([], outputs={"notes": {"ca": key}, "kubeconfig": "[secret]", "clusterName": "ml"})
    [violation] = only(check(view), "no-plain-secret-outputs")
    assert "'notes' carries credentials" in violation.message


# --- `python -m stacks policy` ----------------------------------------------------------


def test_cli_policy_clean_stack(capsys: pytest.CaptureFixture[str]) -> None:
    from tooling.cli import main

    assert main(["policy", "kind"]) == 0
    assert capsys.readouterr().out == f"stack kind: {len(RULES)} rules, no violations\n"


def test_cli_policy_prints_violations_and_exits_1(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # No stack file breaks a policy rule (what a stack file alone decides is the loader's):
    # the plan the command judges loses its Kueue flavor on the way.
    import policy.offline
    from tooling.cli import EXIT_VIOLATIONS, main

    monkeypatch.setattr(policy.offline, "violations", lambda plan: check(drop(stack_view(plan), kind_of("ResourceFlavor", "l4"))))
    assert main(["policy", "dev"]) == EXIT_VIOLATIONS
    out, err = capsys.readouterr()
    assert out.startswith("gpu-pool-nodes: urn:pulumi:dev::mlplatform::")
    assert ": pool l4: Kueue has no ResourceFlavor 'l4'; its GPUs cannot be admitted" in out
    assert "stack dev: 1 policy violation" in err


def test_cli_policy_bad_stack_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    from tooling.cli import EXIT_CONFIG_ERROR, main

    assert main(["policy", "staging-eu"]) == EXIT_CONFIG_ERROR
    assert "no such stack file" in capsys.readouterr().err
