"""The memos behind fleet replay: bounded, and never a way for one caller to change another's answer."""

from __future__ import annotations

from tmnb.kubelet.cpumanager.cpu_assignment import take_packed
from tmnb.kubelet.cpumanager.policy_static import _cpu_hints, generate_cpu_hints
from tmnb.kubelet.cpumanager.topology import CPUInfo, CPUTopology
from tmnb.kubelet.memo import Memo
from tmnb.kubelet.options import CPUManagerOptions

# 2 NUMA nodes x 4 cores x 2 threads: thread siblings i and i+8.
TOPO = CPUTopology(tuple(CPUInfo(c, c % 8, 0, (c % 8) // 4) for c in range(16)))


def test_memo_forgets_everything_at_its_budget():
    memo: Memo[str] = Memo(budget=3)
    memo.put("a", "A", 2)
    memo.put("b", "B", 1)
    assert (memo.get("a"), memo.get("b")) == ("A", "B")
    memo.put("c", "C", 1)  # 2 + 1 + 1 > 3: starts afresh with c alone
    assert (memo.get("a"), memo.get("b"), memo.get("c")) == (None, None, "C")


def test_remembered_cpu_hints_are_fresh_lists_equal_to_the_computation():
    free = 0b1111_0011_1111_0011
    first = generate_cpu_hints(TOPO, CPUManagerOptions(), free, 0, 4)
    first.clear()
    again = generate_cpu_hints(TOPO, CPUManagerOptions(), free, 0, 4)
    assert again == list(_cpu_hints(TOPO, CPUManagerOptions(), free, 0, 4)) != []


def test_remembered_pick_is_the_pick():
    free = 0b1111_0011_1111_0011
    assert take_packed(TOPO, free, 3) == take_packed(TOPO, free, 3) == 0b0000_0001_0000_0011


def test_cpu_hints_shared_by_free_masks_with_equal_counts_per_numa_node_are_each_masks_own():
    # NUMA node 0 holds CPUs 0-3 and 8-11, node 1 CPUs 4-7 and 12-15: both masks leave 3 free CPUs
    # on node 0 and 8 on node 1, so the second call is answered from the first one's entry.
    first, second = 0b1111_0001_1111_0011, 0b1111_1000_1111_1100
    for free in (first, second):
        assert TOPO.free_per_numa(free) == (3, 8, 0)
    for request in (3, 4, 6):
        got = [generate_cpu_hints(TOPO, CPUManagerOptions(), free, 0, request) for free in (first, second)]
        assert got == [list(_cpu_hints(TOPO, CPUManagerOptions(), free, 0, request)) for free in (first, second)]
    # 4 CPUs fit on node 1 alone (preferred), and on both nodes together
    assert generate_cpu_hints(TOPO, CPUManagerOptions(), second, 0, 4) == [(0b10, True), (0b11, False)]
