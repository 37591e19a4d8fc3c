"""Node Allocatable: the machine's capacity and the reservation the container manager gets from what
``run()`` parses (kube and system reservations, the hard-eviction memory threshold), from which the
CPU and memory managers size their reservations.

Ports ``GetNodeAllocatableReservation`` of pkg/kubelet/cm/node_container_manager_linux.go and
``CapacityFromMachineInfo`` of pkg/kubelet/cadvisor/util.go (1.33–1.37).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tmnb.kubelet.go_quantity import BINARY_SI, GoQuantity
from tmnb.kubelet.node import Machine


@dataclass(frozen=True)
class Reservations:
    """What ``run()`` hands the container manager: parsed reservations and hard thresholds."""

    kube: Mapping[str, GoQuantity]
    system: Mapping[str, GoQuantity]
    memory_available: tuple[GoQuantity | None, float | None] | None


def capacity(machine: Machine) -> dict[str, GoQuantity]:
    """``CapacityFromMachineInfo``: online CPUs, MemTotal and each hugepage pool (zero pools kept)."""
    out = {
        "cpu": GoQuantity.milli(len(machine.cpus) * 1000),
        "memory": GoQuantity.of(sum(n.memory for n in machine.numa_nodes), BINARY_SI),
    }
    for name in sorted({h for n in machine.numa_nodes for h in n.hugepages}):
        out[name] = GoQuantity.of(sum(n.hugepages.get(name, 0) for n in machine.numa_nodes), BINARY_SI)
    return out


def allocatable_reservation(caps: Mapping[str, GoQuantity], r: Reservations) -> dict[str, GoQuantity]:
    """``GetNodeAllocatableReservation``: system + kube + hard eviction per capacity resource, zero
    totals dropped."""
    eviction: dict[str, GoQuantity] = {}
    if r.memory_available is not None:
        q, fraction = r.memory_available
        if q is None:
            assert fraction is not None
            q = GoQuantity.of(int(caps["memory"].value * fraction), BINARY_SI)
        eviction["memory"] = q
    out = {}
    for name in caps:
        total = GoQuantity.of(0)
        for part in (r.system, r.kube, eviction):
            if name in part:
                total = total.add(part[name])
        if not total.is_zero():
            out[name] = total
    return out


def reserved_cpu_count(reservation: Mapping[str, GoQuantity]) -> int:
    """The static policy's number of reserved CPUs: the Node Allocatable cpu reservation rounded up
    (none when it is missing, which ``cpu_reservation_error`` refuses)."""
    cpu = reservation.get("cpu")
    return 0 if cpu is None else math.ceil(cpu.milli_value() / 1000)


def reserved_memory_of(cfg: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    """reservedMemory by NUMA node as the memory manager reads it (entries naming one node merged)."""
    out: dict[int, dict[str, Any]] = {}
    for entry in cfg.get("reservedMemory") or []:
        out.setdefault(int(entry["numaNode"]), {}).update(entry.get("limits") or {})
    return out
