"""The kubelet's log lines as ``journalctl -u kubelet`` prints them, read into records.

A line is an optional journalctl prefix (``-o short-iso``: ``2026-12-02T10:15:32+0000 host
kubelet[123]: ``; ``-o short``: ``Dec 02 10:15:32 host kubelet[123]: ``; or none, as ``-o cat``
and plain log files) followed by one of the kubelet's formats: klog text
(``I1202 10:15:32.123456   12345 scope_container.go:50] "Best TopologyHint" bestHint=...``,
structured or unstructured), JSON (``--logging-format=json``: ``{"ts":<epoch ms>,"caller":...,
"msg":...,"v":0}``), or plain text from systemd or the kubelet's stderr when a prefix says who
wrote it. klog's header has no year (and ``short`` has none either): the year comes from the
prefix when it has one, else from ``reference`` (the capture time), taking the latest year that
does not put the line after the reference, so a December line read in January lands in December.
Times without a zone are UTC. Lines that fit none of these are counted, never fatal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from typing import Any

from tmnb.parse.klog_names import recognise, systemd_name
from tmnb.parse.klog_values import parse_pairs, parse_quoted

#: journalctl -o short-iso / short-iso-precise: full date with zone
_ISO = re.compile(
    r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:?\d\d)"
    r"\s+(\S+)\s+([^\s\[\]:]+)(?:\[(\d+)\])?: ?(.*)$"
)
#: journalctl -o short / short-precise: "Dec 02 10:15:32 host ident[pid]: "
_SHORT = re.compile(
    r"^([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))? +(\S+) +([^\s\[\]:]+)(?:\[(\d+)\])?: ?(.*)$"
)
#: a prefix whose time is unreadable (localised month names): still host, ident[pid]
_OTHER = re.compile(r"^\S.*? (\S+) ([^\s\[\]:]+)\[(\d+)\]: ?(.*)$")
#: klog text header: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg
_KLOG = re.compile(r"^([IWEF])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{1,9}) +(\d+) ([^\s\]]+)\] ?(.*)$")
_MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTHS = {m: i for i, m in enumerate(_MONTH_NAMES, start=1)}
#: how far a line may be after the reference (clock skew) before it is taken as last year's
_SKEW = timedelta(days=1)
_HALF_YEAR = timedelta(days=180)
_EXAMPLES = 5
Hms = tuple[int, int, int]


@dataclass(frozen=True)
class LogRecord:
    """One kubelet log entry. ``name`` is the recognised message (``tmnb.parse.klog_names``) or None."""

    time: datetime | None
    level: str | None  # I, W, E, F; None for systemd and plain text
    source: str | None  # klog file:line, the JSON caller, or the journal identifier of plain text
    message: str
    values: dict[str, Any]
    format: str  # klog, json or text
    line: int
    name: str | None = None
    host: str | None = None
    ident: str | None = None
    pid: int | None = None


@dataclass(frozen=True)
class KubeletLog:
    """The records of a log, and what could not be read (counted, with the first few lines)."""

    records: tuple[LogRecord, ...]
    unreadable: int
    examples: tuple[tuple[int, str], ...] = ()
    markers: int = 0  # journalctl's own "-- Boot ... --" / "-- No entries --" lines

    def named(self) -> list[LogRecord]:
        return [r for r in self.records if r.name is not None]


@dataclass
class _Prefix:
    time: datetime | None = None
    naive: bool = False  # the prefix had no year and no zone (``short``)
    host: str | None = None
    ident: str | None = None
    pid: int | None = None
    present: bool = False


@lru_cache(maxsize=64)
def _zone(text: str) -> tzinfo:
    if text == "Z":
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))


def _micro(frac: str | None) -> int:
    return int((frac or "0").ljust(6, "0")[:6])


def _in_year(year: int, month: int, day: int, hms: Hms, micro: int, tz: tzinfo) -> datetime | None:
    try:
        return datetime(year, month, day, *hms, micro, tzinfo=tz)
    except ValueError:  # Feb 29 of a year that has none, or a bad day
        return None


def _place(month: int, day: int, hms: Hms, micro: int, near: datetime, *, before: bool) -> datetime | None:
    """The yearless time closest to ``near`` (a prefix's time), or the latest not after it (``before``)."""
    tz = near.tzinfo or UTC
    same = _in_year(near.year, month, day, hms, micro, tz)  # the common case: well inside the same year
    if same is not None and (near - _HALF_YEAR < same <= near + _SKEW if before else abs(same - near) < _HALF_YEAR):
        return same
    years = (near.year + 1, near.year, near.year - 1)
    candidates = [t for y in years if (t := _in_year(y, month, day, hms, micro, tz))]
    if before:
        fitting = [t for t in candidates if t <= near + _SKEW]
        return max(fitting) if fitting else None
    return min(candidates, key=lambda t: abs(t - near)) if candidates else None


def _prefix(line: str, reference: datetime) -> tuple[_Prefix, str]:
    m = _ISO.match(line)
    if m:
        y, mo, d, hh, mi, ss, frac, zone, host, ident, pid, rest = m.groups()
        hms = (int(hh), int(mi), int(ss))
        stamp = _in_year(int(y), int(mo), int(d), hms, _micro(frac), _zone(zone))
        return _Prefix(stamp, False, host, ident, int(pid) if pid else None, True), rest
    m = _SHORT.match(line)
    if m and m.group(1) in _MONTHS:
        mon, d, hh, mi, ss, frac, host, ident, pid, rest = m.groups()
        hms = (int(hh), int(mi), int(ss))
        stamp = _place(_MONTHS[mon], int(d), hms, _micro(frac), reference, before=True)
        return _Prefix(stamp, True, host, ident, int(pid) if pid else None, True), rest
    m = _OTHER.match(line)
    if m:
        host, ident, pid, rest = m.groups()
        return _Prefix(None, False, host, ident, int(pid), True), rest
    return _Prefix(), line


def _klog(payload: str, prefix: _Prefix, reference: datetime) -> dict[str, Any] | None:
    m = _KLOG.match(payload)
    if not m:
        return None
    level, mo, d, hh, mi, ss, frac, _thread, source, rest = m.groups()
    hms, micro = (int(hh), int(mi), int(ss)), _micro(frac)
    if prefix.time is not None:
        when = _place(int(mo), int(d), hms, micro, prefix.time, before=False)
    else:
        when = _place(int(mo), int(d), hms, micro, reference, before=True)
    message, values = rest, {}
    if rest.startswith('"'):
        quoted = parse_quoted(rest, 0)
        if quoted is not None:
            message, end = quoted
            values = parse_pairs(rest[end:])
    return {"time": when, "level": level, "source": source, "message": message, "values": values, "format": "klog"}


def _json(payload: str) -> dict[str, Any] | None:
    if not payload.startswith("{"):
        return None
    try:
        doc = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("msg"), str):
        return None
    ts = doc.get("ts")
    when = None
    if isinstance(ts, int | float) and not isinstance(ts, bool):
        seconds = ts / 1000 if ts > 1e11 else ts  # epoch milliseconds (component-base); seconds in old docs
        when = datetime.fromtimestamp(seconds, UTC)
    level = "I" if "v" in doc else "E"  # zapr adds "v" to info entries only
    values = {k: v for k, v in doc.items() if k not in ("ts", "caller", "msg", "v")}
    caller = doc.get("caller")
    return {"time": when, "level": level, "source": caller if isinstance(caller, str) else None,
            "message": doc["msg"], "values": values, "format": "json"}  # fmt: skip


def _utc(when: datetime | None) -> datetime | None:
    return when.astimezone(UTC) if when is not None else None


def parse_kubelet_log(lines: str | Iterable[str], *, reference: datetime | None = None) -> KubeletLog:
    """Records of every readable line; ``reference`` (aware; default now) gives yearless lines their year.

    A multi-line klog value (``key=<`` … `` >``) spans journal lines: its continuation lines are
    folded into the record they belong to."""
    ref = (reference or datetime.now(UTC)).astimezone(UTC)
    if isinstance(lines, str):
        lines = lines.splitlines()
    records: list[LogRecord] = []
    unreadable, markers = 0, 0
    examples: list[tuple[int, str]] = []
    open_value: tuple[int, str] | None = None  # (record index, key) of a pending key=< value
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        if line.startswith("-- ") and line.endswith(" --"):
            markers += 1
            continue
        prefix, payload = _prefix(line, ref)
        if open_value is not None:
            index, key = open_value
            if payload.startswith("\t") or payload.strip() == ">":
                if payload.strip() == ">":
                    open_value = None
                else:
                    rec = records[index]
                    text = rec.values[key]
                    rec.values[key] = (text + "\n" if text else "") + payload[1:]
                continue
            open_value = None
        fields = _klog(payload, prefix, ref) or _json(payload)
        if fields is None and (prefix.present or systemd_name(payload)):
            if not prefix.present:  # journalctl -o cat prints systemd's unit lines bare
                prefix.ident = "systemd"
            fields = {"time": prefix.time, "level": None, "source": prefix.ident, "message": payload,
                      "values": {}, "format": "text"}  # fmt: skip
        if fields is None:
            unreadable += 1
            if len(examples) < _EXAMPLES:
                examples.append((number, line[:200]))
            continue
        if fields["time"] is None:
            fields["time"] = prefix.time
        name = recognise(fields["message"], fields["values"], source=fields["source"], ident=prefix.ident,
                         fmt=fields["format"])  # fmt: skip
        record = LogRecord(
            **{**fields, "time": _utc(fields["time"])},
            line=number,
            name=name,
            host=prefix.host,
            ident=prefix.ident,
            pid=prefix.pid,
        )
        records.append(record)
        pending = [k for k, v in record.values.items() if v == "<"]
        if pending and fields["format"] == "klog":
            record.values[pending[-1]] = ""
            open_value = (len(records) - 1, pending[-1])
    return KubeletLog(records=tuple(records), unreadable=unreadable, examples=tuple(examples), markers=markers)
