"""What Kubeflow's profile controller creates at run time for each Profile, which no render
holds, modelled from its code (kubeflow/dashboard v2.0.0 components/profile-controller/
controllers/profile_controller.go, Reconcile and updateServiceAccount): the owner (the
Profile's `spec.owner` subject) bound as `namespaceAdmin` to kubeflow-admin, and the
namespace's service accounts `default-editor` (what notebooks and pipelines run as) to
kubeflow-edit and `default-viewer` to kubeflow-view, each by a RoleBinding of its own name;
and the namespace's ResourceQuota `kf-resource-quota` of the Profile's resourceQuotaSpec."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RBAC_GROUP = "rbac.authorization.k8s.io"


def _binding(namespace: str, name: str, role: str, subject: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": namespace},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
        "subjects": [subject],
    }


def profile_bindings(owners: Mapping[str, str]) -> list[dict[str, Any]]:
    """The run-time RoleBindings of each profile namespace; `owners`: namespace -> owner e-mail."""
    found = []
    for namespace, owner in owners.items():
        found.append(_binding(namespace, "namespaceAdmin", "kubeflow-admin", {"apiGroup": RBAC_GROUP, "kind": "User", "name": owner}))
        for account, role in (("default-editor", "kubeflow-edit"), ("default-viewer", "kubeflow-view")):
            found.append(_binding(namespace, account, role, {"kind": "ServiceAccount", "name": account, "namespace": namespace}))
    return found


def profile_owners(objects: list[dict[str, Any]]) -> dict[str, str]:
    """Profile (its namespace) -> owner, from a render's objects."""
    return {o["metadata"]["name"]: o["spec"]["owner"]["name"] for o in objects if o["kind"] == "Profile"}


RESOURCE_QUOTA = "kf-resource-quota"


def profile_quota(profile: Mapping[str, Any]) -> dict[str, Any]:
    """The ResourceQuota the controller makes in the Profile's namespace from its
    `resourceQuotaSpec` (Reconcile: the quota named kf-resource-quota, its spec that one)."""
    name = profile["metadata"]["name"]
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": RESOURCE_QUOTA, "namespace": name},
        "spec": dict(profile["spec"]["resourceQuotaSpec"]),
    }
