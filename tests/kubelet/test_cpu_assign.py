"""CPU allocation tables ported from the kubelet's cpu_assignment_test.go (expected values as facts)."""

from __future__ import annotations

import pytest

from tmnb.cpuset import CPUSet
from tmnb.kubelet.cpumanager.cpu_assignment import _Accumulator, take_distributed, take_packed
from tmnb.kubelet.cpumanager.topology import CPUInfo, CPUTopology, mask_of_cpus
from tmnb.kubelet.errors import CPUAllocationError
from tmnb.kubelet.topologymanager.bitmask import bits_of


def topo(rows: dict[int, tuple[int, int, int]]) -> CPUTopology:
    return CPUTopology(tuple(CPUInfo(cpu, core, socket, numa) for cpu, (core, socket, numa) in rows.items()))


SINGLE_SOCKET_HT = topo({c: (c % 4, 0, 0) for c in range(8)})
DUAL_SOCKET_HT = topo({c: (c % 6, c % 2, c % 2) for c in range(12)})
DUAL_SOCKET_NO_HT = topo({c: (c, c // 4, c // 4) for c in range(8)})
TRIPLE_SOCKET_HT = topo({c: (c // 2, s, s) for c, s in zip(range(18), [1] * 6 + [0] * 6 + [2] * 6, strict=True)})
# 2 sockets x 2 NUMA nodes x 10 cores x 2 threads: thread siblings i and i+40.
DUAL_SOCKET_MULTI_NUMA_HT = topo({c: (c % 40, (c % 40) // 20, (c % 40) // 10) for c in range(80)})
# 2 NUMA nodes x 2 sockets each.
MULTI_SOCKET_DUAL_PER_NUMA_HT = topo({c: (c % 40, (c % 40) // 10, (c % 40) // 20) for c in range(80)})


def S(text: str) -> int:  # noqa: N802 - mirrors mustParseCPUSet
    return mask_of_cpus(CPUSet.parse(text))


def acc(t: CPUTopology, cpus: str) -> _Accumulator:
    return _Accumulator(t, S(cpus), 0)


def free_sockets(a: _Accumulator) -> list[int]:
    per = a.topo.cpus_per_socket()
    return [s for s in a.sorted_sockets() if a._free(a.topo.socket_mask[s]) == per]


def free_numa(a: _Accumulator) -> list[int]:
    t = a.topo
    return [n for n in a.sorted_numa_nodes() if a._free(t.numa_mask[n]) == t.numa_mask[n].bit_count()]


def free_cores(a: _Accumulator) -> list[int]:
    per = a.topo.cpus_per_core()
    return [c for c in a.sorted_cores() if a._free(a.topo.core_mask[c]) == per]


@pytest.mark.parametrize(
    ("t", "cpus", "expect"),
    [
        (SINGLE_SOCKET_HT, "0-7", [0]),
        (SINGLE_SOCKET_HT, "1-7", []),
        (DUAL_SOCKET_HT, "0-11", [0, 1]),
        (DUAL_SOCKET_HT, "0-9,11", [1]),
        (DUAL_SOCKET_HT, "0,2-9,11", []),
        (DUAL_SOCKET_MULTI_NUMA_HT, "0-79", [0, 1]),
        (DUAL_SOCKET_MULTI_NUMA_HT, "1-79", [1]),
        (DUAL_SOCKET_MULTI_NUMA_HT, "1-78", []),
        (MULTI_SOCKET_DUAL_PER_NUMA_HT, "0-79", [0, 1, 2, 3]),
        (MULTI_SOCKET_DUAL_PER_NUMA_HT, "0-19,21-79", [0, 1, 3]),
        (MULTI_SOCKET_DUAL_PER_NUMA_HT, "0-59,61-78", [0, 1]),
        (MULTI_SOCKET_DUAL_PER_NUMA_HT, "1-19,21-38,41-60,61-78", [1]),
        (MULTI_SOCKET_DUAL_PER_NUMA_HT, "0-40,42-49,51-68,71-79", []),
    ],
)
def test_free_sockets(t, cpus, expect):
    assert sorted(free_sockets(acc(t, cpus))) == expect


@pytest.mark.parametrize(
    ("t", "cpus", "expect"),
    [
        (SINGLE_SOCKET_HT, "0-7", [0]),
        (SINGLE_SOCKET_HT, "1-7", []),
        (DUAL_SOCKET_HT, "0-11", [0, 1]),
        (DUAL_SOCKET_HT, "0-9,11", [1]),
        (DUAL_SOCKET_HT, "0,2-9,11", []),
        (DUAL_SOCKET_MULTI_NUMA_HT, "0-79", [0, 1, 2, 3]),
        (DUAL_SOCKET_MULTI_NUMA_HT, "1-79", [1, 2, 3]),
        (DUAL_SOCKET_MULTI_NUMA_HT, "1-9,11-79", [2, 3]),
        (DUAL_SOCKET_MULTI_NUMA_HT, "1-9,11-59,61-79", [3]),
        (DUAL_SOCKET_MULTI_NUMA_HT, "1-9,11-59,61-78", []),
        (MULTI_SOCKET_DUAL_PER_NUMA_HT, "0-79", [0, 1]),
        (MULTI_SOCKET_DUAL_PER_NUMA_HT, "0-9,11-79", [1]),
        (MULTI_SOCKET_DUAL_PER_NUMA_HT, "0-9,11-59,61-79", []),
    ],
)
def test_free_numa_nodes(t, cpus, expect):
    assert free_numa(acc(t, cpus)) == expect


@pytest.mark.parametrize(
    ("cpus", "sockets", "numas"),
    [("0-79", [0, 1], [0, 1, 2, 3]), ("1-79", [1], [1, 2, 3]), ("1-9,11-79", [1], [2, 3]), ("1-59,61-79", [], [1, 3])],
)
def test_free_sockets_and_numa_nodes(cpus, sockets, numas):
    a = acc(DUAL_SOCKET_MULTI_NUMA_HT, cpus)
    assert free_numa(a) == numas
    assert free_sockets(a) == sockets


@pytest.mark.parametrize(
    ("t", "cpus", "expect"),
    [
        (SINGLE_SOCKET_HT, "0-7", [0, 1, 2, 3]),
        (SINGLE_SOCKET_HT, "0-2,4-6", [0, 1, 2]),
        (SINGLE_SOCKET_HT, "0-6", [0, 1, 2]),
        (SINGLE_SOCKET_HT, "", []),
        (SINGLE_SOCKET_HT, "0-3", []),
        (DUAL_SOCKET_HT, "0-11", [0, 2, 4, 1, 3, 5]),
        (DUAL_SOCKET_HT, "1-5,7-11", [2, 4, 1, 3, 5]),
        (DUAL_SOCKET_HT, "2-5,8-11", [2, 4, 3, 5]),
    ],
)
def test_free_cores(t, cpus, expect):
    assert free_cores(acc(t, cpus)) == expect


@pytest.mark.parametrize(
    ("t", "cpus", "expect"),
    [
        (SINGLE_SOCKET_HT, "0-7", [0, 4, 1, 5, 2, 6, 3, 7]),
        (SINGLE_SOCKET_HT, "3-7", [4, 5, 6, 3, 7]),
        (DUAL_SOCKET_HT, "0-11", [0, 6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11]),
        (DUAL_SOCKET_HT, "1-11", [6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11]),
        (DUAL_SOCKET_HT, "1-5,7-11", [2, 8, 4, 10, 1, 7, 3, 9, 5, 11]),
        (TRIPLE_SOCKET_HT, "0-3,6-13", [12, 13, 0, 1, 2, 3, 6, 7, 8, 9, 10, 11]),
    ],
)
def test_free_cpus_order(t, cpus, expect):
    assert acc(t, cpus).sorted_cpus() == expect


COMMON = [
    ("take zero cpus", SINGLE_SOCKET_HT, "0-7", 0, ""),
    ("take one cpu", SINGLE_SOCKET_HT, "0-7", 1, "0"),
    ("take one cpu, some taken", SINGLE_SOCKET_HT, "1,3,5-7", 1, "6"),
    ("take two cpus", SINGLE_SOCKET_HT, "0-7", 2, "0,4"),
    ("take all cpus", SINGLE_SOCKET_HT, "0-7", 8, "0-7"),
    ("two cpus, only one core totally free", SINGLE_SOCKET_HT, "0-3,6", 2, "2,6"),
    ("a socket of cpus", DUAL_SOCKET_HT, "0-11", 6, "0,2,4,6,8,10"),
    ("a socket, multi-numa-per-socket", DUAL_SOCKET_MULTI_NUMA_HT, "0-79", 40, "0-19,40-59"),
    ("a NUMA node, multi-numa-per-socket", DUAL_SOCKET_MULTI_NUMA_HT, "0-79", 20, "0-9,40-49"),
    ("a NUMA node with 1 NUMA node taken", DUAL_SOCKET_MULTI_NUMA_HT, "10-39,50-79", 20, "10-19,50-59"),
    ("a socket and a NUMA node", DUAL_SOCKET_MULTI_NUMA_HT, "0-79", 60, "0-29,40-69"),
    ("a socket and a NUMA node, a core taken", DUAL_SOCKET_MULTI_NUMA_HT, "1-39,41-79", 60, "10-39,50-79"),
]


@pytest.mark.parametrize(
    ("name", "t", "cpus", "n", "expect"),
    [
        *COMMON,
        ("one cpu dual socket, core from socket 0", DUAL_SOCKET_HT, "1-5,7-11", 1, "2"),
        ("4 full cores, 3 from first NUMA node", DUAL_SOCKET_HT, "0-11", 8, "0,6,2,8,4,10,1,7"),
        ("32 full cores, 30 from first 3 NUMA nodes", DUAL_SOCKET_MULTI_NUMA_HT, "0-79", 64, "0-29,40-69,30,31,70,71"),
    ],
)
def test_take_packed(name, t, cpus, n, expect):
    assert bits_of(take_packed(t, S(cpus), n)) == sorted(CPUSet.parse(expect))


def test_take_packed_not_enough():
    with pytest.raises(CPUAllocationError) as info:
        take_packed(SINGLE_SOCKET_HT, S("0,2,4,6"), 5)
    assert str(info.value) == "not enough cpus available to satisfy request: requested=5, available=4"


@pytest.mark.parametrize(
    ("name", "t", "cpus", "n", "group", "expect"),
    [
        *[(name, t, cpus, n, 1, expect) for name, t, cpus, n, expect in COMMON],
        ("4 cores, 2 per NUMA", DUAL_SOCKET_HT, "0-11", 8, 1, "0,6,2,8,1,7,3,9"),
        (
            "32 cores, 8 per NUMA",
            DUAL_SOCKET_MULTI_NUMA_HT,
            "0-79",
            64,
            1,
            "0-7,10-17,20-27,30-37,40-47,50-57,60-67,70-77",
        ),
        ("24 cores over first 3 NUMA", DUAL_SOCKET_MULTI_NUMA_HT, "0-79", 48, 1, "0-7,10-17,20-27,40-47,50-57,60-67"),
        (
            "24 cores, all but 2 from first NUMA",
            DUAL_SOCKET_MULTI_NUMA_HT,
            "1-29,32-39,41-69,72-79",
            48,
            1,
            "1-8,10-17,20-27,41-48,50-57,60-67",
        ),
        (
            "24 cores over last 3 NUMA",
            DUAL_SOCKET_MULTI_NUMA_HT,
            "2-29,31-39,42-69,71-79",
            48,
            1,
            "10-17,20-27,31-38,50-57,60-67,71-78",
        ),
        (
            "8 cores, 2 per NUMA",
            DUAL_SOCKET_MULTI_NUMA_HT,
            "0-2,10-12,20-22,30-32,40-41,50-51,60-61,70-71",
            16,
            1,
            "0-1,10-11,20-21,30-31,40-41,50-51,60-61,70-71",
        ),
        ("one cpu, core from socket 0", DUAL_SOCKET_HT, "1-5,7-11", 1, 1, "1"),
        ("one cpu, group 2 falls back to packed", DUAL_SOCKET_HT, "1-5,7-11", 1, 2, "2"),
        ("13 cores over first 2 NUMA", DUAL_SOCKET_MULTI_NUMA_HT, "0-79", 26, 1, "0-6,10-16,40-45,50-55"),
        ("13 cores over first 2 NUMA, group 2", DUAL_SOCKET_MULTI_NUMA_HT, "0-79", 26, 2, "0-6,10-15,40-46,50-55"),
        (
            "31 cores, spill to NUMA 0,1",
            DUAL_SOCKET_MULTI_NUMA_HT,
            "0-79",
            62,
            1,
            "0-7,10-17,20-27,30-37,40-47,50-57,60-66,70-76",
        ),
        (
            "31 cores, spill to NUMA 0,1,2 group 2",
            DUAL_SOCKET_MULTI_NUMA_HT,
            "0-79",
            62,
            2,
            "0-7,10-17,20-27,30-36,40-47,50-57,60-67,70-76",
        ),
        (
            "31 cores, spill to NUMA 2,3 for balance",
            DUAL_SOCKET_MULTI_NUMA_HT,
            "0-8,10-18,20-39,40-48,50-58,60-79",
            62,
            1,
            "0-7,10-17,20-27,30-37,40-46,50-56,60-67,70-77",
        ),
        (
            "31 cores, spill to NUMA 0,2,3 for balance group 2",
            DUAL_SOCKET_MULTI_NUMA_HT,
            "0-8,10-18,20-39,40-48,50-58,60-79",
            62,
            2,
            "0-7,10-16,20-27,30-37,40-47,50-56,60-67,70-77",
        ),
        (
            "bestRemainder has enough CPUs",
            DUAL_SOCKET_MULTI_NUMA_HT,
            "0-3,10-13,20-23,30-36,40-43,50-53,60-63,70-76",
            34,
            1,
            "0-3,10-13,20-23,30-34,40-43,50-53,60-63,70-74",
        ),
    ],
)
def test_take_distributed(name, t, cpus, n, group, expect):
    assert bits_of(take_distributed(t, S(cpus), n, group)) == sorted(CPUSet.parse(expect))
