"""What-if on crafted nodes whose outcome is worked out by hand (see each test's comment)."""

import pytest

from factories import node, pod, settings, snapshot
from tmnb.analysis.whatif import common_sizes, whatif
from tmnb.cpuset import CPUSet
from tmnb.snapshot import Allocation, Container, Cpu, Device, KubeletInfo, NumaZone

GIB = 1 << 30
TAE = ("TopologyAffinityError", "Resources cannot be allocated with Topology locality")


def static(**extra):
    return KubeletInfo(settings=settings(cpuManagerPolicy="static", **extra))


def pods_of(sizes, node_name="w1"):
    return [pod(f"p{i}", node_name, cpu=c, created=f"2026-11-30T10:{i:02d}:00Z") for i, c in enumerate(sizes)]


def outcome(frame):
    return [(r.pod, r.admitted, r.reason, r.numa.get("main")) for r in frame.itertuples()]


# 2 sockets x 4 cores x 2 threads: NUMA 0 = 0-3,8-11, NUMA 1 = 4-7,12-15; core 0 (0,8) reserved,
# so NUMA 0 offers 6 CPUs and NUMA 1 offers 8. Four pods of 4 CPUs.
SMT_NODE = node("w1", kubelet=static(reservedSystemCPUs="0,8"))


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # CPU manager alone packs across zones; the fourth pod finds only 2 CPUs: Allocate fails.
        (
            "none",
            [
                ("p0", True, "", None),
                ("p1", True, "", None),
                ("p2", True, "", None),
                ("p3", False, "UnexpectedAdmissionError", None),
            ],
        ),
        # best-effort admits p3 at the Topology Manager; the CPU manager's Allocate then fails.
        (
            "best-effort",
            [
                ("p0", True, "", [0]),
                ("p1", True, "", [1]),
                ("p2", True, "", [1]),
                ("p3", False, "UnexpectedAdmissionError", None),
            ],
        ),
        # restricted and single-numa-node refuse the hint-less fourth pod at the Topology Manager.
        (
            "restricted",
            [("p0", True, "", [0]), ("p1", True, "", [1]), ("p2", True, "", [1]), ("p3", False, TAE[0], None)],
        ),
        (
            "single-numa-node",
            [("p0", True, "", [0]), ("p1", True, "", [1]), ("p2", True, "", [1]), ("p3", False, TAE[0], None)],
        ),
    ],
)
def test_four_pods_of_four_cpus(policy, expected):
    frame, nodes = whatif(snapshot([SMT_NODE], pods_of(["4"] * 4)), {"topologyManagerPolicy": policy})
    assert outcome(frame) == expected
    assert nodes.loc[0, "rejected"] == 1
    assert nodes.loc[0, "first rejection"] == f"app/p3: {expected[3][2]}"
    exclusive = [CPUSet.parse(c["main"]) for c in frame["cpuset"] if c]
    assert all(not (cpus & {0, 8}) for cpus in exclusive), "reserved CPUs are never handed out"
    assert sum(len(c) for c in exclusive) == 12 and len(set().union(*exclusive)) == 12, "disjoint"
    if policy == "single-numa-node":
        assert frame.loc[3, "message"] == TAE[1]
        assert CPUSet.parse(frame.loc[0, "cpuset"]["main"]) <= CPUSet.parse("1-3,9-11")


# No SMT: NUMA 0 = 0-3, NUMA 1 = 4-7, CPU 0 reserved. Pods with two containers of 2 CPUs.
def two_container_pod(name, minute):
    res = {"cpu": "2", "memory": "1Gi"}
    return pod(
        name,
        "w1",
        created=f"2026-11-30T10:{minute:02d}:00Z",
        containers=[Container(name="a", requests=res, limits=res), Container(name="b", requests=res, limits=res)],
    )


@pytest.mark.parametrize(
    ("scope", "first"),
    [
        # container scope: a fits NUMA 0 (3 free), b no longer does and goes to NUMA 1.
        ("container", {"a": [0], "b": [1]}),
        # pod scope: the pod needs 4 CPUs on one zone: only NUMA 1 has them; both containers share it.
        ("pod", {"a": [1], "b": [1]}),
    ],
)
def test_multi_container_pod_under_each_scope(scope, first):
    n = node("w1", smt=False, kubelet=static(reservedSystemCPUs="0"))
    snap = snapshot([n], [two_container_pod("first", 0), two_container_pod("second", 1)])
    frame, _ = whatif(snap, {"topologyManagerPolicy": "single-numa-node", "topologyManagerScope": scope})
    assert frame.loc[0, "admitted"] and frame.loc[0, "numa"] == first
    # Three CPUs are left (one or two per zone): no zone has room for the second pod's needs.
    assert not frame.loc[1, "admitted"] and frame.loc[1, "reason"] == TAE[0]


def test_full_pcpus_only_rejects_odd_requests_with_smt():
    n = node("w1", kubelet=static(reservedSystemCPUs="0,8", cpuManagerPolicyOptions={"full-pcpus-only": "true"}))
    frame, _ = whatif(snapshot([n], pods_of(["3", "2"])), {"topologyManagerPolicy": "restricted"})
    assert outcome(frame)[0][:3] == ("p0", False, "SMTAlignmentError")
    assert frame.loc[0, "message"] == "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2"
    assert frame.loc[1, "admitted"]


def nps4_node():
    """One socket, 4 NUMA zones of 4 CPUs (no SMT); CPU 0 reserved."""
    cpus = [Cpu(cpu=i, core=i, socket=0, numa=i // 4) for i in range(16)]
    dist = [{b: 10 if a == b else 12 for b in range(4)} for a in range(4)]
    zones = [NumaZone(id=z, cpus=f"{4 * z}-{4 * z + 3}", memory_total=32 * GIB, distances=dist[z]) for z in range(4)]
    return node("w1", cpus=cpus, numa=zones, kubelet=static(reservedSystemCPUs="0"))


@pytest.mark.parametrize(
    ("policy", "admitted", "numa"),
    [("restricted", True, [0, 1]), ("best-effort", True, [0, 1]), ("single-numa-node", False, None)],
)
def test_request_larger_than_a_zone_on_four_numa_nodes(policy, admitted, numa):
    # 6 CPUs fit no single zone (at most 4); the narrowest preferred masks have 2 zones and
    # {0,1} is the numerically smallest of them.
    frame, _ = whatif(snapshot([nps4_node()], pods_of(["6"])), {"topologyManagerPolicy": policy})
    assert (frame.loc[0, "admitted"], frame.loc[0, "numa"].get("main")) == (admitted, numa)
    if admitted:
        assert CPUSet.parse(frame.loc[0, "cpuset"]["main"]) <= CPUSet.parse("1-7")


def test_device_pulls_the_pod_to_its_numa_node():
    gpus = [Device(resource="nvidia.com/gpu", id="gpu0", numa=[1])]
    n = node("w1", devices=gpus, kubelet=static(reservedSystemCPUs="0,8"))
    res = {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": "1"}
    p = pod("train", "w1", containers=[Container(name="main", requests=res, limits=res)])
    frame, _ = whatif(snapshot([n], [p]), {"topologyManagerPolicy": "single-numa-node"})
    assert frame.loc[0, "numa"] == {"main": [1]}
    assert CPUSet.parse(frame.loc[0, "cpuset"]["main"]) <= CPUSet.parse("4-7,12-15")


def test_restart_mode_rejects_a_running_pod_whose_cpus_span_zones():
    # Today the pod holds CPUs on both zones (cpuManagerPolicy static, topology none). A restart
    # with single-numa-node regenerates its hints from those CPUs: one hint spanning two zones.
    alloc = Allocation(
        pod_uid="uid-p0", namespace="app", pod="p0", container="main", cpuset="3-4,11-12", exclusive=True, numa=[0, 1]
    )
    n = node("w1", kubelet=static(reservedSystemCPUs="0,8"), allocations=[alloc])
    snap = snapshot([n], pods_of(["4"]))
    drained, _ = whatif(snap, {"topologyManagerPolicy": "single-numa-node"}, mode="drain")
    restarted, _ = whatif(snap, {"topologyManagerPolicy": "single-numa-node"}, mode="restart")
    assert drained.loc[0, "admitted"]
    assert not restarted.loc[0, "admitted"] and restarted.loc[0, "reason"] == TAE[0]


def test_restart_keeps_a_rejected_pods_cpus_until_the_batch_ends():
    # p0 holds 1,9 (core 1, NUMA 0) and 4,12 (core 4, NUMA 1): under single-numa-node its regenerated
    # hint {0,1} is not preferred and it is rejected, but its CPUs stay taken while the batch lasts.
    # Free then (0,8 reserved): NUMA 0 2,3,10,11; NUMA 1 5-7,13-15. p1 takes NUMA 0's four, p2 four of
    # NUMA 1's six, p3 finds 2 CPUs on NUMA 1 and none on NUMA 0: rejected. (Were p0's CPUs freed at
    # its rejection, p3 would find four on NUMA 1.)
    alloc = Allocation(pod_uid="uid-p0", namespace="app", pod="p0", container="main", cpuset="1,4,9,12",
                       exclusive=True, numa=[0, 1])  # fmt: skip
    n = node("w1", kubelet=static(reservedSystemCPUs="0,8"), allocations=[alloc], shared_pool="0,2-3,5-8,10-11,13-15")
    frame, nodes = whatif(snapshot([n], pods_of(["4", "4", "4", "4"])), {"topologyManagerPolicy": "single-numa-node"},
                          mode="restart", with_headroom=False)  # fmt: skip
    assert outcome(frame) == [("p0", False, TAE[0], None), ("p1", True, "", [0]), ("p2", True, "", [1]),
                              ("p3", False, TAE[0], None)]  # fmt: skip
    assert nodes.loc[0, "kubelet starts"]


MEMORY_STATIC = {
    "memoryManagerPolicy": "Static",
    # 1948Mi + the 100Mi default hard-eviction threshold = the 2Gi reservedMemory sum
    "systemReserved": {"memory": "1948Mi"},
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}, {"numaNode": 1, "limits": {"memory": "1Gi"}}],
}


def test_restart_refuses_a_memory_reservation_the_state_file_was_not_written_with():
    # memory_manager_state holds the machine state today's reservation gave (1Gi reserved on each
    # node); the kubelet recomputes it from the new one (1536Mi and 512Mi) and refuses the difference.
    snap = snapshot([node("w1", kubelet=KubeletInfo(settings=settings(**MEMORY_STATIC)))], pods_of(["2"]))
    moved = {"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1536Mi"}},
                                {"numaNode": 1, "limits": {"memory": "512Mi"}}]}  # fmt: skip
    _, restarted = whatif(snap, moved, mode="restart", with_headroom=False)
    assert not restarted.loc[0, "kubelet starts"]
    assert restarted.loc[0, "refusal"] == (
        "start memory manager error: [memorymanager] the expected machine state is different from the real one"
    )
    _, drained = whatif(snap, moved, mode="drain", with_headroom=False)
    assert drained.loc[0, "kubelet starts"]
    _, unchanged = whatif(snap, {"topologyManagerPolicy": "restricted"}, mode="restart", with_headroom=False)
    assert unchanged.loc[0, "kubelet starts"]


def test_a_strict_node_does_not_restart_on_1_36_and_does_on_1_37():
    # strict-cpu-reservation keeps 0,8 out of the shared pool, so the state knows 1-7,9-15; the 1.36
    # tree's validateState compares that with every CPU (0-15) and refuses, upstream's (1.37) with
    # every CPU less the reserved ones.
    strict = static(reservedSystemCPUs="0,8", cpuManagerPolicyOptions={"strict-cpu-reservation": "true"})
    snap = snapshot([node("w1", kubelet=strict, shared_pool="1-7,9-15")], pods_of(["2"]))
    _, today = whatif(snap, {}, mode="restart", with_headroom=False)
    assert today.loc[0, "refusal"] == (
        'start cpu manager error: current set of available CPUs "0-15" doesn\'t match with CPUs in state "1-7,9-15"'
    )
    _, upgraded = whatif(snap, {"kubeletVersion": "1.37"}, mode="restart", with_headroom=False)
    assert upgraded.loc[0, "kubelet starts"]


def test_config_the_kubelet_refuses_is_reported_per_node():
    frame, nodes = whatif(snapshot([node("w1")], pods_of(["2"])), {"cpuManagerPolicy": "static"})
    assert frame.empty
    assert not nodes.loc[0, "kubelet starts"]
    assert nodes.loc[0, "refusal"] == "[cpumanager] unable to determine reserved CPU resources for static policy"


@pytest.mark.parametrize(
    ("target", "text"),
    [
        (
            # The 100Mi default hard-eviction threshold is part of the Node Allocatable reservation.
            {"memoryManagerPolicy": "Static"},
            'the total amount "0" of type "memory" is not equal to the value "100Mi" determined by Node Allocatable '
            "feature",
        ),
        ({"reservedSystemCPUs": "0,64"}, "reserved-cpus: 0,64 is not a subset of online-cpus: 0-15"),
        (
            {"reservedSystemCPUs": "", "kubeReserved": {"cpu": "20"}},
            "new static policy error: [cpumanager] unable to reserve the required amount of CPUs (size of  did not "
            "equal 20)",
        ),
        ({"evictionHard": {"memory.free": "1Gi"}}, "unsupported eviction signal memory.free"),
    ],
)
def test_start_up_refusals_are_the_kubelets_words_and_no_pod_is_predicted(target, text):
    frame, nodes = whatif(snapshot([SMT_NODE], pods_of(["2"])), {"cpuManagerPolicy": "static", **target})
    assert frame.empty
    assert not nodes.loc[0, "kubelet starts"]
    assert nodes.loc[0, "refusal"] == text


def test_headroom_counts_more_pods_of_common_sizes():
    snap = snapshot([SMT_NODE], pods_of(["4"]))
    assert common_sizes(snap) == [("4", "1Gi")]
    _, nodes = whatif(snap, {"topologyManagerPolicy": "single-numa-node"})
    # 14 usable CPUs, p0 on NUMA 0 leaves 2 there and 8 on NUMA 1: two more 4-CPU pods fit.
    assert nodes.loc[0, "headroom 4 CPU / 1Gi"] == 2


def test_only_active_pods_replay_in_creation_order():
    pods = [
        pod("late", "w1", cpu="4", created="2026-11-30T12:00:00Z"),
        pod("early", "w1", cpu="4", created="2026-11-30T09:00:00Z"),
        pod("done", "w1", cpu="4", phase="Succeeded"),
    ]
    frame, _ = whatif(snapshot([SMT_NODE], pods), {"topologyManagerPolicy": "single-numa-node"}, with_headroom=False)
    assert list(frame["pod"]) == ["early", "late"]


def test_headroom_is_capped_by_allocatable_without_pinning():
    # CPU manager none: the Topology Manager admits anything, so allocatable decides:
    # 15 allocatable CPUs - 4 requested = 11 left -> two more 4-CPU pods.
    _, nodes = whatif(snapshot([node("w1")], pods_of(["4"])), {"topologyManagerPolicy": "best-effort"})
    assert nodes.loc[0, "headroom 4 CPU / 1Gi"] == 2


def test_headroom_is_skipped_beyond_eight_numa_nodes():
    cpus = [Cpu(cpu=i, core=i, socket=0, numa=i // 2) for i in range(32)]
    zones = [NumaZone(id=z, cpus=f"{2 * z}-{2 * z + 1}", memory_total=8 * GIB) for z in range(16)]
    big = node("w1", cpus=cpus, numa=zones, kubelet=static(reservedSystemCPUs="0"))
    target = {"topologyManagerPolicy": "restricted", "topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "16"}}
    frame, nodes = whatif(snapshot([big], pods_of(["2"])), target)
    assert frame.loc[0, "admitted"]
    assert "2^16" in nodes.loc[0, "headroom note"]


def test_nodes_without_topology_are_not_predicted():
    bare = node("api-only", cpus=[], numa=[], kubelet=static(reservedSystemCPUs="0,8"))
    frame, nodes = whatif(snapshot([bare], pods_of(["2"], "api-only")), {"topologyManagerPolicy": "restricted"})
    assert frame.empty
    row = nodes.iloc[0]
    assert not row["modelled"] and row["kubelet starts"]
    assert "collect the node's files" in row["refusal"]
