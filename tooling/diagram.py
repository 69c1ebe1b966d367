"""The architecture as a Mermaid flowchart, drawn from a plan's component graph
(tooling/graph.py): one node per top-level component, the cluster and its Kubernetes
provider, all teams as one node; an arrow from what must exist first to what waits for it.
Edges implied by a longer path are left out, so the picture shows the order, not every
dependency. docs/architecture.md embeds the prod fixture's (scripts/update_docs.py; a test keeps
it equal).
"""

from __future__ import annotations

from tooling.graph import K8S_PROVIDER, component_graph
from tooling.plan import Plan

TEAMS = "teams"
TEAM_TYPE = "mlplatform:components:Team"
TIE_TYPE = "mlplatform:components:Tie"


def _node(urn: str) -> tuple[str, str]:
    """(Mermaid id, label) of a component graph node."""
    type_, name = urn.split("::")[-2].rsplit("$", 1)[-1], urn.split("::")[-1]
    if type_ == TEAM_TYPE:
        return TEAMS, "Team profiles (one per team)"
    if type_ == K8S_PROVIDER:
        return "provider", "Kubernetes provider"
    kind = type_.rsplit(":", 1)[-1]
    named = type_.startswith("mlplatform:infra:") or type_ == TIE_TYPE  # many of one type
    return name.replace("-", "_"), f"{kind}<br/>{name}" if named else kind


def _reduced(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """Drop an edge a -> b when another path leads from a to b (the transitive reduction)."""

    def reachable(start: str, skip: tuple[str, str]) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            for nxt in edges[node]:
                if (node, nxt) != skip and nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    return {a: {b for b in deps if b not in reachable(a, (a, b))} for a, deps in edges.items()}


def mermaid(plan: Plan) -> str:
    """```mermaid``` block: `A --> B` means A is created before B."""
    labels: dict[str, str] = {}
    needs: dict[str, set[str]] = {}
    for urn, deps in component_graph(plan).items():
        node, label = _node(urn)
        labels[node] = label
        needs.setdefault(node, set()).update(_node(d)[0] for d in deps)
    for node in needs:
        needs[node].discard(node)
    needs = _reduced(needs)
    lines = ["```mermaid", "flowchart LR"]
    lines += [f'  {node}["{labels[node]}"]' for node in sorted(labels)]
    lines += [f"  {before} --> {node}" for node in sorted(needs) for before in sorted(needs[node])]
    lines.append("```")
    return "\n".join(lines)
