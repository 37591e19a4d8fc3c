"""The Static policy's ``validateState`` at start: the machine state the restored assignments imply,
recomputed from this configuration, must equal the stored one, or the kubelet refuses to start.

Ports ``validateState``, ``updateExpectedMachineState`` and ``areMachineStatesEqual`` of
pkg/kubelet/cm/memorymanager/policy_static.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tmnb.errors import ConfigRejected
from tmnb.kubelet.memorymanager.state import MachineNode, ModelMemoryBlock, NUMANodeState


class KubeletPanic(ConfigRejected):
    """The kubelet panics on a nil pointer in the stored state (``areMachineStatesEqual`` reads through it):
    not an error it returns, so no ``start memory manager error`` prefix."""

    def __init__(self) -> None:
        super().__init__("panic: runtime error: invalid memory address or nil pointer dereference")


_UINT64 = (1 << 64) - 1


def validate_state(
    state: Mapping[int, NUMANodeState],
    machine: Mapping[int, MachineNode | None],
    entries: Mapping[str, Mapping[str, tuple[ModelMemoryBlock, ...] | None]],
    pods: Mapping[str, tuple[ModelMemoryBlock, ...] | None],
) -> None:
    """``validateState`` of the stored ``machine`` state and assignments (``pods``: the pod-level blocks
    restored instead of a pod's containers') against ``state``, the policy's fresh one. Go walks its
    maps in random order: tmnb takes NUMA ids and resource names in order, pods and containers as
    stored."""
    if not machine:
        if entries:
            raise ConfigRejected("[memorymanager] machine state can not be empty when it has memory assignments")
        return
    expected = {
        node: _Expected(
            s.assignments,
            {r: [t.total, t.system_reserved, t.allocatable, t.reserved, t.free] for r, t in s.memory.items()},
            list(s.cells),
        )
        for node, s in state.items()
    }
    for pod, containers in entries.items():
        if pods.get(pod):
            _expect(expected, pods[pod] or (), pod, "")
            continue
        for container, blocks in containers.items():
            _expect(expected, blocks or (), pod, container)
    if not _same_machine(machine, expected):
        raise ConfigRejected("[memorymanager] the expected machine state is different from the real one")


def _expect(expected: dict[int, _Expected], blocks: Sequence[ModelMemoryBlock], pod: str, container: str) -> None:
    """``updateExpectedMachineState``."""
    for b in blocks:
        requested = b.size
        for node in b.numa:
            state = expected.get(node)
            if state is None:
                raise ConfigRejected(
                    f"[memorymanager] (pod: {pod}, container: {container}) the memory assignment uses the NUMA "
                    "that does not exist"
                )
            state.assignments += 1
            state.cells = list(b.numa)
            table = state.tables.get(b.type)
            if table is None:
                raise ConfigRejected(
                    f"[memorymanager] (pod: {pod}, container: {container}) the memory assignment uses memory "
                    "resource that does not exist"
                )
            if requested == 0 or table[4] <= 0:
                continue
            if table[4] >= requested:
                table[3] += requested
                table[4] -= requested
                requested = 0
                continue
            requested -= table[4]
            table[3] += table[4]
            table[4] = 0


@dataclass
class _Expected:
    """A node of the machine state ``validateState`` recomputes: tables as [total, system reserved,
    allocatable, reserved, free]."""

    assignments: int
    tables: dict[str, list[int]]
    cells: list[int]


def _same_machine(stored: Mapping[int, MachineNode | None], expected: Mapping[int, _Expected]) -> bool:
    """``areMachineStatesEqual(stored, expected)``: per node the assignments, the group, the tables'
    totals, and free and reserved summed over the group; a nil pointer on the way is the kubelet's panic."""
    if len(stored) != len(expected):
        return False

    def table(machine: str, node: int, resource: str) -> list[int]:
        if machine == "stored":
            state = stored.get(node)
            if state is None or state.memory is None or state.memory.get(resource) is None:
                raise KubeletPanic()
            t = state.memory[resource]
            assert t is not None
            return [t.total, t.system_reserved, t.allocatable, t.reserved, t.free]
        other = expected.get(node)
        if other is None or resource not in other.tables:
            raise KubeletPanic()
        return other.tables[resource]

    for node in sorted(stored):
        first = stored[node]
        second = expected.get(node)
        if second is None:
            return False
        if first is None:
            raise KubeletPanic()
        second_tables = second.tables
        if first.assignments != second.assignments or sorted(first.cells or ()) != sorted(second.cells):
            return False
        if len(first.memory or {}) != len(second_tables):
            return False
        for resource in sorted(first.memory or {}):
            if resource not in second_tables:
                return False
            one = table("stored", node, resource)
            two = second_tables[resource]
            if one[:3] != two[:3]:
                return False
            cells = first.cells or ()
            sums = [
                [sum(table(m, c, resource)[i] for c in cells) & _UINT64 for i in (4, 3)] for m in ("stored", "expected")
            ]
            if sums[0][0] != sums[1][0] or sums[0][1] != sums[1][1]:
                return False
    return True
