"""Serving's LLM half (components/serving.py installs it with `serving.llm`): KServe v0.20.0's
LLMInferenceService controller beside the InferenceService one, in `kserve`, and what keeps each
team's LLM routes its own (docs/serving.md, "LLMs"). Team-side objects are in
components/profiles/serving.py.

Read at kserve/kserve tag v0.20.0 (1fb78105) unless said:
- charts/kserve-llmisvc-resources: the controller (cmd/llmisvc), its webhooks on 9443 behind
  `llmisvc-webhook-server-service` with a cert-manager Certificate `llmisvc-serving-cert` from the
  Issuer `selfsigned-issuer`, whose CA cainjector writes into the webhook configurations
  (`cert-manager.io/inject-ca-from: kserve/llmisvc-serving-cert`, written into
  files/llmisvc/resources.yaml: the release must be in `kserve`). `kserve.createSharedResources`
  (default true) renders the `inferenceservice-config` ConfigMap, the default
  ClusterStorageContainer and that Issuer, the very objects kserve-resources renders with
  `kserve.certManager.enabled`: off here, so each is kserve-resources' alone, and the controller
  reads that ConfigMap (pkg/controller/v1alpha2/llmisvc/config_loader.go LoadConfig:
  constants.KServeNamespace). `kserve.llmisvc.createGIECRDs` (default true) would install the
  inference extension's CRDs, InferencePool v1 among them at a release candidate: off, the
  inference gateway installs the release's (components/inference_gateway.py).
- charts/kserve-runtime-configs `kserve.llmisvcConfigs.enabled` renders the well-known presets
  (kserve-config-llm-template, -scheduler, -router-route, -worker-data-parallel, ...) into
  `kserve`, in serving's one release of that chart, after this controller: its webhooks validate
  every LLMInferenceServiceConfig (failurePolicy Fail). The controller resolves a service's
  `baseRefs` in its own namespace first, then there (config_merge.go getConfig).
- The route: the preset `kserve-config-llm-router-route` attaches an HTTPRoute of the service's
  namespace to the Gateway `ingress.kserveIngressGateway` names (config_loader.go NewConfig,
  `<namespace>/<name>`), on paths `/<namespace>/<name>/v1/...` and
  `/publishers/<namespace>/models/<model>/v1/...`. Its model-based rules match a header
  (`X-Gateway-Model-Name: publishers/<namespace>/models/<model>`) on `/v1/...` of no namespace,
  which the teams' path-based role checks cannot see: `ingress.modelBasedRoutingMode: disabled`
  strips them (config_merge.go isModelBasedRoutingEnabled, stripModelBasedRoutingRules), as does
  the Gateway's own annotation (components/inference_gateway.py).
- KServe creates whatever HTTPRoute spec a service names (`spec.router.route.http.spec`,
  router.go expectedHTTPRoute), so an editor of one team could route another team's prefix, or
  `/`, to their model: the ValidatingAdmissionPolicy below keeps every HTTPRoute of a team
  namespace on that namespace's own prefixes, whoever writes it (it has no matchConditions: KServe's
  controller, which writes the route in the service's namespace, router.go expectedHTTPRoute, is
  held like the team).
- The backends too: istiod sends a route to a backendRef of kind `Hostname` (group
  networking.istio.io) by its name alone, any Service of the mesh, with no ReferenceGrant
  (istio/istio 1.30.3 pilot/pkg/config/kube/gateway/conversion.go buildDestination: the grant is
  checked only for a backendRef that sets a namespace, and Hostname may set none). On a team's
  own prefix, behind that team's role check, such a route would reach another team's LLM pods
  (no sidecar; their namespace takes the gateway's traffic) or a platform Service as the
  gateway: every backendRef of a team's route, and of its RequestMirror filters, is a Service or
  an InferencePool of the route's own namespace.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pulumi

from components.inference_gateway import GATEWAY, InferenceGatewayArgs, gateway_object
from components.istio import GATEWAY_NAMESPACE
from components.serving_runtimes import SERVING_API
from facts.admission import SPEC_CHANGED, fail_closed_policy, teams_binding
from facts.naming import PUBLISHED_PREFIX
from facts.versions import KSERVE_LLMISVC_CHART, KSERVE_LLMISVC_CRD_CHART
from plumbing.base import PlatformComponent, apply_manifest, matches
from plumbing.charts import ChartValues, Hint, Relied, built_by

LLM_CRDS_OMITTED = ("templates/serving.kserve.io_clusterstoragecontainers.yaml",)
"""kserve-llmisvc-crd's template of the ClusterStorageContainer CRD, which kserve-crd renders too
(charts/kserve-{crd,llmisvc-crd} templates/serving.kserve.io_clusterstoragecontainers.yaml: one file
behind a `lookup` a Helm release of another name would skip it by; Pulumi makes no release): left
out of the LLM CRDs' install (plumbing/postrender.py), kserve-crd's is the one."""
CONFIG_MAP = "inferenceservice-config"
INGRESS_KEY = "ingress"
MODEL_BASED_ROUTING_DISABLED = "disabled"
"""kserve v0.20.0 pkg/controller/v1alpha2/llmisvc/config_merge.go ModelBasedRoutingDisabled."""
ROUTES_POLICY = "llm-routes-own-prefix"
GATEWAY_API = "gateway.networking.k8s.io"


def gateway_ref() -> str:
    """`<namespace>/<name>` of the inference gateway, as `ingress.kserveIngressGateway` takes it."""
    return f"{GATEWAY_NAMESPACE}/{GATEWAY}"


def ingress_gateway_values() -> dict[str, Any]:
    """kserve-resources' share of the LLM half: `inferenceservice-config`'s `kserveIngressGateway`
    (files/common/configmap-patch.yaml, from kserve.controller.gateway.ingressGateway.kserveGateway)
    names the platform's inference gateway."""
    return {"kserve": {"controller": {"gateway": {"ingressGateway": {"kserveGateway": gateway_ref()}}}}}


def llmisvc_values() -> dict[str, Any]:
    """kserve-llmisvc-resources: no shared resources (kserve-resources' are the ones), no
    inference-extension CRDs of the chart's, the pinned controller image pulled once."""
    return {
        "kserve": {
            "createSharedResources": False,
            "llmisvc": {"createGIECRDs": False, "controller": {"imagePullPolicy": "IfNotPresent"}},
        }
    }


def presets_values() -> dict[str, Any]:
    """kserve-runtime-configs' share of the LLM half: the LLMInferenceServiceConfig presets."""
    return {"kserve": {"llmisvcConfigs": {"enabled": True}}}


def with_path_routing_only(props: dict[str, Any]) -> dict[str, Any] | None:
    """inferenceservice-config with model-based (header) routing off; None for other objects."""
    if not matches(props, "ConfigMap", CONFIG_MAP):
        return None
    data = dict(props.get("data") or {})
    ingress = json.loads(data.get(INGRESS_KEY) or "{}")
    ingress["modelBasedRoutingMode"] = MODEL_BASED_ROUTING_DISABLED
    data[INGRESS_KEY] = json.dumps(ingress, indent=2, sort_keys=True)
    return {**props, "data": data}


def routes_policy() -> dict[str, Any]:
    """What a team namespace may hold of Gateway API (facts/naming.py llm_prefixes):
    - HTTPRoutes that match paths of its own prefixes only: each rule has matches, each match a
      path of type PathPrefix or Exact under them (the CRD defaults a rule without matches, and a
      match without a path, to PathPrefix `/` before admission policies run, so those are refused
      too; a RegularExpression could match any path), attached to the platform's Gateway alone;
    - no Gateway: one of its own (Istio's class deploys a proxy and a LoadBalancer for it, GKE's a
      load balancer; KubeRay makes one for a RayService's incremental upgrade) would publish the
      namespace's Services past the sign-in and the role checks of Kubeflow's gateway."""
    rules = [
        {"apiGroups": [GATEWAY_API], "apiVersions": ["*"], "resources": ["httproutes", "gateways"], "operations": ["CREATE", "UPDATE"]}
    ]
    variables = [
        {"name": "own", "expression": "'/' + object.metadata.namespace + '/'"},
        {"name": "published", "expression": f"'/{PUBLISHED_PREFIX}/' + object.metadata.namespace + '/'"},
        {"name": "route", "expression": "object.kind == 'HTTPRoute'"},
        {"name": "ns", "expression": "object.metadata.namespace"},
    ]
    validations = [
        {
            "expression": "object.kind != 'Gateway'",
            "messageExpression": (
                "'namespace ' + object.metadata.namespace + ' holds no Gateway: a team\\'s routes attach to the platform\\'s "
                f"({GATEWAY_NAMESPACE}/{GATEWAY}), behind its sign-in and the team\\'s role checks (docs/serving.md, LLMs)'"
            ),
        },
        {
            "expression": (
                "!variables.route || !has(object.spec.rules) || object.spec.rules.all(r, has(r.matches) && size(r.matches) > 0 && "
                "r.matches.all(m, has(m.path) && has(m.path.value) && has(m.path.type) && "
                "(m.path.type == 'PathPrefix' || m.path.type == 'Exact') && "
                "(m.path.value.startsWith(variables.own) || m.path.value.startsWith(variables.published))))"
            ),
            "messageExpression": (
                "'an HTTPRoute of namespace ' + object.metadata.namespace + ' may match paths under ' + variables.own + ' and ' + "
                "variables.published + ' only (PathPrefix or Exact): the gateway checks that team\\'s roles there (docs/serving.md)'"
            ),
        },
        {
            "expression": (
                "!variables.route || !has(object.spec.parentRefs) || object.spec.parentRefs.all(p, "
                f"(!has(p.kind) || p.kind == 'Gateway') && (!has(p.group) || p.group == '{GATEWAY_API}') && p.name == '{GATEWAY}' && "
                f"has(p.namespace) && p.namespace == '{GATEWAY_NAMESPACE}')"
            ),
            "messageExpression": (
                "'an HTTPRoute of namespace ' + object.metadata.namespace + ' attaches to the platform\\'s Gateway "
                f"{GATEWAY_NAMESPACE}/{GATEWAY} only (docs/serving.md, LLMs)'"
            ),
        },
        {
            "expression": f"!variables.route || !has(object.spec.rules) || object.spec.rules.all(r, {_backends_own('r')})",
            "messageExpression": (
                "'an HTTPRoute of namespace ' + object.metadata.namespace + ' sends to Services and InferencePools of that "
                "namespace only (no Hostname backend, no other namespace): the gateway checks that team\\'s roles on its "
                "prefixes (docs/serving.md, LLMs)'"
            ),
        },
    ]
    return fail_closed_policy(ROUTES_POLICY, rules, [], validations, variables)


BACKEND_KINDS = (("", "Service"), ("inference.networking.k8s.io", "InferencePool"), ("inference.networking.x-k8s.io", "InferencePool"))
"""What a team's route may send to: a Service (Gateway API's default backendRef kind), or an
InferencePool (v1, and the v1alpha2 group KServe v0.20.0 still writes while it migrates:
pkg/controller/v1alpha2/llmisvc/router.go EvaluateInferencePoolConditions)."""


def _backend_own(ref: str) -> str:
    """CEL: the backendRef `ref` is of BACKEND_KINDS, in the route's own namespace. The CRD defaults
    group to "" and kind to Service before admission policies run."""
    kinds = " || ".join(
        f"((has({ref}.group) ? {ref}.group : '') == '{group}' && (has({ref}.kind) ? {ref}.kind : 'Service') == '{kind}')"
        for group, kind in BACKEND_KINDS
    )
    return f"((!has({ref}.namespace) || {ref}.namespace == variables.ns) && ({kinds}))"


def _mirrors_own(filters: str) -> str:
    """CEL: every RequestMirror filter of the list `filters` mirrors to a backend _backend_own allows."""
    return f"(!has({filters}) || {filters}.all(f, !has(f.requestMirror) || {_backend_own('f.requestMirror.backendRef')}))"


def _backends_own(rule: str) -> str:
    """CEL: every backendRef of the route rule `rule`, and every mirror of it and of its backends."""
    return (
        f"(!has({rule}.backendRefs) || {rule}.backendRefs.all(b, {_backend_own('b')} && {_mirrors_own('b.filters')})) && "
        f"{_mirrors_own(f'{rule}.filters')}"
    )


def routes_binding() -> dict[str, Any]:
    """The policy in force in every team namespace."""
    return teams_binding(ROUTES_POLICY)


# --- replicas: the stack's floor and ceiling on LLMs -------------------------------------------
# What KServe v0.20.0's LLM controller does with replicas (pkg/controller/v1alpha2/llmisvc/ unless
# said; docs/serving.md, "Limits (LLMs)"):
# - `spec.replicas` and `spec.prefill.replicas` are the replicas of the Deployment `<name>-kserve`
#   (`-kserve-prefill`) or, with `worker`, of the LeaderWorkerSet, whose every replica is a group of
#   pods (workload_single_node.go:123,244; workload_multi_node.go:171,328). Unset, the workload's is
#   unset too: 1 when it is made (Kubernetes' pkg/apis/apps/v1/defaults.go SetDefaults_Deployment;
#   lws v0.8.0 crds/leaderworkerset.x-k8s.io_leaderworkersets.yaml `replicas` default 1), what it
#   holds afterwards (workload.go:219-237 PreserveDeploymentReplicas, PreserveLWSReplicas).
# - It reads the service's spec merged over its `baseRefs`, the service's own fields first
#   (controller.go:277-287; pkg/apis/serving/v1alpha2/llm_inference_service_types.go:121-125): a
#   team's LLMInferenceServiceConfig may carry replicas (KServe's sample docs/samples/llmisvc/
#   e2e-gpt-oss/llmisvc_config_pd_disagg.yaml does), so the configs of team namespaces are held
#   too, where they set them.
# - `scaling` is llm-d's Workload Variant Autoscaler's alone: the CRD wants `wva` in it, and `hpa`
#   or `keda` in that (llm_inference_service_types.go:495,537-538); the controller makes a
#   VariantAutoscaling (llmd.ai/v1alpha1) per workload and an HPA or a KEDA ScaledObject on the
#   `wva_desired_replicas` WVA publishes (scaling.go:49-56,125-135,168-207,377-418,455-467). The
#   platform installs no WVA: the VariantAutoscaling kind is unknown, the controller marks the
#   workload `ScalingCRDNotFound` and stops before the route (workload.go:96-107), and nothing
#   would publish the metric. So `scaling` is refused where a team writes it, naming `replicas`.
# - The controller writes the object itself only to add and remove its finalizer (controller.go:
#   197-222, r.Update) and, at start, the storage migration's empty patch of every service and
#   config (cmd/llmisvc/main.go:345-370; knative.dev/pkg apiextensions/storageversion migrator.go:
#   99-100); the rest goes to the status subresource, which the policy does not match. The policy
#   judges a create and a change of the spec only (facts/admission.py SPEC_CHANGED): a service made
#   before the stack narrowed its bounds is still deleted, its finalizer removed.
LLM_REPLICA_BOUNDS = "serving-llm-replica-bounds"
LLM_VERSIONS = ["v1alpha1", "v1alpha2"]
"""Both served by the CRDs (kserve-llmisvc-crd v0.20.0), with the same fields: a policy naming both
judges each request as sent, with no call to the conversion webhook."""


def _bounds(path: str, variable: str, given: str, lowest: int, highest: int) -> list[dict[str, str]]:
    """The floor and ceiling on `variables.<variable>`, the replicas of the field `path` (CEL
    `given`: whether it is set)."""
    said = f"'{path} ' + string(variables.{variable}[0]) + ({given} ? '' : ' (unset)')"
    return [
        {
            "expression": f"variables.{variable}.all(r, r >= {lowest})",
            "messageExpression": f"{said} + ' is below the platform\\'s floor of {lowest} replicas'",
        },
        {
            "expression": f"variables.{variable}.all(r, r <= {highest})",
            "messageExpression": f"{said} + ' is above the platform\\'s ceiling of {highest} replicas (with worker, each one a LeaderWorkerSet group)'",
        },
    ]


def _no_scaling(path: str, expression: str, lowest: int, highest: int) -> dict[str, str]:
    """`path` (a `scaling`) refused, saying why and to set the `replicas` beside it instead."""
    replicas = path.removesuffix("scaling") + "replicas"
    return {
        "expression": expression,
        "message": (
            f"{path}: KServe {KSERVE_LLMISVC_CHART.version} autoscales an LLMInferenceService only through llm-d's Workload Variant Autoscaler "
            "(a VariantAutoscaling and an actuator on its wva_desired_replicas), which this platform does not install: "
            f"the service would stop at ScalingCRDNotFound. Set {replicas} instead, from {lowest} to {highest} here "
            "(docs/serving.md, Limits (LLMs))"
        ),
    }


def llm_replica_bounds_policy(lowest: int, highest: int) -> dict[str, Any]:
    """The ValidatingAdmissionPolicy on LLMInferenceServices and their configs: the main and the
    prefill workload's replicas from `lowest` to `highest` (the stack's serving.replicas, as for
    InferenceServices), and no `scaling`."""
    rules = [
        {
            "apiGroups": [SERVING_API],
            "apiVersions": LLM_VERSIONS,
            "resources": ["llminferenceservices", "llminferenceserviceconfigs"],
            "operations": ["CREATE", "UPDATE"],
        }
    ]
    # Each workload's replicas as the controller takes them, in a list: [n], or [] where a config
    # leaves them to the service or another config (a service's unset replicas is 1).
    unset = "(variables.service ? [1] : [])"
    variables = [
        {"name": "service", "expression": "object.kind == 'LLMInferenceService'"},
        {"name": "main", "expression": f"has(object.spec) && has(object.spec.replicas) ? [object.spec.replicas] : {unset}"},
        {
            "name": "prefill",
            "expression": (
                "!has(object.spec) || !has(object.spec.prefill) ? [] : "
                f"has(object.spec.prefill.replicas) ? [object.spec.prefill.replicas] : {unset}"
            ),
        },
    ]
    validations = [  # scaling first: with it, replicas are unset (the CRD has them exclusive)
        _no_scaling("spec.scaling", "!has(object.spec) || !has(object.spec.scaling)", lowest, highest),
        _no_scaling(
            "spec.prefill.scaling", "!has(object.spec) || !has(object.spec.prefill) || !has(object.spec.prefill.scaling)", lowest, highest
        ),
        *_bounds("spec.replicas", "main", "has(object.spec) && has(object.spec.replicas)", lowest, highest),
        *_bounds("spec.prefill.replicas", "prefill", "has(object.spec.prefill.replicas)", lowest, highest),
    ]
    return fail_closed_policy(LLM_REPLICA_BOUNDS, rules, [SPEC_CHANGED], validations, variables)


def llm_replica_bounds_binding() -> dict[str, Any]:
    """The policy in force in every team namespace."""
    return teams_binding(LLM_REPLICA_BOUNDS)


# What the platform needs of kserve-llmisvc-resources' values beyond what it sets (plumbing/charts.py):
# each shared resource follows createSharedResources unless its own switch is set (templates/common/
# certmanager.yaml, configmap.yaml, clusterstoragecontainer.yaml: `.enabled | default
# .Values.kserve.createSharedResources`).
RELIED = tuple(
    Relied(("kserve", *key), lambda v: v in ("", None, False), f"kserve.{'.'.join(key)} unset, the chart's default",
           f"values.yaml, templates/common/{template}", f"{what} is kserve-resources' alone")
    for key, template, what in (
        (("certManager", "enabled"), "certmanager.yaml", "the Issuer selfsigned-issuer"),
        (("inferenceServiceConfig", "enabled"), "configmap.yaml", "inferenceservice-config"),
        (("storagecontainer", "enabled"), "clusterstoragecontainer.yaml", "the default ClusterStorageContainer"),
    )
)
HINTS = (
    Hint(("kserve", "createSharedResources"), "inferenceservice-config, the default ClusterStorageContainer and the Issuer are "
         "kserve-resources' (serving.values); a second copy would be the same objects twice"),
    Hint(("kserve", "llmisvc", "createGIECRDs"), "the inference extension's CRDs are the inference gateway's (its pinned release), "
         "not the chart's release candidate"),
    Hint(("kserve", "llmisvc", "controller", "imagePullPolicy"), "the controller's image is pinned (facts/versions.py)"),
)

def install_llm_controller(
    serving: PlatformComponent,
    namespace: str,
    created: pulumi.Resource,
    gateway: InferenceGatewayArgs,
    values: Mapping[str, Any],
    crd_values: Mapping[str, Any],
    after: list[pulumi.Resource],
    needs: list[pulumi.Resource],
    replicas: tuple[int, int],
) -> pulumi.Resource:
    """The LLM controller's charts, the Gateway, the route policy and the replica bounds (`replicas`:
    the stack's floor and ceiling), as children of the serving component; the controller's chart,
    done when its webhooks serve. `created`: the namespace
    (all the CRDs wait for); `after`: KServe's controller
    (its ConfigMap and Issuer) and KEDA (the ScaledObject kind it looks for at start, like
    LeaderWorkerSet's and the gateway's among `needs`)."""
    crds = serving.chart("kserve-llmisvc-crd", KSERVE_LLMISVC_CRD_CHART, namespace, {}, [created], overlay=crd_values, omit=LLM_CRDS_OMITTED)
    controller = serving.chart("kserve-llmisvc-resources", KSERVE_LLMISVC_CHART, namespace, llmisvc_values(), [created, crds, *after], overlay=values)
    # The Gateway the routes attach to, in the ingress gateway's namespace (Istio's), before the
    # controller looks it up for its first route.
    apply_manifest(GATEWAY, gateway_object(gateway), serving.child(needs))
    policy = apply_manifest(ROUTES_POLICY, routes_policy(), serving.child())
    apply_manifest(f"{ROUTES_POLICY}-binding", routes_binding(), serving.child([policy]))
    bounds = apply_manifest(LLM_REPLICA_BOUNDS, llm_replica_bounds_policy(*replicas), serving.child())
    apply_manifest(f"{LLM_REPLICA_BOUNDS}-binding", llm_replica_bounds_binding(), serving.child([bounds]))
    return controller


# The LLM controller's charts whose values a stack may overlay (serving.llmValues, serving.llmCrdValues),
# installed with `serving.llm` (components/serving.py INSTALLATION; `args` are its ServingArgs).
LLM_CHARTS: tuple[ChartValues[Any], ...] = (
    ChartValues(
        "llmValues",
        KSERVE_LLMISVC_CHART,
        lambda args: llmisvc_values(),
        lambda args: args.llm_values,
        built_by(llmisvc_values),
        installed=lambda args: args.llm,
        relied=RELIED,
        hints=HINTS,
    ),
    ChartValues(
        "llmCrdValues",
        KSERVE_LLMISVC_CRD_CHART,
        lambda args: {},
        lambda args: args.llm_crd_values,
        "components/serving_llm.py (none: the chart's defaults)",
        installed=lambda args: args.llm,
    ),
)
