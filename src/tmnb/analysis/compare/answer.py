"""The report's answer: the headline, the run's alert, the verdict block and the next command."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from tmnb.analysis.compare.containers import VERDICTS
from tmnb.report.commands import command
from tmnb.report.verdict import Verdict
from tmnb.snapshot import Snapshot


def headline(before: Snapshot, after: Snapshot, diff: pd.DataFrame, table: pd.DataFrame) -> str:
    """Markdown: what was compared and what changed, in two sentences."""
    counts = table["verdict"].value_counts()
    parts = [f"{counts[v]} {v}" for v in VERDICTS if counts.get(v)]
    changed_nodes = diff.loc[diff["change"] != "source only", "node"].nunique()
    return (
        f"**Before** {before.captured_at} ({len(before.nodes)} nodes, {len(before.pods)} pods) → "
        f"**after** {after.captured_at} ({len(after.nodes)} nodes, {len(after.pods)} pods). "
        f"Settings changed on {changed_nodes} node(s); {len(table)} containers compared: "
        f"{', '.join(parts) or 'none'}."
    )


def alert(table: pd.DataFrame, more: list[str]) -> dict[str, Any] | None:
    """The run's alert: rejected pods, lost alignment, and ``more`` (regressions, unreadable metrics)."""
    counts = table["verdict"].value_counts()
    lines = [f"{counts[v]} container(s) {v}" for v in ("now rejected", "lost alignment") if counts.get(v)]
    lines += more
    return {"why": "; ".join(lines), "items": lines} if lines else None


#: verdicts that alert (the change hurt), and those a person should look at without alarm
_BAD, _LOOK = ("now rejected", "lost alignment"), ("gone",)


def evidence_folder(paths: Iterable[str]) -> str:
    """The folder that holds every run this comparison read (the before and after snapshots, the
    journal and this run's own folder): what 06-postmortem takes as ``evidence``."""
    folders = [Path(p).resolve().parent for p in paths if p and p != "sample" and Path(p).is_file()]
    return str(Path(os.path.commonpath(folders)) if folders else Path(".").resolve())


def _change_id(journal: str) -> str | None:
    if not journal or not Path(journal).is_file():
        return None
    for line in Path(journal).read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("change_id"):
            return str(record["change_id"])
    return None


def _grouped(worse: pd.DataFrame) -> list[str]:
    """One line per verdict, container and node, with how many replicas share it (a rejected
    replica and its replacements are one story, not eight lines)."""
    node = worse["node_after"].fillna(worse["node_before"])
    why = worse["why_after"].where(worse["why_after"].notna() & (worse["why_after"] != ""), "")
    frame = worse.assign(_node=node, _why=why)
    lines = []
    for (verdict, namespace, owner, container, where), rows in frame.groupby(
        ["verdict", "namespace", "owner", "container", "_node"], sort=False
    ):
        times = f" ×{len(rows)}" if len(rows) > 1 else ""
        reason = rows["_why"].iloc[0]
        lines.append(
            f"**{verdict}**{times}: {namespace}/{owner} `{container}` on {where}" + (f": {reason}" if reason else "")
        )
    return lines


def verdict_block(
    table: pd.DataFrame,
    diff: pd.DataFrame,
    *,
    evidence: str,
    journal: str = "",
    metrics: tuple[list[str], list[str], list[str]] | None = None,
    about: Sequence[str] = (),
    elsewhere: Sequence[str] = (),
) -> Verdict:
    """The answer of 05-compare: what to know about the metrics first (``about``: that the series are
    synthetic, for one), verdict counts, the containers that got worse, the metric
    regressions (``metrics`` = regressions, possible regressions, reasons none were compared;
    ``None`` while they are still being read), those of workloads on nodes the change did not
    touch (``elsewhere``: apart, never the change's fault), and the next command."""
    counts = table["verdict"].value_counts()
    worse = table[table["verdict"].isin(_BAD + _LOOK)]
    regressed, possible, unread = metrics if metrics is not None else ([], [], [])
    bad = int(sum(counts.get(v, 0) for v in _BAD))
    changed = diff.loc[diff["change"] != "source only", "node"].nunique()
    tally = ", ".join(f"**{counts[v]}** {v}" for v in VERDICTS if counts.get(v)) or "none"
    if bad or regressed:
        tone: Literal["ok", "warn", "stop"] = "stop"
        said = [f"{bad} container(s) worse off"] * bool(bad) + [f"{len(regressed)} metric regression(s)"] * bool(
            regressed
        )
        headline = f"The change hurt: {' and '.join(said)}. Find out why before the next gate."
    elif possible or len(worse) or unread or metrics is None:
        tone = "warn"
        headline = "No container lost its alignment or admission, but check the points below."
    else:
        tone = "ok"
        headline = "The change did what it should: no container worse off, no metric regression."
    containers = [f"{len(table)} containers compared, settings changed on {changed} node(s): {tally}."]
    groups = _grouped(worse)
    containers += groups[:8]
    if len(groups) > 8:
        containers.append(f"... and {len(groups) - 8} more in the table *What changed, container by container*.")
    if metrics is None:
        shown = ["Application metrics are still being compared (section *Application metrics*)."]
    elif regressed or possible:
        shown = [f"**regression**: {line}" for line in regressed] + [
            f"**possible regression** (no alert; watch it or compare longer windows): {line}" for line in possible
        ]
    else:
        shown = unread or ["No metric regression or possible regression."]
    shown += [f"**on nodes the change did not touch** (not the change's doing; no alert): {line}" for line in elsewhere]
    change = _change_id(journal)
    if tone == "stop":
        steps = ["Explain each rejection and what would admit the pod, from the evidence alone (no cluster needed):"]
        if change:
            steps.insert(0, f"Hold the rollout of `{change}`: approve no further gate.")
        next_step = command("run", "06-postmortem", params={"evidence": Path(evidence)})
    elif change and Path(journal).name == "journal.jsonl" and (Path(journal).parent / "plan.json").is_file():
        # a change's state folder: ``tmnb rollout status`` reads its journal.jsonl and plan.json
        steps = [f"See where the rollout of `{change}` stands, then approve its next gate in 04-rollout:"]
        next_step = command("rollout", "status", change_id=change, state_dir=Path(journal).parent)
    else:
        steps = ["Keep this report with the change's evidence; the postmortem reads it all:"]
        next_step = command("run", "06-postmortem", params={"evidence": Path(evidence)})
    sections = [
        ("Read this first", [a for a in about if a]),
        ("Containers", containers),
        ("Application metrics", shown),
        ("What to do next", steps),
    ]
    return Verdict(tone, headline, sections, [next_step])
