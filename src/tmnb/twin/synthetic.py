"""Synthetic workloads with a known true shift, to measure how often the statistics are wrong.

A workload's signal (say per-minute p99 latency) is lognormal around a level; on the log scale a
sample is the level + a pod offset (replicas differ, and the pods after the change are new ones
with new offsets) + a load component shared by all pods (AR(1), continuing across the change)
+ the pod's own AR(1) noise; a few samples are spikes. The after window multiplies the level by
``1 + shift_pct / 100``. ``bench/stats_calibration.py`` and the tests feed these to
:func:`tmnb.metrics.stats.compare` and count the verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tmnb.metrics.frame import series_key

T0 = pd.Timestamp("2026-12-01T08:00:00Z")


@dataclass(frozen=True)
class Noise:
    """How a synthetic signal varies; the defaults are those of the calibration bench."""

    sigma: float = 0.10  # lognormal spread of a pod's samples around its level
    phi: float = 0.5  # AR(1) coefficient between consecutive samples of a pod
    shared_sigma: float = 0.02  # spread of the load component all pods share
    shared_phi: float = 0.9  # its AR(1) coefficient (slow drift)
    pod_sigma: float = 0.015  # spread of pod levels; replacement pods draw new ones
    outliers: float = 0.01  # fraction of samples that are spikes
    spike: tuple[float, float] = (2.0, 6.0)  # a spike multiplies the sample by a factor in this range


def _ar1(rng: np.random.Generator, phi: float, sigma: float, shape: tuple[int, ...]) -> np.ndarray:
    """Stationary AR(1) along the last axis with marginal standard deviation ``sigma``."""
    shocks = rng.normal(0.0, sigma * np.sqrt(1 - phi**2), shape)
    out = np.empty(shape)
    out[..., 0] = rng.normal(0.0, sigma, shape[:-1])
    for t in range(1, shape[-1]):
        out[..., t] = phi * out[..., t - 1] + shocks[..., t]
    return out


def workload(
    shift_pct: float,
    *,
    seed: int,
    noise: Noise | None = None,
    pods: int = 3,
    step: float = 60.0,
    window: float = 7200.0,
    gap: float = 300.0,
    level: float = 0.1,
    query: str = "latency_p99",
    namespace: str = "app",
    container: str = "web",
) -> pd.DataFrame:
    """One workload's samples in the long format, with ``window`` (before/after) already placed.

    ``pods`` replicas before the change, as many new ones after it; samples every ``step`` seconds
    over two windows of ``window`` seconds, ``gap`` seconds apart.
    """
    noise = noise or Noise()
    rng = np.random.default_rng(seed)
    per = int(window // step)
    t_before = np.arange(per) * step
    t_after = window + gap + np.arange(per) * step
    shared = _ar1(rng, noise.shared_phi, noise.shared_sigma, (per * 2 + int(gap // step),))
    shared_before, shared_after = shared[:per], shared[-per:]
    parts = []
    for side, times, common, factor in (
        ("before", t_before, shared_before, 1.0),
        ("after", t_after, shared_after, 1 + shift_pct / 100),
    ):
        offsets = rng.normal(0.0, noise.pod_sigma, pods)
        own = _ar1(rng, noise.phi, noise.sigma, (pods, per))
        logs = np.log(level * factor) + offsets[:, None] + common[None, :] + own
        spikes = rng.random((pods, per)) < noise.outliers
        logs += spikes * np.log(rng.uniform(*noise.spike, (pods, per)))
        for i in range(pods):
            pod = f"{container}-{side}-{i}"
            labels = {"namespace": namespace, "container": container, "pod": pod}
            parts.append(
                pd.DataFrame(
                    {
                        "query": query,
                        "series": series_key(labels),
                        "timestamp": T0 + pd.to_timedelta(times, unit="s"),
                        "value": np.exp(logs[i]),
                        "window": side,
                        **labels,
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)
