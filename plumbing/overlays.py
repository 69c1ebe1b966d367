"""Chart `values` overlays held to what the platform sets and relies on.

A stack's overlay (`mlplatform:components.<name>.values`, docs/chart-values.md) is merged last
over the values the program passes to its chart. It may change whatever the platform does not
depend on. It may not:
- change a key the program sets: the table of those keys is the values builders' own output
  for this stack (`cert_manager_values`, `kueue_values`, ...: the functions the components
  pass to their charts), so it cannot drift from the program; a list the program sets may
  only grow (the overlay's list replaces it whole), and a YAML document it writes into a
  string (Kueue's controller configuration) must keep every key the program writes in it;
- change a key the platform relies on without setting it (each chart's `relied`, declared
  with the chart in its component's Installation, plumbing/charts.py: the charts' own
  defaults it needs, each with its source);
- give a value of another type than the chart takes: against the chart's values.schema.json
  (jsonschema) where it ships one, else a number where its values.yaml has a number.

Every problem names the config path, the value, why the platform needs the key and the stack
key to use instead (or that none exists: the key is the platform's). The offline tools
(tooling/cli.py `load`, so plan, check, render and images alike) and `pulumi up`
(program.build) call `overlay_verdict`, before any resource is registered.
"""

from __future__ import annotations

import json
import tarfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from facts.versions import Pin
from plumbing.base import overlay_values
from plumbing.charts import INT_OR_STRING, ChartValues, Hint, Key
from plumbing.installation import ComponentArgs, installation
from plumbing.sources import chart_source, is_local
from stackmodel.schema import Sources

PROJECT = Path(__file__).resolve().parents[1]
"""What a relative local chart mirror (`mlplatform:sources.charts`) is relative to."""
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MISSING = object()
"""Where the overlay's YAML document leaves out a key the platform writes."""


@dataclass(frozen=True)
class Overlay:
    """One chart's overlay, beside what the program passes to that chart."""

    field: str
    """Its config path, `mlplatform:components.kueue.values`."""
    pin: Pin
    platform: Mapping[str, Any]
    """The chart values the program builds for this stack (before the overlay)."""
    builder: str
    """Where they are built, for messages (`components/kueue.py kueue_values`)."""
    values: Mapping[str, Any]
    chart: ChartValues[Any]
    """The chart as its component declares it: what the platform relies on, its hints."""


def overlays(components: Sequence[ComponentArgs]) -> list[Overlay]:
    """Every chart the stack installs, with the values the program builds for it and the stack's
    overlay (maybe empty): the charts each component's Installation declares, their values built
    by the functions the components call (the plan records each chart's values, and
    tests/test_overlays.py holds them to these)."""
    return [
        Overlay(f"{component.spec.path}.{chart.field}", chart.pin, chart.values(component.args), chart.builder, chart.overlay(component.args), chart)
        for component in components
        for chart in installation(component.spec).charts
        if chart.installed(component.args)
    ]


# --- the chart at its pinned version -----------------------------------------------------


@dataclass(frozen=True)
class Chart:
    """What a pinned chart archive says about its values."""

    label: str
    """`kueue 0.19.2`."""
    defaults: Mapping[str, Any]
    """Its values.yaml, each vendored subchart's under the subchart's name (or alias), as Helm
    coalesces them."""
    schema: Mapping[str, Any] | None
    """Its values.schema.json, which Helm validates the values against; None if it ships none."""


def chart_archive(pin: Pin, sources: Sequence[Sources]) -> Path | None:
    """The pinned chart's archive in the first of `sources` whose charts are a local directory
    (plumbing/sources.py chart_source) that holds it."""
    for candidate in sources:
        if candidate.charts is None or not is_local(candidate.charts):
            continue
        path = Path(chart_source(pin, candidate).chart)
        path = path if path.is_absolute() else PROJECT / path
        if path.is_file():
            return path
    return None


@cache
def read_chart(archive: Path, label: str) -> Chart:
    """The values (with vendored subcharts') and schema of a chart archive."""
    with tarfile.open(archive) as tar:
        files = {m.name: m for m in tar.getmembers() if m.isfile()}

        def text(name: str) -> str | None:
            member = files.get(name)
            handle = tar.extractfile(member) if member else None
            return handle.read().decode() if handle else None

        root = min((n.split("/", 1)[0] for n in files), key=len)
        defaults = yaml.load(text(f"{root}/values.yaml") or "{}", Loader=SAFE_LOADER) or {}
        chart_yaml = yaml.load(text(f"{root}/Chart.yaml") or "{}", Loader=SAFE_LOADER) or {}
        for dependency in chart_yaml.get("dependencies") or []:
            sub = yaml.load(text(f"{root}/charts/{dependency['name']}/values.yaml") or "{}", Loader=SAFE_LOADER) or {}
            key = dependency.get("alias") or dependency["name"]
            defaults[key] = overlay_values(sub, defaults.get(key) or {})
        schema_text = text(f"{root}/values.schema.json")
    return Chart(label, defaults, json.loads(schema_text) if schema_text else None)


# --- the verdict ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    problems: list[tuple[str, str]] = field(default_factory=list)
    """(config path, message) per problem."""
    unchecked: list[tuple[str, str]] = field(default_factory=list)
    """(config path, note): overlays whose types could not be checked (no copy of the chart)."""


def overlay_verdict(components: Sequence[ComponentArgs], charts: Sequence[Sources] = ()) -> Verdict:
    """Every problem of every overlay of the stack (its components' Args, as the composition
    gets them); the charts' types from the first of the stack's own sources and `charts` (a
    mirror) that holds the pinned archive locally."""
    verdict = Verdict()
    sources = [*_sources(components), *charts]
    for overlay in (o for o in overlays(components) if o.values):
        verdict.problems.extend(_platform_keys(overlay))
        verdict.problems.extend(_relied_keys(overlay))
        archive = chart_archive(overlay.pin, sources)
        if archive is None:
            verdict.unchecked.append(
                (
                    overlay.field,
                    f"not checked against {overlay.pin.label}'s values.yaml or values.schema.json: no copy of the chart "
                    "offline (a local chart mirror: mlplatform:sources.charts, or $MLPLATFORM_MIRROR)",
                )
            )
        else:
            verdict.problems.extend(_types(overlay, read_chart(archive, overlay.pin.label)))
    return verdict


def _sources(components: Sequence[ComponentArgs]) -> list[Sources]:
    """The stack's sources (every component that installs upstream software carries the same)."""
    for component in components:
        found = getattr(component.args, "sources", None)
        if isinstance(found, Sources):
            return [found]
    return []


def path_of(overlay: Overlay, keys: Key) -> str:
    return ".".join((overlay.field, *keys))


def shown(value: Any) -> str:
    """A value as the stack file would spell it (JSON), cut short."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def hint_of(overlay: Overlay, keys: Key) -> Hint:
    """The longest hint of the chart whose key starts `keys`, else the builder's own word."""
    hints = [h for h in overlay.chart.hints if keys[: len(h.key)] == h.key]
    return max(hints, key=lambda h: len(h.key), default=Hint((), f"the platform sets it ({overlay.builder})"))


def instead(stack_key: str | None, relied: bool = False) -> str:
    if stack_key:
        return f"set {stack_key} instead"
    if relied:
        return "no stack key changes it: the platform needs the chart's default, leave it out of the overlay"
    return "no stack key sets it: the key is the platform's, leave it out of the overlay"


# --- keys the program sets ---------------------------------------------------------------------


@dataclass(frozen=True)
class Clash:
    keys: Key
    """Where in the overlay."""
    inner: Key
    """Inside the YAML document the platform writes at `keys` (empty: the value itself)."""
    ours: Any
    given: Any


def _keeps(ours: Any, given: Any) -> bool:
    """Whether the overlay's value keeps the platform's: the same, or a list with all its items."""
    if isinstance(ours, list) and isinstance(given, list):
        return all(item in given for item in ours)
    return bool(ours == given and type(ours) is type(given))


def _whole(key: str, ours: Mapping[str, Any]) -> bool:
    """A mapping the platform sets as one value: empty on purpose (`serviceMonitorSelector: {}`,
    every monitor), or a label selector, which a key merged in would narrow."""
    return not ours or key.lower().endswith("selector")


def clashes(platform: Mapping[str, Any], given: Mapping[str, Any], embedded: frozenset[Key] = frozenset(), keys: Key = ()) -> Iterator[Clash]:
    """Where `given` (an overlay, merged over `platform` by plumbing/base.py overlay_values)
    changes what `platform` sets."""
    for key, value in given.items():
        if key not in platform:
            continue
        ours, here = platform[key], (*keys, str(key))
        if here in embedded and isinstance(ours, str):
            yield from _document(ours, value, here)
        elif isinstance(ours, Mapping) and isinstance(value, Mapping) and not _whole(str(key), ours):
            yield from clashes(ours, value, embedded, here)
        elif not _keeps(ours, value):
            yield Clash(here, (), ours, value)


def _document(ours: str, given: Any, keys: Key) -> Iterator[Clash]:
    """A YAML document the platform writes into a string value: the overlay's string replaces
    it whole, so it must hold every key the platform writes, with its value (it may add more)."""
    ours_doc = yaml.safe_load(ours)
    try:
        given_doc = yaml.safe_load(given) if isinstance(given, str) else None
    except yaml.YAMLError:
        given_doc = None
    if not isinstance(given_doc, Mapping):
        yield Clash(keys, (), ours, given)
        return

    def contained(ours_node: Mapping[str, Any], given_node: Mapping[str, Any], inner: Key) -> Iterator[Clash]:
        for key, value in ours_node.items():
            here = (*inner, str(key))
            theirs = given_node.get(key, MISSING)
            if isinstance(value, Mapping) and isinstance(theirs, Mapping):
                yield from contained(value, theirs, here)
            elif theirs is MISSING or not _keeps(value, theirs):
                yield Clash(keys, here, value, theirs)

    yield from contained(ours_doc, given_doc, ())


def _platform_keys(overlay: Overlay) -> Iterator[tuple[str, str]]:
    documents: dict[Key, list[Clash]] = {}
    for clash in clashes(overlay.platform, overlay.values, overlay.chart.documents):
        if clash.inner:
            documents.setdefault(clash.keys, []).append(clash)
            continue
        hint = hint_of(overlay, clash.keys)
        where = path_of(overlay, clash.keys)
        if isinstance(clash.ours, list) and isinstance(clash.given, list):
            missing = [item for item in clash.ours if item not in clash.given]
            yield (
                where,
                f"this list leaves out {shown(missing)}, which the platform sets ({overlay.builder}): {hint.why}. "
                f"A list in the overlay replaces the platform's whole: keep its items and add yours; {instead(hint.stack_key)}",
            )
        else:
            yield (
                where,
                f"{shown(clash.given)}: the platform sets {shown(clash.ours)} here ({overlay.builder}): {hint.why}; "
                f"{instead(hint.stack_key)}",
            )
    for keys, found in documents.items():
        yield path_of(overlay, keys), _document_message(overlay, keys, found)
    for check in overlay.chart.checks:
        yield from check(overlay)


def _document_message(overlay: Overlay, keys: Key, found: list[Clash]) -> str:
    """One message for every key of the platform's YAML document the overlay's document drops or changes."""
    parts = []
    for clash in found:
        inner = ".".join(clash.inner)
        hint = hint_of(overlay, (*keys, *clash.inner))
        what = f"leaves out {inner}" if clash.given is MISSING else f"sets {inner} to {shown(clash.given)}"
        because = f" ({hint.why}; set {hint.stack_key} instead)" if hint.stack_key else f" ({hint.why})" if hint.key != keys else ""
        parts.append(f"{what}, which the platform writes as {shown(clash.ours)}{because}")
    return (
        f"this document replaces the one the platform writes here ({overlay.builder}: {hint_of(overlay, keys).why}) whole, and it "
        + "; ".join(parts)
        + ". Keep every key the platform writes, with its value (you may add others), or leave the key to the platform"
    )


# --- keys the platform relies on --------------------------------------------------------------


def _expand(node: Any, pattern: Key, keys: Key = ()) -> Iterator[tuple[Key, Any]]:
    """(keys, value) of every place of `node` that `pattern` names (`*`: any one key)."""
    if not pattern:
        yield keys, node
        return
    if not isinstance(node, Mapping):
        return
    head, rest = pattern[0], pattern[1:]
    for key in (list(node) if head == "*" else [head] if head in node else []):
        yield from _expand(node[key], rest, (*keys, str(key)))


def _relied_keys(overlay: Overlay) -> Iterator[tuple[str, str]]:
    for relied in overlay.chart.relied:
        for keys, value in _expand(overlay.values, relied.key):
            if not relied.keeps(value):
                yield (
                    path_of(overlay, keys),
                    f"{shown(value)}: the platform relies on {relied.needs} ({overlay.pin.label} {relied.source}): "
                    f"{relied.why}; {instead(relied.stack_key, relied=True)}",
                )


# --- the types the chart takes ---------------------------------------------------------------


def _leaves(node: Mapping[str, Any], keys: Key = ()) -> Iterator[tuple[Key, Any]]:
    for key, value in node.items():
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, (*keys, str(key)))
        else:
            yield (*keys, str(key)), value


def _at(node: Any, keys: Sequence[Any]) -> Any:
    for key in keys:
        if not isinstance(node, Mapping) or key not in node:
            return MISSING
        node = node[key]
    return node


def _is_number(value: Any, integer: bool) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not integer or isinstance(value, int) or value.is_integer()


def _types(overlay: Overlay, chart: Chart) -> Iterator[tuple[str, str]]:
    if chart.schema is not None:
        yield from _schema_errors(overlay, chart)
        return
    for keys, value in _leaves(overlay.values):
        default = _at(chart.defaults, keys)
        if isinstance(default, bool) or not isinstance(default, (int, float)):
            continue
        if keys[-1] in INT_OR_STRING or "resources" in keys[:-1]:
            continue  # a Kubernetes IntOrString or quantity: a name, a percentage or "500m" is fine
        integer = isinstance(default, int)
        if not _is_number(value, integer):
            yield (
                path_of(overlay, keys),
                f"{shown(value)} is not {'a whole number' if integer else 'a number'}: {chart.label} values.yaml has "
                f"{default} here, and the chart writes it where Kubernetes reads a number; give one, unquoted",
            )


def _schema_errors(overlay: Overlay, chart: Chart) -> Iterator[tuple[str, str]]:
    """The chart's values.schema.json over the values Helm would validate (the chart's defaults,
    the platform's and the overlay's), errors reported where the overlay gave the value."""
    assert chart.schema is not None
    values = overlay_values(overlay_values(chart.defaults, overlay.platform), overlay.values)
    validator = jsonschema.validators.validator_for(chart.schema)(chart.schema)
    for error in sorted(validator.iter_errors(values), key=lambda e: [str(p) for p in e.absolute_path]):
        keys = tuple(str(p) for p in error.absolute_path)
        if _at(overlay.values, keys) is MISSING:
            continue  # not the overlay's doing
        if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
            allowed = error.schema.get("properties", {}) if isinstance(error.schema, Mapping) else {}
            for extra in [k for k in error.instance if k not in allowed and _at(overlay.values, (*keys, k)) is not MISSING]:
                yield (
                    path_of(overlay, (*keys, str(extra))),
                    f"{chart.label} takes no value {extra!r} here (values.schema.json: no such key); check its spelling "
                    "against the chart's values.yaml",
                )
            continue
        yield (
            path_of(overlay, keys),
            f"{shown(error.instance)}: {chart.label} values.schema.json refuses it ({error.message}); Helm would stop on it",
        )


