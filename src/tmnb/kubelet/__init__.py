"""A faithful model of kubelet 1.36 Topology Manager admission (facts/kubelet-admission.md).

Entry points: :func:`simulate` / :class:`NodeSimulator` (admit pods on a modelled node),
:func:`new_topology_manager` and :class:`TopologyPolicy` (start-up checks and the hint merge),
the option parsers in :mod:`tmnb.kubelet.options`, and the conformance runner
``python -m tmnb.kubelet.conformance``. Free of pandas, notebooks and network access.
"""

from tmnb.kubelet.cpu_topology import CPUInfo, CPUTopology
from tmnb.kubelet.devices import Device
from tmnb.kubelet.hints import TopologyHint
from tmnb.kubelet.memory_static import MemoryBlock
from tmnb.kubelet.node import (
    ContainerResult,
    ExistingAllocation,
    KubeletSettings,
    Machine,
    NodeModel,
    NodeSimulator,
    NUMANode,
    PodResult,
    reserved_cpu_count,
    simulate,
)
from tmnb.kubelet.options import (
    CPUManagerOptions,
    TopologyManagerOptions,
    option_maturity,
    parse_cpu_manager_options,
    parse_topology_manager_options,
)
from tmnb.kubelet.pod import Container, Pod
from tmnb.kubelet.policy import TopologyPolicy, new_topology_manager

__all__ = [
    "CPUInfo",
    "CPUManagerOptions",
    "CPUTopology",
    "Container",
    "ContainerResult",
    "Device",
    "ExistingAllocation",
    "KubeletSettings",
    "Machine",
    "MemoryBlock",
    "NUMANode",
    "NodeModel",
    "NodeSimulator",
    "Pod",
    "PodResult",
    "TopologyHint",
    "TopologyManagerOptions",
    "TopologyPolicy",
    "new_topology_manager",
    "option_maturity",
    "parse_cpu_manager_options",
    "parse_topology_manager_options",
    "reserved_cpu_count",
    "simulate",
]
