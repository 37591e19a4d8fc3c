"""The key/value part of a structured klog text line: ``key="Go-quoted" key=42 key={"json":1} key=<``.

klog writes strings with Go's strconv.Quote, structs and maps as JSON (or ``{A:1 B:x}`` from
``%+v`` in older releases), numbers and booleans bare, and a string with newlines as ``key=<``
followed by tab-indented lines and a closing `` >`` line (the caller folds those). Keys may hold a
space (``"/proc/swaps contents"``). Nothing here raises: what cannot be split stays a string.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"', "'": "'"}
_HEX = {"x": 2, "u": 4, "U": 8}
_CLOSE = {"{": "}", "[": "]", "(": ")"}
_QUOTED = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"', re.S)
_SIGNIFICANT = re.compile(r'[\s"{}\[\]()]')
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.S)


def _unescape(m: re.Match[str]) -> str:
    esc = m.group(1)
    if esc[0] in _HEX and len(esc) > 1:
        try:
            return chr(int(esc[1:], 16))
        except ValueError:  # beyond U+10FFFF
            return m.group(0)
    return _ESCAPES.get(esc, m.group(0))


def parse_quoted(text: str, pos: int) -> tuple[str, int] | None:
    """The Go-quoted string starting at ``text[pos]`` (a ``"``) and the index after it; None if unterminated."""
    m = _QUOTED.match(text, pos)
    if m is None:
        return None
    body = m.group(1)
    return (_ESCAPE.sub(_unescape, body) if "\\" in body else body), m.end()


def _scan(text: str, pos: int) -> int:
    """End of a bare or bracketed value: the first whitespace outside brackets and quotes."""
    stack: list[str] = []
    i = pos
    while (m := _SIGNIFICANT.search(text, i)) is not None:
        i, ch = m.start(), m.group()
        if ch == '"':
            quoted = parse_quoted(text, i)
            if quoted is None:
                return len(text)
            i = quoted[1]
            continue
        if ch in _CLOSE:
            stack.append(_CLOSE[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
        elif ch.isspace() and not stack:
            return i
        i += 1
    return len(text)


def _bare(token: str) -> Any:
    if token in ("true", "false"):
        return token == "true"
    if token == "<nil>":
        return None
    if token[:1] in "{[":
        try:
            return json.loads(token)
        except ValueError:
            return token
    for kind in (int, float):
        try:
            return kind(token)
        except ValueError:
            pass
    return token


def parse_pairs(text: str) -> dict[str, Any]:
    """``key=value`` pairs after a klog message; a lone trailing ``key=<`` keeps the value ``"<"``."""
    values: dict[str, Any] = {}
    words: list[str] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        start = i
        while i < n and text[i] != "=" and not text[i].isspace():
            i += 1
        if i >= n or text[i] != "=":
            if i > start:
                words.append(text[start:i])  # part of a key with a space, or a stray word
            continue
        key = " ".join([*words, text[start:i]])
        words = []
        i += 1
        if i < n and text[i] == '"':
            quoted = parse_quoted(text, i)
            if quoted is None:
                values[key] = text[i + 1 :]
                break
            values[key], i = quoted
        elif text[i:].rstrip() == "<":
            values[key] = "<"
            break
        else:
            end = _scan(text, i)
            values[key] = _bare(text[i:end]) if end > i else ""
            i = end
    return values


def format_value(value: object) -> str:
    """A value as klog's text format writes it (the inverse of ``parse_pairs`` for one value):
    strings quoted (JSON's quoting is Go's for the text kubelets log), maps and lists as JSON,
    numbers and booleans bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
