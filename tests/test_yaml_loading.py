"""The YAML loader the schema checks and the full render read CRDs and rendered output
with: libyaml's parser where PyYAML has it, the same documents as the pure-Python one."""

from __future__ import annotations

import datetime
import gc
from pathlib import Path

import pytest
import yaml

from tooling import render_cache, schemas
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
    """Parses are kept in the render cache (the test workers share one): the second process reads, never parses."""
    monkeypatch.setenv(render_cache.ENV, str(tmp_path))
    monkeypatch.setattr(schemas, "_PARSED", {})
    text = "a: 1\n---\nb: [x, 2.5, true, null]\n"
    assert schemas.parsed(text) == ({"a": 1}, {"b": ["x", 2.5, True, None]})
    assert [p.suffix for p in (tmp_path / "parsed").iterdir()] == [".marshal"]
    monkeypatch.setattr(schemas, "_PARSED", {})  # as another process starts
    monkeypatch.setattr(schemas, "load_all", lambda text: pytest.fail("parsed a second time"))
    assert schemas.parsed(text) == ({"a": 1}, {"b": ["x", 2.5, True, None]})


def test_a_document_with_a_timestamp_is_parsed_by_each_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(render_cache.ENV, str(tmp_path))
    monkeypatch.setattr(schemas, "_PARSED", {})
    assert schemas.parsed("since: 2026-12-01\n") == ({"since": datetime.date(2026, 12, 1)},)
    assert not (tmp_path / "parsed").exists()


def test_a_parse_is_kept_per_parser_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another loader (an edit of tooling/schemas.py, another PyYAML) parses again: a parse is
    kept under the text's digest and the parser's version."""
    monkeypatch.setenv(render_cache.ENV, str(tmp_path))
    monkeypatch.setattr(schemas, "_PARSED", {})
    schemas.parsed("a: 1\n")
    monkeypatch.setattr(schemas, "_PARSED", {})
    monkeypatch.setattr(schemas, "_parser", lambda: "another-loader")
    monkeypatch.setattr(schemas, "load_all", lambda text: [{"a": "parsed again"}])
    assert schemas.parsed("a: 1\n") == ({"a": "parsed again"},)
    assert len(list((tmp_path / "parsed").iterdir())) == 2


class PyYamlsOwn(yaml.CSafeLoader):
    """libyaml's safe loader with PyYAML's own resolver and constructor: Loader without its
    two shortcuts (the tag cache, the direct construction)."""


PyYamlsOwn.add_constructor("tag:yaml.org,2002:value", PyYamlsOwn.yaml_constructors["tag:yaml.org,2002:str"])


def documents(text: str, loader: type) -> str:
    """The documents as repr shows them: types (True vs 1, 1.0 vs 1), key order and values.
    The collector is off meanwhile (a parse leaves no cycles; it took most of the time)."""
    gc.disable()
    try:
        return repr(list(yaml.load_all(text, Loader=loader)))
    except yaml.YAMLError as err:
        return f"{type(err).__name__}: {err}"
    finally:
        gc.enable()


UNUSUAL = {
    "merge keys": "base: &b {a: 1, b: [x]}\nderived:\n  <<: *b\n  b: 2\n",
    "a merge of a list": "one: &o {a: 1}\ntwo: &t {b: 2}\nboth:\n  <<: [*o, *t]\n  c: 3\n",
    "a mapping as a key": "? {a: 1}\n: value\n",
    "a list as a key": "? [a]\n: value\n",
    "anchors and aliases": "a: &x [1, 2]\nb: *x\nc: &m {k: v}\nd: *m\n",
    "a recursive alias": "&r [1, *r]\n",
    "another tag": "a: !!set {x, y}\nb: !!omap [{k: v}]\n",
    "an unknown tag": "a: !custom value\n",
    "scalars of every type": "s: 'yes'\nb: yes\nn: ~\ni: 0o17\nh: 0x1F\nf: 1.5e3\nt: 2026-12-01T10:00:00Z\nd: 2026-12-01\nx: !!binary aGk=\ne: =\ninf: .inf\n",
    "a key that is no string": "1: one\ntrue: yes\nnull: none\n1.5: x\n",
    "a duplicate key": "a: 1\nb: 2\na: 3\n",
    "an equals sign as a key": "=: x\n",
    "a document of a scalar": "--- just text\n--- 42\n",
}


@pytest.mark.parametrize("text", UNUSUAL.values(), ids=UNUSUAL.keys())
def test_the_fast_loader_gives_pyyamls_own_documents_on_unusual_yaml(text: str) -> None:
    assert documents(text, Loader) == documents(text, PyYamlsOwn)


def test_merge_keys_and_aliases_come_out_as_pyyaml_builds_them() -> None:
    assert yaml.load(UNUSUAL["merge keys"], Loader=Loader) == {"base": {"a": 1, "b": ["x"]}, "derived": {"a": 1, "b": 2}}
    loaded = yaml.load(UNUSUAL["anchors and aliases"], Loader=Loader)
    assert loaded["a"] is loaded["b"] and loaded["c"] is loaded["d"]  # an alias is the anchor's object, as in PyYAML
    recursive = yaml.load(UNUSUAL["a recursive alias"], Loader=Loader)
    assert recursive[1] is recursive
    assert yaml.load("a: yes\nb: 'yes'\nc: 010\n", Loader=Loader) == {"a": True, "b": "yes", "c": 8}


def test_a_nesting_deeper_than_the_stack_is_built_by_pyyaml() -> None:
    text = "[" * 2000 + "]" * 2000
    assert documents(text, Loader) == documents(text, PyYamlsOwn)


def test_the_fast_loader_gives_pyyamls_own_documents_on_every_shipped_install() -> None:
    """Every chart's and tree's output the shipped stacks render (helm, kustomize), as the
    full render parses it: the same documents as PyYAML's own construction, types included."""
    from tests.support.renders import rendered
    from tooling import fullrender

    for stack in ("kind", "dev", "prod"):
        rendered(stack)
    texts = {o.text for o in fullrender._OUTPUTS.values() if o.text is not None}
    cache = render_cache.current()  # the run's: what another worker rendered is there
    assert cache is not None
    texts |= {path.read_text() for path in (cache.root / "outputs").glob("*.yaml")}
    assert sum(len(text) for text in texts) > 10_000_000  # every install of the three stacks: ~20 MB
    for text in texts:
        assert documents(text, Loader) == documents(text, PyYamlsOwn), text[:200]
