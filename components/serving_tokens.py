"""The model clients' tokens at the Kubeflow gateway (components/serving.py installs them): a team's
programs query its models with a token of its `model-client` service account, which the gateway
verifies and lets through to that team's paths alone (docs/serving.md, "Who may query").

The gateway takes a bearer JWT in place of a session (kubeflow/community-distribution 26.03.1-rc.2
common/oauth2-proxy/components/istio-external-auth: oauth2-proxy's CUSTOM policy skips requests
with an Authorization header, and the require-jwt DENY wants a request principal from a
RequestAuthentication; istio-m2m's RequestAuthentication trusts a cluster issuer and writes the
token's `sub` into kubeflow-userid). Kubeflow's m2m trusts every token of the cluster; this trusts
one audience and one service account per team on that team's prefixes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from components.access import USER_HEADER
from facts.naming import llm_prefixes, serving_path
from stackmodel.components.serving import SERVING
from stackmodel.schema import GkeClusterConfig
from stackmodel.stack import PlatformConfig

MODEL_CLIENT = "model-client"
"""The service account whose tokens a team's programs query its models with: no Kubernetes rights."""
def service_account_user(namespace: str, account: str) -> str:
    """A service account's username, which its token's `sub` claim holds (Kubernetes
    ServiceAccount token: sub = system:serviceaccount:<namespace>:<name>)."""
    return f"system:serviceaccount:{namespace}:{account}"


SERVING_TOKENS = "serving-tokens"


def _team_paths(team: str, llm: bool) -> list[str]:
    """Where a team's model client may go: its models' prefix, and with LLMs its LLM prefixes."""
    return [serving_path(team) + "*", *((prefix + "*" for prefix in llm_prefixes(team)) if llm else ())]


def gateway_token_objects(
    gateway_namespace: str, gateway_selector: dict[str, str], issuer: str, jwks_uri: str, audience: str, teams: Sequence[str], llm: bool = False
) -> list[dict[str, Any]]:
    """At the gateway: the cluster's tokens of `audience` verified (their `sub` into kubeflow-userid,
    as Kubeflow's istio-m2m does), and refused unless they are a team's model client on that
    team's prefixes (its models', and with `llm` its LLMs': facts/naming.py llm_prefixes)."""
    authentication = {
        "apiVersion": "security.istio.io/v1",
        "kind": "RequestAuthentication",
        "metadata": {"name": SERVING_TOKENS, "namespace": gateway_namespace},
        "spec": {
            "selector": {"matchLabels": dict(gateway_selector)},
            "jwtRules": [
                {
                    "issuer": issuer,
                    "jwksUri": jwks_uri,
                    "audiences": [audience],
                    "forwardOriginalToken": False,
                    "outputClaimToHeaders": [{"header": USER_HEADER, "claim": "sub"}, {"header": "kubeflow-groups", "claim": "groups"}],
                    "fromHeaders": [{"name": "Authorization", "prefix": "Bearer "}],
                }
            ],
        },
    }
    clients = [f"{issuer}/{service_account_user(team, MODEL_CLIENT)}" for team in teams]
    rules: list[dict[str, Any]] = [{"from": [{"source": {"requestPrincipals": [f"{issuer}/*"], "notRequestPrincipals": clients}}]}]
    rules += [
        {
            "from": [{"source": {"requestPrincipals": [client]}}],
            "to": [{"operation": {"notPaths": _team_paths(team, llm)}}],
        }
        for team, client in zip(teams, clients, strict=True)
    ]
    deny = {
        "apiVersion": "security.istio.io/v1",
        "kind": "AuthorizationPolicy",
        "metadata": {"name": SERVING_TOKENS, "namespace": gateway_namespace},
        "spec": {"action": "DENY", "selector": {"matchLabels": dict(gateway_selector)}, "rules": rules},
    }
    return [authentication, deny]


def gke_issuer(project: str, location: str, cluster: str) -> str:
    """The issuer of a GKE cluster's service-account tokens; its keys are at `<issuer>/jwks`
    (cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters/getJwks,
    .well-known/getOpenid-configuration: `container.googleapis.com/v1/{parent}/...`)."""
    return f"https://container.googleapis.com/v1/projects/{project}/locations/{location}/clusters/{cluster}"


@dataclass(frozen=True)
class TokenIssuer:
    """Where the gateway verifies the teams' model-client tokens."""

    issuer: str
    jwks_uri: str


def token_issuer_args(config: PlatformConfig) -> TokenIssuer | None:
    """Where the gateway verifies the model clients' tokens: a GKE cluster's issuer where serving
    is on; None where it is off, and on kind (ServingArgs.issuer). Kubeflow's allowed-identities
    rule leaves this issuer's tokens to serving-tokens' DENY (components/kubeflow.py)."""
    cluster = config.cluster
    if not config.components[SERVING].enabled or not isinstance(cluster, GkeClusterConfig):
        return None
    found = gke_issuer(config.project or "", cluster.location, cluster.name)
    return TokenIssuer(found, f"{found}/jwks")
