"""Errors the modelled kubelet raises while admitting a pod, as members of the tmnb family.

They are outcomes, not user mistakes: a scope's ``admit`` turns an ``AdmissionError`` into the
kubelet's admit result (reason and message), and the CPU manager wraps the allocator's error.
"""

from __future__ import annotations

from tmnb.errors import TmnbError


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
