"""The YAML loader the schema checks and the full render read CRDs and rendered output
with: libyaml's parser where PyYAML has it, the same documents as the pure-Python one."""

from __future__ import annotations

import pytest
import yaml

from tooling.schemas import Loader, PureLoader, crd_dir, load_all

# prometheus-operator's AlertmanagerConfig CRD (kube-prometheus-stack renders it) lists the
# label matchers' operators, `=` unquoted among them.
MATCH_TYPE = """
matchType:
  enum:
  - '!='
  - =
  - =~
  - '!~'
  type: string
"""


def test_the_fast_loader_is_libyamls_where_pyyaml_has_it() -> None:
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML built without libyaml: the pure loader stands in")
    assert issubclass(Loader, yaml.CSafeLoader)
    assert not issubclass(PureLoader, yaml.CSafeLoader)


@pytest.mark.parametrize("loader", [Loader, PureLoader], ids=["fast", "pure"])
def test_a_plain_equals_sign_is_the_string_it_is_in_yaml_1_2(loader: type) -> None:
    assert yaml.load(MATCH_TYPE, Loader=loader) == {"matchType": {"enum": ["!=", "=", "=~", "!~"], "type": "string"}}


def test_load_all_keeps_only_non_empty_mappings() -> None:
    assert load_all("---\n---\na: 1\n---\n- x\n---\n{}\n---\nb: =\n") == [{"a": 1}, {"b": "="}]


@pytest.mark.skipif(crd_dir() is None, reason="no upstream CRDs")
def test_both_loaders_read_the_pinned_crds_alike() -> None:
    root = crd_dir()
    assert root is not None
    # The small ones: the pure loader takes ~30 s for all of them.
    paths = sorted((p for p in root.rglob("*.yaml")), key=lambda p: p.stat().st_size)[:8]
    for path in paths:
        text = path.read_text()
        assert list(yaml.load_all(text, Loader=Loader)) == list(yaml.load_all(text, Loader=PureLoader)), path.name
