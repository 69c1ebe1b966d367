"""Chart `values` overlays, the escape hatch for a chart setting the schema has no key for
(docs/chart-values.md): the type of a component's `values` field, which refuses what a stack
file must not hold (plain-text secrets, dates, null), and the field itself."""

from __future__ import annotations

import datetime
import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from stackmodel.schema.common import ValueKind, problems

# Key names that hold a secret in the charts' own values (password, adminPassword, apiKey,
# token, clientSecret, ...): a stack file holds no secret in plain text, so such a value is
# refused; the chart's existingSecret-style keys (a Secret's name) stay allowed.
SECRET_VALUE_KEY = re.compile(r"(password|passwd|secret|token|apikey|api_key|credentials)$", re.IGNORECASE)
SECRET_REFERENCE_KEY = re.compile(r"^existing|secretname$|secretref$|^secretkey", re.IGNORECASE)


def _chart_values(values: dict[str, Any]) -> dict[str, Any]:
    """Values any chart could take (a mapping of YAML data), keys as written; dates and
    plain-text secrets refused, each where it is."""
    found: list[tuple[str, str]] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                where = f"{path}.{key}" if path else str(key)
                if isinstance(value, str) and value and SECRET_VALUE_KEY.search(str(key)) and not SECRET_REFERENCE_KEY.search(str(key)):
                    found.append(
                        (
                            where,
                            f"{key!r} holds a secret, and a stack file holds none in plain text; put it in a Kubernetes "
                            "Secret and give the chart that Secret's name (its existingSecret-style key)",
                        )
                    )
                walk(value, where)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, f"{path}[{i}]")
        elif isinstance(node, (datetime.date, datetime.datetime)):
            found.append((path, f"YAML reads {node} as a date, Pulumi passes it on as text: quote it"))
        elif node is None:
            found.append(
                (
                    path,
                    "null: Helm would drop the chart's default here, but Pulumi need not pass a null on to Helm as "
                    "the offline render does; give the value you want instead (false, 0, \"\", [] or {})",
                )
            )

    walk(values, "")
    if found:
        raise problems(found)
    return values


CHART_VALUES_KIND = ValueKind("chart values (a mapping)")
ChartValues = Annotated[dict[str, Any], AfterValidator(_chart_values), CHART_VALUES_KIND]
"""Helm values, any keys the chart takes."""

CHART_VALUES_RULE = (
    "Chart `values` (the escape hatch for a chart setting the schema has no key for, docs/chart-values.md) are "
    "merged last over the values the platform sets: mappings merge key by key, any other value (a list, a "
    "string, a number, a boolean) replaces the platform's whole, and null is refused. A key the platform sets or "
    "relies on is refused in an overlay, naming the stack key to use instead, and so is a value of another type "
    "than the chart takes; `python -m stacks check` judges the merged result like everything else."
)


def chart_values_field(chart: str) -> Any:
    """The `values` overlay of a component installed from `chart` (a Helm chart)."""
    return Field(default_factory=dict, description=f"Helm values for {chart}, merged last over the platform's (see above the tables).")
