"""Dependency depth: the longest chain of serial stages after the cluster."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tooling.graph import component_graph, longest_chain, resource_graph, stages_after_cluster
from tooling.plan import Plan


def test_longest_chain_on_a_hand_made_graph() -> None:
    # cluster <- provider <- {cert-manager, kueue}; kubeflow <- cert-manager; teams <- {kubeflow, kueue}
    graph = {
        "cluster": frozenset(),
        "provider": frozenset({"cluster"}),
        "cert-manager": frozenset({"provider"}),
        "kueue": frozenset({"provider"}),
        "kubeflow": frozenset({"cert-manager"}),
        "teams": frozenset({"kubeflow", "kueue"}),
        "unrelated": frozenset(),
    }
    assert longest_chain(graph, {"cluster"}) == ["cluster", "provider", "cert-manager", "kubeflow", "teams"]
    assert longest_chain(graph, {"kueue"}) == ["kueue", "teams"]
    assert longest_chain({}, set()) == []


MAX_STAGES_AFTER_PROVIDER = 4


@pytest.mark.parametrize("stack", ["kind", "dev", "prod"])
def test_every_shipped_stack_has_at_most_four_component_stages_after_the_provider(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    """provider -> Kubeflow's namespaces -> Istio (Sidecars in `kubeflow`) -> Kubeflow (Istio's
    CRDs) -> a team's Profile (its CRD), or prod's HTTPS gateway. Monitors of one component in
    another's kinds are Ties, which nothing waits for: neither install waits for the other."""
    components, resources = stages_after_cluster(shipped_plan(stack))
    assert components[1].endswith("pulumi:providers:kubernetes::k8s")
    assert components[2].endswith("mlplatform:components:KubeflowNamespaces::kubeflow-namespaces")
    assert len(components) - 2 <= MAX_STAGES_AFTER_PROVIDER, " -> ".join(components)
    assert len(resources) >= len(components)  # the resource-level chain is never shorter


def test_the_stage_count_counts_what_waits() -> None:
    """A component that waits for one more component is one stage more (the measure can fail)."""
    graph = {
        "cluster": frozenset(),
        "provider": frozenset({"cluster"}),
        "kueue": frozenset({"provider"}),
        "monitoring": frozenset({"provider"}),
        "teams": frozenset({"kueue"}),
    }
    assert len(longest_chain(graph, {"cluster"})) - 2 == 2
    graph["kueue"] = frozenset({"monitoring"})  # Kueue's chart waiting for Monitoring's CRDs
    assert len(longest_chain(graph, {"cluster"})) - 2 == 3


def test_component_graph_collapses_children(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")
    graph = component_graph(plan)
    team = next(u for u in graph if u.endswith("mlplatform:components:Team::vision"))
    kinds = {u.split("::")[-2].rsplit("$", 1)[-1] for u in graph[team]}
    assert "mlplatform:components:Kubeflow" in kinds and "pulumi:providers:kubernetes" in kinds
    assert not any(u.endswith("Namespace::vision/vision") for u in graph)  # inside the Team node
    assert len(resource_graph(plan)) == len(plan.resources)


def test_team_objects_wait_only_for_what_they_need(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("kind")

    def deps(type_: str, name: str) -> set[str]:
        return {u.rsplit("::", 1)[-1] for u in plan.one(type_, name).dependencies}

    assert deps("kubernetes:core/v1:Namespace", "vision/vision") == set()
    assert deps("kubernetes:networking.k8s.io/v1:NetworkPolicy", "vision/allow-same-namespace") == {"vision/vision"}
    assert deps("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "vision/default") == {"vision/vision", "kueue"}
    kueue = plan.one("kubernetes:helm.sh/v4:Chart", "kueue")
    assert not any("monitoring" in u or "kube-prometheus-stack" in u for u in plan.waits_for(kueue)), "Kueue waits for no monitoring"
    assert deps("kubernetes:kubeflow.org/v1:Profile", "vision/vision") == {"vision/vision", "profiles-kfam"}


def test_the_scaling_plot_draws_each_measurement_as_a_line() -> None:
    from benchmarks.plan_scaling import Row, Seconds, plot

    rows = [
        Row(10, 300, Seconds(1.5, 1.4), Seconds(0.5, 0.5), Seconds(1.0, 0.9), None),
        Row(100, 2000, Seconds(9.0, 8.5), Seconds(3.0, 2.9), Seconds(6.0, 5.5), 79.0),
    ]
    chart = plot(rows)
    assert chart.splitlines() == [
        "```mermaid",
        "xychart-beta",
        '    title "Plan seconds by teams: plan (top), replay (middle), raw engine (bottom)"',
        '    x-axis "teams" [10, 100]',
        '    y-axis "seconds" 0 --> 9.9',
        "    line [1.50, 9.00]",
        "    line [1.00, 6.00]",
        "    line [0.50, 3.00]",
        "```",
    ]


def test_the_diagram_keeps_only_edges_no_longer_path_implies() -> None:
    from tooling.diagram import _reduced

    needs = {"kubeflow": {"istio", "provider"}, "istio": {"provider"}, "provider": set()}
    assert _reduced(needs) == {"kubeflow": {"istio"}, "istio": {"provider"}, "provider": set()}


def test_the_diagram_draws_the_kind_stack_from_cluster_to_teams(shipped_plan: Callable[[str], Plan]) -> None:
    from tooling.diagram import mermaid

    lines = mermaid(shipped_plan("kind")).splitlines()
    assert '  mlplatform["KindCluster<br/>mlplatform"]' in lines
    assert "  mlplatform --> provider" in lines
    assert "  trainer --> runtimes" in lines
    assert "  kueue --> teams" in lines


def test_the_scaling_benchmarks_generated_teams_are_a_valid_stack() -> None:
    from benchmarks.plan_scaling import teams_config

    config = teams_config(3)
    assert [t.name for t in config.teams] == ["team-0000", "team-0001", "team-0002"]
