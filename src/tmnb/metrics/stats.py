"""Before/after statistics per signal and workload: did it get better, worse, or nothing we can tell?

Per (query, group) the samples of each window are compared by their median: the relative change
gets a percentile bootstrap 95 % interval (scipy), and Mann-Whitney U gives a p-value. A change
is a *regression* only when it is worse than ``threshold_pct`` **and** the interval excludes no
change, so noise does not page anyone. Samples of one series closer together than ``spacing``
are thinned first: consecutive points of a ``rate()`` over a longer window share most of their
data, and keeping them all would make the interval look more certain than it is.

Verdicts: ``regression``, ``improvement``, ``within threshold`` (real but smaller than the
threshold), ``no significant change``, ``insufficient data`` (fewer than ``min_samples`` a side).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from tmnb.errors import InputError
from tmnb.metrics.frame import group_label
from tmnb.metrics.queries import Signal, describe

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
    "verdict",
    "notes",
]


def thin(frame: pd.DataFrame, spacing: float) -> pd.DataFrame:
    """Keep at most one sample per series and ``spacing`` seconds, the first of each slot."""
    if spacing <= 0 or frame.empty:
        return frame
    slot = ((frame["timestamp"] - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(seconds=spacing)).rename("_slot")
    keep = ~pd.concat([frame[["query", "series"]], slot], axis=1).duplicated()
    return frame[keep.to_numpy()]


def _median_change(before: np.ndarray, after: np.ndarray, axis: int = -1) -> np.ndarray:
    return (np.median(after, axis=axis) / np.median(before, axis=axis) - 1) * 100


def _summary(before: np.ndarray, after: np.ndarray) -> dict[str, float]:
    out: dict[str, float] = {"n_before": len(before), "n_after": len(after)}
    for q, name in ((50, "median"), (95, "p95"), (99, "p99")):
        out[f"{name}_before"] = float(np.percentile(before, q)) if len(before) else np.nan
        out[f"{name}_after"] = float(np.percentile(after, q)) if len(after) else np.nan
    return out


def _test(before: np.ndarray, after: np.ndarray, resamples: int, seed: int) -> dict[str, float]:
    """Relative median change, its bootstrap interval (NaN when the before median is 0), p-value."""
    constant = np.all(before == before[0]) and np.all(after == after[0])
    p = 1.0 if constant and before[0] == after[0] else float(sps.mannwhitneyu(before, after).pvalue)
    if np.median(before) == 0:
        return {"change_pct": np.nan, "ci_low_pct": np.nan, "ci_high_pct": np.nan, "p_value": p}
    change = float(_median_change(before, after))
    if constant:
        return {"change_pct": change, "ci_low_pct": change, "ci_high_pct": change, "p_value": p}
    with np.errstate(divide="ignore", invalid="ignore"):
        ci = sps.bootstrap(
            (before, after),
            _median_change,
            vectorized=True,
            n_resamples=resamples,
            method="percentile",
            batch=200,
            rng=np.random.default_rng(seed),
        ).confidence_interval
    return {"change_pct": change, "ci_low_pct": float(ci.low), "ci_high_pct": float(ci.high), "p_value": p}


def _verdict(row: dict[str, float], before: np.ndarray, after: np.ndarray, worse_if_up: bool, threshold: float) -> str:
    if np.isnan(row["change_pct"]):  # no relative change from a zero median: the rank test decides
        shift = np.median(after) - np.median(before) or np.mean(after) - np.mean(before)
        significant, big, up = row["p_value"] < 0.05 and shift != 0, True, shift > 0
    else:
        significant = row["ci_low_pct"] > 0 or row["ci_high_pct"] < 0
        big, up = abs(row["change_pct"]) >= threshold, row["change_pct"] > 0
    if not significant:
        return "no significant change"
    if not big:
        return "within threshold"
    return "regression" if up == worse_if_up else "improvement"


def compare(
    frame: pd.DataFrame,
    *,
    group_by: Sequence[str],
    threshold_pct: float = 5.0,
    spacing: float = 0.0,
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
    data = thin(frame[frame["window"].isin(["before", "after"]) & np.isfinite(frame["value"])], spacing)
    by = [label for label in group_by if label in data.columns]
    rows = []
    for (query, *key), part in data.groupby(["query", *by], sort=True):
        signal = describe(str(query), signals)
        before = part.loc[part["window"] == "before", "value"].to_numpy(dtype=float)
        after = part.loc[part["window"] == "after", "value"].to_numpy(dtype=float)
        row: dict[str, object] = {"query": query, "group": group_label(zip(by, key, strict=True)), "kind": signal.kind}
        row.update(zip(by, key, strict=True))
        row.update(unit=signal.unit, **_summary(before, after), notes="")
        if min(len(before), len(after)) < min_samples:
            row.update(change_pct=np.nan, ci_low_pct=np.nan, ci_high_pct=np.nan, p_value=np.nan)
            row["verdict"] = "insufficient data"
        else:
            tested = _test(before, after, resamples, seed)
            row.update(tested, verdict=_verdict(tested, before, after, not signal.higher_is_better, threshold_pct))
            row["notes"] = "before median is 0: verdict from the rank test" if np.isnan(tested["change_pct"]) else ""
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


def regressions(table: pd.DataFrame) -> list[str]:
    """One line per regression, for the headline and the run's alert."""
    lines = []
    for r in table[table["verdict"] == "regression"].itertuples():
        if np.isnan(r.change_pct):
            lines.append(
                f"{r.query} {r.group}: median {r.median_before:g} → {r.median_after:g} (rank test p={r.p_value:.2g})"
            )
        else:
            lines.append(
                f"{r.query} {r.group}: {r.change_pct:+.1f}% (95% CI {r.ci_low_pct:+.1f}…{r.ci_high_pct:+.1f}%)"
            )
    return lines


def as_records(table: pd.DataFrame, digits: int = 4) -> list[dict[str, object]]:
    """The table as JSON-safe records (rounded, NaN as None) for glue and manifests."""
    rounded = table.round(digits).astype(object)
    return rounded.where(rounded.notna(), None).to_dict("records")
