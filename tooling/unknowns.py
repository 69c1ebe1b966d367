"""`null` where an object's schema wants a value, and the offline render's typed placeholders.

Under Pulumi's mocks a value only the cloud knows (an output the mocks do not fake, such as
a Cloud SQL instance's private IP) reaches the objects that use it as `None`, and a render
would write `null`. Where the schema wants a value the API server refuses it (a list item,
a map value, a required field: `addresses: [null]` is "an explicit null" in an EndpointSlice)
or stores an empty value; a `null` for an optional field only means "not set" and is fine.

`null_sites` finds the first kind, reading the object's schema as the API server does:
built-in kinds by their OpenAPI definitions (kubernetes-validate's, which mark every type
nullable, so only a custom resource's `nullable: true` admits a null), custom kinds by their
CRD (`metadata` by the built-in ObjectMeta). `check` refuses each one (rule `null`); the full
render turns those of our own objects, the only ones Pulumi's outputs reach, into typed
placeholders (`placeholder`: a value of the type the schema wants there, in the form the
field takes, such as an address from a documentation range) and lists each as unknown in
the render's index.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tooling.schemas import Validator, builtin_definitions, builtin_schema, is_builtin

Path = tuple[str | int, ...]

DOCUMENTATION_IPV4 = "192.0.2.1"
"""TEST-NET-1 (RFC 5737): an address no network routes."""
DOCUMENTATION_IPV6 = "2001:db8::1"
"""The IPv6 documentation prefix (RFC 3849)."""
DOCUMENTATION_CIDR = "192.0.2.0/24"
UNKNOWN_STRING = "unknown"
UNKNOWN_TIME = "1970-01-01T00:00:00Z"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
ADDRESS_FIELDS = {
    ("io.k8s.api.discovery.v1.Endpoint", "addresses"): "ip",
    ("io.k8s.api.core.v1.EndpointAddress", "ip"): "ip",
    ("io.k8s.api.core.v1.ServiceSpec", "clusterIP"): "ip",
    ("io.k8s.api.core.v1.ServiceSpec", "clusterIPs"): "ip",
    ("io.k8s.api.core.v1.ServiceSpec", "externalIPs"): "ip",
    ("io.k8s.api.core.v1.ServiceSpec", "loadBalancerIP"): "ip",
    ("io.k8s.api.core.v1.ServiceSpec", "loadBalancerSourceRanges"): "cidr",
    ("io.k8s.api.networking.v1.IPBlock", "cidr"): "cidr",
    ("io.k8s.api.networking.v1.IPBlock", "except"): "cidr",
}
"""Built-in fields that hold addresses, which their OpenAPI definitions type as plain strings
(Kubernetes v1.36 api/openapi-spec: no `format` on them); custom kinds say `format` themselves."""


@dataclass(frozen=True)
class NullSite:
    """A `null` where the schema wants a value."""

    path: Path
    wants: str
    """The schema's type there: string, integer, number, boolean, object, array, int-or-string."""
    form: str
    """The form the field takes (`ip`, `cidr`, a schema `format` such as date-time), or ""."""
    why: str
    """list item, map value or required field"""
    schema: dict[str, Any]

    @property
    def field(self) -> str:
        return field_path(self.path)


def field_path(path: Path) -> str:
    """`endpoints[0].addresses[0]`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def has_null(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, dict):
        return any(has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(has_null(v) for v in value)
    return False


def _wants(node: dict[str, Any]) -> str | None:
    """The type a schema node wants, or None where it takes anything (no type, preserved fields)."""
    if node.get("x-kubernetes-int-or-string") or "oneOf" in node or "anyOf" in node:
        return "int-or-string"
    kind = node.get("type")
    types = [kind] if isinstance(kind, str) else [t for t in kind or [] if t != "null"]
    if types:
        return str(types[0])
    if "properties" in node or "additionalProperties" in node:
        return "object"
    return None


class _Walk:
    def __init__(self, definitions: dict[str, Any], custom: bool):
        self.definitions = definitions
        self.custom = custom
        self.found: list[NullSite] = []

    def resolve(self, node: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """The node with its `$ref` (or a single `allOf`) followed, and the definition's name."""
        name = ""
        while True:
            if "$ref" in node:
                name = node["$ref"].rsplit("/", 1)[-1]
                node = self.definitions[name]
            elif len(node.get("allOf") or []) == 1 and "type" not in node:
                node = node["allOf"][0]
            else:
                return node, name

    def nullable(self, node: dict[str, Any]) -> bool:
        return self.custom and bool(node.get("nullable"))

    def site(self, path: Path, node: dict[str, Any], why: str, form: str) -> None:
        node, _ = self.resolve(node)
        wants = _wants(node)
        if wants is not None and not self.nullable(node):
            self.found.append(NullSite(path, wants, form or str(node.get("format") or ""), why, node))

    def walk(self, value: Any, node: dict[str, Any], path: Path, form: str = "") -> None:
        node, name = self.resolve(node)
        if isinstance(value, dict):
            properties = node.get("properties") or {}
            additional = node.get("additionalProperties")
            required = set(node.get("required") or [])
            for key, child in value.items():
                if key in properties:
                    sub, why, sub_form = properties[key], "required field", ADDRESS_FIELDS.get((name, key), "")
                elif isinstance(additional, dict):
                    sub, why, sub_form = additional, "map value", ""
                else:
                    continue  # a field the schema does not know: the schema rule's business
                if child is None:
                    if why == "map value" or key in required:
                        self.site((*path, key), sub, why, sub_form)
                    continue
                self.walk(child, sub, (*path, key), sub_form)
        elif isinstance(value, list) and isinstance(node.get("items"), dict):
            for index, child in enumerate(value):
                if child is None:
                    self.site((*path, index), node["items"], "list item", form)
                else:
                    self.walk(child, node["items"], (*path, index), form)


def null_sites(obj: dict[str, Any], validator: Validator) -> list[NullSite]:
    """Every `null` in `obj` where its schema wants a value (none where no schema is known:
    the schema rule reports a kind without one)."""
    if not has_null(obj):
        return []
    definitions = builtin_definitions(validator.kubernetes_minor)
    if is_builtin(obj):
        schema = builtin_schema(obj.get("apiVersion", ""), obj.get("kind", ""), validator.kubernetes_minor)
        walk = _Walk(definitions, custom=False)
        if schema is not None:
            walk.walk(obj, schema, ())
        return walk.found
    schema = validator.custom_schema(obj)
    if schema is None:
        return []
    walk = _Walk(definitions, custom=True)
    walk.walk({k: v for k, v in obj.items() if k != "metadata"}, schema, ())
    if isinstance(obj.get("metadata"), dict):
        meta = _Walk(definitions, custom=False)
        meta.walk(obj["metadata"], definitions[OBJECT_META], ("metadata",))
        walk.found += meta.found
    return walk.found


def placeholder(site: NullSite, obj: dict[str, Any]) -> Any:
    """A value of the type `site` wants, in its form: what the offline render writes for an unknown."""
    schema = site.schema
    if schema.get("enum"):
        return schema["enum"][0]
    if site.wants == "string":
        if site.form in ("ip", "ipv4", "ipv6"):
            ipv6 = site.form == "ipv6" or obj.get("addressType") == "IPv6"  # an EndpointSlice's own family
            return DOCUMENTATION_IPV6 if ipv6 else DOCUMENTATION_IPV4
        if site.form == "cidr":
            return DOCUMENTATION_CIDR
        if site.form == "date-time":
            return UNKNOWN_TIME
        return UNKNOWN_STRING
    filler: dict[str, Callable[[], Any]] = {
        "integer": lambda: int(schema.get("minimum", 0)),
        "number": lambda: schema.get("minimum", 0),
        "int-or-string": lambda: 0,
        "boolean": lambda: False,
        "object": dict,
        "array": list,
    }
    return filler[site.wants]()


def with_placeholders(obj: dict[str, Any], sites: list[NullSite]) -> dict[str, Any]:
    """A copy of `obj` with a placeholder at each of `sites`."""
    filled = copy.deepcopy(obj)
    for site in sites:
        node: Any = filled
        for part in site.path[:-1]:
            node = node[part]
        node[site.path[-1]] = placeholder(site, obj)
    return filled
