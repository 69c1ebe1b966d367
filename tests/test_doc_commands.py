"""Every command README.md and docs/gke.md tell a reader to type exists with the arguments shown.

The commands are the lines of the documents' ```sh blocks and their inline code that starts
with a command of ours. Ours are checked: each `python -m mlplatform ...` (or its alias
`python -m stacks ...`) parses with the CLI's own
parser, and the offline ones that need no full render (plan, render without --full, policy,
cost, versions, reference, diagram) run against the fixture stacks (the runbook's `staging` is
its step 0's copy of dev); a full render (check, images, ...) is what
`make check-stacks` runs on every stack. Each `make` target is in the Makefile, each
`pulumi stack output` an output the program exports, each `pulumi config set --secret` a secret
key the program reads. Other programs' commands (pulumi's others, gcloud, kubectl) are not run:
none is installed where the tests run; the test only knows them by name, so a command of a
program nobody listed fails.
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.fixtures import FIXTURE_STACKS
from tooling.plan import Plan

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = ("README.md", "docs/gke.md")
OURS = ("python -m mlplatform ", "python -m stacks ", "make ", "pulumi stack output ", "pulumi config set ")
"""Inline code that starts so is a command to check (prose names many other things in backticks)."""
OTHER_PROGRAMS = {"pulumi", "gcloud", "kubectl", "htpasswd", "tr", "cp", "dig", "grep", "crane"}
RUN = {"plan", "render", "policy", "cost", "versions", "reference", "diagram"}
"""The offline commands that run here (no full render, no cluster, no network)."""
PLACEHOLDERS = {"<stack>": "dev", "DIR": "out/dir", "OLD": "out/old", "NEW": "out/new"}
SEPARATORS = {"|", "&&", ";", ">>", ">"}
CLI = (["python", "-m", "mlplatform"], ["python", "-m", "stacks"])
"""Our command line, and the alias kept for it."""


def _blocks(text: str) -> Iterator[str]:
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        yield from block.replace("\\\n", " ").splitlines()


def _inline(text: str) -> Iterator[str]:
    for span in re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S)):
        if span.startswith(OURS):
            yield span


def commands(text: str) -> list[list[str]]:
    """Each command of a document as its words (comments dropped, pipelines split)."""
    found = []
    for line in [*_blocks(text), *_inline(text)]:
        words: list[str] = []
        for word in shlex.split(line, comments=True):
            if word in SEPARATORS:
                found.append(words)
                words = []
            else:
                words.append(PLACEHOLDERS.get(word, word))
        found.append(words)
    return [c for c in found if c and "=" not in c[0]]


def _all() -> list[tuple[str, list[str]]]:
    """Each distinct command once, with the first document that shows it."""
    seen: dict[tuple[str, ...], str] = {}
    for doc in DOCUMENTS:
        for command in commands((REPO / doc).read_text()):
            seen.setdefault(tuple(command), doc)
    return [(doc, list(command)) for command, doc in seen.items()]


ALL = _all()


def _ids(case: tuple[str, list[str]]) -> str:
    return f"{case[0]}: {' '.join(case[1])}"[:100]


def test_the_documents_have_commands_of_every_kind() -> None:
    kinds = {tuple(c[:3]) if c[:3] in CLI else c[0] for _, c in ALL}
    assert {("python", "-m", "mlplatform"), "make", "pulumi", "gcloud"} <= kinds
    assert ("README.md", ["make", "test"]) in ALL


def test_every_command_is_of_a_known_program() -> None:
    unknown = [_ids(case) for case in ALL if case[1][0] not in {"python", "make", *OTHER_PROGRAMS}]
    assert unknown == []


@pytest.mark.parametrize("case", [c for c in ALL if c[1][0] == "make"], ids=_ids)
def test_every_make_target_exists(case: tuple[str, list[str]]) -> None:
    targets = set(re.findall(r"(?m)^([a-z][\w.-]*):", (REPO / "Makefile").read_text()))
    assert set(case[1][1:]) <= targets


@pytest.mark.parametrize("case", [c for c in ALL if c[1][:2] == ["pulumi", "config"]], ids=_ids)
def test_every_secret_set_is_one_the_program_reads(case: tuple[str, list[str]]) -> None:
    from stackmodel.secrets import SECRET_KEYS

    words = case[1]
    assert words[2] == "set" and "--secret" in words
    key = next(w for w in words[3:] if w.startswith("mlplatform:")).split("[")[0]
    assert key in {f"mlplatform:{s.key}" for s in SECRET_KEYS if not s.retired}


@pytest.mark.parametrize("case", [c for c in ALL if c[1][:3] == ["pulumi", "stack", "output"]], ids=_ids)
def test_every_stack_output_read_is_one_the_program_exports(
    case: tuple[str, list[str]], shipped_plan: Callable[[str], Plan]
) -> None:
    name = case[1][3]
    assert name in shipped_plan("prod").outputs  # the fixture with every output (a hostname, a registry)


@pytest.fixture
def doc_stacks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stacks the documents name: acme's (the fixtures) and the runbook's `staging`, a copy
    of dev (`cp stacks/Pulumi.dev.yaml stacks/Pulumi.staging.yaml`, docs/gke.md step 0)."""
    import stackmodel.config

    directory = tmp_path / "stacks"
    shutil.copytree(FIXTURE_STACKS, directory)
    shutil.copy(directory / "Pulumi.dev.yaml", directory / "Pulumi.staging.yaml")
    monkeypatch.setattr(stackmodel.config, "STACKS_DIR", directory)
    monkeypatch.chdir(tmp_path)  # `render --out out/...` writes here
    return directory


STACKS_COMMANDS = [c for c in ALL if c[1][:3] in CLI]


@pytest.mark.parametrize("case", STACKS_COMMANDS, ids=_ids)
def test_every_stacks_command_parses_and_the_offline_ones_run(
    case: tuple[str, list[str]], doc_stacks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tooling.cli import main, parser

    argv = case[1][3:]
    try:
        args = parser().parse_args(argv)
    except SystemExit:
        pytest.fail(f"{_ids(case)}: {capsys.readouterr().err.strip()}")
    if hasattr(args, "stack") and args.stack:
        assert (doc_stacks / f"Pulumi.{args.stack}.yaml").exists(), f"{_ids(case)}: no stack {args.stack}"
    if args.command in RUN and not getattr(args, "full", False) and not getattr(args, "against", None):
        assert main(argv) == 0, capsys.readouterr().err
        assert capsys.readouterr().out or any(Path("out").rglob("*.yaml"))


def test_a_documented_command_the_cli_would_refuse_is_caught(capsys: pytest.CaptureFixture[str]) -> None:
    """What the checks above see in a document: block lines with comments and pipes, inline
    commands of ours, and a wrong option is refused by the parser they use."""
    from tooling.cli import parser

    text = (
        "Run `python -m stacks plan <stack> --jsno` or:\n\n```sh\n"
        "pulumi stack export | python -m stacks plan dev --against -   # before pulumi up\n"
        "make \\\n  docs\n```\nand `kubectl get pods` (not ours)."
    )
    found = commands(text)
    assert found == [
        ["pulumi", "stack", "export"],
        ["python", "-m", "stacks", "plan", "dev", "--against", "-"],
        ["make", "docs"],
        ["python", "-m", "stacks", "plan", "dev", "--jsno"],
    ]
    with pytest.raises(SystemExit):
        parser().parse_args(found[3][3:])
    assert "unrecognized arguments: --jsno" in capsys.readouterr().err


def test_every_relative_link_of_the_docs_resolves() -> None:
    broken = [
        f"{doc.relative_to(REPO)}: {target}"
        for doc in [REPO / "README.md", *(REPO / "docs").glob("*.md")]
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text())
        if not target.startswith(("http://", "https://")) and not (doc.parent / target).exists()
    ]
    assert broken == []
