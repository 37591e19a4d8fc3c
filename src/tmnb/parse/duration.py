"""Go ``time.Duration`` strings ("10s", "1m", "1m0s", "300ms") as comparable values.

KubeletConfiguration durations are written by people as "1m" and served by /configz as "1m0s";
comparing them as strings would report a false difference between the file and the running kubelet.
"""

from __future__ import annotations

import re
from decimal import Decimal

from tmnb.errors import InputError

_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(text: str, *, source: str | None = None, where: str | None = None) -> int:
    """``time.ParseDuration`` → nanoseconds."""
    if not isinstance(text, str):
        raise InputError(f"expected a duration string such as 10s or 1m30s, got {text!r}", source=source, where=where)
    sign = -1 if text.startswith("-") else 1
    body = text[1:] if text.startswith(("-", "+")) else text
    if body == "0":
        return 0
    total = Decimal(0)
    pos = 0
    while pos < len(body):
        m = _PART.match(body, pos)
        if not m:
            raise InputError(f"invalid duration {text!r}: expected e.g. 10s, 1m30s, 300ms", source=source, where=where)
        total += Decimal(m.group(1)) * _UNITS_NS[m.group(2)]
        pos = m.end()
    if pos == 0:
        raise InputError(f"invalid duration {text!r}: expected e.g. 10s, 1m30s, 300ms", source=source, where=where)
    ns = sign * int(total)
    if not -(2**63) <= ns < 2**63:  # time.Duration is an int64; ParseDuration refuses the overflow
        raise InputError(f"invalid duration {text!r}: beyond ±292 years (an int64 of ns)", source=source, where=where)
    return ns


def _fraction(value: int, unit: int) -> str:
    whole, rest = divmod(value, unit)
    if not rest:
        return str(whole)
    digits = str(rest).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"


def format_go_duration(ns: int) -> str:
    """``time.Duration.String()``: "1m0s", "10s", "300ms", "0s"."""
    if ns == 0:
        return "0s"
    sign, u = ("-", -ns) if ns < 0 else ("", ns)
    if u < 1_000:
        text = f"{u}ns"
    elif u < 1_000_000:
        text = _fraction(u, 1_000) + "µs"
    elif u < 10**9:
        text = _fraction(u, 1_000_000) + "ms"
    else:
        hours, rest = divmod(u, 3600 * 10**9)
        minutes, rest = divmod(rest, 60 * 10**9)
        text = _fraction(rest, 10**9) + "s"
        if hours:
            text = f"{hours}h{minutes}m{text}"
        elif minutes:
            text = f"{minutes}m{text}"
    return sign + text
