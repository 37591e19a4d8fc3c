"""The kubelet's own log records in a postmortem: rows for the timeline and a per-node account.

Every snapshot node may carry a journal excerpt (``Node.kubelet_journal``); consecutive snapshots
of a change usually carry overlapping ones, so a record is kept once per node. Yearless lines take
their year from the excerpt's read time (else the snapshot's capture time). The Topology Manager
logs several hint lines for every container it admits; on the timeline they stay only for pods
the kubelet then rejected (they say why), unless all are asked for. What could not be read or was
cut is counted per node, so the postmortem can say what the timeline is missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from tmnb.parse.klog import KubeletLog, LogRecord, parse_kubelet_log
from tmnb.parse.klog_values import format_value
from tmnb.postmortem.evidence import Evidence
from tmnb.snapshot import KubeletJournal

SUMMARY = ["node", "source", "since", "lines", "named", "unreadable", "truncated"]
#: per-admission chatter, kept on the timeline for rejected pods only
HINTS = {"topology_hints", "topology_best_hint", "topology_admit_check", "topology_admit"}
REJECTIONS = {"topology_affinity_error", "smt_alignment_error", "admission_denied"}
#: values shown in "what", the rest go to "detail"
_HEADLINE = ("pod", "reason", "podUID")
_DETAIL_CHARS = 400


def _reference(excerpt: KubeletJournal, captured_at: str) -> datetime:
    for text in (excerpt.read_at, captured_at):
        try:
            return datetime.fromisoformat((text or "").replace("Z", "+00:00")).astimezone(UTC)
        except ValueError:
            continue
    return datetime.now(UTC)


def excerpts(evidence: Evidence) -> Iterator[tuple[str, KubeletJournal, KubeletLog]]:
    """(node, excerpt, parsed) for every node excerpt of every snapshot, oldest capture first.
    Parsed once per evidence: the timeline, the account and the glue all read them."""
    snapshots = sorted([*evidence.snapshots, *evidence.node_snapshots], key=lambda item: item[1].captured_at)
    for _path, snap in snapshots:
        for node in snap.nodes:
            excerpt = node.kubelet_journal
            if excerpt is None:
                continue
            log = evidence.parsed.get(id(excerpt))
            if log is None:
                log = parse_kubelet_log(excerpt.lines, reference=_reference(excerpt, snap.captured_at))
                evidence.parsed[id(excerpt)] = log
            yield node.name, excerpt, log


def _pod(value: object) -> str:
    if isinstance(value, dict):  # JSON logging writes klog.KObj as {"name", "namespace"}
        return f"{value.get('namespace', '')}/{value.get('name', '')}".lstrip("/")
    return str(value)


def _what(record: LogRecord) -> str:
    what = record.message
    if "pod" in record.values:
        what += f": {_pod(record.values['pod'])}"
    if "reason" in record.values:
        what += f" ({record.values['reason']})"
    return what


def _detail(record: LogRecord) -> str:
    parts = [
        f"{k}={v if isinstance(v, str) else format_value(v)}" for k, v in record.values.items() if k not in _HEADLINE
    ]
    text = " ".join(parts)
    return text if len(text) <= _DETAIL_CHARS else text[: _DETAIL_CHARS - 1] + "…"


def kubelet_rows(evidence: Evidence, *, all_hints: bool = False) -> list[dict[str, Any]]:
    """Timeline rows (time, node, kind = the record's name, what, detail) of the named records;
    hint records only for pods that were rejected unless ``all_hints``."""
    records: list[tuple[str, LogRecord]] = []
    seen: set[tuple[str, str]] = set()
    for node, excerpt, log in excerpts(evidence):
        for record in log.named():
            key = (node, excerpt.lines[record.line - 1])  # the same line in a later excerpt is the same record
            if record.time is not None and key not in seen:
                seen.add(key)
                records.append((node, record))
    rejected = {(n, _pod(r.values.get("pod"))) for n, r in records if r.name in REJECTIONS}
    return [
        {"time": r.time, "node": n, "kind": r.name, "what": _what(r), "detail": _detail(r)}
        for n, r in records
        if all_hints or r.name not in HINTS or (n, _pod(r.values.get("pod"))) in rejected
    ]


def denials(evidence: Evidence) -> dict[tuple[str, str], tuple[datetime | None, datetime | None]]:
    """(node, pod) -> (when the kubelet denied its admission, when that kubelet process had started):
    a pod that already existed when the kubelet started came back in the start's first batch, so
    its denial is a rejection at the restart. The latest denial of each pod in the excerpts."""
    found: dict[tuple[str, str], tuple[datetime | None, datetime | None]] = {}
    for node, _excerpt, log in excerpts(evidence):
        started: datetime | None = None
        for record in log.named():
            if record.name == "kubelet_version":
                started = record.time
            elif record.name in REJECTIONS:
                found[(node, _pod(record.values.get("pod")))] = (record.time, started)
    return found


def summary(evidence: Evidence) -> pd.DataFrame:
    """Per node, the latest excerpt: where it came from, its bound, and what the timeline lacks."""
    latest: dict[str, dict[str, Any]] = {}
    for node, excerpt, log in excerpts(evidence):
        latest[node] = {
            "node": node,
            "source": excerpt.source,
            "since": excerpt.since,
            "lines": len(excerpt.lines),
            "named": len(log.named()),
            "unreadable": log.unreadable,
            "truncated": excerpt.truncated,
        }
    return pd.DataFrame(list(latest.values()), columns=SUMMARY)


#: Start-up failures by record name, and the node file the kubelet's words point at.
START_FAILURES = {
    "config_invalid": "the kubelet config file (and its drop-ins)",
    "command_failed": "the file the error names, else the kubelet config file",
    "cpu_checkpoint_failed": "/var/lib/kubelet/cpu_manager_state (drain the node, then remove it, as the kubelet says)",
    "memory_checkpoint_failed": "/var/lib/kubelet/memory_manager_state (drain the node, then remove it)",
    "container_manager_failed": "the CPU/memory manager settings of the kubelet config file",
}
_STARTED = ("kubelet_version", "topology_manager_created")
_FILE_LINE = re.compile(r"(?P<file>/[\w./-]+)?[^\n]*?\bline (?P<line>\d+)")


def start_refusals(evidence: Evidence) -> pd.DataFrame:
    """Nodes whose last kubelet start in their excerpt ended in a start-up failure: the kubelet's
    words, when, and the file (with the line, where the error gives one) to fix."""
    last: dict[str, dict[str, Any]] = {}
    configs = {n.name: n.kubelet.config_file for _, snap in evidence.snapshots for n in snap.nodes}
    for node, excerpt, log in excerpts(evidence):
        for record in log.named():
            if record.name in _STARTED:
                last.pop(node, None)
            elif record.name in START_FAILURES:
                words = excerpt.lines[record.line - 1].split("] ", 1)[-1]
                found = _FILE_LINE.search(words)
                fix = START_FAILURES[record.name]
                if record.name in ("config_invalid", "command_failed") and configs.get(node):
                    fix = (found and found["file"]) or configs[node] or fix
                if found:
                    fix += f", line {found['line']}"
                when = record.time.strftime("%Y-%m-%d %H:%M:%S") if record.time else ""
                last[node] = {"node": node, "time": when, "failure": record.name, "kubelet said": words, "fix": fix}
    return pd.DataFrame(list(last.values()), columns=["node", "time", "failure", "kubelet said", "fix"])
