"""The before and after windows of a comparison, and the change markers between them.

The change is one parameter, so that the windows have one clock: a rollout journal (JSONL, one
record per line with ``time`` and ``event``; the change runs from the first record to the last) or
a single RFC 3339 time (metrics recorded on another clock, as a rehearsal's are). Each
window is ``length`` long; the after window starts ``margin`` after the change so that no
``rate()`` in it reaches back to samples taken before the change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tmnb.errors import InputError
from tmnb.metrics.durations import check_time
from tmnb.metrics.durations import parse_duration as parse_duration  # where the compare and soak read it

MARKER_COLUMNS = ["time", "event", "detail"]


def parse_time(text: str, *, where: str, source: str | None = None, line: int | None = None) -> pd.Timestamp:
    """An RFC 3339 timestamp as a UTC Timestamp; a time without an offset is taken as UTC."""
    stamp = pd.Timestamp(check_time(text, where=where, source=source, line=line))
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def read_journal(path: str | Path) -> pd.DataFrame:
    """Change markers from a rollout journal: JSONL records with ``time`` and ``event``.

    Other fields of a record are kept as compact JSON in ``detail``; records are sorted by time.
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the journal: {exc.strerror or exc}", source=source) from None
    rows = []
    lines = text.splitlines()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            if number == len(lines) and not text.endswith("\n"):
                break  # the last line of a rollout killed mid-write: every finished record is still good
            raise InputError(f"not a JSON object: {exc.msg}", source=source, line=number) from None
        if not isinstance(record, dict) or not isinstance(record.get("event"), str) or "time" not in record:
            raise InputError("expected a JSON object with 'time' and 'event' (string)", source=source, line=number)
        when = parse_time(record.pop("time"), where="time", source=source, line=number)
        event = record.pop("event")
        rows.append({"time": when, "event": event, "detail": json.dumps(record, sort_keys=True) if record else ""})
    if not rows:
        raise InputError("the journal has no records", source=source)
    return pd.DataFrame(rows, columns=MARKER_COLUMNS).sort_values("time", ignore_index=True)


@dataclass(frozen=True)
class Windows:
    """Closed time intervals (UTC) compared, the change between them, and its markers."""

    before: tuple[pd.Timestamp, pd.Timestamp]
    after: tuple[pd.Timestamp, pd.Timestamp]
    change: tuple[pd.Timestamp, pd.Timestamp]
    markers: pd.DataFrame

    def describe(self) -> str:
        def span(a: pd.Timestamp, b: pd.Timestamp) -> str:
            return f"{a:%Y-%m-%d %H:%M} – {b:%Y-%m-%d %H:%M} UTC"

        return f"before {span(*self.before)}; after {span(*self.after)}"


def is_time(text: str) -> bool:
    """Whether ``change`` is a time (else it names a journal)."""
    try:
        check_time(text, where="change")
    except InputError:
        return False
    return True


def resolve(change: str, *, length: str = "2h", margin: str = "5m") -> Windows:
    """The window before the change (the journal's first record, or the time given) and the one after
    it (the journal's last record)."""
    if not change:
        raise InputError("cannot place the change: expected a rollout journal or an RFC 3339 time", where="change")
    if is_time(change):
        at = parse_time(change, where="change")
        markers = pd.DataFrame([{"time": at, "event": "change", "detail": ""}], columns=MARKER_COLUMNS)
        span_of_change = (at, at)
    else:
        markers = read_journal(change)
        span_of_change = (markers["time"].iloc[0], markers["time"].iloc[-1])
    span = pd.Timedelta(seconds=parse_duration(length, where="window"))
    settle = pd.Timedelta(seconds=parse_duration(margin, where="rate_window"))
    first, last = span_of_change
    return Windows((first - span, first), (last + settle, last + settle + span), span_of_change, markers)
