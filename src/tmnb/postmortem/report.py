"""The cells of notebooks/06-postmortem.ipynb, one call each; the first answers the question
(what went wrong, what to do about it, the next command) before the evidence is laid out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from tmnb import plots
from tmnb.plots.timeline import swimlane
from tmnb.postmortem import kubelet_log, rejections, timeline
from tmnb.postmortem.evidence import Evidence, open_evidence
from tmnb.report import display
from tmnb.report.commands import command
from tmnb.report.places import anchored
from tmnb.report.tables import show, some
from tmnb.report.verdict import Tone, Verdict


def _target(found: Evidence) -> dict[str, Any] | None:
    """The change's target settings, from the rollout plan kept in the evidence."""
    for plan in found.named("plan.json"):
        try:
            target = json.loads(plan.read_text()).get("target")
        except (ValueError, AttributeError):
            continue
        if isinstance(target, dict) and target:
            return target
    return None


def verdict(found: Evidence) -> Verdict:
    """What went wrong (pods refused at admission, kubelets that did not start, rollout steps that
    failed), the remedy the model checked for each, and the command that checks the fix."""
    rejected = with_when(found, rejections.rejected_pods(found))
    recent = rejected[rejected["when"] != BEFORE]
    refused = kubelet_log.start_refusals(found)
    failed = [r for r in found.journal if r.get("event") == "failed"]
    rolled = sorted(
        {str(r.get("node")) for r in found.journal if r.get("step") == "rollback" and r.get("event") == "done"}
    )
    regressed = compare_regressions(found)
    wrong = []
    if len(recent):
        since = " since the change began" if (recent["when"] == SINCE).all() else ""
        restarted = int((recent["rejected at"] != "admission").sum())
        running = f", {restarted} of them running pods rejected at a kubelet restart" if restarted else ""
        wrong.append(f"{len(recent)} pod(s) refused at admission{since}{running}")
    if regressed["regressions"]:
        wrong.append(f"{len(regressed['regressions'])} metric regression(s) in 05-compare")
    if len(refused):
        wrong.append(f"{len(refused)} kubelet(s) did not start")
    if failed:
        wrong.append(f"{len(failed)} rollout step(s) failed" + (f", {', '.join(rolled)} rolled back" if rolled else ""))
    older = rejected[rejected["when"] == BEFORE]
    earlier = f" {len(older)} pod(s) refused before the change began are listed apart." if len(older) else ""
    headline = (
        ("What went wrong: " + "; ".join(wrong) + "." + earlier)
        if wrong
        else "Nothing went wrong since the change began: no pod refused, every kubelet started, no rollout step "
        "failed." + earlier
    )
    pods = []
    for _, d, alike in [e for e in rejections.diagnoses(found) if e[1].pod in set(recent["pod"])][:5]:
        fix = (
            f" **Would admit it:** {d.remedies[0].change} (checked on {d.remedies[0].checked_on})."
            if d.remedies
            else ""
        )
        more = f" ({len(alike)} more of its controller)" if alike else ""
        pods.append(f"**{d.pod}** on {d.node}{more}: {d.why}.{fix}")
    kubelets = [f"**{r.node}** ({r.failure}): fix {r.fix}." for r in refused.itertuples()]
    steps = [
        f"**{r.get('node') or 'cluster'}** {r.get('step')}: {r.get('error') or r.get('result') or 'failed'}"
        for r in failed[:5]
    ]
    target = _target(found)
    after = found.snapshots[-1][0]
    if wrong and target:
        todo = ["Apply a remedy above, collect the cluster again, then check the change against the latest state:"]
        next_step = command("run", "03-readiness", params={"source": after, "target": target})
    elif wrong:
        todo = ["Apply a remedy above, then check the planned change against the latest snapshot (set `target`):"]
        next_step = command("run", "03-readiness", params={"source": after})
    else:
        todo = ["Keep this evidence as one verified bundle:"]
        next_step = command("evidence", "pack", found.root, out=Path(f"{found.root.resolve()}-evidence.tar.gz"))
    tone: Tone = "stop" if wrong else "warn" if len(older) else "ok"
    sections = [
        ("Rejected pods, and why", pods),
        ("Refused before the change began (not this change's doing)", before_lines(older)),
        ("Metric regressions (05-compare)", regression_lines(regressed)),
        ("Kubelets that did not start", kubelets),
        ("Failed rollout steps", steps),
        ("What to do next", todo),
    ]
    return Verdict(tone, headline, sections, [next_step])


def headline(evidence: str) -> Evidence:
    """The verdict block first, then what the evidence holds."""
    found = open_evidence(evidence)
    display.show(verdict(found))
    window = timeline.change_window(found)
    span = f" The change ran {window[0]:%Y-%m-%d %H:%M:%S} – {window[1]:%H:%M:%S} UTC." if window else ""
    runs = ", ".join(f"{r['run']} ({r['status']})" for r in found.runs) or "none"
    display.markdown(
        f"Evidence `{found.root}`: {len(found.snapshots)} snapshot(s) from {found.before.captured_at} to "
        f"{found.after.captured_at}, {len(found.journal)} journal record(s), runs: {runs}.{span}"
    )
    return found


def what_happened(found: Evidence, out_dir: str) -> None:
    frame = timeline.build(found)
    plots.show(swimlane(frame, timeline.change_window(found)), out_dir, "timeline")
    show(
        timeline.folded(frame).rename(columns={"time": "time (UTC)"}),
        "timeline",
        out_dir,
        empty="Nothing was recorded: the evidence holds no events, journal records or kubelet log records.",
    )
    _kubelet_account(found, out_dir)


def _kubelet_account(found: Evidence, out_dir: str) -> None:
    """Whose kubelet journal the timeline read, and what it could not (unknown lines, cut excerpts)."""
    table = kubelet_log.summary(found)
    if table.empty:
        display.markdown("_No kubelet journal excerpt in these snapshots (collected without the nodes' files)._")
        return
    named = int(table["named"].sum())
    display.markdown(
        f"Kubelet journal excerpts of {len(table)} node(s), {named} named record(s) in the latest of each."
    )
    partial = table[(table["unreadable"] > 0) | table["truncated"]]
    if not partial.empty:
        display.markdown(
            "**Excerpts the timeline reads only in part** (lines in an unknown format, or cut at the cap):"
        )
        show(partial, "kubelet-excerpts-partial", out_dir, empty="")


#: when a rejected pod was created, against the journal's change window
BEFORE, SINCE, UNKNOWN = "before the change", "since the change began", "no journal to tell"


def with_when(found: Evidence, rejected: pd.DataFrame) -> pd.DataFrame:
    """The rejected pods with ``when`` each was created, against the change window: months-old
    failures on a node the change never touched are not the change's, and read apart."""
    window = timeline.change_window(found)
    created = [timeline.utc_time(c) for c in rejected["created"]]
    when = [UNKNOWN if window is None else BEFORE if t is not None and t < window[0] else SINCE for t in created]
    order = {SINCE: 0, UNKNOWN: 1, BEFORE: 2}
    out = rejected.assign(when=when)
    return out.sort_values("when", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)


def before_lines(older: pd.DataFrame) -> list[str]:
    """Per node, the pods refused before the change began: how many, why, since when."""
    return [
        f"**{node}**: {len(part)} pod(s), {', '.join(sorted(set(part['reason'])))}, created from "
        f"{min(str(c) for c in part['created'])[:10]}: {some(list(part['pod']), 3)}"
        for node, part in older.groupby("node", sort=True)
    ]


def compare_regressions(found: Evidence) -> dict[str, list[str]]:
    """The metric regressions a 05-compare run in the evidence found (its manifest's results): those
    of the workloads the change touched, and those elsewhere, which never alert."""
    out: dict[str, list[str]] = {"regressions": [], "untouched_regressions": []}
    for manifest in found.named("manifest.json"):
        try:
            doc = json.loads(manifest.read_text())
        except (ValueError, OSError):
            continue
        if not isinstance(doc, dict) or not str(doc.get("notebook", "")).endswith("05-compare.ipynb"):
            continue
        results = doc.get("results")
        if not isinstance(results, dict):
            continue
        for key in out:
            out[key] += [str(line) for line in results.get(key) or [] if line]
    return out


def regression_lines(regressed: dict[str, list[str]]) -> list[str]:
    return [f"**regression**: {line}" for line in regressed["regressions"]] + [
        f"on nodes the change did not touch (no alert): {line}" for line in regressed["untouched_regressions"]
    ]


def failed_pods(found: Evidence, out_dir: str) -> None:
    table = with_when(found, rejections.rejected_pods(found))
    show(table, "rejected-pods", out_dir, empty="No pod was rejected at admission in any snapshot of this evidence.")
    flap = rejections.flapping(table)
    if not flap.empty:
        display.markdown("**Controllers whose replacements keep being rejected** (the flapping-pods symptom):")
        show(flap, "flapping", out_dir, empty="")


def why_rejected(found: Evidence, out_dir: str) -> None:
    import pandas as pd

    from tmnb.postmortem.kubelet_log import start_refusals

    refused = start_refusals(found)
    if not refused.empty:
        display.markdown("**Nodes whose kubelet did not start** (its last start in the journal excerpt ended so):")
        show(refused, "kubelet-refusals", out_dir, empty="")

    explained = rejections.diagnoses(found)
    if not explained:
        display.markdown("_no rejected pod to explain_")
        return
    for number, (seen_in, d, alike) in enumerate(explained, start=1):
        verdict = "the model reproduces the rejection" if d.reproduced else "the model does not reproduce it"
        more = (
            f"  \n**Refused the same way**: {len(alike)} more of its controller: {', '.join(alike[:5])}"
            if alike
            else ""
        )
        display.markdown(
            f"### {d.pod} on {d.node}\n\n**{d.reason}**: {d.message}  \n**Why** ({verdict}, replayed on the "
            f"snapshot of `{seen_in}`): {d.why}.  \n**Merged hint**: `{d.merged or 'none'}`{more}"
        )
        hints = pd.DataFrame(d.hints, columns=["container", "provider", "resource", "hints"])
        show(hints, f"hints-{number}", out_dir, empty="No hint provider gave hints for this pod.")
        if d.remedies:
            lines = [f"{i}. {r.change} (checked on {r.checked_on}){': ' + r.note if r.note else ''}"
                     for i, r in enumerate(d.remedies, start=1)]  # fmt: skip
            display.markdown("**What would admit it**, each checked with the model, best first:\n\n" + "\n".join(lines))
        elif d.reproduced:
            display.markdown("_no single change the model tried admits it: resize the pod or add capacity_")


def configuration(found: Evidence, out_dir: str) -> None:
    from tmnb.analysis import compare as cmp

    diff = cmp.settings_diff(found.before, found.after)
    empty = "No kubelet setting differs between the first and the last snapshot."
    show(cmp.settings_changes(diff), "settings-changes", out_dir, empty=empty)


def alignment(found: Evidence, out_dir: str) -> None:
    from tmnb.analysis import compare as cmp

    table = cmp.containers(found.before, found.after)
    show(cmp.summary(table), "alignment-verdicts", out_dir, empty="No container in the first or the last snapshot.")
    empty = "Every container is unchanged between the first and the last snapshot."
    show(cmp.attention(table), "alignment-changes", out_dir, empty=empty)


def journal(found: Evidence, out_dir: str) -> None:
    empty = "No rollout journal in this evidence, so no rollout step to show."
    show(timeline.journal_steps(found), "rollout-steps", out_dir, empty=empty)


def glue_results(found: Evidence, out_dir: str) -> None:
    from tmnb.report.glue import glue

    glue("evidence", str(found.root))
    glue("rejected", len(rejections.rejected_pods(found)))
    glue("journal_records", len(found.journal))
    glue("kubelet_records", len(kubelet_log.kubelet_rows(found)))
    glue("timeline", str(anchored(out_dir) / "timeline.png"))
