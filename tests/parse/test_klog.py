"""Kubelet log lines as journalctl prints them: prefixes, klog text and JSON, years, names, bad lines."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tmnb.parse.klog import parse_kubelet_log
from tmnb.parse.klog_names import NAMES
from tmnb.parse.klog_values import format_value, parse_pairs, parse_quoted

JOURNAL = Path(__file__).parents[1] / "fixtures" / "node" / "journal"
DEC = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def read(name: str, reference: datetime = DEC):
    return parse_kubelet_log((JOURNAL / name).read_text(), reference=reference)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_short_iso_lines_give_time_level_source_message_and_values() -> None:
    log = read("short-iso.txt")
    assert (log.unreadable, log.markers) == (0, 1)
    denied = next(r for r in log.records if r.name == "topology_affinity_error")
    assert denied.time == at("2026-12-02T09:22:05.771090")  # the klog header, in the prefix's +0100
    assert (denied.level, denied.source, denied.message) == ("I", "kubelet.go:2357", "Pod admission denied")
    assert denied.values == {
        "podUID": "2b9c6a3e-0f1d-4b8e-9c7a-5d4e3f2a1b0c",
        "pod": "app/big-5f6b-9xq7z",
        "reason": "TopologyAffinityError",
        "message": "Resources cannot be allocated with Topology locality",
    }
    assert (denied.host, denied.ident, denied.pid, denied.format) == ("w1", "kubelet", 4501, "klog")
    hints = next(r for r in log.records if r.message == "TopologyHints")
    assert hints.values["hints"]["cpu"][2] == {"NUMANodeAffinity": 3, "Preferred": False}  # JSON values decoded
    stopped = next(r for r in log.records if r.name == "kubelet_stop")
    assert (stopped.time, stopped.level, stopped.source, stopped.format) == (
        at("2026-12-02T09:15:30"),
        None,
        "systemd",
        "text",
    )


def test_every_line_that_matters_is_named() -> None:
    names = [r.name for r in read("short-iso.txt").records if r.name]
    assert names == [
        "kubelet_stop",
        "kubelet_start",
        "kubelet_version",
        "topology_manager_created",
        "cpu_checkpoint_failed",
        "container_manager_failed",
        "kubelet_exit",
        "kubelet_start",
        "kubelet_version",
        "config_invalid",
        "kubelet_exit",
        "kubelet_start",
        "kubelet_version",
        "topology_manager_created",
        "topology_hints",
        "topology_hints",
        "topology_best_hint",
        "topology_admit",
        "topology_hints",
        "topology_best_hint",
        "topology_affinity_error",
        "smt_alignment_error",
        "admission_denied",
    ]
    checkpoint = next(r for r in read("short-iso.txt").records if r.name == "cpu_checkpoint_failed")
    assert checkpoint.level == "E" and checkpoint.values["err"].startswith(
        'could not restore state from checkpoint: configured policy "none" differs from state checkpoint policy'
    )


def test_the_names_the_fixtures_cover() -> None:
    """Every documented name comes out of one of the fixtures, and nothing undocumented does."""
    seen = {r.name for f in JOURNAL.iterdir() for r in read(f.name).records if r.name}
    assert seen == set(NAMES)


def test_short_prefix_across_new_year_takes_the_years_from_the_capture() -> None:
    log = read("short-new-year.txt", reference=datetime(2027, 1, 1, 0, 10, tzinfo=UTC))
    assert [r.time for r in log.records] == [
        at("2026-12-31T23:59:58.990001"),
        at("2026-12-31T23:59:59"),
        at("2027-01-01T00:00:01"),
        at("2027-01-01T00:00:02.000417"),
    ]


def test_klog_header_year_comes_from_the_prefix_even_across_new_year() -> None:
    line = '2027-01-01T00:00:00+0000 w1 kubelet[9]: I1231 23:59:59.999000       9 kubelet.go:2303] "Starting kubelet main sync loop"'  # noqa: E501
    (record,) = parse_kubelet_log([line], reference=datetime(2030, 6, 1, tzinfo=UTC)).records
    assert record.time == at("2026-12-31T23:59:59.999")


def test_lines_without_prefix_take_the_year_before_the_reference() -> None:
    december = 'I1231 23:50:00.000000    7 server.go:529] "Kubelet version" kubeletVersion="v1.36.2"'
    january = 'I0101 00:05:00.000000    7 kubelet.go:2303] "Starting kubelet main sync loop"'
    times = [r.time for r in parse_kubelet_log([december, january], reference=at("2027-01-01T00:10:00")).records]
    assert times == [at("2026-12-31T23:50:00"), at("2027-01-01T00:05:00")]
    (leap,) = parse_kubelet_log(['I0229 12:00:00.5 7 a.go:1] "x"'], reference=at("2029-03-01T00:00:00")).records
    assert leap.time == at("2028-02-29T12:00:00.5")  # the latest year that has a Feb 29


def test_json_format() -> None:
    log = read("json.txt")
    version, created, checkpoint, denied = log.records
    assert version.time == at("2026-12-02T09:15:32.105113") and version.format == "json"
    assert (version.level, version.source, version.values) == ("I", "app/server.go:529", {"kubeletVersion": "v1.34.3"})
    assert created.values["topologyPolicyOptions"] == {"prefer-closest-numa-nodes": "true"}
    assert (checkpoint.level, checkpoint.name) == ("E", "memory_checkpoint_failed")  # no "v": an error entry
    assert denied.name == "topology_affinity_error"
    assert denied.values["pod"] == {"name": "big-5f6b-9xq7z", "namespace": "app"}


def test_no_prefix_multi_line_values_and_bare_systemd_lines() -> None:
    log = read("cat.txt")
    assert log.unreadable == 0
    swap = next(r for r in log.records if r.message == "Swap is on")
    assert swap.values == {"/proc/swaps contents": "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
                           "/swap.img                               file\t\t3954684\t\t1451840\t\t-1"}  # fmt: skip
    assert [r.name for r in log.records] == ["kubelet_version", None, "command_failed", "kubelet_exit", "kubelet_start"]
    assert log.records[-1].time is None  # journalctl -o cat drops systemd's times


def test_unstructured_lines_of_old_kubelets() -> None:
    log = read("unstructured-1.16.txt", reference=datetime(2019, 11, 5, tzinfo=UTC))
    assert [r.name for r in log.records] == [
        "topology_manager_created",
        "topology_admit_check",
        "topology_hints",
        "topology_hints",
        "topology_admit",
        None,
    ]
    assert log.records[0].message == "[topologymanager] Creating topology manager with single-numa-node policy"
    assert log.records[0].values == {}
    flag = log.records[-1]
    assert (flag.format, flag.level, flag.source, flag.time) == ("text", None, "kubelet", at("2019-11-04T15:05:40"))


def test_lines_in_an_unknown_format_are_counted_not_fatal() -> None:
    lines = [
        'level=info msg="not the kubelet\'s format"',
        'I1202 10:15:32.105113    4242 server.go:529] "Kubelet version" kubeletVersion="v1.34.3"',
        "",
        "-- Boot 4d2c8e0f1a2b4c3d --",
        '{"not": "a kubelet entry"}',
        "\x00\x01 binary",
    ]
    log = parse_kubelet_log(lines, reference=DEC)
    assert len(log.records) == 1 and log.records[0].name == "kubelet_version"
    assert log.unreadable == 3 and log.markers == 1
    assert [n for n, _ in log.examples] == [1, 5, 6]


def test_a_broken_structured_line_keeps_its_header() -> None:
    (record,) = parse_kubelet_log(['E1202 10:00:00.1 1 x.go:1] "unterminated msg key=1'], reference=DEC).records
    assert (record.level, record.source, record.values) == ("E", "x.go:1", {})
    assert record.message == '"unterminated msg key=1'


def test_legacy_reason_spelling_is_a_topology_affinity_error() -> None:
    line = 'I1202 10:00:00.1 1 kubelet.go:1] "Pod admission denied" pod="a/b" reason="Topology Affinity Error"'
    assert parse_kubelet_log([line], reference=DEC).records[0].name == "topology_affinity_error"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r'"a \"b\" \\ \n\t\u00e9\x41"', 'a "b" \\ \n\téA'),
        ('"unterminated', None),
        ('""', ""),
    ],
)
def test_go_quoted_strings(text: str, expected: str | None) -> None:
    got = parse_quoted(text, 0)
    assert (got[0] if got else None) == expected


def test_key_values() -> None:
    assert parse_pairs(' a=1 b=2.5 c=true d=<nil> e="x y" f={"k":[1,2]} g={NUMANodeAffinity:<nil> Preferred:true}') == {
        "a": 1,
        "b": 2.5,
        "c": True,
        "d": None,
        "e": "x y",
        "f": {"k": [1, 2]},
        "g": "{NUMANodeAffinity:<nil> Preferred:true}",
    }
    assert parse_pairs(" /proc/swaps contents=<") == {"/proc/swaps contents": "<"}


def test_the_documented_names_are_the_parsers() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "collectors.md").read_text()
    section = doc.split("### The kubelet journal excerpt", 1)[1]
    assert set(re.findall(r"^\| `([a-z_]+)` \|", section, re.M)) == set(NAMES)


def test_a_reference_on_new_years_eve_puts_january_lines_in_the_next_year() -> None:
    january = 'I0101 00:00:01.000000    7 kubelet.go:2303] "Starting kubelet main sync loop"'
    (record,) = parse_kubelet_log([january], reference=at("2026-12-31T23:00:00")).records
    assert record.time == at("2027-01-01T00:00:01")  # within the clock-skew day after the reference


@given(
    st.recursive(
        st.text(max_size=6) | st.integers(-(2**40), 2**40) | st.booleans(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
        max_leaves=8,
    )
)
def test_a_value_written_as_klog_writes_it_reads_back(value):
    """The sandbox's kubelets write with ``format_value`` and the postmortem reads with ``parse_pairs``."""
    assert parse_pairs(f"key={format_value(value)}") == {"key": value}
