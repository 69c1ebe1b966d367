"""Read a stack file (`Pulumi.<stack>.yaml`) the way Pulumi does, and say what it does not.

PyYAML, left alone, lets the last of two equal keys win, returns non-string keys that
crash the schema later, and reads a UTF-16 file as garbage. This reader reports each of
those with the key's path (the path a config error names: `mlplatform:teams[0].name`, or
the top-level key outside `config:`), so a stack file's problems are listed together:

- the bytes: UTF-8 only (a UTF-8 byte-order mark is accepted); UTF-16 and UTF-32, which
  Windows shells write by default, and other encodings are refused with how to re-save;
- the YAML: duplicate keys and keys that are not strings (YAML 1.1, which PyYAML reads,
  takes an unquoted `on`, `yes`, `no` or `1` as a boolean or a number);
- the top level: what Pulumi's stack settings file has (pulumi/pulumi
  sdk/go/common/workspace/project.go `ProjectStack`: secretsprovider, encryptedkey,
  encryptionsalt, config, environment); a config key written there instead of under
  `config:` is named as such.

Entries with a non-string key are dropped from what is returned, so the schema sees only
what it can judge.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

Found = list[tuple[str, str]]
"""(path, message) per problem."""

FILE = "file"
"""The path of a problem with the file as a whole."""
CONFIG = "config"
ENVIRONMENT = "environment"
TOP_LEVEL_KEYS = ("secretsprovider", "encryptedkey", "encryptionsalt", CONFIG, ENVIRONMENT)
"""The keys of a Pulumi stack settings file (`ProjectStack`, see above)."""
STRING_TAG = "tag:yaml.org,2002:str"
MERGE_TAG = "tag:yaml.org,2002:merge"
KIND_OF_TAG = {
    "tag:yaml.org,2002:bool": "a boolean",
    "tag:yaml.org,2002:int": "a number",
    "tag:yaml.org,2002:float": "a number",
    "tag:yaml.org,2002:null": "null",
    "tag:yaml.org,2002:timestamp": "a date",
}
BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
RESAVE = "save it as UTF-8 (PowerShell: Get-Content FILE | Set-Content -Encoding utf8 FILE; or your editor's 'Save with encoding')"


@dataclass
class StackFile:
    """What a stack file says, and what is wrong with it as a file."""

    config: dict[str, Any] = field(default_factory=dict)
    """The `config:` mapping, entries with non-string keys dropped."""
    environment: Any = None
    """The `environment:` value as written (ESC imports; stacks/esc.py reads it)."""
    problems: Found = field(default_factory=list)
    fatal: bool = False
    """Nothing in the file can be read (encoding, YAML syntax, not a mapping)."""


@dataclass
class Document:
    """A YAML file's one document, and what is wrong with it as a file."""

    document: Any = None
    problems: Found = field(default_factory=list)
    fatal: bool = False


def read_document(path: Path) -> Document:
    """A YAML file's document (UTF-8, no duplicate or non-string keys), or why not."""
    text, problem = decode(path.read_bytes())
    if problem:
        return Document(problems=[(FILE, problem)], fatal=True)
    try:
        document, found = load_yaml(text)
    except yaml.YAMLError as err:
        return Document(problems=[(FILE, f"not valid YAML: {err}")], fatal=True)
    return Document(document=document, problems=found)


def read(path: Path) -> StackFile:
    """The stack file at `path`, with every problem found in it as a file."""
    read = read_document(path)
    result = StackFile(problems=list(read.problems), fatal=read.fatal)
    if read.fatal:
        return result
    document = {} if read.document is None else read.document
    if not isinstance(document, dict):
        result.problems.append((CONFIG, "the stack file needs a top-level 'config:' mapping"))
        result.fatal = True
        return result
    result.problems += top_level_problems(document)
    config = document.get(CONFIG, {})
    if config is None:
        config = {}
    if not isinstance(config, dict):
        result.problems.append((CONFIG, "the stack file needs a top-level 'config:' mapping"))
        result.fatal = True
        return result
    result.config = config
    result.environment = document.get(ENVIRONMENT)
    return result


def decode(raw: bytes) -> tuple[str, str | None]:
    """The file's text, or why it is not UTF-8."""
    for bom, name in BOMS:
        if raw.startswith(bom):
            return "", f"the file is {name} (Windows shells write that by default); {RESAVE}"
    if len(raw) >= 2 and b"\x00" in raw[:2]:
        return "", f"the file is UTF-16 without a byte-order mark; {RESAVE}"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        return "", f"not UTF-8: byte 0x{raw[err.start]:02x} on line {line} (Latin-1 or Windows-1252?); {RESAVE}"
    return text.removeprefix("\ufeff"), None


def load_yaml(text: str) -> tuple[Any, Found]:
    """The document, and its duplicate and non-string keys. Raises yaml.YAMLError."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, []
        found = list(_key_problems(node, ()))
        document = loader.construct_document(node)
    finally:
        loader.dispose()
    return _string_keys_only(document), found


def path_of(parts: tuple[str | int, ...]) -> str:
    """`("config", "mlplatform:teams", 0, "name")` -> `mlplatform:teams[0].name`; outside
    `config:` the top-level key starts the path."""
    if parts[:1] == (CONFIG,) and len(parts) > 1:
        parts = parts[1:]
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _key_problems(node: yaml.Node, parts: tuple[str | int, ...]) -> Iterator[tuple[str, str]]:
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yield from _key_problems(item, (*parts, i))
    if not isinstance(node, yaml.MappingNode):
        return
    seen: dict[str, int] = {}
    for key, value in node.value:
        if key.tag == MERGE_TAG:
            continue  # `<<: *anchor`: the keys it brings in may be overridden
        line = key.start_mark.line + 1
        if not isinstance(key, yaml.ScalarNode) or key.tag != STRING_TAG:
            yield _non_string_key(key, parts, line)
            continue
        name = str(key.value)
        if name in seen:
            yield (
                path_of((*parts, name)),
                f"duplicate key (lines {seen[name]} and {line}): YAML keeps only the last, so line "
                f"{seen[name]}'s value is silently lost; merge the two into one",
            )
        else:
            seen[name] = line
        yield from _key_problems(value, (*parts, name))


def _non_string_key(key: yaml.Node, parts: tuple[str | int, ...], line: int) -> tuple[str, str]:
    if isinstance(key, yaml.ScalarNode):
        kind = KIND_OF_TAG.get(key.tag, "not a string")
        return (
            path_of((*parts, str(key.value))),
            f"key {key.value!r} on line {line} is read as {kind}, not a string (YAML 1.1 takes unquoted "
            f"on/off/yes/no and numbers so); quote it: '{key.value}':",
        )
    where = path_of(parts) or "the top level"
    return (path_of(parts) or FILE, f"a key on line {line} of {where} is a list or mapping; keys are plain strings")


def _string_keys_only(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _string_keys_only(v) for k, v in value.items() if isinstance(k, str)}
    if isinstance(value, list):
        return [_string_keys_only(v) for v in value]
    return value


def top_level_problems(document: dict[str, Any]) -> Found:
    """Top-level keys a stack settings file does not have, each with what to do."""
    found: Found = []
    for key in document:
        if key in TOP_LEVEL_KEYS:
            continue
        if ":" in key:
            found.append((key, "a config key at the top level, where Pulumi ignores it; indent it under 'config:'"))
            continue
        close = difflib.get_close_matches(key, TOP_LEVEL_KEYS, n=1, cutoff=0.6)
        hint = (
            f"; did you mean {close[0]!r}?"
            if close
            else f"; a config key goes under 'config:' with its namespace, e.g. mlplatform:{key}"
        )
        found.append((key, f"not a stack-file key (a stack file has {', '.join(TOP_LEVEL_KEYS)}){hint}"))
    return found
