"""The kubelet journal excerpt of a node bundle, as the snapshot keeps it.

The collector script bounds the excerpt (``--since``, a line cap, a byte cap) and says in
``tmnb/meta.txt`` where it read it and whether it cut it. Here every line is redacted before it
can reach a snapshot, a text log (no journald) gets its ``since`` bound by each record's time,
and lines in a format the parser does not know become one warning instead of an error.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tmnb.errors import InputError
from tmnb.parse.duration import parse_go_duration
from tmnb.parse.klog import parse_kubelet_log
from tmnb.redact import redact_log_line
from tmnb.snapshot import Issue, KubeletJournal

JOURNAL = "tmnb/journal.txt"
_DAYS = re.compile(r"^-(\d+)\s*(d|days?)$")
_ABSOLUTE = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d")


def read_meta(root: Path) -> dict[str, str]:
    path = root / "tmnb" / "meta.txt"
    if not path.is_file():
        return {}
    pairs = (line.partition("=") for line in path.read_text(errors="replace").splitlines())
    return {key: value for key, sep, value in pairs if sep}


def _instant(text: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC) if text else None
    except ValueError:
        return None


def since_bound(since: str, read_at: datetime) -> datetime | None:
    """journalctl's ``--since`` as an instant: ``-24h``/``-90m`` (Go durations), ``-2d``, or a UTC
    ``YYYY-MM-DD[ HH:MM[:SS]]``; None for the forms journalctl knows and this does not."""
    text = since.strip()
    days = _DAYS.match(text)
    if days:
        return read_at - timedelta(days=int(days.group(1)))
    if text.startswith("-"):
        try:
            return read_at + timedelta(microseconds=parse_go_duration(text) // 1000)
        except InputError:
            return None
    for form in _ABSOLUTE:
        try:
            return datetime.strptime(text, form).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _from(lines: list[str], bound: datetime, read_at: datetime) -> list[str]:
    """The lines from the first record at or after ``bound`` (a log is in time order)."""
    timed = [r for r in parse_kubelet_log(lines, reference=read_at).records if r.time is not None]
    if not timed:
        return lines
    first = next((r.line for r in timed if r.time is not None and r.time >= bound), None)
    return [] if first is None else lines[first - 1 :]


def journal_excerpt(root: Path, meta: dict[str, str], notes: list[Issue]) -> tuple[KubeletJournal | None, list[Issue]]:
    """The excerpt the script left in the bundle (None when it found no journal), and its issues."""
    source = meta.get("journal_source")
    if not source:
        return None, []
    path = root / JOURNAL
    lines = [redact_log_line(line) for line in path.read_text(errors="replace").splitlines()] if path.is_file() else []
    dropped = any(n.source == JOURNAL and n.message.startswith("dropped") for n in notes)
    read_at = _instant(meta.get("captured_at")) or datetime.now(UTC)
    since = meta.get("journal_since", "")
    issues = []
    if not source.startswith("journalctl") and since:
        bound = since_bound(since, read_at)
        if bound is None:
            kept = f"since {since!r} is not applied to the text log {source}: all its lines are kept"
            issues.append(Issue(source="kubelet journal", severity="info", message=kept))
        else:
            lines = _from(lines, bound, read_at)
    log = parse_kubelet_log(lines, reference=read_at)
    if log.unreadable:
        first = log.examples[0][1] if log.examples else ""
        issues.append(
            Issue(
                source="kubelet journal",
                severity="warning",
                message=f"{log.unreadable} of {len(lines)} line(s) in an unknown format (not klog text, JSON or a "
                f"journalctl prefix), kept but not read; the first: {first[:120]!r}",
            )
        )
    excerpt = KubeletJournal(
        source=source,
        since=since,
        max_bytes=int(meta.get("journal_max_bytes") or 0),
        lines=lines,
        truncated=meta.get("journal_truncated") == "1" or dropped,
        read_at=read_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    return excerpt, issues
