"""Checks on snapshot values that the JSON types alone cannot express.

A snapshot edited by hand or produced by another tool can hold a capacity of ``-4`` or
``1e400``, or an integer with hundreds of digits; every later sum and comparison would then be
wrong without a word. Loading refuses them with the JSON path of the value.
"""

from __future__ import annotations

import math
from decimal import InvalidOperation
from typing import Any

from tmnb.parse.numbers import INT64_MAX, OversizedNumber
from tmnb.parse.quantity import quantity_value


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


def _all_in_range(data: Any) -> bool:
    """Whether every value is a string, bool, null or in-range number: the walk without JSON paths,
    which cost most of a large snapshot's load when built for every value."""
    stack = [data]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is str or kind is bool or value is None:
            continue
        if kind is dict:
            stack.extend(value.values())
        elif kind is list:
            stack.extend(value)
        elif kind is int:
            if not -INT64_MAX - 1 <= value <= INT64_MAX:
                return False
        elif kind is not float or not math.isfinite(value):
            return False  # an oversized number, infinity, or a type the precise walk judges
    return True


def find_out_of_range(data: Any, path: str = "$") -> tuple[str, str] | None:
    """The first number no 64-bit field can hold (or NaN/infinity), as (JSON path, description)."""
    return None if _all_in_range(data) else _first_out_of_range(data, path)


def _first_out_of_range(data: Any, path: str) -> tuple[str, str] | None:
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
