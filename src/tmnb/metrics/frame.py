"""The long format every metrics source produces: one row per sample (docs/metrics.md).

Columns: ``query`` (signal name), ``series`` (its labels as ``{a="x",b="y"}``, sorted),
``timestamp`` (UTC), ``value`` (float) and one string column per label, "" where a series
lacks it. A source that knows its series are ``rate()``s over a window adds ``rate_window``
(seconds; 0 = raw samples), so the statistics thin exactly what is dependent by construction.
:func:`assign_windows` adds ``window`` ("before", "after" or "change"), so Prometheus results
and CSV/Parquet files go through the same statistics and plots.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from tmnb.metrics.windows import Windows

BASE = ["query", "series", "timestamp", "value"]
#: Optional columns that are not labels, in the order they follow BASE.
EXTRA = ["window", "rate_window"]
RESERVED = {*BASE, *EXTRA}


def series_key(labels: Mapping[str, str]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if v != "") + "}"


def group_label(pairs: Iterable[tuple[str, str]]) -> str:
    """How a workload group is named in tables and legends: ``namespace=app container=web``."""
    return " ".join(f"{k}={v}" for k, v in pairs if v) or "(all series)"


def group_labels(frame: pd.DataFrame, group_by: Sequence[str]) -> pd.Series:
    """The group label of every sample (labels a frame lacks are ignored)."""
    labels = [g for g in group_by if g in frame.columns]
    columns = [frame[k].astype(str).to_numpy() for k in labels]
    names = [group_label(zip(labels, row, strict=True)) for row in zip(*columns, strict=True)] if labels else None
    return pd.Series(names if names is not None else "(all series)", index=frame.index, dtype=object)


def label_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c not in RESERVED]


def empty() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "query": pd.Series(dtype=str),
            "series": pd.Series(dtype=str),
            "timestamp": pd.Series(dtype="datetime64[ns, UTC]"),
            "value": pd.Series(dtype=float),
        }
    )


def from_series(
    query: str, series: Iterable[tuple[Mapping[str, str], Sequence[float], Sequence[float]]]
) -> pd.DataFrame:
    """Build the frame from (labels, unix seconds, values) triples, e.g. a Prometheus matrix."""
    parts = []
    for labels, seconds, values in series:
        part = pd.DataFrame(
            {
                "query": query,
                "series": series_key(labels),
                "timestamp": pd.to_datetime(np.asarray(seconds, dtype=float), unit="s", utc=True),
                "value": np.asarray(values, dtype=float),
            }
        )
        for name, value in labels.items():
            if name not in RESERVED:
                part[name] = value
        parts.append(part)
    return concat(parts)


def concat(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Stack frames with different label sets; a missing label becomes ""."""
    frames = [f for f in frames if not f.empty]
    if not frames:
        return empty()
    out = pd.concat(frames, ignore_index=True)
    labels = label_columns(out)
    out[labels] = out[labels].fillna("").astype(str)
    out["timestamp"] = out["timestamp"].astype("datetime64[ns, UTC]")
    if "rate_window" in out:
        out["rate_window"] = out["rate_window"].astype(float).fillna(0.0)
    return out[[*BASE, *_extra(out), *sorted(labels)]]


def _extra(frame: pd.DataFrame) -> list[str]:
    return [c for c in EXTRA if c in frame.columns]


def assign_windows(frame: pd.DataFrame, windows: Windows) -> pd.DataFrame:
    """Label each sample before, after or change (the rollout in between); drop samples outside."""
    ts = frame["timestamp"]
    (b0, b1), (a0, a1) = windows.before, windows.after
    inside = [(ts >= b0) & (ts <= b1), (ts > b1) & (ts < a0), (ts >= a0) & (ts <= a1)]
    out = frame.assign(window=np.select(inside, ["before", "change", "after"], default=""))
    out = out[out["window"] != ""].reset_index(drop=True)
    return out[[*BASE, *_extra(out), *label_columns(out)]]
