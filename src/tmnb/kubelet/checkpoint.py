"""The resource managers' state files as the kubelet restores them when it starts.

``cpumanager`` and ``memorymanager`` ``Start`` call ``NewCheckpointState``, whose ``restoreState``
loads the checkpoint (a missing file is a fresh state), compares its policy with the configured
one and, for the CPU manager, parses its CPU lists. Any failure is wrapped
``could not restore state from checkpoint: <error>, please drain this node and delete the ... checkpoint
file "<path>" before restarting Kubelet`` (state_checkpoint.go), and the container manager's ``Start``
prefixes ``start cpu manager error: `` / ``start memory manager error: ``: the kubelet exits.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from tmnb.cpuset import MAX_CPUS, CPUSet
from tmnb.errors import InputError
from tmnb.kubelet import gostr
from tmnb.kubelet.errors import Unpredictable
from tmnb.kubelet.memorymanager.state import MachineNode, ModelMemoryBlock
from tmnb.kubelet.profiles import CPU_STATE, MEMORY_STATE, SUPPORTED_MINORS, KubeletProfile, StateFormat, profile
from tmnb.parse.godecode import (
    CHECKSUM,
    CPU_POD_ENTRY,
    INT,
    INTS,
    RESOURCE_NAME,
    STRING,
    UINT64,
    CPUSetValue,
    GoJSONError,
    GoType,
    Struct,
    checksum,
    map_of,
    new_struct,
    ptr_to,
    slice_of,
    struct,
    unmarshal,
)
from tmnb.parse.gojson import string_checksum
from tmnb.parse.state_files import (
    BadCpuList,
    CheckpointMemoryBlock,
    CheckpointMemoryTable,
    CheckpointRefused,
    parse_cpu_manager_state,
    parse_memory_manager_state,
)

Manager = Literal["cpu", "memory"]


@dataclass(frozen=True)
class Checkpoint:
    """What ``restoreState`` meets in one state file. ``error`` is the kubelet's own error for a file
    it cannot restore, raised before the policy comparison (the file does not load: unreadable,
    undecodable, a bad checksum) or, with ``error_after_policy``, after it (a CPU list
    ``cpuset.Parse`` refuses). ``unknown`` says why tmnb cannot tell what the kubelet would do."""

    manager: Manager
    path: str
    policy: str | None = None
    error: str | None = None
    error_after_policy: bool = False
    unknown: str | None = None


def mismatch(manager: Manager, configured: str, checkpoint: str) -> str:
    prefix = "[memorymanager] " if manager == "memory" else ""
    return (
        f"{prefix}configured policy {gostr.quote(configured)} differs from state checkpoint policy "
        f"{gostr.quote(checkpoint)}"
    )


def could_not_restore(manager: Manager, path: str, error: str) -> str:
    """``NewCheckpointState``'s wrapper (the CPU manager capitalises its name, the memory manager not)."""
    name = "CPU manager" if manager == "cpu" else "memory manager"
    return (
        f"could not restore state from checkpoint: {error}, please drain this node and delete the {name} "
        f"checkpoint file {gostr.quote(path)} before restarting Kubelet"
    )


def restore_error(checkpoint: Checkpoint, configured: str) -> str | None:
    """The error ``restoreState`` returns for ``checkpoint`` under the ``configured`` policy name,
    wrapped as ``NewCheckpointState`` wraps it; None when the state is restored."""
    if checkpoint.unknown is not None:
        raise Unpredictable(
            f"not predicted: the kubelet restores {checkpoint.path} when it restarts, and tmnb could not read it "
            f"as the kubelet does ({checkpoint.unknown})"
        )
    if checkpoint.error is not None and not checkpoint.error_after_policy:
        inner = checkpoint.error
    elif checkpoint.policy is not None and checkpoint.policy != configured:
        inner = mismatch(checkpoint.manager, configured, checkpoint.policy)
    elif checkpoint.error is not None:
        inner = checkpoint.error
    else:
        return None
    return could_not_restore(checkpoint.manager, checkpoint.path, inner)


# ---------------------------------------------------------------------------------------------
# The state files themselves, restored as each minor's restoreState restores them


@dataclass(frozen=True)
class StateFiles:
    """The resource managers' checkpoint files in the kubelet's root directory when it starts, as their
    exact bytes (None: no such file, so the manager starts from a fresh state and writes one)."""

    cpu_manager_state: str | bytes | None = None
    memory_manager_state: str | bytes | None = None
    root_dir: str = "/var/lib/kubelet"
    #: container ID -> (pod UID, container name) of the containers the runtime lists at start: the only
    #: way a v1 CPU checkpoint (keyed by container ID) is migrated
    containers: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    def path(self, manager: Manager) -> str:
        name = "cpu_manager_state" if manager == "cpu" else "memory_manager_state"
        return f"{self.root_dir.rstrip('/')}/{name}"


class RestoreError(Exception):
    """``restoreState`` failed; ``inner`` is its error, before ``NewCheckpointState`` wraps it."""

    def __init__(self, inner: str) -> None:
        self.inner = inner
        super().__init__(inner)


@dataclass(frozen=True)
class CPUState:
    """A restored cpu_manager_state: what ``restoreState`` hands the static policy's ``validateState``."""

    policy: str
    default: CPUSet
    #: pod UID -> container name -> CPUs (a pod may have no containers: it still counts as an entry)
    entries: Mapping[str, Mapping[str, CPUSet]]
    #: pod UID -> the pod-level CPU set (v3 ``podEntries``, PodLevelResourceManagers)
    pod_entries: Mapping[str, CPUSet] = field(default_factory=dict)
    version: str = "v2"


@dataclass(frozen=True)
class MemoryState:
    """A restored memory_manager_state; a container's blocks are None when the file says ``null``."""

    policy: str
    machine: Mapping[int, MachineNode | None]
    entries: Mapping[str, Mapping[str, tuple[ModelMemoryBlock, ...] | None]]
    pod_entries: Mapping[str, tuple[ModelMemoryBlock, ...] | None] = field(default_factory=dict)
    version: str = "v1"


# The Go structs (cpumanager/state and memorymanager/state), field by field: the checksum covers them.
def _cpu_struct(name: str, entries: GoType, *, pod_entries: bool = False) -> GoType:
    fields = [
        ("PolicyName", "policyName", STRING),
        ("DefaultCPUSet", "defaultCpuSet", STRING),
        ("Entries", "entries", entries),
    ]
    if pod_entries:
        fields.append(("PodEntries", "podEntries", map_of(STRING, CPU_POD_ENTRY, "state.PodCPUAssignments")))
    fields.append(("Checksum", "checksum", CHECKSUM))
    made = ("Entries", "PodEntries") if pod_entries else ("Entries",)
    return struct(name, *fields, made=made)


_CPU_TYPES = {
    "v1": _cpu_struct("state.CPUManagerCheckpointV1", map_of(STRING, STRING)),
    "v2": _cpu_struct("state.CPUManagerCheckpointV2", map_of(STRING, map_of(STRING, STRING))),
    "v3": _cpu_struct("state.CPUManagerCheckpoint", map_of(STRING, map_of(STRING, STRING)), pod_entries=True),
}
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


def _parse_cpuset(text: str) -> tuple[int, ...]:
    """``cpuset.Parse``, for CPU ids the model can hold."""
    try:
        ranges = gostr.parse_cpu_ranges(text)
    except gostr.GoParseError as err:
        raise GoJSONError(str(err)) from None
    for lo, hi in ranges:
        if lo < 0 or hi >= MAX_CPUS:
            raise Unpredictable(
                f"not predicted: the checkpoint names CPU {lo if lo < 0 else hi}, beyond the CPU ids tmnb models "
                f"(0-{MAX_CPUS - 1})"
            )
    return tuple(cpu for lo, hi in ranges for cpu in range(lo, hi + 1))


def _load(text: str | bytes, fmt: StateFormat, go_type: GoType) -> Struct:
    """``GetCheckpoint``: unmarshal into a fresh struct, then ``VerifyChecksum``."""
    loaded = unmarshal(text, new_struct(go_type), _parse_cpuset)
    expected = loaded.get("Checksum")
    if expected == 0 and fmt.zero_checksum:
        return loaded
    if any(checksum(loaded, type_name=name) == expected for name in fmt.type_names):
        return loaded
    raise GoJSONError("checkpoint is corrupted")


def _cpu_list(text: str, what: str) -> CPUSet:
    try:
        return CPUSet(_parse_cpuset(text))
    except GoJSONError as err:
        raise RestoreError(f"{what}: {err}") from None


def _newest_cpu(text: str | bytes, policy: str) -> CPUState | None:
    """1.37's v4 (``data`` + ``dataChecksum``), read as ``parse.state_files`` reads it; None for older files."""
    try:
        parsed = parse_cpu_manager_state(text, source="cpu_manager_state")
    except CheckpointRefused as err:
        raise RestoreError(err.kubelet) from None
    except BadCpuList as err:
        if err.policy is not None and err.policy != policy:
            raise RestoreError(mismatch("cpu", policy, err.policy)) from None
        raise RestoreError(cpu_list_error(err)) from None
    except InputError:
        return None  # not a v4 the newest reader takes: the older formats decide
    if parsed.version != "v4":
        return None
    if parsed.policy_name != policy:
        raise RestoreError(mismatch("cpu", policy, parsed.policy_name))
    return CPUState(parsed.policy_name, parsed.default_cpuset, parsed.entries, parsed.pod_entries, "v4")


def cpu_list_error(err: BadCpuList) -> str:
    """``restoreState``'s words for a CPU list ``cpuset.Parse`` refuses."""
    try:
        gostr.parse_cpu_ranges(err.text)
        reason = "invalid CPU list"
    except gostr.GoParseError as parse_error:
        reason = str(parse_error)
    if err.pod is None:
        return f"could not parse default cpu set {gostr.quote(err.text)}: {reason}"
    return (
        f"could not parse cpuset {gostr.quote(err.text)} for container {gostr.quote(err.container or '')} "
        f"in pod {gostr.quote(err.pod)}: {reason}"
    )


#: A restored state of either manager.
_State = TypeVar("_State")


def _first_readable(
    text: str | bytes,
    formats: Sequence[StateFormat],
    types: Mapping[str, GoType],
    newest: str,
    read_newest: Callable[[str | bytes, str], _State | None],
    policy: str,
) -> _State | tuple[str, Struct]:
    """``restoreState``'s walk over the formats a minor tries, in its order: the first that decodes
    with a matching checksum (the newest format, self-contained, restores itself), else the last
    format's error, as the kubelet returns it."""
    error = "checkpoint is not found"
    for fmt in formats:
        if fmt.version == newest:
            state = read_newest(text, policy)
            if state is not None:
                return state
            continue
        try:
            return fmt.version, _load(text, fmt, types[fmt.version])
        except GoJSONError as err:
            error = str(err)
    raise RestoreError(error)


def restore_cpu_state(
    files: StateFiles, *, policy: str, kubelet: KubeletProfile, feature_gates: Mapping[str, object] | None
) -> CPUState | None:
    """``NewCheckpointState`` of the CPU manager under ``policy``: the restored state, None for no file,
    or ``RestoreError`` with ``restoreState``'s error. Go walks maps in random order; where several
    entries are wrong tmnb names the first in the file."""
    text = files.cpu_manager_state
    if text is None:
        return None
    loaded = _first_readable(text, kubelet.cpu_state_formats(feature_gates), _CPU_TYPES, "v4", _newest_cpu, policy)
    if isinstance(loaded, CPUState):
        return loaded
    version, cp = loaded
    raw_entries: dict[str, dict[str, str]] = {}
    if version == "v1":  # migrateV1CheckpointToV2Checkpoint, through the runtime's containers
        for container_id, cpus in (cp.get("Entries") or {}).items():
            ref = files.containers.get(container_id)
            if ref is None:
                inner = f"containerID '{container_id}' not found in initial containers list"
                raise RestoreError(kubelet.cpu_v1_migration_error(inner))
            raw_entries.setdefault(ref[0], {})[ref[1]] = cpus
    else:
        raw_entries = {pod: dict(containers or {}) for pod, containers in (cp.get("Entries") or {}).items()}
    name = cp.get("PolicyName")
    if name != policy:
        raise RestoreError(mismatch("cpu", policy, name))
    default_text = cp.get("DefaultCPUSet")
    default = _cpu_list(default_text, f"could not parse default cpu set {gostr.quote(default_text)}")
    entries: dict[str, dict[str, CPUSet]] = {}
    for pod, containers in raw_entries.items():
        entries[pod] = {}
        for container, cpus in containers.items():
            what = (
                f"could not parse cpuset {gostr.quote(cpus)} for container {gostr.quote(container)} "
                f"in pod {gostr.quote(pod)}"
            )
            entries[pod][container] = _cpu_list(cpus, what)
    pods = (
        {pod: CPUSet(entry.elems or ()) for pod, entry in (cp.get("PodEntries") or {}).items()}
        if version == "v3"
        else {}
    )
    return CPUState(name, default, entries, pods, version)


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
    loaded = _first_readable(
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


def _readers() -> list[tuple[KubeletProfile, dict[str, object]]]:
    out: list[tuple[KubeletProfile, dict[str, object]]] = []
    for minor in SUPPORTED_MINORS:
        kubelet = profile(minor)
        out.append((kubelet, {}))
        if kubelet.gate_default("PodLevelResourceManagers") is not None:
            out.append((kubelet, {"PodLevelResourceManagers": True}))
    return out


def load_errors(manager: Manager, text: str | bytes, policy: str) -> dict[str, str]:
    """Per checkpoint reader (``KubeletProfile.state_reader``), the error its ``restoreState`` meets
    loading this file (the formats it tries, their checksums), for the readers that refuse it: what
    a kubelet of another minor, or with other gates, would say of the same bytes. ``policy``: the
    file's own, so only the load is judged, not the configured policy."""
    files = StateFiles(text, None) if manager == "cpu" else StateFiles(None, text)
    refused: dict[str, str] = {}
    for kubelet, gates in _readers():
        try:
            if manager == "cpu":
                restore_cpu_state(files, policy=policy, kubelet=kubelet, feature_gates=gates)
            else:
                restore_memory_state(files, policy=policy, kubelet=kubelet, feature_gates=gates)
        except RestoreError as err:
            if not err.inner.startswith(("configured policy", "[memorymanager] configured policy", "could not parse")):
                refused[kubelet.state_reader(gates)] = err.inner
    return refused


# ---------------------------------------------------------------------------------------------
# The files as a kubelet writes them (what a snapshot's allocations stand for)


class _Fields(dict[str, object]):
    """A struct's fields for ``_go_json``: written in declaration order, not sorted like a map's keys."""


def _go_json(value: object) -> str:
    """``json.Marshal``: compact, map keys sorted as strings, struct fields in order, ``<``, ``>``, ``&``
    escaped."""
    if isinstance(value, dict):
        pairs = [(str(k), v) for k, v in value.items()]
        items = pairs if isinstance(value, _Fields) else sorted(pairs)
        return "{" + ",".join(f"{_go_json(k)}:{_go_json(v)}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_go_json(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        for ch, esc in (
            ("<", "\\u003c"),
            (">", "\\u003e"),
            ("&", "\\u0026"),
            ("\u2028", "\\u2028"),
            ("\u2029", "\\u2029"),
        ):
            text = text.replace(ch, esc)
        return text
    return str(value)


def _written(formats: Sequence[StateFormat], version: str) -> tuple[str, str]:
    """The format a minor writes and the type name its ``MarshalCheckpoint`` checksums under: the legacy
    (unversioned) name, the last a reader accepts, so older kubelets verify it too."""
    fmt = next(f for f in formats if f.version == version)
    return fmt.version, fmt.type_names[-1]


def _cpu_doc(state: CPUState, *, pods: bool) -> tuple[dict[str, object], Struct, GoType]:
    """The fields of a v2 (or, with ``pods``, v3) CPU checkpoint as ``json.Marshal`` writes them, and the
    Go value its checksum covers."""
    raw = {pod: {c: str(cpus) for c, cpus in containers.items()} for pod, containers in state.entries.items()}
    go_type = _CPU_TYPES["v3" if pods else "v2"]
    value = new_struct(go_type)
    value.values.update(PolicyName=state.policy, DefaultCPUSet=str(state.default), Entries=raw)
    doc: dict[str, object] = _Fields(policyName=state.policy, defaultCpuSet=str(state.default))
    if raw:
        doc["entries"] = raw
    if pods:
        value.values["PodEntries"] = {p: CPUSetValue(tuple(cpus)) for p, cpus in state.pod_entries.items()}
        if state.pod_entries:
            doc["podEntries"] = {p: _Fields(cpuSet=str(cpus)) for p, cpus in state.pod_entries.items() if cpus}
    return doc, value, go_type


def render_cpu_state(state: CPUState, kubelet: KubeletProfile, feature_gates: Mapping[str, object] | None) -> str:
    """cpu_manager_state as ``kubelet`` writes ``state`` with these gates: the newest format its
    ``restoreState`` reads (``KubeletProfile.state_written``), checksummed under the legacy type name.
    The newest (1.37's v4, from its PRs) keeps the v2 fields inline (checksum zeroed) beside the ``data``
    payload and its ``dataChecksum``."""
    version, type_name = _written(
        kubelet.cpu_state_formats(feature_gates), kubelet.state_written(CPU_STATE, feature_gates)
    )
    if version == "v4":
        inline, _, _ = _cpu_doc(state, pods=False)
        payload, _, _ = _cpu_doc(state, pods=True)
        data = _go_json(payload)
        return _go_json(_Fields(**inline, checksum=0, data=data, dataChecksum=string_checksum(data)))
    doc, value, _ = _cpu_doc(state, pods=version == "v3")
    return _go_json(_Fields(**doc, checksum=checksum(value, type_name=type_name)))


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
        raw_machine[node] = _Fields(
            numberOfAssignments=numa.assignments,
            memoryMap=None if numa.memory is None else {
                r: None if t is None else _Fields(total=t.total, systemReserved=t.system_reserved,
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
        return [_Fields(numaAffinity=list(b.numa), type=b.type, size=b.size) for b in blocks]

    value = new_struct(_MEMORY_TYPES["v2" if pods else "v1"])
    value.values.update(
        PolicyName=state.policy,
        MachineState=go_machine,
        Entries={p: {c: go_blocks(b) for c, b in cs.items()} for p, cs in state.entries.items()},
    )
    doc: dict[str, object] = _Fields(policyName=state.policy, machineState=raw_machine)
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
                p: _Fields(memoryBlocks=raw_blocks(b)) if b else _Fields() for p, b in state.pod_entries.items()
            }
    return doc, value


def render_memory_state(state: MemoryState, kubelet: KubeletProfile, feature_gates: Mapping[str, object] | None) -> str:
    """memory_manager_state as ``kubelet`` writes ``state`` (see ``render_cpu_state``; 1.37's v3 keeps the
    v1 fields inline beside its ``data`` payload)."""
    formats = kubelet.memory_state_formats(feature_gates)
    version, type_name = _written(formats, kubelet.state_written(MEMORY_STATE, feature_gates))
    if version == "v3":
        inline, _ = _memory_doc(state, pods=False)
        payload, _ = _memory_doc(state, pods=True)
        data = _go_json(payload)
        return _go_json(_Fields(**inline, checksum=0, data=data, dataChecksum=string_checksum(data)))
    doc, value = _memory_doc(state, pods=version == "v2")
    return _go_json(_Fields(**doc, checksum=checksum(value, type_name=type_name)))


def render_state_files(
    kubelet: KubeletProfile,
    feature_gates: Mapping[str, object] | None,
    cpu: CPUState | None,
    memory: MemoryState | None,
    *,
    root_dir: str = "/var/lib/kubelet",
) -> StateFiles:
    """Both checkpoint files as ``kubelet`` writes them (None: no such file)."""
    return StateFiles(
        None if cpu is None else render_cpu_state(cpu, kubelet, feature_gates),
        None if memory is None else render_memory_state(memory, kubelet, feature_gates),
        root_dir,
    )
