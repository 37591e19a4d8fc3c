"""The cells of notebooks/06-postmortem.ipynb, one call each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tmnb.postmortem import kubelet_log, rejections, timeline
from tmnb.postmortem.evidence import Evidence, open_evidence


def _show(obj: Any) -> None:
    from IPython.display import display

    display(obj)


def _markdown(text: str) -> None:
    from IPython.display import Markdown

    _show(Markdown(text))


def _table(frame: Any, empty: str) -> None:
    import pandas as pd

    if frame.empty:
        _markdown(f"_{empty}_")
        return
    with pd.option_context("display.max_colwidth", None, "display.max_rows", None):
        _show(frame.style.hide(axis="index"))


def headline(evidence: str) -> Evidence:
    found = open_evidence(evidence)
    window = timeline.change_window(found)
    span = f" The change ran {window[0]:%Y-%m-%d %H:%M:%S} – {window[1]:%H:%M:%S} UTC." if window else ""
    runs = ", ".join(f"{r['run']} ({r['status']})" for r in found.runs) or "none"
    _markdown(
        f"Evidence `{found.root}`: {len(found.snapshots)} snapshot(s) from {found.before.captured_at} to "
        f"{found.after.captured_at}, {len(found.journal)} journal record(s), runs: {runs}.{span}"
    )
    return found


def what_happened(found: Evidence, out_dir: str) -> None:
    from tmnb import plots
    from tmnb.plots.timeline import swimlane

    frame = timeline.build(found)
    plots.show(swimlane(frame, timeline.change_window(found)), out_dir, "timeline")
    _table(frame, "nothing recorded")
    _kubelet_account(found)


def _kubelet_account(found: Evidence) -> None:
    """Whose kubelet journal the timeline read, and what it could not (unknown lines, cut excerpts)."""
    table = kubelet_log.summary(found)
    if table.empty:
        _markdown("_No kubelet journal excerpt in these snapshots (collected without the nodes' files)._")
        return
    named = int(table["named"].sum())
    _markdown(f"Kubelet journal excerpts of {len(table)} node(s), {named} named record(s) in the latest of each.")
    partial = table[(table["unreadable"] > 0) | table["truncated"]]
    if not partial.empty:
        _markdown("**Excerpts the timeline reads only in part** (lines in an unknown format, or cut at the cap):")
        _table(partial, "")


def failed_pods(found: Evidence) -> None:
    table = rejections.rejected_pods(found)
    _table(table, "no pod was rejected at admission in any snapshot of this evidence")
    flap = rejections.flapping(table)
    if not flap.empty:
        _markdown("**Controllers whose replacements keep being rejected** (the flapping-pods symptom):")
        _table(flap, "")


def configuration(found: Evidence) -> None:
    from tmnb.analysis import compare as cmp

    diff = cmp.settings_diff(found.before, found.after)
    _table(cmp.settings_changes(diff), "no kubelet setting differs between the first and the last snapshot")


def alignment(found: Evidence) -> None:
    from tmnb.analysis import compare as cmp

    table = cmp.containers(found.before, found.after)
    _table(cmp.summary(table), "no container to compare")
    _table(cmp.attention(table), "no container needs attention")


def journal(found: Evidence) -> None:
    _table(timeline.journal_steps(found), "no rollout journal in this evidence")


def glue_results(found: Evidence, out_dir: str) -> None:
    from tmnb.glue import glue

    glue("evidence", str(found.root))
    glue("rejected", len(rejections.rejected_pods(found)))
    glue("journal_records", len(found.journal))
    glue("kubelet_records", len(kubelet_log.kubelet_rows(found)))
    glue("timeline", str(Path(out_dir) / "timeline.png"))
