"""The memory manager's state: per NUMA node, each resource's bytes and the group of nodes it is used
with, and the blocks a container holds. The Static policy keeps it; the checkpoint files store it
(``kubelet.checkpoints``; the file's own form of a table is ``parse.state_files.CheckpointMemoryTable``).

Ports pkg/kubelet/cm/memorymanager/state/state.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tmnb.parse.state_files import CheckpointMemoryTable

MEMORY = "memory"


def is_memory_resource(name: str) -> bool:
    return name == MEMORY or name.startswith("hugepages-")


@dataclass
class ModelMemoryTable:
    """One NUMA node's bytes of one resource as the Static policy tracks them (the kubelet's
    ``state.MemoryTable``; the checkpoint file's form is ``parse.state_files.CheckpointMemoryTable``)."""

    total: int
    system_reserved: int
    allocatable: int
    reserved: int = 0
    free: int = field(default=-1)

    def __post_init__(self) -> None:
        if self.free < 0:
            self.free = self.allocatable - self.reserved


@dataclass
class NUMANodeState:
    memory: dict[str, ModelMemoryTable]
    cells: list[int]
    assignments: int = 0


@dataclass(frozen=True)
class ModelMemoryBlock:
    """Bytes of one resource a container holds on a set of NUMA nodes (the kubelet's ``state.Block``;
    the snapshot's record of it is ``snapshot.MemoryBlock``)."""

    numa: tuple[int, ...]
    size: int
    type: str


@dataclass(frozen=True)
class MachineNode:
    """One NUMA node of a stored machine state (``state.NUMANodeState``); None fields are Go nils."""

    assignments: int
    memory: Mapping[str, CheckpointMemoryTable | None] | None
    cells: tuple[int, ...] | None


#: The table of a resource a NUMA node does not have: no bytes of it.
NO_MEMORY = ModelMemoryTable(0, 0, 0)
