"""Snapshot records as the kubelet model's inputs (hardware, settings, allocations, pods).

The what-if replay, the sample generator, the sandbox's kubelets and the rollout's verification
all build their ``NodeSimulator`` from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from tmnb.kubelet.checkpoint import Checkpoint
from tmnb.kubelet.cpu_topology import CPUInfo
from tmnb.kubelet.devices import Device as ModelDevice
from tmnb.kubelet.memory_static import ModelMemoryBlock
from tmnb.kubelet.node import ExistingAllocation, Machine, ModelSettings, NodeModel, NUMANode
from tmnb.kubelet.pod import Container as ModelContainer
from tmnb.kubelet.pod import Pod as ModelPod
from tmnb.kubelet.startup import start_settings
from tmnb.parse.quantity import quantity
from tmnb.replay.plan import NodePlan, plan_for
from tmnb.snapshot import Container, Node, Pod

Mode = Literal["drain", "restart"]


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


def settings_of(plan: NodePlan) -> ModelSettings:
    """The planned settings through the kubelet's own start-up steps, so a configuration it would
    refuse raises ``ConfigRejected`` in its words before any pod is predicted."""
    return start_settings(plan.planned, machine_of(plan.node), kubelet=plan.planned_kubelet)


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


def model_for(plan: NodePlan, mode: Mode = "drain") -> NodeModel:
    """The kubelet model of the planned node; ``restart`` keeps today's state files and allocations
    (a checkpoint the kubelet cannot restore under the planned settings stops it), ``drain`` starts
    from none, as after the drain and state-file removal."""
    node = plan.node
    if mode == "restart":
        allocations, checkpoints = existing_allocations(node), checkpoints_of(node)
        return NodeModel(node.name, machine_of(node), settings_of(plan), allocations, checkpoints)
    return NodeModel(node.name, machine_of(node), settings_of(plan))


def node_model(node: Node, target: Mapping[str, Any], mode: Mode = "drain") -> NodeModel:
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
