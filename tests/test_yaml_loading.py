"""The YAML loader the schema checks and the full render read CRDs and rendered output
with: libyaml's parser where PyYAML has it, the same documents as the pure-Python one."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
import yaml

from tooling import schemas
from tooling.schemas import Loader, PureLoader, crd_folders, load_all

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


@pytest.mark.skipif(not crd_folders(), reason="no upstream CRDs")
def test_both_loaders_read_the_pinned_crds_alike() -> None:
    # The small ones: the pure loader takes ~30 s for all of them.
    files = (p for folder in crd_folders().values() for p in folder.glob("*.yaml"))
    paths = sorted(files, key=lambda p: p.stat().st_size)[:8]
    for path in paths:
        text = path.read_text()
        assert list(yaml.load_all(text, Loader=Loader)) == list(yaml.load_all(text, Loader=PureLoader)), path.name


def test_what_one_process_parsed_another_reads_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test workers share parses through SHARED_PARSES: the second reads, never parses."""
    monkeypatch.setattr(schemas, "SHARED_PARSES", tmp_path)
    monkeypatch.setattr(schemas, "_PARSED", {})
    text = "a: 1\n---\nb: [x, 2.5, true, null]\n"
    assert schemas.parsed(text) == ({"a": 1}, {"b": ["x", 2.5, True, None]})
    assert [p.suffix for p in tmp_path.iterdir()] == [".marshal"]
    monkeypatch.setattr(schemas, "_PARSED", {})  # as another process starts
    monkeypatch.setattr(schemas, "load_all", lambda text: pytest.fail("parsed a second time"))
    assert schemas.parsed(text) == ({"a": 1}, {"b": ["x", 2.5, True, None]})


def test_a_document_with_a_timestamp_is_parsed_by_each_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schemas, "SHARED_PARSES", tmp_path)
    monkeypatch.setattr(schemas, "_PARSED", {})
    assert schemas.parsed("since: 2026-12-01\n") == ({"since": datetime.date(2026, 12, 1)},)
    assert list(tmp_path.iterdir()) == []
