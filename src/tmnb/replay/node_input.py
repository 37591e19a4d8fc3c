"""Snapshot records as the kubelet model's inputs (hardware, settings, allocations, pods).

The what-if replay, the sample generator, the sandbox's kubelets and the rollout's verification
all build their ``NodeSimulator`` from here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.kubelet.checkpoint import Checkpoint, StateFiles, render_cpu_state, render_memory_state
from tmnb.kubelet.cpu_static import CPUStaticPolicy
from tmnb.kubelet.cpu_topology import CPUInfo
from tmnb.kubelet.devices import Device as ModelDevice
from tmnb.kubelet.memory_static import MachineNode, MemoryStaticPolicy, ModelMemoryBlock
from tmnb.kubelet.names import CPU_NONE, CPU_STATIC, MEMORY_NONE, MEMORY_STATIC
from tmnb.kubelet.node import ExistingAllocation, Machine, ModelSettings, NodeModel, NodeSimulator, NUMANode
from tmnb.kubelet.pod import Container as ModelContainer
from tmnb.kubelet.pod import Pod as ModelPod
from tmnb.kubelet.startup import start_settings
from tmnb.parse.quantity import quantity
from tmnb.parse.state_files import CheckpointMemoryTable
from tmnb.replay.plan import NodePlan, plan_for
from tmnb.snapshot import Container, Node, Pod

#: The what-if's modes: ``drain`` (fresh state) and ``restart`` (a restart over today's state files).
Mode = Literal["drain", "restart"]
#: The model's: those, and ``running``: the kubelet as it runs now (today's allocations, nothing restored
#: or re-admitted), for one more pod on the node.
ModelMode = Literal["drain", "restart", "running"]


def _bytes(text: str) -> int:
    return int(quantity(text, "hugepage size"))


def machine_of(node: Node) -> Machine:
    """The node's hardware as the kubelet's cadvisor would describe it (online CPUs only)."""
    hugepages: dict[int, dict[str, int]] = {}
    for zone in node.numa:
        hugepages[zone.id] = {f"hugepages-{h.size}": h.total * _bytes(h.size) for h in zone.hugepages}
    devices: dict[str, list[ModelDevice]] = {}
    for d in node.devices:
        devices.setdefault(d.resource, []).append(
            ModelDevice(id=d.id, numa=None if d.numa is None else tuple(d.numa), healthy=d.healthy)
        )
    return Machine(
        cpus=tuple(CPUInfo(c.cpu, c.core, c.socket, c.numa) for c in node.cpus if c.online),
        numa_nodes=tuple(
            NUMANode(z.id, z.memory_total, hugepages[z.id], z.distance_row() or None)
            for z in sorted(node.numa, key=lambda z: z.id)
        ),
        devices={r: tuple(ds) for r, ds in devices.items()},
    )


def settings_of(plan: NodePlan, machine: Machine) -> ModelSettings:
    """The planned settings through the kubelet's own start-up steps on the node's ``machine_of``, so a
    configuration it would refuse raises ``ConfigRejected`` in its words before any pod is predicted."""
    return start_settings(plan.planned, machine, kubelet=plan.planned_kubelet)


#: Collection steps whose error means the kubelet cannot load its configuration and exits.
CONFIG_STEPS = ("kubelet config", "kubelet drop-ins")


def config_refusal(node: Node) -> str | None:
    """What the kubelet says when it cannot load the configuration collected from ``node`` (read as
    defaults, the node would look healthy while its kubelet does not start)."""
    return next((i.message for i in node.issues if i.source in CONFIG_STEPS and i.severity == "error"), None)


def existing_allocations(node: Node) -> tuple[ExistingAllocation, ...]:
    return tuple(
        ExistingAllocation(
            pod_uid=a.pod_uid,
            container=a.container,
            cpus=a.cpuset if a.exclusive else "",
            memory=tuple(ModelMemoryBlock(tuple(b.numa), b.size, b.type) for b in a.memory),
            devices={d.resource: tuple(d.ids) for d in a.devices},
        )
        for a in node.allocations
    )


def checkpoints_of(node: Node) -> tuple[Checkpoint, ...]:
    """The state files the kubelet restores when it restarts on ``node``."""
    return tuple(
        Checkpoint(f.manager, f.path, f.policy, f.error, f.error_after_policy, f.unknown) for f in node.state_files
    )


def state_files_of(plan: NodePlan, machine: Machine) -> StateFiles | None:
    """The cpu_manager_state and memory_manager_state the node's kubelet wrote under today's settings,
    as 1.33-1.36 write them (v2 and v1): today's policy (the file's, when the snapshot read it), the
    shared pool and the exclusive CPUs, and the memory manager's machine state, which the kubelet
    computes from today's reservation and the memory blocks held. A snapshot that read the node's
    state files says which exist; one that did not stands for a running kubelet, which wrote both.
    None when today's kubelet cannot be reconstructed (its settings or allocations refused)."""
    node = plan.node
    records = {f.manager: f for f in node.state_files}
    collected = bool(node.state_files)
    try:
        current = start_settings(plan.current, machine, kubelet=plan.kubelet.profile)
        written = NodeSimulator(NodeModel(node.name, machine, current, existing_allocations(node)))
    except InputError:
        return None
    texts: dict[str, str | None] = {"cpu": None, "memory": None}
    cpu, memory = records.get("cpu"), records.get("memory")
    if (cpu is None and not collected) or (cpu is not None and cpu.error is None and cpu.unknown is None):
        policy = cpu.policy if cpu is not None and cpu.policy else current.cpu_manager_policy
        if policy != current.cpu_manager_policy and (policy == CPU_STATIC or node.shared_pool is None):
            return None  # the file's state is not today's kubelet's
        default = (
            CPUSet.parse(node.shared_pool)
            if node.shared_pool is not None
            else CPUSet(written.shared_pool() if isinstance(written.cpu, CPUStaticPolicy) else ())
        )
        entries: dict[str, dict[str, CPUSet]] = {}
        for a in node.allocations:
            if a.exclusive and a.cpuset:
                entries.setdefault(a.pod_uid, {})[a.container] = CPUSet.parse(a.cpuset)
        texts["cpu"] = render_cpu_state(policy if policy else CPU_NONE, default, entries)
    if (memory is None and not collected) or (memory is not None and memory.error is None and memory.unknown is None):
        policy = memory.policy if memory is not None and memory.policy else current.memory_manager_policy
        machine_state: dict[int, MachineNode] = {}
        blocks: dict[str, dict[str, list[ModelMemoryBlock]]] = {}
        if policy == MEMORY_STATIC:
            if not isinstance(written.memory, MemoryStaticPolicy):
                return None
            for numa, state in written.memory.state.items():
                tables = {
                    r: CheckpointMemoryTable(t.total, t.system_reserved, t.allocatable, t.reserved, t.free)
                    for r, t in state.memory.items()
                }
                machine_state[numa] = MachineNode(state.assignments, tables, tuple(state.cells))
            for (pod, container), held in written.memory.blocks.items():
                blocks.setdefault(pod, {})[container] = list(held)
        texts["memory"] = render_memory_state(policy if policy else MEMORY_NONE, machine_state, blocks)
    return StateFiles(texts["cpu"], texts["memory"])


def model_for(plan: NodePlan, mode: ModelMode = "drain") -> NodeModel:
    """The kubelet model of the planned node. ``restart``: the kubelet restarts over today's state
    files (``state_files_of``), restored as the planned minor restores them, then re-admits the
    running pods (``NodeSimulator.restart``); a file the snapshot could not read, or one the
    kubelet refuses to load, keeps its recorded error. ``running``: today's allocations held as
    they are (a recorded state-file error still stops it), to admit one more pod. ``drain``
    starts from none, as after the drain and state-file removal."""
    node = plan.node
    machine = machine_of(node)
    if mode == "drain":
        return NodeModel(node.name, machine, settings_of(plan, machine))
    settings = settings_of(plan, machine)
    allocations, checkpoints = existing_allocations(node), checkpoints_of(node)
    files = state_files_of(plan, machine) if mode == "restart" else None
    if files is None:  # running, or today's kubelet cannot be reconstructed: what it holds, as recorded
        return NodeModel(node.name, machine, settings, allocations, checkpoints)
    devices = tuple(dataclasses.replace(a, cpus="", memory=()) for a in allocations if a.devices)
    refused = tuple(c for c in checkpoints if c.error is not None or c.unknown is not None)
    return NodeModel(node.name, machine, settings, devices, refused, files)


def node_model(node: Node, target: Mapping[str, Any], mode: ModelMode = "drain") -> NodeModel:
    return model_for(plan_for(node, target), mode)


def model_pod(pod: Pod) -> ModelPod:
    def containers(items: Iterable[Container]) -> tuple[ModelContainer, ...]:
        return tuple(ModelContainer(c.name, dict(c.requests), dict(c.limits), c.restart_policy) for c in items)

    return ModelPod(
        uid=pod.uid,
        name=pod.name,
        namespace=pod.namespace,
        containers=containers(pod.containers),
        init_containers=containers(pod.init_containers),
        qos_class=pod.qos_class,
        pod_requests=None if pod.resources is None else dict(pod.resources.requests),
        pod_limits=None if pod.resources is None else dict(pod.resources.limits),
        pod_resources_given=pod.resources is not None,
    )
