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
