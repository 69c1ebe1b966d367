"""Kubernetes quantities (64, 500m, .5, 1e3, 256Gi), read the way the API server reads them.

`kubernetes.utils.parse_quantity` gives the value, but on its own it takes text the API
server rejects (k8s.io/apimachinery pkg/api/resource/quantity.go): surrounding spaces,
`1_000`, `NaN`, `inf`, `1K`, `1mi`, `1e3Mi`, non-ASCII digits. So the text must first
match quantity.go's grammar: a signed decimal number, then a binary suffix (Ki … Ei), a
decimal one (n, u, m, k, M, G, T, P, E) or an integer exponent (e3, E-2; ParseQuantity
takes digits only there, stricter than the OpenAPI pattern CRDs carry). And the value
must be one Kubernetes holds as written: at most 2^63-1 and no finer than 1n (quantity.go
caps and rounds up anything else; facts/limits.py).
"""

from __future__ import annotations

import re
from decimal import Decimal

from facts.limits import QUANTITY_MAX, QUANTITY_STEP

_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
GRAMMAR = re.compile(rf"{_NUMBER}(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?")
HOW = "a number, then nothing, m, k, M, G, T, Ki, Mi, Gi, Ti or an exponent such as e3"


def parse(text: object) -> Decimal:
    """The value of a Kubernetes quantity; ValueError naming the text and how to write one."""
    if not isinstance(text, str) or not GRAMMAR.fullmatch(text):
        raise ValueError(f"{text!r} is not a Kubernetes quantity such as 64, 500m or 256Gi: {HOW}")
    # Imported here: the kubernetes package takes most of a second to import, and the
    # policy pack's virtualenv (policy/requirements.txt), which imports the schema, lacks it.
    from kubernetes.utils.quantity import parse_quantity

    value: Decimal = parse_quantity(text)
    if abs(value) > QUANTITY_MAX:
        raise ValueError(f"{text!r} is more than Kubernetes holds (2^63-1 in its base unit); use a realistic size")
    if value % QUANTITY_STEP != 0:
        raise ValueError(f"{text!r} is finer than Kubernetes keeps (1n): it would be rounded up; use a coarser value")
    return value


GI, MI = Decimal(2**30), Decimal(2**20)


def text(value: Decimal) -> str:
    """A quantity as Kubernetes would write it back: 34, 500m, 129Gi, 41Mi."""
    if value == value.to_integral_value():
        for unit, size in (("Gi", GI), ("Mi", MI)):
            if value >= size and value % size == 0:
                return f"{int(value / size)}{unit}"
        return str(int(value))
    milli = value * 1000
    if milli == milli.to_integral_value():
        return f"{int(milli)}m"
    return f"{int(value * 10**9)}n"
