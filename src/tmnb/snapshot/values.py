"""Checks on snapshot values that the JSON types alone cannot express.

A snapshot edited by hand or produced by another tool can hold a capacity of ``-4`` or
``1e400``, or an integer with hundreds of digits; every later sum and comparison would then be
wrong without a word. Loading refuses them with the JSON path of the value.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from tmnb.parse.numbers import INT64_MAX, OversizedNumber

# apimachinery's quantity syntax: <signedNumber><suffix>, suffix binary (Ki..Ei), decimal (n u m k M G T P E)
# or a decimal exponent (e3, E-2).
_QUANTITY = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d{1,3})?$")
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def quantity_value(text: str) -> Decimal:
    """The exact value of a Kubernetes quantity string; ``ValueError`` if it is not one."""
    m = _QUANTITY.match(text)
    if not m or len(text) > 64:
        raise ValueError(f"{text[:40]!r} is not a Kubernetes quantity such as 4, 500m or 16Gi")
    number, suffix = Decimal(m.group(1)), m.group(2) or ""
    if suffix in _BINARY:
        return number * (1024 ** _BINARY[suffix])
    if suffix in _DECIMAL:
        return number.scaleb(_DECIMAL[suffix])
    return number.scaleb(int(suffix[1:]))


def non_negative_quantity(text: str) -> str:
    """Pydantic after-validator for capacities, requests and limits."""
    try:
        value = quantity_value(text)
    except (ValueError, InvalidOperation) as err:
        raise ValueError(str(err)) from None
    if value < 0:
        raise ValueError(f"a negative quantity ({text}) is not a capacity, request or limit")
    if value > INT64_MAX:
        raise ValueError(f"{text} is larger than a Kubernetes quantity can hold (2^63-1)")
    return text


def find_out_of_range(data: Any, path: str = "$") -> tuple[str, str] | None:
    """The first number no 64-bit field can hold (or NaN/infinity), as (JSON path, description)."""
    stack: list[tuple[str, Any]] = [(path, data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, OversizedNumber):
            return where, f"{value!r} does not fit in a 64-bit integer"
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and not -INT64_MAX - 1 <= value <= INT64_MAX:
            return where, f"{value} does not fit in a 64-bit integer"
        if isinstance(value, float) and not math.isfinite(value):
            return where, "a number too large to represent (it reads as infinity)"
        if isinstance(value, dict):
            stack.extend((f"{where}.{key}", item) for key, item in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in reversed(list(enumerate(value))))
    return None
