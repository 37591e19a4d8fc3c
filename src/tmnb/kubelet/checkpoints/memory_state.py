"""memory_manager_state: restored as each minor's memory manager restores it, and written as it writes it.

The Go structs are declared field by field (the checksum covers them): v1, v2 (``podEntries``,
PodLevelResourceManagers) and 1.37's v3 (the v1 fields inline, the legacy ``checksum`` over them,
beside a ``data`` payload and its ``dataChecksum``).

Ports pkg/kubelet/cm/memorymanager/state/checkpoint.go and the memory manager's ``restoreState`` of
state_checkpoint.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tmnb.errors import InputError
from tmnb.kubelet.checkpoints.marshal import Fields, go_json, written
from tmnb.kubelet.checkpoints.restore import RestoreError, StateFiles, first_readable, mismatch
from tmnb.kubelet.memorymanager.state import MachineNode, ModelMemoryBlock
from tmnb.kubelet.profiles import MEMORY_STATE, KubeletProfile
from tmnb.parse.godecode import (
    CHECKSUM,
    INT,
    INTS,
    RESOURCE_NAME,
    STRING,
    UINT64,
    GoType,
    Struct,
    checksum,
    map_of,
    new_struct,
    ptr_to,
    slice_of,
    struct,
)
from tmnb.parse.gojson import string_checksum
from tmnb.parse.state_files import (
    CheckpointMemoryBlock,
    CheckpointMemoryTable,
    CheckpointRefused,
    parse_memory_manager_state,
)


@dataclass(frozen=True)
class MemoryState:
    """A restored memory_manager_state; a container's blocks are None when the file says ``null``."""

    policy: str
    machine: Mapping[int, MachineNode | None]
    entries: Mapping[str, Mapping[str, tuple[ModelMemoryBlock, ...] | None]]
    pod_entries: Mapping[str, tuple[ModelMemoryBlock, ...] | None] = field(default_factory=dict)
    version: str = "v1"


_MEMORY_TABLE = struct(
    "state.MemoryTable",
    ("TotalMemSize", "total", UINT64),
    ("SystemReserved", "systemReserved", UINT64),
    ("Allocatable", "allocatable", UINT64),
    ("Reserved", "reserved", UINT64),
    ("Free", "free", UINT64),
)
_NUMA_STATE = struct(
    "state.NUMANodeState",
    ("NumberOfAssignments", "numberOfAssignments", INT),
    ("MemoryMap", "memoryMap", map_of(RESOURCE_NAME, ptr_to(_MEMORY_TABLE))),
    ("Cells", "cells", INTS),
)
_BLOCK = struct(
    "state.Block", ("NUMAAffinity", "numaAffinity", INTS), ("Type", "type", RESOURCE_NAME), ("Size", "size", UINT64)
)
_BLOCKS = slice_of(_BLOCK)


def _memory_struct(name: str, *, pod_entries: bool = False) -> GoType:
    fields = [
        ("PolicyName", "policyName", STRING),
        ("MachineState", "machineState", map_of(INT, ptr_to(_NUMA_STATE), "state.NUMANodeMap")),
        ("Entries", "entries", map_of(STRING, map_of(STRING, _BLOCKS), "state.ContainerMemoryAssignments")),
    ]
    if pod_entries:
        entry = struct("state.PodEntry", ("MemoryBlocks", "memoryBlocks", _BLOCKS))
        fields.append(("PodEntries", "podEntries", map_of(STRING, entry, "state.PodMemoryAssignments")))
    fields.append(("Checksum", "checksum", CHECKSUM))
    made = ("MachineState", "Entries", "PodEntries") if pod_entries else ("MachineState", "Entries")
    return struct(name, *fields, made=made)


_MEMORY_TYPES = {
    "v1": _memory_struct("state.MemoryManagerCheckpointV1"),
    "v2": _memory_struct("state.MemoryManagerCheckpoint", pod_entries=True),
}


def _blocks(value: list[Struct] | None) -> tuple[ModelMemoryBlock, ...] | None:
    if value is None:
        return None
    return tuple(ModelMemoryBlock(tuple(b.get("NUMAAffinity") or ()), b.get("Size"), b.get("Type")) for b in value)


def _machine(value: dict[int, Struct | None] | None) -> dict[int, MachineNode | None]:
    out: dict[int, MachineNode | None] = {}
    for node, state in (value or {}).items():
        if state is None:
            out[node] = None
            continue
        tables = state.get("MemoryMap")
        memory = None
        if tables is not None:
            memory = {
                resource: None
                if t is None
                else CheckpointMemoryTable(
                    t.get("TotalMemSize"),
                    t.get("SystemReserved"),
                    t.get("Allocatable"),
                    t.get("Reserved"),
                    t.get("Free"),
                )
                for resource, t in tables.items()
            }
        cells = state.get("Cells")
        out[node] = MachineNode(state.get("NumberOfAssignments"), memory, None if cells is None else tuple(cells))
    return out


def _newest_memory(text: str | bytes, policy: str) -> MemoryState | None:
    """1.37's v3 (``data`` + ``dataChecksum``); None for older files."""
    try:
        parsed = parse_memory_manager_state(text, source="memory_manager_state")
    except CheckpointRefused as err:
        raise RestoreError(err.kubelet) from None
    except InputError:
        return None
    if parsed.version != "v3":
        return None
    if parsed.policy_name != policy:
        raise RestoreError(mismatch("memory", policy, parsed.policy_name))
    machine = {
        node: MachineNode(
            s.number_of_assignments,
            dict(s.memory_map),
            s.cells,
        )
        for node, s in parsed.machine_state.items()
    }

    def blocks(items: tuple[CheckpointMemoryBlock, ...]) -> tuple[ModelMemoryBlock, ...]:
        return tuple(ModelMemoryBlock(b.numa_affinity, b.size, b.type) for b in items)

    entries = {pod: {c: blocks(b) for c, b in cs.items()} for pod, cs in parsed.entries.items()}
    return MemoryState(
        parsed.policy_name, machine, entries, {p: blocks(b) for p, b in parsed.pod_entries.items()}, "v3"
    )


def restore_memory_state(
    files: StateFiles, *, policy: str, kubelet: KubeletProfile, feature_gates: Mapping[str, object] | None
) -> MemoryState | None:
    """``NewCheckpointState`` of the memory manager under ``policy`` (see ``restore_cpu_state``)."""
    text = files.memory_manager_state
    if text is None:
        return None
    loaded = first_readable(
        text, kubelet.memory_state_formats(feature_gates), _MEMORY_TYPES, "v3", _newest_memory, policy
    )
    if isinstance(loaded, MemoryState):
        return loaded
    version, cp = loaded
    name = cp.get("PolicyName")
    if name != policy:
        raise RestoreError(mismatch("memory", policy, name))
    entries = {
        pod: {container: _blocks(blocks) for container, blocks in (containers or {}).items()}
        for pod, containers in (cp.get("Entries") or {}).items()
    }
    pods = (
        {pod: _blocks(entry.get("MemoryBlocks")) for pod, entry in (cp.get("PodEntries") or {}).items()}
        if version == "v2"
        else {}
    )
    return MemoryState(name, _machine(cp.get("MachineState")), entries, pods, version)


def _memory_doc(state: MemoryState, *, pods: bool) -> tuple[dict[str, object], Struct]:
    """The fields of a v1 (or, with ``pods``, v2) memory checkpoint, and the Go value its checksum covers."""
    go_machine: dict[int, Struct | None] = {}
    raw_machine: dict[int, object] = {}
    for node, numa in state.machine.items():
        if numa is None:
            go_machine[node], raw_machine[node] = None, None
            continue
        tables = {
            r: None if t is None else Struct(_MEMORY_TABLE, {"TotalMemSize": t.total,
                "SystemReserved": t.system_reserved, "Allocatable": t.allocatable, "Reserved": t.reserved,
                "Free": t.free})
            for r, t in (numa.memory or {}).items()
        }  # fmt: skip
        cells = None if numa.cells is None else list(numa.cells)
        go_machine[node] = Struct(
            _NUMA_STATE,
            {
                "NumberOfAssignments": numa.assignments,
                "MemoryMap": None if numa.memory is None else tables,
                "Cells": cells,
            },
        )
        raw_machine[node] = Fields(
            numberOfAssignments=numa.assignments,
            memoryMap=None if numa.memory is None else {
                r: None if t is None else Fields(total=t.total, systemReserved=t.system_reserved,
                    allocatable=t.allocatable, reserved=t.reserved, free=t.free)
                for r, t in numa.memory.items()
            },
            cells=cells,
        )  # fmt: skip

    def go_blocks(blocks: Sequence[ModelMemoryBlock] | None) -> list[Struct] | None:
        if blocks is None:
            return None
        return [Struct(_BLOCK, {"NUMAAffinity": list(b.numa), "Type": b.type, "Size": b.size}) for b in blocks]

    def raw_blocks(blocks: Sequence[ModelMemoryBlock] | None) -> list[object] | None:
        if blocks is None:
            return None
        return [Fields(numaAffinity=list(b.numa), type=b.type, size=b.size) for b in blocks]

    value = new_struct(_MEMORY_TYPES["v2" if pods else "v1"])
    value.values.update(
        PolicyName=state.policy,
        MachineState=go_machine,
        Entries={p: {c: go_blocks(b) for c, b in cs.items()} for p, cs in state.entries.items()},
    )
    doc: dict[str, object] = Fields(policyName=state.policy, machineState=raw_machine)
    if state.entries:
        doc["entries"] = {p: {c: raw_blocks(b) for c, b in cs.items()} for p, cs in state.entries.items()}
    if pods:
        pod_type = next(t for n, _, t in _MEMORY_TYPES["v2"].fields if n == "PodEntries").elem
        assert pod_type is not None
        value.values["PodEntries"] = {
            p: Struct(pod_type, {"MemoryBlocks": go_blocks(b)}) for p, b in state.pod_entries.items()
        }
        if state.pod_entries:
            doc["podEntries"] = {
                p: Fields(memoryBlocks=raw_blocks(b)) if b else Fields() for p, b in state.pod_entries.items()
            }
    return doc, value


def render_memory_state(state: MemoryState, kubelet: KubeletProfile, feature_gates: Mapping[str, object] | None) -> str:
    """memory_manager_state as ``kubelet`` writes ``state`` (see ``render_cpu_state``; 1.37's v3 keeps the
    v1 fields inline beside its ``data`` payload)."""
    formats = kubelet.memory_state_formats(feature_gates)
    version, type_name = written(formats, kubelet.state_written(MEMORY_STATE, feature_gates))
    if version == "v3":
        inline, _ = _memory_doc(state, pods=False)
        payload, _ = _memory_doc(state, pods=True)
        data = go_json(payload)
        return go_json(Fields(**inline, checksum=0, data=data, dataChecksum=string_checksum(data)))
    doc, value = _memory_doc(state, pods=version == "v2")
    return go_json(Fields(**doc, checksum=checksum(value, type_name=type_name)))
