"""Memory Manager rules: the kubelet's checks (reservedMemory entries, the policy name, the entries'
NUMA nodes and their sum against Node Allocatable, the Static policy's reserved memory), then what
tmnb adds: reservedMemory that has no effect, and a sum it cannot check."""

from __future__ import annotations

from tmnb.kubelet.names import MEMORY_NONE, MEMORY_POLICIES, MEMORY_STATIC
from tmnb.kubelet.startup.checks import Start
from tmnb.settings.findings import Findings
from tmnb.settings.managers.shared import case_hint, kubelet_refusals


def check_memory(start: Start, out: Findings) -> None:
    kubelet_refusals(start, "memory", out)
    cfg = start.cfg
    policy = cfg["memoryManagerPolicy"]
    case_hint(policy, MEMORY_POLICIES, "memory", "memoryManagerPolicy", out)
    if policy == MEMORY_NONE and cfg.get("reservedMemory"):
        out.add(
            "memory.reserved-ignored",
            "reservedMemory",
            "info",
            "reservedMemory only takes effect with memoryManagerPolicy Static",
        )
    if policy == MEMORY_STATIC and start.reservation is not None and not start.memory_reservation_known:
        threshold = (cfg.get("evictionHard") or {}).get("memory.available")
        out.add(
            "memory.reserved-sum-unchecked",
            "reservedMemory",
            "warning",
            f"evictionHard memory.available is {threshold}: the reservedMemory sum cannot be checked without "
            "the node's memory capacity",
        )
