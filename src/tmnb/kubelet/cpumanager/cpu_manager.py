"""The CPU manager's ``NewManager``: its start-up checks, each a small function returning the kubelet's
text or None, so the model's start (``NodeSimulator``) raises it and ``kubelet.startup.checks`` runs
it on its own for the settings validator.

Ports ``NewManager`` of pkg/kubelet/cm/cpumanager/cpu_manager.go and ``NewNonePolicy`` of
policy_none.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Mapping

from tmnb.kubelet import gostr
from tmnb.kubelet.names import CPU_POLICIES, unknown_policy


def cpu_policy_error(policy: str) -> str | None:
    return None if policy in CPU_POLICIES else unknown_policy(policy)


def none_policy_options_error(options: Mapping[str, str]) -> str | None:
    """``NewNonePolicy`` refuses any option (the option-map gate is GA and locked in every supported
    minor, so ``run()`` checks none), wrapped as ``NewManager`` wraps it."""
    if not options:
        return None
    return f"new none policy error: None policy: received unsupported options={gostr.format_string_map(options)}"


#: cpumanager.NewManager without a CPU reservation: ``GetNodeAllocatableReservation`` leaves zero
#: quantities out, so the cpu key is missing and its first check fails, not the "> 0" one.
NO_CPU_RESERVATION = "[cpumanager] unable to determine reserved CPU resources for static policy"


def cpu_reservation_error(reserved_cpus: int) -> str | None:
    return NO_CPU_RESERVATION if reserved_cpus <= 0 else None


def static_policy_error(text: str) -> str:
    """``NewStaticPolicy``'s error (options, align-by-socket, the reservation) as ``NewManager`` wraps it."""
    return f"new static policy error: {text}"
