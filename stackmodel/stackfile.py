"""Read a stack file (`Pulumi.<stack>.yaml`) the way Pulumi does, and say what it does not.

PyYAML, left alone, lets the last of two equal keys win, returns non-string keys that
crash the schema later, and reads a UTF-16 file as garbage. This reader reports each of
those with the key's path (the path a config error names: `mlplatform:teams[0].name`, or
the top-level key outside `config:`), so a stack file's problems are listed together:

- the bytes: UTF-8 only (a UTF-8 byte-order mark is accepted); UTF-16 and UTF-32, which
  Windows shells write by default, and other encodings are refused with how to re-save;
- the YAML: duplicate keys and keys that are not strings (YAML 1.1, which PyYAML reads,
  takes an unquoted `on`, `yes`, `no` or `1` as a boolean or a number);
- the shape, before anything is built from it (facts/limits.py, "YAML"): a file larger than
  a stack file can be, nesting deeper than any stack file's, an anchor whose value contains
  an alias of itself, and aliases that expand the file past what Pulumi's own reader takes
  (an "alias bomb"), each refused with the path where it is, in time linear in the file;
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

from facts.limits import (
    STACK_FILE_MAX_BYTES,
    YAML_ALIAS_MIN_ALIASED,
    YAML_ALIAS_MIN_DECODES,
    YAML_MAX_DEPTH,
    YAML_MAX_VALUES,
    yaml_allowed_alias_ratio,
)

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
    """The `environment:` value as written (ESC imports; stackmodel/esc.py reads it)."""
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
    size = path.stat().st_size
    if size > STACK_FILE_MAX_BYTES:
        return Document(
            problems=[
                (
                    FILE,
                    f"{size:,} bytes: a stack file is a few kilobytes, and this reader takes at most "
                    f"{STACK_FILE_MAX_BYTES:,}; is it the right file? (a chart's values belong in its values "
                    "overlay, a few keys each)",
                )
            ],
            fatal=True,
        )
    text, problem = decode(path.read_bytes())
    if problem:
        return Document(problems=[(FILE, problem)], fatal=True)
    try:
        shape = shape_problems(text)
        if shape:
            return Document(problems=shape, fatal=True)
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


@dataclass
class _Open:
    """A mapping or sequence the event walk is inside."""

    parts: tuple[str | int, ...]
    anchor: str | None
    mapping: bool
    size: int = 1
    """Values in it so far, aliases expanded (the collection itself counts one)."""
    index: int = 0
    """Sequence: the next entry's index. Mapping: 0 before a key, 1 before its value."""
    key: str | int = "?"


def shape_problems(text: str) -> Found:
    """What no stack file can be, found in one walk of the parser's events (no document is
    built, so nothing here is recursive or grows with what aliases expand to): nesting deeper
    than YAML_MAX_DEPTH, an anchor whose value contains an alias of itself, and aliases that
    expand the document past what Pulumi's reader takes (go-yaml's alias ratio) or past
    YAML_MAX_VALUES. A syntax error is left to the reader that reports it. libyaml's parser,
    where PyYAML has it, is fast but stops at a nesting of 1,000 levels with an error of its
    own; the pure-Python one, which does not, then walks the file again."""
    if yaml.__with_libyaml__:
        try:
            return _shape_problems(text, yaml.CSafeLoader)
        except yaml.YAMLError:
            pass
    try:
        return _shape_problems(text, yaml.SafeLoader)
    except yaml.YAMLError:
        return []  # the reader reports the syntax error itself


def _shape_problems(text: str, loader: Any) -> Found:
    found: Found = []
    stack: list[_Open] = []
    anchors: dict[str, tuple[tuple[str | int, ...], int]] = {}
    """anchor -> (where it is, its value's size with aliases expanded)."""
    decoded = aliased = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            closed = stack.pop()
            if closed.anchor is not None:
                anchors[closed.anchor] = (closed.parts, closed.size)
            _advance(stack, None, closed.size)
            continue
        if not isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            continue
        parts = _next_parts(stack)
        if isinstance(event, yaml.AliasEvent):
            alias = str(event.anchor)
            inside = next((o for o in stack if o.anchor == alias), None)
            if inside is not None:
                where = path_of(parts) or FILE
                found.append(
                    (
                        path_of(inside.parts) or FILE,
                        f"the anchor &{alias} (line {_line(event)}) contains an alias of itself at "
                        f"{where}: its value would never end, and Pulumi refuses it (\"anchor '{alias}' value contains "
                        "itself\"); write the value out instead of the alias",
                    )
                )
                _advance(stack, None, 1)
                continue
            expanded = anchors.get(alias, ((), 0))
            decoded += 1 + expanded[1]
            aliased += expanded[1]
            _advance(stack, None, 1 + expanded[1])
            excessive = (
                aliased > YAML_ALIAS_MIN_ALIASED
                and decoded > YAML_ALIAS_MIN_DECODES
                and aliased / decoded > yaml_allowed_alias_ratio(decoded)
            )
            if excessive or decoded > YAML_MAX_VALUES:
                found.append(_expansion(alias, expanded[0], parts, decoded, _line(event)))
                return found
            continue
        decoded += 1
        anchor = event.anchor
        if isinstance(event, yaml.ScalarEvent):
            if anchor is not None:
                anchors[anchor] = (parts, 1)
            _advance(stack, event.value, 1)
        else:
            if len(stack) >= YAML_MAX_DEPTH:
                found.append(
                    (
                        path_of(_holder(parts)) or FILE,
                        f"nested more than {YAML_MAX_DEPTH} levels deep (line {_line(event)}): no stack "
                        "file or chart value nests so deep; flatten it",
                    )
                )
                return found
            stack.append(_Open(parts, anchor, isinstance(event, yaml.MappingStartEvent)))
        if decoded > YAML_MAX_VALUES:
            found.append(
                (
                    path_of(_holder(parts)) or FILE,
                    f"more than {YAML_MAX_VALUES:,} values by line {_line(event)}: a stack file holds a few "
                    "hundred; is it the right file?",
                )
            )
            return found
    return found


def _line(event: yaml.Event) -> int:
    return event.start_mark.line + 1 if event.start_mark is not None else 0


HOLDER_PARTS = 4
"""How deep the stack file's own keys go before a value of any shape (a chart's values) starts:
`config`, `mlplatform:components`, `kueue`, `values`."""


def _holder(parts: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """The key that holds a value nested too deep or too large to name every level of: the
    last key among the stack file's own (HOLDER_PARTS), list entries dropped."""
    held = parts[:HOLDER_PARTS]
    while held and isinstance(held[-1], int):
        held = held[:-1]
    return held


def _next_parts(stack: list[_Open]) -> tuple[str | int, ...]:
    """The path of the node the next event starts."""
    if not stack:
        return ()
    top = stack[-1]
    if top.mapping:
        return (*top.parts, top.key) if top.index == 1 else (*top.parts, "?")
    return (*top.parts, top.index)


def _advance(stack: list[_Open], scalar: str | None, size: int) -> None:
    """A node of `size` values ended inside the top of `stack`: count it and move on (a key
    read makes the next node its value)."""
    if not stack:
        return
    top = stack[-1]
    top.size += size
    if not top.mapping:
        top.index += 1
    elif top.index == 0:
        top.key, top.index = (scalar if scalar is not None else "?"), 1
    else:
        top.index = 0


def _expansion(anchor: str, defined: tuple[str | int, ...], used: tuple[str | int, ...], values: int, line: int) -> tuple[str, str]:
    """An alias bomb, named where its anchors and the alias that tips it meet: the node that
    would hold the expansion."""
    common: tuple[str | int, ...] = ()
    for a, b in zip(defined, used, strict=False):
        if a != b:
            break
        common = (*common, a)
    while common and isinstance(common[-1], int):
        common = common[:-1]
    return (
        path_of(common) or FILE,
        f"aliases expand this to more than {values:,} values (the alias *{anchor} on line {line}, at {path_of(used)}, "
        f"of &{anchor} at {path_of(defined) or 'the top'}): Pulumi's reader refuses a document that is mostly "
        "expanded aliases (\"document contains excessive aliasing\"); write the values out, or share less",
    )


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
