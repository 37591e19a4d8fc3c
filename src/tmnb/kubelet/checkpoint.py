"""The resource managers' state files as the kubelet restores them when it starts.

``cpumanager`` and ``memorymanager`` ``Start`` call ``NewCheckpointState``, whose ``restoreState``
loads the checkpoint (a missing file is a fresh state), compares its policy with the configured
one and, for the CPU manager, parses its CPU lists. Any failure is wrapped
``could not restore state from checkpoint: <error>, please drain this node and delete the ... checkpoint
file "<path>" before restarting Kubelet`` (state_checkpoint.go), and the container manager's ``Start``
prefixes ``start cpu manager error: `` / ``start memory manager error: ``: the kubelet exits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tmnb.errors import InputError
from tmnb.kubelet import gostr

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


class Unpredictable(InputError):
    """The kubelet's start-up depends on a file tmnb could not read as the kubelet does."""


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
