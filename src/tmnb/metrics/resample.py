"""A bootstrap for metrics that are neither independent in time nor across replicas.

Samples of one workload are correlated two ways: a series with itself over time (load, caches,
garbage collection: one slow minute is followed by another), and replicas with each other (they
share traffic and nodes). Resampling single samples ignores both and makes intervals too narrow;
thinning throws evidence away. Instead each bootstrap replicate draws, independently per window,

- **pods as clusters**: each series of the window gets one random weight for all its samples, with
  the spread of drawing the window's pods with replacement (a replica drawn twice counts twice);
- **time blocks**: the window cut into consecutive blocks of ``block`` seconds, drawn with
  replacement, the same draw for every series, so what replicas share at one time stays together.

A sample's weight is (its pod's weight) x (times its block was drawn): the two-way "pigeonhole"
bootstrap for crossed effects (Owen 2007), which errs on the wide side. Weighted
medians of values sorted once make each replicate O(samples), so 2,000 replicates stay cheap.

The block length comes from the data (Politis and White 2004, with the correction of Patton,
Politis and White 2009) on the indicator "above the median", the dependence that matters for a
median; it is never shorter than what a series declares as dependent by construction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Replicates x samples held in memory at once (float64 weights: 8 bytes each).
CHUNK = 2_000_000


def _flat_top(s: np.ndarray) -> np.ndarray:
    """Politis' trapezoidal lag window: 1 up to |s| = 1/2, then down to 0 at |s| = 1."""
    a = np.abs(s)
    return np.where(a <= 0.5, 1.0, np.where(a <= 1.0, 2.0 * (1.0 - a), 0.0))


def _pooled_autocovariance(series: Sequence[np.ndarray], lags: int) -> np.ndarray:
    """Autocovariance at lags 0..``lags`` of several series, each around its own mean, pooled."""
    total = np.zeros(lags + 1)
    count = 0
    for x in series:
        x = x - x.mean()
        n = len(x)
        count += n
        for k in range(min(lags, n - 1) + 1):
            total[k] += float(x[: n - k] @ x[k:])
    return total / max(count, 1)


def block_length(series: Sequence[np.ndarray]) -> float:
    """Circular block length, in samples, for the median of ``series`` (1: no serial correlation).

    The series are turned into "above the pooled median" indicators; their pooled autocorrelation
    gives the lag ``m`` after which it stays insignificant, and the flat-top estimates of the
    long-run variance and its first moment give the block length that balances bias and variance.
    """
    series = [np.asarray(x, dtype=float) for x in series if len(x) >= 2]
    if not series:
        return 1.0
    median = np.median(np.concatenate(series))
    indicators = [(x > median).astype(float) for x in series]
    n = int(np.median([len(x) for x in indicators]))
    total = sum(len(x) for x in indicators)
    if n < 4:
        return 1.0
    runs = max(5, math.ceil(math.sqrt(math.log10(n))))
    lag_max = min(math.ceil(math.sqrt(n)) + runs, n - 1)
    gamma = _pooled_autocovariance(indicators, lag_max)
    if gamma[0] <= 0:  # every series constant around its own mean: nothing to correlate
        return 1.0
    rho = gamma[1:] / gamma[0]
    small = np.abs(rho) < 2.0 * math.sqrt(math.log10(total) / total)
    m = next((k for k in range(len(rho) - runs + 1) if small[k : k + runs].all()), lag_max)
    big_m = min(2 * m, lag_max)
    if big_m == 0:
        return 1.0
    k = np.arange(-big_m, big_m + 1)
    lam, cov = _flat_top(k / big_m), gamma[np.abs(k)]
    g = float(np.sum(lam * np.abs(k) * cov))
    long_run = float(np.sum(lam * cov))
    if long_run <= 0 or g == 0:
        return 1.0
    d = 4.0 / 3.0 * long_run**2  # circular block bootstrap
    cap = math.ceil(min(3 * math.sqrt(n), n / 3))
    return float(min(max((2 * g**2 / d) ** (1 / 3) * n ** (1 / 3), 1.0), cap))


@dataclass(frozen=True)
class Window:
    """One window's samples, sorted by value, with the series and time block each belongs to."""

    values: np.ndarray  # sorted ascending
    series: np.ndarray  # index 0..n_series-1 of each sorted sample
    blocks: np.ndarray  # index 0..n_blocks-1 of each sorted sample
    n_series: int
    n_blocks: int

    @classmethod
    def of(cls, values: np.ndarray, series: np.ndarray, seconds: np.ndarray, block: float) -> Window:
        """``series`` any labels (one per sample), ``seconds`` sample times, ``block`` in seconds."""
        order = np.argsort(values, kind="stable")
        _, ids = np.unique(series, return_inverse=True)
        offset = seconds - seconds.min()
        _, slots = np.unique(np.floor(offset / block).astype(np.int64), return_inverse=True)
        return cls(values[order], ids[order], slots[order], int(ids.max()) + 1, int(slots.max()) + 1)

    def weights(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """(count, samples) weights: a pod's weight x how often its sample's time block was drawn."""
        cells, cell = np.unique(self.series * self.n_blocks + self.blocks, return_inverse=True)
        pods = _pod_weights(self.n_series, count, rng)[:, cells // self.n_blocks]
        blocks = _draws(self.n_blocks, count, rng)[:, cells % self.n_blocks]
        return np.take(pods * blocks, cell, axis=1)  # one weight per (pod, block) cell, then per sample


def _draws(n: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """(count, n): how often each of n items is drawn in n draws with replacement, per replicate."""
    picks = rng.integers(0, n, size=(count, n)) + (np.arange(count) * n)[:, None]
    return np.bincount(picks.ravel(), minlength=count * n).reshape(count, n)


def _pod_weights(n: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """(count, n) pod weights summing to n: Dirichlet with the spread of drawing n of n pods.

    Drawing pods with replacement can leave only the pods that lived a minute in the window (one
    replaced mid-window), and their few samples then stand for the whole window; continuous
    weights with the same variance, (n - 1) / n, never drop a pod entirely.
    """
    if n == 1:
        return np.ones((count, 1))
    return rng.dirichlet(np.full(n, (n - 1) / n), size=count) * n


def weighted_median(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per row of ``weights``: the weighted median of ``values`` (sorted ascending); NaN if no weight.

    The first value whose cumulative weight reaches half the total, averaged with the first that
    passes it: for integer weights, the median of the values repeated that many times.
    """
    cum = np.cumsum(weights, axis=1)
    half = cum[:, -1:] / 2
    last = len(values) - 1
    lower = np.minimum((cum < half).sum(axis=1), last)
    upper = np.minimum((cum <= half).sum(axis=1), last)
    return np.where(cum[:, -1] > 0, (values[lower] + values[upper]) / 2, np.nan)


def weighted_mean(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    total = weights.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (weights @ values) / total, np.nan)


def replicate(window: Window, resamples: int, rng: np.random.Generator, statistic: str = "median") -> np.ndarray:
    """``resamples`` bootstrap values of the window's median (or mean), in memory-bounded chunks."""
    step = max(1, CHUNK // max(len(window.values), 1))
    fn = weighted_median if statistic == "median" else weighted_mean
    parts = []
    for start in range(0, resamples, step):
        parts.append(fn(window.values, window.weights(min(step, resamples - start), rng)))
    return np.concatenate(parts) if parts else np.empty(0)
