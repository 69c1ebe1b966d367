"""Names the cluster gets that are derived from stack config, in the one place both the
schema (which rejects a config whose names would collide) and the components (which
create the objects) read them. Imports nothing.

Upstream fact: KFAM's binding names, kubeflow/dashboard components/access-management/
kfam/bindings.go (same in kubeflow/kubeflow v1.10): `User-<email>-ClusterRole-<role>`,
every run of `[^a-zA-Z0-9]` replaced by '-', lowercased. So ana.b@x.com and ana-b@x.com
get one name per role.
"""

from __future__ import annotations

import re

_NOT_ALPHANUMERIC = re.compile(r"[^a-zA-Z0-9]+")


def kfam_binding_name(email: str, role: str) -> str:
    """KFAM's name for a contributor binding: `user-<email, non-alphanumerics as ->-clusterrole-<role>`."""
    raw = "-".join(["User", _NOT_ALPHANUMERIC.sub("-", email), "ClusterRole", role]).lower()
    return _NOT_ALPHANUMERIC.sub("-", raw)
