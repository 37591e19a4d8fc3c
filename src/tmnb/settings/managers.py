"""Topology, CPU and memory manager rules: what a kubelet of a given version does with the settings.

Option parsing and maturity come from ``tmnb.kubelet.options``; here is when the kubelet parses them
(``none`` topology policy: never; the option-map gate: always) and the rules around them: policy
values, the static CPU policy's reservation, the memory manager's reservedMemory sum, NUMA limits.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from decimal import Decimal
from typing import Any

from tmnb.cpuset import CPUSet
from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet import gostr, options
from tmnb.kubelet.names import (
    CPU_NONE,
    CPU_POLICIES,
    MEMORY_NONE,
    MEMORY_POLICIES,
    SCOPE_CONTAINER,
    SINGLE_NUMA_NODE,
    TOPOLOGY_NONE,
    TOPOLOGY_SCOPES,
)
from tmnb.kubelet.policy import TOPOLOGY_POLICIES
from tmnb.parse.quantity import ZERO, Quantity
from tmnb.settings.effective import KubeletSettings
from tmnb.settings.findings import Findings
from tmnb.versions import KubeVersion


def check_topology(
    settings: KubeletSettings,
    version: KubeVersion,
    gates: Mapping[str, bool],
    numa_nodes: Collection[int] | None,
    out: Findings,
) -> None:
    policy = settings.value("topologyManagerPolicy", TOPOLOGY_NONE)
    scope = settings.value("topologyManagerScope", SCOPE_CONTAINER)
    if policy not in TOPOLOGY_POLICIES:
        allowed = "[" + " ".join(gostr.quote(p) for p in TOPOLOGY_POLICIES) + "]"
        out.add(
            "topology.policy",
            "topologyManagerPolicy",
            "error",
            f"invalid configuration: topologyManagerPolicy (--topology-manager-policy) {gostr.quote(policy)} "
            f"must be one of: {allowed}",
            kubelet=True,
        )
    if scope not in TOPOLOGY_SCOPES:
        out.add(
            "topology.scope",
            "topologyManagerScope",
            "error",
            f"invalid configuration: topologyManagerScope (--topology-manager-scope) {gostr.quote(scope)} "
            'must be one of: "container", or "pod"',
            kubelet=True,
        )
    if policy not in TOPOLOGY_POLICIES:
        return
    max_nodes = _topology_options(policy, settings.value("topologyManagerPolicyOptions", {}), version, gates, out)
    if policy == TOPOLOGY_NONE:
        return  # NewManager returns before counting NUMA nodes
    if numa_nodes is not None and len(numa_nodes) > max_nodes:
        out.add(
            "topology.too-many-numa-nodes",
            "topologyManagerPolicy",
            "error",
            f"unsupported on machines with more than {max_nodes} NUMA Nodes",
            kubelet=True,
        )
    if settings.value("cpuManagerPolicy") == CPU_NONE and settings.value("memoryManagerPolicy") == MEMORY_NONE:
        out.add(
            "topology.no-cpu-memory-hints",
            "topologyManagerPolicy",
            "info",
            f"topologyManagerPolicy {policy} with cpuManagerPolicy none and memoryManagerPolicy None aligns "
            "only devices: no CPU or memory hint provider takes part",
        )


def _options_modelled(version: KubeVersion) -> bool:
    return version.major == 1 and version >= options.OLDEST_MODELLED


def _topology_options(
    policy: str, opts: Mapping[str, str], version: KubeVersion, gates: Mapping[str, bool], out: Findings
) -> int:
    """Check ``topologyManagerPolicyOptions``; returns the NUMA node limit they set."""
    field = "topologyManagerPolicyOptions"
    if not _options_modelled(version):
        if opts:
            out.add(
                "topology.options-unmodelled",
                field,
                "info",
                f"policy options are validated for kubelet {options.OLDEST_MODELLED} and newer, not {version}",
            )
        return options.DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    if policy == TOPOLOGY_NONE:
        if opts:
            out.add(
                "topology.options-ignored",
                field,
                "warning",
                "topologyManagerPolicyOptions are ignored while topologyManagerPolicy is none: the kubelet does not "
                "parse them, so mistakes in them surface only when the policy changes",
            )
            out.rejected(field, lambda: _map_gate("topology", opts, version, gates))
        return options.DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    parsed = out.rejected(
        field, lambda: options.parse_topology_manager_options(opts, version=version, feature_gates=gates)
    )
    if parsed is None:
        return options.DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    if parsed.max_allowable_numa_nodes > options.DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
        out.add(
            "topology.max-numa-above-default",
            field,
            "info",
            "WARNING: the value of max-allowable-numa-nodes is more than the default recommended value",
            kubelet=True,
        )
    if parsed.prefer_closest_numa and policy == SINGLE_NUMA_NODE:
        out.add(
            "topology.prefer-closest-ineffective",
            field,
            "info",
            "prefer-closest-numa-nodes only changes best-effort and restricted; "
            "single-numa-node never spans NUMA nodes",
        )
    return parsed.max_allowable_numa_nodes


def _map_gate(
    manager: options.Manager, opts: Mapping[str, str], version: KubeVersion, gates: Mapping[str, bool]
) -> None:
    """``run()`` checks the option-map gate before any manager exists, whatever the policy."""
    if not options.feature_gate_enabled(options.MAP_GATES[manager], version, gates):
        label = "topology manager policy options" if manager == "topology" else "CPU Manager policy options"
        extra = "" if manager == "topology" else '"CPUManager", '
        raise ConfigRejected(
            f"{label} {gostr.format_string_map(opts)} require feature gates {extra}"
            f"{gostr.quote(options.MAP_GATES[manager])} enabled"
        )


# ---------------------------------------------------------------------------------------------
# CPU Manager


def check_cpu(
    settings: KubeletSettings,
    version: KubeVersion,
    gates: Mapping[str, bool],
    numa_nodes: Collection[int] | None,
    sockets: int | None,
    online_cpus: CPUSet | None,
    out: Findings,
) -> None:
    policy = settings.value("cpuManagerPolicy", CPU_NONE)
    opts = settings.value("cpuManagerPolicyOptions", {})
    reserved_text = settings.value("reservedSystemCPUs", "")
    reserved = _check_reserved_cpus(settings, reserved_text, online_cpus, out)
    if policy not in CPU_POLICIES:
        out.add(
            "cpu.policy",
            "cpuManagerPolicy",
            "error",
            f'unknown policy: "{policy}"' + _case_hint(policy, CPU_POLICIES),
            kubelet=True,
        )
        return
    if policy == CPU_NONE:
        if opts:
            out.rejected(
                "cpuManagerPolicyOptions", lambda: _none_policy(opts, version, gates), code="cpu.options-with-none"
            )
        return
    if _options_modelled(version):
        parsed = out.rejected(
            "cpuManagerPolicyOptions",
            lambda: options.parse_cpu_manager_options(opts, version=version, feature_gates=gates),
        )
        if parsed is not None and parsed.align_by_socket:
            if settings.value("topologyManagerPolicy") == SINGLE_NUMA_NODE:
                out.add(
                    "cpu.align-by-socket-single-numa",
                    "cpuManagerPolicyOptions",
                    "error",
                    "Topolgy manager single-numa-node policy is incompatible with CPUManager "
                    "align-by-socket policy option",
                    kubelet=True,
                )
            if sockets is not None and numa_nodes is not None and sockets > len(numa_nodes):
                out.add(
                    "cpu.align-by-socket-hardware",
                    "cpuManagerPolicyOptions",
                    "error",
                    "Align by socket is not compatible with hardware where number of sockets are more than "
                    "number of NUMA",
                    kubelet=True,
                )
    elif opts:
        out.add(
            "cpu.options-unmodelled",
            "cpuManagerPolicyOptions",
            "info",
            f"policy options are validated for kubelet {options.OLDEST_MODELLED} and newer, not {version}",
        )
    _check_static_reservation(settings, reserved, out)


def _none_policy(opts: Mapping[str, str], version: KubeVersion, gates: Mapping[str, bool]) -> None:
    """``run()`` checks the option-map gate first, then ``NewNonePolicy`` refuses any option."""
    if _options_modelled(version):
        _map_gate("cpu", opts, version, gates)
    raise ConfigRejected(f"None policy: received unsupported options={gostr.format_string_map(opts)}")


def _check_reserved_cpus(
    settings: KubeletSettings, text: str, online_cpus: CPUSet | None, out: Findings
) -> CPUSet | None:
    if not text:
        return None
    if settings.value("systemReservedCgroup") or settings.value("kubeReservedCgroup"):
        out.add(
            "cpu.reserved-cpus-cgroup",
            "reservedSystemCPUs",
            "error",
            "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup "
            "(--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)",
            kubelet=True,
        )
    try:
        gostr.parse_cpu_ranges(text)
        reserved = CPUSet.parse(text)
    except (gostr.GoParseError, InputError) as err:
        out.add(
            "cpu.reserved-cpus-parse",
            "reservedSystemCPUs",
            "error",
            f"invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) {text}, error: "
            f"{err.message if isinstance(err, InputError) else err}",
            kubelet=isinstance(err, gostr.GoParseError),
        )
        return None
    if online_cpus is not None and not reserved <= online_cpus:
        out.add(
            "cpu.reserved-cpus-offline",
            "reservedSystemCPUs",
            "error",
            f"reserved-cpus: {text} is not a subset of online-cpus: {online_cpus}",
            kubelet=True,
        )
    return reserved


def _check_static_reservation(settings: KubeletSettings, reserved: CPUSet | None, out: Findings) -> None:
    """The static policy needs a non-zero CPU reservation; ``reservedSystemCPUs`` replaces the
    kube/system-reserved cpu amounts (server.go sets systemReserved.cpu to its size)."""
    if reserved:
        amounts = [_reserved_quantity(settings, f, "cpu", out).value for f in ("kubeReserved", "systemReserved")]
        if any(amounts):
            out.add(
                "cpu.reserved-cpus-supersedes",
                "reservedSystemCPUs",
                "info",
                f"reservedSystemCPUs {reserved} supersedes the cpu amounts in kubeReserved/systemReserved "
                f"(the kubelet reserves exactly {len(reserved)} CPUs)",
            )
        return
    total = _reserved_quantity(settings, "kubeReserved", "cpu", out).add(
        _reserved_quantity(settings, "systemReserved", "cpu", out)
    )
    if total.value == 0:
        out.add(
            "cpu.static-no-reservation",
            "cpuManagerPolicy",
            "error",
            "[cpumanager] unable to determine reserved CPU resources for static policy",
            kubelet=True,
        )
    elif total.value != math.ceil(total.value):
        out.add(
            "cpu.static-fractional-reservation",
            "kubeReserved",
            "info",
            f"the static policy reserves whole CPUs: ceil({total}) = {math.ceil(total.value)}",
        )


def _reserved_quantity(settings: KubeletSettings, field: str, resource: str, out: Findings) -> Quantity:
    text = (settings.value(field, {}) or {}).get(resource)
    if text is None:
        return ZERO
    try:
        return Quantity.parse(text)
    except InputError as err:
        out.add("config.invalid-quantity", field, "error", f"{field}.{resource}: {err.message}")
        return ZERO


def _case_hint(value: str, allowed: tuple[str, ...]) -> str:
    for candidate in allowed:
        if candidate.lower() == value.lower():
            return f" (values are case-sensitive: use {gostr.quote(candidate)})"
    return ""


# ---------------------------------------------------------------------------------------------
# Memory Manager


def check_memory(
    settings: KubeletSettings, numa_nodes: Collection[int] | None, memory_capacity: int | None, out: Findings
) -> None:
    policy = settings.value("memoryManagerPolicy", MEMORY_NONE)
    reservations = settings.value("reservedMemory", []) or []
    _check_reserved_memory_entries(reservations, out)
    if policy not in MEMORY_POLICIES:
        out.add(
            "memory.policy",
            "memoryManagerPolicy",
            "error",
            f'unknown policy: "{policy}"' + _case_hint(policy, MEMORY_POLICIES),
            kubelet=True,
        )
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
                result[name] = result.get(name, ZERO).add(_reserved_quantity(settings, field, name, out))
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
