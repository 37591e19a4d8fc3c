"""05-compare's report stage: its inputs beyond the snapshots (when the change ran and the
application metrics, gathered in one call) and the results it hands over at the end.

``auto`` (the default of both) means the embedded sample's own journal and metrics when the
notebook compares the sample pair (``sample`` with ``sample-after``), written into the run folder
so that the evidence holds what was compared; with any other snapshots it means none.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tmnb.analysis import compare as cmp
from tmnb.metrics import stats
from tmnb.metrics.collect import Collected, collect
from tmnb.metrics.queries import build, step_for
from tmnb.metrics.windows import Windows, is_time, parse_duration, resolve
from tmnb.report.places import anchored
from tmnb.sources.embedded import JOURNAL_FILE, METRICS_FILE
from tmnb.sources.resolve import SAMPLES

AUTO = "auto"


@dataclass(frozen=True)
class Inputs:
    """When the change ran (a journal or a time, '' for unknown), the metrics file ('' for none), and
    what ``auto`` chose, for the report."""

    change: str
    metrics_file: str
    note: str

    @property
    def journal(self) -> str:
        """The rollout journal, when the change is placed by one (it also names the change)."""
        return "" if not self.change or is_time(self.change) else self.change


def inputs(
    before: str,
    after: str,
    *,
    change: str,
    metrics_file: str,
    prometheus_url: str,
    out_dir: str,
) -> Inputs:
    """Resolve ``auto``: the sample pair's files, written into ``out_dir``, or nothing."""
    if (before, after) != SAMPLES:
        return Inputs("" if change == AUTO else change, "" if metrics_file == AUTO else metrics_file, "")
    folder = anchored(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    notes = []
    if change == AUTO:
        change = str(shutil.copyfile(JOURNAL_FILE, folder / JOURNAL_FILE.name))
        notes.append("the sample rollout's journal")
    if metrics_file == AUTO:
        if prometheus_url:
            metrics_file = ""
        else:
            metrics_file = str(shutil.copyfile(METRICS_FILE, folder / METRICS_FILE.name))
            notes.append("the sample's application metrics (synthetic, with a known regression)")
    note = f"Comparing the embedded sample pair with {' and '.join(notes)}, written to the run folder." if notes else ""
    return Inputs(change, metrics_file, note)


def gather(
    *,
    prometheus_url: str,
    metrics_file: str,
    change: str,
    window: str,
    signals: Sequence[str],
    queries: Mapping[str, Any],
    selector: str,
    group_by: Sequence[str],
    rate_window: str,
) -> tuple[Windows | None, Collected]:
    """The windows around ``change`` (None without a metrics source) and the samples of both,
    problems included."""
    rate = parse_duration(rate_window, where="rate_window")
    span = None
    if prometheus_url or metrics_file:
        span = resolve(change, length=window, margin=rate_window)
    wanted = build(signals, queries, selector=selector, group_by=group_by, rate=rate_window)
    got = collect(prometheus_url=prometheus_url, metrics_file=metrics_file, signals=wanted, windows=span,
                  step=step_for(rate))  # fmt: skip
    return span, got


#: The statistics' group labels the container table can match a workload by.
_MATCHABLE = ("namespace", "owner", "container")


def changed_nodes(diff: pd.DataFrame) -> set[str]:
    """The nodes whose kubelet settings the change changed (a value, not only its source)."""
    return set(diff.loc[diff["change"] != "source only", "node"]) if len(diff) else set()


def by_reach(
    compared: pd.DataFrame, table: pd.DataFrame, diff: pd.DataFrame, group_by: Sequence[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The statistics split in two: workloads with a container on a node the change touched (before or
    after it), and the others, whose shifts the change cannot explain: listed apart, never alerting.
    A group the container table cannot place (grouped by a label it lacks, or no container found)
    stays with the first, so an alert is never dropped for want of a match."""
    if compared.empty or any(label not in _MATCHABLE for label in group_by):
        return compared, compared.iloc[0:0]
    changed = changed_nodes(diff)

    def touched(row: pd.Series) -> bool:
        match = pd.Series(True, index=table.index)
        for label in group_by:
            if label in row and row[label] == row[label]:  # a label the row lacks (NaN) matches any
                match &= table[label] == row[label]
        nodes = set(table.loc[match, "node_before"].dropna()) | set(table.loc[match, "node_after"].dropna())
        return not nodes or bool(nodes & changed)

    near = compared.apply(touched, axis=1).astype(bool)
    return compared[near], compared[~near]


def results(
    table: pd.DataFrame,
    diff: pd.DataFrame,
    confounded: pd.DataFrame,
    got: Collected,
    compared: pd.DataFrame,
    figures: Sequence[Path],
    elsewhere: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """What the run glues, in order: verdict counts, setting changes, confounders, the metrics'
    source, problems and statistics, the regressions (those of workloads the change did not touch
    apart, never alerting), the figures, and the run's alert."""
    regressions = stats.regressions(compared)
    apart = elsewhere if elsewhere is not None else compared.iloc[0:0]
    return {
        "verdicts": cmp.summary(table).set_index("verdict")["containers"].to_dict(),
        "settings_changes": cmp.settings_changes(diff).to_dict("records"),
        "confounders": list(confounded["confounder"]),
        "metrics_source": got.source,
        "metrics_problems": got.problems.to_dict("records"),
        "statistics": stats.as_records(compared),
        "regressions": regressions,
        "possible_regressions": stats.possible_regressions(compared),
        "untouched_statistics": stats.as_records(apart),
        "untouched_regressions": stats.regressions(apart),
        "figures": [Path(f).name for f in figures],
        "alert": cmp.alert(table, regressions + got.failures()),
    }
