"""Memory Manager rules: policy names, reservedMemory entries, and their sum against Node Allocatable."""

from __future__ import annotations

from collections.abc import Collection
from decimal import Decimal
from typing import Any

from tmnb.errors import InputError
from tmnb.kubelet import gostr
from tmnb.kubelet.names import MEMORY_NONE, MEMORY_POLICIES
from tmnb.parse.quantity import ZERO, Quantity
from tmnb.settings.effective import KubeletSettings
from tmnb.settings.findings import Findings
from tmnb.settings.managers.shared import known_policy, reserved_quantity


def check_memory(
    settings: KubeletSettings, numa_nodes: Collection[int] | None, memory_capacity: int | None, out: Findings
) -> None:
    policy = settings.value("memoryManagerPolicy", MEMORY_NONE)
    reservations = settings.value("reservedMemory", []) or []
    _check_reserved_memory_entries(reservations, out)
    if not known_policy(policy, MEMORY_POLICIES, "memory", "memoryManagerPolicy", out):
        return
    if policy == MEMORY_NONE:
        if reservations:
            out.add(
                "memory.reserved-ignored",
                "reservedMemory",
                "info",
                "reservedMemory only takes effect with memoryManagerPolicy Static",
            )
        return
    if numa_nodes is not None:
        for item in reservations:
            if item["numaNode"] not in numa_nodes:
                out.add(
                    "memory.reserved-unknown-numa",
                    "reservedMemory",
                    "error",
                    f"the reserved memory configuration references a NUMA node {item['numaNode']} that does not exist "
                    "on this machine",
                    kubelet=True,
                )
                return
    allocatable = _node_allocatable_reservation(settings, memory_capacity, out)
    if allocatable is None:
        return
    totals: dict[str, Quantity] = {}
    for item in reservations:
        for name, text in item["limits"].items():
            # getTotalMemoryTypeReserved: q.Add(total) keeps the format of the latest reservation.
            totals[name] = Quantity.parse(text).add(totals.get(name, ZERO))
    for name in sorted(set(totals) | set(allocatable)):
        reserved = ZERO.add(totals.get(name, ZERO))
        expected = ZERO.add(allocatable.get(name, ZERO))
        if reserved.value != expected.value:
            out.add(
                "memory.reserved-sum",
                "reservedMemory",
                "error",
                f"the total amount {gostr.quote(str(reserved))} of type {gostr.quote(name)} is not equal to the value "
                f"{gostr.quote(str(expected))} determined by Node Allocatable feature",
                kubelet=True,
            )


def _check_reserved_memory_entries(reservations: list[dict[str, Any]], out: Findings) -> None:
    seen: set[tuple[int, str]] = set()
    for item in reservations:
        node = item["numaNode"]
        for name, text in item["limits"].items():
            if name != "memory" and not name.startswith("hugepages-"):
                out.add(
                    "memory.reserved-type",
                    "reservedMemory",
                    "error",
                    f"invalid configuration: the limit type {gostr.quote(name)} for NUMA node {node} is not supported, "
                    "only [memory hugepages-<HugePageSize>] is accepted",
                    kubelet=True,
                )
            if Quantity.parse(text).value == 0:
                out.add(
                    "memory.reserved-zero",
                    "reservedMemory",
                    "error",
                    f"invalid configuration: reserved memory may not be zero for NUMA node {node} and resource "
                    f"{gostr.quote(name)}",
                    kubelet=True,
                )
            if (node, name) in seen:
                out.add(
                    "memory.reserved-duplicate",
                    "reservedMemory",
                    "error",
                    f"invalid configuration: the reserved memory has a duplicate value for NUMA node {node} and "
                    f"resource {gostr.quote(name)}",
                    kubelet=True,
                )
            seen.add((node, name))


def _node_allocatable_reservation(
    settings: KubeletSettings, memory_capacity: int | None, out: Findings
) -> dict[str, Quantity] | None:
    """kubeReserved + systemReserved + the hard eviction threshold, for memory and hugepages-*
    (``GetNodeAllocatableReservation``); None when a percentage threshold has no capacity to apply to."""
    result: dict[str, Quantity] = {}
    for field in ("systemReserved", "kubeReserved"):
        for name in settings.value(field, {}) or {}:
            if name == "memory" or name.startswith("hugepages-"):
                result[name] = result.get(name, ZERO).add(reserved_quantity(settings, field, name, out))
    flags = settings.flags
    ignore_eviction = flags is not None and flags.last("experimental-allocatable-ignore-eviction") is not None
    threshold = (settings.value("evictionHard", {}) or {}).get("memory.available")
    if threshold and not ignore_eviction:
        if threshold.endswith("%"):
            if memory_capacity is None:
                out.add(
                    "memory.reserved-sum-unchecked",
                    "reservedMemory",
                    "warning",
                    f"evictionHard memory.available is {threshold}: the reservedMemory sum cannot be checked without "
                    "the node's memory capacity",
                )
                return None
            try:
                percent = Decimal(threshold[:-1]) / 100
            except ArithmeticError:
                out.add(
                    "config.invalid-quantity",
                    "evictionHard",
                    "error",
                    f"memory.available: invalid percentage {threshold!r}",
                )
                return None
            evict = Quantity(Decimal(int(memory_capacity * percent)), binary=True)
        else:
            try:
                evict = Quantity.parse(threshold)
            except InputError as err:
                out.add("config.invalid-quantity", "evictionHard", "error", f"memory.available: {err.message}")
                return None
        result["memory"] = result.get("memory", ZERO).add(evict)
    return {name: q for name, q in result.items() if q.value != 0}
