"""The memos behind fleet replay: bounded, and never a way for one caller to change another's answer."""

from __future__ import annotations

from tmnb.kubelet.cpu_assign import take_packed
from tmnb.kubelet.cpu_static import _cpu_hints, generate_cpu_hints
from tmnb.kubelet.cpu_topology import CPUInfo, CPUTopology
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
