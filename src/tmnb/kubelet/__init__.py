"""A faithful model of Topology Manager admission in each supported kubelet minor (``profiles``),
laid out as the kubelet's pkg/kubelet/cm, with imports pointing downward only:

- ``topologymanager/`` at the bottom: NUMA masks, hints, the merge, one type per policy
  (``POLICIES``), one class per scope (``SCOPES``) and ``NewManager``;
- ``cpumanager/``, ``memorymanager/`` and ``devicemanager/`` above it: the hint providers;
- ``checkpoints/`` above them: their state files as each minor restores and writes them;
- on top, the node simulator (``node``: the container manager creating, starting and admitting
  through the managers) and ``startup/`` (the configuration decoded, validated and turned into the
  managers' inputs; ``startup.checks`` lists every check as a step for the settings validator).

At this level, shared by all: ``profiles`` (what each minor knows), ``options``, ``gates``, ``pod``,
``names``, ``errors``, ``gostr``, ``go_quantity`` and ``memo``. Each module names the kubelet files
it ports and the minors it models; the paths are those of the 1.33–1.36 trees (no 1.37 tree was
readable: its facts come from its PRs, see docs/kubelet-minors.md).

Entry points: :class:`NodeSimulator` (admit pods on a modelled node), :func:`new_topology_manager`
(start-up checks), :data:`POLICIES` / :func:`policy_for` (one :class:`TopologyPolicy` type per
policy, each with its hint merge) and the option parsers in :mod:`tmnb.kubelet.options`. The
conformance runner is the room above, ``tmnb.conformance``; ``python -m tmnb.kubelet.conformance``
stays its published command. Free of pandas, notebooks and network access.
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
