"""List semantics of the API server: label and field selectors, limit/continue pagination."""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tmnb.errors import InputError
from tmnb.snapshot.select import parse_selector, split_requirements
from tmnb.twin.sandbox.errors import ApiError

Obj = dict[str, Any]
_FIELD = re.compile(r"^\s*([\w./-]+)\s*(==|=|!=)\s*(.*?)\s*$")


def label_matcher(expr: str) -> Callable[[Mapping[str, str]], bool]:
    """A labels predicate for ``labelSelector`` (=, ==, !=, in, notin, exists, !exists)."""
    try:
        return parse_selector(expr)
    except InputError as exc:
        raise ApiError(400, "BadRequest", f"unable to parse requirement: {exc.message}") from None


def _path(obj: Obj, dotted: str) -> str:
    cur: Any = obj
    for part in dotted.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    return "" if cur is None else str(cur).lower() if isinstance(cur, bool) else str(cur)


def field_matcher(expr: str) -> Callable[[Obj], bool]:
    """An object predicate for ``fieldSelector`` (=, ==, != on dotted paths such as spec.nodeName)."""
    reqs = []
    for req in split_requirements(expr):
        m = _FIELD.match(req)
        if not m:
            raise ApiError(400, "BadRequest", f"invalid selector: '{req}'; can't understand '{req}'")
        reqs.append((m.group(2) != "!=", m.group(1), m.group(3)))
    return lambda obj: all((_path(obj, key) == value) == equal for equal, key, value in reqs)


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
