"""Against a real Prometheus: series backfilled with promtool, the client, and the compare notebook.

The session fixture writes OpenMetrics for workloads of a before/after fleet (a 1.32 → 1.33 upgrade
with single-numa-node, so the CFS quota confounder is real), turns it into TSDB blocks with
``promtool tsdb create-blocks-from openmetrics``, and serves them on a free loopback port.
"""

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from compare_factories import derive_after, fleet, free_port, same_versions, write_journal
from conftest import ROOT, require_tool
from tmnb.analysis import compare as cmp
from tmnb.cli.run.runner import run
from tmnb.errors import InputError
from tmnb.metrics.backfill import served
from tmnb.metrics.collect import collect
from tmnb.metrics.prometheus import Prometheus
from tmnb.metrics.queries import Signal, build
from tmnb.metrics.stats import thin
from tmnb.metrics.windows import resolve
from tmnb.snapshot import load, save
from tmnb.twin.metrics import Timeline, Workload, workloads, write_openmetrics


@dataclass(frozen=True)
class Backfilled:
    url: str
    folder: Path  # before.json and after.json
    journal: Path
    timeline: Timeline
    loads: tuple[Workload, ...]
    seconds: float


@pytest.fixture(scope="session")
def fleet_files(tmp_path_factory) -> tuple[Path, tuple[Workload, ...]]:
    """Before and after snapshots of a 1.32 → 1.33 single-numa-node rollout, and their workloads."""
    root = tmp_path_factory.mktemp("fleet")
    before = same_versions(fleet(), "v1.32.4")
    after = derive_after(before, kubelet="v1.33.2")
    save(before, root / "before.json")
    save(after, root / "after.json")
    return root, workloads(before, after)


@pytest.fixture(scope="session")
def prometheus(tmp_path_factory, fleet_files) -> Iterator[Backfilled]:
    require_tool("prometheus")
    require_tool("promtool")
    started = time.monotonic()
    root = tmp_path_factory.mktemp("prometheus")
    folder, loads = fleet_files
    timeline = Timeline.recent()
    write_journal(timeline, root / "journal.jsonl")
    backfill = write_openmetrics(root / "backfill.om", timeline, loads)
    with served(backfill, root) as url:
        yield Backfilled(url, folder, root / "journal.jsonl", timeline, loads, time.monotonic() - started)


def group(w: Workload) -> str:
    return f"namespace={w.namespace} container={w.container}"


def test_backfilled_cpu_usage_per_pod(prometheus):
    (cpu,) = build(["cpu_usage"])
    first, last = prometheus.timeline.rollout
    with Prometheus(prometheus.url) as prom:
        before, _ = prom.query_range("cpu_usage", cpu.promql, first - pd.Timedelta("1h"), first, 60)
        after, _ = prom.query_range("cpu_usage", cpu.promql, last + pd.Timedelta("10m"), last + pd.Timedelta("1h"), 60)
    faster = prometheus.loads[1]
    assert set(before.loc[before["container"] == faster.container, "pod"]) == set(faster.pods_before)
    assert set(after.loc[after["container"] == faster.container, "pod"]) == set(faster.pods_after)
    medians = before.groupby("container")["value"].median()
    assert medians[faster.container] == pytest.approx(faster.cpu[0], rel=0.05)
    assert len(before) == 61 * sum(len(w.pods_before) for w in prometheus.loads)


def test_rate_series_say_their_window_and_raw_ones_do_not(prometheus):
    first, _ = prometheus.timeline.rollout
    windows = resolve(f"{first:%Y-%m-%dT%H:%M:%SZ}", length="1h", margin="5m")
    signals = [*build(["cpu_usage"]), Signal("periods", "throttling", "periods", "container_cpu_cfs_periods_total")]
    got = collect(prometheus_url=prometheus.url, signals=signals, windows=windows, step=60)
    spans = got.frame.groupby("query")["rate_window"].unique().to_dict()
    assert [list(spans["cpu_usage"]), list(spans["periods"])] == [[300.0], [0.0]]
    thinned = thin(got.frame)
    per_series = thinned[thinned["query"] == "cpu_usage"].groupby(["series", "window"]).size()
    assert per_series.max() <= 13  # 1 h of 1-minute steps: one sample per 5m rate window
    raw = thinned[thinned["query"] == "periods"].groupby(["series", "window"]).size()
    assert raw.max() == 61  # a counter read without a range selector: every step kept


def test_malformed_promql_and_empty_results(prometheus):
    end = prometheus.timeline.end
    with Prometheus(prometheus.url) as prom:
        with pytest.raises(InputError, match=r"^query bad: Prometheus rejected the query: 1:\d+: parse error"):
            prom.query_range("bad", "sum(rate(x[5m])", end - pd.Timedelta("1h"), end, 60)
        empty, warnings = prom.query_range("none", "no_such_metric_total", end - pd.Timedelta("1h"), end, 60)
    assert empty.empty and warnings == []


@pytest.mark.notebook
def test_notebook_against_prometheus(prometheus, tmp_path):
    folder = prometheus.folder
    result = run(
        ROOT / "notebooks" / "05-compare.ipynb",
        [
            ("before", str(folder / "before.json")),
            ("after", str(folder / "after.json")),
            ("prometheus_url", prometheus.url),
            ("change", str(prometheus.journal)),
            ("queries", '{"broken": "sum(rate(x[5m])", "nothing": "no_such_metric_total"}'),
        ],
        out=tmp_path / "run",
    )
    glued = result.results
    slower, faster, steady, half, plus_ten = prometheus.loads
    stats = {(r["query"], r["group"]): r for r in glued["statistics"]}
    assert stats[("latency_p99", group(slower))]["verdict"] == "regression"
    assert stats[("latency_p99", group(faster))]["verdict"] == "improvement"
    assert stats[("cpu_usage", group(slower))]["verdict"] == "no significant change"
    # p99 +2.5 % (half the threshold) raises nothing; +15 % (threshold + 10 points) is a regression
    small, big = stats[("latency_p99", group(half))], stats[("latency_p99", group(plus_ten))]
    assert small["verdict"] in ("below the threshold", "no significant change") and 1 < small["change_pct"] < 4
    assert big["verdict"] == "regression" and 12 < big["change_pct"] < 18 and big["ci_low_pct"] > 5
    assert small["n_before"] <= 25  # rate() series: one sample per 5m rate window of the 2h window
    flagged = sorted(line.split(":")[0] for line in glued["regressions"])
    assert flagged == sorted(f"latency_p99 {group(w)}" for w in (slower, plus_ten))
    assert glued["possible_regressions"] == []
    for w in prometheus.loads:  # throttling ends with the quota, and the report says why
        row = stats[("cpu_throttling", group(w))]
        assert row["median_after"] == 0 and row["verdict"] == "improvement"
        assert "CFS quota removed" in row["notes"]
    assert "CFS quota removed" not in stats[("cpu_usage", group(steady))]["notes"]
    assert {"CFS quota removed", "kubelet version changed"} <= set(glued["confounders"])
    problems = {(p["query"], p["window"]): p for p in glued["metrics_problems"]}
    assert problems[("broken", "")]["message"].startswith("Prometheus rejected the query: 1:16: parse error")
    assert problems[("nothing", "before")]["message"] == "no data: the query returned no series"
    assert glued["metrics_source"] == f"Prometheus at {prometheus.url}"
    assert result.status == "alert" and f"latency_p99 {group(slower)}" in result.message
    assert f"latency_p99 {group(plus_ten)}" in result.message and group(half) not in result.message
    assert "latency_p99-over-time.png" in glued["figures"] and "broken-over-time.png" not in glued["figures"]
    html = result.html.read_text()
    assert "unclosed left parenthesis" in html and "Confounders" in html
    assert html.index("<strong>regression</strong>") < html.index("Kubelet settings")  # the verdict block, on top
    matched = cmp.containers(load(folder / "before.json"), load(folder / "after.json"))
    assert glued["verdicts"] == cmp.summary(matched).set_index("verdict")["containers"].to_dict()


@pytest.mark.notebook
def test_notebook_when_prometheus_is_unreachable(fleet_files, tmp_path, monkeypatch):
    url = f"http://sre:hunter2@127.0.0.1:{free_port()}/"
    monkeypatch.setenv("TMNB_TEST_PROM_URL", url)
    result = run(
        ROOT / "notebooks" / "05-compare.ipynb",
        [
            ("before", str(fleet_files[0] / "before.json")),
            ("after", str(fleet_files[0] / "after.json")),
            ("prometheus_url", "env:TMNB_TEST_PROM_URL"),
            ("change", "2026-12-01T10:00:00Z"),
        ],
        out=tmp_path / "run",
    )
    (problem,) = result.results["metrics_problems"]
    assert problem["message"].startswith("Prometheus at http://<redacted>@127.0.0.1:")
    assert "is unreachable" in problem["message"] and "no metrics were compared" in problem["message"]
    assert result.status == "alert" and "metrics unavailable: Prometheus at http://<redacted>@" in result.message
    assert "is unreachable" in result.html.read_text()
    leaked = [p.name for p in result.folder.rglob("*") if p.is_file() and "hunter2" in p.read_text(errors="ignore")]
    assert leaked == []


# --- the sample pair's rehearsal metrics: the same answer through Prometheus and from the file -----


def test_sample_metrics_agree_through_prometheus_and_from_the_file(tmp_path):
    require_tool("prometheus")
    require_tool("promtool")
    from tmnb.analysis.compare.report import gather
    from tmnb.metrics import stats
    from tmnb.sources.embedded import load_sample, load_sample_after
    from tmnb.twin.sample import metrics as sample

    before, after = load_sample(), load_sample_after()
    csv = sample.write_metrics(tmp_path, before, after, openmetrics=True)
    journal = str(sample.write_journal(tmp_path / "journal.jsonl"))
    common = {
        "change": journal,
        "window": "2h",
        "signals": ["cpu_usage", "cpu_throttling", "latency_p99"],
        "queries": {},
        "selector": "",
        "group_by": ["namespace", "container"],
        "rate_window": "5m",
    }

    def verdicts(got) -> dict[tuple[str, str], str]:
        assert got.available and not (got.problems["severity"] == "error").any(), got.problems
        found = stats.compare(got.frame, group_by=["namespace", "container"], threshold_pct=5.0, signals=got.signals)
        return {(r.query, r.group): r.verdict for r in found.itertuples()}

    _, from_file = gather(prometheus_url="", metrics_file=str(csv), **common)
    with served(tmp_path / sample.OPENMETRICS, tmp_path / "prometheus") as url:
        _, through = gather(prometheus_url=url, metrics_file="", **common)
    file_verdicts, prom_verdicts = verdicts(from_file), verdicts(through)
    assert file_verdicts == prom_verdicts
    assert file_verdicts[("latency_p99", "namespace=ml-inference container=vllm")] == "regression"
    assert file_verdicts[("latency_p99", "namespace=ml-training container=encoder")] == "improvement"
