"""The validators the other tests rely on must themselves catch mistakes."""

from typing import Any

import pytest

from tests.support import crds
from tests.support.validation import validate

needs_crds = pytest.mark.skipif(not crds.available(), reason=crds.MISSING)


def test_builtin_kind_valid_and_typo() -> None:
    assert validate({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}) == []
    errors = validate({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}, "spek": {}})
    assert errors and "spek" in errors[0]


def test_builtin_kind_wrong_type() -> None:
    obj = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"}, "spec": {"hard": "lots"}}
    assert validate(obj)


@needs_crds
def test_custom_kind_against_upstream_crd() -> None:
    flavor = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "l4"},
        "spec": {"nodeLabels": {"cloud.google.com/gke-accelerator": "nvidia-l4"}},
    }
    assert validate(flavor) == []
    flavor["spec"] = {"nodeLabel": {}}
    assert any("nodeLabel" in e for e in validate(flavor))


@needs_crds
def test_int_or_string_quantities_are_honoured() -> None:
    queue: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "q"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "8"}]}],
                }
            ]
        },
    }
    assert validate(queue) == []
    queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = 8
    assert validate(queue) == []


@needs_crds
def test_go_case_insensitive_patterns_are_honoured() -> None:
    # kueue v0.19.2 AdmissionCheck: parameters.kind has pattern ^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$
    check: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "AdmissionCheck",
        "metadata": {"name": "c"},
        "spec": {
            "controllerName": "kueue.x-k8s.io/provisioning-request",
            "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "c"},
        },
    }
    assert validate(check) == []
    check["spec"]["parameters"]["kind"] = "9Config"
    assert any("parameters.kind" in e for e in validate(check))


def test_unknown_custom_kind_is_an_error_not_a_pass() -> None:
    errors = validate({"apiVersion": "example.com/v1", "kind": "Nothing", "metadata": {"name": "x"}})
    assert errors and "no CRD schema" in errors[0]


def _resolving_validator(api_version: str, kind: str, minor: str) -> Any:
    """kubernetes-validate's schema as it is, its references resolved by the registry (what
    tooling.schemas did before it put them in place)."""
    import jsonschema
    from referencing import Registry, Resource

    from tooling import schemas

    schema = schemas.builtin_schema(api_version, kind, minor)
    assert schema is not None
    registry = schemas._definitions(schemas._schema_dir(minor), minor) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.validators.Draft202012Validator(schema, registry=registry)


def _mutations(obj: dict[str, Any]) -> Any:
    """`obj` with an unknown field, or a field of another type, at each mapping down to depth 5."""
    import copy

    def places(node: Any, path: tuple[Any, ...] = ()) -> Any:
        if isinstance(node, dict):
            yield path
            for key, value in node.items():
                if len(path) < 5:
                    yield from places(value, (*path, key))
        elif isinstance(node, list) and node and len(path) < 5:
            yield from places(node[0], (*path, 0))

    for path in places(obj):
        for change in ("unknown field", "another type"):
            mutated = copy.deepcopy(obj)
            node = mutated
            for key in path:
                node = node[key]
            scalars = [k for k, v in node.items() if isinstance(v, str | int | bool)]
            if change == "unknown field":
                node["bogusField"] = 1
            elif scalars:
                node[scalars[0]] = {"x": [1]}
            else:
                continue
            yield mutated


def test_inlined_definitions_give_the_errors_their_references_give() -> None:
    """tooling.schemas puts kubernetes-validate's references to its definitions in place (a third
    of the validation was resolving them): every object of the dev stack's render, broken at each
    level, gets the same best-matching error (path, message, keyword) either way."""
    import jsonschema

    from tests.support.mirror import FOUND
    from tooling import schemas

    if not FOUND:
        pytest.skip("no upstream mirror")
    from tests.support.renders import rendered

    minor, compared = "1.35", 0
    objects = [o.obj for o in rendered("dev").objects if schemas.is_builtin(o.obj)]
    kinds = {(o["apiVersion"], o["kind"]) for o in objects}
    assert {"CustomResourceDefinition", "Deployment", "ClusterRole"} <= {k for _, k in kinds}
    resolving = {k: _resolving_validator(*k, minor) for k in kinds}
    seen: set[tuple[str, str]] = set()
    for obj in objects:
        key = (obj["apiVersion"], obj["kind"])
        if key in seen:  # one object of each kind: every kind, every level, in a second or two
            continue
        seen.add(key)
        inlined = schemas._builtin_validator(*key, minor)
        assert inlined is not None
        for mutated in [obj, *_mutations(obj)]:
            ours = jsonschema.exceptions.best_match(inlined.iter_errors(mutated))
            theirs = jsonschema.exceptions.best_match(resolving[key].iter_errors(mutated))
            as_said = [(list(e.absolute_path), e.message, e.validator) if e is not None else None for e in (ours, theirs)]
            assert as_said[0] == as_said[1], key
            compared += 1
    assert compared > 300


def test_a_recursive_definition_is_inlined_as_a_cycle() -> None:
    """JSONSchemaProps refers to itself (a CRD's schema nests schemas): one shared object."""
    from tooling import schemas

    validator = schemas._builtin_validator("apiextensions.k8s.io/v1", "CustomResourceDefinition", "1.35")
    assert validator is not None and isinstance(validator.schema, dict)
    spec = validator.schema["properties"]["spec"]
    props = spec["properties"]["versions"]["items"]["properties"]["schema"]["properties"]["openAPIV3Schema"]
    assert props["properties"]["properties"]["additionalProperties"] is props
    assert "$ref" not in props and "$ref" not in spec
