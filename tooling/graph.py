"""The dependency graph of a plan, and how many serial stages it has after the cluster.

`pulumi up` can only create a resource once everything it depends on exists, so the
longest dependency chain from the cluster sets the floor of a deployment's wall time.
Edges are the recorded dependencies plus the provider a resource is created through.
Two views: resource level (every resource a node) and component level (each top-level
`mlplatform:*` ComponentResource and everything under it one node; a dependency on a
component is a dependency on all of its children, so on that node).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from facts.resource_types import K8S_PROVIDER
from tooling.plan import Plan, Recorded

Graph = Mapping[str, frozenset[str]]
"""node -> the nodes it depends on."""


def longest_chain(graph: Graph, roots: Iterable[str]) -> list[str]:
    """The longest path root -> dependent -> dependent ..., starting at any of `roots`."""
    dependents: dict[str, list[str]] = {}
    for node, deps in graph.items():
        for dep in deps:
            dependents.setdefault(dep, []).append(node)
    best: dict[str, list[str]] = {}

    def chain(node: str) -> list[str]:
        if node not in best:
            tails = [chain(n) for n in sorted(dependents.get(node, []))]
            best[node] = [node, *max(tails, key=len, default=[])]
        return best[node]

    # Iterative warm-up in dependency order keeps the recursion shallow on big graphs.
    for node in _topological(graph):
        chain(node)
    return max((chain(r) for r in sorted(roots)), key=len, default=[])


def _topological(graph: Graph) -> list[str]:
    """Nodes, dependents before their dependencies (so `chain` recursion stays one level deep)."""
    order: list[str] = []
    seen: set[str] = set()
    for start in sorted(graph):
        stack = [(start, iter(sorted(graph.get(start, ()))))]
        if start in seen:
            continue
        seen.add(start)
        while stack:
            node, deps = stack[-1]
            for dep in deps:
                if dep not in seen and dep in graph:
                    seen.add(dep)
                    stack.append((dep, iter(sorted(graph.get(dep, ())))))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def resource_graph(plan: Plan) -> dict[str, frozenset[str]]:
    urns = {r.urn for r in plan.resources}
    graph: dict[str, frozenset[str]] = {}
    for r in plan.resources:
        deps = set(r.dependencies)
        if r.provider_urn:
            deps.add(r.provider_urn)
        graph[r.urn] = frozenset(d for d in deps if d in urns and d != r.urn)
    return graph


def component_of(plan: Plan, resource: Recorded) -> str:
    """The outermost `mlplatform:*` component holding the resource, else the resource itself."""
    node = resource.urn if resource.type.startswith("mlplatform:") else None
    for ancestor in plan.ancestors(resource):
        if ancestor.type.startswith("mlplatform:"):
            node = ancestor.urn
    return node or resource.urn


def component_graph(plan: Plan) -> dict[str, frozenset[str]]:
    owner = {r.urn: component_of(plan, r) for r in plan.resources}
    edges: dict[str, set[str]] = {node: set() for node in owner.values()}
    for urn, deps in resource_graph(plan).items():
        edges[owner[urn]] |= {owner[d] for d in deps if owner[d] != owner[urn]}
    return {node: frozenset(deps) for node, deps in edges.items()}


def cluster_resources(plan: Plan) -> set[str]:
    """What the Kubernetes provider waits for: the cluster (GKE cluster or kind's command)."""
    providers = [r for r in plan.resources if r.type == K8S_PROVIDER]
    return {d for p in providers for d in p.dependencies}


def stages_after_cluster(plan: Plan) -> tuple[list[str], list[str]]:
    """(component-level chain, resource-level chain), each starting at the cluster."""
    owner = {r.urn: component_of(plan, r) for r in plan.resources}
    cluster = cluster_resources(plan)
    components = longest_chain(component_graph(plan), {owner[u] for u in cluster if u in owner})
    resources = longest_chain(resource_graph(plan), cluster)
    return components, resources


def short(urn: str) -> str:
    """`type::name` of a URN, for printing chains."""
    parts = urn.split("::")
    return f"{parts[-2].rsplit('$', 1)[-1]}::{parts[-1]}" if len(parts) >= 2 else urn
