"""One timeline of a change: events, rollout journal records, snapshot captures, Ready transitions
and the kubelet's own log records from each snapshot node's journal excerpt.

One row per moment: time (UTC), node ("" for the cluster), kind, what happened and detail. Kubelet
records are the named ones (``tmnb.parse.klog_names``; the name is the kind), once each however
many snapshots carry the same excerpt. The change window runs from the journal's first record to
its last.

systemd stamps its lines about the kubelet unit to the whole second, the journal to the microsecond:
sorted by time alone, "Stopped kubelet.service" of second S would come before the preflight, cordon
and apply of the same second, as if the kubelet had restarted first. Such a line is placed by what
the journal proves: right after the intent of the node's step that stops or starts the kubelet in
that second (every journal record before that intent happened before it). Where the journal holds
records of that node and second but no such step, the order is not known, and the row says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from tmnb.postmortem.evidence import Evidence
from tmnb.postmortem.kubelet_log import kubelet_rows
from tmnb.report.tables import some

COLUMNS = ["time", "node", "kind", "what", "detail"]
#: journal steps that say the node's Ready state changed
READY_STEPS = {"wait-ready": "Ready again", "stop": "kubelet stopped", "start": "kubelet started"}
#: the journal's steps that stop or start the kubelet (a start without a stop is a restart)
KUBELET_STEPS = ("stop", "start")
#: systemd's lines about the kubelet unit (``tmnb.parse.klog_names``): stamped to the whole second
SYSTEMD_KINDS = {"kubelet_start", "kubelet_stop", "kubelet_exit"}
UNKNOWN_ORDER = "systemd stamps whole seconds: its order among this second's rollout records is not known"


def utc_time(text: object) -> pd.Timestamp | None:
    try:
        stamp = pd.Timestamp(text)
    except (ValueError, TypeError):
        return None
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _journal_rows(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for r in records:
        if r.get("event") == "intent":
            continue
        step, event = str(r.get("step", "")), str(r.get("event", ""))
        kind = "ready" if step in READY_STEPS and event == "done" else "rollout"
        what = READY_STEPS[step] if kind == "ready" else f"{step} {event}"
        detail = r.get("error") or r.get("result") or ""
        rows.append(
            {
                "time": utc_time(r.get("time")),
                "node": r.get("node") or "",
                "kind": kind,
                "what": what,
                "detail": str(detail),
            }
        )
    return rows


def build(evidence: Evidence, *, all_hints: bool = False) -> pd.DataFrame:
    """The timeline; ``all_hints`` keeps the Topology Manager's hint records of admitted pods too."""
    rows: list[dict[str, Any]] = []
    seen_events = set()
    for path, snap in [*evidence.snapshots, *evidence.node_snapshots]:
        rows.append(
            {
                "time": utc_time(snap.captured_at),
                "node": "",
                "kind": "snapshot",
                "what": "captured",
                "detail": str(path.name),
            }
        )
        for e in snap.events:
            key = (e.namespace, e.name, e.reason, e.last_seen or e.first_seen)
            if key in seen_events:
                continue
            seen_events.add(key)
            rows.append({
                "time": utc_time(e.last_seen or e.first_seen),
                "node": e.node or "",
                "kind": "event",
                "what": f"{e.type} {e.reason}: {e.namespace}/{e.name}" + (f" x{e.count}" if e.count > 1 else ""),
                "detail": e.message,
            })  # fmt: skip
    rows += _journal_rows(evidence.journal)
    rows += [_placed(row, evidence.journal) for row in kubelet_rows(evidence, all_hints=all_hints)]
    frame = pd.DataFrame([r for r in rows if r["time"] is not None], columns=[*COLUMNS, "order"])
    frame["order"] = frame["order"].astype(frame["time"].dtype).fillna(frame["time"])
    return frame.sort_values(["order", "node"], kind="stable", ignore_index=True).drop(columns="order")


def _placed(row: dict[str, Any], journal: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """A systemd row's place in its second (``order``), as the journal proves it (module docstring)."""
    time = row["time"]
    if row["kind"] not in SYSTEMD_KINDS or time is None:
        return row
    second = pd.Timestamp(time).floor("s")
    same = [
        (stamp, r)
        for r in journal
        if r.get("node") == row["node"]
        and (stamp := utc_time(r.get("time"))) is not None
        and stamp.floor("s") == second
    ]
    steps = sorted(stamp for stamp, r in same if r.get("step") in KUBELET_STEPS and r.get("event") == "intent")
    if steps:
        return {**row, "order": steps[0] + pd.Timedelta(microseconds=1)}
    if same:
        return {**row, "detail": f"{row['detail']} ({UNKNOWN_ORDER})".lstrip()}
    return row


def folded(frame: pd.DataFrame, least: int = 3, shown: int = 8) -> pd.DataFrame:
    """The timeline as a table reads it: one record that ``least`` or more nodes logged at the same
    moment with the same words (a fleet's kubelets starting together) is one row naming the nodes."""
    if frame.empty:
        return frame
    same = ["time", "kind", "what", "detail"]
    rows = []
    for _, part in frame.groupby(same, sort=False, dropna=False):
        nodes = sorted(set(part["node"]) - {""})
        if len(nodes) < least or len(nodes) != len(part):
            rows.append(part)
            continue
        label = f"{len(nodes)} nodes: {some(nodes, shown)}"
        rows.append(part.iloc[:1].assign(node=label))  # keeps the index of the group's first row
    return pd.concat(rows).sort_index().reset_index(drop=True)  # the timeline's own order


def change_window(evidence: Evidence) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    times = [t for t in (utc_time(r.get("time")) for r in evidence.journal) if t is not None]
    return (min(times), max(times)) if times else None


def journal_steps(evidence: Evidence) -> pd.DataFrame:
    """The rollout's steps per node with their results (intents folded into their outcome)."""
    rows = [
        {
            "time": utc_time(r.get("time")),
            "node": r.get("node") or "",
            "step": r.get("step", ""),
            "result": r.get("event", ""),
            "detail": str(r.get("error") or r.get("result") or ""),
        }
        for r in evidence.journal
        if r.get("event") != "intent"
    ]
    return pd.DataFrame(rows, columns=["time", "node", "step", "result", "detail"])
