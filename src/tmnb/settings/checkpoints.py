"""Would the kubelet restore its state files under these settings?

A policy change without deleting ``cpu_manager_state``/``memory_manager_state``, or a changed online
CPU set under the static policy, makes the kubelet refuse to start and crash-loop (the documented
fix is drain, stop, delete the file, start). The texts are those of ``state_checkpoint.go`` and
``policy_static.go`` ``validateState``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.kubelet import options
from tmnb.kubelet.checkpoint import could_not_restore, cpu_list_error, load_errors, mismatch
from tmnb.kubelet.names import CPU_NONE, CPU_STATIC, MEMORY_NONE
from tmnb.kubelet.profiles import KubeletProfile, resolve
from tmnb.parse.documents import load_json
from tmnb.parse.files import STATE_LIMIT, go_read_error, read_capped
from tmnb.parse.state_files import (
    BadCpuList,
    CheckpointRefused,
    CpuManagerState,
    MemoryManagerState,
    parse_cpu_manager_state,
    parse_memory_manager_state,
)
from tmnb.settings.effective import KubeletSettings
from tmnb.settings.findings import Finding, Findings
from tmnb.snapshot.model import StateFile
from tmnb.versions import KubeVersion


def validate_checkpoints(
    settings: KubeletSettings,
    *,
    version: KubeVersion | None,
    cpu_state: CpuManagerState | None = None,
    memory_state: MemoryManagerState | None = None,
    online_cpus: CPUSet | None = None,
) -> list[Finding]:
    out = Findings(version)
    root = settings.flags.root_dir if settings.flags is not None else "/var/lib/kubelet"
    if cpu_state is not None:
        _check_cpu_state(settings, version, cpu_state, online_cpus, f"{root}/cpu_manager_state", out)
    memory_policy = settings.value("memoryManagerPolicy", MEMORY_NONE)
    if memory_state is not None and memory_state.policy_name != memory_policy:
        out.add(
            "state.memory-policy-mismatch",
            "memoryManagerPolicy",
            "error",
            could_not_restore(
                "memory", f"{root}/memory_manager_state", mismatch("memory", memory_policy, memory_state.policy_name)
            ),
            kubelet=True,
        )
    return list(out)


def _check_cpu_state(
    settings: KubeletSettings,
    version: KubeVersion | None,
    state: CpuManagerState,
    online_cpus: CPUSet | None,
    path: str,
    out: Findings,
) -> None:
    policy = settings.value("cpuManagerPolicy", CPU_NONE)
    if state.policy_name != policy:
        out.add(
            "state.cpu-policy-mismatch",
            "cpuManagerPolicy",
            "error",
            could_not_restore("cpu", path, mismatch("cpu", policy, state.policy_name)),
            kubelet=True,
        )
        return
    if policy != CPU_STATIC or (not state.entries and not state.default_cpuset):
        return  # a fresh static state is initialised, not validated
    default = state.default_cpuset
    if not default:
        out.add("state.cpu-invalid", "cpuManagerPolicy", "error", "default cpuset cannot be empty", kubelet=True)
        return
    strict = _strict_cpu_reservation(settings, resolve(version).profile)
    reserved = _reserved_cpus(settings)
    if reserved is not None:
        if strict and reserved & default:
            message = f'some of strictly reserved cpus: "{reserved}" are present in defaultCpuSet: "{default}"'
            out.add("state.cpu-invalid", "reservedSystemCPUs", "error", message, kubelet=True)
        elif not strict and not reserved <= default:
            message = f'not all reserved cpus: "{reserved}" are present in defaultCpuSet: "{default}"'
            out.add("state.cpu-invalid", "reservedSystemCPUs", "error", message, kubelet=True)
    for pod, containers in state.entries.items():
        for container, cpus in containers.items():
            if cpus & default:
                message = (
                    f'pod: {pod}, container: {container} cpuset: "{cpus}" overlaps with default cpuset "{default}"'
                )
                out.add("state.cpu-invalid", "cpuManagerPolicy", "error", message, kubelet=True)
    if online_cpus is None or (strict and reserved is None):
        return
    known = default | state.assigned() | (reserved if strict and reserved is not None else CPUSet())
    if known != online_cpus:
        out.add(
            "state.cpu-set-changed",
            "cpuManagerPolicy",
            "error",
            f'current set of available CPUs "{online_cpus}" doesn\'t match with CPUs in state "{known}"',
            kubelet=True,
        )


def _reserved_cpus(settings: KubeletSettings) -> CPUSet | None:
    """The reserved set when ``reservedSystemCPUs`` names it (otherwise the kubelet picks CPUs by topology)."""
    try:
        return CPUSet.parse(settings.value("reservedSystemCPUs", "")) or None
    except InputError:
        return None  # reported by validate_settings


def _strict_cpu_reservation(settings: KubeletSettings, kubelet: KubeletProfile) -> bool:
    try:
        parsed = options.parse_cpu_manager_options(
            settings.value("cpuManagerPolicyOptions", {}), kubelet=kubelet, feature_gates=settings.value("featureGates")
        )
    except InputError:  # ConfigRejected included: reported by validate_settings
        return False
    return parsed.strict_cpu_reservation


# ---------------------------------------------------------------------------------------------
# What restoreState meets in a state file, for the snapshot


def _refused_by(manager: Literal["cpu", "memory"], data: bytes, policy: str | None) -> dict[str, str] | None:
    """``load_errors`` of the file, or None where tmnb cannot load it as every reader does (a CPU id
    beyond the model's)."""
    try:
        return load_errors(manager, data, policy or "")
    except InputError:
        return None


def read_state_file(path: Path, *, manager: Literal["cpu", "memory"], shown: str) -> StateFile | None:
    """The checkpoint at ``path`` (``shown`` is its path on the node) as ``NewCheckpointState``
    meets it when the kubelet starts; None when there is none (the kubelet starts from a fresh
    state). The kubelet's words where it refuses the file:

    * a file it cannot read: ``os.ReadFile``'s error; an empty one: ``unexpected end of JSON input``;
      JSON that does not decode: the decoder fails (tmnb's description stands in for Go's text);
    * a v4 CPU / v3 memory checkpoint whose ``data`` does not match ``dataChecksum``:
      ``could not load v4 checkpoint: checkpoint is corrupted`` (it does not fall back to the older
      fields); the legacy ``checksum`` covers a Go struct dump tmnb does not recompute;
    * after the policy comparison, a CPU list ``cpuset.Parse`` refuses (``restoreState``):
      ``could not parse default cpu set "1.3": strconv.Atoi: parsing "1.3": invalid syntax`` or
      ``could not parse cpuset "asd" for container "c" in pod "p": ...`` (Go walks the entries in map
      order; with several bad ones tmnb names the first in the file).

    A file tmnb cannot read as the kubelet does (a v1 CPU checkpoint, migrated through the running
    containers' IDs; a value tmnb's reader refuses) is ``unknown``: no prediction rests on it."""
    unreadable = go_read_error(path, shown)
    if unreadable is not None and unreadable.endswith("no such file or directory"):
        return None  # store.Read: ErrKeyNotFound, a fresh state is written
    if unreadable is not None:
        return StateFile(manager=manager, path=shown, error=unreadable)
    what = f"a {manager}_manager_state checkpoint"
    try:
        data = read_capped(path, limit=STATE_LIMIT, what=what, source=shown)
    except InputError as err:
        return StateFile(manager=manager, path=shown, unknown=err.message)
    if not data.strip(b" \t\r\n"):
        return StateFile(manager=manager, path=shown, error="unexpected end of JSON input")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return StateFile(manager=manager, path=shown, unknown="not UTF-8 text")
    try:
        load_json(data, source=shown, expected=what)
    except InputError as err:
        return StateFile(manager=manager, path=shown, error=err.message)
    try:
        if manager == "cpu":
            cpu = parse_cpu_manager_state(data, source=shown)
            if cpu.version == "v1":
                return StateFile(
                    manager=manager,
                    path=shown,
                    policy=cpu.policy_name,
                    unknown="a v1 checkpoint, keyed by container ID: the kubelet migrates it through the containers "
                    "it finds running",
                )
            return StateFile(
                manager=manager,
                path=shown,
                policy=cpu.policy_name,
                refused_by=_refused_by(manager, data, cpu.policy_name),
            )
        memory = parse_memory_manager_state(data, source=shown)
        return StateFile(
            manager=manager,
            path=shown,
            policy=memory.policy_name,
            refused_by=_refused_by(manager, data, memory.policy_name),
        )
    except CheckpointRefused as err:  # the newest format's payload: older kubelets read the fields beside it
        return StateFile(manager=manager, path=shown, error=err.kubelet, refused_by=_refused_by(manager, data, None))
    except BadCpuList as err:
        return StateFile(
            manager=manager,
            path=shown,
            policy=err.policy,
            error=cpu_list_error(err),
            error_after_policy=True,
            refused_by=_refused_by(manager, data, err.policy),
        )
    except InputError as err:
        return StateFile(manager=manager, path=shown, unknown=err.message)
