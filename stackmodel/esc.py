"""Pulumi ESC environments a stack file imports, as far as the offline tools can see them.

A stack file may say where more of its config comes from (Pulumi's stack settings file,
`environment:`; pulumi/pulumi sdk/go/common/workspace/project.go `Environment`):

```yaml
environment: [acme/base, acme/prod]        # environments to import, later ones win
environment:                               # or an inline environment definition
  imports: [acme/base]
  values:
    pulumiConfig: {gcp:project: acme-ml-prod}
```

Each environment's `values.pulumiConfig` becomes stack config (a key without a namespace
takes the project's, `mlplatform`), merged as Pulumi does (pkg/workspace/config.go
`mergeConfig`: JSON merge patch, RFC 7386, the stack file's own values win; imports in
order, an environment's own values over its imports).

Offline there is no Pulumi Cloud to open an environment. An inline definition's plain
values are used as they are. An imported environment is read from a local file when one
is given (`--esc-file NAME=FILE`: what `esc open NAME --format yaml` prints, or the
environment's definition with `values.pulumiConfig`); otherwise it is *not resolved*: a
key it may set is never reported missing, and the tools say it is not resolved offline.
A value the offline tools cannot evaluate (`${...}` interpolation, `fn::` functions other
than `fn::secret` of a plain value) is not resolved either.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stackmodel import stackfile
from stackmodel.secrets import SECRET_KEYS
from stackmodel.stackfile import Found

PROJECT_NAMESPACE = "mlplatform"
"""What a pulumiConfig key without a namespace belongs to (the project's name, Pulumi.yaml)."""
PULUMI_CONFIG = "pulumiConfig"
ENV = stackfile.ENVIRONMENT
UNKNOWN = "[unknown]"
"""What a value not resolved offline shows as in a plan (as the Pulumi CLI shows unknown ESC values)."""
INTERPOLATION = re.compile(r"\$\{")
SECRET_FN = "fn::secret"
HOW = "pass --esc-file {name}=FILE with its values (`esc open {name} --format yaml > FILE`)"
INLINE = "(inline)"
"""The name of a stack file's own inline environment definition."""


@dataclass(frozen=True)
class Environments:
    """What a stack file's `environment:` says."""

    imports: tuple[str, ...] = ()
    inline: Mapping[str, Any] = field(default_factory=dict)
    """The pulumiConfig of an inline definition."""


@dataclass
class Resolved:
    """The stack's config with what the offline tools could resolve of its environments."""

    config: dict[str, Any]
    unresolved: tuple[str, ...] = ()
    """Environments imported but not opened: any key may come from them."""
    unresolved_keys: dict[str, str] = field(default_factory=dict)
    """Key -> the environment that sets it to something not evaluated offline."""
    problems: Found = field(default_factory=list)

    def origin(self, key: str) -> str | None:
        """Where `key` may come from, if it may come from an environment not resolved offline."""
        if key in self.unresolved_keys:
            name = self.unresolved_keys[key]
            return "this stack file's inline ESC environment" if name == INLINE else f"ESC environment {name}"
        if self.unresolved:
            plural = "s" if len(self.unresolved) > 1 else ""
            return f"ESC environment{plural} {', '.join(self.unresolved)}"
        return None

    def how(self, key: str | None = None) -> str:
        """What resolves what `key` (or any key) may come from offline."""
        if key in self.unresolved_keys:
            return "give the stack file a plain value for it (the offline tools do not evaluate ESC expressions)"
        return HOW.format(name=self.unresolved[0] if len(self.unresolved) == 1 else "NAME")


def parse(value: Any) -> tuple[Environments, Found]:
    """A stack file's `environment:` value: a list of names, or an inline definition."""
    if value is None:
        return Environments(), []
    if isinstance(value, list):
        imports, found = _imports(value, ENV)
        return Environments(imports=imports), found
    if isinstance(value, dict):
        return _definition(value, ENV)
    return Environments(), [
        (
            ENV,
            f"{value!r}: a list of ESC environments to import (e.g. [acme/base]) or an environment definition "
            "(imports:, values:); the platform's own environment is config: mlplatform:environment",
        )
    ]


def resolve(
    config: Mapping[str, Any], environment: Any, files: Mapping[str, Path] | None = None
) -> Resolved:
    """`config` (a stack file's `config:`) over the values of its environments."""
    envs, problems = parse(environment)
    files = dict(files or {})
    state = Resolved(config={}, problems=problems)
    unresolved: list[str] = []
    visited: set[str] = set()
    merged: dict[str, Any] = {}
    for name in envs.imports:
        merged = merge(merged, _environment(name, files, state, unresolved, visited, ()))
    state.problems += _plain_secrets_inline(envs.inline)
    merged = merge(merged, _evaluated(dict(envs.inline), INLINE, state.unresolved_keys))
    for name in sorted(set(files) - visited):
        imported = ", ".join(envs.imports) or "none"
        state.problems.append((f"--esc-file {name}", f"this stack does not import {name} (its imports: {imported})"))
    for key in [k for k in state.unresolved_keys if k in config]:
        del state.unresolved_keys[key]  # the stack file's own value wins
    # Without environments there is nothing to merge over: the file's values as Pulumi passes
    # them to the program, a null included (which the merge would drop, and the schema judge
    # differently: `privateNodes: null` is no boolean).
    state.config = merge(merged, dict(config)) if envs.imports or envs.inline else dict(config)
    state.unresolved = tuple(unresolved)
    return state


def _environment(
    name: str,
    files: Mapping[str, Path],
    state: Resolved,
    unresolved: list[str],
    visited: set[str],
    seen: tuple[str, ...],
) -> dict[str, Any]:
    """The pulumiConfig one imported environment gives: its imports', then its own values."""
    visited.add(name)
    if name not in files:
        if name not in unresolved:
            unresolved.append(name)
        return {}
    if name in seen:
        state.problems.append((f"--esc-file {name}", f"imports itself through {' -> '.join(seen)}"))
        return {}
    values, nested, found = read_file(name, files[name])
    state.problems += found
    merged: dict[str, Any] = {}
    for inner in nested:
        merged = merge(merged, _environment(inner, files, state, unresolved, visited, (*seen, name)))
    return merge(merged, _evaluated(values, name, state.unresolved_keys))


def read_file(name: str, path: Path) -> tuple[dict[str, Any], tuple[str, ...], Found]:
    """An environment's pulumiConfig from a local file, the environments it imports, problems."""
    where = f"--esc-file {name}"
    if not path.is_file():
        return {}, (), [(where, f"no such file: {path}")]
    read = stackfile.read_document(path)
    found = [(where if p == stackfile.FILE else f"{where}: {p}", m) for p, m in read.problems]
    document = read.document
    if not isinstance(document, dict):
        return {}, (), [*found, (where, "not a mapping: give `esc open` output or an environment definition")]
    if "values" in document or "imports" in document:
        definition, more = _definition(document, where)
        return dict(definition.inline), definition.imports, found + more
    if PULUMI_CONFIG in document:
        values = document[PULUMI_CONFIG]
        if not isinstance(values, dict):
            return {}, (), [*found, (f"{where}: {PULUMI_CONFIG}", "a mapping of config keys to values")]
        return _namespaced(values), (), found
    return {}, (), [*found, (where, f"has neither values.{PULUMI_CONFIG} (an environment definition) nor {PULUMI_CONFIG} (`esc open` output)")]


def merge(base: Any, patch: Any) -> Any:
    """JSON merge patch (RFC 7386): mappings merge key by key, null removes, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    result = dict(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge(result.get(key), value)
    return result


# --- helpers --------------------------------------------------------------------------


def _imports(value: list[Any], where: str) -> tuple[tuple[str, ...], Found]:
    """Environment names from an imports list at `where`."""
    names: list[str] = []
    found: Found = []
    for i, item in enumerate(value):
        if isinstance(item, dict) and len(item) == 1:
            item = next(iter(item))  # `- acme/base: {merge: false}`
        if isinstance(item, str) and item.strip():
            names.append(item)
        else:
            found.append((f"{where}[{i}]", f"{item!r} is not an environment name such as acme/base"))
    return tuple(names), found


def _definition(value: dict[str, Any], where: str) -> tuple[Environments, Found]:
    found: Found = []
    unknown = sorted(set(value) - {"imports", "values"})
    for key in unknown:
        found.append((f"{where}.{key}", "an environment definition has imports: and values:"))
    imports: tuple[str, ...] = ()
    raw_imports = value.get("imports", [])
    if isinstance(raw_imports, list):
        imports, more = _imports(raw_imports, f"{where}.imports")
        found += more
    else:
        found.append((f"{where}.imports", "a list of environment names"))
    values = value.get("values") or {}
    if not isinstance(values, dict):
        return Environments(imports=imports), [*found, (f"{where}.values", "a mapping")]
    pulumi_config = values.get(PULUMI_CONFIG) or {}
    if not isinstance(pulumi_config, dict):
        return Environments(imports=imports), [*found, (f"{where}.values.{PULUMI_CONFIG}", "a mapping of config keys to values")]
    return Environments(imports=imports, inline=_namespaced(pulumi_config)), found


def _namespaced(values: Mapping[str, Any]) -> dict[str, Any]:
    """pulumiConfig keys as config keys: a key without a namespace is the project's."""
    return {(k if ":" in k else f"{PROJECT_NAMESPACE}:{k}"): v for k, v in values.items() if isinstance(k, str)}


def _evaluated(values: Mapping[str, Any], name: str, unresolved_keys: dict[str, str]) -> dict[str, Any]:
    """The values the offline tools can take as they are; the others noted per key."""
    result: dict[str, Any] = {}
    for key, value in values.items():
        plain = _plain(value)
        if plain is _NOT_PLAIN:
            unresolved_keys[key] = name
        else:
            unresolved_keys.pop(key, None)
            result[key] = plain
    return result


_NOT_PLAIN = object()


def _plain(value: Any) -> Any:
    if isinstance(value, str):
        return _NOT_PLAIN if INTERPOLATION.search(value) else value
    if isinstance(value, list):
        items = [_plain(v) for v in value]
        return _NOT_PLAIN if any(i is _NOT_PLAIN for i in items) else items
    if isinstance(value, dict):
        if set(value) == {SECRET_FN} and not isinstance(value[SECRET_FN], (dict, list)):
            return _plain(value[SECRET_FN])
        if any(isinstance(k, str) and k.startswith("fn::") for k in value):
            return _NOT_PLAIN
        entries = {k: _plain(v) for k, v in value.items()}
        return _NOT_PLAIN if any(v is _NOT_PLAIN for v in entries.values()) else entries
    return value


def _plain_secrets_inline(inline: Mapping[str, Any]) -> Found:
    """Secret keys set in plain text by an inline definition in the stack file itself."""
    found: Found = []
    for key in SECRET_KEYS:
        full = f"{PROJECT_NAMESPACE}:{key.key}"
        value = inline.get(full)
        if value is not None and not (isinstance(value, dict) and SECRET_FN in value) and not (
            isinstance(value, str) and INTERPOLATION.search(value)
        ):
            found.append(
                (
                    f"{ENV}.values.{PULUMI_CONFIG}.{full}",
                    f"the {key.what} in plain text in the stack file; wrap it in fn::secret in an ESC "
                    f"environment, or set it with: {key.how}",
                )
            )
    return found
