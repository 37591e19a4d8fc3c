"""lscpu summary (plain text, flat and hierarchical JSON)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.parse.lscpu import parse_lscpu_summary

LSCPU = Path(__file__).parents[1] / "fixtures" / "node" / "lscpu"


def read(name: str) -> str:
    return (LSCPU / name).read_text()


@pytest.mark.parametrize("name", ["intel-2s-offline.txt", "intel-2s-offline.json", "intel-2s-offline-hierarchic.json"])
def test_intel_two_socket_with_offline_cpus_same_in_every_summary_form(name: str) -> None:
    summary = parse_lscpu_summary(read(name), source=name)
    assert summary.cpus == 64
    assert summary.online == CPUSet.parse("0-61")
    assert summary.offline == CPUSet({62, 63})
    assert (summary.sockets, summary.cores_per_socket, summary.threads_per_core) == (2, 16, 2)
    assert summary.numa_nodes == {0: CPUSet.parse("0-15,32-47"), 1: CPUSet.parse("16-31,48-61")}
    assert summary.vendor == "GenuineIntel"
    assert summary.model_name == "Intel(R) Xeon(R) Gold 6326 CPU @ 2.90GHz"


def test_amd_nps4_hierarchical_text_has_eight_nodes() -> None:
    summary = parse_lscpu_summary(read("amd-epyc-nps4.txt"))
    assert len(summary.numa_nodes) == 8
    assert summary.numa_nodes[7] == CPUSet.parse("112-127,240-255")
    assert summary.offline == CPUSet()
    assert summary.fields["L3"] == "512 MiB (16 instances)"
    assert summary.fields["Virtualization features"] is None  # section header


def test_sparse_numa_ids_are_kept() -> None:
    summary = parse_lscpu_summary(read("kvm-sparse-numa-2.32.txt"))
    assert sorted(summary.numa_nodes) == [0, 2]
    assert summary.fields["L1d cache"] == "32K"  # old util-linux size format


def test_cpu_less_numa_node_has_an_empty_set() -> None:
    text = (
        "Architecture: x86_64\nCPU(s): 4\nOn-line CPU(s) list: 0-3\n"
        "NUMA node(s): 2\nNUMA node0 CPU(s): 0-3\nNUMA node1 CPU(s):\n"
    )
    assert parse_lscpu_summary(text).numa_nodes == {0: CPUSet.parse("0-3"), 1: CPUSet()}


def test_german_locale_is_rejected_asking_for_lc_all_c() -> None:
    with pytest.raises(InputError, match=r"LC_ALL=C lscpu") as err:
        parse_lscpu_summary(read("intel-2s-de_DE.txt"), source="de.txt")
    assert "translated" in str(err.value)


@pytest.mark.parametrize(
    "text",
    [
        "Architecture: x86_64\nCPU(s): 4\nNUMA-Knoten: 1\nNUMA-Knoten0 CPU(s): 0-3\n",  # ASCII German NUMA labels
        "Architecture : x86_64\nCPU(s) : 4\n",  # French typography, space before the colon
        "架构：                           x86_64\n",  # zh_CN full-width colon
    ],
)
def test_other_translations_are_rejected(text: str) -> None:
    with pytest.raises(InputError, match="LC_ALL=C"):
        parse_lscpu_summary(text)


def test_json_labels_translated_are_rejected() -> None:
    doc = '{"lscpu": [{"field": "Architektur:", "data": "x86_64"}, {"field": "CPU(s):", "data": "4"}]}'
    with pytest.raises(InputError, match="LC_ALL=C"):
        parse_lscpu_summary(doc)


def test_truncated_json_names_the_line() -> None:
    with pytest.raises(InputError, match="truncated or malformed JSON") as err:
        parse_lscpu_summary(read("intel-2s-truncated.json"), source="lscpu.json")
    assert err.value.line is not None and err.value.source == "lscpu.json"


def test_truncated_text_with_missing_numa_lines_is_detected() -> None:
    with pytest.raises(InputError, match="'NUMA node\\(s\\): 8' but 3"):
        parse_lscpu_summary(read("amd-epyc-nps4-truncated.txt"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Architecture"),
        ("Architecture: x86_64\n", "CPU\\(s\\)"),
        ("Architecture: x86_64\nCPU(s): many\n", "expected a number"),
        ("Architecture: x86_64\nCPU(s): 4\nNUMA node0 CPU(s): 0-3\nNUMA node0 CPU(s): 0-3\n", "listed twice"),
        ("Architecture: x86_64\nCPU(s): 4\nNUMA node0 CPU(s): 0x0000000f\n", "hex mask"),
        ("Architecture: x86_64\nCPU(s): 4\nOn-line CPU(s) list: 0-3\nOff-line CPU(s) list: 3\n", "both on-line"),
        ("Architecture: x86_64\nCPU(s): 2\nOn-line CPU(s) list: 0-3\n", "CPU\\(s\\) says 2"),
        ("Architecture: x86_64\nCPU(s): 4\ngarbage line\n", "Label: value"),
        ('{"lscpu": {"field": "CPU(s):"}}', '"lscpu" list'),
        ('{"lscpu": [{"field": "CPU(s)", "data": "4"}]}', "ending in ':'"),
        ('{"lscpu": [{"field": "CPU(s):", "data": 4}]}', "string or null"),
        ('{"lscpu": [{"field": "NUMA:", "data": null, "children": {}}]}', "expected a list"),
    ],
)
def test_malformed_summaries(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_lscpu_summary(text)
