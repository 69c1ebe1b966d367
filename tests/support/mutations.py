"""Randomised mutations of the stacks (the fixtures in the tests, stacks/ in `make mutations`), and what the schema documents about each.

A mutation changes one place of a shipped stack's `config:` the way a fork errs: a key
dropped, a value emptied, a list entry duplicated, a value of the wrong type, a number out
of range. Run through `python -m stacks plan`, every one must end in exit 0 or 2 with no
traceback; and one the schema documents as invalid (README "Stack-file reference": a
value of another type, a number outside its range, an empty text, a repeated list entry,
a required key dropped) must be refused. Whatever the schema leaves open (an emptied list,
an optional key dropped) may go either way, but never crash.

Used by tests/test_mutations.py (a seeded sample) and benchmarks/mutations.py (all of them,
planned for real, in parallel processes).
"""

from __future__ import annotations

import contextlib
import copy
import io
import ipaddress
import random
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import annotated_types
import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from stackmodel import schema
from stackmodel.config import stack_file, stack_names
from stackmodel.registry import COMPONENTS, Components, settings_model
from stackmodel.stack import PlatformConfig
from stackmodel.stackfile import load_yaml

Path_ = tuple[str | int, ...]
DROP = object()
"""The value of a mutation that removes the key."""
INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class Mutation:
    """One change to one shipped stack."""

    stack: str
    path: Path_
    kind: str
    """drop, empty, duplicate, wrong-type, out-of-range, or overlay: a chart key the program sets,
    given another value in the component's overlay (`values`)."""
    value: Any
    invalid: bool
    """The schema documents the changed stack as invalid: it must be refused (exit 2)."""

    @property
    def id(self) -> str:
        shown = "drop" if self.value is DROP else repr(self.value)
        return f"{self.stack}:{_dotted(self.path)}:{self.kind}:{shown[:40]}"

    def config(self) -> dict[str, Any]:
        """The shipped stack's config with this change."""
        result = copy.deepcopy(shipped_config(self.stack))
        *parent, last = self.path
        node: Any = result
        for part in parent:
            node = node.setdefault(part, {}) if self.kind == "overlay" else node[part]
        if self.value is DROP:
            del node[last]
        elif self.kind == "duplicate":
            node[last].append(copy.deepcopy(node[last][0]))
        else:
            node[last] = copy.deepcopy(self.value)
        return result

    def text(self) -> str:
        return yaml.safe_dump({"config": self.config()}, sort_keys=False, allow_unicode=True)


@dataclass(frozen=True)
class Outcome:
    mutation: Mutation
    code: int | None
    output: str
    """stdout and stderr together."""
    escaped: str = ""
    """An exception that got out of the CLI, as `Type: message`."""

    def failures(self) -> list[str]:
        """What this run got wrong; empty when it behaved."""
        found = []
        if self.escaped:
            found.append(f"raised {self.escaped}")
        if self.code not in (0, 2):
            found.append(f"exit {self.code}")
        if "Traceback" in self.output or "Exception ignored" in self.output:
            found.append("traceback text in the output")
        if self.mutation.invalid and self.code == 0:
            found.append("accepted, though the schema documents it as invalid")
        return found


SURFACES: dict[str, dict[str, Any]] = {
    "dev": {
        "mlplatform:images": {"mirror": "us-central1-docker.pkg.dev/acme-ml-dev/mirror"},
        "mlplatform:sources": {"charts": "oci://us-central1-docker.pkg.dev/acme-ml-dev/charts"},
        "mlplatform:overrides": {"zones": ["us-central1-e"], "gkeVersions": ["1.38"]},
    },
}
"""Keys no fixture sets that the mutations start from all the same (issue 31's surfaces: the
mirrors, the overrides of zones and GKE versions), added to the fixture where they are valid.
Only the fixtures themselves (dev, kind, prod, ...) are planned elsewhere; these are not."""
CLUSTER_SURFACES: dict[str, dict[str, Any]] = {
    "prod": {"minMasterVersion": "1.35", "network": {"subnetCidr": "10.0.0.0/20", "podsCidr": "10.16.0.0/14", "servicesCidr": "10.20.0.0/20", "masterCidr": "172.16.0.0/28"}},
}


def shipped_config(stack: str) -> dict[str, Any]:
    """The fixture's config, with the SURFACES the mutations start from."""
    text = stack_file(stack).read_text()
    document, _ = load_yaml(text)
    config: dict[str, Any] = {**document["config"], **copy.deepcopy(SURFACES.get(stack, {}))}
    if stack in CLUSTER_SURFACES:
        config["mlplatform:cluster"] = {**config["mlplatform:cluster"], **copy.deepcopy(CLUSTER_SURFACES[stack])}
    return config


def _dotted(path: Path_) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


# --- what the schema says about a place ------------------------------------------------


def _unwrap(annotation: Any) -> tuple[Any, list[Any], bool]:
    """(the base annotation, its Annotated metadata, whether None is allowed)."""
    metadata: list[Any] = []
    optional = False
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation, *extra = typing.get_args(annotation)
            metadata += extra
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            optional = optional or len(args) < len(typing.get_args(annotation))
            if len(args) != 1:
                return annotation, metadata, optional  # the cluster union: resolved by kind
            annotation = args[0]
        else:
            return annotation, metadata, optional


def _model_field(model: type[BaseModel], key: str) -> FieldInfo | None:
    """The field of `model` at `key`; the components' root has one per component of the list."""
    model = settings_model(COMPONENTS) if model is Components else model
    return next((f for n, f in model.model_fields.items() if (f.alias or n) == key), None)


def place(config: dict[str, Any], path: Path_) -> tuple[Any, FieldInfo | None]:
    """The schema's annotation at `path` of a raw config, and the field it belongs to (None
    for a list entry or a map value); (None, None) where the schema has nothing."""
    annotation: Any = PlatformConfig
    field: FieldInfo | None = None
    raw: Any = config
    for part in path:
        base, _, _ = _unwrap(annotation)
        if typing.get_origin(base) in (typing.Union, types.UnionType):  # the cluster: by its kind
            kind = str(raw.get("kind")) if isinstance(raw, dict) else ""
            base = {"gke": schema.GkeClusterConfig, "kind": schema.KindClusterConfig}.get(kind)
        if isinstance(base, type) and issubclass(base, BaseModel) and isinstance(part, str):
            field = _model_field(base, part)
            if field is None:
                return None, None
            annotation = field.annotation
            annotation = typing.Annotated[annotation, *field.metadata] if field.metadata else annotation
        elif typing.get_origin(base) is list and isinstance(part, int):
            annotation, field = typing.get_args(base)[0], None
        elif typing.get_origin(base) is dict and isinstance(part, str):
            annotation, field = typing.get_args(base)[1], None
        else:
            return None, None
        raw = raw.get(part) if isinstance(raw, dict) else raw[part] if isinstance(raw, list) and isinstance(part, int) else None
    return annotation, field


def _may_be_empty(config: dict[str, Any], path: Path_) -> bool:
    """A text the schema documents as possibly empty: a label's value ("empty, or at most 63
    ...", stackmodel/schema/pools.py NodeLabels), as Kubernetes takes it; a field whose default is
    empty (a taint's value) is another."""
    parent, _ = place(config, path[:-1])
    return any(isinstance(m, schema.ValueKind) and m.name == "map of label key to value" for m in _unwrap(parent)[1]) if parent else False


def _is_quantity(annotation: Any) -> bool:
    """A Kubernetes quantity: text, or a YAML number the schema writes as text (64 -> "64")."""
    kinds = [m.name for m in _unwrap(annotation)[1] if isinstance(m, schema.ValueKind)]
    return bool(kinds) and kinds[-1].endswith("quantity")


def _takes(annotation: Any, value: Any) -> bool | None:
    """Whether the schema's type at a place takes a value of `value`'s YAML type (True or
    False), or None where the type alone does not tell."""
    base, metadata, optional = _unwrap(annotation)
    if value is None:
        return optional
    if _is_quantity(annotation):
        return isinstance(value, (str, int, float)) and not isinstance(value, bool)
    if typing.get_origin(base) in (typing.Union, types.UnionType):  # the cluster: a mapping
        return isinstance(value, dict)
    if typing.get_origin(base) is typing.Literal or (isinstance(base, type) and issubclass(base, str)):
        if any(type(m).__name__ == "BeforeValidator" for m in metadata):  # storageSize: 200 -> "200"
            return None
        return isinstance(value, str)
    if base is bool:
        return isinstance(value, bool)
    if base is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if typing.get_origin(base) is list:
        return isinstance(value, list)
    if typing.get_origin(base) is dict or (isinstance(base, type) and issubclass(base, BaseModel)):
        return isinstance(value, dict)
    if base is ipaddress.IPv4Network:
        return isinstance(value, str)
    return None


def _bounds(annotation: Any) -> tuple[Any, Any]:
    """A number's documented range: Field(ge=..., le=...) on the field or in its type (Int64)."""
    _, found, _ = _unwrap(annotation)
    metadata = [inner for m in found for inner in (m.metadata if isinstance(m, FieldInfo) else [m])]
    low = next((m.ge for m in metadata if isinstance(m, annotated_types.Ge)), None)
    high = next((m.le for m in metadata if isinstance(m, annotated_types.Le)), None)
    return low, high


# --- the mutations of one stack --------------------------------------------------------

WRONG_TYPES: tuple[Any, ...] = ("seven", 7, 7.5, True, [], {}, None)


def _places(node: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _places(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _places(value, (*path, i))


def mutations(stack: str) -> list[Mutation]:
    """Every mutation of one shipped stack, in a fixed order."""
    config = shipped_config(stack)
    found: list[Mutation] = []

    def add(path: Path_, kind: str, value: Any, invalid: bool) -> None:
        found.append(Mutation(stack, path, kind, value, invalid))

    for path, value in _places(config):
        if not path:
            continue
        annotation, field = place(config, path)
        if annotation is None:
            continue  # a key the schema does not read
        if isinstance(path[-1], str):
            add(path, "drop", DROP, bool(field and field.is_required()))
        if isinstance(value, str):
            add(path, "empty", "", not (_may_be_empty(config, path) or (field is not None and field.default == "")))
        elif isinstance(value, list) and value:
            add(path, "empty", [], False)
            add(path, "duplicate", None, True)
        elif isinstance(value, dict) and value:
            add(path, "empty", {}, False)
        for wrong in WRONG_TYPES:
            if type(wrong) is type(value) or (wrong == [] and isinstance(value, list)) or (wrong == {} and isinstance(value, dict)):
                continue
            takes = _takes(annotation, wrong)
            if takes is False:
                add(path, "wrong-type", wrong, True)
            elif takes is None:
                add(path, "wrong-type", wrong, False)
        if isinstance(value, int) and not isinstance(value, bool):
            low, high = _bounds(annotation)
            for number in (-1, 0, 10**6, INT64_MAX, INT64_MAX + 1, 10**30):
                outside = (low is not None and number < low) or (high is not None and number > high) or number > INT64_MAX
                add(path, "out-of-range", number, outside)
        elif isinstance(value, str) and _is_quantity(annotation):
            for text, bad in (("-1", True), ("9223372036854775808", True), ("1e30", True), ("0.5n", True), ("0", False)):
                add(path, "out-of-range", text, bad)
    return found


def _changed(value: Any) -> Any:
    """Another value than the platform's, of its type where there is one."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return f"{value}-changed"
    if isinstance(value, list):
        return [] if value else ["changed"]
    return {"changed": "1"}


def overlay_mutations(stack: str) -> list[Mutation]:
    """Each chart key the program sets for the stack (its values builders' output, components/
    overlays.py `overlays`), changed in the component's overlay: each must be refused."""
    from plumbing.overlays import overlays
    from program import args_of as platform_args
    from stackmodel.config import validate

    found = []
    for overlay in overlays(platform_args(validate(shipped_config(stack), stack), {}).components):
        _, component, field = overlay.field.rsplit(".", 2)
        for path, value in _places(dict(overlay.platform)):
            if path and not (isinstance(value, dict) and value) and all(isinstance(p, str) for p in path):
                found.append(Mutation(stack, ("mlplatform:components", component, field, *path), "overlay", _changed(value), True))
    return found


def all_mutations() -> list[Mutation]:
    return [m for stack in stack_names() for m in [*mutations(stack), *overlay_mutations(stack)]]


def sample(count: int, seed: int) -> list[Mutation]:
    """`count` mutations of every shipped stack, drawn with `seed` (the same ones each run)."""
    everything = all_mutations()
    return random.Random(seed).sample(everything, min(count, len(everything)))


# --- running one ---------------------------------------------------------------------


def run(mutation: Mutation, directory: Path, plan: Callable[[list[str]], int] | None = None) -> Outcome:
    """`python -m stacks plan` of the mutated stack, in this process (`plan`: the CLI's main
    by default), its output captured."""
    from tooling.cli import main

    path = directory / f"Pulumi.{mutation.stack}-mutated.yaml"
    path.write_text(mutation.text())
    out, err = io.StringIO(), io.StringIO()
    escaped = ""
    code: int | None = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = (plan or main)(["plan", str(path)])
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except BaseException as exc:  # anything that escapes is the finding
            escaped = f"{type(exc).__name__}: {exc}"
    return Outcome(mutation, code, out.getvalue() + err.getvalue(), escaped)
