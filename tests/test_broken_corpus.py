"""Every stack file of tests/corpus/broken/ is refused the way the README promises:
`python -m stacks plan <file>` exits 2, names each config path the file expects, shows
no traceback and plans nothing.

"Plans nothing" holds by construction: the CLI validates the stack before it calls
`tooling.plan.evaluate`, the only way into the program, so a refused stack never reaches
a resource registration (`pulumi up` likewise: `__main__.py` validates, then builds).
The test replaces `evaluate` with one that fails, so a stack that got through to it
would fail here rather than be planned.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import tooling.cli
from tests.corpus import make_broken
from tooling.cli import EXIT_CONFIG_ERROR, main

CORPUS = Path(__file__).resolve().parent / "corpus" / "broken"
FILES = sorted(CORPUS.glob("*.yaml"))
EXPECT = re.compile(r"^# expect: (.+)$", re.MULTILINE)


def expected_paths(path: Path) -> list[str]:
    sidecar = path.with_suffix(".expect")
    header = sidecar.read_text() if sidecar.exists() else path.read_bytes().decode("utf-8", "replace")
    return EXPECT.findall(header)


def test_the_corpus_is_large_and_each_file_says_what_it_expects() -> None:
    assert len(FILES) > 100
    assert [f.name for f in FILES if not expected_paths(f)] == []


def test_the_committed_corpus_is_what_its_table_writes() -> None:
    on_disk = {p.name: p.read_bytes() for p in CORPUS.iterdir()}
    assert on_disk == make_broken.written(), "run: python tests/corpus/make_broken.py"


def test_every_broken_stack_exits_2_naming_its_paths(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def no_plan(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a refused stack reached the program")

    monkeypatch.setattr(tooling.cli, "evaluate", no_plan)
    failures = []
    for path in FILES:
        try:
            code = main(["plan", str(path)])
        except BaseException as escaped:
            failures.append(f"{path.name}: raised {type(escaped).__name__}: {escaped}")
            continue
        out, err = capsys.readouterr()
        reported = set(re.findall(r"^  - (.+?): ", err, re.MULTILINE))
        missing = [p for p in expected_paths(path) if p not in reported]
        if code != EXIT_CONFIG_ERROR or missing or "Traceback" in err or out:
            failures.append(f"{path.name}: exit {code}, missing {missing}, reported {sorted(reported)}\n{err}")
    assert failures == [], "\n".join(failures)
