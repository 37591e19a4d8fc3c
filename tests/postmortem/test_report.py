"""06-postmortem's answer: failures since the change apart from older ones, the comparison's
regressions when the evidence holds them, and timeline labels that say what happened."""

from __future__ import annotations

import json
from pathlib import Path

from factories import node, pod, snapshot
from tmnb.plots.timeline import marker_kind
from tmnb.postmortem import report
from tmnb.postmortem.evidence import open_evidence
from tmnb.snapshot import save

REFUSED = {"phase": "Failed", "reason": "TopologyAffinityError", "message": "Pod was rejected"}


def _evidence(tmp_path: Path, *, with_compare: bool) -> Path:
    """Three pods refused in July on w2 (untouched), one refused on w1 after the change of 3 December,
    and, when asked, 05-compare's results with one regression on w1's workload and one elsewhere."""
    pods = [pod(f"old-{i}", "w2", created=f"2026-07-21T08:54:0{i}Z", **REFUSED) for i in range(3)]
    pods.append(pod("wide-0", "w1", created="2026-12-03T19:50:00Z", **REFUSED))
    run = tmp_path / "after-change-inventory"
    save(snapshot([node("w1"), node("w2")], pods), run / "snapshot.json.gz")
    state = tmp_path / "rollout-state"
    state.mkdir()
    (state / "journal.jsonl").write_text(
        json.dumps({"time": "2026-12-03T19:46:00Z", "node": "w1", "step": "apply", "event": "done"})
        + "\n"
        + json.dumps({"time": "2026-12-03T19:47:00Z", "node": "w1", "step": "verify", "event": "done"})
        + "\n"
    )
    if with_compare:
        compare = tmp_path / "05-compare"
        compare.mkdir()
        results = {"regressions": ["latency_p99 container=vault: +25.1%"],
                   "untouched_regressions": ["latency_p99 container=encoder: +15.1%"]}  # fmt: skip
        (compare / "manifest.json").write_text(
            json.dumps({"notebook": "/x/05-compare.ipynb", "status": "alert", "results": results})
        )
    return tmp_path


def test_failures_before_the_change_are_apart_from_those_since(tmp_path: Path) -> None:
    found = open_evidence(_evidence(tmp_path, with_compare=False))
    block = report.verdict(found)
    sections = dict(block.sections)
    assert block.headline == (
        "What went wrong: 1 pod(s) refused at admission since the change began. "
        "3 pod(s) refused before the change began are listed apart."
    )
    assert [line.split(" on ")[0] for line in sections["Rejected pods, and why"]] == ["**app/wide-0**"]
    assert sections["Refused before the change began (not this change's doing)"] == [
        "**w2**: 3 pod(s), TopologyAffinityError, created from 2026-07-21: app/old-0, app/old-1, app/old-2"
    ]
    assert sections["Metric regressions (05-compare)"] == []


def test_the_comparisons_regressions_are_in_the_answer(tmp_path: Path) -> None:
    found = open_evidence(_evidence(tmp_path, with_compare=True))
    block = report.verdict(found)
    assert "1 metric regression(s) in 05-compare" in block.headline
    assert dict(block.sections)["Metric regressions (05-compare)"] == [
        "**regression**: latency_p99 container=vault: +25.1%",
        "on nodes the change did not touch (no alert): latency_p99 container=encoder: +15.1%",
    ]


def test_timeline_labels_say_whether_a_pod_or_the_kubelet_was_refused() -> None:
    assert marker_kind("topology_affinity_error") == "pod rejected at admission"
    assert marker_kind("smt_alignment_error") == "pod rejected at admission"
    assert marker_kind("admission_denied") == "pod rejected at admission"
    assert marker_kind("config_invalid") == "kubelet did not start"
    assert marker_kind("cpu_checkpoint_failed") == "kubelet did not start"
    assert marker_kind("kubelet_exit") == "kubelet start/stop"
    assert marker_kind("topology_hints") == "topology manager"
