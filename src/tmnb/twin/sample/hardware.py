"""Step 2, hardware: CPU rows with Linux numbering, NUMA zones as sysfs shows them, devices, capacity."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from tmnb.cpuset import CPUSet
from tmnb.snapshot import Cpu, Device, HugePages, NumaZone
from tmnb.twin.sample.catalogue import SHAPES, DeviceGroup, Shape
from tmnb.twin.sample.common import GIB, bytes_text, new_uid, pages_text, random_stream


@dataclass(frozen=True)
class Zone:
    id: int
    socket: int
    local: int  # index among the socket's CPU-bearing NUMA nodes; -1 for memory-less nodes


@cache
def shape_cpus(key: str) -> tuple[Cpu, ...]:
    """Linux enumeration: thread 0 of every core first, then thread 1, so cpu i and i + cores are siblings.
    Built once per shape and shared by its nodes (the rows are immutable)."""
    shape = SHAPES[key]
    total_cores = shape.sockets * shape.cores_per_socket
    per_numa = shape.cores_per_socket // shape.numa_per_socket
    rows = []
    for thread in range(shape.threads_per_core):
        for core in range(total_cores):
            socket, within = divmod(core, shape.cores_per_socket)
            numa = socket * shape.numa_per_socket + within // per_numa
            rows.append(Cpu(cpu=thread * total_cores + core, core=core, socket=socket, numa=numa))
    return tuple(rows)


@cache
def shape_zones(key: str) -> tuple[Zone, ...]:
    """CPU-bearing NUMA nodes (socket-major), then the memory-less ones of each socket."""
    shape = SHAPES[key]
    zones = [
        Zone(s * shape.numa_per_socket + i, s, i) for s in range(shape.sockets) for i in range(shape.numa_per_socket)
    ]
    first = len(zones)
    for s in range(shape.sockets):
        for k in range(shape.memoryless_per_socket):
            zones.append(Zone(first + s * shape.memoryless_per_socket + k, s, -1))
    return tuple(zones)


@cache
def _shape_zone_rows(key: str) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Per zone: its sysfs cpulist and distance row."""
    shape = SHAPES[key]
    zones = shape_zones(key)
    cpus = shape_cpus(key)
    return tuple(
        (str(CPUSet(c.cpu for c in cpus if c.numa == z.id)), tuple(_distance(shape, z, other) for other in zones))
        for z in zones
    )


def _distance(shape: Shape, a: Zone, b: Zone) -> int:
    if a.id == b.id:
        return 10
    if a.local < 0 or b.local < 0:
        return 80 if a.socket == b.socket else 120
    if a.socket != b.socket:
        return shape.distance_remote
    return shape.distance_pair if a.local // 2 == b.local // 2 else shape.distance_socket


def zone_memory(shape: Shape, zone: Zone) -> int:
    """MemTotal of the node's meminfo: installed DIMMs less firmware/kernel reservations (NUMA 0 most)."""
    if zone.local < 0:
        return 0
    installed_kib = shape.gib_per_numa * GIB // 1024
    kib = installed_kib * 98 // 100 - (180 * 1024 if zone.id == 0 else 0)
    return kib * 1024


def shape_devices(shape: Shape, node: str, seed: int) -> list[Device]:
    rng = random_stream(seed, "devices", node)
    devices = []
    for group in shape.devices:
        for i in range(group.count):
            devices.append(Device(resource=group.resource, id=_device_id(group, i, rng), numa=[group.numa]))
    return devices


def _device_id(group: DeviceGroup, index: int, rng: random.Random) -> str:
    """NVIDIA GPU UUIDs; SR-IOV VFs by PCI address (8 functions per device after the PF's slot)."""
    if group.kind == "gpu":
        return "GPU-" + new_uid(rng)
    return f"0000:{group.pci_bus:02x}:{1 + index // 8:02x}.{index % 8}"


def node_capacity(
    shape: Shape, cpus: Sequence[Cpu], zones: Sequence[Zone], devices: Sequence[Device]
) -> dict[str, str]:
    hugepages = shape.hugepages_1g_per_numa * sum(1 for z in zones if z.local >= 0)
    capacity = {
        "cpu": str(len(cpus)),
        "memory": bytes_text(sum(zone_memory(shape, z) for z in zones)),
        "ephemeral-storage": bytes_text(shape.disk_gib * GIB),
        "hugepages-1Gi": pages_text(hugepages, "1Gi"),
        "hugepages-2Mi": "0",
        "pods": "110",
    }
    for resource in sorted({d.resource for d in devices}):
        capacity[resource] = str(sum(1 for d in devices if d.resource == resource))
    return capacity


def numa_zones(shape: Shape, used: Mapping[tuple[int, str], int]) -> list[NumaZone]:
    """sysfs view of the NUMA nodes; ``used`` (bytes per zone and memory type) gives the free figures."""
    out = []
    ids = [z.id for z in shape_zones(shape.key)]
    for z, (cpulist, distances) in zip(shape_zones(shape.key), _shape_zone_rows(shape.key), strict=True):
        memory = zone_memory(shape, z)
        pages = shape.hugepages_1g_per_numa if z.local >= 0 else 0
        spent = pages * GIB + memory // 25 + used.get((z.id, "memory"), 0)  # 4%: kernel, page cache, daemons
        free_pages = pages - used.get((z.id, "hugepages-1Gi"), 0) // GIB
        out.append(
            NumaZone(
                id=z.id,
                cpus=cpulist,
                memory_total=memory,
                memory_free=max(0, memory - spent) // 4096 * 4096 if memory else None,
                hugepages=[HugePages(size="1Gi", total=pages, free=free_pages)] if pages else [],
                distances=dict(zip(ids, distances, strict=True)),
            )
        )
    return out
