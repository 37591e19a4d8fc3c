"""Application metrics for a rehearsed change: the series a fleet's workloads would have exported.

The embedded sample pair and the demo have no real traffic, so their comparison gets synthetic
series with a known change: cAdvisor's CPU counters (usage, CFS periods and throttled periods)
and an application latency histogram per pod, 30 s scrapes, written as OpenMetrics for
``promtool tsdb create-blocks-from openmetrics`` and as the long format of docs/metrics.md
(what 05-compare reads from a file: the same draws, evaluated as its PromQL templates evaluate
them). Workloads are the owners with exclusive CPUs on both sides; each gets a role in ``ROLES``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd

from tmnb.snapshot import Pod, Snapshot

#: Latency bucket bounds (seconds) of the synthetic application histogram.
BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0)
HISTOGRAM = "http_request_duration_seconds"
#: Spread (log scale) of the synthetic request latencies around their median.
LATENCY_SIGMA = 0.4
SCRAPE_S = 30
REQUESTS_PER_S = 20
RATE_WINDOW_S = 300
LONG_STEP_S = 60


@dataclass(frozen=True)
class Workload:
    """One owner's container with its pods on each side and how its signals move across the change."""

    namespace: str
    container: str
    node: str
    pods_before: tuple[str, ...]
    pods_after: tuple[str, ...]
    cpu: tuple[float, float]  # cores used per pod, before → after
    throttled: float  # fraction of CFS periods throttled while the container has a CFS quota
    latency: tuple[float, float] | None  # median request latency in seconds
    quota: tuple[bool, bool] = (True, False)  # CFS quota before, after (1.33+ drops it for exclusive CPUs)
    pod_nodes: tuple[tuple[str, str], ...] = ()  # (pod, node) where a pod runs elsewhere than ``node``


def histogram_p99(median: float) -> float:
    """The p99 that ``histogram_quantile`` reports for lognormal latencies over ``BUCKETS``: linear
    between the bounds of the bucket that holds it, as Prometheus interpolates."""
    bounds = np.array(BUCKETS)
    cdf = np.array([NormalDist().cdf(z) for z in np.log(bounds / median) / LATENCY_SIGMA])
    i = int(np.searchsorted(cdf, 0.99))
    low, f_low = (bounds[i - 1], cdf[i - 1]) if i else (0.0, 0.0)
    return float(low + (bounds[i] - low) * (0.99 - f_low) / (cdf[i] - f_low))


def shifted(median: float, pct: float) -> tuple[float, float]:
    """Medians before and after such that the reported p99 moves by exactly ``pct`` percent: the
    reported p99 grows with the median, so halving the bracket [median/2, 2 median] 60 times pins
    the after median to far below a nanosecond (the standard library's normal distribution and
    this bisection keep scipy's 2 s import out of every 05-compare run on the sample)."""
    target = histogram_p99(median) * (1 + pct / 100)
    low, high = median * 0.5, median * 2
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if histogram_p99(middle) < target else (low, middle)
    return median, (low + high) / 2


#: (cores per pod before/after, throttled fraction, median latency before/after or None)
Role = tuple[tuple[float, float], float, tuple[float, float] | None]
#: How the workloads change, in the order they are handed out: 30 % slower (the regression),
#: faster, steady without a latency histogram, p99 +2.5 % (half the 5 % threshold: no alarm) and
#: p99 +15 % (threshold + 10: a regression). Throttling ends where the kubelet drops the CFS quota.
ROLES: tuple[Role, ...] = (
    ((1.0, 1.0), 0.10, (0.050, 0.065)),
    ((1.6, 1.5), 0.25, (0.040, 0.030)),
    ((3.0, 3.0), 0.05, None),
    ((1.2, 1.2), 0.08, shifted(0.050, 2.5)),
    ((1.4, 1.4), 0.12, shifted(0.050, 15.0)),
)


def _exclusive_running(snap: Snapshot) -> dict[tuple[str, str, str], list[Pod]]:
    """Running pods per (namespace, controller, container) holding exclusive CPUs."""
    exclusive = {(a.pod_uid, a.container) for n in snap.nodes for a in n.allocations if a.exclusive}
    found: dict[tuple[str, str, str], list[Pod]] = {}
    for p in sorted(snap.pods, key=lambda p: p.name):
        owner = p.owner.controller_name or p.owner.name if p.owner else p.name
        for c in p.containers:
            if p.phase == "Running" and (p.uid, c.name) in exclusive:
                found.setdefault((p.namespace, owner, c.name), []).append(p)
    return found


def workloads(
    before: Snapshot,
    after: Snapshot,
    *,
    roles: Sequence[Role] = ROLES,
    first: Sequence[str] = (),
    quota: tuple[bool, bool] = (True, False),
) -> tuple[Workload, ...]:
    """Workloads with exclusive CPUs on both sides, given ``roles`` in order; owners named in
    ``first`` come first (so the regression lands where the story puts it), then by name.
    ``quota`` says whether their containers have a CFS quota before and after."""
    old, new = _exclusive_running(before), _exclusive_running(after)
    rank = {owner: i for i, owner in enumerate(first)}
    keys = sorted(old.keys() & new.keys(), key=lambda k: (rank.get(k[1], len(rank)), k))
    return tuple(
        Workload(
            ns,
            container,
            old[(ns, owner, container)][0].node or "",
            tuple(p.name for p in old[(ns, owner, container)]),
            tuple(p.name for p in new[(ns, owner, container)]),
            *role,
            quota,
            tuple((p.name, p.node or "") for p in (*old[(ns, owner, container)], *new[(ns, owner, container)])),
        )
        for (ns, owner, container), role in zip(keys, roles, strict=False)
    )


@dataclass(frozen=True)
class Timeline:
    """When the series start, when the change ran, when they end (UTC, whole minutes)."""

    start: pd.Timestamp
    rollout: tuple[pd.Timestamp, pd.Timestamp]
    end: pd.Timestamp

    @classmethod
    def around(cls, first: pd.Timestamp, last: pd.Timestamp, hours: float = 2.0) -> Timeline:
        """``hours`` and a margin of series on each side of a change that ran from ``first`` to ``last``."""
        span = pd.Timedelta(hours=hours, minutes=20)
        return cls(first.floor("min") - span, (first, last), last.ceil("min") + span)

    @classmethod
    def recent(cls, hours: float = 2.0) -> Timeline:
        """A change placed so that its after window ended 20 minutes ago: both windows are in the past."""
        end = pd.Timestamp.now(tz="UTC").floor("min") - pd.Timedelta(minutes=20)
        done = end - pd.Timedelta(hours=hours, minutes=10)
        return cls(done - pd.Timedelta(hours=hours, minutes=20), (done - pd.Timedelta(minutes=3), done), end)


def _pods(w: Workload, t: np.ndarray, change: float) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """(pod, its scrape times, which of them are after the change); a kept pod name spans both."""
    for p in dict.fromkeys((*w.pods_before, *w.pods_after)):
        both = p in w.pods_before and p in w.pods_after
        lives = np.ones_like(t, bool) if both else (t >= change) == (p in w.pods_after)
        yield p, t[lives], (t[lives] >= change).astype(int)


@dataclass(frozen=True)
class _Series:
    """One pod's cumulative counters at its scrape times."""

    workload: Workload
    pod: str
    times: np.ndarray
    usage: np.ndarray
    cfs_times: np.ndarray  # scrapes while the container has a CFS quota (cAdvisor has no CFS series without)
    periods: np.ndarray
    throttled: np.ndarray
    buckets: np.ndarray | None  # scrapes x (len(BUCKETS) + 1), the last column +Inf
    sums: np.ndarray | None


def _draw(timeline: Timeline, loads: Sequence[Workload], seed: int) -> list[_Series]:
    rng = np.random.default_rng(seed)
    t = np.arange(timeline.start.timestamp(), timeline.end.timestamp() + 1, SCRAPE_S, dtype=float)
    change = timeline.rollout[1].timestamp()
    periods = 10 * SCRAPE_S  # 100 ms CFS periods
    bounds, per_scrape = np.array(BUCKETS), REQUESTS_PER_S * SCRAPE_S
    out = []
    for w in loads:
        for pod, times, after in _pods(w, t, change):
            usage = np.cumsum(np.take(w.cpu, after) * SCRAPE_S * rng.normal(1, 0.05, len(after)))
            quota = np.take(w.quota, after).astype(bool)
            cfs = np.cumsum(rng.binomial(periods, w.throttled, int(quota.sum())))
            buckets = sums = None
            if w.latency:
                medians = np.log(np.take(w.latency, after))[:, None]
                latencies = rng.lognormal(medians, LATENCY_SIGMA, size=(len(times), per_scrape))
                counts = (latencies[:, :, None] <= bounds).sum(axis=1)
                buckets = np.cumsum(np.column_stack([counts, np.full(len(times), per_scrape)]), axis=0)
                sums = np.cumsum(latencies.sum(axis=1))
            out.append(
                _Series(
                    w,
                    pod,
                    times,
                    usage,
                    times[quota],
                    np.cumsum(np.full(int(quota.sum()), periods)),
                    cfs,
                    buckets,
                    sums,
                )
            )
    return out


def _labels(w: Workload, pod: str, **extra: str) -> str:
    node = dict(w.pod_nodes).get(pod, w.node)
    pairs = {"container": w.container, "namespace": w.namespace, "node": node, "pod": pod, **extra}
    return ",".join(f'{k}="{v}"' for k, v in pairs.items())


def _openmetrics_lines(series: Sequence[_Series]) -> Iterator[str]:
    counters = (
        ("container_cpu_usage_seconds", "usage"),
        ("container_cpu_cfs_periods", "periods"),
        ("container_cpu_cfs_throttled_periods", "throttled"),
    )
    for family, field in counters:
        yield f"# TYPE {family} counter"
        for s in series:
            times = s.times if field == "usage" else s.cfs_times
            labels = _labels(s.workload, s.pod)
            for at, v in zip(times, getattr(s, field), strict=True):
                yield f"{family}_total{{{labels}}} {v:.3f} {at:.0f}"
    yield f"# TYPE {HISTOGRAM} histogram"
    bounds = [f"{b:g}" for b in BUCKETS] + ["+Inf"]
    for s in series:
        if s.buckets is None or s.sums is None:
            continue
        labels = _labels(s.workload, s.pod)
        per_bucket = [_labels(s.workload, s.pod, le=le) for le in bounds]
        for i, at in enumerate(s.times):
            for bucket, v in zip(per_bucket, s.buckets[i], strict=True):
                yield f"{HISTOGRAM}_bucket{{{bucket}}} {v} {at:.0f}"
            yield f"{HISTOGRAM}_count{{{labels}}} {s.buckets[i][-1]} {at:.0f}"
            yield f"{HISTOGRAM}_sum{{{labels}}} {s.sums[i]:.3f} {at:.0f}"
    yield "# EOF"


def write_openmetrics(path: Path, timeline: Timeline, loads: Sequence[Workload], *, seed: int = 7) -> Path:
    """cAdvisor-style CPU counters and an application latency histogram, OpenMetrics for ``promtool``."""
    with path.open("w", encoding="utf-8") as out:
        for line in _openmetrics_lines(_draw(timeline, loads, seed)):
            out.write(line + "\n")
    return path


def _rate(times: np.ndarray, values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Increase per second over the rate window ending at each of ``at`` (NaN without two samples)."""
    hi = np.searchsorted(times, at, side="right") - 1
    lo = np.searchsorted(times, at - RATE_WINDOW_S, side="left")
    ok = (hi > lo) & (hi >= 0)
    out = np.full(len(at), np.nan)
    span = times[hi[ok]] - times[lo[ok]]
    out[ok] = (values[hi[ok]] - values[lo[ok]]) / span
    return out


def _p99(times: np.ndarray, buckets: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``histogram_quantile(0.99, rate(..._bucket[5m]))``: linear inside the bucket that holds it."""
    rates = np.column_stack([_rate(times, buckets[:, j], at) for j in range(buckets.shape[1])])
    bounds = np.array(BUCKETS)
    out = np.full(len(at), np.nan)
    for i, row in enumerate(rates):
        if np.isnan(row).any() or row[-1] <= 0:
            continue
        rank = 0.99 * row[-1]
        j = int(np.searchsorted(row, rank))
        if j >= len(bounds):  # in the +Inf bucket: Prometheus reports the highest finite bound
            out[i] = bounds[-1]
            continue
        low, below = (bounds[j - 1], row[j - 1]) if j else (0.0, 0.0)
        out[i] = low + (bounds[j] - low) * (rank - below) / (row[j] - below) if row[j] > below else bounds[j]
    return out


def long_format(timeline: Timeline, loads: Sequence[Workload], *, seed: int = 7) -> pd.DataFrame:
    """The same draws as :func:`write_openmetrics`, evaluated every minute as 05-compare's templates
    evaluate them (``cpu_usage``, ``cpu_throttling``, ``latency_p99``), in the documented long format."""
    frames = []
    for s in _draw(timeline, loads, seed):
        at = np.arange(s.times[0] + RATE_WINDOW_S, s.times[-1] + 1, LONG_STEP_S)
        values = {"cpu_usage": _rate(s.times, s.usage, at)}
        # The template's ``or 0 * usage``: no CFS series in the rate window reads as never throttled.
        throttling = np.zeros(len(at))
        if len(s.cfs_times) > 1:
            ratio = _rate(s.cfs_times, s.throttled, at) / _rate(s.cfs_times, s.periods, at)
            throttling = np.where(np.isnan(ratio), 0.0, ratio)
        values["cpu_throttling"] = throttling
        if s.buckets is not None:
            values["latency_p99"] = _p99(s.times, s.buckets, at)
        for query, v in values.items():
            keep = ~np.isnan(v)
            frames.append(
                pd.DataFrame(
                    {
                        "timestamp": pd.to_datetime(at[keep], unit="s", utc=True),
                        "query": query,
                        "namespace": s.workload.namespace,
                        "container": s.workload.container,
                        "pod": s.pod,
                        "value": v[keep],
                        "rate_window": f"{RATE_WINDOW_S // 60}m",
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def write_long_format(path: Path, timeline: Timeline, loads: Sequence[Workload], *, seed: int = 7) -> Path:
    frame = long_format(timeline, loads, seed=seed)
    frame.assign(timestamp=frame["timestamp"].map(lambda t: t.strftime("%Y-%m-%dT%H:%M:%SZ"))).to_csv(path, index=False)
    return path
