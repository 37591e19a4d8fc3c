"""The bootstrap under the before/after statistics, and a small fixed-seed calibration of the verdicts.

The calibration is the test-sized version of bench/stats_calibration.py: synthetic workloads with a
known true shift (lognormal, AR(1), shared load drift, spikes, new pods after the change). A shift of
half the threshold must never be called, one of threshold + 10 points nearly always, in both
directions; a change to the statistics that cries wolf or goes deaf fails here.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmnb.metrics import queries, resample, stats
from tmnb.metrics.collect import collect
from tmnb.metrics.windows import resolve
from tmnb.twin import synthetic

THRESHOLD = 5.0
SEEDS = range(1000, 1030)
WIDTH_SEEDS = range(1000, 1010)


# --- the pieces -------------------------------------------------------------------------------------


def ar1(phi: float, n: int, rng: np.random.Generator) -> np.ndarray:
    x = np.empty(n)
    x[0] = rng.normal()
    for t in range(1, n):
        x[t] = phi * x[t - 1] + rng.normal() * np.sqrt(1 - phi**2)
    return x


def test_block_length_follows_the_serial_correlation():
    rng = np.random.default_rng(5)
    independent = resample.block_length([rng.normal(size=120) for _ in range(3)])
    weak = resample.block_length([ar1(0.5, 120, rng) for _ in range(3)])
    strong = resample.block_length([ar1(0.9, 120, rng) for _ in range(3)])
    assert independent == 1
    assert 1 < weak < strong <= np.ceil(120 / 3)
    assert resample.block_length([np.ones(50)]) == 1 and resample.block_length([np.ones(1)]) == 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(-5, 5), min_size=1, max_size=12),
    st.lists(st.lists(st.integers(0, 3), min_size=12, max_size=12), min_size=1, max_size=4),
)
def test_weighted_median_is_the_median_of_the_repeated_samples(values, rows):
    values = np.sort(np.array(values, dtype=float))
    weights = np.array([row[: len(values)] for row in rows])
    got = resample.weighted_median(values, weights)
    for row, median in zip(weights, got, strict=True):
        repeated = np.repeat(values, row)
        assert np.isnan(median) if len(repeated) == 0 else median == np.median(repeated)


def test_replicates_draw_pods_as_clusters_and_time_blocks_for_all_pods_at_once():
    seconds = np.tile(np.arange(12) * 60.0, 3)
    window = resample.Window.of(np.arange(36.0), np.repeat(["a", "b", "c"], 12), seconds, block=240.0)
    assert (window.n_series, window.n_blocks) == (3, 3)
    weights = window.weights(300, np.random.default_rng(0))
    cells = np.zeros((300, 3, 3))
    for i, (pod, block) in enumerate(zip(window.series, window.blocks, strict=True)):
        cells[:, pod, block] = weights[:, i]  # every sample of a cell has the same weight (4 per cell)
    pods, blocks = cells.sum(axis=2) / 3, cells.sum(axis=1) / 3  # pod weights and block draws both sum to 3
    assert np.allclose(pods.sum(axis=1), 3) and np.allclose(blocks.sum(axis=1), 3)
    assert np.allclose(blocks, np.round(blocks))  # blocks: drawn 3 times of 3, with replacement
    assert np.allclose(cells, pods[:, :, None] * blocks[:, None, :])  # weight = pod weight x block draws
    assert (np.round(blocks) == 0).any()  # some replicates leave a time block out
    assert (pods > 0).all() and pods.std() > 0.5  # but never a pod: its weight varies, it is not dropped


def test_intervals_widen_with_serial_correlation():
    """Same marginal noise, the second autocorrelated: its interval must be wider, as it is truly less sure."""
    noisy = synthetic.Noise(sigma=0.1, phi=0.0, shared_sigma=0.0, pod_sigma=0.0, outliers=0.0)
    sticky = synthetic.Noise(sigma=0.1, phi=0.9, shared_sigma=0.0, pod_sigma=0.0, outliers=0.0)
    widths = {}
    for name, noise in (("independent", noisy), ("ar1", sticky)):
        rows = [
            stats.compare(synthetic.workload(0, seed=s, noise=noise), group_by=["container"]).iloc[0] for s in SEEDS
        ]
        widths[name] = np.median([r.ci_high_pct - r.ci_low_pct for r in rows])
        assert all(r.n_before == 360 for r in rows)
    assert widths["ar1"] > 2 * widths["independent"]


# --- calibration (small) -----------------------------------------------------------------------------


def verdicts(shift: float, higher_is_better: bool = False) -> pd.Series:
    signal = queries.Signal("latency_p99", "latency", "seconds", higher_is_better=higher_is_better)
    frame = pd.concat(
        [synthetic.workload(shift, seed=s, container=f"w{s}") for s in SEEDS],
        ignore_index=True,
    )
    table = stats.compare(frame, group_by=["container"], threshold_pct=THRESHOLD, signals=[signal])
    assert len(table) == len(SEEDS)
    return table["verdict"]


@pytest.mark.parametrize(("shift", "quiet"), [(THRESHOLD / 2, "regression"), (-THRESHOLD / 2, "improvement")])
def test_half_the_threshold_is_never_called(shift, quiet):
    got = verdicts(shift)
    assert (got == quiet).sum() == 0
    assert (got == "no significant change").mean() >= 0.7  # and mostly not even a "possible"


@pytest.mark.parametrize(("shift", "called"), [(THRESHOLD + 10, "regression"), (-(THRESHOLD + 10), "improvement")])
def test_threshold_plus_ten_points_is_called(shift, called):
    got = verdicts(shift)
    assert (got == called).mean() >= 0.95


def test_higher_is_better_mirrors_the_verdicts():
    assert (verdicts(-(THRESHOLD + 10), higher_is_better=True) == "regression").mean() >= 0.95


def test_a_file_of_raw_samples_uses_all_of_them(tmp_path):
    """The issue's case: per-minute samples of three pods, a true +1 %, read from a file: no alarm."""
    frame = synthetic.workload(1.0, seed=4, noise=synthetic.Noise(sigma=0.08))
    path = tmp_path / "latency.csv"
    frame.drop(columns=["series", "window"]).to_csv(path, index=False)
    change = frame.loc[frame["window"] == "before", "timestamp"].max() + pd.Timedelta(seconds=1)
    windows = resolve(change.isoformat(), length="2h", margin="5m")
    got = collect(metrics_file=str(path), windows=windows)
    (row,) = stats.compare(got.frame, group_by=["namespace", "container"]).itertuples()
    assert (row.n_before, row.n_after) == (360, 360)
    assert (
        row.verdict == "below the threshold" and 0 < row.ci_low_pct < 1 < row.ci_high_pct
    )  # real, too small to act on


# --- the table a person reads ------------------------------------------------------------------------


def test_the_readable_table_puts_regressions_first_and_folds_signals_flat_at_zero():
    """Throttling of containers without a CFS quota is 0 throughout: one row for all such groups,
    under the regression, not one "0 → 0" row per workload above it."""
    quiet = [synthetic.workload(0, seed=s, container=f"z{s}", query="cpu_throttling") for s in (1, 2)]
    quiet = [frame.assign(value=0.0) for frame in quiet]
    hurt = synthetic.workload(THRESHOLD + 20, seed=3, container="web")
    calm = synthetic.workload(0, seed=4, container="api", query="cpu_usage")
    table = stats.compare(pd.concat([*quiet, calm, hurt], ignore_index=True), group_by=["container"])
    assert (table["query"] == "cpu_throttling").sum() == 2  # the machine-readable table keeps every row
    shown = stats.readable(table)
    assert shown["verdict"].tolist() == ["regression", "no significant change", "no significant change"]
    assert shown["signal"].tolist() == ["latency_p99", "cpu_usage", "cpu_throttling"]  # folded rows last
    flat = shown.iloc[2]
    assert (flat["signal"], flat["group"], flat["median"]) == ("cpu_throttling", "2 groups", "0 → 0")
    assert "container=z1" in flat["notes"] and "container=z2" in flat["notes"]
    assert shown.iloc[0]["median"].count("→") == 1 and "seconds" not in shown.iloc[0]["median"]
    assert shown.iloc[0]["unit"] == "seconds"
    assert stats.readable(table.iloc[0:0]).empty
    only_flat = stats.readable(table[table["query"] == "cpu_throttling"])
    assert list(only_flat.columns) == list(shown.columns) and len(only_flat) == 1  # one CSV schema
