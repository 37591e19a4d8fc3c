"""The kubelet's start-up, from its decoded configuration to the resource managers' inputs.

In the kubelet's order (``ValidateKubeletConfiguration``, then ``run()`` in cmd/kubelet/app/server.go,
then ``NewContainerManager``): defaults, validation, ``reservedSystemCPUs`` against the online CPUs,
kube/system reservations, hard-eviction thresholds and the Node Allocatable reservation. The first
step that fails raises ``ConfigRejected`` with the kubelet's own text; what comes out is the
``ModelSettings`` that ``NodeSimulator`` creates and starts the managers from.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet import gostr
from tmnb.kubelet.gates import merge_feature_gates
from tmnb.kubelet.go_quantity import BINARY_SI, GoQuantity
from tmnb.kubelet.names import CPU_NONE, MEMORY_NONE, SCOPE_CONTAINER, TOPOLOGY_NONE, TOPOLOGY_SCOPES
from tmnb.kubelet.node import Machine, ModelSettings
from tmnb.kubelet.policy import TOPOLOGY_POLICIES
from tmnb.kubelet.profiles import DEFAULT_MINOR, KubeletProfile, profile
from tmnb.parse.duration import format_go_duration, parse_go_duration

#: ``eviction.DefaultEvictionHard`` (pkg/kubelet/eviction/defaults_linux.go), which ``loadConfigFile``
#: puts in when the file has no evictionHard at all.
DEFAULT_EVICTION_HARD = {
    "memory.available": "100Mi",
    "nodefs.available": "10%",
    "nodefs.inodesFree": "5%",
    "imagefs.available": "15%",
    "imagefs.inodesFree": "5%",
}
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
#: The v1beta1 defaults (SetDefaults_KubeletConfiguration) of the fields the start-up reads.
V1BETA1_DEFAULTS: Mapping[str, Any] = {
    "topologyManagerPolicy": TOPOLOGY_NONE,
    "topologyManagerScope": SCOPE_CONTAINER,
    "cpuManagerPolicy": CPU_NONE,
    "memoryManagerPolicy": MEMORY_NONE,
    "enforceNodeAllocatable": ["pods"],
    "cgroupsPerQOS": True,
    "maxPods": 110,
    "podsPerCore": 0,
    "imageMinimumGCAge": "2m",
}
_ENFORCE_KEYS = (
    "pods",
    "system-reserved",
    "system-reserved-compressible",
    "kube-reserved",
    "kube-reserved-compressible",
    "none",
)
_MEMORY_RESERVATION_POLICIES = ("None", "TieredReservation")
_RESERVABLE = ("cpu", "memory", "ephemeral-storage", "pid")


@dataclass(frozen=True)
class Reservations:
    """What ``run()`` hands the container manager: parsed reservations and hard thresholds."""

    reserved_cpus: frozenset[int]
    kube: Mapping[str, GoQuantity]
    system: Mapping[str, GoQuantity]
    memory_available: tuple[GoQuantity | None, float | None] | None


def decode(config: Mapping[str, Any], kubelet: KubeletProfile) -> dict[str, Any]:
    """The configuration as ``loadConfigFile`` leaves it: the file's feature gates merged into the
    kubelet's (a panic on a gate it cannot merge), v1beta1 defaults filled in, and the command
    line's evictionHard default when the file has none (or its missing signals, with
    ``mergeDefaultEvictionSettings``)."""
    merge_feature_gates(kubelet, config.get("featureGates"))
    decoded = {**V1BETA1_DEFAULTS, **config}
    if kubelet.knows_field("memoryReservationPolicy") and not decoded.get("memoryReservationPolicy"):
        decoded["memoryReservationPolicy"] = _MEMORY_RESERVATION_POLICIES[0]
    if decoded.get("evictionHard") is None:
        decoded["evictionHard"] = dict(DEFAULT_EVICTION_HARD)
    elif decoded.get("mergeDefaultEvictionSettings") and kubelet.knows_field("mergeDefaultEvictionSettings"):
        decoded["evictionHard"] = {**DEFAULT_EVICTION_HARD, **decoded["evictionHard"]}
    return decoded


def validate(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> None:
    """``ValidateKubeletConfiguration`` of ``kubelet``'s minor for the fields that shape resource
    management, in its order; all failures are reported together as its aggregate error."""
    errors: list[str] = []
    gc_age = parse_go_duration(str(cfg["imageMinimumGCAge"]), where="imageMinimumGCAge")
    if kubelet.refuses_negative_image_gc_age and gc_age < 0:
        errors.append(f"imageMinimumGCAge {format_go_duration(gc_age)} must not be negative")
    if cfg["maxPods"] < 0:
        errors.append(f"maxPods (--max-pods) {cfg['maxPods']} must not be a negative number")
    if cfg["podsPerCore"] < 0:
        errors.append(f"podsPerCore (--pods-per-core) {cfg['podsPerCore']} must not be a negative number")
    policy, scope = cfg["topologyManagerPolicy"], cfg["topologyManagerScope"]
    if policy not in TOPOLOGY_POLICIES:
        allowed = "[" + " ".join(gostr.quote(p) for p in TOPOLOGY_POLICIES) + "]"
        errors.append(
            f"topologyManagerPolicy (--topology-manager-policy) {gostr.quote(policy)} must be one of: {allowed}"
        )
    if scope not in TOPOLOGY_SCOPES:
        errors.append(
            f"topologyManagerScope (--topology-manager-scope) {gostr.quote(scope)} must be one of: "
            + ", or ".join(gostr.quote(s) for s in TOPOLOGY_SCOPES)
        )
    errors += _enforce_node_allocatable(cfg)
    reserved = cfg.get("reservedSystemCPUs") or ""
    if reserved:
        if cfg.get("systemReservedCgroup") or cfg.get("kubeReservedCgroup"):
            errors.append(
                "can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) "
                "or kubeReservedCgroup (--kube-reserved-cgroup)"
            )
        try:
            gostr.parse_cpu_ranges(reserved)
        except gostr.GoParseError as err:
            errors.append(f"unable to parse reservedSystemCPUs (--reserved-cpus) {reserved}, error: {err}")
    errors += reserved_memory_errors(cfg.get("reservedMemory") or [])
    if kubelet.knows_field("memoryReservationPolicy"):
        errors += _memory_reservation_policy(cfg, kubelet)
    if errors:
        raise ConfigRejected(_aggregate([f"invalid configuration: {e}" for e in errors]))


def _memory_reservation_policy(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[str]:
    value = cfg["memoryReservationPolicy"]
    errors = []
    if value == _MEMORY_RESERVATION_POLICIES[1] and not kubelet.gate_on("MemoryQoS", cfg.get("featureGates")):
        errors.append(f"memoryReservationPolicy {gostr.quote(value)} requires MemoryQoS feature gate to be enabled")
    if value not in _MEMORY_RESERVATION_POLICIES:
        none, tiered = (gostr.quote(v) for v in _MEMORY_RESERVATION_POLICIES)
        errors.append(
            f"option {gostr.quote(value)} specified for memoryReservationPolicy. Valid options are {none} or {tiered}"
        )
    return errors


def _enforce_node_allocatable(cfg: Mapping[str, Any]) -> list[str]:
    """The enforcement keys: exclusive pairs first, then each key once (duplicates named), its
    cgroup, and cgroupsPerQOS for every key that enforces something."""
    flag = "in enforceNodeAllocatable (--enforce-node-allocatable)"
    keys = list(cfg["enforceNodeAllocatable"])
    _, system, system_c, kube, kube_c, none = _ENFORCE_KEYS
    errors = [
        f"both {gostr.quote(a)} and {gostr.quote(b)} cannot be specified together {flag}"
        for a, b in ((system, system_c), (kube, kube_c))
        if a in keys and b in keys
    ]
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            errors.append(f"duplicated enforcements {gostr.quote(key)} {flag}")
            continue
        seen.add(key)
        if key in (system, system_c) and not cfg.get("systemReservedCgroup"):
            errors.append(
                "systemReservedCgroup (--system-reserved-cgroup) must be specified when "
                f"{gostr.quote(system)} or {gostr.quote(system_c)} included {flag}"
            )
        elif key in (kube, kube_c) and not cfg.get("kubeReservedCgroup"):
            errors.append(
                "kubeReservedCgroup (--kube-reserved-cgroup) must be specified when "
                f"{gostr.quote(kube)} or {gostr.quote(kube_c)} included {flag}"
            )
        elif key == none:
            if len(keys) > 1:
                errors.append(
                    "enforceNodeAllocatable (--enforce-node-allocatable) may not contain additional enforcements "
                    f"when {gostr.quote(none)} is specified"
                )
            continue
        elif key not in _ENFORCE_KEYS:
            valid = ", ".join(gostr.quote(k) for k in _ENFORCE_KEYS[:-1]) + f" or {gostr.quote(none)}"
            errors.append(
                f"option {gostr.quote(key)} specified for enforceNodeAllocatable (--enforce-node-allocatable). "
                f"Valid options are {valid}"
            )
            continue
        if not cfg["cgroupsPerQOS"]:
            errors.append(
                f"cgroupsPerQOS (--cgroups-per-qos) must be set to true when {gostr.quote(key)} contained {flag}"
            )
    return errors


def reserved_memory_errors(reservations: Sequence[Mapping[str, Any]]) -> list[str]:
    """``validateReservedMemoryConfiguration``, without the ``invalid configuration: `` prefix."""
    errors, seen = [], set()
    for item in reservations:
        node = item["numaNode"]
        for name, text in (item.get("limits") or {}).items():
            if name != "memory" and not name.startswith("hugepages-"):
                errors.append(
                    f"the limit type {gostr.quote(name)} for NUMA node {node} is not supported, only "
                    "[memory hugepages-<HugePageSize>] is accepted"
                )
            if _quantity(text, f"reservedMemory[numaNode={node}].limits.{name}").is_zero():
                errors.append(f"reserved memory may not be zero for NUMA node {node} and resource {gostr.quote(name)}")
            if (node, name) in seen:
                errors.append(
                    f"the reserved memory has a duplicate value for NUMA node {node} and resource {gostr.quote(name)}"
                )
            seen.add((node, name))
    return errors


def _aggregate(errors: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message bare, several in brackets, repeats once."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _quantity(text: object, where: str) -> GoQuantity:
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    if not isinstance(text, str):
        raise InputError(f"expected a quantity string, got {text!r}", where=where)
    return GoQuantity.parse(text)


def reservations(cfg: Mapping[str, Any], machine: Machine) -> Reservations:
    """``run()``'s steps between validation and ``NewContainerManager``."""
    online = frozenset(c.cpu for c in machine.cpus)
    text = cfg.get("reservedSystemCPUs") or ""
    ranges = gostr.parse_cpu_ranges(text)
    if any(cpu not in online for start, end in ranges for cpu in _bounded(start, end, online)):
        from tmnb.cpuset import CPUSet

        raise ConfigRejected(f"reserved-cpus: {text} is not a subset of online-cpus: {CPUSet(online)}")
    reserved = frozenset(cpu for start, end in ranges for cpu in range(start, end + 1))
    kube = dict(cfg.get("kubeReserved") or {})
    system = dict(cfg.get("systemReserved") or {})
    if reserved:
        kube.pop("cpu", None)
        system["cpu"] = str(len(reserved))
    kube_q = _resource_list(kube, "--kube-reserved")
    system_q = _resource_list(system, "--system-reserved")
    memory = None if cfg.get("experimentalAllocatableIgnoreEviction") else _memory_threshold(cfg["evictionHard"])
    return Reservations(reserved, kube_q, system_q, memory)


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
            q = _quantity(text, f"{flag}.{name}")
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


def start_settings(
    config: Mapping[str, Any], machine: Machine, *, kubelet: KubeletProfile | None = None
) -> ModelSettings:
    """The managers' settings for ``kubelet``'s minor started with ``config`` on ``machine``."""
    kubelet = kubelet or profile(DEFAULT_MINOR)
    cfg = decode(config, kubelet)
    validate(cfg, kubelet)
    r = reservations(cfg, machine)
    caps = capacity(machine)
    reservation = allocatable_reservation(caps, r)
    cpu = reservation.get("cpu")
    reserved_memory = {int(e["numaNode"]): dict(e.get("limits") or {}) for e in cfg.get("reservedMemory") or []}
    return ModelSettings(
        topology_manager_policy=cfg["topologyManagerPolicy"],
        topology_manager_scope=cfg["topologyManagerScope"],
        topology_manager_policy_options=dict(cfg.get("topologyManagerPolicyOptions") or {}),
        cpu_manager_policy=cfg["cpuManagerPolicy"],
        cpu_manager_policy_options=dict(cfg.get("cpuManagerPolicyOptions") or {}),
        reserved_system_cpus=cfg.get("reservedSystemCPUs") or None,
        reserved_cpu_count=0 if cpu is None else math.ceil(cpu.milli_value() / 1000),
        memory_manager_policy=cfg["memoryManagerPolicy"],
        reserved_memory=reserved_memory,
        kubelet=kubelet,
        feature_gates=dict(cfg.get("featureGates") or {}),
        capacity=caps,
        allocatable_reservation=reservation,
    )


__all__ = ["DEFAULT_EVICTION_HARD", "capacity", "decode", "start_settings", "validate"]
