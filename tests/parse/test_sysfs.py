"""sysfs NUMA node directories: cpulist, meminfo, distance, per-size hugepages."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.parse.sysfs import (
    parse_distance,
    parse_hugepages,
    parse_node_meminfo,
    read_numa_nodes,
)

SYSFS = Path(__file__).parents[1] / "fixtures" / "node" / "sysfs"
INTEL = SYSFS / "intel-2s" / "sys" / "devices" / "system" / "node"
SPARSE = SYSFS / "kvm-sparse" / "sys" / "devices" / "system" / "node"


def test_two_socket_tree() -> None:
    node0, node1 = read_numa_nodes(INTEL)
    assert node0.id == 0 and node0.cpus == CPUSet.parse("0-15,32-47")
    assert node0.memory_total == 65850288 * 1024
    assert node0.memory_free == 60116020 * 1024
    assert [(h.size, h.total, h.free) for h in node0.hugepages] == [("2Mi", 1024, 1000), ("1Gi", 4, 2)]
    assert node1.distances == {0: 21, 1: 10}


def test_distance_row_follows_online_nodes_not_possible() -> None:
    # possible is 0-7 on this box; the kernel prints one distance per *online* node
    assert (INTEL / "possible").read_text().strip() == "0-7"
    assert read_numa_nodes(INTEL)[0].distances == {0: 10, 1: 21}


def test_sparse_node_ids_key_the_distances() -> None:
    nodes = read_numa_nodes(SPARSE)
    assert [n.id for n in nodes] == [0, 2]
    assert nodes[1].distances == {0: 20, 2: 10}


def test_meminfo_units_hugepage_counts_and_odd_alignment() -> None:
    values = parse_node_meminfo((INTEL / "node0" / "meminfo").read_text(), node_id=0, source="meminfo")
    assert values["HugePages_Total"] == 1024  # a count, no kB
    assert values["FileHugePages"] == 0  # the kernel's one-column-off line
    assert values["Active(anon)"] == 10640 * 1024


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Node 0 MemTotal:       16094344 kB\n", "no MemFree"),
        ("Node 1 MemTotal:       16094344 kB\nNode 1 MemFree: 1 kB\n", "expected node 0"),
        ("Node 0 MemTotal:       16094344 MB\n", "Key: value"),
        ("Node 0 MemTotal:       16094", "no MemFree"),
        ("MemTotal:       16094344 kB\n", "Key: value"),
    ],
)
def test_malformed_meminfo(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_node_meminfo(text, node_id=0, source="meminfo")


@pytest.mark.parametrize("text", ["", "10 x", "10,21", "-1 10"])
def test_malformed_distance(text: str) -> None:
    with pytest.raises(InputError, match="whitespace-separated integers"):
        parse_distance(text, source="distance")


def test_distance_count_must_match_online_nodes(tmp_path: Path) -> None:
    tree = tmp_path / "node"
    shutil.copytree(INTEL, tree)
    (tree / "node0" / "distance").write_text("10 21 21\n")
    with pytest.raises(InputError, match=r"3 distances for 2 online nodes \[0, 1\]"):
        read_numa_nodes(tree)
    problems: list[InputError] = []
    node0, node1 = read_numa_nodes(tree, report=problems.append)
    assert node0.distances == {} and node1.distances == {0: 21, 1: 10}
    assert [p.source for p in problems] == [str(tree / "node0" / "distance")]


def test_hugepages_directory_names_and_counts() -> None:
    files = {"nr_hugepages": "2\n", "free_hugepages": "1\n", "surplus_hugepages": "0\n"}
    assert parse_hugepages("hugepages-1048576kB", files, source="hp").size == "1Gi"
    with pytest.raises(InputError, match="hugepages-<size>kB"):
        parse_hugepages("hugepages-2M", files, source="hp")
    with pytest.raises(InputError, match="page count"):
        parse_hugepages("hugepages-2048kB", {**files, "free_hugepages": ""}, source="hp")
    with pytest.raises(InputError, match="missing surplus_hugepages"):
        parse_hugepages("hugepages-2048kB", {"nr_hugepages": "1", "free_hugepages": "1"}, source="hp")


def test_missing_file_in_a_copied_tree(tmp_path: Path) -> None:
    tree = tmp_path / "node"
    shutil.copytree(INTEL, tree)
    (tree / "node1" / "meminfo").unlink()
    with pytest.raises(InputError, match=r"no meminfo: the node.s memory is unknown") as err:
        read_numa_nodes(tree)
    assert err.value.source.endswith("node1/meminfo")


def test_not_a_node_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no nodeN directories"):
        read_numa_nodes(tmp_path)
    with pytest.raises(InputError, match="expected a directory"):
        read_numa_nodes(tmp_path / "absent")
