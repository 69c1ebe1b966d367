"""ClusterRoles aggregated into Kubeflow's kubeflow-admin/edit/view, so profile members
(bound to those by KFAM) can use what an operator adds. Label names: kubeflow/manifests
26.03 common/kubeflow-roles/base/cluster-roles.yaml (aggregationRule selectors)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

AGGREGATE_LABEL = "rbac.authorization.kubeflow.org/aggregate-to-{}"
VERBS_READ = ("get", "list", "watch")
VERBS_EDIT = (*VERBS_READ, "create", "delete", "deletecollection", "patch", "update")


@dataclass(frozen=True)
class Rule:
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]


def cluster_role(
    name: str,
    aggregate_to: tuple[str, ...],
    rules: tuple[Rule, ...] = (),
    aggregates: str | None = None,
    opts: pulumi.ResourceOptions | None = None,
) -> k8s.rbac.v1.ClusterRole:
    """A ClusterRole labelled to aggregate into each of `aggregate_to` (e.g. kubeflow-edit),
    optionally itself aggregating roles labelled `aggregate-to-<aggregates>`."""
    return k8s.rbac.v1.ClusterRole(
        name,
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=name, labels={AGGREGATE_LABEL.format(target): "true" for target in aggregate_to}
        ),
        aggregation_rule=(
            k8s.rbac.v1.AggregationRuleArgs(
                cluster_role_selectors=[
                    k8s.meta.v1.LabelSelectorArgs(match_labels={AGGREGATE_LABEL.format(aggregates): "true"})
                ]
            )
            if aggregates
            else None
        ),
        rules=[
            k8s.rbac.v1.PolicyRuleArgs(api_groups=list(r.api_groups), resources=list(r.resources), verbs=list(r.verbs))
            for r in rules
        ],
        opts=opts,
    )


def aggregated_role_manifest(
    name: str, aggregate_to: Sequence[str], rules: Sequence[Rule] = (), aggregates: str | None = None
) -> dict[str, Any]:
    """cluster_role's ClusterRole as a manifest, for a component that applies its objects as such."""
    body: dict[str, Any] = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": {AGGREGATE_LABEL.format(target): "true" for target in aggregate_to}},
    }
    if aggregates:
        body["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {AGGREGATE_LABEL.format(aggregates): "true"}}]}
    body["rules"] = [{"apiGroups": list(r.api_groups), "resources": list(r.resources), "verbs": list(r.verbs)} for r in rules]
    return body
