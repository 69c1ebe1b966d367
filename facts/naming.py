"""Names the cluster gets that are derived from stack config, in the one place both the
schema (which rejects a config whose names would collide) and the components (which
create the objects) read them. Imports nothing.

Upstream fact: KFAM's binding names, kubeflow/dashboard components/access-management/
kfam/bindings.go (same in kubeflow/kubeflow v1.10): `User-<email>-ClusterRole-<role>`,
every run of `[^a-zA-Z0-9]` replaced by '-', lowercased. So ana.b@x.com and ana-b@x.com
get one name per role.

Our own derived names are injective where two people must never share one: the
environment variable that carries a Dex static user's password hash.
"""

from __future__ import annotations

import hashlib
import re

_NOT_ALPHANUMERIC = re.compile(r"[^a-zA-Z0-9]+")


def kfam_binding_name(email: str, role: str) -> str:
    """KFAM's name for a contributor binding: `user-<email, non-alphanumerics as ->-clusterrole-<role>`."""
    return contributor_binding_name(email, role)


def contributor_binding_name(who: str, role: str, key: str = "email") -> str:
    """KFAM's name for a person's binding (`key` email), or a group's (`key` group):
    `group-<group>-clusterrole-<role>`, as kubeflow/dashboard PR #317 (open, 2026-06) names it
    with KFAM's function, the subject's kind first."""
    kind = "Group" if key == "group" else "User"
    raw = "-".join([kind, _NOT_ALPHANUMERIC.sub("-", who), "ClusterRole", role]).lower()
    return _NOT_ALPHANUMERIC.sub("-", raw)


# --- Dex password hashes -------------------------------------------------------------
# Dex reads each static user's bcrypt hash from the environment variable its config names
# (dexidp/dex v2.45.0 cmd/dex/config.go, password.UnmarshalJSON: `hashFromEnv`,
# os.Getenv); the variables come from the keys of the `dex-passwords` Secret (kubeflow/
# manifests 26.03 common/dex/base/deployment.yaml, envFrom secretRef). A Secret key is
# `[-._a-zA-Z0-9]+`, at most 253 characters (k8s.io/apimachinery v0.34.0 pkg/util/
# validation IsConfigMapKey); we keep to `[A-Za-z0-9_]`, which every environment-variable
# rule accepts (IsEnvVarName, and POSIX shells).

DEX_PASSWORD_ENV_PREFIX = "DEX_PASSWORD_"
SECRET_KEY_MAX = 253
_KEPT_IN_ENV_NAME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def dex_password_env(email: str) -> str:
    """The environment variable holding `email`'s Dex password hash, one per e-mail by
    construction: letters and digits stay, every other character becomes `_` and the
    hex of its UTF-8 bytes (`.` -> `_2E`, `_` -> `_5F`). Each `_` starts exactly one
    escape, so the name decodes back to the e-mail (tests/test_naming.py decodes it):
    `ana.b@x.com` and `ana-b@x.com`, or two addresses differing in case, never share a
    variable, and so never a password."""
    encoded = "".join(
        char if char in _KEPT_IN_ENV_NAME else "".join(f"_{byte:02X}" for byte in char.encode())
        for char in email
    )
    return DEX_PASSWORD_ENV_PREFIX + encoded


GOOGLE_SERVICE_ACCOUNT_ID = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")
"""A Google service-account id: 6-30 characters matching `[a-z]([-a-z0-9]*[a-z0-9])` (IAM
Admin API v1, CreateServiceAccountRequest.account_id)."""
DNS_LABEL_MAX = 63
"""Kubernetes object names that are DNS labels (RFC 1123): at most 63 characters."""
DIGEST_LENGTH = 6


def bounded_name(name: str, max_length: int, *, prefix: str = "", suffix: str = "") -> str:
    """`<prefix><name><suffix>` when it fits in `max_length`; otherwise `name` shortened to a
    readable start and a short hash of the whole name (so two long names stay apart), with
    `prefix` and `suffix` kept and no '-' left dangling where the name was cut."""
    whole = f"{prefix}{name}{suffix}"
    if len(whole) <= max_length:
        return whole
    room = max_length - len(prefix) - len(suffix) - DIGEST_LENGTH - 1
    if room < 1:
        raise ValueError(f"{prefix!r} and {suffix!r} leave no room for a name in {max_length} characters")
    digest = hashlib.sha256(name.encode()).hexdigest()[:DIGEST_LENGTH]
    return f"{prefix}{name[:room].rstrip('-')}-{digest}{suffix}"


def cut(text: str, max_length: int) -> str:
    """`text` cut to `max_length`, with no '-' left dangling. For ids that are already live
    as a plain cut (the node and GMP accounts): a hash would rename them, and a new node
    account replaces every node pool."""
    return text[:max_length].rstrip("-")


def service_account_id(account_id: str) -> str:
    """`account_id` if it is a valid Google service-account id, else a ValueError naming it."""
    if not GOOGLE_SERVICE_ACCOUNT_ID.match(account_id):
        raise ValueError(f"{account_id!r} is not a Google service-account id: 6-30 of a-z, 0-9, '-', a letter first")
    return account_id


def google_service_account_id(name: str, *, prefix: str = "", suffix: str = "") -> str:
    """The Google service-account id for `name`, long names shortened with a hash (see
    bounded_name); a ValueError if even that is not a valid id."""
    return service_account_id(bounded_name(name, 30, prefix=prefix, suffix=suffix))


# --- Google service-account ids of the stack (every one goes through service_account_id) --


def node_service_account_id(cluster_name: str) -> str:
    """The nodes' service account: `<cluster>-nodes` cut to 30, as it always was (a new id
    would replace every node pool); the cut no longer leaves a trailing '-'."""
    return service_account_id(cut(f"{cluster_name}-nodes", 30))


def gmp_service_account_id(cluster_name: str) -> str:
    """The GMP frontend's account: `<cluster, cut to 20>-gmp-query`, as it always was."""
    return service_account_id(cut(cluster_name, 20) + "-gmp-query")


def team_service_account_id(team_name: str) -> str:
    """The id of a team's Google service account: `team-<name>`, length-safe."""
    return google_service_account_id(team_name, prefix="team-")


# --- Cloud Storage bucket names ---------------------------------------------------------
# Cloud Storage "Bucket naming" (cloud.google.com/storage/docs/buckets#naming, read Nov 2026):
# lowercase letters, digits, '-', '_' and '.'; starts and ends with a letter or digit;
# 3-63 characters, or up to 222 with dots, each dot-separated part at most 63; not an IP
# address in dotted-decimal notation; not starting with "goog"; not containing "google" or
# a close misspelling such as "g00gle".

BUCKET_NAME_MAX = 63
DOTTED_BUCKET_NAME_MAX = 222
_BUCKET_CHARACTERS = re.compile(r"^[a-z0-9][-a-z0-9_.]*[a-z0-9]$")
_DOTTED_DECIMAL = re.compile(r"^[0-9]{1,3}(\.[0-9]{1,3}){3}$")
_GOOGLE_LIKE = re.compile(r"g[o0]{2}g[l1]e")


def team_bucket_name(project: str | None, team_name: str) -> str:
    """A team bucket's default name: `<project>-<team>` (bucket names are global, so the
    project keeps two stacks' teams apart)."""
    return f"{project}-{team_name}"


def bucket_name_problem(name: str) -> str | None:
    """What breaks Cloud Storage's naming rules in `name` (see above), or None."""
    limit = DOTTED_BUCKET_NAME_MAX if "." in name else BUCKET_NAME_MAX
    if not 3 <= len(name) <= limit:
        return f"{len(name)} characters; use 3-63 (up to 222 with dots)"
    if not _BUCKET_CHARACTERS.match(name):
        return "use lowercase letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
    if any(len(part) > BUCKET_NAME_MAX for part in name.split(".")):
        return "each dot-separated part is at most 63 characters"
    if _DOTTED_DECIMAL.match(name):
        return "it reads as an IP address"
    if name.startswith("goog"):
        return "names may not start with 'goog'"
    if _GOOGLE_LIKE.search(name):
        return "names may not contain 'google' or a look-alike"
    return None


def ray_dashboard_path(team: str, cluster: str) -> str:
    """Where a team's Ray dashboard is served through the Kubeflow gateway (and linked in the menu)."""
    return f"/ray/{team}/{cluster}/"


def ray_serve_path(team: str, cluster: str) -> str:
    """Where a team's Ray Serve applications are served through the Kubeflow gateway: an
    app with route_prefix /x answers at <this>x."""
    return f"/ray-serve/{team}/{cluster}/"


def serving_path(team: str, name: str = "") -> str:
    """Where a team's InferenceService `name` answers through the Kubeflow gateway (its predictor's
    own paths below it: /serving/<team>/<name>/v2/models/<model>/infer); without `name`, the
    team's prefix, which the gateway routes to the team's model router (docs/serving.md)."""
    return f"/serving/{team}/{name}/" if name else f"/serving/{team}/"


MODEL_ROUTER = "model-router"
"""Each team's model router (components/profiles/serving.py): its Deployment, Service and its pods'
`app.kubernetes.io/name`, which the routers' monitor selects (components/dashboards/serving.py)."""


def predictor_service(name: str) -> str:
    """The Service KServe makes for the predictor of the InferenceService `name`, which the team's
    router proxies to and which stays while its Deployment is at zero replicas (kserve v0.20.0
    pkg/constants/constants.go PredictorServiceName: `<name>-predictor`)."""
    return f"{name}-predictor"


PUBLISHED_PREFIX = "publishers"
"""KServe's LLM route preset publishes each model at /publishers/<namespace>/models/<model>/...
too (kserve v0.20.0 charts/kserve-runtime-configs files/llmisvcconfigs/resources.yaml,
kserve-config-llm-router-route; pkg/controller/v1alpha2/llmisvc/router_discovery.go: "The
/publishers/ prefix is reserved for controller-managed model-level routes")."""


def llm_prefixes(team: str) -> tuple[str, str]:
    """The path prefixes of a team's LLMs on the gateway, as KServe's route preset writes them:
    /<team>/<name>/v1/... and /publishers/<team>/models/<model>/... (docs/serving.md, "LLMs")."""
    return (f"/{team}/", f"/{PUBLISHED_PREFIX}/{team}/")


TEAM_POD_DEFAULT = "team-resources"
"""Name of each team's PodDefault and the pod label that selects it (components/profiles/pod_default.py);
the Jupyter web app's form preselects it (components/kubeflow.py), so one name in every namespace."""


TEAM_NAMESPACE_SECRETS: dict[str, str] = {
    "mlpipeline-minio-artifact": "the Secret with the team's keys to Pipelines' in-cluster object store "
    "(components/team_pipelines.py OBJECT_STORE_SECRET, the name KFP's launcher and Argo read)",
}
"""Secrets the platform writes into a team's namespace, by name, with what each is. KubeRay
names a team Ray cluster's token Secret after the cluster (components/profiles/ray.py
ray_auth_secret), so no Ray cluster may take one of these names."""
