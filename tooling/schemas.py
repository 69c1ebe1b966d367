"""Schemas of the objects the platform creates: built-in kinds with kubernetes-validate
(strict: an unknown field fails, as a typo would be pruned), custom kinds against their
CRD's openAPIV3Schema, taken from the render itself, else from the pinned upstream CRDs.

The pinned CRDs are folders `<project>-<version>` (facts/versions.py CRD_SOURCES), each read
from the first root that has it: `$CRD_DIR` (one or more directories, `:`-separated), the
shared data beside the repo (`../shared/crds`, then `../shared/crds-next`, which holds the
folders of newer pins), the cache `make crds` fills. Only pinned folders are read: a root may
hold other versions beside them.
"""

from __future__ import annotations

import copy
import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import kubernetes_validate.utils
import yaml

from facts.support import minor, minor_label
from facts.versions import CRD_SOURCES, KIND_NODE_IMAGE
from tooling import render_cache

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mlplatform" / "crds"
DEFAULT_KUBERNETES_MINOR = minor_label(minor(KIND_NODE_IMAGE.version))
"""The Kubernetes minor built-in kinds are validated for where no stack says: the kind node
image's. `check` validates a stack's render for its own cluster's minor (tooling.cluster_version)."""
# Custom kinds GKE itself serves, with no public CRD at a pinned version; their shape is
# tested directly (tests/test_components.py; multi-networking's: tests/test_fabric.py).
GKE_PROVIDED_KINDS = frozenset(
    {
        ("cloud.google.com/v1", "BackendConfig"),
        ("networking.gke.io/v1", "Network"),
        ("networking.gke.io/v1", "GKENetworkParamSet"),
        ("gateway.networking.k8s.io/v1", "Gateway"),  # with cluster.gatewayApi (components/inference_gateway.py)
    }
)

Schemas = dict[tuple[str, str], dict[str, Any]]


_STR, _SEQ, _MAP = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"
_PLAIN_SCALARS = ("null", "bool", "int", "float", "binary", "timestamp", "value")
"""The scalar tags SafeConstructor builds with a plain function of the node (no state)."""


class _Unusual(Exception):
    """A document the direct construction leaves to PyYAML's own (a merge key, another tag)."""


class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The loader for every YAML read at volume (CRDs, helm and kustomize output): PyYAML's
    safe loader on libyaml's parser (~8x faster on CRDs), the pure-Python one where PyYAML
    was built without libyaml. Both read a plain `=` as the string it is in YAML 1.2 (CRD
    enums list `=` as an operator; PyYAML's YAML 1.1 resolver tags it `value`).

    Two shortcuts, each giving what PyYAML's own steps give (tests/test_yaml_loading.py
    compares them on every shipped stack's installs, types included): a plain scalar's tag is
    resolved once per text and value (the safe resolver has no path resolvers, so the tag
    depends on the value alone), and a document of plain maps, lists and scalars is built
    in one walk of its nodes instead of PyYAML's generators (two thirds of a parse).
    Anything else (a merge key `<<`, a key that is no scalar, another tag, a nesting deeper
    than the interpreter's stack) is built by PyYAML's constructor."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._tags: dict[str, str] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode and implicit[0]:
            tag = self._tags.get(value)
            if tag is None:
                tag = self._tags[value] = super().resolve(kind, value, implicit)
            return tag
        return super().resolve(kind, value, implicit)

    def construct_document(self, node: Any) -> Any:
        try:
            return self._construct_plainly(node)
        except (_Unusual, RecursionError):
            return super().construct_document(node)

    def _construct_plainly(self, root: Any) -> Any:
        scalar_node, sequence_node, mapping_node = yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode
        constructors = self._scalar_constructors
        built: dict[Any, Any] = {}  # collection node (an anchor's node recurs) -> its object

        def scalar(node: Any) -> Any:
            tag = node.tag
            if tag == _STR:
                return node.value
            constructor = constructors.get(tag)
            if constructor is None:
                raise _Unusual
            return constructor(self, node)

        def build(node: Any) -> Any:
            kind = type(node)
            if kind is scalar_node:
                return scalar(node)
            if node in built:
                return built[node]
            if kind is mapping_node and node.tag == _MAP:
                mapping: dict[Any, Any] = {}
                built[node] = mapping
                for key_node, value_node in node.value:
                    if type(key_node) is not scalar_node:
                        raise _Unusual
                    mapping[scalar(key_node)] = build(value_node)
                return mapping
            if kind is sequence_node and node.tag == _SEQ:
                sequence: list[Any] = []
                built[node] = sequence
                sequence.extend(build(child) for child in node.value)
                return sequence
            raise _Unusual

        return build(root)


class PureLoader(yaml.SafeLoader):
    """The pure-Python twin of `Loader` (what it falls back to); tests keep the two equal."""


def _plain_scalar(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    return loader.construct_scalar(node)


for _loader in (Loader, PureLoader):
    _loader.add_constructor("tag:yaml.org,2002:value", _plain_scalar)
Loader._scalar_constructors = {f"tag:yaml.org,2002:{name}": Loader.yaml_constructors[f"tag:yaml.org,2002:{name}"] for name in _PLAIN_SCALARS}
assert not Loader.yaml_path_resolvers, "Loader.resolve caches tags by value: no path resolvers"


def load_all(text: str) -> list[dict[str, Any]]:
    """The non-empty mapping documents of a multi-document YAML text."""
    return [d for d in yaml.load_all(text, Loader=Loader) if isinstance(d, dict) and d]


_PARSED: dict[str, tuple[dict[str, Any], ...]] = {}


@cache
def _parser() -> str:
    return render_cache.parser_version(sys.modules[__name__])


def parsed(text: str) -> tuple[dict[str, Any], ...]:
    """The non-empty mapping documents of `text` (load_all), parsed once per process (shipped
    stacks share most installs) and kept in the render cache (tooling/render_cache.py: parsing is
    most of a render's time, reading it back is 40x faster). Callers never mutate them:
    normalizing and transforms build new dicts."""
    return parsed_output(render_cache.digest(text.encode()), lambda: text)


def parsed_output(output: str, text: Callable[[], str | None]) -> tuple[dict[str, Any], ...]:
    """parsed() of the text whose digest is `output`; `text` gives it when no cache holds its
    documents (a render cache hit needs no text at all)."""
    if output in _PARSED:
        return _PARSED[output]
    cache_ = render_cache.current()
    docs = cache_.documents(output, _parser()) if cache_ is not None else None
    if docs is None:
        source = text()
        assert source is not None, f"no text for the output {output}"
        docs = tuple(load_all(source))
        if cache_ is not None:
            cache_.keep_documents(output, _parser(), docs)
    _PARSED[output] = docs
    return docs


SHARED_CRD_ROOTS = (REPO.parent / "shared" / "crds", REPO.parent / "shared" / "crds-next")
"""The shared data's two CRD roots: today's pins, and the folders the next pins added."""


def crd_roots() -> tuple[Path, ...]:
    """Where pinned CRD folders are looked for, in order: `$CRD_DIR`, the shared data, the cache."""
    configured = [Path(p) for p in os.environ.get("CRD_DIR", "").split(os.pathsep) if p]
    return (*configured, *SHARED_CRD_ROOTS, CACHE)


def pinned_crd_folders() -> tuple[str, ...]:
    return tuple(files.folder for files in CRD_SOURCES)


def crd_folders(roots: Iterable[Path] | None = None) -> dict[str, Path]:
    """Each pinned CRD folder that exists -> its path in the first root that holds it."""
    roots = crd_roots() if roots is None else tuple(roots)
    found: dict[str, Path] = {}
    for folder in pinned_crd_folders():
        for root in roots:
            if (root / folder).is_dir() and any((root / folder).glob("*.yaml")):
                found[folder] = root / folder
                break
    return found


def missing_crd_folders(roots: Iterable[Path] | None = None) -> list[str]:
    """The pinned CRD folders no root holds."""
    found = crd_folders(roots)
    return [folder for folder in pinned_crd_folders() if folder not in found]


def crds_where() -> str:
    """Where the pinned CRDs were looked for, for messages."""
    missing = missing_crd_folders()
    where = ", ".join(str(r) for r in crd_roots())
    return f"the pinned CRD folders ({where}" + (f"; missing: {', '.join(missing)})" if missing else ")")


def schemas_of(crds: Iterable[dict[str, Any]]) -> Schemas:
    """(apiVersion, kind) -> openAPIV3Schema for every version of every CRD in `crds`."""
    found: Schemas = {}
    for doc in crds:
        if doc.get("kind") != "CustomResourceDefinition":
            continue
        spec = doc["spec"]
        for version in spec["versions"]:
            schema = (version.get("schema") or {}).get("openAPIV3Schema")
            if schema:
                found[(f"{spec['group']}/{version['name']}", spec["names"]["kind"])] = schema
    return found


@cache
def _shared_crds() -> tuple[dict[str, Any], ...]:
    """Every CRD document of the pinned folders (and of no other folder)."""
    docs: list[dict[str, Any]] = []
    for folder in crd_folders().values():
        for path in sorted(folder.glob("*.yaml")):
            docs += parsed(path.read_text())
    return tuple(docs)


@cache
def _group_schemas(group: str) -> Schemas:
    """The schemas of the pinned CRD files whose names hold `group` (upstream names them
    `<plural>.<group>.yaml` or `<group>_<plural>.yaml`), in the order _shared_crds reads them:
    one kind's schema without parsing every pinned CRD."""
    docs: list[dict[str, Any]] = []
    for folder in crd_folders().values():
        for path in sorted(folder.glob("*.yaml")):
            if group and group in path.name:
                docs += parsed(path.read_text())
    return schemas_of(docs)


@cache
def shared_schemas() -> Schemas:
    return schemas_of(_shared_crds())


def scopes_of(crds: Iterable[dict[str, Any]]) -> dict[tuple[str, str], bool]:
    """(group, kind) -> namespaced, for every CRD in `crds`."""
    return {
        (d["spec"]["group"], d["spec"]["names"]["kind"]): d["spec"].get("scope") == "Namespaced"
        for d in crds
        if d.get("kind") == "CustomResourceDefinition"
    }


def crd_scopes() -> dict[tuple[str, str], bool]:
    """(group, kind) -> namespaced, from the pinned upstream CRDs."""
    return scopes_of(_shared_crds())


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with unknown fields rejected, as the API server prunes (and we want typos caught).

    `x-kubernetes-preserve-unknown-fields` and `x-kubernetes-int-or-string` keep their meaning.
    Go (RE2) patterns that switch on case-insensitivity after the anchor, `^(?i)...` (Kueue's
    AdmissionCheck `parameters.kind`), are rewritten `(?i)^...`, the form Python's `re` takes.
    """
    schema = copy.deepcopy(schema)

    def walk(node: Any, in_junctor: bool = False) -> None:
        if not isinstance(node, dict):
            return
        if node.get("x-kubernetes-int-or-string"):
            node.pop("type", None)
            node["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        # Inside allOf/anyOf/oneOf/not a structural schema only validates values: the fields are
        # the enclosing node's (Kubernetes "Specifying a structural schema"; Gateway API v1.5.1's
        # Gateway `addresses` items: a oneOf branch naming `type` alone).
        if "properties" in node and not node.get("x-kubernetes-preserve-unknown-fields") and not in_junctor:
            node.setdefault("additionalProperties", False)
        pattern = node.get("pattern")
        if isinstance(pattern, str) and pattern.startswith("^(?i)"):
            node["pattern"] = "(?i)^" + pattern.removeprefix("^(?i)")
        if node.get("nullable"):
            kind = node.get("type")
            if isinstance(kind, str):
                node["type"] = [kind, "null"]
        for key, value in node.items():
            junctor = in_junctor or key in ("allOf", "anyOf", "oneOf", "not")
            if isinstance(value, dict):
                walk(value, junctor)
            elif isinstance(value, list):
                for item in value:
                    walk(item, junctor)

    walk(schema)
    # metadata is validated by the API server, not by the CRD schema.
    root = schema.setdefault("properties", {})
    root["metadata"] = {"type": "object"}
    # Some CRDs (Istio's) describe only spec/status; every object has these two.
    root.setdefault("apiVersion", {"type": "string"})
    root.setdefault("kind", {"type": "string"})
    return schema


class Validator:
    """Validates objects against the built-in schemas of one Kubernetes minor and the given
    CRD schemas (then the shared ones)."""

    def __init__(self, crd_schemas: Schemas | None = None, kubernetes_minor: str = DEFAULT_KUBERNETES_MINOR):
        self.schemas: Schemas = dict(crd_schemas or {})
        self.kubernetes_minor = kubernetes_minor
        self._compiled: dict[tuple[str, str], jsonschema.Draft7Validator] = {}

    def custom_schema(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        """The openAPIV3Schema of a custom kind: the render's CRD, else the pinned one (read by
        its group first); None where neither has it."""
        key = (obj.get("apiVersion", ""), obj.get("kind", ""))
        if key not in self.schemas:
            found = _group_schemas(key[0].split("/")[0]).get(key) or shared_schemas().get(key)
            if found is not None:
                self.schemas[key] = found
        return self.schemas.get(key)

    def errors(self, obj: dict[str, Any]) -> list[str]:
        """Every schema error of `obj` (empty: valid)."""
        if is_builtin(obj):
            return builtin_errors(obj, self.kubernetes_minor)
        key = (obj.get("apiVersion", ""), obj.get("kind", ""))
        if key in GKE_PROVIDED_KINDS:
            return []
        if self.custom_schema(obj) is None:
            return [f"no CRD for {key[1]} {key[0]} in the render or in {crds_where()}"]
        if key not in self._compiled:
            self._compiled[key] = jsonschema.Draft7Validator(strict(self.schemas[key]))
        return [
            f"{'.'.join(str(p) for p in error.absolute_path) or '<root>'}: {error.message}"
            for error in sorted(self._compiled[key].iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
        ]


CRD_GROUPS_UNDER_K8S_IO = frozenset({"metacontroller.k8s.io", "gateway.networking.k8s.io", "snapshot.storage.k8s.io"})
"""API groups named under k8s.io that custom resources define, not the API server: metacontroller's
(the Pipelines tree's third-party/metacontroller/base/crd.yaml), and the Gateway API's and volume
snapshots' (kubernetes-sigs projects shipped as CRDs)."""


def is_builtin(obj: dict[str, Any]) -> bool:
    """Whether the object's kind is Kubernetes' own (core groups, `*.k8s.io` but not `*.x-k8s.io`
    nor CRD_GROUPS_UNDER_K8S_IO)."""
    api_version = obj.get("apiVersion", "")
    group = api_version.split("/")[0] if "/" in api_version else ""
    core_groups = {"", "apps", "batch", "policy", "autoscaling"}
    if group in CRD_GROUPS_UNDER_K8S_IO:
        return False
    return group in core_groups or (group.endswith(".k8s.io") and not group.endswith(".x-k8s.io"))


@cache
def _definitions(schema_dir: str, kubernetes_minor: str) -> Any:
    from referencing import Resource

    return Resource.from_contents(kubernetes_validate.utils.schema_contents(f"kubernetes-json-schema/{schema_dir}/_definitions.json", kubernetes_minor))


def _schema_dir(kubernetes_minor: str) -> str:
    versions = [v for v in kubernetes_validate.utils.all_versions() if minor(v) <= minor(kubernetes_minor)]
    return f"v{versions[-1]}-local-strict"


@cache
def builtin_schema(api_version: str, kind: str, kubernetes_minor: str) -> dict[str, Any] | None:
    """kubernetes-validate's strict schema of one built-in kind in one minor (its `$ref`s
    point into `builtin_definitions`); None for a kind that minor does not have."""
    # kubernetes-validate's file naming: rbac.authorization.k8s.io/v1 -> rbac-v1
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    try:
        schema: dict[str, Any] = kubernetes_validate.utils.schema_contents(
            f"kubernetes-json-schema/{_schema_dir(kubernetes_minor)}/{kind.lower()}-{group_version}.json", kubernetes_minor
        )
    except FileNotFoundError:
        return None
    return schema


def builtin_definitions(kubernetes_minor: str) -> dict[str, Any]:
    """The definitions the built-in schemas of one minor refer to (`#/$defs/<name>`), by name."""
    contents: dict[str, dict[str, Any]] = _definitions(_schema_dir(kubernetes_minor), kubernetes_minor).contents
    return contents["$defs"]


@cache
def _builtin_validator(api_version: str, kind: str, kubernetes_minor: str) -> jsonschema.protocols.Validator | None:
    """kubernetes-validate's strict schema of one kind in one minor, compiled once (its own
    `validate` re-reads the multi-megabyte definitions file on every call), its references to
    the definitions put in place (Inlined): a third of the validation was resolving them."""
    from referencing import Registry, Resource

    schema = builtin_schema(api_version, kind, kubernetes_minor)
    if schema is None:
        return None
    registry = _definitions(_schema_dir(kubernetes_minor), kubernetes_minor) @ (Resource.from_contents(schema) @ Registry())
    inlined = _inlined(_schema_dir(kubernetes_minor), kubernetes_minor).schema(schema)
    return jsonschema.validators.Draft202012Validator(inlined, registry=registry)


ANNOTATIONS = frozenset({"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"})
"""Keywords that validate nothing (JSON Schema 2020-12, meta-data vocabulary; and `x-` extensions,
which validators ignore): a `$ref` beside only these is its target."""
SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
SUBSCHEMAS = ("additionalProperties", "items", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties")
SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
"""Where JSON Schema 2020-12 keeps subschemas (the applicator and unevaluated vocabularies)."""


@dataclass
class Inlined:
    """kubernetes-validate's schemas with each reference into the definitions
    (`..._definitions.json#/$defs/<name>`) replaced by the definition itself, one shared object
    per definition (a recursive one, such as JSONSchemaProps, becomes a cycle): the validator
    walks them as it would resolve them, without resolving. A reference beside keywords that
    validate becomes `allOf: [definition]` beside them (the same in JSON Schema 2020-12); any
    other reference stays, for the registry."""

    definitions: dict[str, Any]
    _done: dict[str, dict[str, Any]] = field(default_factory=dict)

    def schema(self, node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        name = self._definition(node.get("$ref"))
        if name is not None and all(k == "$ref" or k in ANNOTATIONS or k.startswith("x-") for k in node):
            return self._inlined(name)
        return self._walked(node)

    def _walked(self, node: dict[str, Any]) -> dict[str, Any]:
        """`node` with its subschemas inlined, and its own reference (if one of ours) as allOf."""
        name = self._definition(node.get("$ref"))
        found: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and name is not None:
                continue
            if key in SUBSCHEMA_MAPS and isinstance(value, dict):
                found[key] = {k: self.schema(v) for k, v in value.items()}
            elif key in SUBSCHEMA_LISTS and isinstance(value, list):
                found[key] = [self.schema(v) for v in value]
            elif key in SUBSCHEMAS:
                found[key] = self.schema(value)
            else:
                found[key] = value
        if name is not None:
            found["allOf"] = [*found.get("allOf", []), self._inlined(name)]
        return found

    def _definition(self, reference: Any) -> str | None:
        """The definition a reference names, if it is one of ours."""
        if not isinstance(reference, str):
            return None
        document, _, name = reference.partition("#/$defs/")
        if document not in ("", "/api/_definitions.json", "https://kubernetes.io/api/_definitions.json") or name not in self.definitions:
            return None
        return name

    def _inlined(self, name: str) -> dict[str, Any]:
        if name not in self._done:
            self._done[name] = {}  # in place before its subschemas: a reference back to it is this object
            self._done[name].update(self._walked(self.definitions[name]))
        return self._done[name]


@cache
def _inlined(schema_dir: str, kubernetes_minor: str) -> Inlined:
    contents: dict[str, Any] = _definitions(schema_dir, kubernetes_minor).contents
    return Inlined(contents["$defs"])


def builtin_errors(obj: dict[str, Any], kubernetes_minor: str = DEFAULT_KUBERNETES_MINOR) -> list[str]:
    validator = _builtin_validator(obj.get("apiVersion", ""), obj.get("kind", ""), kubernetes_minor)
    if validator is None:
        return [f"no schema for {obj.get('kind')} {obj.get('apiVersion')} in Kubernetes {kubernetes_minor}"]
    error = jsonschema.exceptions.best_match(validator.iter_errors(obj))
    return [] if error is None else [f"{'.'.join(str(p) for p in error.absolute_path) or '<root>'}: {error.message}"]
