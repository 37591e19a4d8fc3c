"""cpu_manager_state: restored as each minor's CPU manager restores it, and written as it writes it.

The Go structs are declared field by field (the checksum covers them): v1 (keyed by container ID,
migrated through the runtime's containers), v2, v3 (``podEntries``, PodLevelResourceManagers) and
1.37's v4 (the v2 fields inline beside a ``data`` payload and its ``dataChecksum``).

Ports pkg/kubelet/cm/cpumanager/state/checkpoint.go and the CPU manager's ``restoreState`` of
state_checkpoint.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.kubelet import gostr
from tmnb.kubelet.checkpoints.marshal import Fields, go_json, written
from tmnb.kubelet.checkpoints.restore import RestoreError, StateFiles, first_readable, mismatch, parse_cpuset
from tmnb.kubelet.profiles import CPU_STATE, KubeletProfile
from tmnb.parse.godecode import (
    CHECKSUM,
    CPU_POD_ENTRY,
    STRING,
    CPUSetValue,
    GoJSONError,
    GoType,
    Struct,
    checksum,
    map_of,
    new_struct,
    struct,
)
from tmnb.parse.gojson import string_checksum
from tmnb.parse.state_files import BadCpuList, CheckpointRefused, parse_cpu_manager_state


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


def _cpu_list(text: str, what: str) -> CPUSet:
    try:
        return CPUSet(parse_cpuset(text))
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


def restore_cpu_state(
    files: StateFiles, *, policy: str, kubelet: KubeletProfile, feature_gates: Mapping[str, object] | None
) -> CPUState | None:
    """``NewCheckpointState`` of the CPU manager under ``policy``: the restored state, None for no file,
    or ``RestoreError`` with ``restoreState``'s error. Go walks maps in random order; where several
    entries are wrong tmnb names the first in the file."""
    text = files.cpu_manager_state
    if text is None:
        return None
    loaded = first_readable(text, kubelet.cpu_state_formats(feature_gates), _CPU_TYPES, "v4", _newest_cpu, policy)
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


def _cpu_doc(state: CPUState, *, pods: bool) -> tuple[dict[str, object], Struct, GoType]:
    """The fields of a v2 (or, with ``pods``, v3) CPU checkpoint as ``json.Marshal`` writes them, and the
    Go value its checksum covers."""
    raw = {pod: {c: str(cpus) for c, cpus in containers.items()} for pod, containers in state.entries.items()}
    go_type = _CPU_TYPES["v3" if pods else "v2"]
    value = new_struct(go_type)
    value.values.update(PolicyName=state.policy, DefaultCPUSet=str(state.default), Entries=raw)
    doc: dict[str, object] = Fields(policyName=state.policy, defaultCpuSet=str(state.default))
    if raw:
        doc["entries"] = raw
    if pods:
        value.values["PodEntries"] = {p: CPUSetValue(tuple(cpus)) for p, cpus in state.pod_entries.items()}
        if state.pod_entries:
            doc["podEntries"] = {p: Fields(cpuSet=str(cpus)) for p, cpus in state.pod_entries.items() if cpus}
    return doc, value, go_type


def render_cpu_state(state: CPUState, kubelet: KubeletProfile, feature_gates: Mapping[str, object] | None) -> str:
    """cpu_manager_state as ``kubelet`` writes ``state`` with these gates: the newest format its
    ``restoreState`` reads (``KubeletProfile.state_written``), checksummed under the legacy type name.
    The newest (1.37's v4, from its PRs) keeps the v2 fields inline (checksum zeroed) beside the ``data``
    payload and its ``dataChecksum``."""
    version, type_name = written(
        kubelet.cpu_state_formats(feature_gates), kubelet.state_written(CPU_STATE, feature_gates)
    )
    if version == "v4":
        inline, _, _ = _cpu_doc(state, pods=False)
        payload, _, _ = _cpu_doc(state, pods=True)
        data = go_json(payload)
        return go_json(Fields(**inline, checksum=0, data=data, dataChecksum=string_checksum(data)))
    doc, value, _ = _cpu_doc(state, pods=version == "v3")
    return go_json(Fields(**doc, checksum=checksum(value, type_name=type_name)))
