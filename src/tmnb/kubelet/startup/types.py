"""What every start-up check reads of the machine (``Hardware``) and returns (``Refusal``).

No kubelet file of its own: the kubelet refuses with errors; a ``Refusal`` carries one with the code
and field the settings validator reports it under, and ``Hardware`` is what cadvisor tells the
kubelet of the machine, as far as tmnb knows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tmnb.kubelet.cpumanager.topology import CPUTopology
from tmnb.kubelet.go_quantity import GoQuantity
from tmnb.kubelet.node import Machine
from tmnb.kubelet.startup.allocatable import capacity


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
