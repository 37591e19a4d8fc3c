"""``run()``: the steps between validation and ``NewContainerManager``, where the first failure stops
the kubelet: ``reservedSystemCPUs`` against the online CPUs, the kube and system reservations, the
hard-eviction thresholds and the topology option-map gate; and the reservations they parse for the
container manager.

Each step is a small function returning its ``Refusal``s (``RUN``, in the kubelet's order), so
``startup.checks`` can run every one on its own for the settings validator.

Ports ``run`` and ``getReservedCPUs`` of cmd/kubelet/app/server.go and ``ParseThresholdConfig`` of
pkg/kubelet/eviction/helpers.go (1.33–1.37).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tmnb.cpuset import CPUSet
from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet import gostr
from tmnb.kubelet.go_quantity import GoQuantity
from tmnb.kubelet.options import topology_options_gate_error
from tmnb.kubelet.profiles import KubeletProfile
from tmnb.kubelet.startup.allocatable import Reservations
from tmnb.kubelet.startup.types import Hardware, Refusal
from tmnb.kubelet.startup.validation import quantity_of

_SIGNALS = frozenset(
    {
        "memory.available",
        "nodefs.available",
        "nodefs.inodesFree",
        "imagefs.available",
        "imagefs.inodesFree",
        "containerfs.available",
        "containerfs.inodesFree",
        "allocatableMemory.available",
        "pid.available",
    }
)
_RESERVABLE = ("cpu", "memory", "ephemeral-storage", "pid")


# run(): the steps between validation and NewContainerManager; the first failure stops the kubelet

RunStep = Callable[[Mapping[str, Any], KubeletProfile, Hardware], list[Refusal]]


def _refused(code: str, field: str, step: Callable[[], object]) -> list[Refusal]:
    try:
        step()
    except ConfigRejected as err:
        return [Refusal(code, field, err.message)]
    return []


def _cpu_ranges(cfg: Mapping[str, Any]) -> list[tuple[int, int]]:
    """reservedSystemCPUs as ranges; none when it does not parse (validation refuses it first)."""
    try:
        return gostr.parse_cpu_ranges(cfg.get("reservedSystemCPUs") or "")
    except gostr.GoParseError:
        return []


def cpu_count(ranges: Sequence[tuple[int, int]]) -> int:
    """The size of the set the ranges make (overlaps once), without building it: ``0-99999999`` is a list too."""
    count, top = 0, -1
    for start, end in sorted(ranges):
        if end > top:
            count += end - max(start, top + 1) + 1
            top = end
    return count


def reserved_cpus_online(cfg: Mapping[str, Any], kubelet: KubeletProfile, hw: Hardware) -> list[Refusal]:
    """``getReservedCPUs``: reservedSystemCPUs must be online CPUs."""
    online = hw.online_cpus
    text = cfg.get("reservedSystemCPUs") or ""
    if online is None or not text:
        return []
    if any(cpu not in online for start, end in _cpu_ranges(cfg) for cpu in _bounded(start, end, online)):
        error = f"reserved-cpus: {text} is not a subset of online-cpus: {CPUSet(online)}"
        return [Refusal("cpu.reserved-cpus-offline", "reservedSystemCPUs", error)]
    return []


def _reserved_lists(cfg: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """kubeReserved and systemReserved as ``run()`` parses them: with reservedSystemCPUs, kube's cpu is
    dropped and system's is the number of reserved CPUs."""
    kube = dict(cfg.get("kubeReserved") or {})
    system = dict(cfg.get("systemReserved") or {})
    count = cpu_count(_cpu_ranges(cfg))
    if count:
        kube.pop("cpu", None)
        system["cpu"] = str(count)
    return kube, system


def kube_reserved(cfg: Mapping[str, Any], kubelet: KubeletProfile, hw: Hardware) -> list[Refusal]:
    return _refused(
        "config.kube-reserved", "kubeReserved", lambda: _resource_list(_reserved_lists(cfg)[0], "--kube-reserved")
    )


def system_reserved(cfg: Mapping[str, Any], kubelet: KubeletProfile, hw: Hardware) -> list[Refusal]:
    return _refused(
        "config.system-reserved", "systemReserved", lambda: _resource_list(_reserved_lists(cfg)[1], "--system-reserved")
    )


def eviction_hard(cfg: Mapping[str, Any], kubelet: KubeletProfile, hw: Hardware) -> list[Refusal]:
    """``ParseThresholdConfig`` over the hard thresholds (skipped with --experimental-allocatable-ignore-eviction)."""
    if cfg.get("experimentalAllocatableIgnoreEviction"):
        return []
    return _refused("config.eviction-hard", "evictionHard", lambda: _memory_threshold(cfg["evictionHard"]))


def topology_options_gate(cfg: Mapping[str, Any], kubelet: KubeletProfile, hw: Hardware) -> list[Refusal]:
    """The option-map gate, whatever the policy (``topology_options_gate_error``)."""
    options = cfg.get("topologyManagerPolicyOptions") or {}
    error = topology_options_gate_error(options, kubelet, cfg.get("featureGates"))
    return [] if error is None else [Refusal("kubelet.rejects", "topologyManagerPolicyOptions", error)]


#: ``run()``'s checks in its order.
RUN: tuple[RunStep, ...] = (reserved_cpus_online, kube_reserved, system_reserved, eviction_hard, topology_options_gate)


def run_checks(cfg: Mapping[str, Any], kubelet: KubeletProfile, hw: Hardware) -> None:
    """``run()`` up to ``NewContainerManager``: ``ConfigRejected`` with the first failure."""
    for step in RUN:
        for refusal in step(cfg, kubelet, hw):
            raise ConfigRejected(refusal.text)


def reservations(cfg: Mapping[str, Any]) -> Reservations:
    """What ``run()`` parses for the container manager (``ConfigRejected`` as ``run_checks`` where it fails)."""
    kube, system = _reserved_lists(cfg)
    kube_q = _resource_list(kube, "--kube-reserved")
    system_q = _resource_list(system, "--system-reserved")
    memory = None if cfg.get("experimentalAllocatableIgnoreEviction") else _memory_threshold(cfg["evictionHard"])
    return Reservations(kube_q, system_q, memory)


def _bounded(start: int, end: int, online: frozenset[int]) -> range:
    """The range, or just its first id beyond the machine: enough to refuse ``0-99999999`` at once."""
    top = max(online, default=-1)
    return range(start, max(start, min(end, top + 1)) + 1)


def _resource_list(values: Mapping[str, Any], flag: str) -> dict[str, GoQuantity]:
    """``parseResourceList``, wrapped as ``run()`` wraps it."""
    out = {}
    for name in sorted(values):
        text = values[name]
        if name not in _RESERVABLE:
            raise ConfigRejected(f"{flag} value failed to parse: cannot reserve {gostr.quote(name)} resource")
        try:
            q = quantity_of(text, f"{flag}.{name}")
        except InputError as err:
            raise ConfigRejected(
                f"{flag} value failed to parse: failed to parse quantity {gostr.quote(str(text))} for "
                f"{gostr.quote(name)} resource: {err.message}"
            ) from None
        if q.value < 0:
            raise ConfigRejected(
                f"{flag} value failed to parse: resource quantity for {gostr.quote(name)} cannot be negative: {text}"
            )
        out[name] = q
    return out


def _memory_threshold(eviction_hard: Mapping[str, Any]) -> tuple[GoQuantity | None, float | None] | None:
    """``ParseThresholdConfig`` over the hard thresholds; returns memory.available's value (a quantity or
    a float32 fraction of capacity), None when it is unset or ``0%``/``100%`` (which the kubelet drops)."""
    found: tuple[GoQuantity | None, float | None] | None = None
    for signal in sorted(eviction_hard):
        value = str(eviction_hard[signal])
        if signal not in _SIGNALS:
            raise ConfigRejected(f"unsupported eviction signal {signal}")
        if value.endswith("%"):
            if value in ("0%", "100%"):
                continue
            try:
                number = float(value.rstrip("%"))
            except ValueError:
                raise ConfigRejected(
                    f"strconv.ParseFloat: parsing {gostr.quote(value.rstrip('%'))}: invalid syntax"
                ) from None
            fraction = _float32(_float32(number) / 100)
            if fraction < 0:
                raise ConfigRejected(f"eviction percentage threshold {signal} must be >= 0%: {value}")
            if fraction > 1:
                raise ConfigRejected(f"eviction percentage threshold {signal} must be <= 100%: {value}")
            if signal == "memory.available":
                found = (None, fraction)
            continue
        try:
            q = GoQuantity.parse(value)
        except InputError as err:
            raise ConfigRejected(err.message) from None
        if q.value <= 0:
            raise ConfigRejected(f"eviction threshold {signal} must be positive: {q}")
        if signal == "memory.available":
            found = (q, None)
    return found


def _float32(x: float) -> float:
    return float(struct.unpack("f", struct.pack("f", x))[0])
