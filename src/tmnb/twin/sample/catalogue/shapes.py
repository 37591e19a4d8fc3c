"""Hardware shapes: sockets, cores, SMT, NUMA layout and distances, memory, devices per PCIe root."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class DeviceGroup:
    """Devices of one resource behind one PCIe root port, so on one NUMA node."""

    resource: str
    numa: int
    count: int
    pci_bus: int
    kind: str  # "gpu" (UUID ids) or "vf" (SR-IOV virtual functions, PCI address ids)


@dataclass(frozen=True)
class Shape:
    key: str
    vendor: str
    model: str
    arch: str
    instance_type: str
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    numa_per_socket: int
    gib_per_numa: int
    distance_pair: int  # NUMA nodes in the same half of a socket (AMD NPS4 quadrant pairs)
    distance_socket: int  # other NUMA node of the same socket
    distance_remote: int  # NUMA node of another socket
    kernel: str
    os_image: str
    hugepages_1g_per_numa: int = 0
    memoryless_per_socket: int = 0  # CPU-less, memory-less NUMA nodes (GB200 GPU partitions)
    devices: tuple[DeviceGroup, ...] = ()
    disk_gib: int = 894
    labels: Mapping[str, str] = field(default_factory=dict)


_UBUNTU = ("6.8.0-85-generic", "Ubuntu 24.04.3 LTS")
GPU = "nvidia.com/gpu"
E810_VF = "intel.com/sriov_netdevice"
CX7_VF = "nvidia.com/sriov_rdma_vf"

SHAPES: dict[str, Shape] = {
    s.key: s
    for s in (
        Shape(
            "icx-2s", "GenuineIntel", "Intel(R) Xeon(R) Gold 6346 CPU @ 3.10GHz", "amd64", "r650.gold6346.512g",
            sockets=2, cores_per_socket=16, threads_per_core=2, numa_per_socket=1, gib_per_numa=256,
            distance_pair=21, distance_socket=21, distance_remote=21, kernel=_UBUNTU[0], os_image=_UBUNTU[1],
            labels={"feature.node.kubernetes.io/cpu-cpuid.AVX512F": "true"},
        ),
        Shape(
            "epyc-nps4", "AuthenticAMD", "AMD EPYC 9554P 64-Core Processor", "amd64", "r6625.epyc9554p.384g",
            sockets=1, cores_per_socket=64, threads_per_core=2, numa_per_socket=4, gib_per_numa=96,
            distance_pair=11, distance_socket=12, distance_remote=32, kernel=_UBUNTU[0], os_image=_UBUNTU[1],
            hugepages_1g_per_numa=16,
            devices=(DeviceGroup(E810_VF, 1, 16, 0x41, "vf"), DeviceGroup(E810_VF, 3, 16, 0xC1, "vf")),
            labels={
                "feature.node.kubernetes.io/cpu-cpuid.AVX512F": "true",
                "feature.node.kubernetes.io/network-sriov.capable": "true",
            },
        ),
        Shape(
            "h100-8x", "GenuineIntel", "Intel(R) Xeon(R) Platinum 8480+", "amd64", "xe9680.h100-80g.2t",
            sockets=2, cores_per_socket=56, threads_per_core=2, numa_per_socket=1, gib_per_numa=1024,
            distance_pair=21, distance_socket=21, distance_remote=21, kernel=_UBUNTU[0], os_image=_UBUNTU[1],
            devices=(
                DeviceGroup(GPU, 0, 4, 0x18, "gpu"),
                DeviceGroup(GPU, 1, 4, 0x9A, "gpu"),
                DeviceGroup(CX7_VF, 0, 8, 0x1A, "vf"),
                DeviceGroup(CX7_VF, 1, 8, 0x9C, "vf"),
            ),
            disk_gib=3576,
            labels={
                "feature.node.kubernetes.io/cpu-cpuid.AVX512F": "true",
                "feature.node.kubernetes.io/pci-10de.present": "true",
                "feature.node.kubernetes.io/network-sriov.capable": "true",
                "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                "nvidia.com/gpu.count": "8",
            },
        ),
        Shape(
            "epyc-2s-nps4", "AuthenticAMD", "AMD EPYC 9554 64-Core Processor", "amd64", "r7625.epyc9554.1536g",
            sockets=2, cores_per_socket=64, threads_per_core=2, numa_per_socket=4, gib_per_numa=192,
            distance_pair=11, distance_socket=12, distance_remote=32, kernel=_UBUNTU[0], os_image=_UBUNTU[1],
            labels={"feature.node.kubernetes.io/cpu-cpuid.AVX512F": "true"},
        ),
        Shape(
            "spr-4s-snc4", "GenuineIntel", "Intel(R) Xeon(R) Platinum 8490H", "amd64", "sd-flex.8490h.2t",
            sockets=4, cores_per_socket=60, threads_per_core=2, numa_per_socket=4, gib_per_numa=128,
            distance_pair=12, distance_socket=12, distance_remote=21, kernel=_UBUNTU[0], os_image=_UBUNTU[1],
            labels={"feature.node.kubernetes.io/cpu-cpuid.AVX512F": "true"},
        ),
        Shape(
            "gb200", "ARM", "Neoverse-V2", "arm64", "gb200-nvl72.compute-tray",
            sockets=2, cores_per_socket=72, threads_per_core=1, numa_per_socket=1, gib_per_numa=480,
            distance_pair=40, distance_socket=40, distance_remote=40,
            kernel="6.8.0-1036-nvidia-64k", os_image="Ubuntu 24.04.3 LTS", memoryless_per_socket=16,
            devices=(
                DeviceGroup(GPU, 0, 2, 0x08, "gpu"),
                DeviceGroup(GPU, 1, 2, 0x18, "gpu"),
                DeviceGroup(CX7_VF, 0, 4, 0x03, "vf"),
                DeviceGroup(CX7_VF, 1, 4, 0x13, "vf"),
            ),
            disk_gib=3576,
            labels={
                "feature.node.kubernetes.io/pci-10de.present": "true",
                "feature.node.kubernetes.io/network-sriov.capable": "true",
                "nvidia.com/gpu.product": "NVIDIA-GB200",
                "nvidia.com/gpu.count": "4",
            },
        ),
    )
}  # fmt: skip
