"""Read a stack's config (from a stack file, or from the running Pulumi program) and
validate it into a `PlatformConfig`, or fail with every problem listed at once.

Both roads end in `validate`, so `python -m stacks plan` and `pulumi up` reject the
same stack files with the same messages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import yaml
from pydantic import BaseModel, ValidationError

from stacks.rules import cross_checks, missing_keys
from stacks.schema import GkeClusterConfig, KindClusterConfig, PlatformConfig

STACKS_DIR = Path(__file__).resolve().parent
NAMESPACE = "mlplatform"
# Config keys of other namespaces that the schema reads; everything else in them is
# left to its provider (gcp:region, kubernetes:..., pulumi:...).
FOREIGN_KEYS = ("gcp:project",)
# pydantic names the cluster's discriminator tag in error paths.
CLUSTER_KINDS: dict[str, type[BaseModel]] = {"gke": GkeClusterConfig, "kind": KindClusterConfig}


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
        self.problems = list(problems)
        super().__init__(str(self))

    def __str__(self) -> str:
        count = len(self.problems)
        lines = [f"{self.source}: {count} problem{'s' if count != 1 else ''} in the stack config:"]
        lines += [f"  - {p}" for p in self.problems]
        return "\n".join(lines)


def stack_file(name_or_path: str) -> Path:
    """`dev` -> stacks/Pulumi.dev.yaml; anything that names a file is taken as it is."""
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or candidate.exists():
        return candidate
    return STACKS_DIR / f"Pulumi.{name_or_path}.yaml"


def stack_names() -> list[str]:
    """The stacks shipped in stacks/, by name."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in STACKS_DIR.glob("Pulumi.*.yaml"))


def read_stack_file(path: Path) -> dict[str, Any]:
    """The `config:` mapping of a stack file, or a ConfigError saying what is wrong with the file."""
    if not path.is_file():
        known = ", ".join(stack_names()) or "none"
        raise ConfigError(str(path), [Problem("file", f"no such stack file; shipped stacks: {known}")])
    try:
        document = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise ConfigError(str(path), [Problem("file", f"not valid YAML: {err}")]) from None
    config = document.get("config", {}) if isinstance(document, dict) else None
    if not isinstance(config, dict):
        raise ConfigError(str(path), [Problem("config", "the stack file needs a top-level 'config:' mapping")])
    return config


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


def validate(config: dict[str, Any], source: str) -> PlatformConfig:
    """Turn raw stack config into a PlatformConfig, or raise ConfigError listing every problem."""
    from stacks.secrets import SECRET_CONFIG_KEYS

    ours = {
        k: v
        for k, v in config.items()
        if (k.startswith(f"{NAMESPACE}:") or k in FOREIGN_KEYS) and k not in SECRET_CONFIG_KEYS
    }
    missing = [Problem(path, message) for path, message in missing_keys(ours)]
    try:
        platform = PlatformConfig.model_validate(ours)
    except ValidationError as err:
        raise ConfigError(source, [_problem(e) for e in err.errors()] + missing) from None
    problems = missing + [Problem(path, message) for path, message in cross_checks(platform)]
    if problems:
        raise ConfigError(source, problems)
    return platform


def running_stack_config() -> PlatformConfig:
    """The running Pulumi program's validated config; a bad one stops the update with every
    problem listed (the body of `__main__.py`, shared with the e2e suite's inline program)."""
    import pulumi

    from stacks.secrets import secret_problems

    source = f"stack {pulumi.get_stack()}"
    raw = read_pulumi_config()
    try:
        config = validate(raw, source)
        missing = [Problem(path, message) for path, message in secret_problems(config, raw)]
        if missing:
            raise ConfigError(source, missing)
    except ConfigError as err:
        raise pulumi.RunError(str(err)) from None
    return config


def load(name_or_path: str) -> PlatformConfig:
    """Load and validate a stack by name (`dev`) or path."""
    path = stack_file(name_or_path)
    return validate(read_stack_file(path), str(path))


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


def _problem(error: Any) -> Problem:
    loc: tuple[int | str, ...] = tuple(error["loc"])
    kind: str = error["type"]
    message: str = error["msg"]
    value = error.get("input")
    if kind == "config":
        return Problem(_path(loc + (error["ctx"]["field"],)), message)
    if kind == "missing":
        return Problem(_path(loc), "required; add this key")
    if kind == "extra_forbidden":
        known = _known_keys(loc[:-1])
        hint = f"; known keys here: {', '.join(known)}" if known else ""
        return Problem(_path(loc), f"unknown key{hint}")
    if kind == "union_tag_not_found" or kind == "union_tag_invalid":
        tag = value.get("kind") if isinstance(value, dict) else value
        return Problem(_path(loc) + ".kind", f"cluster kind must be 'gke' or 'kind' (got {tag!r})")
    message = message.removeprefix("Value error, ")
    if kind != "value_error" and not isinstance(value, (dict, list)):
        message += f" (got {value!r})"
    return Problem(_path(loc), message)


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
    """The pydantic model inside an annotation such as `list[Team]` or `GpuSharing | None`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None
