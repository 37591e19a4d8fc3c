"""CPU allocation under the options that change the packed walk, ported from the kubelet's own tables
(cpu_assignment_test.go, policy_static_test.go; the same in 1.33-1.36 apart from the logger argument and
two cases added in 1.34). Expected values are the tables' facts; the topologies are the tables' literals
(tests/fixtures/kubelet/cpumanager_topologies.json, read from policy_test.go).

Two things the tables check less tightly than the conformance cases: ``TestTakeByTopology*`` compare sets
(so the order of a Go ``cpuset.New(...)`` is no fact), and most ``TestStaticPolicyAddWithUncoreAlignment``
cases check only which uncore caches the pod's CPUs are in.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.kubelet.cpumanager.cpu_assignment import _Accumulator, take_distributed, take_packed, take_packed_with
from tmnb.kubelet.cpumanager.policy_static import CPUStaticPolicy
from tmnb.kubelet.cpumanager.topology import CPUInfo, CPUTopology, mask_of_cpus
from tmnb.kubelet.options import CPUManagerOptions
from tmnb.kubelet.pod import Pod
from tmnb.kubelet.topologymanager.bitmask import bits_of
from tmnb.kubelet.topologymanager.hints import TopologyHint

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "kubelet" / "cpumanager_topologies.json"


@cache
def go_topo(name: str) -> CPUTopology:
    rows = json.loads(FIXTURE.read_text())["topologies"][name]["cpus"]
    return CPUTopology(tuple(CPUInfo(cpu, core, socket, numa, uncore) for cpu, core, socket, numa, uncore in rows))


def S(text: str) -> int:  # noqa: N802 - mirrors mustParseCPUSet
    return mask_of_cpus(CPUSet.parse(text))


def as_set(mask: int) -> str:
    return str(CPUSet(bits_of(mask)))


# --------------------------------------------------------------------------- takeByTopologyNUMAPacked


@pytest.mark.parametrize(
    ("description", "topo", "available", "n", "expect"),
    [
        (
            "take cpus from two full UncoreCaches and partial from a single UncoreCache",
            "topoUncoreSingleSocketNoSMT",
            "1-15",
            10,
            "1,2,4,5,6,7,8,9,10,11",
        ),
        ("take one cpu from dual socket with HT - core from Socket 0", "topoDualSocketHT", "1-5,7-11", 1, "1"),
        ("take first available UncoreCache from first socket", "topoUncoreDualSocketNoSMT", "0-15", 4, "0-3"),
        ("take all available UncoreCache from first socket", "topoUncoreDualSocketNoSMT", "2-15", 6, "2-7"),
        ("take first available UncoreCache from second socket", "topoUncoreDualSocketNoSMT", "8-15", 4, "8-11"),
        (
            "take first available UncoreCache from available NUMA",
            "topoUncoreSingleSocketMultiNuma",
            "3,4-8,12",
            2,
            "4,5",
        ),
        (
            "take cpus from best available UncoreCache group of multi uncore cache single socket - SMT enabled",
            "topoUncoreSingleSocketSMT",
            "2-3,10-11,4-7,12-15",
            6,
            "4,5,6,12,13,14",
        ),
        (
            "take cpus from multiple UncoreCache of single socket - SMT enabled",
            "topoUncoreSingleSocketSMT",
            "1-7,9-15",
            10,
            "4-7,12-15,1,9",
        ),
    ],
)
def test_take_packed_uncore(description, topo, available, n, expect):
    """TestTakeByTopologyNUMAPacked, the PreferAlignByUncoreCache cases."""
    assert as_set(take_packed_with(go_topo(topo), S(available), n, spread=False, uncore=True)) == str(
        CPUSet.parse(expect)
    )


@pytest.mark.parametrize(
    ("description", "topo", "available", "n", "expect"),
    [
        ("take a socket of cpus from single socket with HT, 3 cpus", "topoSingleSocketHT", "0-7", 3, "0,1,2"),
        ("take a socket of cpus from dual socket with HT, 2 cpus", "topoDualSocketHT", "0-11", 2, "0,2"),
        ("take a socket of cpus from dual socket with HT, 3 cpus", "topoDualSocketHT", "0-11", 3, "0,2,4"),
        ("take a socket of cpus from dual socket with HT, 6 cpus", "topoDualSocketHT", "0-11", 6, "0,2,4,6,8,10"),
        ("take cpus from dual socket with HT, 8 cpus", "topoDualSocketHT", "0-11", 8, "0,2,4,6,8,10,1,3"),
        ("take a socket of cpus from dual socket without HT, 2 cpus", "topoDualSocketNoHT", "0-7", 2, "0,1"),
        (
            "take a socket of cpus from dual socket with multi numa per socket and HT, 12 cpus",
            "topoDualSocketMultiNumaPerSocketHT",
            "0-79",
            8,
            "0-7",
        ),
        (
            "take a socket of cpus from quad socket four way with HT, 12 cpus",
            "topoQuadSocketFourWayHT",
            "0-287",
            12,
            "0-2,9-10,13-14,21-22,25-26,33",
        ),
    ],
)
def test_take_packed_spread(description, topo, available, n, expect):
    """TestTakeByTopologyWithSpreadPhysicalCPUsPreferredOption (DistributeCPUsAcrossCores: spread sorting)."""
    assert as_set(take_packed_with(go_topo(topo), S(available), n, spread=True, uncore=False)) == str(
        CPUSet.parse(expect)
    )


def test_spread_and_uncore_memoised_apart_from_the_plain_walk():
    """The memo is shared by every policy on a topology: one free mask and count, three answers."""
    topo = go_topo("topoDualSocketHT")
    free = S("1-5,7-11")
    assert as_set(take_packed(topo, free, 1)) == "2"  # TestTakeByTopologyNUMAPacked, no option
    assert as_set(take_packed_with(topo, free, 1, spread=False, uncore=True)) == "1"
    assert as_set(take_packed(topo, free, 1)) == "2"
    # hand-worked (core = cpu % 4): packed takes core 0 whole, then core 1's first thread; spread the lowest ids
    assert as_set(take_packed(go_topo("topoSingleSocketHT"), S("0-7"), 3)) == "0-1,4"
    assert as_set(take_packed_with(go_topo("topoSingleSocketHT"), S("0-7"), 3, spread=True, uncore=False)) == "0-2"


def test_spread_reaches_the_distributed_walk_packed_steps():
    """takeByTopologyNUMADistributed hands its strategy to each packed step (the kubelet refuses the two
    options together, so only a direct call gets here). 8 CPUs on topoDualSocketHT go 4 to each NUMA
    node (TestTakeByTopologyNUMADistributed: 0,6,2,8,1,7,3,9, two whole cores each); hand-worked with
    spread, each node's packed step takes its four lowest ids instead."""
    topo = go_topo("topoDualSocketHT")
    assert as_set(take_distributed(topo, S("0-11"), 8, 1)) == "0-3,6-9"
    assert as_set(take_distributed(topo, S("0-11"), 8, 1, spread=True)) == "0-7"


def test_uncore_steps_of_the_accumulator():
    """The sort and the free list the uncore steps walk (hand-worked on topoUncoreSingleSocketMultiNuma
    with CPUs 3-8 and 12 free: NUMA node 1 holds fewer free CPUs, so its caches come first, then by
    free CPUs and id; only cache 1 is whole)."""
    acc = _Accumulator(go_topo("topoUncoreSingleSocketMultiNuma"), S("3-8,12"), 2)
    assert acc.sorted_uncore_caches() == [2, 3, 0, 1]
    acc.take_partial_uncore_cache(2)  # one free core, two needed: nothing taken
    assert acc.result == 0
    acc.take_partial_uncore_cache(1)
    assert as_set(acc.result) == "4-5"


# --------------------------------------------------------------------------- the uncore cache id


def test_uncore_cache_falls_back_to_the_socket():
    """topology.go getUncoreCacheID: a core without cadvisor uncore caches takes its socket id."""
    topo = CPUTopology.from_json(
        [
            {"cpu": 0, "core": 0, "socket": 0, "numa": 0},
            {"cpu": 1, "core": 1, "socket": 1, "numa": 1, "uncore_cache": None},
            {"cpu": 2, "core": 2, "socket": 1, "numa": 1, "uncore_cache": 7},
        ]
    )
    assert [c.uncore_of for c in topo.cpus] == [0, 1, 7]
    assert topo.uncore.mask == {0: 0b001, 1: 0b010, 7: 0b100}
    assert topo.uncore.cpus_per_uncore == 1


def test_uncore_cache_id_checked():
    with pytest.raises(InputError, match="uncore_cache must be a non-negative integer"):
        CPUTopology((CPUInfo(0, 0, 0, 0, -1),))
    with pytest.raises(InputError, match="optional uncore_cache"):
        CPUTopology.from_json([{"cpu": 0, "core": 0, "socket": 0, "numa": 0, "uncore_cache": "x"}])


# --------------------------------------------------------------------------- the static policy


def multi_container_pod(uid: str, requests: list[str]) -> Pod:
    """makeMultiContainerPod: app containers appContainer-<i> with cpu request = limit and 1G memory."""
    containers = [
        {
            "name": f"appContainer-{i}",
            "resources": {"requests": {"cpu": r, "memory": "1G"}, "limits": {"cpu": r, "memory": "1G"}},
        }
        for i, r in enumerate(requests)
    ]
    return Pod.from_pod_dict({"metadata": {"name": "pod", "uid": uid}, "spec": {"containers": containers}})


def uncore_of(topo: CPUTopology, uncore: int) -> int:
    return topo.uncore.mask[uncore]


FULL_UNCORE = {"full_pcpus_only": True, "prefer_align_cpus_by_uncorecache": True}
UNCORE = {"prefer_align_cpus_by_uncorecache": True}
STRICT_UNCORE = {"strict_cpu_reservation": True, "prefer_align_cpus_by_uncorecache": True}

# (description, topology, reserved, options, default: None = every CPU, else (topology whose CPUs, minus
# these CPUs), requests, expected cpuset of appContainer-0 or None, expected uncore cache ids or None)
ADD_WITH_UNCORE = [
    (
        "GuPodSingleContainerSaturating, DualSocketHTUncore, ExpectAllocOneUncore, FullUncoreAvail",
        "topoDualSocketSingleNumaPerSocketSMTUncore",
        "0,1,96,97,192,193,288,289",
        FULL_UNCORE,
        ("topoDualSocketSingleNumaPerSocketSMTUncore", "uncore:0,12"),
        ["16000m"],
        None,
        {1},
    ),
    (
        "GuPodMainAndSidecarContainer, DualSocketHTUncore, ExpectAllocOneUncore, FullUncoreAvail",
        "topoDualSocketSingleNumaPerSocketSMTUncore",
        "0,1,96,97,192,193,288,289",
        FULL_UNCORE,
        ("topoDualSocketSingleNumaPerSocketSMTUncore", "uncore:0,12"),
        ["12000m", "2000m"],
        None,
        {1},
    ),
    (
        "GuPodSidecarAndMainContainer, DualSocketHTUncore, ExpectAllocOneUncore, FullUncoreAvail",
        "topoDualSocketSingleNumaPerSocketSMTUncore",
        "0,1,96,97,192,193,288,289",
        FULL_UNCORE,
        ("topoDualSocketSingleNumaPerSocketSMTUncore", "uncore:0,12"),
        ["2000m", "12000m"],
        None,
        {1},
    ),
    (
        "GuPodMainAndManySidecarContainer, DualSocketHTUncore, ExpectAllocOneUncore, FullUncoreAvail",
        "topoDualSocketSingleNumaPerSocketSMTUncore",
        "0,1,96,97,192,193,288,289",
        FULL_UNCORE,
        ("topoDualSocketSingleNumaPerSocketSMTUncore", "uncore:0,12"),
        ["10000m", "2000m", "2000m", "2000m"],
        None,
        {1},
    ),
    (
        "GuPodMainAndSidecarContainer, DualSocketHTUncore, ExpectAllocTwoUncore",
        "topoDualSocketSingleNumaPerSocketSMTUncore",
        "0,1,96,97,192,193,288,289",
        FULL_UNCORE,
        None,
        ["12000m", "2000m"],
        None,
        {0, 1},
    ),
    (
        "GuPodSingleContainer, SingleSocketSMTSmallUncore, ExpectAllocOneUncore",
        "topoSingleSocketSingleNumaPerSocketSMTSmallUncore",
        "0,1,64,65",
        FULL_UNCORE,
        None,
        ["8000m"],
        None,
        {1},
    ),
    (
        "GuPodSingleContainer, SingleSocketSMTSmallUncore, ExpectAllocTwoUncore",
        "topoSingleSocketSingleNumaPerSocketSMTSmallUncore",
        "0,1,64,65",
        FULL_UNCORE,
        ("topoSingleSocketSingleNumaPerSocketSMTSmallUncore", "uncore:1"),
        ["12000m"],
        None,
        {0, 2},
    ),
    (
        "GuPodSingleContainer, SingleSocketNoSMTSmallUncore, FragmentedUncore, ExpectAllocThreeUncore",
        "topoSingleSocketSingleNumaPerSocketNoSMTSmallUncore",
        "0-3",
        FULL_UNCORE,
        ("topoSingleSocketSingleNumaPerSocketNoSMTSmallUncore", "uncore:2,3,5"),
        ["12000m"],
        None,
        {1, 4, 6},
    ),
    (
        "GuPodMultiContainer, DualSocketSMTUncore, FragmentedUncore, ExpectAllocOneUncore",
        "topoSmallDualSocketSingleNumaPerSocketNoSMTUncore",
        "0,1,32,33",
        FULL_UNCORE,
        ("topoSmallDualSocketSingleNumaPerSocketNoSMTUncore", "uncore:1"),
        ["4000m", "2000m"],
        None,
        {0},
    ),
    (
        "GuPodMultiContainer, DualSocketSMTUncore, FragmentedUncore, ExpectAllocTwoUncore",
        "topoSmallDualSocketSingleNumaPerSocketNoSMTUncore",
        "0,1,32,33",
        FULL_UNCORE,
        ("topoSmallDualSocketSingleNumaPerSocketNoSMTUncore", "uncore:1"),
        ["4000m", "4000m"],
        None,
        {0, 2},
    ),
    (
        "GuPodMultiContainer, LargeSingleSocketSMTUncore, PartialUncoreFit, ExpectAllocTwoUncore",
        "topoLargeSingleSocketSingleNumaPerSocketSMTUncore",
        "0,1,128,129",
        FULL_UNCORE,
        ("topoLargeSingleSocketSingleNumaPerSocketSMTUncore", "8,9,136,137"),
        ["12000m", "12000m"],
        None,
        {0, 1},
    ),
    (
        "GuPodMultiContainer, LargeSingleSocketSMTUncore, PartialUncoreNoFit, ExpectAllocTwoUncore",
        "topoLargeSingleSocketSingleNumaPerSocketSMTUncore",
        "0,1,128,129",
        FULL_UNCORE,
        ("topoLargeSingleSocketSingleNumaPerSocketSMTUncore", "8,9,136,137"),
        ["14000m", "14000m"],
        None,
        {2, 3},
    ),
    (
        "GuPodLargeSingleContainer, DualSocketNoSMTUncore, FullNUMAsAvail, ExpectAllocFullNUMA",
        "topoDualSocketMultiNumaPerSocketUncore",
        "0-3",
        FULL_UNCORE,
        None,
        ["48000m"],
        None,
        {6, 7, 8, 9, 10, 11},
    ),
    (
        "GuPodSingleContainer, MonoUncoreCacheHT, ExpectAllocCPUSet",
        "topoDualSocketSubNumaPerSocketHTMonolithicUncore",
        "0,1,120,121",
        FULL_UNCORE,
        None,
        ["6000m"],
        "2,3,4,122,123,124",
        {0},
    ),
    (
        "GuPodSingleContainer, MonoUncoreCacheHT, ExpectAllocCPUSet (fragmented)",
        "topoSingleSocketSingleNumaPerSocketPCoreHTMonolithicUncore",
        "0,1",
        FULL_UNCORE,
        ("topoSingleSocketSingleNumaPerSocketPCoreHTMonolithicUncore", "4-7"),
        ["6000m"],
        "2,3,8,9,16,17",
        {0},
    ),
    (
        "GuPodSingleContainer, LargeSingleSocketUncore, ExpectAllocOneUncore",
        "topoLargeSingleSocketSingleNumaPerSocketUncore",
        "0-3",
        FULL_UNCORE,
        None,
        ["8000m"],
        None,
        {1},
    ),
    (
        "GuPodSingleContainer, MonoUncoreCacheHT, ExpectFragmentedAllocCPUSet",
        "topoSingleSocketSingleNumaPerSocketUncore",
        "0,1",
        FULL_UNCORE,
        ("topoSingleSocketSingleNumaPerSocketUncore", "6-9,12-15,18-19"),
        ["12000m"],
        "2,3,4,5,10,11,16,17,20,21,22,23",
        {0},
    ),
    (
        "GuPodSingleContainer, SingleSocketUncore, PartialUncore, ExpectBestEffortAllocTwoUncore",
        "topoSmallSingleSocketSingleNumaPerSocketNoSMTUncore",
        "0-3",
        FULL_UNCORE,
        ("topoSmallSingleSocketSingleNumaPerSocketNoSMTUncore", "8-11,16-19,24-27"),
        ["8000m"],
        None,
        {0, 1},
    ),
    (
        "odd integer cpu required on smt-disabled",
        "topoSmallSingleSocketSingleNumaPerSocketNoSMTUncore",
        "0-3",
        FULL_UNCORE,
        None,
        ["5000m"],
        "8-12",
        None,
    ),
    (
        "odd integer required on smt-enabled",
        "topoSingleSocketSingleNumaPerSocketSMTSmallUncore",
        "0,1,64,65",
        UNCORE,
        None,
        ["3000m"],
        "2,3,66",
        None,
    ),
    (
        "odd integer required on odd integer partial uncore",
        "topoSingleSocketSingleNumaPerSocketSMTSmallUncore",
        "0,1,64",
        UNCORE,
        None,
        ["3000m"],
        "2,65,66",
        None,
    ),
    (
        "even integer required on odd integer partial uncore",
        "topoSingleSocketSingleNumaPerSocketSMTSmallUncore",
        "0,1,64",
        UNCORE,
        None,
        ["4000m"],
        "4,5,68,69",
        None,
    ),
    (
        "large odd integer required on smt-enabled",
        "topoSingleSocketSingleNumaPerSocketSMTSmallUncore",
        "0,1,64",
        UNCORE,
        None,
        ["11000m"],
        "2,65,66,4,5,6,7,68,69,70,71",
        None,
    ),
    (
        "odd integer required on HT monolithic uncore",
        "topoDualSocketSubNumaPerSocketHTMonolithicUncore",
        "0,1,120",
        UNCORE,
        ("topoSingleSocketSingleNumaPerSocketSMTSmallUncore", ""),
        ["5000m"],
        "2,3,121,122,123",
        None,
    ),
    (
        "even integer required on HT monolithic uncore",
        "topoDualSocketSubNumaPerSocketHTMonolithicUncore",
        "0,1,120",
        UNCORE,
        ("topoSingleSocketSingleNumaPerSocketSMTSmallUncore", ""),
        ["4000m"],
        "2,3,122,123",
        None,
    ),
    (
        "GuPodSingleContainer, SingleSocketSMTSmallUncore, StrictReserveCompatability",
        "topoSingleSocketSingleNumaPerSocketSMTSmallUncore",
        "0,1,64,65",
        STRICT_UNCORE,
        None,
        ["2000m"],
        "2,66",
        None,
    ),
    (
        "GuPodSingleContainer, DualSocketHTMonoUncore, StrictReserveCompatability",
        "topoDualSocketSubNumaPerSocketHTMonolithicUncore",
        "0,1,120,121",
        STRICT_UNCORE,
        None,
        ["4000m"],
        "2,3,122,123",
        None,
    ),
]


def _default(topo_name: str, default: tuple[str, str] | None) -> int:
    if default is None:
        return go_topo(topo_name).all_mask
    name, minus = default
    cpus = go_topo(name).all_mask
    if minus.startswith("uncore:"):
        for uncore in minus.removeprefix("uncore:").split(","):
            cpus &= ~uncore_of(go_topo(name), int(uncore))
    elif minus:
        cpus &= ~S(minus)
    return cpus


@pytest.mark.parametrize(
    ("description", "topo_name", "reserved", "options", "default", "requests", "cset", "uncores"),
    ADD_WITH_UNCORE,
    ids=[c[0] for c in ADD_WITH_UNCORE],
)
def test_static_policy_add_with_uncore_alignment(
    description, topo_name, reserved, options, default, requests, cset, uncores
):
    """TestStaticPolicyAddWithUncoreAlignment: NewStaticPolicy with the reserved list, the state's default
    set minus the reserved CPUs, every app container allocated in order with no NUMA affinity (the fake
    Topology Manager's empty hint); then the first container's cpuset or the pod's uncore cache ids. The
    literal's UncoreCacheID is the topology's uncore cache here (the uncore ids of the fixture)."""
    topo = go_topo(topo_name)
    reserved_mask = S(reserved)
    policy = CPUStaticPolicy(
        topo,
        options=CPUManagerOptions(**options),
        num_reserved_cpus=reserved_mask.bit_count(),
        reserved_cpus=reserved_mask,
    )
    policy.default = _default(topo_name, default) & ~reserved_mask
    pod = multi_container_pod(description, requests)
    for container in pod.containers:
        policy.allocate(pod, container, TopologyHint(None, False))
    if cset is not None:
        assert as_set(policy.assignments[(pod.uid, "appContainer-0")]) == str(CPUSet.parse(cset))
        return
    ids = {
        topo.info[cpu].uncore_of
        for (uid, _), cpus in policy.assignments.items()
        if uid == pod.uid
        for cpu in bits_of(cpus)
    }
    assert ids == uncores


# --------------------------------------------------------------------------- align-by-socket


@pytest.mark.parametrize(
    ("align", "expect"),
    [(True, "2,11"), (False, "2,21")],
)
def test_static_policy_add_align_by_socket(align, expect):
    """TestStaticPolicyAdd, alignBySocketOptionTestCases: topoDualSocketMultiNumaPerSocketHT, one reserved
    CPU taken by topology (0), default {2, 11, 21, 22}, a hint for NUMA nodes 0 and 2: with align-by-socket
    the aligned CPUs are every allocatable CPU of the hint's sockets (socket 0 holds NUMA nodes 0 and 1)."""
    topo = go_topo("topoDualSocketMultiNumaPerSocketHT")
    policy = CPUStaticPolicy(topo, options=CPUManagerOptions(align_by_socket=align), num_reserved_cpus=1)
    assert as_set(policy.reserved) == "0"
    policy.default = S("2,11,21,22")
    pod = multi_container_pod("align", ["2000m"])
    cpus = policy.allocate(pod, pod.containers[0], TopologyHint(0b101, True))
    assert as_set(cpus) == expect


# --------------------------------------------------------------------------- the reservation


def test_reservation_goes_through_the_options():
    """NewStaticPolicy reserves numReservedCPUs with takeByTopology, options included. Hand-worked on
    topoSingleSocketHT (core = cpu % 4) for 2 CPUs: packed takes a whole core (0, 4); spread takes the
    socket's lowest ids (0, 1); on topoUncoreSingleSocketSMT (cores 0-3 in cache 0, 4-7 in cache 1,
    threads c and c+8) for 3 CPUs the uncore walk's partial fit of cache 0 takes cores 0 and 1 less
    their last thread (0, 1, 8), as the packed walk does here (core 0, then CPU 1)."""
    ht = go_topo("topoSingleSocketHT")
    assert as_set(CPUStaticPolicy(ht, num_reserved_cpus=2).reserved) == "0,4"
    spread = CPUManagerOptions(distribute_cpus_across_cores=True)
    assert as_set(CPUStaticPolicy(ht, options=spread, num_reserved_cpus=2).reserved) == "0-1"
    smt = go_topo("topoUncoreSingleSocketSMT")
    uncore = CPUManagerOptions(prefer_align_cpus_by_uncorecache=True)
    assert as_set(CPUStaticPolicy(smt, options=uncore, num_reserved_cpus=3).reserved) == "0-1,8"
