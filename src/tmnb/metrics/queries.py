"""PromQL for the signals SREs check after a Topology Manager change, plus their own queries.

Templates keep ``pod`` in the result where it helps (per-replica CPU) but the statistics group
by stable labels (``group_by``), because recreated pods get new names. The ``kind`` of a signal
(cpu, throttling, latency, other) is what confounders refer to.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from string import Template
from typing import Any

from tmnb.errors import InputError
from tmnb.metrics.durations import parse_duration

DEFAULT_HISTOGRAM = "http_request_duration_seconds"
STEPS_PER_RATE_WINDOW = 5
_LABEL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_METRIC = re.compile(r"^[A-Za-z_:][A-Za-z0-9_:]*$")
#: A range selector or subquery: ``[5m]``, ``[1h30m]``, ``[1h:1m]``.
_RANGE = re.compile(r"\[\s*((?:\d+(?:ms|s|m|h|d|w|y))+)\s*(?::[^\]]*)?\]")


@dataclass(frozen=True)
class Signal:
    """One named query: its PromQL (empty for file data), what it measures, its unit and good direction."""

    name: str
    kind: str
    unit: str
    promql: str = ""
    higher_is_better: bool = False


_CPU = 'container_cpu_usage_seconds_total{container!="", container!="POD"$sel}'
_THROTTLED = 'container_cpu_cfs_throttled_periods_total{container!=""$sel}'
_PERIODS = 'container_cpu_cfs_periods_total{container!=""$sel}'
_LATENCY = "histogram_quantile($q, sum by (le, $by) (rate(${histogram}_bucket{$selector}[$rate])))"

#: name → (kind, unit, PromQL template) over ``$by``, ``$sel``/``$selector``, ``$rate`` and ``$histogram``.
TEMPLATES: dict[str, tuple[str, str, str]] = {
    "cpu_usage": ("cpu", "CPU cores", f"sum by ($by, pod) (rate({_CPU}[$rate]))"),
    # cAdvisor exports no CFS series for a container without a quota: it is never throttled, so 0.
    "cpu_throttling": (
        "throttling",
        "fraction of CFS periods throttled",
        f"(sum by ($by, pod) (rate({_THROTTLED}[$rate])) / sum by ($by, pod) (rate({_PERIODS}[$rate])))"
        f" or (0 * sum by ($by, pod) (rate({_CPU}[$rate])))",
    ),
    **{f"latency_p{q}": ("latency", "seconds", _LATENCY.replace("$q", f"0.{q}")) for q in ("50", "90", "95", "99")},
}
_KIND_PATTERNS = (
    ("throttling", re.compile(r"cfs_throttled|throttl", re.I)),
    ("latency", re.compile(r"histogram_quantile|latency|duration", re.I)),
    ("cpu", re.compile(r"cpu_usage|cpu_seconds|cpu", re.I)),
)


def kind_of(text: str) -> str:
    """Classify a query (its PromQL, or just its name) so confounders can refer to it."""
    return next((kind for kind, pattern in _KIND_PATTERNS if pattern.search(text)), "other")


def _checked_labels(group_by: Sequence[str]) -> list[str]:
    for label in group_by:
        if not isinstance(label, str) or not _LABEL.match(label):
            raise InputError(f"invalid label name {label!r}: expected [A-Za-z_][A-Za-z0-9_]*", where="group_by")
    if not group_by:
        raise InputError("name at least one label that identifies a workload, e.g. namespace", where="group_by")
    return list(group_by)


def _template(entry: str, values: dict[str, str]) -> Signal:
    """``cpu_usage`` or ``latency_p99:my_histogram_seconds`` (the histogram only for latency templates)."""
    name, _, histogram = (part.strip() for part in entry.partition(":"))
    if name not in TEMPLATES:
        known = ", ".join(TEMPLATES)
        raise InputError(f"unknown signal {name!r}: expected one of {known}, or PromQL in queries", where="signals")
    kind, unit, template = TEMPLATES[name]
    if histogram and (kind != "latency" or not _METRIC.match(histogram)):
        raise InputError(f"{entry!r}: only latency templates take a histogram metric name after ':'", where="signals")
    return Signal(name, kind, unit, Template(template).substitute(values, histogram=histogram or DEFAULT_HISTOGRAM))


def _own(name: str, spec: str | Mapping[str, Any]) -> Signal:
    """A user query: its PromQL, or a mapping with ``promql`` and optionally ``higher_is_better``."""
    promql = spec.get("promql") if isinstance(spec, Mapping) else spec
    better = spec.get("higher_is_better", False) if isinstance(spec, Mapping) else False
    if name in TEMPLATES or not isinstance(promql, str) or not promql.strip() or not isinstance(better, bool):
        raise InputError(
            f"query {name!r}: expected its own name and PromQL, or {{promql: ..., higher_is_better: true}}",
            where="queries",
        )
    return Signal(name, kind_of(promql), "value", promql, higher_is_better=better)


def build(
    names: Sequence[str],
    extra: Mapping[str, str | Mapping[str, Any]] | None = None,
    *,
    selector: str = "",
    group_by: Sequence[str] = ("namespace", "container"),
    rate: str = "5m",
) -> list[Signal]:
    """Signals for the template ``names`` and the user's ``extra`` queries, in that order."""
    values = {"by": ", ".join(_checked_labels(group_by)), "sel": f", {selector}" if selector.strip() else ""}
    values.update(selector=selector, rate=rate)
    return [*(_template(n, values) for n in names), *(_own(n, q) for n, q in (extra or {}).items())]


def range_seconds(promql: str) -> float:
    """The longest range selector in ``promql`` (0 without one): how far apart two of its points
    must be to share no raw sample. ``rate(x[5m])`` read every minute repeats 4/5 of its data."""
    ranges = [parse_duration(m.group(1), where="promql") for m in _RANGE.finditer(promql)]
    return max(ranges, default=0.0)


def step_for(rate_window: float) -> float:
    """The query step for a rate window: fine enough to draw, coarse enough to stay cheap."""
    return max(rate_window / STEPS_PER_RATE_WINDOW, 1.0)


def describe(name: str, signals: Sequence[Signal] = ()) -> Signal:
    """The signal called ``name``: given, a template's description, or guessed from the name."""
    for signal in signals:
        if signal.name == name:
            return signal
    if name in TEMPLATES:
        kind, unit, _ = TEMPLATES[name]
        return Signal(name, kind, unit)
    return Signal(name, kind_of(name), "value")
