"""Metrics from CSV or Parquet files in the long format of docs/metrics.md.

For teams whose metrics live elsewhere (Datadog exports, a warehouse, a saved Prometheus
result): one row per sample with ``timestamp`` and ``value``, an optional ``query`` naming the
signal (default: the file name), an optional ``rate_window`` saying the series are ``rate()``s
over that window (a Prometheus duration; empty: raw samples), and every other column a series label.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from tmnb.errors import InputError
from tmnb.metrics.durations import parse_duration
from tmnb.metrics.frame import RESERVED, concat, series_key

REQUIRED = ("timestamp", "value")
SUFFIXES = (".csv", ".csv.gz", ".parquet")
_CSV_LINE = re.compile(r"line (\d+)")


def _read(path: Path) -> pd.DataFrame:
    name = path.name.lower()
    try:
        if name.endswith((".csv", ".csv.gz")):
            return pd.read_csv(path, dtype=str, keep_default_na=False)
        if name.endswith(".parquet"):
            return pd.read_parquet(path)
    except FileNotFoundError:
        raise InputError("metrics file not found", source=str(path)) from None
    except pd.errors.EmptyDataError:
        raise InputError("the file is empty: expected a header with timestamp and value", source=str(path)) from None
    except pd.errors.ParserError as exc:
        line = _CSV_LINE.search(str(exc))
        raise InputError(
            f"malformed CSV: {str(exc).strip()}", source=str(path), line=int(line.group(1)) if line else None
        ) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the file: {exc}", source=str(path)) from None
    raise InputError(f"unsupported file type: expected one of {', '.join(SUFFIXES)}", source=str(path))


def _row_line(bad: pd.Series, csv: bool) -> tuple[int, int | None]:
    """The first bad row's index and, for CSV, its line number (the header is line 1)."""
    index = int(np.flatnonzero(bad.to_numpy())[0])
    return index, index + 2 if csv else None


def _timestamps(raw: pd.DataFrame, source: str, csv: bool) -> pd.Series:
    column = raw["timestamp"]
    if pd.api.types.is_datetime64_any_dtype(column):
        stamps = column if column.dt.tz is not None else column.dt.tz_localize("UTC")
        return stamps.dt.tz_convert("UTC")
    text = column.astype(str).str.strip()
    numeric = pd.to_numeric(text, errors="coerce")
    if numeric.notna().all():
        stamps = pd.to_datetime(numeric, unit="s", utc=True)
    else:
        stamps = pd.to_datetime(text, utc=True, errors="coerce", format="ISO8601")
    if stamps.isna().any():
        index, line = _row_line(stamps.isna(), csv)
        raise InputError(
            f"invalid timestamp {column.iloc[index]!r}: expected RFC 3339 (2026-12-01T10:00:00Z) or Unix seconds",
            source=source,
            where="timestamp",
            line=line,
        )
    return stamps


def _values(raw: pd.DataFrame, source: str, csv: bool) -> pd.Series:
    column = raw["value"]
    if pd.api.types.is_float_dtype(column) or pd.api.types.is_integer_dtype(column):
        return column.astype(float)
    text = column.astype(str).str.strip()
    values = pd.to_numeric(text.replace({"+Inf": "inf"}), errors="coerce")
    bad = values.isna() & (text.str.lower() != "nan")
    if bad.any():
        index, line = _row_line(bad, csv)
        raise InputError(
            f"invalid value {column.iloc[index]!r}: expected a number (NaN, +Inf allowed)",
            source=source,
            where="value",
            line=line,
        )
    return values.astype(float)


def _rate_windows(raw: pd.DataFrame, source: str, csv: bool) -> pd.Series:
    """Seconds per row from the ``rate_window`` column: a duration (numbers: seconds), empty = raw (0)."""
    column = raw["rate_window"]
    if pd.api.types.is_numeric_dtype(column):
        seconds = column.astype(float).fillna(0.0)
        bad = seconds < 0
    else:
        text = column.fillna("").astype(str).str.strip()
        known: dict[str, float] = {"": 0.0, "0": 0.0}
        for value in text.unique():
            if value not in known:
                try:
                    known[value] = parse_duration(value, where="rate_window")
                except InputError:
                    known[value] = -1.0
        seconds = text.map(known).astype(float)
        bad = seconds < 0
    if bad.any():
        index, line = _row_line(bad, csv)
        raise InputError(
            f"invalid rate window {column.iloc[index]!r}: expected a duration such as 5m, or empty for raw samples",
            source=source,
            where="rate_window",
            line=line,
        )
    return seconds


def load(path: str | Path) -> pd.DataFrame:
    """Read one file into the long format; names the file, column and line of the first problem."""
    path = Path(path)
    source, csv = str(path), not path.name.lower().endswith(".parquet")
    raw = _read(path)
    raw.columns = [str(c) for c in raw.columns]
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise InputError(
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}: expected timestamp, value, "
            f"optional query and label columns; found {', '.join(map(str, raw.columns)) or 'none'}",
            source=source,
        )
    if raw.empty:
        raise InputError("the file has a header but no samples", source=source)
    labels = [c for c in raw.columns if c not in RESERVED]
    frame = pd.DataFrame(
        {
            "query": raw["query"].astype(str) if "query" in raw else path.name.split(".")[0],
            "timestamp": _timestamps(raw, source, csv),
            "value": _values(raw, source, csv),
        }
    )
    if "rate_window" in raw:
        frame["rate_window"] = _rate_windows(raw, source, csv).to_numpy()
    for label in labels:
        frame[label] = raw[label].fillna("").astype(str)
    frame["series"] = [series_key(dict(zip(labels, row, strict=True))) for row in frame[labels].itertuples(index=False)]
    return concat([frame])
