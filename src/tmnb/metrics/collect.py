"""Gather the samples of both windows from Prometheus or a file, turning failures into report lines.

A comparison report must still be written when Prometheus is down, a query is malformed or
returns nothing: each problem becomes a row (query, window, severity, message) that the
notebook shows, and ``available`` says whether any metrics could be read at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from tmnb.errors import CollectError, InputError
from tmnb.metrics import files
from tmnb.metrics.frame import assign_windows, concat, empty
from tmnb.metrics.prometheus import Prometheus
from tmnb.metrics.queries import Signal, describe, range_seconds
from tmnb.metrics.windows import Windows

PROBLEM_COLUMNS = ["query", "window", "severity", "message"]


@dataclass(frozen=True)
class Collected:
    """Samples of both windows, the signals they belong to, and what went wrong reading them."""

    frame: pd.DataFrame
    signals: list[Signal]
    problems: pd.DataFrame
    source: str
    available: bool

    def with_data(self) -> list[Signal]:
        """Signals that have at least one sample, in order: the ones worth plotting."""
        present = set(self.frame["query"])
        return [s for s in self.signals if s.name in present]

    def failures(self) -> list[str]:
        """Why metrics could not be compared at all (for the run's alert); empty when they could."""
        if self.available or not self.source:
            return []
        return [f"metrics unavailable: {m}" for m in self.problems.loc[self.problems["severity"] == "error", "message"]]

    def markdown(self, windows: Windows | None) -> str:
        """Where the metrics came from, the windows, and every problem as a bullet."""
        head = f"Metrics from {self.source}" if self.source else "No application metrics"
        head += f"; {windows.describe()}." if windows and self.source else "."
        bullets = [
            f"- **{r.severity}** {f'`{r.query}` ' if r.query else ''}{f'({r.window}) ' if r.window else ''}{r.message}"
            for r in self.problems.itertuples()
        ]
        return "\n".join([head, "", *bullets])


def _problems(rows: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=PROBLEM_COLUMNS)


def _from_prometheus(url: str, signals: Sequence[Signal], windows: Windows, step: float, timeout: float) -> Collected:
    frames, problems = [], []
    try:
        server = Prometheus(url, timeout=timeout)
    except InputError as exc:
        return Collected(empty(), list(signals), _problems([("", "", "error", str(exc))]), "Prometheus", False)
    with server as prom:
        source = f"Prometheus at {prom.shown}"
        for signal in signals:
            for window, (start, end) in (("before", windows.before), ("after", windows.after)):
                try:
                    got, warnings = prom.query_range(signal.name, signal.promql, start, end, step)
                except CollectError as exc:
                    problems.append(("", "", "error", f"{exc}; no metrics were compared"))
                    return Collected(empty(), list(signals), _problems(problems), source, available=False)
                except InputError as exc:
                    problems.append((signal.name, "", "error", exc.message))
                    break
                problems += [(signal.name, window, "warning", w) for w in warnings]
                if got.empty:
                    problems.append((signal.name, window, "warning", "no data: the query returned no series"))
                frames.append(got.assign(window=window, rate_window=range_seconds(signal.promql)))
        return Collected(concat(frames), list(signals), _problems(problems), source, available=True)


def _from_file(path: str, windows: Windows) -> Collected:
    try:
        loaded = files.load(path)
    except InputError as exc:
        return Collected(empty(), [], _problems([("", "", "error", str(exc))]), f"file {path}", available=False)
    frame = assign_windows(loaded, windows)
    names = list(dict.fromkeys(loaded["query"]))
    problems = [
        (name, window, "warning", "no samples in this window")
        for name in names
        for window in ("before", "after")
        if not ((frame["query"] == name) & (frame["window"] == window)).any()
    ]
    return Collected(frame, [describe(n) for n in names], _problems(problems), f"file {path}", available=True)


def collect(
    *,
    prometheus_url: str = "",
    metrics_file: str = "",
    signals: Sequence[Signal] = (),
    windows: Windows | None,
    step: float = 60.0,
    timeout: float = 30.0,
) -> Collected:
    """Samples for both windows in the long format.

    An unreadable source is reported in ``problems``, never raised; only contradictory
    parameters (both sources, or a source without windows) raise :class:`InputError`.
    """
    if prometheus_url and metrics_file:
        raise InputError("set prometheus_url or metrics_file, not both", where="metrics_file")
    if not (prometheus_url or metrics_file):
        note = ("", "", "info", "no metrics source: set prometheus_url or metrics_file to compare application metrics")
        return Collected(empty(), [], _problems([note]), "", available=False)
    if windows is None:
        raise InputError("metrics need the before and after windows", where="change")
    if prometheus_url:
        return _from_prometheus(prometheus_url, signals, windows, step, timeout)
    return _from_file(metrics_file, windows)
