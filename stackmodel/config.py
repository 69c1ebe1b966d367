"""Read a stack's config (from a stack file, or from the running Pulumi program) and
validate it into a `PlatformConfig`, or fail with every problem listed at once.

Both roads end in `validate`, so `python -m stacks plan` and `pulumi up` reject the
same stack files with the same messages. Before the schema, the loader judges what the
schema cannot see: the file itself (stackmodel/stackfile.py: encoding, duplicate and
non-string keys, the top level), the config keys (a namespace nothing reads drops the
key silently), secrets written in plain text (stackmodel/secrets.py), and the ESC
environments the stack imports (stackmodel/esc.py: resolved from local files, or reported as
not resolved offline, never as missing).
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from stackmodel import esc, stackfile
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.registry import COMPONENTS, Components, settings_model
from stackmodel.rules import cross_checks, missing_keys, warnings
from stackmodel.schema import WEEKDAYS, GkeClusterConfig, GroupSource, KindClusterConfig
from stackmodel.stack import PlatformConfig

STACKS_DIR = Path(__file__).resolve().parents[1] / "stacks"
"""Where a stack name (`dev`) is looked up: the project's stack files, `stacks/` beside this
package (Pulumi.yaml `stackConfigDir: stacks`). The tests look names up in their own fixtures
instead (tests/support/fixtures.py), so a fork's stacks/ may hold anything."""
NAMESPACE = "mlplatform"
# Config keys of other namespaces that the schema reads; everything else in them is
# left to its provider (gcp:credentials, kubernetes:..., pulumi:...).
FOREIGN_KEYS = ("gcp:project", "gcp:region", "gcp:zone")
# The config namespaces something reads: ours, the providers the program uses
# (pyproject.toml: pulumi-gcp, pulumi-kubernetes, pulumi-random, pulumi-command) and the
# engine's own (pulumi:tags, pulumi:disable-default-providers). A key in any other is
# read by nothing: `mlplatfrom:teams` would silently drop every team.
KNOWN_NAMESPACES = (NAMESPACE, "gcp", "kubernetes", "random", "command", "pulumi")
# pydantic names the cluster's discriminator tag in error paths.
CLUSTER_KINDS: dict[str, type[BaseModel]] = {"gke": GkeClusterConfig, "kind": KindClusterConfig}
REQUIRED = "required; add this key"


@dataclass(frozen=True)
class Problem:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class ConfigError(Exception):
    """A stack file that cannot become a platform, with every problem found in it."""

    def __init__(self, source: str, problems: Iterable[Problem]):
        self.source = source
        self.problems = list(dict.fromkeys(problems))
        super().__init__(str(self))

    def __str__(self) -> str:
        count = len(self.problems)
        lines = [f"{self.source}: {count} problem{'s' if count != 1 else ''} in the stack config:"]
        lines += [f"  - {p}" for p in self.problems]
        return "\n".join(lines)


@dataclass(frozen=True)
class Loaded:
    """A validated stack, and what the offline tools could not see of it."""

    config: PlatformConfig
    notes: tuple[Problem, ...] = ()
    """Not errors: keys that may come from ESC environments not resolved offline, groups read at `pulumi up`."""
    warnings: tuple[Problem, ...] = ()
    """Not errors: what may be meant but usually is not (stackmodel/rules/warning_rules.py)."""


def stack_file(name_or_path: str) -> Path:
    """`dev` -> stacks/Pulumi.dev.yaml; anything that names a file is taken as it is."""
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or candidate.exists():
        return candidate
    return STACKS_DIR / f"Pulumi.{name_or_path}.yaml"


def stack_names() -> list[str]:
    """The stacks in stacks/ (in the tests: the fixtures of tests/stacks/), by name."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in STACKS_DIR.glob("Pulumi.*.yaml"))


def read_stack(path: Path, esc_files: Mapping[str, Path] | None = None) -> tuple[esc.Resolved, list[Problem]]:
    """A stack file's config over what its ESC environments give, and every problem found
    before the schema; a ConfigError when nothing in the file can be read."""
    if not path.is_file():
        known = ", ".join(stack_names()) or "none"
        raise ConfigError(str(path), [Problem("file", f"no such stack file; shipped stacks: {known}")])
    read = stackfile.read(path)
    problems = [Problem(p, m) for p, m in read.problems]
    if read.fatal:
        raise ConfigError(str(path), problems)
    config = compat_keys(read.config)
    problems += [Problem(p, m) for p, m in key_problems(config)]
    problems += [Problem(p, m) for p, m in file_secret_problems(config)]
    unreadable = encrypted_plain_keys(config)
    config = {k: v for k, v in config.items() if k not in unreadable}  # reported; the schema cannot read them
    resolved = esc.resolve(config, read.environment, esc_files)
    problems += [Problem(p, m) for p, m in resolved.problems]
    return resolved, problems


def read_stack_file(path: Path) -> dict[str, Any]:
    """The config of a stack file (its ESC environments' plain values merged in), or a
    ConfigError saying what is wrong with the file."""
    resolved, problems = read_stack(path)
    if problems:
        raise ConfigError(str(path), problems)
    return resolved.config


def compat_keys(config: Mapping[str, Any]) -> dict[str, Any]:
    """Keys as Pulumi reads them: `<namespace>:config:<name>` is the old spelling of
    `<namespace>:<name>` (pulumi/pulumi sdk/go/common/resource/config/key.go `ParseKey`)."""
    result: dict[str, Any] = {}
    for key, value in config.items():
        parts = key.split(":")
        result[f"{parts[0]}:{parts[2]}" if len(parts) == 3 and parts[1] == "config" else key] = value
    return result


def key_problems(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Config keys nothing reads: no namespace (Pulumi itself refuses those in a stack file,
    key.go `ParseKey`), or a namespace none of KNOWN_NAMESPACES."""
    found = []
    for key in config:
        namespace, colon, name = key.partition(":")
        if not colon:
            guess = "gcp" if key in ("project", "region", "zone") else NAMESPACE
            found.append((key, f"a config key needs its namespace (Pulumi reads `<namespace>:<name>`); write {guess}:{key}"))
        elif namespace not in KNOWN_NAMESPACES:
            close = difflib.get_close_matches(namespace, KNOWN_NAMESPACES, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}:{name}?" if close else f"known namespaces: {', '.join(KNOWN_NAMESPACES)}"
            found.append((key, f"unknown config namespace {namespace!r}: nothing reads this key, so it would be ignored; {hint}"))
    return found


def encrypted_plain_keys(config: Mapping[str, Any]) -> list[str]:
    """Keys the schema reads that are encrypted in the file, so unreadable offline."""
    from stackmodel.secrets import SECRET_CONFIG_KEYS, is_encrypted

    return [k for k, v in config.items() if _ours(k) and k not in SECRET_CONFIG_KEYS and is_encrypted(v)]


def file_secret_problems(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Secret keys in plain text in a stack file, and encrypted values the schema cannot read."""
    from stackmodel.secrets import SECRET_CONFIG_KEYS, is_encrypted, plaintext_secrets

    found = plaintext_secrets(config, lambda _key, value: is_encrypted(value))
    found += [
        (
            key,
            "encrypted, but not a secret key: the schema reads it in plain text; set it with "
            f"`pulumi config set {key} VALUE` (secret keys: {', '.join(sorted(SECRET_CONFIG_KEYS))})",
        )
        for key in encrypted_plain_keys(config)
    ]
    return found


def read_pulumi_config() -> dict[str, Any]:
    """The running program's config, keyed as in the stack file (values decoded from JSON)."""
    from pulumi.runtime import config as runtime_config

    raw = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    config: dict[str, Any] = {}
    for key, value in raw.items():
        try:
            config[key] = json.loads(value) if isinstance(value, str) else value
        except json.JSONDecodeError:
            config[key] = value
    return config


def _ours(key: str) -> bool:
    return key.startswith(f"{NAMESPACE}:") or key in FOREIGN_KEYS


def validate(
    config: dict[str, Any],
    source: str,
    earlier: Iterable[Problem] = (),
    origin: Callable[[str], str | None] = lambda _key: None,
    how: Callable[[str], str] = lambda _key: "",
) -> PlatformConfig:
    """Turn raw stack config into a PlatformConfig, or raise ConfigError listing every
    problem (after the `earlier` ones the loader found). `origin(key)` says where a key
    absent here may still come from (an ESC environment not resolved offline): such a key
    is not reported missing."""
    return _validate(config, source, list(earlier), origin, how)[0]


def _validate(
    config: dict[str, Any],
    source: str,
    earlier: list[Problem],
    origin: Callable[[str], str | None],
    how: Callable[[str], str],
) -> tuple[PlatformConfig, list[Problem]]:
    """validate, and the notes on keys that may come from elsewhere."""
    from stackmodel.secrets import SECRET_CONFIG_KEYS

    ours = {k: v for k, v in config.items() if _ours(k) and k not in SECRET_CONFIG_KEYS}
    missing: list[Problem] = []
    notes: list[Problem] = []
    for path, message in missing_keys(ours):
        where = origin(path)
        if where:
            notes.append(Problem(path, f"not in the stack file; {where} may set it, which is not resolved offline (shown as {esc.UNKNOWN})"))
        else:
            missing.append(Problem(path, message))
    try:
        platform = PlatformConfig.model_validate(ours)
    except ValidationError as err:
        schema = [_elsewhere(p, origin, how) for e in err.errors() for p in _problems(e)]
        # The cross-field rules still judge what parsed: each rule that reads none of the
        # refused parts runs on the stack without them (at their defaults).
        parsed = _without_refused(ours, err)
        rules = [Problem(path, message) for path, message in cross_checks(*parsed)] if parsed else []
        raise ConfigError(source, earlier + schema + missing + rules) from None
    problems = earlier + missing + [Problem(path, message) for path, message in cross_checks(platform)]
    if problems:
        raise ConfigError(source, problems)
    return platform, notes


def _elsewhere(problem: Problem, origin: Callable[[str], str | None], how: Callable[[str], str]) -> Problem:
    """A required top-level key that may come from an ESC environment says so."""
    where = origin(problem.path) if problem.message == REQUIRED and "." not in problem.path else None
    if where is None:
        return problem
    return Problem(
        problem.path,
        f"required, and not in the stack file; {where} may set it, but the offline tools cannot open it: {how(problem.path)}",
    )


def running_stack_config() -> PlatformConfig:
    """The running Pulumi program's validated config; a bad one stops the update with every
    problem listed (the body of `__main__.py`, shared with the e2e suite's inline program).

    The stack file itself (stacks/Pulumi.<stack>.yaml, where Pulumi.yaml's stackConfigDir
    points), when there is one, gets the offline checks first, with the same messages;
    the running config, which Pulumi has merged with any ESC environment, is checked for
    secrets that reach the program in plain text."""
    import pulumi
    from pulumi.runtime import config as runtime_config

    from stackmodel.secrets import plaintext_secrets, secret_problems

    source = f"stack {pulumi.get_stack()}"
    earlier: list[Problem] = []
    path = STACKS_DIR / f"Pulumi.{pulumi.get_stack()}.yaml"
    try:
        if path.is_file():
            earlier += read_stack(path)[1]
        raw = read_pulumi_config()
        secret_keys = set(runtime_config.get_config_secret_keys_env())

        def held_secret(key: str, _value: Any) -> bool:
            return runtime_config.is_config_secret(key) or key in secret_keys

        earlier += [Problem(p, m) for p, m in plaintext_secrets(raw, held_secret)]
        config = validate(raw, source, earlier)
        missing = [Problem(path, message) for path, message in secret_problems(config, raw)]
        if missing:
            raise ConfigError(source, missing)
        for where, message in warnings(config):
            pulumi.log.warn(f"{where}: {message}")
    except ConfigError as err:
        raise pulumi.RunError(str(err)) from None
    return config


def load_stack(name_or_path: str, esc_files: Mapping[str, Path] | None = None) -> Loaded:
    """Load and validate a stack by name (`dev`) or path, with its ESC environments as far
    as `esc_files` (environment name -> local file) resolve them. A gke stack whose
    gcp:project may come from an environment not resolved offline plans with the project
    shown as `[unknown]`."""
    path = stack_file(name_or_path)
    resolved, problems = read_stack(path, esc_files)
    config, notes = _validate(resolved.config, str(path), problems, resolved.origin, resolved.how)
    if resolved.unresolved:
        plural = "s" if len(resolved.unresolved) > 1 else ""
        notes.append(
            Problem(
                "environment",
                f"imports ESC environment{plural} {', '.join(resolved.unresolved)}, not resolved offline: keys "
                f"{'they set' if plural else 'it sets'} are not in this view; {resolved.how()}",
            )
        )
    from stackmodel.secrets import SECRET_CONFIG_KEYS  # offline, every secret is a placeholder anyway

    notes += [
        Problem(key, f"set by {resolved.origin(key)} to an expression the offline tools do not evaluate; not in this view")
        for key in sorted(resolved.unresolved_keys)
        if key not in SECRET_CONFIG_KEYS
    ]
    notes += [
        Problem(
            f"{NAMESPACE}:components.kubeflow.auth.groups[{k}]",
            f"group {group.name}: its members are read from Cloud Identity at `pulumi preview` / `pulumi up`; offline "
            "it has none but those a --cloud-identity file gives",
        )
        for k, group in enumerate(config.components[KUBEFLOW].auth.groups)
        if group.source is GroupSource.CLOUD_IDENTITY
    ]
    if config.project is None and isinstance(config.cluster, GkeClusterConfig) and resolved.origin("gcp:project"):
        config = config.model_copy(update={"project": esc.UNKNOWN})
    return Loaded(config, tuple(dict.fromkeys(notes)), tuple(Problem(p, m) for p, m in warnings(config)))


def load(name_or_path: str, esc_files: Mapping[str, Path] | None = None) -> PlatformConfig:
    """Load and validate a stack by name (`dev`) or path."""
    return load_stack(name_or_path, esc_files).config


# --- error formatting -----------------------------------------------------------------


def _path(loc: tuple[int | str, ...]) -> str:
    text = ""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            text += f"[{part}]"
        elif i == 1 and loc[0] == "mlplatform:cluster" and part in CLUSTER_KINDS:
            continue  # pydantic puts the discriminator's tag in the path; the file has none
        else:
            text += f".{part}" if text else str(part)
    return text


REMOVAL_ROUNDS = 20
"""How often _without_refused takes refused parts out before it gives up (each round climbs
one level; the schema nests less deep than this)."""


def _without_refused(config: dict[str, Any], err: ValidationError) -> tuple[PlatformConfig, list[str]] | None:
    """The stack with every part the schema refused taken out, and the config paths taken
    out; None when it cannot parse without a part it requires (the cluster, its kind).

    A refused key is removed, so its default applies; a refused list entry takes its whole
    list out (removing one entry would renumber the rest, and the rules name entries by
    index); a refused key the stack requires takes its parent out, one level at a time, as
    the next round's errors say."""
    raw = copy.deepcopy(config)
    removed: list[str] = []
    errors = err.errors()
    for _ in range(REMOVAL_ROUNDS):
        for error in errors:
            for loc in _raw_locations(error):
                part = _removable(raw, loc)
                if part is None:
                    return None
                _remove(raw, part)
                removed.append(_path(part))
        try:
            return PlatformConfig.model_validate(raw), removed
        except ValidationError as again:
            errors = again.errors()
    return None


def _raw_locations(error: Any) -> list[tuple[int | str, ...]]:
    """Where in the raw stack config an error is: its location without the cluster's kind tag
    (which pydantic adds), with the fields a model validator named."""
    loc = tuple(p for i, p in enumerate(error["loc"]) if not (i == 1 and error["loc"][0] == "mlplatform:cluster" and p in CLUSTER_KINDS))
    if error["type"] != "config":
        return [loc]
    ctx = error["ctx"]
    fields = [ctx["field"], *(field for field, _ in ctx.get("more", ()))]
    return [(*loc, *_field_parts(field)) for field in fields]


def _field_parts(field: int | str) -> tuple[int | str, ...]:
    """`gpuPools[0].name` -> ("gpuPools", 0, "name")."""
    if isinstance(field, int):
        return (field,)
    return tuple(int(t[1:-1]) if t.startswith("[") else t for t in re.findall(r"\[[0-9]+\]|[^.\[\]]+", field))


def _removable(raw: Any, loc: tuple[int | str, ...]) -> tuple[int | str, ...] | None:
    """The deepest part of `loc` present in `raw` that is a mapping's key (not a list entry);
    None when that is the whole stack."""
    node, present = raw, 0
    for part in loc:
        in_mapping = isinstance(node, dict) and isinstance(part, str) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if not (in_mapping or in_list):
            break
        node = node[part]
        present += 1
    found = loc[:present]
    while found and isinstance(found[-1], int):
        found = found[:-1]
    return found or None


def _remove(raw: Any, loc: tuple[int | str, ...]) -> None:
    node = raw
    for part in loc[:-1]:
        node = node[part]
    node.pop(loc[-1], None)


def _problems(error: Any) -> list[Problem]:
    """The problems of one pydantic error: a model validator may name several (schema.problems)."""
    first = _problem(error)
    if error["type"] != "config":
        return [first]
    loc = tuple(error["loc"])
    return [first, *(Problem(_path((*loc, field)), message) for field, message in error["ctx"].get("more", ()))]


def _problem(error: Any) -> Problem:
    loc: tuple[int | str, ...] = tuple(error["loc"])
    kind: str = error["type"]
    message: str = error["msg"]
    value = error.get("input")
    if kind == "config":
        return Problem(_path((*loc, error["ctx"]["field"])), message)
    if kind == "missing":
        return Problem(_path(loc), "required; add this key")
    if kind == "extra_forbidden":
        known = _known_keys(loc[:-1])
        hint = f"; known keys here: {', '.join(known)}" if known else ""
        if loc[-2:-1] == ("window",) and loc[-1] in WEEKDAYS:
            hint += "; a weekday: quote the recurrence (\"FREQ=WEEKLY;BYDAY=SA,SU\"), a flow mapping splits at its comma"
        return Problem(_path(loc), f"unknown key{hint}")
    if kind == "union_tag_not_found" or kind == "union_tag_invalid":
        tag = value.get("kind") if isinstance(value, dict) else value
        return Problem(_path(loc) + ".kind", f"cluster kind must be 'gke' or 'kind' (got {tag!r})")
    message = message.removeprefix("Value error, ")
    if kind != "value_error" and not isinstance(value, (dict, list)):
        message += f" (got {value!r})"
    how = TYPE_HINTS.get(kind)
    return Problem(_path(loc), f"{message}; {how}" if how else message)


TYPE_HINTS = {
    "int_type": "write a whole number, without quotes or a decimal point",
    "int_parsing": "write a whole number, without quotes or a decimal point",
    "int_from_float": "write a whole number, without a decimal point",
    "bool_type": "write true or false, without quotes",
    "string_type": "write text (in quotes if YAML would read it as a number, a list or a mapping)",
}
"""How to write a value of the type the schema wants, by pydantic's error type."""


def _known_keys(loc: tuple[int | str, ...]) -> list[str]:
    """The keys the model at `loc` accepts, for 'unknown key' messages."""
    model: Any = PlatformConfig
    for part in loc:
        if isinstance(part, int):
            continue
        if part in CLUSTER_KINDS:
            model = CLUSTER_KINDS[part]
            continue
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        model = _model_of(field.annotation) if field else None
        if model is None:
            return []
    return [f.alias or n for n, f in model.model_fields.items()]


def _model_of(annotation: Any) -> Any:
    """The pydantic model inside an annotation such as `list[Team]` or `GpuSharing | None` (the
    components' root: the model the list of components makes)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return settings_model(COMPONENTS) if annotation is Components else annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None
