"""A faithful model of Topology Manager admission in each supported kubelet minor (``profiles``),
ported from the kubelet's ``pkg/kubelet/cm`` (topologymanager, cpumanager, memorymanager, devicemanager).

Entry points: :class:`NodeSimulator` (admit pods on a modelled node),
:func:`new_topology_manager` (start-up checks), :data:`POLICIES` / :func:`policy_for` (one
:class:`TopologyPolicy` type per policy, each with its hint merge),
the option parsers in :mod:`tmnb.kubelet.options`, and the conformance runner
``python -m tmnb.kubelet.conformance``. Free of pandas, notebooks and network access.
"""

from tmnb.kubelet.cpumanager.topology import CPUInfo, CPUTopology
from tmnb.kubelet.devicemanager.topology_hints import Device
from tmnb.kubelet.memorymanager.state import ModelMemoryBlock
from tmnb.kubelet.node import (
    ContainerResult,
    ExistingAllocation,
    Machine,
    ModelSettings,
    NodeModel,
    NodeSimulator,
    NUMANode,
    PodResult,
    reserved_cpu_count,
)
from tmnb.kubelet.options import (
    CPUManagerOptions,
    TopologyManagerOptions,
    parse_cpu_manager_options,
    parse_topology_manager_options,
)
from tmnb.kubelet.pod import Container, Pod
from tmnb.kubelet.topologymanager.hints import TopologyHint
from tmnb.kubelet.topologymanager.policy import POLICIES, TopologyPolicy, policy_for
from tmnb.kubelet.topologymanager.topology_manager import new_topology_manager

__all__ = [
    "POLICIES",
    "CPUInfo",
    "CPUManagerOptions",
    "CPUTopology",
    "Container",
    "ContainerResult",
    "Device",
    "ExistingAllocation",
    "Machine",
    "ModelMemoryBlock",
    "ModelSettings",
    "NUMANode",
    "NodeModel",
    "NodeSimulator",
    "Pod",
    "PodResult",
    "TopologyHint",
    "TopologyManagerOptions",
    "TopologyPolicy",
    "new_topology_manager",
    "parse_cpu_manager_options",
    "parse_topology_manager_options",
    "policy_for",
    "reserved_cpu_count",
]
