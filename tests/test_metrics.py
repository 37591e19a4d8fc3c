"""Metrics: windows and journals, the long format, file loaders, PromQL templates, the HTTP client
against a faked API, statistics and the before/after figures."""

import json

import httpx
import numpy as np
import pandas as pd
import pytest

from compare_factories import free_port
from conftest import ROOT
from tmnb import plots
from tmnb.errors import CollectError, InputError
from tmnb.metrics import files, queries, stats
from tmnb.metrics.collect import collect
from tmnb.metrics.frame import BASE, assign_windows, empty, from_series, series_key
from tmnb.metrics.prometheus import Prometheus, redact_url
from tmnb.metrics.windows import parse_duration, read_journal, resolve

FIXTURES = ROOT / "tests" / "fixtures" / "metrics"
T0 = pd.Timestamp("2026-12-01T10:00:00Z")


# --- windows ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("5m", 300), ("1h30m", 5400), ("2d", 172800)])
def test_durations(text, seconds):
    assert parse_duration(text, where="window") == seconds


@pytest.mark.parametrize("text", ["", "5", "5 m", "1.5h", "0s", "m5"])
def test_bad_durations_name_the_parameter(text):
    with pytest.raises(InputError, match=r"^window: .*(invalid duration|longer than zero)"):
        parse_duration(text, where="window")


def test_windows_around_a_timestamp():
    w = resolve("2026-12-01T10:00:00Z", length="2h", margin="5m")
    assert w.before == (T0 - pd.Timedelta("2h"), T0)
    assert w.after == (T0 + pd.Timedelta("5m"), T0 + pd.Timedelta("2h5m"))
    assert list(w.markers["event"]) == ["change"]
    assert "before 2026-12-01 08:00" in w.describe()


def test_windows_around_a_journal_span_the_rollout(tmp_path):
    journal = tmp_path / "journal.jsonl"
    journal.write_text(
        '{"time": "2026-12-01T10:20:00Z", "event": "uncordon", "node": "w1"}\n\n'
        '{"time": "2026-12-01T11:00:00+01:00", "event": "drain", "node": "w1"}\n'
    )
    w = resolve(str(journal), length="1h", margin="5m")
    assert w.change == (T0, T0 + pd.Timedelta("20m"))
    assert w.before == (T0 - pd.Timedelta("1h"), T0)
    assert w.after[0] == T0 + pd.Timedelta("25m")
    assert list(w.markers["event"]) == ["drain", "uncordon"]
    assert json.loads(w.markers["detail"][0]) == {"node": "w1"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"change": ""}, "change: cannot place the change: expected a rollout journal or an RFC 3339 time"),
        ({"change": "after lunch"}, "after lunch: cannot read the journal"),
        ({"change": "2026-12-01T10:00Z", "length": "2 hours"}, "window: invalid duration '2 hours'"),
    ],
)
def test_window_errors(kwargs, message):
    with pytest.raises(InputError, match=message):
        resolve(**kwargs)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"time": "2026-12-01T10:00:00Z", "event": "drain"}\n{"time": \n', r"journal.jsonl:2: not a JSON object"),
        ('{"time": "2026-12-01T10:00:00Z"}\n', r"journal.jsonl:1: expected a JSON object with 'time' and 'event'"),
        ('{"time": "soon", "event": "drain"}\n', r"journal.jsonl:1: time: invalid time 'soon'"),
        ("\n", r"journal.jsonl: the journal has no records"),
    ],
)
def test_journal_errors_name_file_and_line(tmp_path, body, message):
    (tmp_path / "journal.jsonl").write_text(body)
    with pytest.raises(InputError, match=message):
        read_journal(tmp_path / "journal.jsonl")


def test_missing_journal(tmp_path):
    with pytest.raises(InputError, match=r"nope\.jsonl: cannot read the journal"):
        read_journal(tmp_path / "nope.jsonl")


# --- the long format and files ------------------------------------------------------------------


def test_from_series_and_windows():
    seconds = [(T0 + pd.Timedelta(minutes=m)).timestamp() for m in (-30, 2, 30)]
    frame = from_series("cpu", [({"pod": "a", "namespace": "app"}, seconds, [1.0, 2.0, 3.0]), ({}, seconds[:1], [4])])
    assert series_key({"pod": "a", "namespace": "app", "x": ""}) == '{namespace="app",pod="a"}'
    assert list(frame.columns) == ["query", "series", "timestamp", "value", "namespace", "pod"]
    assert frame["namespace"].tolist() == ["app", "app", "app", ""]
    windowed = assign_windows(frame, resolve("2026-12-01T10:00:00Z", length="1h", margin="5m"))
    assert windowed["window"].tolist() == ["before", "change", "after", "before"]


def test_csv_in_the_long_format():
    frame = files.load(FIXTURES / "long-format.csv")
    assert set(frame["query"]) == {"latency_p99", "requests_per_second"}
    assert str(frame["timestamp"].dt.tz) == "UTC"
    web = frame[frame["query"] == "latency_p99"]
    assert web["series"].nunique() == 2
    assert np.isnan(web["value"]).sum() == 1
    rps = frame[frame["query"] == "requests_per_second"]
    assert rps["series"].tolist() == ['{namespace="app"}'] * 2 and np.isinf(rps["value"].iloc[1])


def test_parquet_with_naive_times_and_no_query_column(tmp_path):
    path = tmp_path / "cpu_usage.parquet"
    pd.DataFrame(
        {"timestamp": pd.date_range("2026-12-01 09:00", periods=3, freq="1min"), "value": [1, 2, 3], "pod": "a"}
    ).to_parquet(path)
    frame = files.load(path)
    assert frame["query"].unique().tolist() == ["cpu_usage"]
    assert frame["timestamp"].iloc[0] == pd.Timestamp("2026-12-01T09:00:00Z")
    assert frame["value"].tolist() == [1.0, 2.0, 3.0]


def test_a_rate_window_column_says_which_series_are_rates(tmp_path):
    path = tmp_path / "mixed.csv"
    path.write_text(
        "timestamp,query,pod,rate_window,value\n"
        "2026-12-01T09:00:00Z,cpu_usage,a,5m,1.5\n"
        "2026-12-01T09:00:00Z,latency_p99,a,,0.1\n"
        "2026-12-01T09:01:00Z,latency_p99,a,0,0.2\n"
    )
    frame = files.load(path)
    assert frame["rate_window"].tolist() == [300.0, 0.0, 0.0]
    assert "rate_window" not in frame["series"].iloc[0] and list(frame.columns[:5]) == [*BASE, "rate_window"]
    windowed = assign_windows(frame, resolve("2026-12-01T10:00:00Z", length="2h", margin="5m"))
    assert windowed["rate_window"].tolist() == [300.0, 0.0, 0.0]
    path.write_text("timestamp,pod,rate_window,value\n2026-12-01T09:00:00Z,a,5m,1\n2026-12-01T09:01:00Z,a,5 min,1\n")
    with pytest.raises(InputError, match=r"mixed.csv:3: rate_window: invalid rate window '5 min': expected a duration"):
        files.load(path)
    parquet = tmp_path / "cpu.parquet"
    pd.DataFrame({"timestamp": [T0, T0], "value": [1.0, 2.0], "rate_window": [120, None]}).to_parquet(parquet)
    assert files.load(parquet)["rate_window"].tolist() == [120.0, 0.0]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing-value.csv", r"missing-value.csv: missing column value: expected timestamp, value.*found timestamp"),
        ("extra-field.csv", r"extra-field.csv:4: malformed CSV: .*Expected 3 fields in line 4, saw 4"),
        ("bad-timestamp.csv", r"bad-timestamp.csv:3: timestamp: invalid timestamp 'yesterday at noon'"),
        ("bad-value.csv", r"bad-value.csv:4: value: invalid value 'fast': expected a number"),
    ],
)
def test_bad_files_name_file_line_and_field(name, message):
    with pytest.raises(InputError, match=message):
        files.load(FIXTURES / name)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.csv", "", "the file is empty"),
        ("header.csv", "timestamp,value\n", "the file has a header but no samples"),
        ("data.json", "{}", "unsupported file type: expected one of .csv, .csv.gz, .parquet"),
        ("broken.parquet", "not parquet", "cannot read the file"),
    ],
)
def test_unreadable_files(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    with pytest.raises(InputError, match=f"{name}: {message}"):
        files.load(tmp_path / name)
    with pytest.raises(InputError, match="metrics file not found"):
        files.load(tmp_path / "gone.csv")


# --- PromQL templates -----------------------------------------------------------------------------


def test_templates_substitute_selector_groups_and_histogram():
    cpu, latency, mine = queries.build(
        ["cpu_usage", "latency_p99:app_latency_seconds"],
        {"rps": {"promql": "sum(rate(http_requests_total[5m]))", "higher_is_better": True}},
        selector='namespace="app"',
        group_by=["namespace", "deployment"],
        rate="2m",
    )
    assert cpu.promql == (
        'sum by (namespace, deployment, pod) (rate(container_cpu_usage_seconds_total{container!="", '
        'container!="POD", namespace="app"}[2m]))'
    )
    assert latency.promql == (
        "histogram_quantile(0.99, sum by (le, namespace, deployment) "
        '(rate(app_latency_seconds_bucket{namespace="app"}[2m])))'
    )
    assert (cpu.kind, latency.kind, latency.unit, mine.kind, mine.higher_is_better) == (
        "cpu",
        "latency",
        "seconds",
        "other",
        True,
    )
    throttling, p50 = queries.build(["cpu_throttling", "latency_p50"], {})
    assert 'cfs_throttled_periods_total{container!=""}' in throttling.promql and throttling.kind == "throttling"
    assert "http_request_duration_seconds_bucket{}" in p50.promql and not p50.higher_is_better
    assert queries.step_for(300) == 60 and queries.step_for(2) == 1


@pytest.mark.parametrize(
    ("names", "extra", "kwargs", "message"),
    [
        (["cpu_ussage"], {}, {}, "signals: unknown signal 'cpu_ussage': expected one of cpu_usage"),
        (["cpu_usage:my_histogram"], {}, {}, "signals: 'cpu_usage:my_histogram': only latency templates take"),
        (["latency_p99:bad name"], {}, {}, "signals: 'latency_p99:bad name': only latency templates take"),
        (["cpu_usage"], {}, {"group_by": ["name-space"]}, "group_by: invalid label name 'name-space'"),
        (["cpu_usage"], {}, {"group_by": []}, "group_by: name at least one label"),
        ([], {"cpu_usage": "up"}, {}, "queries: query 'cpu_usage': expected its own name"),
        ([], {"rps": {"higher_is_better": True}}, {}, "queries: query 'rps': expected its own name and PromQL"),
        ([], {"rps": {"promql": "up", "higher_is_better": "yes"}}, {}, "queries: query 'rps'"),
    ],
)
def test_template_errors(names, extra, kwargs, message):
    with pytest.raises(InputError, match=message):
        queries.build(names, extra, **kwargs)


def test_kinds_from_promql_or_names():
    assert queries.kind_of("rate(container_cpu_cfs_throttled_periods_total[5m])") == "throttling"
    assert queries.kind_of("histogram_quantile(0.9, x)") == "latency"
    assert queries.describe("latency_p99").unit == "seconds"
    assert queries.describe("my_throttle_ratio").kind == "throttling"


# --- the HTTP client against a faked Prometheus API ----------------------------------------------


def fake(status: int, body: object, seen: list | None = None) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        content = body if isinstance(body, str) else json.dumps(body)
        return httpx.Response(status, content=content, headers={"content-type": "application/json"})

    return httpx.MockTransport(handler)


MATRIX = {
    "status": "success",
    "data": {
        "resultType": "matrix",
        "result": [{"metric": {"pod": "a"}, "values": [[T0.timestamp(), "1.5"], [T0.timestamp() + 60, "NaN"]]}],
    },
    "warnings": ["some samples were dropped"],
}


def test_query_range_posts_the_query_and_parses_the_matrix(monkeypatch):
    monkeypatch.setenv("TMNB_PROMETHEUS_TOKEN", "t0ken")
    seen: list[httpx.Request] = []
    prom = Prometheus("http://prom.example:9090/prefix/", transport=fake(200, MATRIX, seen))
    frame, warnings = prom.query_range("cpu", "up", T0, T0 + pd.Timedelta("1m"), 60)
    request = seen[0]
    assert request.url.path == "/prefix/api/v1/query_range"
    form = dict(x.split("=", 1) for x in request.content.decode().split("&"))
    assert form["query"] == "up" and form["step"] == "60" and float(form["start"]) == T0.timestamp()
    assert request.headers["authorization"] == "Bearer t0ken"
    assert frame["value"].iloc[0] == 1.5 and np.isnan(frame["value"].iloc[1])
    assert frame["timestamp"].iloc[0] == T0
    assert warnings == ["some samples were dropped"]


@pytest.mark.parametrize(
    ("status", "body", "error", "message"),
    [
        (
            400,
            {"status": "error", "errorType": "bad_data", "error": "1:5: parse error"},
            InputError,
            r"^query cpu: Prometheus rejected the query: 1:5: parse error$",
        ),
        (
            503,
            {"status": "error", "errorType": "timeout", "error": "query timed out"},
            CollectError,
            r"failed on query cpu \(timeout\): query timed out",
        ),
        (401, {"status": "error", "error": "unauthorized"}, CollectError, r"refused access \(HTTP 401\): set TMNB_"),
        (200, "<html>Grafana</html>", CollectError, r"answered HTTP 200 without Prometheus API JSON"),
        (
            200,
            {"status": "success", "data": {"resultType": "vector", "result": []}},
            InputError,
            r"expected a range vector \(matrix\) result, got 'vector'",
        ),
    ],
)
def test_api_failures_become_tmnb_errors(status, body, error, message):
    prom = Prometheus("https://user:hunter2@prom.example/", transport=fake(status, body))
    with pytest.raises(error, match=message) as caught:
        prom.query_range("cpu", "up", T0, T0 + pd.Timedelta("1h"), 60)
    assert "hunter2" not in str(caught.value)


def test_unreachable_prometheus_is_named_redacted():
    url = f"http://admin:s3cret@127.0.0.1:{free_port()}/"
    shown = r"Prometheus at http://<redacted>@127.0.0.1:\d+/ is unreachable"
    with Prometheus(url, timeout=2) as prom, pytest.raises(CollectError, match=shown) as caught:
        prom.query_range("cpu", "up", T0, T0 + pd.Timedelta("1h"), 60)
    assert "s3cret" not in str(caught.value) and "admin" not in str(caught.value)


def test_too_many_points_say_which_step_would_do():
    prom = Prometheus("http://prom.example", transport=fake(200, MATRIX))
    with pytest.raises(InputError, match=r"step: 20161 points per series exceed .* at least 110s"):
        prom.query_range("cpu", "up", T0, T0 + pd.Timedelta(days=14), 60)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://u:p@prom:9090/x?token=abc&step=1", "https://<redacted>@prom:9090/x?token=<redacted>&step=1"),
        ("http://prom:9090", "http://prom:9090"),
    ],
)
def test_redact_url(url, shown):
    assert redact_url(url) == shown


def test_url_from_the_environment(monkeypatch):
    monkeypatch.setenv("PROM_URL", "http://u:p@prom:9090")
    assert Prometheus("env:PROM_URL").shown == "http://<redacted>@prom:9090"
    with pytest.raises(InputError, match="prometheus_url: environment variable NOT_SET is not set"):
        Prometheus("env:NOT_SET")
    with pytest.raises(InputError, match="prometheus_url: expected an http"):
        Prometheus("prom:9090")


# --- collecting into a report ---------------------------------------------------------------------


def test_collect_from_a_file_assigns_windows_and_reports_gaps():
    windows = resolve("2026-12-01T10:00:00Z", length="2h", margin="5m")
    got = collect(metrics_file=str(FIXTURES / "long-format.csv"), windows=windows)
    assert got.available and got.source.startswith("file ")
    assert set(got.frame["window"]) == {"before", "after"}
    assert [s.name for s in got.with_data()] == ["latency_p99", "requests_per_second"]
    assert "rate_window" not in got.frame  # a file without the column holds raw samples
    assert got.problems.empty and got.failures() == []


def test_collect_reports_instead_of_raising(tmp_path):
    windows = resolve("2026-12-01T10:00:00Z")
    bad = collect(metrics_file=str(FIXTURES / "bad-value.csv"), windows=windows)
    assert not bad.available and "bad-value.csv:4: value: invalid value 'fast'" in bad.markdown(windows)
    assert bad.failures() == [f"metrics unavailable: {bad.problems['message'][0]}"]
    down = collect(
        prometheus_url=f"http://127.0.0.1:{free_port()}",
        signals=queries.build(["cpu_usage"]),
        windows=windows,
        timeout=2,
    )
    assert not down.available and "is unreachable" in down.problems["message"][0]
    nothing = collect(windows=None)
    assert not nothing.available and nothing.failures() == [] and "No application metrics" in nothing.markdown(None)
    with pytest.raises(InputError, match="not both"):
        collect(prometheus_url="http://x", metrics_file="y.csv", windows=windows)


# --- statistics -----------------------------------------------------------------------------------


def samples(before, after, query="latency_p99", group="web"):
    rows = [("before", v) for v in before] + [("after", v) for v in after]
    return pd.DataFrame(
        {
            "query": query,
            "series": f'{{container="{group}"}}',
            "timestamp": [T0 + pd.Timedelta(minutes=i) for i in range(len(rows))],
            "value": [v for _, v in rows],
            "window": [w for w, _ in rows],
            "container": group,
        }
    )


RNG = np.random.default_rng(3)
NOISE_B, NOISE_A = RNG.normal(1.0, 0.03, 60), RNG.normal(1.0, 0.03, 60)


@pytest.mark.parametrize(
    ("after", "better_up", "verdict"),
    [
        (NOISE_A * 1.3, False, "regression"),
        (NOISE_A * 0.7, False, "improvement"),
        (NOISE_A * 1.3, True, "improvement"),
        (NOISE_A * 0.7, True, "regression"),
        (NOISE_A * 1.055, False, "possible regression"),
        (NOISE_A * 0.945, False, "possible improvement"),
        (NOISE_A * 1.055, True, "possible improvement"),
        (NOISE_A, False, "no significant change"),
        (NOISE_A * 1.03, False, "below the threshold"),  # real, but smaller than the threshold
        (NOISE_A[:5] * 2, False, "insufficient data"),
    ],
)
def test_verdicts(after, better_up, verdict):
    signal = queries.Signal("latency_p99", "latency", "seconds", higher_is_better=better_up)
    table = stats.compare(samples(NOISE_B, after), group_by=["container"], threshold_pct=5, signals=[signal])
    row = table.iloc[0]
    assert row["verdict"] == verdict
    assert row["group"] == "container=web" and row["container"] == "web"
    if verdict != "insufficient data":
        assert row["ci_low_pct"] <= row["change_pct"] <= row["ci_high_pct"]
        assert row["median_before"] == pytest.approx(np.median(NOISE_B))
        assert row["n_before"] == 60  # raw samples are all kept
    if verdict.startswith("possible"):  # past the threshold, its interval reaching back inside it
        change, low, high = row["change_pct"], row["ci_low_pct"], row["ci_high_pct"]
        assert (change > 5 and low < 5) if change > 0 else (change < -5 and high > -5)


@pytest.mark.parametrize(
    ("change", "low", "high", "up_is_worse", "verdict"),
    [
        (12, 6, 18, True, "regression"),
        (12, 6, 18, False, "improvement"),
        (7, 4, 10, True, "possible regression"),
        (7, 4, 10, False, "possible improvement"),
        (-7, -10, -4, True, "possible improvement"),
        (-12, -18, -6, True, "improvement"),
        (-12, -18, -6, False, "regression"),
        (5, 4.9, 5.1, True, "below the threshold"),  # the estimate must pass the threshold, not touch it
        (5.2, 5.1, 5.3, True, "regression"),
        (3, 1, 5, True, "below the threshold"),  # real (the interval excludes 0), too small to act on
        (-3, -5, -1, False, "below the threshold"),
        (2, -1, 5, True, "no significant change"),
        (0, -9, 9, True, "no significant change"),
    ],
)
def test_verdict_rules(change, low, high, up_is_worse, verdict):
    assert stats.verdict(change, low, high, worse_if_up=up_is_worse, threshold=5) == verdict


def test_a_zero_median_before_falls_back_to_the_mean():
    row = stats.compare(samples(np.zeros(30), np.full(30, 0.2), "cpu_throttling"), group_by=["container"]).iloc[0]
    assert np.isnan(row["change_pct"]) and row["verdict"] == "regression" and "change of the mean" in row["notes"]
    frame = samples(np.zeros(30), np.full(30, 0.2), "cpu_throttling")
    assert stats.regressions(stats.compare(frame, group_by=["container"]))[0].startswith(
        "cpu_throttling container=web: median 0 → 0.2 (bootstrap p="
    )
    same = stats.compare(samples(np.zeros(30), np.zeros(30), "cpu_throttling"), group_by=["container"]).iloc[0]
    assert same["verdict"] == "no significant change" and same["p_value"] == 1
    rare = np.zeros(30)
    rare[[3, 17]] = 0.01  # two throttled minutes after, none before: not enough to call it
    assert stats.compare(samples(np.zeros(30), rare, "cpu_throttling"), group_by=["container"]).iloc[0]["verdict"] == (
        "no significant change"
    )


def test_a_before_median_barely_above_zero_gives_an_open_interval():
    before = np.r_[np.zeros(14), np.full(16, 0.1)]  # many resamples have a median of 0: an infinite rise
    row = stats.compare(samples(before, np.full(30, 0.1), "cpu_throttling"), group_by=["container"]).iloc[0]
    assert row["change_pct"] == 0 and row["ci_high_pct"] == np.inf and row["ci_low_pct"] <= 0
    assert row["verdict"] == "no significant change"
    (record,) = stats.as_records(stats.compare(samples(before, np.full(30, 0.1)), group_by=["container"]))
    assert record["ci_high_pct"] is None and record["change_pct"] == 0 and json.dumps(record, allow_nan=False)


def test_only_rate_series_are_thinned():
    frame = samples(NOISE_B, NOISE_A)
    raw = stats.compare(frame, group_by=["container"]).iloc[0]
    assert raw[["n_before", "n_after"]].tolist() == [60, 60]
    rated = stats.compare(frame.assign(rate_window=300.0), group_by=["container"]).iloc[0]
    assert rated[["n_before", "n_after"]].tolist() == [12, 12]
    assert rated["block_s"] >= 300  # a block is never shorter than what a series declares dependent
    mixed = pd.concat([frame.assign(rate_window=300.0), samples(NOISE_B, NOISE_A, group="api")], ignore_index=True)
    counts = stats.compare(mixed, group_by=["container"]).set_index("group")["n_before"]
    assert counts.to_dict() == {"container=api": 60, "container=web": 12}
    with pytest.raises(InputError, match="group_by cannot use kind"):
        stats.compare(frame, group_by=["kind"])


def test_annotate_by_kind_and_scope():
    table = pd.concat(
        [
            stats.compare(samples(NOISE_B, NOISE_A, q, g), group_by=["container"])
            for q in ("cpu_throttling", "cpu_usage")
            for g in ("web", "api")
        ],
        ignore_index=True,
    )
    confounders = pd.DataFrame(
        [
            {"confounder": "CFS quota removed", "affects": ["throttling"], "scope": [{"container": "web"}]},
            {
                "confounder": "kubelet version changed",
                "affects": ["all"],
                "scope": [{"namespace": "x", "container": "api"}],
            },
        ]
    )
    notes = stats.annotate(table, confounders).set_index(["query", "group"])["notes"]
    assert notes[("cpu_throttling", "container=web")] == "CFS quota removed"
    assert notes[("cpu_throttling", "container=api")] == "kubelet version changed"
    assert notes[("cpu_usage", "container=web")] == ""
    records = stats.as_records(stats.compare(samples(NOISE_B, NOISE_A[:3]), group_by=["container"]))
    assert records[0]["change_pct"] is None and json.dumps(records)


def test_no_samples_no_rows():
    table = stats.compare(empty(), group_by=["namespace"])
    assert table.empty and "namespace" in table.columns and stats.regressions(table) == []


def test_regression_lines_and_the_top_of_the_report():
    table = pd.concat(
        [
            stats.compare(samples(NOISE_B, NOISE_A * 1.3), group_by=["container"]),
            stats.compare(samples(NOISE_B, NOISE_A * 1.055, group="api"), group_by=["container"]),
        ],
        ignore_index=True,
    )
    (line,) = stats.regressions(table)
    assert line.startswith("latency_p99 container=web: +3") and "95% CI" in line
    (maybe,) = stats.possible_regressions(table)
    assert maybe.startswith("latency_p99 container=api: +") and "95% CI +" in maybe
    shown = stats.readable(table)
    assert list(shown["verdict"]) == ["regression", "possible regression"]
    assert shown["Δ median"][0].startswith("+3") and shown["95 % CI"][0].endswith(" %") and "…" in shown["95 % CI"][0]
    assert not shown.isin(["nan", "None"]).any().any() and "e-" not in shown.to_csv()


# --- figures --------------------------------------------------------------------------------------


def test_timeseries_and_distributions(tmp_path):
    windows = resolve("2026-12-01T11:00:00Z", length="1h", margin="5m")
    frame = pd.concat([samples(NOISE_B, NOISE_A, group=g) for g in ("web", "api")], ignore_index=True)
    frame["timestamp"] = frame["timestamp"] + (frame["window"] == "after").astype(int) * pd.Timedelta("5m")
    fig = plots.timeseries(frame, "latency_p99", windows, group_by=["container"], unit="seconds")
    ax = fig.axes[0]
    assert ax.get_ylabel() == "seconds" and ax.get_xlabel() == "time (UTC)"
    assert "latency_p99" in ax.get_title() and "(2 series)" in ax.get_title()
    legend = {t.get_text() for t in ax.get_legend().get_texts()}
    assert {"container=web", "container=api", "before window", "after window"} <= legend
    assert [t.get_text() for t in ax.texts] == ["change"]
    api, web = plots.distributions(frame, "latency_p99", group_by=["container"], unit="seconds").axes
    assert (api.get_ylabel(), web.get_ylabel()) == ("container=api", "container=web")
    assert [t.get_text() for t in api.get_yticklabels()] == ["after", "before"]
    assert web.get_xlabel() == "seconds" and len(api.patches) == len(web.patches) == 2
    assert plots.save(fig, tmp_path, "t").stat().st_size > 5000


def test_a_narrow_distribution_shows_its_box_beside_a_wide_one():
    """Two workloads three orders of magnitude apart: on one shared scale the narrow one's box is a
    line; each on its own scale, its quartiles span a visible part of its panel."""
    rng = np.random.default_rng(1)
    rows = [
        {"query": "q", "window": window, "value": value, "container": name}
        for name, centre, spread in (("wide", 1000.0, 100.0), ("narrow", 1.0, 0.01))
        for window in ("before", "after")
        for value in rng.normal(centre, spread, 200)
    ]
    fig = plots.distributions(pd.DataFrame(rows), "q", group_by=["container"])
    for ax in fig.axes:
        low, high = ax.get_xlim()
        for patch in ax.patches:
            extent = patch.get_path().get_extents()
            assert (extent.x1 - extent.x0) / (high - low) > 0.1, (ax.get_ylabel(), extent, (low, high))
    assert "median" in fig.axes[0].texts[0].get_text()


def test_journal_of_a_killed_rollout_reads_up_to_its_last_whole_record(tmp_path):
    from tmnb.metrics.windows import read_journal

    path = tmp_path / "journal.jsonl"
    path.write_text('{"time": "2026-12-01T10:00:00Z", "event": "intent"}\n{"time": "2026-12-01T10:01:00Z", "ev')
    assert list(read_journal(path)["event"]) == ["intent"]
    path.write_text(
        '{"time": "2026-12-01T10:00:00Z", "event": "intent"}\n{"time": \n'
        '{"time": "2026-12-01T10:02:00Z", "event": "done"}\n'
    )
    with pytest.raises(InputError, match=":2"):
        read_journal(path)
