"""The resource managers' checkpoint files under the kubelet root dir, read as the kubelet reads them.

``cpu_manager_state``: the newest kubelets write v4, a ``data`` string holding the authoritative
JSON payload signed by ``dataChecksum``, beside a copy of the fields (``checksum`` zeroed) for older
kubelets; ``loadAndMigrateCheckpointV4`` reads ``data`` whenever ``data`` or ``dataChecksum`` is set
and never falls back to the copy, else it reads v3 (``podEntries``) or v2 (entries by pod UID and
container name). v1 (entries by container ID) only kubelets before v3 could migrate.
``memory_manager_state`` is the same story one version lower (v3 ``data``, v2 ``podEntries``, v1).
``device-plugins/kubelet_internal_checkpoint``: Go field names, NUMA ids as string keys, "-1" for
devices without topology, ``null`` for no allocations, V1 plain ID lists.

Keys are matched as Go's ``encoding/json`` matches them (case-insensitively, last one wins; see
``tmnb.parse.gojson``). The ``dataChecksum`` is verified (FNV-32a of the dumped string, as
``checksum.New`` computes it); the legacy ``checksum`` covers a Go-specific struct dump and stays an
opaque number. Unknown keys are ignored, as the kubelet ignores them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tmnb.cpuset import MAX_CPUS, CPUSet
from tmnb.errors import InputError
from tmnb.parse.documents import load_json
from tmnb.parse.gojson import GoStruct, kind, string_checksum
from tmnb.parse.numbers import INT64_MAX, check_int


class CheckpointRefused(InputError):
    """A checkpoint the kubelet refuses to load; ``kubelet`` is its error, as ``restoreState`` returns
    it (before ``NewCheckpointState`` wraps it)."""

    def __init__(self, message: str, *, kubelet: str, source: str | None = None, where: str | None = None) -> None:
        self.kubelet = kubelet
        super().__init__(message, source=source, where=where)


class BadCpuList(InputError):
    """A CPU list ``k8s.io/utils/cpuset.Parse`` refuses: ``restoreState`` fails on it after comparing
    policies. ``text`` is the list as written; ``pod``/``container`` name the entry (both None for
    ``defaultCpuSet``); ``policy`` is the checkpoint's policy name."""

    def __init__(
        self,
        message: str,
        *,
        text: str,
        pod: str | None = None,
        container: str | None = None,
        source: str | None = None,
        where: str | None = None,
    ) -> None:
        self.text, self.pod, self.container = text, pod, container
        self.policy: str | None = None
        super().__init__(message, source=source, where=where)


def _go_cpu_ranges(text: str) -> list[tuple[int, int]] | None:
    """The ranges ``cpuset.Parse`` reads from ``text`` (an optional sign and ASCII digits per bound,
    ``N`` or ``N-M`` with N <= M, no spaces); None where it fails (``tmnb.kubelet.gostr`` has its words)."""
    if text == "":
        return []
    ranges = []
    for part in text.split(","):
        bounds = part.split("-", 1)
        values = []
        for bound in bounds:
            digits = bound[1:] if bound[:1] in ("+", "-") else bound
            if not digits or not digits.isascii() or not digits.isdigit() or len(digits) > 19:
                return None
            values.append(int(bound))
        if not all(-(1 << 63) <= v < (1 << 63) for v in values) or values[0] > values[-1]:
            return None
        ranges.append((values[0], values[-1]))
    return ranges


#: NUMA node ids the kernel can number (MAX_NUMNODES is at most 1 << 10).
_MAX_NUMA_ID = 1023


@dataclass(frozen=True)
class CpuManagerState:
    """``entries`` maps pod UID → container name → cpuset (v2). A v1 file keys by container ID
    instead (``entries_v1``); the kubelet migrates it on start through its container map."""

    policy_name: str
    default_cpuset: CPUSet
    entries: dict[str, dict[str, CPUSet]]
    entries_v1: dict[str, CPUSet]
    version: Literal["v1", "v2", "v3", "v4"]
    checksum: int
    #: Pod-level exclusive CPU sets by pod UID (``PodLevelResourceManagers``; v3 and v4 only).
    pod_entries: dict[str, CPUSet] = field(default_factory=dict)
    #: The verified checksum of the v4 ``data`` payload.
    data_checksum: int | None = None

    def assigned(self) -> CPUSet:
        """Every CPU held exclusively by some container or pod."""
        cpus = CPUSet()
        for containers in self.entries.values():
            for cpuset in containers.values():
                cpus = cpus | cpuset
        for cpuset in (*self.entries_v1.values(), *self.pod_entries.values()):
            cpus = cpus | cpuset
        return cpus


@dataclass(frozen=True)
class CheckpointMemoryTable:
    total: int
    system_reserved: int
    allocatable: int
    reserved: int
    free: int


@dataclass(frozen=True)
class NumaMemoryState:
    number_of_assignments: int
    memory_map: dict[str, CheckpointMemoryTable]
    cells: tuple[int, ...]


@dataclass(frozen=True)
class CheckpointMemoryBlock:
    numa_affinity: tuple[int, ...]
    type: str
    size: int


@dataclass(frozen=True)
class MemoryManagerState:
    policy_name: str
    machine_state: dict[int, NumaMemoryState]
    entries: dict[str, dict[str, tuple[CheckpointMemoryBlock, ...]]]
    checksum: int
    #: Pod-level memory blocks by pod UID (``PodLevelResourceManagers``; v2 and v3 only).
    pod_entries: dict[str, tuple[CheckpointMemoryBlock, ...]] = field(default_factory=dict)
    version: Literal["v1", "v2", "v3"] = "v1"
    #: The verified checksum of the v3 ``data`` payload.
    data_checksum: int | None = None


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
# the authoritative ``data`` payload of v4 CPU / v3 memory checkpoints


def _payload(doc: GoStruct, *, version: str, manager: str, expected: str) -> tuple[GoStruct, int] | None:
    """The decoded ``data`` payload and its checksum when the file is the newest format, else None.

    Follows ``loadAndMigrateCheckpointV4`` (cpumanager) / ``loadAndMigrateCheckpointV3``
    (memorymanager): once ``data`` or ``dataChecksum`` is set, a payload that does not decode or
    does not match its checksum is an error; the kubelet does not fall back to the older fields.
    """
    data, data_where = doc.string("data", required=False)
    data_checksum = doc.uint64("dataChecksum", required=False)
    if not data and not data_checksum:
        return None
    refused = f"the kubelet refuses this checkpoint (could not load {version} checkpoint)"
    undecodable = f"could not load {version} checkpoint: failed to deserialize {manager} checkpoint data: "
    if not data:
        raise CheckpointRefused(
            f"dataChecksum is set but data is empty: {refused}; expected {expected}",
            kubelet=undecodable + "unexpected end of JSON input",
            source=doc.source,
            where=data_where,
        )
    try:
        inner = load_json(data, source=doc.source, expected=expected, keep_pairs=True)
    except InputError as err:
        # Go's json error text is not reproduced; tmnb's description stands in
        raise CheckpointRefused(
            f"{err.message}; {refused}", kubelet=undecodable + err.message, source=doc.source, where=data_where
        ) from None
    actual = string_checksum(data)
    if actual != data_checksum:
        raise CheckpointRefused(
            f"dataChecksum {data_checksum} does not match the data payload (its checksum is {actual}): the "
            f"checkpoint is corrupted and {refused}; drain the node and delete the file before restarting the kubelet",
            kubelet=f"could not load {version} checkpoint: checkpoint is corrupted",
            source=doc.source,
            where=doc.path("dataChecksum"),
        )
    return GoStruct(inner, source=doc.source, where=data_where), data_checksum


# ---------------------------------------------------------------------------------------------
# cpu_manager_state


def _cpuset(value: object, source: str, where: str, *, pod: str | None = None, container: str | None = None) -> CPUSet:
    """A CPU list as ``cpuset.Parse`` reads it: no spaces, ``+3`` is CPU 3."""
    if value is None:  # a null string in a Go map[string]string is ""
        return CPUSet()
    if not isinstance(value, str):
        raise InputError(f"expected a CPU list string, got {kind(value)}", source=source, where=where)
    ranges = _go_cpu_ranges(value)
    if ranges is None:
        shown = value if len(value) <= 60 else value[:57] + "..."
        raise BadCpuList(
            f"invalid CPU list {shown!r}: the kubelet's cpuset.Parse takes N or N-M, comma-separated, no spaces, and "
            "refuses the checkpoint",
            text=value,
            pod=pod,
            container=container,
            source=source,
            where=where,
        )
    for lo, hi in ranges:
        if lo < 0 or hi >= MAX_CPUS:
            raise InputError(
                f"CPU {lo if lo < 0 else hi} is beyond the CPU ids Linux has (0-{MAX_CPUS - 1})",
                source=source,
                where=where,
            )
    return CPUSet(cpu for lo, hi in ranges for cpu in range(lo, hi + 1))


def _cpu_entries(doc: GoStruct) -> dict[str, dict[str, CPUSet]]:
    """``entries``: map[podUID]map[containerName]cpuset (v2 and later)."""
    raw, where = doc.mapping("entries")
    out: dict[str, dict[str, CPUSet]] = {}
    for pod, containers in raw.items():
        if containers is not None and not isinstance(containers, dict):
            raise InputError(
                f"expected an object of container name to CPU list, got {kind(containers)}",
                source=doc.source,
                where=f"{where}.{pod}",
            )
        out[pod] = {
            name: _cpuset(cpus, doc.source, f"{where}.{pod}.{name}", pod=pod, container=name)
            for name, cpus in (containers or {}).items()
        }
    return out


def _cpu_pod_entries(doc: GoStruct) -> dict[str, CPUSet]:
    """``podEntries``: map[podUID]{"cpuSet": cpuset} (``PodEntry.UnmarshalJSON``)."""
    raw, where = doc.mapping("podEntries")
    out = {}
    for pod, entry in raw.items():
        cpus, cpus_where = GoStruct(entry or {}, source=doc.source, where=f"{where}.{pod}").string(
            "cpuSet", required=False
        )
        try:
            out[pod] = _cpuset(cpus, doc.source, cpus_where)
        except BadCpuList as err:  # PodEntry.UnmarshalJSON parses it while the file loads, in words of its own
            raise InputError(err.message, source=err.source, where=err.where) from None
    return out


def _cpu_fields(doc: GoStruct) -> tuple[str, CPUSet, dict[str, dict[str, CPUSet]], dict[str, CPUSet]]:
    policy, _ = doc.string("policyName")
    default, default_where = doc.string("defaultCpuSet")
    try:  # restoreState parses the default set, then the entries
        return policy, _cpuset(default, doc.source, default_where), _cpu_entries(doc), _cpu_pod_entries(doc)
    except BadCpuList as err:
        err.policy = policy
        raise


def parse_cpu_manager_state(text: str | bytes, *, source: str = "cpu_manager_state") -> CpuManagerState:
    doc = GoStruct(
        load_json(text, source=source, expected="a cpu_manager_state JSON object", keep_pairs=True), source=source
    )
    payload = _payload(
        doc, version="v4", manager="cpu manager", expected="a cpu_manager_state data payload (a JSON object)"
    )
    if payload is not None:
        data, data_checksum = payload
        policy, default, entries, pods = _cpu_fields(data)
        return CpuManagerState(
            policy, default, entries, {}, "v4", doc.uint64("checksum", required=False), pods, data_checksum
        )
    checksum = doc.uint64("checksum")
    raw_entries, where = doc.mapping("entries")
    if any(isinstance(v, str) for v in raw_entries.values()):
        # v1: container ID -> cpuset. Kubelets that still read v1 migrated it through the container
        # map on start; the newest (loadCheckpointV2 is the oldest they read) refuse the file.
        policy, _ = doc.string("policyName")
        default_text, default_where = doc.string("defaultCpuSet")
        return CpuManagerState(
            policy_name=policy,
            default_cpuset=_cpuset(default_text, source, default_where),
            entries={},
            entries_v1={cid: _cpuset(cpus, source, f"{where}.{cid}") for cid, cpus in raw_entries.items()},
            version="v1",
            checksum=checksum,
        )
    policy, default, entries, pods = _cpu_fields(doc)
    return CpuManagerState(policy, default, entries, {}, "v3" if doc.has("podEntries") else "v2", checksum, pods)


# ---------------------------------------------------------------------------------------------
# memory_manager_state


def _memory_table(doc: GoStruct) -> CheckpointMemoryTable:
    keys = ("total", "systemReserved", "allocatable", "reserved", "free")
    return CheckpointMemoryTable(*(doc.uint64(k) for k in keys))


def _memory_block(doc: GoStruct) -> CheckpointMemoryBlock:
    if not doc.has("numaAffinity"):
        raise InputError("missing key 'numaAffinity'; expected a list of NUMA ids", source=doc.source, where=doc.where)
    type_, _ = doc.string("type")
    return CheckpointMemoryBlock(
        numa_affinity=doc.int_list("numaAffinity", lo=0, hi=_MAX_NUMA_ID, what="a NUMA node id"),
        type=type_,
        size=doc.uint64("size"),
    )


def _blocks(value: object, source: str, where: str) -> tuple[CheckpointMemoryBlock, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InputError(f"expected a list of memory blocks, got {kind(value)}", source=source, where=where)
    return tuple(_memory_block(GoStruct(b, source=source, where=f"{where}[{i}]")) for i, b in enumerate(value))


def _numa_state(doc: GoStruct) -> NumaMemoryState:
    # The website's example spells the field "nodes"; the kubelet's NUMANodeState says "cells".
    cells_key = "cells" if doc.has("cells") or not doc.has("nodes") else "nodes"
    if not doc.has(cells_key):
        raise InputError(
            "expected a list of NUMA ids under 'cells' (or the docs' 'nodes')", source=doc.source, where=doc.where
        )
    tables, tables_where = doc.mapping("memoryMap")
    return NumaMemoryState(
        number_of_assignments=doc.integer("numberOfAssignments", lo=0, hi=INT64_MAX, go_type="int", required=False),
        memory_map={
            name: _memory_table(GoStruct(table, source=doc.source, where=f"{tables_where}.{name}"))
            for name, table in tables.items()
        },
        cells=doc.int_list(cells_key, lo=0, hi=_MAX_NUMA_ID, what="a NUMA node id"),
    )


def _memory_fields(
    doc: GoStruct,
) -> tuple[
    str,
    dict[int, NumaMemoryState],
    dict[str, dict[str, tuple[CheckpointMemoryBlock, ...]]],
    dict[str, tuple[CheckpointMemoryBlock, ...]],
]:
    policy, _ = doc.string("policyName")
    machine: dict[int, NumaMemoryState] = {}
    states, states_where = doc.mapping("machineState")
    for node_key, state in states.items():
        where = f"{states_where}.{node_key}"
        # NUMANodeMap is a Go map[int]: its keys are decimal integers.
        if not node_key.isdigit() or len(node_key) > 4 or int(node_key) > _MAX_NUMA_ID:
            raise InputError(f"expected a NUMA node id as key, got {node_key[:20]!r}", source=doc.source, where=where)
        machine[int(node_key)] = _numa_state(GoStruct(state, source=doc.source, where=where))
    entries: dict[str, dict[str, tuple[CheckpointMemoryBlock, ...]]] = {}
    raw, entries_where = doc.mapping("entries")
    for pod, containers in raw.items():
        members = GoStruct(containers or {}, source=doc.source, where=f"{entries_where}.{pod}")
        entries[pod] = {
            name: _blocks(blocks, doc.source, f"{members.where}.{name}")
            for name, blocks in dict(containers or {}).items()
        }
    pods: dict[str, tuple[CheckpointMemoryBlock, ...]] = {}
    raw_pods, pods_where = doc.mapping("podEntries")
    for pod, entry in raw_pods.items():
        entry_doc = GoStruct(entry or {}, source=doc.source, where=f"{pods_where}.{pod}")
        hit = entry_doc.lookup("memoryBlocks", nullable=True)
        pods[pod] = _blocks(hit[1], doc.source, entry_doc.path(hit[0])) if hit else ()
    return policy, machine, entries, pods


def parse_memory_manager_state(text: str | bytes, *, source: str = "memory_manager_state") -> MemoryManagerState:
    doc = GoStruct(
        load_json(text, source=source, expected="a memory_manager_state JSON object", keep_pairs=True), source=source
    )
    payload = _payload(
        doc, version="v3", manager="memory manager", expected="a memory_manager_state data payload (a JSON object)"
    )
    if payload is not None:
        data, data_checksum = payload
        policy, machine, entries, pods = _memory_fields(data)
        checksum = doc.uint64("checksum", required=False)
        return MemoryManagerState(policy, machine, entries, checksum, pods, "v3", data_checksum)
    checksum = doc.uint64("checksum")
    policy, machine, entries, pods = _memory_fields(doc)
    return MemoryManagerState(policy, machine, entries, checksum, pods, "v2" if doc.has("podEntries") else "v1")


# ---------------------------------------------------------------------------------------------
# device manager checkpoint


def _device_ids(value: object, source: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InputError(f"expected a list of device IDs, got {kind(value)}", source=source, where=where)
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise InputError(f"expected a device ID string, got {kind(item)}", source=source, where=f"{where}[{i}]")
    return tuple(value)


def parse_device_checkpoint(text: str | bytes, *, source: str = "kubelet_internal_checkpoint") -> DeviceCheckpoint:
    doc = GoStruct(
        load_json(text, source=source, expected="a device manager checkpoint JSON object", keep_pairs=True),
        source=source,
    )
    data = doc.struct("Data")
    checksum = doc.uint64("Checksum")
    hit = data.lookup("PodDeviceEntries", nullable=True)
    raw_entries = hit[1] if hit else None
    entries_where = data.path(hit[0]) if hit else data.path("PodDeviceEntries")
    if raw_entries is not None and not isinstance(raw_entries, list):
        raise InputError(f"expected a list or null, got {kind(raw_entries)}", source=source, where=entries_where)
    entries = []
    v1 = False
    for i, raw in enumerate(raw_entries or []):
        entry = GoStruct(raw, source=source, where=f"{entries_where}[{i}]")
        ids_hit = entry.lookup("DeviceIDs", nullable=True)
        ids = ids_hit[1] if ids_hit else None
        ids_where = entry.path(ids_hit[0] if ids_hit else "DeviceIDs")
        devices: dict[int, tuple[str, ...]]
        if isinstance(ids, list):  # V1 (<= 1.19): a plain list, read back by the kubelet as NUMA 0
            v1 = True
            devices = {0: _device_ids(ids, source, ids_where)}
        elif isinstance(ids, dict):
            devices = {}
            for numa, devs in ids.items():
                # map[int64][]string; -1 files devices without topology
                if not numa.lstrip("-").isdigit() or len(numa) > 5:
                    raise InputError(
                        f'expected a NUMA id key such as "1" or "-1", got {numa[:20]!r}', source=source, where=ids_where
                    )
                node = check_int(
                    int(numa), lo=-1, hi=_MAX_NUMA_ID, what="a NUMA node id", source=source, where=ids_where
                )
                devices[node] = _device_ids(devs, source, f"{ids_where}.{numa}")
        elif ids is None:
            devices = {}
        else:
            raise InputError(f"expected a map of NUMA id to IDs, got {kind(ids)}", source=source, where=ids_where)
        entries.append(
            PodDevicesEntry(
                pod_uid=entry.string("PodUID")[0],
                container=entry.string("ContainerName")[0],
                resource=entry.string("ResourceName")[0],
                devices=dict(sorted(devices.items())),
            )
        )
    registered_raw, registered_where = data.mapping("RegisteredDevices")
    registered = {
        resource: _device_ids(ids, source, f"{registered_where}.{resource}") for resource, ids in registered_raw.items()
    }
    return DeviceCheckpoint(
        entries=tuple(entries), registered=registered, version="v1" if v1 else "v2", checksum=checksum
    )
