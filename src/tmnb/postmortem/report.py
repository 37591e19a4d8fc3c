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


def why_rejected(found: Evidence) -> None:
    import pandas as pd

    from tmnb.postmortem.kubelet_log import start_refusals

    refused = start_refusals(found)
    if not refused.empty:
        _markdown("**Nodes whose kubelet did not start** (its last start in the journal excerpt ended so):")
        _table(refused, "")

    explained = rejections.diagnoses(found)
    if not explained:
        _markdown("_no rejected pod to explain_")
        return
    for seen_in, d, alike in explained:
        verdict = "the model reproduces the rejection" if d.reproduced else "the model does not reproduce it"
        more = (
            f"  \n**Refused the same way**: {len(alike)} more of its controller: {', '.join(alike[:5])}"
            if alike
            else ""
        )
        _markdown(
            f"### {d.pod} on {d.node}\n\n**{d.reason}**: {d.message}  \n**Why** ({verdict}, replayed on the "
            f"snapshot of `{seen_in}`): {d.why}.  \n**Merged hint**: `{d.merged or 'none'}`{more}"
        )
        _table(pd.DataFrame(d.hints, columns=["container", "provider", "resource", "hints"]), "no provider gave hints")
        if d.remedies:
            lines = [f"{i}. {r.change} (checked on {r.checked_on}){': ' + r.note if r.note else ''}"
                     for i, r in enumerate(d.remedies, start=1)]  # fmt: skip
            _markdown("**What would admit it**, each checked with the model, best first:\n\n" + "\n".join(lines))
        elif d.reproduced:
            _markdown("_no single change the model tried admits it: resize the pod or add capacity_")


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
