"""A stack file of any shape is refused or read within seconds (stackmodel/stackfile.py
shape_problems): anchors that contain themselves, alias bombs as Pulumi's go-yaml refuses them,
nesting and sizes past the loader's bounds, each with the path where it is."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from facts.limits import STACK_FILE_MAX_BYTES, YAML_MAX_DEPTH, YAML_MAX_VALUES
from stackmodel.config import ConfigError, read_stack
from stackmodel.stackfile import shape_problems

HEAD = "config:\n  mlplatform:cluster: {kind: kind}\n  mlplatform:components:\n    kueue:\n      values:\n"


def bomb(levels: int, width: int) -> str:
    lines = [f"        l0: &l0 [{', '.join(['x'] * width)}]"]
    lines += [f"        l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return HEAD + "\n".join(lines) + "\n"


def refused(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        read_stack(path)
    return [(p.path, p.message) for p in caught.value.problems]


def test_an_anchor_that_contains_itself_is_named_where_it_is(tmp_path: Path) -> None:
    found = refused(tmp_path, HEAD.replace("values:\n", "values: &v {a: [*v]}\n"))
    assert [p for p, _ in found] == ["mlplatform:components.kueue.values"]
    assert "the anchor &v (line 5) contains an alias of itself at mlplatform:components.kueue.values.a[0]" in found[0][1]


def test_a_billion_laughs_is_refused_at_once_where_its_anchors_are(tmp_path: Path) -> None:
    started = time.monotonic()
    found = refused(tmp_path, bomb(9, 10))
    assert time.monotonic() - started < 2
    assert [p for p, _ in found] == ["mlplatform:components.kueue.values"]
    assert "document contains excessive aliasing" in found[0][1]


def test_go_yamls_alias_ratio_decides_what_is_a_bomb() -> None:
    """Go-yaml lets through up to 99% of a small document from aliases (facts/limits.py)."""
    assert shape_problems(bomb(3, 10)) == []  # 1,200 of 1,230 values through aliases: 97.5%
    assert [p for p, _ in shape_problems(bomb(4, 10))] == ["mlplatform:components.kueue.values"]  # 99.7%


def test_nesting_past_the_bound_is_refused_without_a_recursion(tmp_path: Path) -> None:
    found = refused(tmp_path, HEAD.replace("values:\n", "values: " + "[" * 5000 + "]" * 5000 + "\n"))
    assert found == [
        ("mlplatform:components.kueue.values", f"nested more than {YAML_MAX_DEPTH} levels deep (line 5): no stack file or chart value nests so deep; flatten it")
    ]


def test_too_many_values_and_too_many_bytes_are_refused(tmp_path: Path) -> None:
    many = HEAD + "        l: [" + ",".join(["1"] * (YAML_MAX_VALUES + 10)) + "]\n"
    assert [p for p, _ in refused(tmp_path, many)] == ["mlplatform:components.kueue.values"]
    big = HEAD + "        s: " + "x" * (STACK_FILE_MAX_BYTES + 1) + "\n"
    assert [p for p, _ in refused(tmp_path, big)] == ["file"]


def test_the_shipped_stacks_have_no_shape_problem() -> None:
    for path in sorted(Path(__file__).resolve().parent.joinpath("stacks").glob("Pulumi.*.yaml")):
        assert shape_problems(path.read_text()) == [], path
