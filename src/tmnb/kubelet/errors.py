"""Errors the modelled kubelet raises while admitting a pod, as members of the tmnb family, and the
ways the model says it cannot predict the kubelet.

Admission errors are outcomes, not user mistakes: a scope's ``admit`` turns an ``AdmissionError``
into the kubelet's admit result (reason and message), and the CPU manager wraps the allocator's
error. ``Unpredictable`` and ``pod_level_managers_unmodelled`` are input errors any manager may
raise, so they live below all of them.

The admission errors port the reasons of pkg/kubelet/cm/cpumanager/policy_static.go
(``SMTAlignmentError``) and pkg/kubelet/cm/admission/errors.go (1.33–1.37).
"""

from __future__ import annotations

from tmnb.errors import InputError, TmnbError


class AdmissionError(TmnbError):
    """An error from a provider's Allocate; ``reason`` is set when the kubelet error has a Type()."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason


class SMTAlignmentError(AdmissionError):
    """The CPU manager's full-pcpus-only refusal, with the kubelet's text and reason."""

    def __init__(self, requested: int, per_core: int, available_physical: int | None = None) -> None:
        if available_physical is None:
            text = f"SMT Alignment Error: requested {requested} cpus not multiple cpus per core = {per_core}"
        else:
            text = (
                "SMT Alignment Error: not enough free physical CPUs: "
                f"available physical CPUs = {available_physical}, requested CPUs = {requested}, "
                f"CPUs per core = {per_core}"
            )
        super().__init__(text, reason="SMTAlignmentError")


class CPUAllocationError(TmnbError):
    """The CPU allocator's own error; its text is what the kubelet wraps in UnexpectedAdmissionError."""


class Unpredictable(InputError):
    """The kubelet's start-up depends on a file tmnb could not read as the kubelet does."""


def pod_level_managers_unmodelled() -> InputError:
    return InputError(
        "pods with pod-level resources under PodLevelResourceManagers (one pod-level NUMA block per pod) "
        "are not modelled by tmnb"
    )
