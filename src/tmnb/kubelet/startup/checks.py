"""Every configuration check of the kubelet's start-up as a named step, in the kubelet's order.

The checks themselves live where the model's start calls them: the validation rules and ``run()``'s
checks in ``validation`` and ``run`` (``VALIDATION``, ``RUN``), the managers' in each manager's
``NewManager`` module (``topologymanager.topology_manager``, ``cpumanager.cpu_manager``,
``memorymanager.memory_manager``), ``options`` and the static policies, Node Allocatable's in
``node``. A step here reads a configuration and a machine as the model's start reads them
and calls those functions, so ``STAGES`` is what the kubelet refuses, in its words, and nowhere
else: the settings validator runs every step on its own and lists each ``Refusal`` as a finding. The
kubelet stops at the first stage with a refusal (validation: every rule's errors together, its
aggregate; any later stage: the first), which is what ``start_settings`` and ``NodeSimulator`` raise
(``tests/settings/test_one_validator.py`` holds them to it).

A step gives nothing when the fact it needs is unknown (``Hardware`` fields left None) or when a
check before it already refused what it reads (options that do not parse, a reservation ``run()``
cannot parse): that check's own step reports it.

No kubelet file of its own: the stages are those of cmd/kubelet/app/server.go and
pkg/kubelet/cm/container_manager_linux.go (1.33–1.37), each step naming the function it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from tmnb.cpuset import CPUSet
from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.cpumanager.cpu_manager import (
    cpu_policy_error,
    cpu_reservation_error,
    none_policy_options_error,
    static_policy_error,
)
from tmnb.kubelet.cpumanager.policy_static import (
    CPUStaticPolicy,
    align_by_socket_hardware_error,
    align_by_socket_policy_error,
)
from tmnb.kubelet.cpumanager.topology import mask_of_cpus
from tmnb.kubelet.gates import merge_feature_gates
from tmnb.kubelet.go_quantity import BINARY_SI, GoQuantity
from tmnb.kubelet.memorymanager.memory_manager import (
    memory_policy_error,
    reserved_memory_bytes,
    reserved_memory_numa_error,
    reserved_memory_sum_error,
)
from tmnb.kubelet.memorymanager.policy_static import system_reserved_memory_error
from tmnb.kubelet.names import CPU_NONE, CPU_STATIC, MEMORY_STATIC, TOPOLOGY_NONE
from tmnb.kubelet.node import node_allocatable_error
from tmnb.kubelet.options import (
    CPUManagerOptions,
    TopologyManagerOptions,
    new_topology_policy_options,
    parse_cpu_manager_options,
)
from tmnb.kubelet.profiles import KubeletProfile
from tmnb.kubelet.startup import run, validation
from tmnb.kubelet.startup.allocatable import (
    Reservations,
    allocatable_reservation,
    reserved_cpu_count,
    reserved_memory_of,
)
from tmnb.kubelet.startup.config import defaults
from tmnb.kubelet.startup.types import Hardware, Refusal
from tmnb.kubelet.topologymanager.policy import TOPOLOGY_POLICIES
from tmnb.kubelet.topologymanager.topology_manager import numa_distances_error, numa_limit_error, sparse_numa_panic

#: Which manager's rules a step belongs to (``config``: the kubelet as a whole).
Area = Literal["config", "topology", "cpu", "memory"]


@dataclass(frozen=True)
class Start:
    """A configuration about to start on a machine, as every step reads it."""

    #: the configuration as written (feature gates not merged yet)
    config: Mapping[str, Any]
    kubelet: KubeletProfile
    hardware: Hardware
    #: with the v1beta1 defaults filled in (``config.defaults``)
    cfg: Mapping[str, Any]
    #: ``GetNodeAllocatableReservation`` of what ``run()`` parses; None when it refuses (its step says why)
    reservation: Mapping[str, GoQuantity] | None
    #: False when memory.available is a percentage and MemTotal is unknown: the memory part of
    #: ``reservation`` leaves the threshold out
    memory_reservation_known: bool

    @classmethod
    def of(cls, config: Mapping[str, Any], kubelet: KubeletProfile, hardware: Hardware | None = None) -> Start:
        hardware = hardware or Hardware()
        cfg = defaults(config, kubelet)
        try:
            r: Reservations | None = run.reservations(cfg)
        except (ConfigRejected, InputError):
            r = None
        if r is None:
            return cls(config, kubelet, hardware, cfg, None, True)
        if hardware.capacity is not None:
            return cls(config, kubelet, hardware, cfg, allocatable_reservation(hardware.capacity, r), True)
        # The machine's capacity unknown: it is taken to have every resource the configuration reserves.
        caps = {name: GoQuantity.of(0) for name in ("cpu", *r.kube, *r.system)}
        caps["memory"] = GoQuantity.of(hardware.memory or 0, BINARY_SI)
        fraction = r.memory_available is not None and r.memory_available[0] is None
        known = not (fraction and hardware.memory is None)
        return cls(config, kubelet, hardware, cfg, allocatable_reservation(caps, r), known)


@dataclass(frozen=True)
class Step:
    """One check: ``name`` is the kubelet's function (or rule) it ports, ``codes`` the codes of the
    refusals it can give."""

    name: str
    area: Area
    codes: tuple[str, ...]
    check: Callable[[Start], list[Refusal]]


@dataclass(frozen=True)
class Stage:
    """A stage of the start; ``aggregate``: the kubelet reports all its errors together (validation)."""

    name: str
    aggregate: bool
    steps: tuple[Step, ...]


def _refusal(code: str, field: str, error: str | None, *, kubelet_text: bool = True) -> list[Refusal]:
    return [] if error is None else [Refusal(code, field, error, kubelet_text)]


def _rejected(code: str, field: str, check: Callable[[], object], wrap: Callable[[str], str] = str) -> list[Refusal]:
    try:
        check()
    except ConfigRejected as err:
        return [Refusal(code, field, wrap(err.message))]
    return []


# ---------------------------------------------------------------------------------------------
# SetDefaults_KubeletConfiguration, ValidateKubeletConfiguration, run()


def _feature_gates(start: Start) -> list[Refusal]:
    return _rejected(
        "config.feature-gates",
        "featureGates",
        lambda: merge_feature_gates(start.kubelet, start.config.get("featureGates")),
    )


def _rule(rule: validation.Rule) -> Callable[[Start], list[Refusal]]:
    return lambda start: rule(start.cfg, start.kubelet)


def _run(step: run.RunStep) -> Callable[[Start], list[Refusal]]:
    return lambda start: step(start.cfg, start.kubelet, start.hardware)


_RULES: Mapping[validation.Rule, tuple[Area, tuple[str, ...]]] = {
    validation.image_minimum_gc_age: ("config", ("config.image-gc-age",)),
    validation.max_pods: ("config", ("config.max-pods",)),
    validation.pods_per_core: ("config", ("config.pods-per-core",)),
    validation.topology_manager_policy: ("topology", ("topology.policy",)),
    validation.topology_manager_scope: ("topology", ("topology.scope",)),
    validation.enforce_node_allocatable: ("config", ("config.enforce-node-allocatable",)),
    validation.reserved_cpus_cgroup: ("cpu", ("cpu.reserved-cpus-cgroup",)),
    validation.reserved_cpus_parse: ("cpu", ("cpu.reserved-cpus-parse",)),
    validation.reserved_memory: (
        "memory",
        ("memory.reserved-type", "memory.reserved-zero", "memory.reserved-duplicate"),
    ),
    validation.memory_reservation_policy: ("memory", ("memory.reservation-policy",)),
}
_RUN: Mapping[run.RunStep, tuple[Area, tuple[str, ...]]] = {
    run.reserved_cpus_online: ("cpu", ("cpu.reserved-cpus-offline",)),
    run.kube_reserved: ("config", ("config.kube-reserved",)),
    run.system_reserved: ("config", ("config.system-reserved",)),
    run.eviction_hard: ("config", ("config.eviction-hard",)),
    run.topology_options_gate: ("topology", ("kubelet.rejects",)),
}


# ---------------------------------------------------------------------------------------------
# NewContainerManager: the Topology Manager (skipped under policy none), the CPU and memory managers


def topology_options(start: Start) -> TopologyManagerOptions | None:
    """The policy options the Topology Manager runs with; None when it parses none (policy none, a
    policy validation refuses) or they do not parse."""
    cfg = start.cfg
    policy = cfg["topologyManagerPolicy"]
    if policy == TOPOLOGY_NONE or policy not in TOPOLOGY_POLICIES:
        return None
    try:
        return new_topology_policy_options(
            cfg.get("topologyManagerPolicyOptions") or {}, kubelet=start.kubelet, feature_gates=cfg.get("featureGates")
        )
    except ConfigRejected:
        return None


def _topology_options(start: Start) -> list[Refusal]:
    cfg = start.cfg
    policy = cfg["topologyManagerPolicy"]
    if policy == TOPOLOGY_NONE or policy not in TOPOLOGY_POLICIES:
        return []
    return _rejected(
        "kubelet.rejects",
        "topologyManagerPolicyOptions",
        lambda: new_topology_policy_options(
            cfg.get("topologyManagerPolicyOptions") or {}, kubelet=start.kubelet, feature_gates=cfg.get("featureGates")
        ),
    )


def _numa_distances(start: Start) -> list[Refusal]:
    opts, hw = topology_options(start), start.hardware
    if opts is None or not opts.prefer_closest_numa or hw.numa_nodes is None or hw.distances is None:
        return []
    field = "topologyManagerPolicyOptions"
    missing = numa_distances_error(hw.numa_nodes, hw.distances)
    if missing is not None:
        return _refusal("topology.numa-distances", field, missing)
    panic = sparse_numa_panic(hw.numa_nodes, hw.distances)
    return _refusal("topology.sparse-numa-ids", field, panic, kubelet_text=False)


def _numa_limit(start: Start) -> list[Refusal]:
    opts, nodes = topology_options(start), start.hardware.numa_nodes
    if opts is None or nodes is None:
        return []
    return _refusal("topology.too-many-numa-nodes", "topologyManagerPolicy", numa_limit_error(len(nodes), opts))


def _cpu_none_options(start: Start) -> list[Refusal]:
    cfg = start.cfg
    if cfg["cpuManagerPolicy"] != CPU_NONE:
        return []
    error = none_policy_options_error(cfg.get("cpuManagerPolicyOptions") or {})
    return _refusal("cpu.options-with-none", "cpuManagerPolicyOptions", error)


def _cpu_policy(start: Start) -> list[Refusal]:
    return _refusal("cpu.policy", "cpuManagerPolicy", cpu_policy_error(start.cfg["cpuManagerPolicy"]))


def _reserved_cpus(start: Start) -> int | None:
    """How many CPUs the static policy reserves; None when unknown."""
    return None if start.reservation is None else reserved_cpu_count(start.reservation)


def _cpu_reservation(start: Start) -> list[Refusal]:
    count = _reserved_cpus(start)
    if start.cfg["cpuManagerPolicy"] != CPU_STATIC or count is None:
        return []
    return _refusal("cpu.static-no-reservation", "cpuManagerPolicy", cpu_reservation_error(count))


def cpu_options(start: Start) -> CPUManagerOptions | None:
    """The static policy's options; None under another policy or when they do not parse."""
    cfg = start.cfg
    if cfg["cpuManagerPolicy"] != CPU_STATIC:
        return None
    try:
        return parse_cpu_manager_options(
            cfg.get("cpuManagerPolicyOptions") or {}, kubelet=start.kubelet, feature_gates=cfg.get("featureGates")
        )
    except ConfigRejected:
        return None


def _cpu_options(start: Start) -> list[Refusal]:
    cfg = start.cfg
    if cfg["cpuManagerPolicy"] != CPU_STATIC:
        return []
    return _rejected(
        "kubelet.rejects",
        "cpuManagerPolicyOptions",
        lambda: parse_cpu_manager_options(
            cfg.get("cpuManagerPolicyOptions") or {}, kubelet=start.kubelet, feature_gates=cfg.get("featureGates")
        ),
        static_policy_error,
    )


def _align_by_socket_policy(start: Start) -> list[Refusal]:
    opts = cpu_options(start)
    if opts is None or not opts.align_by_socket:
        return []
    error = align_by_socket_policy_error(start.cfg["topologyManagerPolicy"])
    return _refusal(
        "cpu.align-by-socket-single-numa",
        "cpuManagerPolicyOptions",
        None if error is None else static_policy_error(error),
    )


def _sockets_and_numa_nodes(hw: Hardware) -> tuple[int, int] | None:
    if hw.cpu_topology is not None:
        return hw.cpu_topology.num_sockets, hw.cpu_topology.num_numa_nodes
    if hw.sockets is not None and hw.numa_nodes is not None:
        return hw.sockets, len(hw.numa_nodes)
    return None


def _align_by_socket_hardware(start: Start) -> list[Refusal]:
    opts, counts = cpu_options(start), _sockets_and_numa_nodes(start.hardware)
    if opts is None or not opts.align_by_socket or counts is None:
        return []
    error = align_by_socket_hardware_error(*counts)
    return _refusal(
        "cpu.align-by-socket-hardware",
        "cpuManagerPolicyOptions",
        None if error is None else static_policy_error(error),
    )


def _cpu_reserve(start: Start) -> list[Refusal]:
    """``NewStaticPolicy`` taking its reserved CPUs (needs the machine's CPU topology), once the
    checks before it pass."""
    opts, count, topology = cpu_options(start), _reserved_cpus(start), start.hardware.cpu_topology
    if opts is None or not count or topology is None:
        return []
    if _align_by_socket_policy(start) or _align_by_socket_hardware(start):
        return []
    text = start.cfg.get("reservedSystemCPUs") or ""
    try:
        reserved = mask_of_cpus(CPUSet.parse(text)) if text else 0
    except InputError:
        return []  # validation refuses it
    if reserved & ~topology.all_mask:
        return []  # run() refuses it
    try:
        CPUStaticPolicy(topology, options=opts, num_reserved_cpus=count, reserved_cpus=reserved)
    except ConfigRejected as err:
        return [Refusal("cpu.reserve", "kubeReserved", static_policy_error(err.message))]
    except InputError:
        return []  # an allocation option tmnb does not model: unknown
    return []


def _memory_policy(start: Start) -> list[Refusal]:
    return _refusal("memory.policy", "memoryManagerPolicy", memory_policy_error(start.cfg["memoryManagerPolicy"]))


def _reserved_memory_numa(start: Start) -> list[Refusal]:
    nodes = start.hardware.numa_nodes
    if start.cfg["memoryManagerPolicy"] != MEMORY_STATIC or nodes is None:
        return []
    error = reserved_memory_numa_error(reserved_memory_of(start.cfg), nodes)
    return _refusal("memory.reserved-unknown-numa", "reservedMemory", error)


def _reserved_memory_sum(start: Start) -> list[Refusal]:
    if start.cfg["memoryManagerPolicy"] != MEMORY_STATIC or start.reservation is None:
        return []
    if not start.memory_reservation_known:
        return []
    error = reserved_memory_sum_error(reserved_memory_of(start.cfg), start.reservation)
    return _refusal("memory.reserved-sum", "reservedMemory", error)


def _system_reserved_memory(start: Start) -> list[Refusal]:
    if start.cfg["memoryManagerPolicy"] != MEMORY_STATIC:
        return []
    error = system_reserved_memory_error(reserved_memory_bytes(reserved_memory_of(start.cfg)))
    return _refusal("memory.reserved-missing", "reservedMemory", error)


def _node_allocatable(start: Start) -> list[Refusal]:
    caps = start.hardware.capacity
    if caps is None or start.reservation is None:
        return []
    return _refusal("config.node-allocatable", "kubeReserved", node_allocatable_error(caps, start.reservation))


#: The start-up in the kubelet's order.
STAGES: tuple[Stage, ...] = (
    Stage(
        "SetDefaults_KubeletConfiguration",
        False,
        (Step("merge featureGates", "config", ("config.feature-gates",), _feature_gates),),
    ),
    Stage(
        "ValidateKubeletConfiguration",
        True,
        tuple(Step(rule.__name__, *_RULES[rule], _rule(rule)) for rule in validation.VALIDATION),
    ),
    Stage("run", False, tuple(Step(step.__name__, *_RUN[step], _run(step)) for step in run.RUN)),
    Stage(
        "topologymanager.NewManager",
        False,
        (
            Step("NewPolicyOptions", "topology", ("kubelet.rejects",), _topology_options),
            Step(
                "NUMA distances", "topology", ("topology.numa-distances", "topology.sparse-numa-ids"), _numa_distances
            ),
            Step("NUMA node limit", "topology", ("topology.too-many-numa-nodes",), _numa_limit),
        ),
    ),
    Stage(
        "cpumanager.NewManager",
        False,
        (
            Step("NewNonePolicy", "cpu", ("cpu.options-with-none",), _cpu_none_options),
            Step("policy name", "cpu", ("cpu.policy",), _cpu_policy),
            Step("reserved CPU resources", "cpu", ("cpu.static-no-reservation",), _cpu_reservation),
            Step("NewStaticPolicyOptions", "cpu", ("kubelet.rejects",), _cpu_options),
            Step(
                "align-by-socket and the topology policy",
                "cpu",
                ("cpu.align-by-socket-single-numa",),
                _align_by_socket_policy,
            ),
            Step(
                "align-by-socket and the hardware", "cpu", ("cpu.align-by-socket-hardware",), _align_by_socket_hardware
            ),
            Step("NewStaticPolicy reservation", "cpu", ("cpu.reserve",), _cpu_reserve),
        ),
    ),
    Stage(
        "memorymanager.NewManager",
        False,
        (
            Step("policy name", "memory", ("memory.policy",), _memory_policy),
            Step("getTotalMemoryTypeReserved", "memory", ("memory.reserved-unknown-numa",), _reserved_memory_numa),
            Step("validateReservedMemory", "memory", ("memory.reserved-sum",), _reserved_memory_sum),
            Step("NewPolicyStatic", "memory", ("memory.reserved-missing",), _system_reserved_memory),
        ),
    ),
    Stage(
        "ContainerManager.Start",
        False,
        (Step("validateNodeAllocatable", "config", ("config.node-allocatable",), _node_allocatable),),
    ),
)

STEPS: tuple[Step, ...] = tuple(step for stage in STAGES for step in stage.steps)


__all__ = ["STAGES", "STEPS", "Stage", "Start", "Step", "cpu_options", "topology_options"]
