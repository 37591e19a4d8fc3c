"""List semantics of the API server: label and field selectors, limit/continue pagination."""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tmnb.sandbox.errors import ApiError

Obj = dict[str, Any]
_SET_OP = re.compile(r"^\s*([^\s!=]+)\s+(in|notin)\s+\((.*)\)\s*$")


def _split(expr: str) -> list[str]:
    """Split on commas outside parentheses: ``a in (x,y),b`` is two requirements."""
    parts, depth, cur = [], 0, ""
    for ch in expr:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


Requirement = tuple[str, str, frozenset[str]]  # operator, key, values


def _label_requirement(req: str) -> Requirement:
    m = _SET_OP.match(req)
    if m:
        return m.group(2), m.group(1), frozenset(v.strip() for v in m.group(3).split(","))
    for op in ("!=", "==", "="):
        if op in req:
            key, value = req.split(op, 1)
            return ("!=" if op == "!=" else "="), key.strip(), frozenset({value.strip()})
    if req.startswith("!"):
        return "!exists", req[1:].strip(), frozenset()
    if re.fullmatch(r"[\w./-]+", req):
        return "exists", req, frozenset()
    raise ApiError(400, "BadRequest", f"unable to parse requirement: found {req!r}")


def _holds(op: str, value: str | None, values: frozenset[str]) -> bool:
    return {
        "=": value in values,
        "in": value in values,
        "!=": value not in values,
        "notin": value not in values,
        "exists": value is not None,
        "!exists": value is None,
    }[op]


def label_matcher(expr: str) -> Callable[[Mapping[str, str]], bool]:
    """A labels predicate for ``labelSelector`` (=, ==, !=, in, notin, exists, !exists)."""
    reqs = [_label_requirement(r) for r in _split(expr)]
    return lambda labels: all(_holds(op, labels.get(key), values) for op, key, values in reqs)


def _path(obj: Obj, dotted: str) -> str:
    cur: Any = obj
    for part in dotted.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    return "" if cur is None else str(cur).lower() if isinstance(cur, bool) else str(cur)


def field_matcher(expr: str) -> Callable[[Obj], bool]:
    """An object predicate for ``fieldSelector`` (=, ==, != on dotted paths such as spec.nodeName)."""
    reqs = []
    for req in _split(expr):
        op, key, values = _label_requirement(req)
        if op not in ("=", "!="):
            raise ApiError(400, "BadRequest", f"invalid selector: '{req}'; can't understand '{req}'")
        reqs.append((op, key, values))
    return lambda obj: all(_holds(op, _path(obj, key), values) for op, key, values in reqs)


def select(items: Sequence[Obj], query: Mapping[str, str]) -> list[Obj]:
    labels = label_matcher(query.get("labelSelector", ""))
    fields = field_matcher(query.get("fieldSelector", ""))
    return [o for o in items if labels(o["metadata"].get("labels") or {}) and fields(o)]


def _key(obj: Obj) -> tuple[str, str]:
    return obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def paginate(
    items: Sequence[Obj], query: Mapping[str, str], rv: int, *, ordered: bool = False
) -> tuple[list[Obj], Obj]:
    """One page in (namespace, name) order and the list metadata (continue, remainingItemCount).
    ``ordered``: ``items`` are already in that order (large lists are paged without re-sorting)."""
    items = items if ordered else sorted(items, key=_key)
    token = query.get("continue")
    start = 0
    if token:
        try:
            after = tuple(json.loads(base64.urlsafe_b64decode(token.encode())))
        except (binascii.Error, ValueError, TypeError):
            raise ApiError(400, "BadRequest", "continue key is not valid: invalid continue token") from None
        start = bisect.bisect_right(items, after, key=_key)
    limit = int(query.get("limit") or 0)
    meta: Obj = {"resourceVersion": str(rv)}
    left = len(items) - start
    if 0 < limit < left:
        page = list(items[start : start + limit])
        meta["continue"] = base64.urlsafe_b64encode(json.dumps(list(_key(page[-1]))).encode()).decode()
        meta["remainingItemCount"] = left - limit
        return page, meta
    return list(items[start:]), meta
