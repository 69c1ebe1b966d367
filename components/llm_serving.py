"""LLM serving (docs/llm-serving.md): KServe v0.20.0's LLMInferenceService controller in the
`kserve` namespace, its LLMInferenceServiceConfig presets, and what keeps each team's LLM routes
its own.

Read at kserve/kserve tag v0.20.0 (1fb78105) unless said:
- charts/kserve-llmisvc-resources: the controller (cmd/llmisvc), its webhooks on 9443 behind
  `llmisvc-webhook-server-service` with a cert-manager Certificate `llmisvc-serving-cert` whose CA
  cainjector writes into the webhook configurations (`cert-manager.io/inject-ca-from:
  kserve/llmisvc-serving-cert`, written into files/llmisvc/resources.yaml: the release must be in
  `kserve`); `kserve.createSharedResources` renders `inferenceservice-config`, which the controller
  reads from its own namespace (POD_NAMESPACE, pkg/constants/constants.go), and the default
  ClusterStorageContainer. `kserve.llmisvc.createGIECRDs` (default true) would install the
  inference extension's CRDs, InferencePool v1 among them at a release candidate: off, the
  inference gateway installs the release's (components/inference_gateway.py).
- charts/kserve-runtime-configs `kserve.llmisvcConfigs.enabled` renders the well-known presets
  (kserve-config-llm-template, -scheduler, -router-route, -worker-data-parallel, ...) into
  `kserve`; the controller resolves a service's `baseRefs` in its own namespace first, then there
  (pkg/controller/v1alpha2/llmisvc/config_merge.go getConfig). Installed here as a second release
  of that chart with its serving runtimes off, so the `serving` component's own release of it
  stays the runtimes' (docs/serving.md).
- The route: the preset `kserve-config-llm-router-route` attaches an HTTPRoute of the service's
  namespace to the Gateway `ingress.kserveIngressGateway` names (config_loader.go NewConfig,
  `<namespace>/<name>`), on paths `/<namespace>/<name>/v1/...`. Its model-based rules match a
  header (`X-Gateway-Model-Name: publishers/<namespace>/models/<model>`) on `/v1/...` of no
  namespace, which the teams' path-based role checks cannot see: `ingress.modelBasedRoutingMode:
  disabled` strips them (config_merge.go isModelBasedRoutingEnabled, stripModelBasedRoutingRules).
- KServe creates whatever HTTPRoute spec a service names (`spec.router.route.http.spec`,
  router.go expectedHTTPRoute), so an editor of one team could route another team's prefix, or
  `/`, to their model: the ValidatingAdmissionPolicy below keeps every HTTPRoute of a team
  namespace on that namespace's own prefix, whoever writes it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from components.access import EMAIL_CLAIM, GATEWAY_SELECTOR, SECURITY_API, identities
from components.inference_gateway import GATEWAY, InferenceGatewayArgs, gateway_object, inference_gateway_args
from components.istio import GATEWAY_NAMESPACE
from facts.admission import deny_binding, fail_closed_policy
from facts.labels import PROFILE_NAMESPACE_LABEL
from facts.versions import KSERVE_LLMISVC_CHART, KSERVE_LLMISVC_CRD_CHART, KSERVE_RUNTIMES_CHART
from infra.cluster import Cluster
from plumbing.base import ChartArgs, PlatformComponent, apply_manifest, matches
from plumbing.charts import ChartValues, Hint, Relied, built_by, exactly
from plumbing.installation import NO_SECRETS, Installation, Secrets
from plumbing.readiness import Readiness
from plumbing.roles import VERBS_READ, Rule, cluster_role
from stackmodel.components.llm_serving import LLM_SERVING, PUBLISHED_PREFIX
from stackmodel.stack import PlatformConfig

NAMESPACE = "kserve"
"""The controller's namespace: the one its webhook configurations name (see above), and serving's."""
CONFIG_MAP = "inferenceservice-config"
INGRESS_KEY = "ingress"
MODEL_BASED_ROUTING_DISABLED = "disabled"
"""kserve v0.20.0 pkg/controller/v1alpha2/llmisvc/config_merge.go ModelBasedRoutingDisabled."""
TEAM_CONFIG = "team-llm"
"""Each team's LLMInferenceServiceConfig, which a service names in `baseRefs` (examples/llm_openai.py)."""
NO_SIDECAR = {"sidecar.istio.io/inject": "false"}
MODEL_CLIENT = "model-client"
"""The team service account whose tokens programs query the team's models with (the serving
component's, docs/serving.md "Programs": a token of that account, of the serving audience)."""
ROUTES_POLICY = "llm-routes-own-prefix"
LLM_RESOURCES = ("llminferenceservices", "llminferenceserviceconfigs")
EDIT_RULES = (Rule(("serving.kserve.io",), LLM_RESOURCES, ("get", "list", "watch", "create", "delete", "deletecollection", "patch", "update")),)
VIEW_RULES = (Rule(("serving.kserve.io",), LLM_RESOURCES, VERBS_READ),)
GATEWAY_API = "gateway.networking.k8s.io"


def gateway_ref() -> str:
    """`<namespace>/<name>` of the inference gateway, as `ingress.kserveIngressGateway` takes it."""
    return f"{GATEWAY_NAMESPACE}/{GATEWAY}"


def llmisvc_values() -> dict[str, Any]:
    """kserve-llmisvc-resources: the platform's gateway, no inference-extension CRDs of the chart's,
    the pinned controller image pulled once."""
    return {
        "kserve": {
            "controller": {"gateway": {"ingressGateway": {"kserveGateway": gateway_ref()}}},
            "llmisvc": {"createGIECRDs": False, "controller": {"imagePullPolicy": "IfNotPresent"}},
        }
    }


def presets_values() -> dict[str, Any]:
    """kserve-runtime-configs as the presets' release: the LLMInferenceServiceConfigs, no serving runtime."""
    return {"kserve": {"servingruntime": {"enabled": False}, "llmisvcConfigs": {"enabled": True}}}


def with_path_routing_only(props: dict[str, Any]) -> dict[str, Any] | None:
    """inferenceservice-config with model-based (header) routing off; None for other objects."""
    if not matches(props, "ConfigMap", CONFIG_MAP):
        return None
    data = dict(props.get("data") or {})
    ingress = json.loads(data.get(INGRESS_KEY) or "{}")
    ingress["modelBasedRoutingMode"] = MODEL_BASED_ROUTING_DISABLED
    data[INGRESS_KEY] = json.dumps(ingress, indent=2, sort_keys=True)
    return {**props, "data": data}


def team_prefixes(namespace: str) -> tuple[str, str]:
    """The path prefixes of a team's LLM routes, as KServe's router-route preset writes them:
    `/<namespace>/<name>/v1/...` and `/publishers/<namespace>/models/<model>/...`."""
    return (f"/{namespace}/", f"/{PUBLISHED_PREFIX}/{namespace}/")


def routes_policy() -> dict[str, Any]:
    """Every HTTPRoute of a team namespace matches paths of its own prefixes only: each rule has
    matches, each match a path of type PathPrefix or Exact under team_prefixes (the CRD defaults
    a rule without matches to PathPrefix `/` before admission policies run, so that is refused
    too; a RegularExpression could match any path)."""
    rules = [{"apiGroups": [GATEWAY_API], "apiVersions": ["*"], "resources": ["httproutes"], "operations": ["CREATE", "UPDATE"]}]
    variables = [
        {"name": "own", "expression": "'/' + object.metadata.namespace + '/'"},
        {"name": "published", "expression": f"'/{PUBLISHED_PREFIX}/' + object.metadata.namespace + '/'"},
    ]
    validations = [
        {
            "expression": (
                "!has(object.spec.rules) || object.spec.rules.all(r, has(r.matches) && size(r.matches) > 0 && "
                "r.matches.all(m, has(m.path) && has(m.path.value) && has(m.path.type) && "
                "(m.path.type == 'PathPrefix' || m.path.type == 'Exact') && "
                "(m.path.value.startsWith(variables.own) || m.path.value.startsWith(variables.published))))"
            ),
            "messageExpression": (
                "'an HTTPRoute of namespace ' + object.metadata.namespace + ' may match paths under ' + variables.own + ' and ' + "
                "variables.published + ' only (PathPrefix or Exact): the gateway checks that team\\'s roles there (docs/llm-serving.md)'"
            ),
        }
    ]
    return fail_closed_policy(ROUTES_POLICY, rules, [], validations, variables)


def routes_binding() -> dict[str, Any]:
    """The policy in force in every team namespace."""
    key, value = PROFILE_NAMESPACE_LABEL
    return deny_binding(ROUTES_POLICY, ROUTES_POLICY, {"matchLabels": {key: value}})


def team_config(namespace: str) -> dict[str, Any]:
    """The team's LLMInferenceServiceConfig: its LLM pods and its endpoint picker without Istio's
    sidecar. The role check is the gateway's (llm_gateway_policy), not the pods': vLLM's
    data-parallel RPC and NCCL between an LWS group's pods do not pass a sidecar (as the training
    runtimes keep it out), the gateway calls the endpoint picker over ext_proc, which carries no
    `kubeflow-userid` header a namespace's ALLOW policies could match, and the namespace's
    viewers-read-only DENY would refuse a viewer's query, a POST. KServe puts `spec.annotations`
    on the workload's pods and `spec.router.scheduler.annotations` on the picker's
    (pkg/controller/v1alpha2/llmisvc workload_single_node.go, workload_multi_node.go:264-268,
    scheduler.go:488-489)."""
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceServiceConfig",
        "metadata": {"name": TEAM_CONFIG, "namespace": namespace},
        "spec": {"annotations": dict(NO_SIDECAR), "router": {"scheduler": {"annotations": dict(NO_SIDECAR)}}},
    }


def llm_gateway_policy(namespace: str, readers: Sequence[str]) -> dict[str, Any]:
    """At the gateway: nobody but the team's people (any role: viewers query, a query is a POST)
    and the team's model client reaches the team's LLM prefix. A token's principal is
    `<issuer>/<sub>`, the model client's sub `system:serviceaccount:<namespace>:model-client`
    (Istio matches a principal by suffix with a leading `*`)."""
    spec = {
        "action": "DENY",
        "selector": {"matchLabels": dict(GATEWAY_SELECTOR)},
        "rules": [
            {
                "from": [{"source": {"notRequestPrincipals": [f"*/system:serviceaccount:{namespace}:{MODEL_CLIENT}"]}}],
                "to": [{"operation": {"paths": [prefix + "*" for prefix in team_prefixes(namespace)]}}],
                "when": [{"key": EMAIL_CLAIM, "notValues": identities(readers)}],
            }
        ],
    }
    return {
        "apiVersion": SECURITY_API,
        "kind": "AuthorizationPolicy",
        "metadata": {"name": f"team-{namespace}-llm", "namespace": GATEWAY_NAMESPACE},
        "spec": spec,
    }


@dataclass(frozen=True)
class LlmServingArgs(ChartArgs):
    crd_values: Mapping[str, Any]
    presets_values: Mapping[str, Any]
    gateway: InferenceGatewayArgs
    """The inference gateway's settings: the Gateway this component makes for the routes."""


class LlmServing(PlatformComponent):
    """KServe's LLM controller, its presets and the route policy."""

    ready: pulumi.Resource
    """Done when the controller and its webhooks are ready."""

    def __init__(self, name: str, args: LlmServingArgs, cluster: Cluster, needs: list[pulumi.Resource], opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts, args.sources)
        namespace = self.create_namespace(NAMESPACE)
        crds = self.chart("kserve-llmisvc-crd", KSERVE_LLMISVC_CRD_CHART, NAMESPACE, {}, [namespace], overlay=args.crd_values)
        self.ready = self.chart(
            "kserve-llmisvc-resources",
            KSERVE_LLMISVC_CHART,
            NAMESPACE,
            llmisvc_values(),
            [namespace, crds, *needs],
            transforms=(with_path_routing_only,),
            overlay=args.values,
        )
        self.chart(
            "kserve-runtime-configs", KSERVE_RUNTIMES_CHART, NAMESPACE, presets_values(), [namespace, crds, self.ready], overlay=args.presets_values
        )
        # The Gateway the routes attach to, in the ingress gateway's namespace (Istio's), before the
        # controller looks it up for its first route.
        apply_manifest(GATEWAY, gateway_object(args.gateway), self.child(needs))
        # Kubeflow's roles: editors deploy LLMs in their team's namespace, viewers read them (the
        # charts carry no such roles; kserve v0.20.0 config/overlays/kubeflow/cluster-role.yaml lists
        # the same resources for Kubeflow's own KServe install).
        cluster_role("kubeflow-llm-edit", ("kubeflow-edit",), EDIT_RULES, opts=self.child())
        cluster_role("kubeflow-llm-view", ("kubeflow-view",), VIEW_RULES, opts=self.child())
        policy = apply_manifest(ROUTES_POLICY, routes_policy(), self.child())
        apply_manifest(f"{ROUTES_POLICY}-binding", routes_binding(), self.child([policy]))
        self.register_outputs({"ready": self.ready.urn})


def llm_serving_args(config: PlatformConfig, secrets: Secrets = NO_SECRETS) -> LlmServingArgs:
    settings = config.components[LLM_SERVING]
    return LlmServingArgs(
        sources=config.sources,
        values=settings.values,
        crd_values=settings.crd_values,
        presets_values=settings.presets_values,
        gateway=inference_gateway_args(config),
    )


def _install(args: LlmServingArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return LlmServing("llm-serving", args, cluster, ready.resources(LLM_SERVING.needs, "LLM serving"))


RELIED = (
    Relied(("kserve", "createSharedResources"), exactly(True), "kserve.createSharedResources true, the chart's default",
           "values.yaml, templates/common/configmap.yaml", "the controller reads inferenceservice-config from its own namespace"),
    Relied(("kserve", "certManager", "enabled"), lambda v: v in ("", True, None), "kserve.certManager.enabled unset, so createSharedResources",
           "values.yaml, templates/common/certmanager.yaml", "the webhooks' certificate is cert-manager's (the chart's Issuer and Certificate)"),
)
HINTS = (
    Hint(("kserve", "controller", "gateway", "ingressGateway", "kserveGateway"), "the teams' LLM routes attach to the platform's inference gateway"),
    Hint(("kserve", "llmisvc", "createGIECRDs"), "the inference extension's CRDs are the inference gateway's (its pinned release), "
         "not the chart's release candidate"),
    Hint(("kserve", "llmisvc", "controller", "imagePullPolicy"), "the controller's image is pinned (facts/versions.py)"),
)

INSTALLATION = Installation(
    LLM_SERVING,
    llm_serving_args,
    _install,
    charts=(
        ChartValues("values", KSERVE_LLMISVC_CHART, lambda args: llmisvc_values(), lambda args: args.values, built_by(llmisvc_values), relied=RELIED, hints=HINTS),
        ChartValues("crdValues", KSERVE_LLMISVC_CRD_CHART, lambda args: {}, lambda args: args.crd_values, "components/llm_serving.py: no values of its own"),
        ChartValues("presetsValues", KSERVE_RUNTIMES_CHART, lambda args: presets_values(), lambda args: args.presets_values, built_by(presets_values),
                    hints=(Hint(("kserve",), "this release of the chart holds the LLM presets alone; the serving runtimes are the serving component's"),)),
    ),
)
