"""`null` where a schema wants a value, read as the API server reads it (tooling/unknowns.py),
and the typed placeholders the offline render writes there for a value only the cloud knows."""

from __future__ import annotations

from typing import Any

import pytest

from tooling.schemas import Validator
from tooling.unknowns import DOCUMENTATION_IPV4, DOCUMENTATION_IPV6, null_sites, placeholder, with_placeholders

VALIDATOR = Validator(kubernetes_minor="1.35")


def endpoint_slice(address_type: str = "IPv4") -> dict[str, Any]:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "db", "namespace": "kubeflow", "labels": {"kubernetes.io/service-name": "db"}},
        "addressType": address_type,
        "endpoints": [{"addresses": [None]}],
        "ports": [{"name": "mysql", "port": 3306, "protocol": "TCP"}],
    }


def sites(obj: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(s.field, s.wants, s.why) for s in null_sites(obj, VALIDATOR)]


@pytest.mark.parametrize(("family", "address"), [("IPv4", DOCUMENTATION_IPV4), ("IPv6", DOCUMENTATION_IPV6)])
def test_an_unknown_endpoint_address_becomes_a_documentation_address_of_the_slices_family(family: str, address: str) -> None:
    obj = endpoint_slice(family)
    (site,) = null_sites(obj, VALIDATOR)
    assert (site.field, site.wants, site.form, site.why) == ("endpoints[0].addresses[0]", "string", "ip", "list item")
    assert placeholder(site, obj) == address
    filled = with_placeholders(obj, [site])
    assert filled["endpoints"] == [{"addresses": [address]}] and obj["endpoints"] == [{"addresses": [None]}]
    assert null_sites(filled, VALIDATOR) == [] and VALIDATOR.errors(filled) == []


def test_a_null_optional_field_means_unset_and_is_no_site() -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "annotations": None},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"volumes": None, "containers": [{"name": "web", "image": "nginx:1", "volumeMounts": None}]},
            },
        },
    }
    assert sites(deployment) == []


def test_a_map_value_a_list_item_and_a_required_field_want_values() -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"team": None}},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"spec": {"containers": [{"name": None, "image": "nginx:1", "args": ["--a", None]}]}},
        },
    }
    assert sites(deployment) == [
        ("metadata.labels.team", "string", "map value"),
        ("spec.template.spec.containers[0].name", "string", "required field"),
        ("spec.template.spec.containers[0].args[1]", "string", "list item"),
    ]


def test_a_custom_resource_is_read_by_its_crd_and_its_metadata_as_object_meta() -> None:
    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "vision", "labels": {"a": None}},
        "spec": {"cohortName": None, "resourceGroups": [{"coveredResources": ["cpu", None], "flavors": None}]},
    }
    assert sites(queue) == [
        ("spec.resourceGroups[0].coveredResources[1]", "string", "list item"),
        ("spec.resourceGroups[0].flavors", "array", "required field"),
        ("metadata.labels.a", "string", "map value"),
    ]


def test_a_custom_resource_field_marked_nullable_takes_a_null() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"spec": {"type": "object", "required": ["x"], "properties": {"x": {"type": "string", "nullable": True}}}},
    }
    validator = Validator({("example.com/v1", "Thing"): schema}, "1.35")
    obj = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": {"x": None}}
    assert null_sites(obj, validator) == []
    schema["properties"]["spec"]["properties"]["x"].pop("nullable")
    assert [s.field for s in null_sites(obj, validator)] == ["spec.x"]


@pytest.mark.parametrize(
    ("node", "value"),
    [
        ({"type": "integer", "minimum": 1}, 1),
        ({"type": "integer"}, 0),
        ({"type": "boolean"}, False),
        ({"type": "string", "enum": ["Always", "Never"]}, "Always"),
        ({"type": "string", "format": "date-time"}, "1970-01-01T00:00:00Z"),
        ({"type": "string", "format": "cidr"}, "192.0.2.0/24"),
        ({"type": "object", "properties": {}}, {}),
        ({"type": "array", "items": {"type": "string"}}, []),
    ],
)
def test_placeholders_take_the_type_and_form_the_schema_wants(node: dict[str, Any], value: Any) -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"v": {"type": "array", "items": node}}}}}
    validator = Validator({("example.com/v1", "Thing"): schema}, "1.35")
    obj = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": {"v": [None]}}
    (site,) = null_sites(obj, validator)
    assert placeholder(site, obj) == value
