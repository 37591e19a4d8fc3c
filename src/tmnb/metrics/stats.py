"""Before/after statistics per signal and workload: worse, better, maybe, or nothing we can tell?

Per (query, group) the samples of each window are pooled and compared by their median. The
relative change gets a 95 % percentile interval from a bootstrap that keeps what is correlated
together (:mod:`tmnb.metrics.resample`: pods drawn as clusters, time blocks as long as the data's
serial correlation), so every raw sample counts without making the interval look surer than it
is. Only samples that are dependent by construction are thinned: a ``rate()`` series read at a
step shorter than its rate window keeps one sample per series and rate window.

Verdicts for a signal where up is worse (mirrored for improvements and ``higher_is_better``):

- ``regression``: the whole interval lies beyond ``threshold_pct``; only these raise the alert;
- ``possible regression``: the estimate passes the threshold but the interval reaches below it;
- ``below the threshold``: the interval excludes no change but the estimate stays within the
  threshold (a real change too small to act on: the report says its size and the threshold);
- ``no significant change``: otherwise; ``insufficient data``: fewer than ``min_samples`` a side.

Every row carries the threshold it was judged against (``threshold_pct``), and the readable table
prints it beside the verdict.

Acting only when the whole interval is beyond the threshold keeps false alarms for changes
smaller than the threshold rare, while a change well past it is still called;
``bench/stats_calibration.py`` measures both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from tmnb.errors import InputError
from tmnb.metrics import resample
from tmnb.metrics.frame import group_label
from tmnb.metrics.queries import Signal, describe
from tmnb.report.tables import some

if TYPE_CHECKING:
    from tmnb.metrics.collect import Collected

COLUMNS = [
    "query",
    "group",
    "kind",
    "unit",
    "n_before",
    "n_after",
    "median_before",
    "median_after",
    "p95_before",
    "p95_after",
    "p99_before",
    "p99_after",
    "change_pct",
    "ci_low_pct",
    "ci_high_pct",
    "p_value",
    "block_s",
    "threshold_pct",
    "verdict",
    "notes",
]
#: A real change whose estimate stays within the threshold.
BELOW_THRESHOLD = "below the threshold"


def thin(frame: pd.DataFrame) -> pd.DataFrame:
    """Keep one sample per ``rate()`` series and rate window (the first of each slot); raw samples all.

    A frame says which series are rates with a ``rate_window`` column (seconds; 0 or absent: raw).
    """
    if "rate_window" not in frame or frame.empty:
        return frame
    spacing = frame["rate_window"].to_numpy(dtype=float)
    rated = spacing > 0
    if not rated.any():
        return frame
    seconds = (frame["timestamp"] - pd.Timestamp(0, tz="UTC")).dt.total_seconds().to_numpy()
    slot = np.where(rated, np.floor(seconds / np.where(rated, spacing, 1.0)), np.arange(len(frame)) + 0.5)
    keep = ~pd.DataFrame({"q": frame["query"].to_numpy(), "s": frame["series"].to_numpy(), "slot": slot}).duplicated()
    return frame[keep.to_numpy()]


def _summary(before: np.ndarray, after: np.ndarray) -> dict[str, float]:
    out: dict[str, float] = {"n_before": len(before), "n_after": len(after)}
    for q, name in ((50, "median"), (95, "p95"), (99, "p99")):
        out[f"{name}_before"] = float(np.percentile(before, q)) if len(before) else np.nan
        out[f"{name}_after"] = float(np.percentile(after, q)) if len(after) else np.nan
    return out


def _seconds(part: pd.DataFrame) -> np.ndarray:
    seconds: np.ndarray = (part["timestamp"] - pd.Timestamp(0, tz="UTC")).dt.total_seconds().to_numpy()
    return seconds


def block_seconds(part: pd.DataFrame) -> float:
    """The time block of one group's bootstrap: the data's dependence, at least one sample spacing
    and at least the longest rate window a series declares."""
    series, gaps = [], []
    for _, one in part.sort_values("timestamp").groupby(["window", "series"], sort=False):
        series.append(one["value"].to_numpy(dtype=float))
        gaps.append(np.diff(_seconds(one)))
    spacing = float(np.median(np.concatenate(gaps))) if any(len(g) for g in gaps) else 1.0
    declared = float(part["rate_window"].max()) if "rate_window" in part else 0.0
    return max(resample.block_length(series) * spacing, spacing, declared)


def _window(part: pd.DataFrame, block: float) -> resample.Window:
    return resample.Window.of(part["value"].to_numpy(dtype=float), part["series"].to_numpy(), _seconds(part), block)


def _p_value(draws: np.ndarray) -> float:
    """Two-sided bootstrap p-value of "no change" (0) from the draws of a change."""
    draws = draws[~np.isnan(draws)]
    below, above = np.sum(draws <= 0), np.sum(draws >= 0)
    return float(min(1.0, 2 * (min(below, above) + 1) / (len(draws) + 1)))


def _interval(draws: np.ndarray) -> tuple[float, float]:
    """The 95 % percentile interval; a draw with a before median of 0 is an infinite rise, kept as such."""
    valid = draws[~np.isnan(draws)]
    if not len(valid):
        return np.nan, np.nan
    big = np.finfo(float).max / 4  # interpolating between infinities gives NaN, between huge values does not
    low, high = np.percentile(np.clip(valid, -big, big), [2.5, 97.5])
    return (float(low) if abs(low) < big else float(np.sign(low) * np.inf)), (
        float(high) if abs(high) < big else float(np.sign(high) * np.inf)
    )


@dataclass(frozen=True)
class Tested:
    """What the bootstrap says about one group: ``change`` in % (NaN when the before median is 0, and
    then ``mean_low``/``mean_high`` bound the change of the mean)."""

    change: float
    low: float
    high: float
    p_value: float
    block: float
    mean_low: float = np.nan
    mean_high: float = np.nan

    def columns(self) -> dict[str, float]:
        return {
            "change_pct": self.change,
            "ci_low_pct": self.low,
            "ci_high_pct": self.high,
            "p_value": self.p_value,
            "block_s": self.block,
        }


def _test(before: pd.DataFrame, after: pd.DataFrame, block: float, resamples: int, seed: int) -> Tested:
    """Relative median change with its interval and p-value; the change of the mean when the before
    median is 0 (no relative change exists)."""
    rng = np.random.default_rng(seed)
    b, a = _window(before, block), _window(after, block)
    if float(np.median(b.values)) == 0:
        draws = resample.replicate(a, resamples, rng, "mean") - resample.replicate(b, resamples, rng, "mean")
        low, high = _interval(draws)
        return Tested(np.nan, np.nan, np.nan, _p_value(draws), block, low, high)
    draws_b = resample.replicate(b, resamples, rng)
    draws_a = resample.replicate(a, resamples, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        draws = (draws_a / draws_b - 1) * 100
    change = (float(np.median(a.values) / np.median(b.values)) - 1) * 100
    return Tested(change, *_interval(draws), _p_value(draws), block)


def verdict(change: float, low: float, high: float, *, worse_if_up: bool, threshold: float) -> str:
    """The verdict of a relative change (in %) and its interval against ``threshold`` (in %)."""
    bad, good = ("regression", "improvement") if worse_if_up else ("improvement", "regression")
    if low > threshold:
        return bad
    if high < -threshold:
        return good
    if change > threshold:
        return f"possible {bad}"
    if change < -threshold:
        return f"possible {good}"
    if low > 0 or high < 0:
        return BELOW_THRESHOLD
    return "no significant change"


def _zero_verdict(low: float, high: float, worse_if_up: bool) -> str:
    """Before median 0: no relative change or threshold exists; the mean's interval decides."""
    bad, good = ("regression", "improvement") if worse_if_up else ("improvement", "regression")
    return bad if low > 0 else good if high < 0 else "no significant change"


def compare(
    frame: pd.DataFrame,
    *,
    group_by: Sequence[str],
    threshold_pct: float = 5.0,
    signals: Sequence[Signal] = (),
    min_samples: int = 8,
    resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per (query, group): medians, tails, relative change with its interval, verdict."""
    clash = set(group_by) & set(COLUMNS)
    if clash:
        raise InputError(
            f"group_by cannot use {', '.join(sorted(clash))}: the statistics table has such columns", where="group_by"
        )
    if "window" not in frame:  # nothing was read, so nothing was placed in a window
        return pd.DataFrame(columns=[*COLUMNS, *group_by])
    data = thin(frame[frame["window"].isin(["before", "after"]) & np.isfinite(frame["value"])])
    by = [label for label in group_by if label in data.columns]
    rows = []
    for (query, *key), part in data.groupby(["query", *by], sort=True):
        signal = describe(str(query), signals)
        before, after = part[part["window"] == "before"], part[part["window"] == "after"]
        vb, va = before["value"].to_numpy(dtype=float), after["value"].to_numpy(dtype=float)
        row: dict[str, object] = {"query": query, "group": group_label(zip(by, key, strict=True)), "kind": signal.kind}
        row.update(zip(by, key, strict=True))
        row.update(unit=signal.unit, **_summary(vb, va), threshold_pct=threshold_pct, notes="")
        if min(len(vb), len(va)) < min_samples:
            row.update(change_pct=np.nan, ci_low_pct=np.nan, ci_high_pct=np.nan, p_value=np.nan, block_s=np.nan)
            row["verdict"] = "insufficient data"
            rows.append(row)
            continue
        tested = _test(before, after, block_seconds(part), resamples, seed)
        worse_if_up = not signal.higher_is_better
        if np.isnan(tested.change):
            row["verdict"] = _zero_verdict(tested.mean_low, tested.mean_high, worse_if_up)
            row["notes"] = "before median is 0: verdict from the change of the mean"
        else:
            row["verdict"] = verdict(
                tested.change, tested.low, tested.high, worse_if_up=worse_if_up, threshold=threshold_pct
            )
        row.update(tested.columns())
        rows.append(row)
    return pd.DataFrame(rows, columns=[*COLUMNS, *by])


def _in_scope(row: pd.Series, scope: list[dict[str, str]]) -> bool:
    """Whether a statistics row's group matches one of the scope's label sets (labels it lacks match)."""
    return any(all(row.get(k, v) in (v, "") for k, v in labels.items()) for labels in scope)


def annotate(table: pd.DataFrame, confounders: pd.DataFrame) -> pd.DataFrame:
    """Name each confounder in the notes of the rows it affects: its signal kinds, within its scope."""
    out = table.copy()
    if out.empty:
        return out
    for conf in confounders.itertuples():
        kinds = out["kind"].isin(conf.affects) | ("all" in conf.affects)
        hit = kinds & out.apply(_in_scope, axis=1, scope=conf.scope).astype(bool)
        out.loc[hit, "notes"] = [f"{n}; {conf.confounder}" if n else conf.confounder for n in out.loc[hit, "notes"]]
    return out


def findings(table: pd.DataFrame, which: str = "regression") -> list[str]:
    """One line per row with verdict ``which``: the change, its interval, or the medians when the
    before median is 0."""
    lines = []
    for r in table[table["verdict"] == which].itertuples():
        if np.isnan(r.change_pct):
            lines.append(
                f"{r.query} {r.group}: median {r.median_before:g} → {r.median_after:g} (bootstrap p={r.p_value:.2g})"
            )
        else:
            interval = f"95% CI {r.ci_low_pct:+.1f}…{r.ci_high_pct:+.1f}%"
            lines.append(
                f"{r.query} {r.group}: {r.change_pct:+.1f}% ({interval}; threshold {_threshold(r.threshold_pct)})"
            )
    return lines


def regressions(table: pd.DataFrame) -> list[str]:
    """One line per regression, for the headline and the run's alert."""
    return findings(table, "regression")


def possible_regressions(table: pd.DataFrame) -> list[str]:
    """One line per possible regression: shown at the top of the report, never alerting."""
    return findings(table, "possible regression")


def as_records(table: pd.DataFrame, digits: int = 4) -> list[dict[str, object]]:
    """The table as JSON-safe records (rounded; NaN and an open interval's infinity as None)."""
    rounded = table.round(digits)
    numeric = rounded.select_dtypes("number")
    missing = rounded.isna()
    missing[numeric.columns] = ~np.isfinite(numeric.astype(float))
    values = rounded.astype(object)
    records: list[dict[str, object]] = values.where(~missing, None).to_dict("records")
    return records


def for_verdict(table: pd.DataFrame, got: Collected) -> tuple[list[str], list[str], list[str]]:
    """What the report's verdict block says about metrics: regressions, possible regressions, and
    why nothing was compared when nothing was."""
    unread = (
        []
        if got.with_data()
        else got.failures()
        or ["No application metrics were compared: set `prometheus_url` or `metrics_file` to compare them."]
    )
    return regressions(table), possible_regressions(table), unread


def _figure(value: float) -> str:
    """Three significant digits, fixed-point (never ``1e-05``); empty when absent."""
    if not np.isfinite(value):
        return ""
    return str(np.format_float_positional(value, precision=3, unique=False, fractional=False, trim="-"))


def _pair(row: object, name: str) -> str:
    before, after = _figure(getattr(row, f"{name}_before")), _figure(getattr(row, f"{name}_after"))
    return f"{before} → {after}" if before or after else ""


#: Worst first: what to act on, the improvements, what the data could not tell, then the quiet rows.
VERDICT_ORDER = (
    "regression",
    "possible regression",
    "improvement",
    "possible improvement",
    BELOW_THRESHOLD,
    "insufficient data",
    "no significant change",
)
#: The readable table's columns, whatever its rows (its CSV keeps one schema).
READABLE_COLUMNS = [
    "verdict", "threshold", "signal", "group", "unit", "samples", "median", "p95", "p99",
    "Δ median", "95 % CI", "p", "block", "notes",
]  # fmt: skip
_SUMMARIES = [f"{name}_{side}" for name in ("median", "p95", "p99") for side in ("before", "after")]


def _flat_at_zero(table: pd.DataFrame) -> pd.Series:
    """Rows with nothing to read: no significant change, median, p95 and p99 all 0 in both windows
    (a throttling signal of containers without a CFS quota, for one)."""
    zero = table[_SUMMARIES].fillna(1).eq(0).all(axis=1)
    return zero & (table["verdict"] == "no significant change")


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """The statistics as a person reads them, worst verdict first: values in the row's unit, the
    change with its interval; a signal that is 0 throughout in several groups is one row."""
    if table.empty:
        return pd.DataFrame()
    flat = _flat_at_zero(table)
    rows = []
    for r in table[~flat].itertuples():
        rows.append(
            {
                "verdict": r.verdict,
                "threshold": _threshold(r.threshold_pct),
                "signal": r.query,
                "group": r.group,
                "unit": r.unit,
                "samples": f"{r.n_before} → {r.n_after}",
                "median": _pair(r, "median"),
                "p95": _pair(r, "p95"),
                "p99": _pair(r, "p99"),
                "Δ median": "" if np.isnan(r.change_pct) else f"{r.change_pct:+.1f} %",
                "95 % CI": "" if np.isnan(r.ci_low_pct) else f"{r.ci_low_pct:+.1f} … {r.ci_high_pct:+.1f} %",
                "p": _figure(r.p_value),
                "block": "" if np.isnan(r.block_s) else f"{_figure(r.block_s)} s",
                "notes": r.notes,
                "_flat": False,
            }
        )
    for query, part in table[flat].groupby("query", sort=True):
        groups = part["group"].tolist()
        rows.append(
            {
                "verdict": "no significant change",
                "threshold": _threshold(part["threshold_pct"].iloc[0]),
                "signal": query,
                "group": groups[0] if len(groups) == 1 else f"{len(groups)} groups",
                "unit": part["unit"].iloc[0],
                "samples": f"{part['n_before'].sum()} → {part['n_after'].sum()}",
                "median": "0 → 0",
                "p95": "0 → 0",
                "p99": "0 → 0",
                "notes": "median, p95 and p99 are 0 in both windows" + _in_each(groups),
                "_flat": True,
            }
        )
    out = pd.DataFrame(rows).reindex(columns=[*READABLE_COLUMNS, "_flat"])
    out["_rank"] = out["verdict"].map({v: i for i, v in enumerate(VERDICT_ORDER)}).fillna(len(VERDICT_ORDER))
    out = out.sort_values(["_rank", "_flat", "signal", "group"], kind="stable").drop(columns=["_rank", "_flat"])
    return out.astype(object).fillna("").reset_index(drop=True)


def _threshold(pct: float) -> str:
    """The threshold a verdict was judged against, as the table prints it."""
    return f"±{_figure(pct)} %"


def _in_each(groups: list[str], shown: int = 8) -> str:
    if len(groups) == 1:
        return ""
    return f" in each of: {some(groups, shown, '; ')}"
