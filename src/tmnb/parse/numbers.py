"""Bounded integers from text and from decoded JSON.

Python's ``int()`` takes any number of digits (and raises ``ValueError`` past 4300 of them), so a
file holding ``10**400`` would flow into arithmetic as if it were a real memory size. The kubelet
decodes into Go's fixed-width types and refuses what does not fit; these helpers do the same and
name the field.
"""

from __future__ import annotations

import re

from tmnb.errors import InputError

INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1
#: Longest digit string worth converting: anything longer cannot fit in 64 bits.
MAX_DIGITS = 20

_DECIMAL = re.compile(r"^[+-]?\d+$")


class OversizedNumber(str):
    """A JSON number with too many digits to convert; kept as its text so errors can show its size."""

    def __repr__(self) -> str:
        return f"<a {len(self.lstrip('+-'))}-digit number>"


def json_int(text: str) -> int | OversizedNumber:
    """``json.loads(parse_int=...)``: convert only what could fit in 64 bits."""
    return OversizedNumber(text) if len(text.lstrip("-")) > MAX_DIGITS else int(text)


def describe(value: object) -> str:
    if isinstance(value, OversizedNumber):
        return repr(value)
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_int(
    text: str,
    *,
    lo: int = 0,
    hi: int = UINT64_MAX,
    what: str = "a number",
    source: str | None = None,
    where: str | None = None,
    line: int | None = None,
) -> int:
    """A decimal integer in ``[lo, hi]``; leading/trailing whitespace is ignored."""
    body = text.strip()
    if not _DECIMAL.match(body):
        raise InputError(f"expected {what}, got {describe(body)}", source=source, where=where, line=line)
    if len(body.lstrip("+-")) > MAX_DIGITS:
        raise InputError(
            f"expected {what} between {lo} and {hi}, got a {len(body.lstrip('+-'))}-digit number",
            source=source,
            where=where,
            line=line,
        )
    value = int(body)
    if not lo <= value <= hi:
        raise InputError(f"expected {what} between {lo} and {hi}, got {value}", source=source, where=where, line=line)
    return value


def check_int(
    value: object, *, lo: int = 0, hi: int = UINT64_MAX, what: str, source: str | None = None, where: str | None = None
) -> int:
    """A decoded JSON value that must be an integer in ``[lo, hi]`` (bools and floats are refused)."""
    if isinstance(value, OversizedNumber):
        raise InputError(f"expected {what} between {lo} and {hi}, got {value!r}", source=source, where=where)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"expected {what}, got {describe(value)}", source=source, where=where)
    if not lo <= value <= hi:
        raise InputError(f"expected {what} between {lo} and {hi}, got {describe(value)}", source=source, where=where)
    return value
