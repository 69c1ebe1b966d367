"""The envtest control plane (tests/support/envtest.py) as the tests talk to it: a full render
applied to it, objects kept in it for a test module, and SubjectAccessReviews asked of its
RBAC authorizer. Plain REST through the Kubernetes Python client's ApiClient, paths from the
API server's own discovery documents.

A render is applied as `pulumi up` would give the API server its objects: the
CustomResourceDefinitions first (each waited for until Established), the Namespaces, then
everything else, by server-side apply, several requests at once (an object judged before on
the same grounds is not sent again). Every stack of a run is
applied to one control plane (the API server takes about 20 s to accept a render's 70 CRDs
on two cores): CRDs and Namespaces are stored, since the rest is judged against them, and the
rest is applied as a dry run (`dryRun=All`: every stage of the request, defaulting, schema
and CEL validation, admission, except storage), so no stack's objects meet another's. A CRD
the control plane already holds as it is (an earlier render's, or one stored in the
background while the first tests ran, `store_crds_soon`) is not sent again.

No pod runs here, so what the API server would call in a pod is set aside and listed:
admission webhook configurations and aggregated APIServices served by a Service (validated by
the same dry run, never registered, as they are not stored), and CRD conversion webhooks (the
CRD is stored with conversion `None`, which serves each version by renaming it: enough to
judge objects sent in the storage version). A GKE stack's cluster has the CRDs GKE installs
itself (ManagedCertificate, pinned in facts/versions.py): they are applied first, from the pinned
CRD folder; a kind GKE serves with no public CRD (BackendConfig) has nothing to apply to.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from facts.versions import CRD_SOURCES, GKE_MANAGED_CERTS_CRDS
from stackmodel.schema import GkeClusterConfig
from tests.support.envtest import ControlPlane
from tooling.check import selects
from tooling.fullrender import FullRender, Rendered, object_key
from tooling.schemas import GKE_PROVIDED_KINDS, crd_folders, is_builtin, parsed
from tooling.waiting import wait_for

FIELD_MANAGER = "mlplatform-envtest"
AT_ONCE = 8
"""Requests in flight: enough to keep the API server's two cores busy while Python waits."""
ESTABLISHED_TIMEOUT = 120.0
CRD = "CustomResourceDefinition"
WEBHOOK_KINDS = frozenset({"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"})
AUTHENTICATED = "system:authenticated"


def label(obj: dict[str, Any]) -> str:
    group, kind, namespace, name = object_key(obj)
    return f"{kind}{'.' + group if group else ''} {namespace + '/' if namespace else ''}{name}"


@dataclass(frozen=True)
class Rejection:
    object: str
    source: str
    message: str
    """the API server's own"""

    def __str__(self) -> str:
        return f"{self.object} [{self.source}]: {self.message}"


@dataclass
class Applied:
    """What the API server made of one render."""

    stack: str
    applied: list[str] = field(default_factory=list)
    """Every object it accepted (stored, or judged by a dry run)."""
    rejected: list[Rejection] = field(default_factory=list)
    set_aside: list[str] = field(default_factory=list)
    """What would call a pod, and why; each is also in `applied` or `rejected`, except GKE's kinds."""
    duplicates: list[str] = field(default_factory=list)
    stored_before: list[str] = field(default_factory=list)
    """CRDs the control plane held as they are before this render was applied (an earlier
    render's, or stored in the background while other tests ran: Cluster.store_crds_soon)."""
    judged_before: list[str] = field(default_factory=list)
    """Objects judged by a dry run earlier in the run, on the same grounds (the object, its
    Namespace, its kind's CRD, byte for byte): the same verdict, not asked again."""
    provided: list[str] = field(default_factory=list)
    """CRDs the cluster itself has (GKE's own), applied before the render's."""
    left_out: list[str] = field(default_factory=list)
    """Installs the render left out, not in the mirror (release manifests: FullRender.left_out)."""


GKE_INSTALLS = (GKE_MANAGED_CERTS_CRDS,)
"""The CRDs every GKE cluster has without us (facts/versions.py says so at each pin)."""


def gke_crds() -> list[Rendered]:
    """The CRDs GKE installs itself, from their pinned folders, as objects of the cluster's own."""
    folders = crd_folders()
    found = []
    for files in CRD_SOURCES:
        if any(files.repository in pin.location for pin in GKE_INSTALLS):
            if files.folder not in folders:
                raise AssertionError(f"the pinned CRD folder {files.folder} is missing; the schema tests say where it is looked for")
            for path in sorted(folders[files.folder].glob("*.yaml")):
                found += [Rendered(doc, "GKE", "", False) for doc in parsed(path.read_text()) if doc.get("kind") == CRD]
    return found


def needs_a_pod(obj: dict[str, Any]) -> str | None:
    """Why the API server would call a pod for this object (no pod runs here), or None."""
    kind = obj.get("kind")
    if kind in WEBHOOK_KINDS:
        return "its webhooks call Services: validated by a dry run, not registered"
    if kind == "APIService" and (obj.get("spec") or {}).get("service"):
        return "an aggregated API served by a Service: validated by a dry run, not registered"
    if kind == CRD and ((obj.get("spec") or {}).get("conversion") or {}).get("strategy") == "Webhook":
        return "its conversion webhook calls a Service: stored with conversion None"
    return None


def without_conversion_webhook(crd: dict[str, Any]) -> dict[str, Any]:
    return {**crd, "spec": {**crd["spec"], "conversion": {"strategy": "None"}}}


def api_message(error: Exception) -> str:
    """The API server's own message of a refusal."""
    if isinstance(error, ApiException) and error.body:
        try:
            return str(json.loads(error.body).get("message") or error.body)
        except ValueError:
            return str(error.body)
    return str(error)


@dataclass(frozen=True)
class Who:
    """Whom a SubjectAccessReview asks about: a user and the groups its authenticator gives it."""

    name: str
    groups: tuple[str, ...] = ()


def user(name: str, *groups: str) -> Who:
    """A signed-in user (the authenticator adds system:authenticated to every one)."""
    return Who(name, (*groups, AUTHENTICATED))


def service_account(namespace: str, name: str) -> Who:
    """A service account as its token authenticates (k8s.io/apiserver serviceaccount.UserInfo)."""
    return Who(f"system:serviceaccount:{namespace}:{name}", ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED))


ANONYMOUS = Who("system:anonymous", ("system:unauthenticated",))


class Cluster:
    """The administrator's view of one control plane (group system:masters)."""

    def __init__(self, plane: ControlPlane):
        self.plane = plane
        self.api_client = client.ApiClient(plane.configuration())
        self._resources: dict[str, dict[str, tuple[str, bool]]] = {}
        self._stored_crds: dict[str, str] = {}
        """CRD name -> the digest of the render's CRD the control plane holds now."""
        self._background: Future[list[Rejection]] | None = None
        self._worker = ThreadPoolExecutor(1)
        self._reviews: dict[tuple[Who, str, str, str, str, str, str], bool] = {}
        self._verdicts: dict[str, str | None] = {}
        """What a dry run of an object said (None: taken), by the digest of what it depends on."""

    # --- REST --------------------------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None, query: Sequence[tuple[str, str]] = (), as_user: str | None = None) -> Any:
        """One JSON request as the administrator, or `as_user` (impersonated: that user in
        system:authenticated, as it signs in); its decoded answer (an ApiException if refused)."""
        headers = {"Content-Type": "application/json", "Accept": "application/json", **({"Impersonate-User": as_user} if as_user else {})}
        response = self.api_client.call_api(
            path,
            method,
            query_params=list(query),
            header_params=headers,
            body=body,
            _preload_content=False,
            _return_http_data_only=True,
            auth_settings=[],
        )
        return json.loads(response.data)

    def resources(self, api_version: str) -> dict[str, tuple[str, bool]]:
        """kind -> (plural, namespaced) of one group version, from its discovery document."""
        known = self._resources.get(api_version)
        if known is None:
            found = self.request("GET", _base(api_version))["resources"]
            known = self._resources[api_version] = {r["kind"]: (r["name"], r["namespaced"]) for r in found if "/" not in r["name"]}
        return known

    def path(self, obj: dict[str, Any]) -> str:
        api_version, kind = obj["apiVersion"], obj["kind"]
        resources = self.resources(api_version)
        if kind not in resources:
            raise LookupError(f"the API server serves no {kind} in {api_version}")
        plural, namespaced = resources[kind]
        meta = obj["metadata"]
        where = f"/namespaces/{meta.get('namespace') or 'default'}" if namespaced else ""
        return f"{_base(api_version)}{where}/{plural}/{meta['name']}"

    def apply(self, obj: dict[str, Any], dry_run: bool = False) -> int:
        """Server-side apply of `obj` (the field manager takes every field it sends); the HTTP
        status: 201 where it created the object."""
        query = [("fieldManager", FIELD_MANAGER), ("force", "true"), *([("dryRun", "All")] if dry_run else [])]
        response = self.api_client.call_api(
            self.path(obj),
            "PATCH",
            query_params=query,
            header_params={"Content-Type": "application/apply-patch+yaml", "Accept": "application/json"},
            body=obj,
            _preload_content=False,
            _return_http_data_only=True,
            auth_settings=[],
        )
        return int(response.status)

    def delete(self, obj: dict[str, Any]) -> None:
        try:
            self.request("DELETE", self.path(obj))
        except ApiException as error:
            if error.status != 404:
                raise

    # --- a render ------------------------------------------------------------------------

    def apply_render(self, render: FullRender) -> Applied:
        """Every object of `render`, in the order a cluster needs them (module docstring)."""
        self.settle()
        result = Applied(render.stack, left_out=[i.label for i in render.left_out])
        unique: dict[tuple[str, str, str, str], Rendered] = {}
        for o in render.objects:
            first = unique.setdefault(o.key, o)
            if first is not o:
                result.duplicates.append(f"{label(o.obj)} [{o.source}], also from {first.source}")
        objects = list(unique.values())
        if render.plan.config is not None and isinstance(render.plan.config.cluster, GkeClusterConfig):
            provided = [o for o in gke_crds() if o.key not in unique]
            result.provided += [label(o.obj) for o in provided]
            objects = provided + objects
        served = {(o.obj["spec"]["group"], o.obj["spec"]["names"]["kind"]) for o in objects if o.obj.get("kind") == CRD}

        crds, namespaces, rest = [], [], []
        for o in objects:
            kind, why = o.obj.get("kind"), needs_a_pod(o.obj)
            if why:
                result.set_aside.append(f"{label(o.obj)}: {why}")
            if kind == CRD:
                crds.append(o)
            elif kind == "Namespace":
                namespaces.append(o)
            elif (o.obj.get("apiVersion"), kind) in GKE_PROVIDED_KINDS:
                result.set_aside.append(f"{label(o.obj)}: GKE serves this kind; no CRD of it to apply to")
            elif not is_builtin(o.obj) and (o.key[0], kind) not in served:
                result.rejected.append(Rejection(label(o.obj), o.source, f"no CustomResourceDefinition of {kind}.{o.key[0]} in this render"))
            else:
                rest.append(o)

        before = dict(self._stored_crds)
        refused = self.store_crds(crds)
        result.rejected += refused
        for o in crds:
            if label(o.obj) not in {r.object for r in refused}:
                result.applied.append(label(o.obj))
                if before.get(o.key[3]) == _digest(o.obj):
                    result.stored_before.append(label(o.obj))

        # A dry run's verdict depends on the object, its Namespace and its kind's CRD: nothing
        # else is stored. An object judged before on the same grounds (most of what two stacks
        # share) gets the same verdict without asking again.
        namespace_digests = {o.key[3]: _digest(o.obj) for o in namespaces}
        crd_digests = {(o.obj["spec"]["group"], o.obj["spec"]["names"]["kind"]): _digest(o.obj) for o in crds}

        def judge(o: Rendered, dry_run: bool) -> None:
            grounds = _digest([o.obj, namespace_digests.get(o.key[2]), crd_digests.get((o.key[0], o.key[1]))]) if dry_run else ""
            if grounds in self._verdicts:
                verdict = self._verdicts[grounds]
                result.judged_before.append(label(o.obj))
            else:
                try:
                    self.apply(o.obj, dry_run=dry_run)
                    verdict = None
                except (ApiException, LookupError) as error:
                    verdict = api_message(error)
                if dry_run:
                    self._verdicts[grounds] = verdict
            if verdict is None:
                result.applied.append(label(o.obj))
            else:
                result.rejected.append(Rejection(label(o.obj), o.source, verdict))

        with ThreadPoolExecutor(AT_ONCE) as pool:
            list(pool.map(lambda o: judge(o, False), namespaces))
            list(pool.map(lambda o: judge(o, True), rest))
        return result

    def store_crds(self, crds: Sequence[Rendered]) -> list[Rejection]:
        """Store each CRD the control plane does not have as it is (a conversion webhook set
        aside), and wait until the API server serves every one it took; its refusals."""
        refused: list[Rejection] = []
        sent = [o for o in crds if self._stored_crds.get(o.key[3]) != _digest(o.obj)]

        def store(o: Rendered) -> None:
            try:
                self.apply(without_conversion_webhook(o.obj) if needs_a_pod(o.obj) else o.obj)
            except (ApiException, LookupError) as error:
                refused.append(Rejection(label(o.obj), o.source, api_message(error)))

        with ThreadPoolExecutor(AT_ONCE) as pool:
            list(pool.map(store, sent))
        accepted = [o for o in sent if label(o.obj) not in {r.object for r in refused}]
        self.wait_established([o.key[3] for o in accepted])
        self._stored_crds.update({o.key[3]: _digest(o.obj) for o in accepted})
        return refused

    def store_crds_soon(self, render: FullRender) -> None:
        """Start storing `render`'s CRDs in a thread of their own: the API server takes about 20 s
        over a render's 70, which the tests before the first apply_render need not wait for.
        apply_render and keep wait for it first (and send again what it could not store)."""
        self.settle()
        crds = [o for o in render.objects if o.obj.get("kind") == CRD]
        self._background = self._worker.submit(self.store_crds, crds)

    def settle(self) -> None:
        """Wait for store_crds_soon's work, if any (its refusals are found again by apply_render)."""
        if self._background is not None:
            background, self._background = self._background, None
            background.result()

    def wait_established(self, names: Iterable[str]) -> None:
        waiting = set(names)

        def pending() -> list[str]:
            for name in sorted(waiting):
                crd = self.request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
                if any(c["type"] == "Established" and c["status"] == "True" for c in (crd.get("status") or {}).get("conditions") or []):
                    waiting.discard(name)
            return sorted(waiting)

        wait_for("CustomResourceDefinitions Established", pending, timeout=ESTABLISHED_TIMEOUT, interval=0.1)
        self._resources.clear()  # discovery documents read before now lack the new kinds

    # --- objects kept for a test module ----------------------------------------------------

    def keep(self, objects: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Store `objects` for real, CRDs first, then Namespaces, then the rest (a test module's
        world); raises on the first refusal, naming it. Returns those it created, for `remove`
        (what the control plane had before, such as a Namespace an earlier render stored, stays)."""
        if any(o["kind"] == CRD for o in objects):
            self.settle()  # what store_crds_soon stores, this may change
        created: list[dict[str, Any]] = []
        if any(needs_a_pod(o) for o in objects if o["kind"] != CRD):
            raise AssertionError("no pod runs here: keep no webhook configuration or aggregated APIService")

        def store(obj: dict[str, Any]) -> None:
            if obj["kind"] == CRD:
                self._stored_crds.pop(obj["metadata"]["name"], None)  # apply_render judges it again
                if needs_a_pod(obj):
                    obj = without_conversion_webhook(obj)
            try:
                status = self.apply(obj)
            except (ApiException, LookupError) as error:
                raise AssertionError(f"{label(obj)}: {api_message(error)}") from None
            if status == 201:
                created.append(obj)

        rank = {CRD: 0, "Namespace": 1}
        with ThreadPoolExecutor(AT_ONCE) as pool:
            for step in sorted({rank.get(o["kind"], 2) for o in objects}):
                list(pool.map(store, [o for o in objects if rank.get(o["kind"], 2) == step]))
                if step == 0:
                    self.wait_established([o["metadata"]["name"] for o in objects if o["kind"] == CRD])
        self._reviews.clear()
        return created

    def remove(self, objects: Sequence[dict[str, Any]]) -> None:
        """Delete what `keep` created, except Namespaces: with no namespace controller running a
        deleted Namespace would stay Terminating and refuse every later object (they are the
        same in every render, and empty once the rest is gone)."""
        with ThreadPoolExecutor(AT_ONCE) as pool:
            list(pool.map(self.delete, [o for o in objects if o["kind"] != "Namespace"]))
        self._reviews.clear()

    def wait_aggregated(self, timeout: float = 60.0) -> None:
        """Until the controller manager has aggregated every ClusterRole that asks for it: each
        one's rules hold every rule of each ClusterRole its selectors pick (the fixed point of
        pkg/controller/clusterroleaggregation: its rules are their union)."""

        def pending() -> list[str]:
            roles = self.request("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles")["items"]
            waiting = []
            for role in roles:
                selectors = (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []
                have = {_digest(rule) for rule in role.get("rules") or []}
                for other in roles:
                    picked = other is not role and any(selects(s, other["metadata"].get("labels") or {}) for s in selectors)
                    if picked and any(_digest(rule) not in have for rule in other.get("rules") or []):
                        waiting.append(f"{role['metadata']['name']} lacks rules of {other['metadata']['name']}")
                        break
            return waiting

        wait_for("ClusterRoles aggregated by kube-controller-manager", pending, timeout=timeout, interval=0.2)
        self._reviews.clear()

    # --- the authorizer ----------------------------------------------------------------------

    def allows(self, who: Who, verb: str, resource: str, namespace: str = "", group: str = "", subresource: str = "", name: str = "") -> bool:
        """The RBAC authorizer's answer to a SubjectAccessReview of `who`."""
        key = (who, verb, group, resource, subresource, name, namespace)
        if key not in self._reviews:
            attributes = {"verb": verb, "group": group, "resource": resource, "subresource": subresource, "name": name, "namespace": namespace}
            review = {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "spec": {"user": who.name, "groups": list(who.groups), "resourceAttributes": attributes},
            }
            answer = self.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
            self._reviews[key] = bool(answer["status"].get("allowed"))
        return self._reviews[key]


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def _base(api_version: str) -> str:
    return f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
