"""The restore of the resource managers' state files that both managers share, as the kubelet does it
when it starts.

``cpumanager`` and ``memorymanager`` ``Start`` call ``NewCheckpointState``, whose ``restoreState``
loads the checkpoint (a missing file is a fresh state), compares its policy with the configured
one and, for the CPU manager, parses its CPU lists. Any failure is wrapped
``could not restore state from checkpoint: <error>, please drain this node and delete the ... checkpoint
file "<path>" before restarting Kubelet`` (state_checkpoint.go), and the container manager's ``Start``
prefixes ``start cpu manager error: `` / ``start memory manager error: ``: the kubelet exits. Each
manager's own formats are in ``cpu_state`` and ``memory_state``.

Ports ``NewCheckpointState`` and ``restoreState`` of pkg/kubelet/cm/cpumanager/state/state_checkpoint.go
and pkg/kubelet/cm/memorymanager/state/state_checkpoint.go, ``GetCheckpoint`` of
pkg/kubelet/checkpointmanager/checkpoint_manager.go and ``VerifyChecksum`` of
pkg/kubelet/checkpointmanager/checksum/checksum.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from tmnb.cpuset import MAX_CPUS
from tmnb.kubelet import gostr
from tmnb.kubelet.errors import Unpredictable
from tmnb.kubelet.profiles import StateFormat
from tmnb.parse.godecode import GoJSONError, GoType, Struct, checksum, new_struct, unmarshal

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


def parse_cpuset(text: str) -> tuple[int, ...]:
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
    loaded = unmarshal(text, new_struct(go_type), parse_cpuset)
    expected = loaded.get("Checksum")
    if expected == 0 and fmt.zero_checksum:
        return loaded
    if any(checksum(loaded, type_name=name) == expected for name in fmt.type_names):
        return loaded
    raise GoJSONError("checkpoint is corrupted")


#: A restored state of either manager.
_State = TypeVar("_State")


def first_readable(
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
