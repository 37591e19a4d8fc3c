"""How often the before/after statistics cry wolf, and how often they miss (prints figures).

    .venv/bin/python bench/stats_calibration.py [--seeds 400] [--threshold 5] [--workers 2]

Synthetic workloads (tmnb.twin.synthetic: three pods before and three new ones after the
change, per-minute samples over two 2 h windows, lognormal noise with AR(1) serial correlation, a
load drift all pods share, pod-level offsets, 1 % spikes) with a known true shift of 0, half the
threshold, the threshold, threshold + 5 and threshold + 10 points, up and down, several hundred
seeds each, go through :func:`tmnb.metrics.stats.compare` exactly as 05-compare calls it.

Printed per shift: the share of seeds called regression, possible regression, no significant change,
possible improvement and improvement, with a 95 % Wilson interval for the one that matters: the
false-alarm rate below the threshold, the power above it. At shift 0 it also compares the spread of
the estimates across seeds with the bootstrap's own (interval width / 3.92): a ratio well below 1
means the intervals are too narrow for this noise.

Targets (issue 15): a true shift of half the threshold called a regression in at most 1 % of seeds,
threshold + 10 points called one in at least 95 %. Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd

from tmnb.metrics import stats
from tmnb.twin import synthetic

CALLS = ("regression", "possible regression", "no significant change", "possible improvement", "improvement")


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % interval of a rate from ``hits`` of ``n`` (sound at 0 and n, unlike the normal one)."""
    if n == 0:
        return (math.nan, math.nan)
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _run(job: tuple[float, list[int], dict[str, float], float, int]) -> pd.DataFrame:
    """One shift for some seeds: a row per seed with its verdict, estimate and interval."""
    shift, seeds, noise, threshold, resamples = job
    frame = pd.concat(
        [synthetic.workload(shift, seed=s, container=f"w{s}", noise=synthetic.Noise(**noise)) for s in seeds],
        ignore_index=True,
    )
    table = stats.compare(frame, group_by=["container"], threshold_pct=threshold, resamples=resamples)
    return table.assign(shift=shift)[["shift", "container", "change_pct", "ci_low_pct", "ci_high_pct", "verdict"]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=400, help="seeds per shift")
    parser.add_argument("--threshold", type=float, default=5.0, help="threshold_pct")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (05-compare: 2000)")
    defaults = synthetic.Noise()
    for name in ("sigma", "phi", "shared_sigma", "shared_phi", "pod_sigma", "outliers"):
        parser.add_argument(f"--{name.replace('_', '-')}", type=float, default=getattr(defaults, name))
    args = parser.parse_args(argv)
    noise = {k: getattr(args, k) for k in ("sigma", "phi", "shared_sigma", "shared_phi", "pod_sigma", "outliers")}
    t = args.threshold
    shifts = [s * sign for s in (0.0, t / 2, t, t + 5, t + 10) for sign in ((1,) if s == 0 else (1, -1))]
    chunk = 25
    jobs = [
        (shift, list(range(start, min(start + chunk, args.seeds))), noise, t, args.resamples)
        for shift in shifts
        for start in range(0, args.seeds, chunk)
    ]
    print(f"{len(shifts)} shifts x {args.seeds} seeds, threshold {t:g} %, noise {noise}, {args.workers} worker(s)")
    started = time.monotonic()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        rows = pd.concat(pool.map(_run, jobs), ignore_index=True)
    elapsed = time.monotonic() - started

    print(f"\n{'true shift':>10}  " + "  ".join(f"{c:>21}" for c in CALLS) + "   rate that matters (95 % CI)")
    missed = []
    for shift in sorted(shifts, key=lambda s: (abs(s), -s)):
        got = rows.loc[rows["shift"] == shift, "verdict"]
        n = len(got)
        shares = "  ".join(f"{(got == c).mean():>20.1%} " for c in CALLS)
        call = "regression" if shift >= 0 else "improvement"
        hits = int((got == call).sum())
        low, high = wilson(hits, n)
        if abs(shift) < t:
            what = f"false {call}s {hits / n:.1%} ({low:.1%}…{high:.1%})"
        elif abs(shift) == t:
            what = f"{call}s at the threshold {hits / n:.1%} (nominal ≤ 2.5 %)"
        else:
            what = f"power {hits / n:.1%} ({low:.1%}…{high:.1%})"
        if abs(shift) == t / 2 and hits / n > 0.01:
            missed.append(f"{shift:+g} %: {hits / n:.1%} {call}s > 1 %")
        if abs(shift) == t + 10 and hits / n < 0.95:
            missed.append(f"{shift:+g} %: power {hits / n:.1%} < 95 %")
        print(f"{shift:>+9g}%  {shares}   {what}")

    null = rows[rows["shift"] == 0]
    spread = float(np.std(null["change_pct"]))
    claimed = float(np.median(null["ci_high_pct"] - null["ci_low_pct"]) / 3.92)
    print(f"\nshift 0: estimates spread {spread:.2f} points across seeds, the bootstrap claims {claimed:.2f} "
          f"(ratio {claimed / spread:.2f})")  # fmt: skip
    print(f"{len(rows)} comparisons in {elapsed:.0f} s ({elapsed / len(rows) * 1000 * args.workers:.0f} ms each)")
    print("targets: " + ("met" if not missed else "MISSED: " + "; ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
