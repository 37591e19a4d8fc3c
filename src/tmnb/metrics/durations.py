"""Durations and change times as 05-compare's parameters give them, read without pandas, so
``tmnb run`` checks them before a kernel starts with the checks the notebook itself runs."""

from __future__ import annotations

import re
from datetime import datetime

from tmnb.errors import InputError

_DURATION = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")
_UNIT_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}


def parse_duration(text: str, *, where: str) -> float:
    """Prometheus duration syntax ("90s", "5m", "1h30m", "2d") → seconds."""
    body = text.strip() if isinstance(text, str) else ""
    parts = list(_DURATION.finditer(body))
    if not body or "".join(p.group(0) for p in parts) != body:
        raise InputError(f"invalid duration {text!r}: expected e.g. 30s, 5m, 2h, 1d", where=where)
    seconds = sum(int(p.group(1)) * _UNIT_S[p.group(2)] for p in parts)
    if seconds <= 0:
        raise InputError(f"duration {text!r} must be longer than zero", where=where)
    return seconds


def check_time(text: str, *, where: str, source: str | None = None, line: int | None = None) -> datetime:
    """An RFC 3339 (ISO 8601) time, as the parameters and journals promise it; a time without an
    offset is read as UTC by ``metrics.windows.parse_time``, which calls this first."""
    try:
        return datetime.fromisoformat(text.strip())
    except (ValueError, AttributeError):
        raise InputError(
            f"invalid time {text!r}: expected RFC 3339, e.g. 2026-12-01T10:00:00Z",
            where=where,
            source=source,
            line=line,
        ) from None
