"""Go's string conversions and formatting, reproduced so error texts match the kubelet's byte for byte.

The kubelet builds its messages with ``fmt.Errorf("%q", ...)`` and ``strconv`` parse errors;
Python's ``repr`` and ``int()`` differ in quoting and in what they accept.

No kubelet file: Go's ``strconv`` and ``fmt``, and ``Parse`` of k8s.io/utils/cpuset/cpuset.go, as the
kubelet's texts print them (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Mapping

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_ESCAPES = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t", "\v": r"\v"}


def quote(text: str) -> str:
    """``strconv.Quote`` / ``%q``: double quotes, Go escapes, printable Unicode kept."""
    out = ['"']
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


class GoParseError(ValueError):
    """A ``strconv`` failure; ``str()`` is the Go error text."""


def parse_bool(text: str) -> bool:
    """``strconv.ParseBool``."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise GoParseError(f"strconv.ParseBool: parsing {quote(text)}: invalid syntax")


def atoi(text: str) -> int:
    """``strconv.Atoi`` on a 64-bit platform: optional sign, ASCII digits only."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not all("0" <= c <= "9" for c in body):
        raise GoParseError(f"strconv.Atoi: parsing {quote(text)}: invalid syntax")
    value = int(text)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise GoParseError(f"strconv.Atoi: parsing {quote(text)}: value out of range")
    return value


def format_string_map(values: Mapping[str, str]) -> str:
    """``%v`` of a ``map[string]string``: keys sorted, ``map[k:v k2:v2]``."""
    return "map[" + " ".join(f"{k}:{values[k]}" for k in sorted(values)) + "]"


def parse_cpu_ranges(text: str) -> list[tuple[int, int]]:
    """``k8s.io/utils/cpuset.Parse`` as inclusive ranges, with its error texts. Ranges are kept
    unexpanded so that a hostile ``0-99999999`` costs nothing until it is checked against the
    machine's CPUs (``getReservedCPUs`` rejects it there, as the kubelet would)."""
    if text == "":
        return []
    ranges = []
    for part in text.split(","):
        bounds = part.split("-", 1)
        if len(bounds) == 1:
            cpu = atoi(bounds[0])
            ranges.append((cpu, cpu))
            continue
        start, end = atoi(bounds[0]), atoi(bounds[1])
        if start > end:
            raise GoParseError(f"invalid range {quote(part)} ({start} > {end})")
        ranges.append((start, end))
    return ranges
