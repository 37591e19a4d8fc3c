"""Snapshot records as the kubelet model's inputs (hardware, settings, allocations, pods).

The what-if replay, the sample generator, the sandbox's kubelets and the rollout's verification
all build their ``NodeSimulator`` from here.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Literal

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.kubelet.checkpoints.cpu_state import CPUState
from tmnb.kubelet.checkpoints.files import render_state_files
from tmnb.kubelet.checkpoints.memory_state import MemoryState
from tmnb.kubelet.checkpoints.restore import Checkpoint, Manager, StateFiles
from tmnb.kubelet.cpumanager.topology import CPUInfo
from tmnb.kubelet.devicemanager.topology_hints import Device as ModelDevice
from tmnb.kubelet.errors import Unpredictable
from tmnb.kubelet.memorymanager.policy_static import MemoryStaticPolicy
from tmnb.kubelet.memorymanager.state import ModelMemoryBlock
from tmnb.kubelet.names import CPU_NONE, CPU_STATIC, MEMORY_NONE, MEMORY_STATIC
from tmnb.kubelet.node import ExistingAllocation, Machine, ModelSettings, NodeModel, NodeSimulator, NUMANode
from tmnb.kubelet.pod import Container as ModelContainer
from tmnb.kubelet.pod import Pod as ModelPod
from tmnb.kubelet.startup.start import start_settings
from tmnb.parse.quantity import quantity
from tmnb.replay.plan import NodePlan, plan_for
from tmnb.snapshot import Container, Node, Pod

#: The pod phases the kubelet re-admits at a restart and the what-if replays.
ACTIVE_PHASES = frozenset({"Running", "Pending"})

#: The what-if's modes: ``drain`` (fresh state) and ``restart`` (a restart over today's state files).
Mode = Literal["drain", "restart"]
#: The model's: those, and ``running``: the kubelet as it runs now (today's allocations, nothing restored
#: or re-admitted), for one more pod on the node.
ModelMode = Literal["drain", "restart", "running"]


def _bytes(text: str) -> int:
    return int(quantity(text, "hugepage size"))


def machine_of(node: Node) -> Machine:
    """The node's hardware as the kubelet's cadvisor would describe it (online CPUs only). Made once
    per node and kept on it (both are frozen): each of a node's models, the drain steps' and the
    what-if's, reads it."""
    made: Machine | None = node.__dict__.get("_machine")
    if made is None:
        made = node.__dict__["_machine"] = _machine(node)
    return made


def _machine(node: Node) -> Machine:
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
    configuration it would refuse raises ``ConfigRejected`` in its words before any pod is predicted.
    Made once per plan and machine and kept on the plan (both frozen): a node's models all start the
    same kubelet (a refusal is not kept; it is raised again)."""
    made: tuple[Machine, ModelSettings] | None = plan.__dict__.get("_settings")
    if made is not None and made[0] is machine:
        return made[1]
    settings = start_settings(plan.planned, machine, kubelet=plan.planned_kubelet)
    plan.__dict__["_settings"] = (machine, settings)
    return settings


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


def checkpoints_of(node: Node, reader: str) -> tuple[Checkpoint, ...]:
    """The state files the kubelet restores when it starts on ``node``, as the checkpoint ``reader``
    (``KubeletProfile.state_reader``) loads them: a snapshot that judged each file per reader gives that
    reader's load error (a file one minor refuses, another reads); an older one, its error as collected."""
    out = []
    for f in node.state_files:
        if f.refused_by is None:
            out.append(Checkpoint(f.manager, f.path, f.policy, f.error, f.error_after_policy, f.unknown))
            continue
        load = f.refused_by.get(reader)
        after = f.error if f.error_after_policy else None
        error = load if load is not None else after
        out.append(Checkpoint(f.manager, f.path, f.policy, error, load is None and after is not None, f.unknown))
    return tuple(out)


def state_files_of(plan: NodePlan, machine: Machine, checkpoints: tuple[Checkpoint, ...]) -> StateFiles | None:
    """The cpu_manager_state and memory_manager_state the node's kubelet wrote under today's settings,
    in the format today's minor writes with today's gates (``render_state_files``): today's policy (the
    file's, when the snapshot read it), the shared pool and the exclusive CPUs, and the memory manager's
    machine state, which the kubelet computes from today's reservation and the memory blocks held. A
    snapshot that read the node's state files says which exist; one that did not stands for a running
    kubelet, which wrote both. None when today's kubelet cannot be reconstructed (its settings or
    allocations refused). ``checkpoints``: the node's files as the planned kubelet loads them."""
    node = plan.node
    records = {f.manager: f for f in checkpoints}
    collected = bool(node.state_files)
    try:
        current = start_settings(plan.current, machine, kubelet=plan.kubelet.profile)
        written = NodeSimulator(NodeModel(node.name, machine, current, existing_allocations(node)))
    except InputError:
        return None
    held_cpu, held_memory = written.checkpoint_states()
    cpu_state: CPUState | None = None
    memory_state: MemoryState | None = None
    cpu, memory = records.get("cpu"), records.get("memory")
    if (cpu is None and not collected) or (cpu is not None and cpu.error is None and cpu.unknown is None):
        policy = cpu.policy if cpu is not None and cpu.policy else current.cpu_manager_policy
        if policy != current.cpu_manager_policy and (policy == CPU_STATIC or node.shared_pool is None):
            return None  # the file's state is not today's kubelet's
        default = CPUSet.parse(node.shared_pool) if node.shared_pool is not None else held_cpu.default
        entries: dict[str, dict[str, CPUSet]] = {}
        for a in node.allocations:
            if a.exclusive and a.cpuset:
                entries.setdefault(a.pod_uid, {})[a.container] = CPUSet.parse(a.cpuset)
        cpu_state = CPUState(policy or CPU_NONE, default, entries)
    if (memory is None and not collected) or (memory is not None and memory.error is None and memory.unknown is None):
        policy = memory.policy if memory is not None and memory.policy else current.memory_manager_policy
        if policy == MEMORY_STATIC and not isinstance(written.memory, MemoryStaticPolicy):
            return None
        held = held_memory if policy == MEMORY_STATIC else MemoryState(policy, {}, {})
        memory_state = dataclasses.replace(held, policy=policy or MEMORY_NONE)
    return render_state_files(current.kubelet, current.feature_gates, cpu_state, memory_state)


#: A meminfo problem as the node collector records it: ``/sys/.../node1/meminfo: ...`` or, for many
#: NUMA nodes at once, ``/sys/.../node{0-3}/meminfo: ...``.
_MEMINFO_ISSUE = re.compile(r"/node(?:(\d+)|\{([\d,-]+)\})/meminfo\b")


def unknown_memory(node: Node) -> str | None:
    """Why a NUMA node's memory is unknown (the collector's issue naming its meminfo, or no node
    directories at all), for the first zone that reads 0 bytes for that reason; None when every
    zone's memory was read (a memoryless NUMA node really has 0)."""
    unread: dict[int, str] = {}
    for issue in node.issues:
        if issue.source != "numa":
            continue
        for m in _MEMINFO_ISSUE.finditer(issue.message):
            for zone in CPUSet.parse(m.group(2)) if m.group(2) else (int(m.group(1)),):
                unread.setdefault(zone, issue.message)
        if issue.message.startswith("no sys/devices/system/node"):
            unread.update({z.id: issue.message for z in node.numa if z.id not in unread})
    return next((unread[z.id] for z in node.numa if z.memory_total == 0 and z.id in unread), None)


def _needs_memory(node: Node, settings: ModelSettings) -> None:
    """The Static memory manager divides each NUMA node's memory; predicted with an unread meminfo as
    0 bytes, its answer would be made up, so the node is not predicted, naming the file."""
    why = unknown_memory(node) if settings.memory_manager_policy == MEMORY_STATIC else None
    if why is not None:
        raise Unpredictable(f"the Static memory manager needs every NUMA node's memory, and one is unknown: {why}")


def written_state_files(node: Node) -> StateFiles | None:
    """The checkpoint files ``node``'s kubelet wrote under its settings, as its minor writes them
    (``state_files_of`` with no change planned); None where they cannot be reconstructed (today's
    settings refused)."""
    try:
        plan = plan_for(node, {})
        reader = plan.kubelet.profile.state_reader(plan.current.get("featureGates"))
        return state_files_of(plan, machine_of(node), checkpoints_of(node, reader))
    except InputError:  # the settings or the machine refused (ConfigRejected included)
        return None


def model_for(
    plan: NodePlan, mode: ModelMode = "drain", files: StateFiles | None = None, *, moved: Collection[Manager] = ()
) -> NodeModel:
    """The kubelet model of the planned node. ``restart``: the kubelet restarts over today's state
    files, restored as the planned minor restores them, then re-admits the running pods
    (``NodeSimulator.restart``): ``files`` when the node's own bytes are at hand (the sandbox's
    kubelets), else the files ``state_files_of`` renders, where a file the snapshot could not read, or
    one the kubelet refuses to load, keeps its recorded error. ``running``: today's allocations held as
    they are (a recorded state-file error still stops it), to admit one more pod. ``drain`` starts
    with no pods, as after the drain and the removal of the state files the change spoils; a state file
    the kubelet cannot restore that the change leaves in place still stops it, as in a restart.
    ``moved`` names the managers whose file was moved aside before the start (that manager starts
    fresh; both named: the kubelet's start from no state at all)."""
    node = plan.node
    machine = machine_of(node)
    settings = settings_of(plan, machine)
    _needs_memory(node, settings)
    if mode == "running":  # today's kubelet reads today's files
        reader = plan.kubelet.profile.state_reader(plan.current.get("featureGates"))
    else:  # the kubelet that starts is the planned one
        reader = plan.planned_kubelet.state_reader(plan.planned.get("featureGates"))
    if mode == "drain":  # a drain evicts pods; a checkpoint it cannot restore stays unless the change moves it
        spoiled = plan.spoiled_checkpoints()
        kept = tuple(
            c
            for c in checkpoints_of(node, reader)
            if (c.error is not None or c.unknown is not None)
            and c.manager not in moved
            and c.path.rsplit("/", 1)[-1] not in spoiled
        )
        return NodeModel(node.name, machine, settings, (), kept)
    allocations = tuple(
        dataclasses.replace(a, cpus="" if "cpu" in moved else a.cpus, memory=() if "memory" in moved else a.memory)
        for a in existing_allocations(node)
    )
    checkpoints = tuple(c for c in checkpoints_of(node, reader) if c.manager not in moved)
    devices = tuple(dataclasses.replace(a, cpus="", memory=()) for a in allocations if a.devices)
    if mode == "restart" and files is not None:
        return NodeModel(node.name, machine, settings, devices, (), files)
    files = state_files_of(plan, machine, checkpoints) if mode == "restart" else None
    if files is None:  # running, or today's kubelet cannot be reconstructed: what it holds, as recorded
        return NodeModel(node.name, machine, settings, allocations, checkpoints)
    if moved:
        files = dataclasses.replace(
            files,
            cpu_manager_state=None if "cpu" in moved else files.cpu_manager_state,
            memory_manager_state=None if "memory" in moved else files.memory_manager_state,
        )
    refused = tuple(c for c in checkpoints if c.error is not None or c.unknown is not None)
    return NodeModel(node.name, machine, settings, devices, refused, files)


def node_model(
    node: Node, target: Mapping[str, Any], mode: ModelMode = "drain", files: StateFiles | None = None
) -> NodeModel:
    return model_for(plan_for(node, target), mode, files)


def replay_order(pods: Iterable[Pod]) -> list[Pod]:
    """The node's active pods in the order the kubelet's first batch delivers them (creation time)."""
    return sorted((p for p in pods if p.phase in ACTIVE_PHASES), key=lambda p: (p.created, p.namespace, p.name))


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
