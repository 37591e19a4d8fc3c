"""The resource managers' checkpoint files under the kubelet root dir.

``cpu_manager_state`` (v2 entries by pod UID and container name; legacy v1 by container ID),
``memory_manager_state`` (NUMA ``cells``, or ``nodes`` as the website example spells it) and
``device-plugins/kubelet_internal_checkpoint`` (Go field names, NUMA ids as string keys, "-1" for
devices without topology, ``null`` for no allocations, V1 plain ID lists). The checksum is opaque
(FNV-32a over a Go-specific dump), kept as a number only. Unknown keys are tolerated: forks and newer
kubelets add some (``podEntries``, ``BootID``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.parse.documents import load_json

NO_TOPOLOGY = -1


@dataclass(frozen=True)
class CpuManagerState:
    """``entries`` maps pod UID → container name → cpuset (v2). A v1 file keys by container ID
    instead (``entries_v1``); the kubelet migrates it on start through its container map."""

    policy_name: str
    default_cpuset: CPUSet
    entries: dict[str, dict[str, CPUSet]]
    entries_v1: dict[str, CPUSet]
    version: Literal["v1", "v2"]
    checksum: int

    def assigned(self) -> CPUSet:
        """Every CPU held exclusively by some container."""
        cpus = CPUSet()
        for containers in self.entries.values():
            for cpuset in containers.values():
                cpus = cpus | cpuset
        for cpuset in self.entries_v1.values():
            cpus = cpus | cpuset
        return cpus


@dataclass(frozen=True)
class MemoryTable:
    total: int
    system_reserved: int
    allocatable: int
    reserved: int
    free: int


@dataclass(frozen=True)
class NumaMemoryState:
    number_of_assignments: int
    memory_map: dict[str, MemoryTable]
    cells: tuple[int, ...]


@dataclass(frozen=True)
class MemoryBlock:
    numa_affinity: tuple[int, ...]
    type: str
    size: int


@dataclass(frozen=True)
class MemoryManagerState:
    policy_name: str
    machine_state: dict[int, NumaMemoryState]
    entries: dict[str, dict[str, tuple[MemoryBlock, ...]]]
    checksum: int


@dataclass(frozen=True)
class PodDevicesEntry:
    """Devices of one resource given to one container; ``devices`` maps NUMA id (-1 = none) → IDs."""

    pod_uid: str
    container: str
    resource: str
    devices: dict[int, tuple[str, ...]]


@dataclass(frozen=True)
class DeviceCheckpoint:
    entries: tuple[PodDevicesEntry, ...]
    registered: dict[str, tuple[str, ...]]
    version: Literal["v1", "v2"]
    checksum: int


# ---------------------------------------------------------------------------------------------
# small typed getters: every malformed value names its JSON path


def _obj(value: Any, source: str, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"expected a JSON object, got {_kind(value)}", source=source, where=where)
    return value


def _optional_obj(value: Any, source: str, where: str) -> dict[str, Any]:
    """An ``omitempty`` map: absent or null means empty."""
    return {} if value is None else _obj(value, source, where)


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _str(value: Any, source: str, where: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"expected a string, got {_kind(value)}", source=source, where=where)
    return value


def _int(value: Any, source: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"expected a non-negative integer, got {value!r}", source=source, where=where)
    return value


def _field(doc: dict[str, Any], key: str, source: str, where: str = "") -> Any:
    if key not in doc:
        raise InputError(
            f"missing key {key!r}; the file looks truncated or is not this checkpoint",
            source=source,
            where=where or None,
        )
    return doc[key]


def _cpuset(value: Any, source: str, where: str) -> CPUSet:
    try:
        return CPUSet.parse(_str(value, source, where))
    except InputError as err:
        raise InputError(err.message, source=source, where=where) from None


# ---------------------------------------------------------------------------------------------


def parse_cpu_manager_state(text: str | bytes, *, source: str = "cpu_manager_state") -> CpuManagerState:
    doc = _obj(load_json(text, source=source, expected="a cpu_manager_state JSON object"), source, "$")
    policy = _str(_field(doc, "policyName", source), source, "policyName")
    default = _cpuset(_field(doc, "defaultCpuSet", source), source, "defaultCpuSet")
    checksum = _int(_field(doc, "checksum", source), source, "checksum")
    entries = _optional_obj(doc.get("entries"), source, "entries")
    v1 = any(isinstance(v, str) for v in entries.values())
    if v1:
        return CpuManagerState(
            policy_name=policy,
            default_cpuset=default,
            entries={},
            entries_v1={cid: _cpuset(cpus, source, f"entries.{cid}") for cid, cpus in entries.items()},
            version="v1",
            checksum=checksum,
        )
    parsed = {
        pod: {
            name: _cpuset(cpus, source, f"entries.{pod}.{name}")
            for name, cpus in _obj(containers, source, f"entries.{pod}").items()
        }
        for pod, containers in entries.items()
    }
    return CpuManagerState(policy, default, parsed, {}, "v2", checksum)


def _memory_table(value: Any, source: str, where: str) -> MemoryTable:
    doc = _obj(value, source, where)
    keys = ("total", "systemReserved", "allocatable", "reserved", "free")
    nums = [_int(_field(doc, k, source, where), source, f"{where}.{k}") for k in keys]
    return MemoryTable(*nums)


def parse_memory_manager_state(text: str | bytes, *, source: str = "memory_manager_state") -> MemoryManagerState:
    doc = _obj(load_json(text, source=source, expected="a memory_manager_state JSON object"), source, "$")
    policy = _str(_field(doc, "policyName", source), source, "policyName")
    checksum = _int(_field(doc, "checksum", source), source, "checksum")
    machine: dict[int, NumaMemoryState] = {}
    for node_key, state in _optional_obj(doc.get("machineState"), source, "machineState").items():
        where = f"machineState.{node_key}"
        if not node_key.isdigit():
            raise InputError(f"expected a NUMA node id as key, got {node_key!r}", source=source, where=where)
        node = _obj(state, source, where)
        cells_key = "cells" if "cells" in node else "nodes"
        cells = node.get(cells_key)
        if not isinstance(cells, list):
            raise InputError(
                "expected a list of NUMA ids under 'cells' (or the docs' 'nodes')", source=source, where=where
            )
        machine[int(node_key)] = NumaMemoryState(
            number_of_assignments=_int(node.get("numberOfAssignments", 0), source, f"{where}.numberOfAssignments"),
            memory_map={
                name: _memory_table(table, source, f"{where}.memoryMap.{name}")
                for name, table in _optional_obj(node.get("memoryMap"), source, f"{where}.memoryMap").items()
            },
            cells=tuple(_int(c, source, f"{where}.{cells_key}") for c in cells),
        )
    entries: dict[str, dict[str, tuple[MemoryBlock, ...]]] = {}
    for pod, containers in _optional_obj(doc.get("entries"), source, "entries").items():
        entries[pod] = {}
        for name, blocks in _obj(containers, source, f"entries.{pod}").items():
            where = f"entries.{pod}.{name}"
            if not isinstance(blocks, list):
                raise InputError(f"expected a list of memory blocks, got {_kind(blocks)}", source=source, where=where)
            entries[pod][name] = tuple(_memory_block(b, source, f"{where}[{i}]") for i, b in enumerate(blocks))
    return MemoryManagerState(policy_name=policy, machine_state=machine, entries=entries, checksum=checksum)


def _memory_block(value: Any, source: str, where: str) -> MemoryBlock:
    block = _obj(value, source, where)
    affinity = _field(block, "numaAffinity", source, where)
    if not isinstance(affinity, list):
        raise InputError("expected a list of NUMA ids", source=source, where=f"{where}.numaAffinity")
    return MemoryBlock(
        numa_affinity=tuple(_int(n, source, f"{where}.numaAffinity") for n in affinity),
        type=_str(_field(block, "type", source, where), source, f"{where}.type"),
        size=_int(_field(block, "size", source, where), source, f"{where}.size"),
    )


def parse_device_checkpoint(text: str | bytes, *, source: str = "kubelet_internal_checkpoint") -> DeviceCheckpoint:
    doc = _obj(load_json(text, source=source, expected="a device manager checkpoint JSON object"), source, "$")
    data = _obj(_field(doc, "Data", source), source, "Data")
    checksum = _int(_field(doc, "Checksum", source), source, "Checksum")
    raw_entries = data.get("PodDeviceEntries")
    if raw_entries is not None and not isinstance(raw_entries, list):
        raise InputError(
            f"expected a list or null, got {_kind(raw_entries)}", source=source, where="Data.PodDeviceEntries"
        )
    entries = []
    v1 = False
    for i, raw in enumerate(raw_entries or []):
        where = f"Data.PodDeviceEntries[{i}]"
        entry = _obj(raw, source, where)
        ids = entry.get("DeviceIDs")
        if isinstance(ids, list):  # V1 (<= 1.19): a plain list, read back by the kubelet as NUMA 0
            v1 = True
            devices = {0: tuple(_str(d, source, f"{where}.DeviceIDs") for d in ids)}
        elif isinstance(ids, dict):
            devices = {}
            for numa, devs in ids.items():
                if not numa.lstrip("-").isdigit():
                    raise InputError(
                        f'expected a NUMA id key such as "1" or "-1", got {numa!r}',
                        source=source,
                        where=f"{where}.DeviceIDs",
                    )
                if not isinstance(devs, list):
                    raise InputError(
                        f"expected a list of device IDs, got {_kind(devs)}",
                        source=source,
                        where=f"{where}.DeviceIDs.{numa}",
                    )
                devices[int(numa)] = tuple(_str(d, source, f"{where}.DeviceIDs.{numa}") for d in devs)
        elif ids is None:
            devices = {}
        else:
            raise InputError(
                f"expected a map of NUMA id to IDs, got {_kind(ids)}", source=source, where=f"{where}.DeviceIDs"
            )
        entries.append(
            PodDevicesEntry(
                pod_uid=_str(_field(entry, "PodUID", source, where), source, f"{where}.PodUID"),
                container=_str(_field(entry, "ContainerName", source, where), source, f"{where}.ContainerName"),
                resource=_str(_field(entry, "ResourceName", source, where), source, f"{where}.ResourceName"),
                devices=dict(sorted(devices.items())),
            )
        )
    registered = {}
    for resource, ids in _optional_obj(data.get("RegisteredDevices"), source, "Data.RegisteredDevices").items():
        if not isinstance(ids, list):
            raise InputError(
                f"expected a list of device IDs, got {_kind(ids)}",
                source=source,
                where=f"Data.RegisteredDevices.{resource}",
            )
        registered[resource] = tuple(_str(d, source, f"Data.RegisteredDevices.{resource}") for d in ids)
    return DeviceCheckpoint(
        entries=tuple(entries), registered=registered, version="v1" if v1 else "v2", checksum=checksum
    )
