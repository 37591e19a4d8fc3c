"""The postmortem timeline with the kubelet's own records from the snapshots' journal excerpts."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest

from factories import node, snapshot
from tmnb.parse.klog_names import NAMES
from tmnb.postmortem import kubelet_log, timeline
from tmnb.postmortem.evidence import open_evidence
from tmnb.snapshot import KubeletJournal, save

JOURNAL = Path(__file__).parents[1] / "fixtures" / "node" / "journal"


def snap(nodes, captured_at: str = "2026-12-02T09:00:00Z"):  # type: ignore[no-untyped-def]
    return dataclasses.replace(snapshot(nodes), captured_at=captured_at)


def excerpt(name: str, read_at: str, *, lines: list[str] | None = None, truncated: bool = False) -> KubeletJournal:
    text = lines if lines is not None else (JOURNAL / name).read_text().splitlines()
    return KubeletJournal(source="journalctl -u kubelet", since="-24h", max_bytes=262144, lines=text,
                          truncated=truncated, read_at=read_at)  # fmt: skip


@pytest.fixture
def evidence(tmp_path: Path) -> Path:
    """A rollout's state folder: the before snapshot, an after snapshot whose excerpt overlaps it, a journal."""
    full = (JOURNAL / "short-iso.txt").read_text().splitlines()
    before = snap(
        [node("w1", kubelet_journal=excerpt("", "2026-12-02T09:21:00Z", lines=full[:18])), node("w2")],
        "2026-12-02T09:21:00Z",
    )
    after = snap(
        [node("w1", kubelet_journal=excerpt("short-iso.txt", "2026-12-02T09:30:00Z", truncated=True))],
        "2026-12-02T09:30:00Z",
    )
    save(before, tmp_path / "snapshots" / "before.json.gz")
    save(after, tmp_path / "snapshots" / "after-w1.json.gz")
    (tmp_path / "journal.jsonl").write_text(
        json.dumps({"time": "2026-12-02T09:15:00Z", "node": "w1", "step": "stop", "event": "done"})
        + "\n"
        + json.dumps({"time": "2026-12-02T09:20:30Z", "node": "w1", "step": "start", "event": "done"})
        + "\n"
    )
    return tmp_path


def test_kubelet_records_join_the_timeline_once_each(evidence: Path) -> None:
    frame = timeline.build(open_evidence(evidence))
    kubelet = frame[frame["kind"].isin(NAMES)]
    assert list(kubelet["node"].unique()) == ["w1"]
    # the first 18 lines are in both snapshots' excerpts: still one row per record; of the hint lines
    # only those of the rejected pod stay (the admitted web pod's four are chatter)
    assert len(kubelet) == 19 and not kubelet.duplicated(["time", "kind", "what"]).any()
    hints = kubelet[kubelet["kind"].isin(kubelet_log.HINTS)]
    assert hints["what"].str.endswith(": app/big-5f6b-9xq7z").all() and len(hints) == 2
    every = timeline.build(open_evidence(evidence), all_hints=True)
    assert len(every[every["kind"].isin(NAMES)]) == 23
    assert kubelet["kind"].value_counts()[
        ["kubelet_start", "topology_affinity_error", "cpu_checkpoint_failed"]
    ].tolist() == [3, 1, 1]
    denied = kubelet[kubelet["kind"] == "topology_affinity_error"].iloc[0]
    assert denied["time"] == pd.Timestamp("2026-12-02T09:22:05.771090Z")
    assert denied["what"] == "Pod admission denied: app/big-5f6b-9xq7z (TopologyAffinityError)"
    assert denied["detail"] == "message=Resources cannot be allocated with Topology locality"
    assert frame["time"].is_monotonic_increasing
    # merged with the rollout's own records: the kubelet exits between the journal's stop and start
    stop, start = (frame[(frame["kind"] == "ready") & (frame["what"] == w)]["time"].iloc[0]
                   for w in ("kubelet stopped", "kubelet started"))  # fmt: skip
    exits = kubelet[kubelet["kind"] == "kubelet_exit"]["time"]
    assert ((exits > stop) & (exits < start)).all() and len(exits) == 2


def test_yearless_excerpts_take_the_year_of_their_reading(tmp_path: Path) -> None:
    new_year = snap(
        [node("lat-01", kubelet_journal=excerpt("short-new-year.txt", "2027-01-01T00:10:00Z"))], "2027-01-01T00:10:00Z"
    )
    save(new_year, tmp_path / "snapshot.json.gz")
    frame = timeline.build(open_evidence(tmp_path), all_hints=True)
    rows = frame[frame["node"] == "lat-01"]
    assert rows["time"].dt.year.tolist() == [2026, 2026, 2027, 2027]
    assert rows["kind"].tolist() == ["topology_best_hint", "kubelet_stop", "kubelet_start", "kubelet_version"]


def test_the_account_names_what_the_timeline_could_not_read(evidence: Path, tmp_path: Path) -> None:
    found = open_evidence(evidence)
    table = kubelet_log.summary(found)
    assert table.to_dict("records") == [
        {"node": "w1", "source": "journalctl -u kubelet", "since": "-24h", "lines": 28, "named": 23,
         "unreadable": 0, "truncated": True},
    ]  # fmt: skip
    odd = snap([node("w9", kubelet_journal=excerpt("", "2026-12-02T09:00:00Z", lines=["??", "level=info x"]))])
    save(odd, tmp_path / "odd" / "snapshot.json.gz")
    (row,) = kubelet_log.summary(open_evidence(tmp_path / "odd")).to_dict("records")
    assert (row["lines"], row["named"], row["unreadable"]) == (2, 0, 2)
    assert timeline.build(open_evidence(tmp_path / "odd"))["kind"].tolist() == ["snapshot"]  # counted, not fatal


def test_a_record_many_nodes_logged_together_is_one_table_row():
    """The fleet's kubelets starting in the same second: one row naming them; two nodes stay two rows."""
    t = pd.Timestamp("2026-12-02T09:00:00Z")
    start = {"time": t, "kind": "kubelet_start", "what": "Started kubelet.service", "detail": ""}
    frame = pd.DataFrame(
        [{**start, "node": f"n{i}"} for i in range(10)]
        + [{**start, "node": f"m{i}", "time": t + pd.Timedelta(seconds=5)} for i in range(2)]
        + [{"time": t + pd.Timedelta(seconds=1), "node": "", "kind": "snapshot", "what": "captured", "detail": "a"}],
        columns=timeline.COLUMNS,
    ).sort_values(["time", "node"], ignore_index=True)  # as build() orders it
    table = timeline.folded(frame)
    assert len(table) == 4 and table["time"].is_monotonic_increasing
    assert table.loc[0, "node"] == "10 nodes: n0, n1, n2, n3, n4, n5, n6, n7 and 2 more"
    assert sorted(table["node"][2:]) == ["m0", "m1"]
    assert timeline.folded(frame.iloc[0:0]).empty


def test_kubelet_values_read_as_klog_wrote_them():
    """klog writes a map as JSON: the detail shows it so, not as Python's dict repr."""
    from tmnb.parse.klog import parse_kubelet_log
    from tmnb.twin.sandbox.journal import klog

    line = klog("w1", 42, "I", "topology_manager.go:138", "Creating topology manager with policy per scope",
                topologyPolicyName="restricted", topologyPolicyOptions={"prefer-closest-numa-nodes": "true"},
                enabled=True)  # fmt: skip
    (record,) = parse_kubelet_log([line]).records
    detail = kubelet_log._detail(record)
    assert 'topologyPolicyOptions={"prefer-closest-numa-nodes":"true"}' in detail
    assert "topologyPolicyName=restricted" in detail and "enabled=true" in detail and "'" not in detail


def _rollout_second(tmp_path: Path, steps: list[tuple[str, str, str]]) -> Path:
    """A node whose kubelet systemd restarted at 10:00:05 (whole-second stamps), and journal records of
    the same second (``steps``: time, step, event)."""
    lines = [
        "2026-12-02T10:00:05+0000 w1 systemd[1]: Stopped kubelet.service - kubelet: The Kubernetes Node Agent.",
        "2026-12-02T10:00:05+0000 w1 systemd[1]: Started kubelet.service - kubelet: The Kubernetes Node Agent.",
    ]
    after = snap([node("w1", kubelet_journal=excerpt("", "2026-12-02T10:05:00Z", lines=lines))], "2026-12-02T10:05:00Z")
    save(snap([node("w1")], "2026-12-02T09:55:00Z"), tmp_path / "snapshots" / "before.json.gz")
    save(after, tmp_path / "snapshots" / "after-w1.json.gz")
    records = [{"time": t, "node": "w1", "step": s, "event": e} for t, s, e in steps]
    (tmp_path / "journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return tmp_path


def test_systemd_lines_of_a_second_follow_what_the_journal_did_before_the_restart(tmp_path: Path) -> None:
    """systemd's "Stopped/Started kubelet.service" of 10:00:05 happened during the start step: after
    the preflight, cordon and apply of that second, whatever their microseconds say."""
    steps = [
        ("2026-12-02T10:00:05.100Z", "preflight", "intent"), ("2026-12-02T10:00:05.200Z", "preflight", "done"),
        ("2026-12-02T10:00:05.300Z", "cordon", "done"), ("2026-12-02T10:00:05.600Z", "apply", "done"),
        ("2026-12-02T10:00:05.700Z", "start", "intent"), ("2026-12-02T10:00:05.900Z", "start", "done"),
    ]  # fmt: skip
    frame = timeline.build(open_evidence(_rollout_second(tmp_path, steps)))
    order = [w.split(" - ")[0] for w in frame["what"] if not w.startswith("captured")]
    assert order == [
        "preflight done", "cordon done", "apply done",
        "Stopped kubelet.service", "Started kubelet.service", "kubelet started",
    ]  # fmt: skip
    assert not frame["detail"].str.contains("not known").any()


def test_systemd_lines_of_a_second_without_a_restart_step_say_their_order_is_unknown(tmp_path: Path) -> None:
    steps = [("2026-12-02T10:00:05.300Z", "cordon", "done"), ("2026-12-02T10:00:05.600Z", "apply", "done")]
    frame = timeline.build(open_evidence(_rollout_second(tmp_path, steps)))
    systemd = frame[frame["kind"].isin(timeline.SYSTEMD_KINDS)]
    assert len(systemd) == 2 and systemd["detail"].str.contains(timeline.UNKNOWN_ORDER, regex=False).all()
