"""Parse the PromQL in our dashboards and rules with a real PromQL parser (promql-parser,
Python bindings to the Rust crate of the same name)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import promql_parser

# Grafana's built-in interval variables stand for a duration.
GRAFANA_INTERVALS = re.compile(r"\$__(rate_)?interval|\$__range")
# Template-variable queries: label_values(<series selector or query>, <label>).
LABEL_VALUES = re.compile(r"^label_values\((?P<query>.+),\s*(?P<label>[a-zA-Z_][a-zA-Z0-9_]*)\)$")


def parse(expr: str) -> promql_parser.Expr:
    """The parsed expression; ValueError if it is not PromQL. Grafana's $__rate_interval is
    replaced by a duration; any other `$variable` must sit inside a label-matcher string."""
    return promql_parser.parse(GRAFANA_INTERVALS.sub("5m", expr))


def variable_query(query: str) -> str:
    """The PromQL inside a Grafana `label_values(...)` variable query."""
    match = LABEL_VALUES.match(query)
    if match is None:
        raise ValueError(f"not a label_values(query, label) variable query: {query!r}")
    return match.group("query")


def dashboard_expressions(dashboard_json: str) -> Iterator[tuple[str, str]]:
    """(where, PromQL) for every panel target and every query variable of a dashboard."""
    model: dict[str, Any] = json.loads(dashboard_json)

    def panels(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for panel in items:
            yield panel
            yield from panels(panel.get("panels", []))

    for panel in panels(model.get("panels", [])):
        for target in panel.get("targets", []):
            yield f"panel {panel.get('title')!r} target {target.get('refId')}", target["expr"]
    for variable in model.get("templating", {}).get("list", []):
        if variable.get("type") == "query":
            yield f"variable {variable['name']}", variable_query(variable["query"])


def metric_names(expr: promql_parser.Expr) -> set[str]:
    """Every metric name the expression selects."""
    names: set[str] = set()

    def collect(node: promql_parser.Expr) -> bool:
        if isinstance(node, promql_parser.VectorSelector) and node.name:
            names.add(node.name)
        return True

    promql_parser.walk(expr, pre_visit=collect)
    return names
