"""The memory manager's ``NewManager``: its start-up checks, each a small function returning the
kubelet's text or None (the model's start raises it, ``kubelet.startup.checks`` runs it on its own),
and the reservedMemory in bytes the Static policy is made with.

Ports ``NewManager``, ``getTotalMemoryTypeReserved`` and ``validateReservedMemory`` of
pkg/kubelet/cm/memorymanager/memory_manager.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from tmnb.errors import InputError
from tmnb.kubelet import gostr
from tmnb.kubelet.go_quantity import GoQuantity
from tmnb.kubelet.memorymanager.state import is_memory_resource
from tmnb.kubelet.names import MEMORY_POLICIES, unknown_policy
from tmnb.parse.quantity import quantity


def memory_policy_error(policy: str) -> str | None:
    return None if policy in MEMORY_POLICIES else unknown_policy(policy)


def reserved_memory_numa_error(reserved_numa_nodes: Collection[int], numa_nodes: Collection[int]) -> str | None:
    """``getTotalMemoryTypeReserved``: every reservedMemory entry must name a NUMA node of the machine."""
    for node in reserved_numa_nodes:
        if node not in numa_nodes:
            return (
                f"the reserved memory configuration references a NUMA node {node} that does not exist on this machine"
            )
    return None


def reserved_memory_sum_error(
    reserved_memory: Mapping[int, Mapping[str, Any]], reservation: Mapping[str, GoQuantity]
) -> str | None:
    """``validateReservedMemory``: per memory type, the NUMA reservations must add up to the Node
    Allocatable reservation (kube + system + hard eviction). Go walks a map here, so with several
    mismatches its choice is random; memory, then hugepages by name, is reported first."""
    totals: dict[str, GoQuantity] = {}
    for resources in reserved_memory.values():
        for name, text in resources.items():
            q = GoQuantity.parse(str(text))
            totals[name] = q.add(totals[name]) if name in totals else q
    names = set(totals) | {n for n in reservation if is_memory_resource(n)}
    for name in sorted(names, key=lambda n: (n != "memory", n)):
        expected = GoQuantity.of(0).add(reservation[name]) if name in reservation else GoQuantity.of(0)
        got = GoQuantity.of(0).add(totals[name]) if name in totals else GoQuantity.of(0)
        if got.amount != expected.amount:
            return (
                f"the total amount {gostr.quote(str(got))} of type {gostr.quote(name)} is not equal to the value "
                f"{gostr.quote(str(expected))} determined by Node Allocatable feature"
            )
    return None


def reserved_memory_bytes(reserved_memory: Mapping[int, Mapping[str, Any]]) -> dict[int, dict[str, int]]:
    """reservedMemory as the memory manager's Static policy reads it: bytes of memory and hugepages per NUMA node."""
    return {
        node: {str(r): _bytes(q, f"reservedMemory[{node}].{r}") for r, q in resources.items() if is_memory_resource(r)}
        for node, resources in reserved_memory.items()
    }


def _bytes(value: object, where: str) -> int:
    q = quantity(value, where)
    if q != int(q) or q < 0:
        raise InputError(f"expected a whole, non-negative number of bytes, got {value!r}", where=where)
    return int(q)
