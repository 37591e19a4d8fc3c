"""Simulation API: admit pods on a modelled node the way its kubelet would.

Build a :class:`NodeModel` (machine, effective kubelet settings, existing allocations), then
start a :class:`NodeSimulator` on it and ``admit`` pods one by one. Starting
the simulator runs the kubelet's own start-up checks, so a configuration the kubelet would refuse
raises ``ConfigRejected`` with the kubelet's text instead of producing answers.

The container manager over the resource managers: the top of the model beside ``startup``. Ports
``NewContainerManager`` and ``Start`` of pkg/kubelet/cm/container_manager_linux.go (the managers
created, started and their errors wrapped) and ``validateNodeAllocatable`` of
node_container_manager_linux.go (1.33–1.37).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tmnb.cpuset import CPUSet
from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet import gostr
from tmnb.kubelet.checkpoints.cpu_state import CPUState, restore_cpu_state
from tmnb.kubelet.checkpoints.memory_state import MemoryState, restore_memory_state
from tmnb.kubelet.checkpoints.restore import (
    Checkpoint,
    Manager,
    RestoreError,
    StateFiles,
    could_not_restore,
    restore_error,
)
from tmnb.kubelet.cpumanager.cpu_manager import (
    cpu_policy_error,
    cpu_reservation_error,
    none_policy_options_error,
    static_policy_error,
)
from tmnb.kubelet.cpumanager.policy_static import CPUStaticPolicy
from tmnb.kubelet.cpumanager.topology import CPUInfo, CPUTopology, mask_of_cpus, to_cpuset
from tmnb.kubelet.devicemanager.manager import DeviceManager, DeviceRestart
from tmnb.kubelet.devicemanager.topology_hints import Device
from tmnb.kubelet.go_quantity import GoQuantity
from tmnb.kubelet.memorymanager.memory_manager import (
    memory_policy_error,
    reserved_memory_bytes,
    reserved_memory_numa_error,
    reserved_memory_sum_error,
)
from tmnb.kubelet.memorymanager.policy_static import MemoryStaticPolicy
from tmnb.kubelet.memorymanager.state import MachineNode, ModelMemoryBlock
from tmnb.kubelet.memorymanager.validate import KubeletPanic
from tmnb.kubelet.names import (
    CPU_NONE,
    MEMORY_NONE,
    SCOPE_CONTAINER,
    TOPOLOGY_NONE,
)
from tmnb.kubelet.options import parse_cpu_manager_options
from tmnb.kubelet.pod import BEST_EFFORT, Container, Pod, container_qos
from tmnb.kubelet.profiles import DEFAULT_MINOR, KubeletProfile, profile
from tmnb.kubelet.topologymanager.hints import TopologyHint
from tmnb.kubelet.topologymanager.scope import AdmitResult, HintProvider
from tmnb.kubelet.topologymanager.topology_manager import new_topology_manager
from tmnb.parse.quantity import quantity
from tmnb.parse.state_files import CheckpointMemoryTable


@dataclass(frozen=True)
class NUMANode:
    """One NUMA node: memory in bytes, hugepages as resource name -> total bytes, distance row."""

    id: int
    memory: int = 0
    hugepages: Mapping[str, int] = field(default_factory=dict)
    distances: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Machine:
    cpus: tuple[CPUInfo, ...]
    numa_nodes: tuple[NUMANode, ...]
    devices: Mapping[str, tuple[Device, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cpus", tuple(self.cpus))
        object.__setattr__(self, "numa_nodes", tuple(self.numa_nodes))
        ids = [n.id for n in self.numa_nodes]
        if len(set(ids)) != len(ids):
            raise InputError(f"machine: NUMA node ids must be unique, got {ids}")
        unknown = sorted({c.numa for c in self.cpus} - set(ids))
        if unknown:
            raise InputError(f"machine: CPUs refer to NUMA nodes {unknown} that are not in numa_nodes {ids}")


@dataclass(frozen=True)
class ModelSettings:
    """The effective kubelet settings that matter for admission, as plain values (the provenance-
    carrying ``tmnb.settings.KubeletSettings`` is what they are read from)."""

    topology_manager_policy: str = TOPOLOGY_NONE
    topology_manager_scope: str = SCOPE_CONTAINER
    topology_manager_policy_options: Mapping[str, str] = field(default_factory=dict)
    cpu_manager_policy: str = CPU_NONE
    cpu_manager_policy_options: Mapping[str, str] = field(default_factory=dict)
    #: ``reservedSystemCPUs`` as a cpu list; supersedes ``reserved_cpu_count``.
    reserved_system_cpus: str | None = None
    #: ceil(kubeReserved.cpu + systemReserved.cpu) when no explicit list is given.
    reserved_cpu_count: int = 0
    memory_manager_policy: str = MEMORY_NONE
    #: ``reservedMemory``: NUMA node -> resource -> quantity.
    reserved_memory: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)
    #: the minor whose kubelet this is, and the configuration's ``featureGates`` (merged at start-up)
    kubelet: KubeletProfile = field(default_factory=lambda: profile(DEFAULT_MINOR))
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    #: Machine capacity and ``GetNodeAllocatableReservation`` as ``tmnb.kubelet.startup`` computes
    #: them; with them the managers check reservedMemory and Node Allocatable as the kubelet does.
    capacity: Mapping[str, GoQuantity] | None = None
    allocatable_reservation: Mapping[str, GoQuantity] | None = None


@dataclass(frozen=True)
class ExistingAllocation:
    """What the checkpoints say a running container holds."""

    pod_uid: str
    container: str
    cpus: str = ""
    memory: tuple[ModelMemoryBlock, ...] = ()
    devices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class NodeModel:
    """What the kubelet finds when it starts. ``state_files``: the CPU and memory managers' checkpoint
    files as their bytes, restored as the node's minor restores them (``NodeSimulator.restart`` then
    re-admits the running pods); without them, ``allocations`` is what running containers hold under
    the kubelet's current state, and ``checkpoints`` records what a snapshot learnt of the files (a
    policy, or the error restoring them). Neither: a fresh state, as after the drain and state-file
    removal a policy change needs. With ``state_files``, ``allocations`` may only carry devices."""

    name: str
    machine: Machine
    settings: ModelSettings = field(default_factory=ModelSettings)
    allocations: tuple[ExistingAllocation, ...] = ()
    checkpoints: tuple[Checkpoint, ...] = ()
    state_files: StateFiles | None = None
    #: the runtime's containers and the re-registered device plugins at the restart's first batch; None:
    #: every checkpointed container runs and every plugin is back (a kubelet restart on a running node)
    device_restart: DeviceRestart | None = None


@dataclass(frozen=True)
class ContainerResult:
    name: str
    affinity: TopologyHint | None
    cpuset: CPUSet
    memory: tuple[ModelMemoryBlock, ...]
    devices: Mapping[str, tuple[str, ...]]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "affinity": None if self.affinity is None else self.affinity.to_json(),
            "cpuset": str(self.cpuset),
            "memory": [{"numa": list(b.numa), "type": b.type, "size": b.size} for b in self.memory],
            "devices": {k: list(v) for k, v in self.devices.items()},
        }


@dataclass(frozen=True)
class PodResult:
    uid: str
    namespace: str
    name: str
    admitted: bool
    reason: str
    message: str
    containers: tuple[ContainerResult, ...]

    @property
    def pod_status_message(self) -> str:
        return "" if self.admitted else f"Pod was rejected: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {
            "uid": self.uid,
            "namespace": self.namespace,
            "name": self.name,
            "admitted": self.admitted,
            "reason": self.reason,
            "message": self.message,
            "containers": [c.to_json() for c in self.containers],
        }


class _NoProvider:
    """A manager whose policy is none: no hints, nothing to allocate."""

    def get_topology_hints(self, pod: Pod, container: Container) -> None:
        return None

    def get_pod_topology_hints(self, pod: Pod) -> None:
        return None

    def allocate(self, pod: Pod, container: Container, affinity: TopologyHint) -> None:
        return None

    def remove_container(self, pod_uid: str, container: str) -> None:
        return None


class NodeSimulator:
    """A started kubelet's resource managers; ``admit`` mutates their state like the kubelet does."""

    def __init__(self, node: NodeModel) -> None:
        self.node = node
        s, m = node.settings, node.machine
        distances = {n.id: n.distances for n in m.numa_nodes}
        self.topology = new_topology_manager(
            s.topology_manager_policy,
            s.topology_manager_scope,
            s.topology_manager_policy_options,
            [n.id for n in m.numa_nodes],
            distances,
            kubelet=s.kubelet,
            feature_gates=s.feature_gates,
        )
        self.cpu_topology = CPUTopology.of(m.cpus)
        self.devices = DeviceManager(
            [n.id for n in m.numa_nodes], m.devices, over_device_nodes=s.kubelet.device_hints_over_device_nodes
        )
        self.cpu = self._cpu_manager()
        self.memory = self._memory_manager()
        self._load(node.allocations)
        #: ``_with_kubelet_qos`` asks for every pod; the settings never change
        self._pod_level_qos = s.kubelet.gate_on("PodLevelResources", s.feature_gates)

    # ------------------------------------------------------------------ start-up
    def _cpu_manager(self) -> CPUStaticPolicy | _NoProvider:
        """``cpumanager.NewManager``: policy errors wrapped as it wraps them."""
        s = self.node.settings
        if s.cpu_manager_policy == CPU_NONE:
            _raise(none_policy_options_error(s.cpu_manager_policy_options))
            return _NoProvider()
        _raise(cpu_policy_error(s.cpu_manager_policy))
        reserved = mask_of_cpus(CPUSet.parse(s.reserved_system_cpus)) if s.reserved_system_cpus else 0
        if s.allocatable_reservation is not None:
            count = s.reserved_cpu_count if "cpu" in s.allocatable_reservation else 0
        else:
            count = reserved.bit_count() if reserved else s.reserved_cpu_count
        _raise(cpu_reservation_error(count))
        try:
            options = parse_cpu_manager_options(
                s.cpu_manager_policy_options, kubelet=s.kubelet, feature_gates=s.feature_gates
            )
            return CPUStaticPolicy(
                self.cpu_topology,
                options=options,
                num_reserved_cpus=count,
                reserved_cpus=reserved,
                topology_policy=self.topology.policy.name,
                skips_pod_level=s.kubelet.skips_pod_level_resources(s.feature_gates),
            )
        except ConfigRejected as err:
            raise ConfigRejected(static_policy_error(err.message)) from None

    def _memory_manager(self) -> MemoryStaticPolicy | _NoProvider:
        s, m = self.node.settings, self.node.machine
        if s.memory_manager_policy == MEMORY_NONE:
            return _NoProvider()
        _raise(memory_policy_error(s.memory_manager_policy))
        _raise(reserved_memory_numa_error(s.reserved_memory, {n.id for n in m.numa_nodes}))
        if s.allocatable_reservation is not None:
            _check_reserved_memory_sum(s.reserved_memory, s.allocatable_reservation)
        return MemoryStaticPolicy(
            {n.id: n.memory for n in m.numa_nodes},
            {n.id: dict(n.hugepages) for n in m.numa_nodes},
            reserved_memory_bytes(s.reserved_memory),
            skips_pod_level=s.kubelet.skips_pod_level_resources(s.feature_gates),
        )

    def _restore(self, manager: Manager) -> None:
        """``NewCheckpointState`` at the start of the manager's ``Start``: a state file it cannot
        restore stops the kubelet (the container manager wraps the error)."""
        s = self.node.settings
        configured = s.cpu_manager_policy if manager == "cpu" else s.memory_manager_policy
        for checkpoint in self.node.checkpoints:
            if checkpoint.manager == manager:
                error = restore_error(checkpoint, configured)
                if error is not None:
                    raise ConfigRejected(f"start {manager} manager error: {error}")

    def _load(self, allocations: Iterable[ExistingAllocation]) -> None:
        # ContainerManager.Start: the CPU manager starts (restore, then its policy's state check),
        # then the memory manager, then Node Allocatable is checked.
        allocations = tuple(allocations)
        files = self.node.state_files
        if files is not None and any(a.cpus or a.memory for a in allocations):
            raise InputError("a node model with state files takes its CPUs and memory from them, not from allocations")
        self._restore("cpu")
        if files is not None:
            self._start_cpu(self._restored("cpu", files))
        else:
            self._load_cpus(allocations)
        self._restore("memory")
        if files is not None:
            self._start_memory(self._restored("memory", files))
        else:
            self._load_memory(allocations)
        for a in allocations:
            for resource, ids in a.devices.items():
                self.devices.allocated[(a.pod_uid, a.container, resource)] = tuple(ids)
        s = self.node.settings
        if s.capacity is not None and s.allocatable_reservation is not None:
            _validate_node_allocatable(s.capacity, s.allocatable_reservation)

    def _restored(self, manager: Manager, files: StateFiles) -> CPUState | MemoryState | None:
        """``NewCheckpointState``: the file restored as this minor restores it; its error stops the kubelet."""
        s = self.node.settings
        try:
            if manager == "cpu":
                return restore_cpu_state(
                    files, policy=s.cpu_manager_policy, kubelet=s.kubelet, feature_gates=s.feature_gates
                )
            return restore_memory_state(
                files, policy=s.memory_manager_policy, kubelet=s.kubelet, feature_gates=s.feature_gates
            )
        except RestoreError as err:
            wrapped = could_not_restore(manager, files.path(manager), err.inner)
            raise ConfigRejected(f"start {manager} manager error: {wrapped}") from None

    def _start_cpu(self, state: CPUState | MemoryState | None) -> None:
        """The static policy's ``Start`` (``validateState``) on the restored state; the none policy
        keeps no state to check."""
        if not isinstance(self.cpu, CPUStaticPolicy):
            return
        s = self.node.settings
        assert state is None or isinstance(state, CPUState)
        assignments = {
            (pod, container): mask_of_cpus(cpus)
            for pod, containers in (state.entries if state else {}).items()
            for container, cpus in containers.items()
        }
        try:
            self.cpu.start(
                assignments,
                mask_of_cpus(state.default) if state else 0,
                pods_in_state=len(state.entries) if state else 0,
                pod_assignments={pod: mask_of_cpus(cpus) for pod, cpus in state.pod_entries.items()} if state else {},
                counts_reserved=s.kubelet.state_check_counts_reserved,
            )
        except ConfigRejected as err:
            raise ConfigRejected(f"start cpu manager error: {err.message}") from None

    def _start_memory(self, state: CPUState | MemoryState | None) -> None:
        if not isinstance(self.memory, MemoryStaticPolicy) or state is None:
            return
        assert isinstance(state, MemoryState)
        try:
            self.memory.start(state.machine, state.entries, state.pod_entries)
        except KubeletPanic:
            raise
        except ConfigRejected as err:
            raise ConfigRejected(f"start memory manager error: {err.message}") from None

    def _load_cpus(self, allocations: tuple[ExistingAllocation, ...]) -> None:
        cpu_assignments: dict[tuple[str, str], int] = {}
        for a in allocations:
            if a.cpus:
                cpu_assignments[(a.pod_uid, a.container)] = mask_of_cpus(CPUSet.parse(a.cpus))
        if isinstance(self.cpu, CPUStaticPolicy):
            try:
                self.cpu.start(cpu_assignments)
            except ConfigRejected as err:
                raise ConfigRejected(f"start cpu manager error: {err.message}") from None
        elif cpu_assignments:
            raise InputError("existing CPU assignments need cpuManagerPolicy static")

    def _load_memory(self, allocations: tuple[ExistingAllocation, ...]) -> None:
        for a in allocations:
            if a.memory and isinstance(self.memory, MemoryStaticPolicy):
                self.memory.blocks[(a.pod_uid, a.container)] = list(a.memory)
                for b in a.memory:
                    unknown = sorted(set(b.numa) - set(self.memory.state))
                    if unknown:  # memorymanager staticPolicy.validateState refuses such a state at start
                        raise InputError(
                            f"pod {a.pod_uid} container {a.container}: its {b.type} is on NUMA node(s) "
                            f"{', '.join(map(str, unknown))}, which this machine does not have"
                        )
                    self.memory._reserve(list(b.numa), b.type, b.size)

    # ------------------------------------------------------------------ admission
    @property
    def providers(self) -> Sequence[HintProvider]:
        """Registration order in the kubelet: device manager, CPU manager, memory manager."""
        return (self.devices, self.cpu, self.memory)

    def admit(self, pod: Pod | Mapping[str, Any], *, sources_ready: bool = True) -> PodResult:
        """One pod through the Topology Manager's Admit. Once the pod sources are ready the managers'
        stale-state clean-up releases what a rejected pod was given before the next admission; while
        they are not (the first batch after a start, ``restart``) it stays taken."""
        admitted, result = self._admitted(pod, sources_ready)
        return self._result(admitted, result)

    def admits(self, pod: Pod) -> bool:
        """``admit`` for a caller that only counts admissions (the headroom probes): the same
        admission, without the per-container result it would build."""
        return self._admitted(pod, True)[1].admit

    def _admitted(self, pod: Pod | Mapping[str, Any], sources_ready: bool) -> tuple[Pod, AdmitResult]:
        if not isinstance(pod, Pod):
            pod = Pod.from_pod_dict(pod)
        pod = self._with_kubelet_qos(pod)
        result = self.topology.scope.admit(self.providers, pod)
        if not result.admit and sources_ready:
            self.remove_pod(pod)
        return pod, result

    def restart(self, pods: Iterable[Pod | Mapping[str, Any]]) -> list[PodResult]:
        """The pod source's first batch after the kubelet (re)starts, in the order given (the kubelet
        sorts it by creation time): each pod through ``admit`` with the sources not yet ready, so
        nothing is cleaned up during the batch (allocations of pods no longer delivered, and of pods
        rejected in it, stay taken); then one stale-state pass on both managers releases everything
        the admitted pods do not hold. Each result is read right after its own admission."""
        results: list[PodResult] = []
        active: list[Pod] = []
        self.devices.restarting = self.node.device_restart
        try:
            for raw in pods:
                pod = raw if isinstance(raw, Pod) else Pod.from_pod_dict(raw)
                result = self.admit(pod, sources_ready=False)
                results.append(result)
                if result.admitted:
                    active.append(pod)
        finally:
            self.devices.restarting = None
        self.remove_stale_state(active)
        return results

    def remove_stale_state(self, active: Iterable[Pod]) -> None:
        """``removeStaleState`` of the CPU and memory managers (and the device manager's update of
        allocated devices): every container not in an active pod gives back what it holds."""
        live = {(pod.uid, c.name) for pod in active for c in pod.all_containers()}
        if isinstance(self.cpu, CPUStaticPolicy):
            for key in [k for k in self.cpu.assignments if k not in live]:
                self.cpu.remove_container(*key)
        if isinstance(self.memory, MemoryStaticPolicy):
            for key in [k for k in self.memory.blocks if k not in live]:
                self.memory.remove_container(*key)
        for held in [k for k in self.devices.allocated if (k[0], k[1]) not in live]:
            del self.devices.allocated[held]

    def _with_kubelet_qos(self, pod: Pod) -> Pod:
        """A pod without ``status.qosClass`` classed as this minor's ``ComputePodQOS`` classes it: from the
        containers while PodLevelResources is off, BestEffort for an empty ``spec.resources`` until the
        QoS fix of 1.37, else as ``Pod.qos`` computed it."""
        if pod.qos_class:
            return pod
        s = self.node.settings
        qos: str
        if not self._pod_level_qos:
            if not pod.has_pod_level_resources:  # then ``Pod.qos`` was computed from the containers
                return pod
            qos = container_qos(pod)
        elif pod.pod_resources_given and not pod.has_pod_level_resources:
            qos = BEST_EFFORT if s.kubelet.empty_pod_resources_best_effort(s.feature_gates) else pod.qos()
        else:
            return pod
        return pod if qos == pod.qos() else dataclasses.replace(pod, qos_class=qos)

    def remove_pod(self, pod: Pod) -> None:
        """Release everything the pod holds (the kubelet's stale-state clean-up after a rejection)."""
        for c in pod.all_containers():
            self.cpu.remove_container(pod.uid, c.name)
            self.memory.remove_container(pod.uid, c.name)
            for key in [k for k in self.devices.allocated if k[0] == pod.uid and k[1] == c.name]:
                del self.devices.allocated[key]

    def _result(self, pod: Pod, result: AdmitResult) -> PodResult:
        allocations = result.allocations if result.admit else {}
        affinity = result.affinity
        containers = []
        for c in pod.all_containers():
            got = allocations.get(c.name)
            devices, cpus, memory = got if got else (None, 0, None)
            containers.append(
                ContainerResult(
                    c.name,
                    affinity.get(c.name),
                    to_cpuset(cpus if isinstance(cpus, int) else 0),
                    tuple(memory) if isinstance(memory, list) else (),
                    dict(devices) if isinstance(devices, dict) else {},
                )
            )
        return PodResult(
            pod.uid, pod.namespace, pod.name, result.admit, result.reason, result.message, tuple(containers)
        )

    def checkpoint_states(self) -> tuple[CPUState, MemoryState]:
        """What the CPU and memory managers hold now, as their ``storeState`` checkpoints it: the none
        policies keep a state with no CPUs and no machine state."""
        s = self.node.settings
        if isinstance(self.cpu, CPUStaticPolicy):
            entries: dict[str, dict[str, CPUSet]] = {}
            for (pod, container), mask in sorted(self.cpu.assignments.items()):
                entries.setdefault(pod, {})[container] = to_cpuset(mask)
            pods = {pod: to_cpuset(mask) for pod, mask in sorted(self.cpu.pod_assignments.items())}
            cpu = CPUState(s.cpu_manager_policy, to_cpuset(self.cpu.default), entries, pods)
        else:
            cpu = CPUState(s.cpu_manager_policy, CPUSet(), {})
        if not isinstance(self.memory, MemoryStaticPolicy):
            return cpu, MemoryState(s.memory_manager_policy, {}, {})
        machine: dict[int, MachineNode | None] = {
            numa: MachineNode(
                state.assignments,
                {
                    r: CheckpointMemoryTable(t.total, t.system_reserved, t.allocatable, t.reserved, t.free)
                    for r, t in state.memory.items()
                },
                tuple(state.cells),
            )
            for numa, state in self.memory.state.items()
        }
        blocks: dict[str, dict[str, tuple[ModelMemoryBlock, ...] | None]] = {}
        for (pod, container), held in sorted(self.memory.blocks.items()):
            blocks.setdefault(pod, {})[container] = tuple(held)
        pod_blocks = {pod: tuple(held) for pod, held in sorted(self.memory.pod_blocks.items())}
        return cpu, MemoryState(s.memory_manager_policy, machine, blocks, pod_blocks)

    def free_cpus(self) -> CPUSet:
        """The shared pool minus reserved CPUs (what exclusive allocations can still use)."""
        return to_cpuset(self.cpu.available()) if isinstance(self.cpu, CPUStaticPolicy) else to_cpuset(0)

    def shared_pool(self) -> CPUSet:
        """The CPU manager's shared pool (``defaultCpuSet``); empty under the none policy, which keeps
        no CPU state."""
        return to_cpuset(self.cpu.default) if isinstance(self.cpu, CPUStaticPolicy) else to_cpuset(0)


def _raise(error: str | None) -> None:
    if error is not None:
        raise ConfigRejected(error)


def node_allocatable_error(capacity: Mapping[str, GoQuantity], reservation: Mapping[str, GoQuantity]) -> str | None:
    """``validateNodeAllocatable`` at the container manager's start, printing quantities with ``%v``."""
    errors = []
    for name, reserved in reservation.items():
        total = capacity.get(name, GoQuantity.of(0))
        if total.sub(reserved).value < 0:
            errors.append(
                f"Resource {gostr.quote(name)} has a reservation of {reserved.go_v()} but capacity of "
                f"{total.go_v()}. Expected capacity >= reservation."
            )
    return "invalid Node Allocatable configuration. " + " ".join(errors) if errors else None


def _check_reserved_memory_sum(
    reserved_memory: Mapping[int, Mapping[str, Any]], reservation: Mapping[str, GoQuantity]
) -> None:
    _raise(reserved_memory_sum_error(reserved_memory, reservation))


def _validate_node_allocatable(capacity: Mapping[str, GoQuantity], reservation: Mapping[str, GoQuantity]) -> None:
    _raise(node_allocatable_error(capacity, reservation))


def reserved_cpu_count(kube_reserved_cpu: object = 0, system_reserved_cpu: object = 0) -> int:
    """ceil(kubeReserved.cpu + systemReserved.cpu), as the kubelet sizes the static reservation."""
    total = quantity(kube_reserved_cpu or 0, "kubeReserved.cpu") + quantity(
        system_reserved_cpu or 0, "systemReserved.cpu"
    )
    return math.ceil(total)


__all__ = [
    "ContainerResult",
    "ExistingAllocation",
    "Machine",
    "ModelSettings",
    "NUMANode",
    "NodeModel",
    "NodeSimulator",
    "PodResult",
    "reserved_cpu_count",
]
