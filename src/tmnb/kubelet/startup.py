"""The kubelet's start-up, from its decoded configuration to the resource managers' inputs.

In the kubelet's order (``ValidateKubeletConfiguration``, then ``run()`` in cmd/kubelet/app/server.go,
then ``NewContainerManager``): defaults, validation, ``reservedSystemCPUs`` against the online CPUs,
kube/system reservations, hard-eviction thresholds, the topology option-map gate and the Node
Allocatable reservation. The first stage that fails raises ``ConfigRejected`` with the kubelet's own
text; what comes out is the ``ModelSettings`` that ``NodeSimulator`` creates and starts the managers
from.

Each check is a small function returning its ``Refusal``s (``VALIDATION``: the validation rules, all
reported together; ``RUN``: ``run()``'s checks, the first stops the kubelet), so ``kubelet.checks``
can run every one on its own for the settings validator: one implementation, one text.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet import gostr
from tmnb.kubelet.cpumanager.topology import CPUTopology
from tmnb.kubelet.gates import merge_feature_gates
from tmnb.kubelet.go_quantity import BINARY_SI, GoQuantity
from tmnb.kubelet.names import CPU_NONE, MEMORY_NONE, SCOPE_CONTAINER, TOPOLOGY_NONE, TOPOLOGY_SCOPES
from tmnb.kubelet.node import Machine, ModelSettings
from tmnb.kubelet.options import topology_options_gate_error
from tmnb.kubelet.profiles import DEFAULT_MINOR, KubeletProfile, profile
from tmnb.kubelet.topologymanager.policy import TOPOLOGY_POLICIES
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
class Refusal:
    """One error a start-up check refuses a configuration with: ``text`` in the kubelet's words
    (``kubelet_text`` false only where tmnb describes what the kubelet does without words, such as a
    panic), and the ``code`` and ``field`` the settings validator reports it under."""

    code: str
    field: str
    text: str
    kubelet_text: bool = True


@dataclass(frozen=True)
class Hardware:
    """What is known of the machine a kubelet starts on, None where unknown. ``Hardware.of`` a
    ``Machine`` knows everything; the settings validator may know only some facts, and the checks
    that need a missing one give nothing."""

    online_cpus: frozenset[int] | None = None
    numa_nodes: tuple[int, ...] | None = None
    #: NUMA node -> its sysfs distance row (None: cadvisor gives none for it)
    distances: Mapping[int, Sequence[int] | None] | None = None
    sockets: int | None = None
    #: MemTotal in bytes
    memory: int | None = None
    cpu_topology: CPUTopology | None = None
    #: ``CapacityFromMachineInfo``
    capacity: Mapping[str, GoQuantity] | None = None

    @classmethod
    def of(cls, machine: Machine) -> Hardware:
        topology = CPUTopology.of(machine.cpus)
        return cls(
            online_cpus=frozenset(c.cpu for c in machine.cpus),
            numa_nodes=tuple(n.id for n in machine.numa_nodes),
            distances={n.id: n.distances for n in machine.numa_nodes},
            sockets=topology.num_sockets,
            memory=sum(n.memory for n in machine.numa_nodes),
            cpu_topology=topology,
            capacity=capacity(machine),
        )


@dataclass(frozen=True)
class Reservations:
    """What ``run()`` hands the container manager: parsed reservations and hard thresholds."""

    kube: Mapping[str, GoQuantity]
    system: Mapping[str, GoQuantity]
    memory_available: tuple[GoQuantity | None, float | None] | None


def decode(config: Mapping[str, Any], kubelet: KubeletProfile) -> dict[str, Any]:
    """The configuration as ``loadConfigFile`` leaves it: the file's feature gates merged into the
    kubelet's (a panic on a gate it cannot merge, ``merge_feature_gates``), then ``defaults``."""
    merge_feature_gates(kubelet, config.get("featureGates"))
    return defaults(config, kubelet)


def defaults(config: Mapping[str, Any], kubelet: KubeletProfile) -> dict[str, Any]:
    """v1beta1 defaults filled in, and the command line's evictionHard default when the file has
    none (or its missing signals, with ``mergeDefaultEvictionSettings``)."""
    decoded = {**V1BETA1_DEFAULTS, **config}
    if kubelet.knows_field("memoryReservationPolicy") and not decoded.get("memoryReservationPolicy"):
        decoded["memoryReservationPolicy"] = _MEMORY_RESERVATION_POLICIES[0]
    if decoded.get("evictionHard") is None:
        decoded["evictionHard"] = dict(DEFAULT_EVICTION_HARD)
    elif decoded.get("mergeDefaultEvictionSettings") and kubelet.knows_field("mergeDefaultEvictionSettings"):
        decoded["evictionHard"] = {**DEFAULT_EVICTION_HARD, **decoded["evictionHard"]}
    return decoded


# ---------------------------------------------------------------------------------------------
# ValidateKubeletConfiguration: every rule runs, and the kubelet reports all failures together

Rule = Callable[[Mapping[str, Any], KubeletProfile], list[Refusal]]


def _invalid(code: str, field: str, text: str) -> Refusal:
    return Refusal(code, field, f"invalid configuration: {text}")


def image_minimum_gc_age(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    gc_age = parse_go_duration(str(cfg["imageMinimumGCAge"]), where="imageMinimumGCAge")
    if kubelet.refuses_negative_image_gc_age and gc_age < 0:
        text = f"imageMinimumGCAge {format_go_duration(gc_age)} must not be negative"
        return [_invalid("config.image-gc-age", "imageMinimumGCAge", text)]
    return []


def max_pods(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    if cfg["maxPods"] < 0:
        return [
            _invalid(
                "config.max-pods", "maxPods", f"maxPods (--max-pods) {cfg['maxPods']} must not be a negative number"
            )
        ]
    return []


def pods_per_core(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    if cfg["podsPerCore"] < 0:
        text = f"podsPerCore (--pods-per-core) {cfg['podsPerCore']} must not be a negative number"
        return [_invalid("config.pods-per-core", "podsPerCore", text)]
    return []


def topology_manager_policy(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    policy = cfg["topologyManagerPolicy"]
    if policy in TOPOLOGY_POLICIES:
        return []
    allowed = "[" + " ".join(gostr.quote(p) for p in TOPOLOGY_POLICIES) + "]"
    text = f"topologyManagerPolicy (--topology-manager-policy) {gostr.quote(policy)} must be one of: {allowed}"
    return [_invalid("topology.policy", "topologyManagerPolicy", text)]


def topology_manager_scope(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    scope = cfg["topologyManagerScope"]
    if scope in TOPOLOGY_SCOPES:
        return []
    allowed = ", or ".join(gostr.quote(s) for s in TOPOLOGY_SCOPES)
    text = f"topologyManagerScope (--topology-manager-scope) {gostr.quote(scope)} must be one of: {allowed}"
    return [_invalid("topology.scope", "topologyManagerScope", text)]


def enforce_node_allocatable(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
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
    return [_invalid("config.enforce-node-allocatable", "enforceNodeAllocatable", e) for e in errors]


def reserved_cpus_cgroup(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    if cfg.get("reservedSystemCPUs") and (cfg.get("systemReservedCgroup") or cfg.get("kubeReservedCgroup")):
        text = (
            "can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) "
            "or kubeReservedCgroup (--kube-reserved-cgroup)"
        )
        return [_invalid("cpu.reserved-cpus-cgroup", "reservedSystemCPUs", text)]
    return []


def reserved_cpus_parse(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    reserved = cfg.get("reservedSystemCPUs") or ""
    try:
        gostr.parse_cpu_ranges(reserved)
    except gostr.GoParseError as err:
        text = f"unable to parse reservedSystemCPUs (--reserved-cpus) {reserved}, error: {err}"
        return [_invalid("cpu.reserved-cpus-parse", "reservedSystemCPUs", text)]
    return []


def reserved_memory(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    """``validateReservedMemoryConfiguration``: per entry and limit, its type, a zero amount, a repeat."""
    errors, seen = [], set()
    for item in cfg.get("reservedMemory") or []:
        node = item["numaNode"]
        for name, text in (item.get("limits") or {}).items():
            if name != "memory" and not name.startswith("hugepages-"):
                why = (
                    f"the limit type {gostr.quote(name)} for NUMA node {node} is not supported, only "
                    "[memory hugepages-<HugePageSize>] is accepted"
                )
                errors.append(_invalid("memory.reserved-type", "reservedMemory", why))
            if _quantity(text, f"reservedMemory[numaNode={node}].limits.{name}").is_zero():
                why = f"reserved memory may not be zero for NUMA node {node} and resource {gostr.quote(name)}"
                errors.append(_invalid("memory.reserved-zero", "reservedMemory", why))
            if (node, name) in seen:
                why = f"the reserved memory has a duplicate value for NUMA node {node} and resource {gostr.quote(name)}"
                errors.append(_invalid("memory.reserved-duplicate", "reservedMemory", why))
            seen.add((node, name))
    return errors


def memory_reservation_policy(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    """From 1.36, the minors that know the field."""
    if not kubelet.knows_field("memoryReservationPolicy"):
        return []
    value = cfg["memoryReservationPolicy"]
    errors = []
    if value == _MEMORY_RESERVATION_POLICIES[1] and not kubelet.gate_on("MemoryQoS", cfg.get("featureGates")):
        errors.append(f"memoryReservationPolicy {gostr.quote(value)} requires MemoryQoS feature gate to be enabled")
    if value not in _MEMORY_RESERVATION_POLICIES:
        none, tiered = (gostr.quote(v) for v in _MEMORY_RESERVATION_POLICIES)
        errors.append(
            f"option {gostr.quote(value)} specified for memoryReservationPolicy. Valid options are {none} or {tiered}"
        )
    return [_invalid("memory.reservation-policy", "memoryReservationPolicy", e) for e in errors]


#: ``ValidateKubeletConfiguration``'s rules for the fields that shape resource management, in its order.
VALIDATION: tuple[Rule, ...] = (
    image_minimum_gc_age,
    max_pods,
    pods_per_core,
    topology_manager_policy,
    topology_manager_scope,
    enforce_node_allocatable,
    reserved_cpus_cgroup,
    reserved_cpus_parse,
    reserved_memory,
    memory_reservation_policy,
)


def validate(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> None:
    """``ValidateKubeletConfiguration`` of ``kubelet``'s minor: all failures together, as its aggregate error."""
    errors = [refusal.text for rule in VALIDATION for refusal in rule(cfg, kubelet)]
    if errors:
        raise ConfigRejected(aggregate(errors))


def aggregate(errors: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message bare, several in brackets, repeats once."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _quantity(text: object, where: str) -> GoQuantity:
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    if not isinstance(text, str):
        raise InputError(f"expected a quantity string, got {text!r}", where=where)
    return GoQuantity.parse(text)


# ---------------------------------------------------------------------------------------------
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
        from tmnb.cpuset import CPUSet

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


def start_settings(
    config: Mapping[str, Any], machine: Machine, *, kubelet: KubeletProfile | None = None
) -> ModelSettings:
    """The managers' settings for ``kubelet``'s minor started with ``config`` on ``machine``: decode,
    validation (``VALIDATION``, all failures together), ``run()``'s checks (``RUN``, the first
    failure), as the kubelet stops at the first stage that fails."""
    kubelet = kubelet or profile(DEFAULT_MINOR)
    cfg = decode(config, kubelet)
    validate(cfg, kubelet)
    run_checks(cfg, kubelet, Hardware(online_cpus=frozenset(c.cpu for c in machine.cpus)))
    caps = capacity(machine)
    reservation = allocatable_reservation(caps, reservations(cfg))
    return ModelSettings(
        topology_manager_policy=cfg["topologyManagerPolicy"],
        topology_manager_scope=cfg["topologyManagerScope"],
        topology_manager_policy_options=dict(cfg.get("topologyManagerPolicyOptions") or {}),
        cpu_manager_policy=cfg["cpuManagerPolicy"],
        cpu_manager_policy_options=dict(cfg.get("cpuManagerPolicyOptions") or {}),
        reserved_system_cpus=cfg.get("reservedSystemCPUs") or None,
        reserved_cpu_count=reserved_cpu_count(reservation),
        memory_manager_policy=cfg["memoryManagerPolicy"],
        reserved_memory=reserved_memory_of(cfg),
        kubelet=kubelet,
        feature_gates=dict(cfg.get("featureGates") or {}),
        capacity=caps,
        allocatable_reservation=reservation,
    )


__all__ = [
    "DEFAULT_EVICTION_HARD",
    "RUN",
    "VALIDATION",
    "Hardware",
    "Refusal",
    "capacity",
    "decode",
    "start_settings",
    "validate",
]
