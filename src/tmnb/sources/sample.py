"""The embedded sample fleet: a deterministic generator of a realistic, internally consistent cluster.

``generate_fleet()`` builds the curated 14-node sample that ships as package data and is the default
source of every notebook (``load_sample()``); ``generate_fleet(n)`` scales the same hardware shapes,
pools, kubelet profiles and workloads to ``n`` nodes for benchmarks. Nothing is hand-typed output:
the tables below describe hardware, kubelet configuration layers and workloads, and every CPU row,
setting, pod, allocation and event is derived from them in these steps:

1. node specs: the curated table, or the pools apportioned by weight;
2. hardware: CPUs (real SMT numbering), NUMA zones with sysfs-style distances, devices;
3. kubelet configuration: the profile's layers written as the texts a node holds (``--config``
   YAML, ``--config-dir`` drop-ins, the command line; /configz for a node without an agent) and
   read back by ``tmnb.parse`` and ``tmnb.settings.effective_settings``, the code that reads real
   nodes, which gives every setting its provenance; the snapshot node (without allocations);
4. workloads expanded into pods, each with a creation time;
5. scheduling (fit by requests, least-allocated score, topology-unaware like the real scheduler)
   and admission by the node's resource managers, in creation order. Rejected controller-owned
   pods are replaced and rescheduled, which reproduces the TopologyAffinityError flapping;
6. assembly: the allocations, shared pool and free memory attached to each snapshot node. See
   docs/sample-fleet.md.

Admission and allocation (step 5) are ``tmnb.kubelet``'s node simulation, started from the snapshot
node by ``tmnb.replay.node_model`` exactly as the what-if replay starts it, so every
exclusive cpuset, memory block and rejection is the kubelet's answer.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import random
import sys
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.kubelet.node import ContainerResult, NodeSimulator, PodResult
from tmnb.kubelet.pod import Container as ModelContainer
from tmnb.kubelet.pod import Pod as ModelPod
from tmnb.kubelet.pod import compute_qos, pod_level_request, quantity
from tmnb.parse.kubelet_config import KubeletConfigDoc, parse_configz, parse_kubelet_config, parse_kubelet_dropin
from tmnb.parse.kubelet_fields import API_VERSION, FIELD_TYPES, KIND, RESOURCE_MANAGER_FIELDS
from tmnb.parse.kubelet_flags import CONFIG_FLAGS, parse_kubelet_args
from tmnb.replay import node_model
from tmnb.settings import KubeletSettings, effective_settings
from tmnb.snapshot import (
    Allocation,
    Cluster,
    Container,
    Cpu,
    Device,
    DeviceAllocation,
    DisruptionBudget,
    Event,
    HugePages,
    Issue,
    KubeletInfo,
    MemoryBlock,
    Node,
    NumaZone,
    OwnerRef,
    Pod,
    Setting,
    Snapshot,
    SnapshotSource,
    Versions,
    load,
    save,
)
from tmnb.snapshot.model import SettingSource
from tmnb.versions import KubeVersion

DATA_FILE = Path(__file__).with_name("data") / "sample-fleet.json"
POOL_LABEL = "tmnb.dev/pool"
SERVER_VERSION = "v1.36.2"
CAPTURED_AT = datetime(2026, 7, 21, 9, 30, tzinfo=UTC)
#: Rejections kept per replica: a real controller keeps replacing the pod for as long as it fails.
MAX_REJECTIONS = 3
#: The apiserver's default event TTL: older events are gone from ``kubectl get events``.
EVENT_TTL = timedelta(hours=1)
GIB = 1 << 30
MIB = 1 << 20
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the apiserver's generateName alphabet


# ---------------------------------------------------------------------------------------------
# Hardware shapes
# ---------------------------------------------------------------------------------------------
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
_GPU = "nvidia.com/gpu"
_E810_VF = "intel.com/sriov_netdevice"
_CX7_VF = "nvidia.com/sriov_rdma_vf"

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
            devices=(DeviceGroup(_E810_VF, 1, 16, 0x41, "vf"), DeviceGroup(_E810_VF, 3, 16, 0xC1, "vf")),
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
                DeviceGroup(_GPU, 0, 4, 0x18, "gpu"),
                DeviceGroup(_GPU, 1, 4, 0x9A, "gpu"),
                DeviceGroup(_CX7_VF, 0, 8, 0x1A, "vf"),
                DeviceGroup(_CX7_VF, 1, 8, 0x9C, "vf"),
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
                DeviceGroup(_GPU, 0, 2, 0x08, "gpu"),
                DeviceGroup(_GPU, 1, 2, 0x18, "gpu"),
                DeviceGroup(_CX7_VF, 0, 4, 0x03, "vf"),
                DeviceGroup(_CX7_VF, 1, 4, 0x13, "vf"),
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


# ---------------------------------------------------------------------------------------------
# Kubelet configuration profiles: layers, lowest first. Effective values are computed from them.
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Profile:
    """How a pool's kubelets are configured, as the layers an SRE would find on the node.

    ``reserve_cores`` (core ids, all their threads) becomes ``reservedSystemCPUs`` in the file, and
    the layer that turns the memory manager ``Static`` also gets the ``reservedMemory`` the kubelet
    demands (summing to kube + system reserved + the hard-eviction threshold)."""

    key: str
    file: Mapping[str, Any]
    dropins: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    flags: Mapping[str, Any] = field(default_factory=dict)
    reserve_cores: tuple[int, ...] = ()
    configz_only: bool = False


_EVICTION = {
    "memory.available": "100Mi",
    "nodefs.available": "10%",
    "imagefs.available": "15%",
    "nodefs.inodesFree": "5%",
}
_BASE = {
    "kubeReserved": {"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "1Gi"},
    "systemReserved": {"cpu": "500m", "memory": "1Gi"},
    "evictionHard": _EVICTION,
}
_TELCO_BASE = {
    "kubeReserved": {"cpu": "1", "memory": "2Gi", "ephemeral-storage": "1Gi"},
    "systemReserved": {"cpu": "1", "memory": "2Gi"},
    "evictionHard": {**_EVICTION, "memory.available": "500Mi"},
    "featureGates": {"KubeletPodResourcesGet": True},
}
_GPU_BASE = {
    "kubeReserved": {"cpu": "1", "memory": "4Gi", "ephemeral-storage": "10Gi"},
    "systemReserved": {"cpu": "1", "memory": "4Gi"},
    "evictionHard": {**_EVICTION, "memory.available": "1Gi"},
}
_STATIC = {"cpuManagerPolicy": "static"}

PROFILES: dict[str, Profile] = {
    p.key: p
    for p in (
        Profile("defaults", _BASE),
        Profile("best-effort-static", {**_BASE, **_STATIC, "topologyManagerPolicy": "best-effort"}),
        Profile(
            "restricted-full-pcpus",
            {**_BASE, **_STATIC, "topologyManagerPolicy": "restricted",
             "cpuManagerPolicyOptions": {"full-pcpus-only": "true"}},
            reserve_cores=(0,),
        ),
        Profile(
            "single-numa-flag-override",
            {**_BASE, **_STATIC, "topologyManagerPolicy": "restricted", "memoryManagerPolicy": "Static"},
            flags={"topologyManagerPolicy": "single-numa-node"},
            reserve_cores=(0,),
        ),
        Profile(
            "single-numa-pod-dropin",
            {**_BASE, **_STATIC, "topologyManagerPolicy": "best-effort"},
            dropins=(
                ("50-numa-alignment.conf", {
                    "topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod",
                    "memoryManagerPolicy": "Static", "cpuManagerPolicyOptions": {"strict-cpu-reservation": "true"},
                }),
            ),
            reserve_cores=(0,),
        ),
        Profile(
            "telco-single-numa-pod",
            {**_TELCO_BASE, **_STATIC, "topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod",
             "cpuManagerPolicyOptions": {"full-pcpus-only": "true"}, "memoryManagerPolicy": "Static"},
            reserve_cores=(0, 1),
        ),
        Profile(
            "telco-restricted-closest",
            {**_TELCO_BASE, **_STATIC, "topologyManagerPolicy": "restricted", "topologyManagerScope": "pod",
             "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"}, "memoryManagerPolicy": "Static"},
            reserve_cores=(0, 1),
        ),
        Profile(
            "telco-best-effort-configz",
            {**_TELCO_BASE, **_STATIC, "topologyManagerPolicy": "best-effort",
             "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"}},
            reserve_cores=(0, 1),
            configz_only=True,
        ),
        Profile(
            "gpu-best-effort-pod",
            {**_GPU_BASE, **_STATIC, "topologyManagerPolicy": "best-effort", "topologyManagerScope": "pod"},
            reserve_cores=(0, 56),
        ),
        Profile(
            "gpu-single-numa",
            {**_GPU_BASE, **_STATIC, "topologyManagerPolicy": "single-numa-node"},
            reserve_cores=(0, 56),
        ),
        Profile(
            "bigmem-restricted",
            {**_BASE, **_STATIC, "topologyManagerPolicy": "restricted", "memoryManagerPolicy": "Static"},
            reserve_cores=(0, 64),
        ),
        Profile(
            "numa16-restricted",
            {**_BASE, **_STATIC, "topologyManagerPolicy": "restricted",
             "topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "16"}},
            reserve_cores=(0, 60, 120, 180),
        ),
        Profile("gb200-none", {**_GPU_BASE, **_STATIC}, reserve_cores=(0, 72)),
    )
}  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Pools and the curated node table
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Pool:
    name: str
    shape: str
    prefix: str
    weight: int  # share of a scaled fleet's nodes; 0 = a rare box, exactly one per scaled fleet
    profiles: tuple[str, ...]  # cycled over the pool's nodes
    kubeadm: bool
    subnet: int  # second octet of the node IPs
    zone: str


POOLS: dict[str, Pool] = {
    p.name: p
    for p in (
        Pool("general", "icx-2s", "gen-icx", 34, ("defaults", "defaults", "best-effort-static"), True, 20, "dc1-a"),
        Pool("latency", "icx-2s", "lat-icx", 18,
             ("restricted-full-pcpus", "single-numa-flag-override", "single-numa-pod-dropin"), True, 21, "dc1-a"),
        Pool("telco", "epyc-nps4", "tel-epyc", 15,
             ("telco-single-numa-pod", "telco-restricted-closest", "telco-best-effort-configz"), True, 22, "dc1-b"),
        Pool("gpu", "h100-8x", "gpu-h100", 15, ("gpu-single-numa", "gpu-best-effort-pod"), False, 23, "dc1-c"),
        Pool("bigmem", "epyc-2s-nps4", "big-epyc", 6, ("bigmem-restricted",), True, 24, "dc1-b"),
        Pool("numa16", "spr-4s-snc4", "spr-snc4", 0, ("numa16-restricted",), True, 25, "dc1-b"),
        Pool("gb200", "gb200", "gb200", 8, ("gb200-none",), False, 26, "dc1-c"),
    )
}  # fmt: skip


@dataclass(frozen=True)
class NodeSpec:
    name: str
    pool: str
    profile: str
    index: int  # position in its pool (IP address, rack)
    kubelet: str = SERVER_VERSION
    runtime: str = "containerd://2.1.4"
    kernel: str | None = None  # None: the shape's
    os_image: str | None = None
    cordoned: bool = False


def _curated_specs() -> list[NodeSpec]:
    """14 nodes: every pool, every profile once; one old kubelet, one patch behind, one cordoned."""
    specs = []
    for pool in POOLS.values():
        for i in range(len(pool.profiles)):
            specs.append(NodeSpec(f"{pool.prefix}-{i + 1:02d}", pool.name, pool.profiles[i], i + 1))
    overrides = {
        "gen-icx-02": {"kubelet": "v1.36.1", "cordoned": True},
        "gen-icx-03": {
            "kubelet": "v1.34.5",
            "runtime": "containerd://1.7.27",
            "kernel": "5.15.0-144-generic",
            "os_image": "Ubuntu 22.04.5 LTS",
        },
    }
    return [NodeSpec(**{**s.__dict__, **overrides.get(s.name, {})}) for s in specs]


def _apportion(total: int) -> dict[str, int]:
    """One node per pool, then the rest split by weight (largest remainder); rare pools keep their one.

    The 16-NUMA box is rare on purpose: besides being rare in real fleets, every Guaranteed pod on
    it makes the kubelet (and its model) walk all 2^16 - 1 NUMA masks."""
    weights = {p.name: p.weight for p in POOLS.values() if p.weight}
    spare = total - len(POOLS)
    scale = sum(weights.values())
    counts = {p.name: 1 + spare * p.weight // scale for p in POOLS.values()}
    by_remainder = sorted(weights, key=lambda n: (-(spare * weights[n] % scale), n))
    for name in by_remainder[: total - sum(counts.values())]:
        counts[name] += 1
    return counts


def _scaled_specs(total: int) -> list[NodeSpec]:
    """The same pools at scale; every 50th node runs the old kubelet, every 37th is a patch behind."""
    if total < len(POOLS):
        raise InputError(f"a scaled fleet needs at least {len(POOLS)} nodes (one per pool), got {total}", where="nodes")
    specs = []
    for name, count in _apportion(total).items():
        pool = POOLS[name]
        for i in range(count):
            n = len(specs)
            old = n % 50 == 7
            specs.append(
                NodeSpec(
                    f"{pool.prefix}-{i + 1:04d}",
                    name,
                    pool.profiles[i % len(pool.profiles)],
                    i + 1,
                    kubelet="v1.34.5" if old else "v1.36.1" if n % 37 == 5 else SERVER_VERSION,
                    runtime="containerd://1.7.27" if old else "containerd://2.1.4",
                )
            )
    return specs


# ---------------------------------------------------------------------------------------------
# Workloads
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ContainerSpec:
    name: str
    image: str
    requests: Mapping[str, str] = field(default_factory=dict)
    limits: Mapping[str, str] = field(default_factory=dict)
    sidecar: bool = False  # an init container with restartPolicy Always


def guaranteed(name: str, image: str, cpu: str, memory: str, *, sidecar: bool = False, **extra: str) -> ContainerSpec:
    """Requests equal limits; ``extra`` keys use ``_`` for ``/`` and ``.`` (see ``_resource_name``)."""
    resources = {"cpu": cpu, "memory": memory, **{_resource_name(k): v for k, v in extra.items()}}
    return ContainerSpec(name, image, resources, dict(resources), sidecar)


def _resource_name(key: str) -> str:
    return {"gpu": _GPU, "e810_vf": _E810_VF, "cx7_vf": _CX7_VF, "hugepages_1Gi": "hugepages-1Gi"}[key]


@dataclass(frozen=True)
class Workload:
    namespace: str
    name: str
    kind: str  # Deployment, StatefulSet, DaemonSet, Job (CronJob-owned when ``cronjob``)
    pools: tuple[str, ...] | None  # None: every pool
    containers: tuple[ContainerSpec, ...]
    init_containers: tuple[ContainerSpec, ...] = ()
    per_node: float = 0.0  # replicas per node of its pool
    minimum: int = 1
    age: timedelta = timedelta(days=30)
    spread: timedelta = timedelta(hours=2)
    priority_class: str | None = None
    emptydir: bool = False
    completed: bool = False  # Job pods that finished before the snapshot
    min_available: str | None = None  # PodDisruptionBudget
    cronjob: str | None = None


def _img(name: str, tag: str) -> str:
    return f"{name}:{tag}"


_DAY = timedelta(days=1)
_ALL_GPU = ("gpu", "gb200")
_RELOADER = "quay.io/prometheus-operator/prometheus-config-reloader"

WORKLOADS: tuple[Workload, ...] = (
    # -- node agents --------------------------------------------------------------------------
    Workload("kube-system", "kube-proxy", "DaemonSet", None,
             (ContainerSpec("kube-proxy", _img("registry.k8s.io/kube-proxy", SERVER_VERSION)),),
             age=60 * _DAY, priority_class="system-node-critical"),
    Workload("kube-system", "cilium", "DaemonSet", None,
             (ContainerSpec("cilium-agent", _img("quay.io/cilium/cilium", "v1.18.2"),
                            {"cpu": "100m", "memory": "512Mi"}),),
             init_containers=(ContainerSpec("config", _img("quay.io/cilium/cilium", "v1.18.2")),
                              ContainerSpec("clean-cilium-state", _img("quay.io/cilium/cilium", "v1.18.2"))),
             age=60 * _DAY, priority_class="system-node-critical"),
    Workload("node-feature-discovery", "nfd-worker", "DaemonSet", None,
             (ContainerSpec("worker", _img("registry.k8s.io/nfd/node-feature-discovery", "v0.18.1"),
                            {"cpu": "5m", "memory": "64Mi"}, {"memory": "512Mi"}),),
             age=58 * _DAY),
    Workload("monitoring", "node-exporter", "DaemonSet", None,
             (ContainerSpec("node-exporter", _img("quay.io/prometheus/node-exporter", "v1.9.1"),
                            {"cpu": "102m", "memory": "180Mi"}, {"cpu": "250m", "memory": "180Mi"}),
              ContainerSpec("kube-rbac-proxy", _img("quay.io/brancz/kube-rbac-proxy", "v0.19.1"),
                            {"cpu": "10m", "memory": "20Mi"}, {"cpu": "20m", "memory": "40Mi"})),
             age=45 * _DAY),
    Workload("logging", "fluent-bit", "DaemonSet", None,
             (ContainerSpec("fluent-bit", _img("cr.fluentbit.io/fluent/fluent-bit", "4.0.3"),
                            {"cpu": "50m", "memory": "64Mi"}, {"memory": "256Mi"}),),
             age=40 * _DAY),
    Workload("kube-system", "nvidia-device-plugin", "DaemonSet", _ALL_GPU,
             (ContainerSpec("nvidia-device-plugin", _img("nvcr.io/nvidia/k8s-device-plugin", "v0.17.2")),),
             age=30 * _DAY, priority_class="system-node-critical"),
    Workload("kube-system", "sriov-device-plugin", "DaemonSet", ("telco", "gpu", "gb200"),
             (ContainerSpec("kube-sriovdp", _img("ghcr.io/k8snetworkplumbingwg/sriov-network-device-plugin", "v3.9.0"),
                            {"cpu": "250m", "memory": "40Mi"}, {"cpu": "1", "memory": "200Mi"}),),
             age=30 * _DAY, priority_class="system-node-critical"),
    Workload("monitoring", "dcgm-exporter", "DaemonSet", _ALL_GPU,
             (ContainerSpec("dcgm-exporter", _img("nvcr.io/nvidia/k8s/dcgm-exporter", "4.2.3-4.1.3-ubuntu22.04"),
                            {"cpu": "100m", "memory": "128Mi"}, {"memory": "512Mi"}),),
             age=30 * _DAY),
    Workload("telco-dpdk", "ptp-daemon", "DaemonSet", ("telco",),
             (guaranteed("linuxptp", _img("registry.example.com/telco/linuxptp", "4.4-2"), "2", "1Gi"),),
             age=21 * _DAY, priority_class="system-node-critical"),
    # -- general pool -------------------------------------------------------------------------
    Workload("kube-system", "coredns", "Deployment", ("general",),
             (ContainerSpec("coredns", _img("registry.k8s.io/coredns/coredns", "v1.12.1"),
                            {"cpu": "100m", "memory": "70Mi"}, {"memory": "170Mi"}),),
             per_node=0.05, minimum=2, age=60 * _DAY, priority_class="system-cluster-critical"),
    Workload("monitoring", "prometheus-k8s", "StatefulSet", ("general",),
             (ContainerSpec("prometheus", _img("quay.io/prometheus/prometheus", "v3.5.0"),
                            {"cpu": "2", "memory": "8Gi"}, {"memory": "12Gi"}),
              ContainerSpec("config-reloader", _img(_RELOADER, "v0.84.0"),
                            {"cpu": "10m", "memory": "50Mi"}, {"cpu": "10m", "memory": "50Mi"})),
             per_node=0.02, minimum=2, age=45 * _DAY),
    Workload("monitoring", "grafana", "Deployment", ("general",),
             (ContainerSpec("grafana", _img("docker.io/grafana/grafana", "12.1.0"),
                            {"cpu": "250m", "memory": "512Mi"}, {"cpu": "1", "memory": "1Gi"}),),
             age=44 * _DAY, emptydir=True),
    Workload("web", "session-cache", "Deployment", ("general",),
             (ContainerSpec("memcached", _img("docker.io/library/memcached", "1.6.39")),),
             per_node=2, age=20 * _DAY, emptydir=True),
    Workload("web", "search-indexer", "Deployment", ("general",),
             (guaranteed("indexer", _img("registry.example.com/web/search-indexer", "3.4.1"), "4", "8Gi"),),
             per_node=1, age=10 * _DAY),
    Workload("web", "api-gateway", "Deployment", ("general",),
             (ContainerSpec("envoy", _img("docker.io/envoyproxy/envoy", "v1.35.0"),
                            {"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "2Gi"}),),
             per_node=4, age=8 * _DAY),
    Workload("web", "storefront", "Deployment", ("general",),
             (ContainerSpec("storefront", _img("registry.example.com/web/storefront", "2026.07.14"),
                            {"cpu": "500m", "memory": "1Gi"}, {"cpu": "2", "memory": "2Gi"}),),
             per_node=8, age=7 * _DAY),
    Workload("web", "checkout-ui", "Deployment", ("general",),
             (ContainerSpec("checkout-ui", _img("registry.example.com/web/checkout-ui", "5.2.0"),
                            {"cpu": "250m", "memory": "512Mi"}, {"memory": "1Gi"}),),
             per_node=6, age=5 * _DAY),
    Workload("batch", "nightly-report", "Job", ("general",),
             (ContainerSpec("report", _img("registry.example.com/batch/report", "1.8.0")),),
             per_node=2, age=_DAY, spread=timedelta(minutes=30), completed=True, cronjob="nightly-report"),
    # -- latency pool -------------------------------------------------------------------------
    Workload("payments", "payments-api", "Deployment", ("latency",),
             (guaranteed("payments-api", _img("registry.example.com/payments/api", "4.12.3"), "4", "8Gi"),),
             init_containers=(guaranteed("istio-proxy", _img("docker.io/istio/proxyv2", "1.27.1"), "500m", "512Mi",
                                         sidecar=True),),
             per_node=3, age=6 * _DAY, min_available="80%"),
    Workload("payments", "ledger", "StatefulSet", ("latency",),
             (guaranteed("ledger", _img("registry.example.com/payments/ledger", "2.3.0"), "8", "32Gi"),),
             per_node=1, age=12 * _DAY),
    Workload("payments", "card-vault", "Deployment", ("latency",),
             (guaranteed("vault", _img("registry.example.com/payments/card-vault", "1.9.0"), "2", "4Gi"),),
             per_node=2, age=12 * _DAY),
    Workload("payments", "fraud-scoring", "Deployment", ("latency",),
             (ContainerSpec("scorer", _img("registry.example.com/payments/fraud-scoring", "0.9.7"),
                            {"cpu": "2", "memory": "4Gi"}, {"cpu": "4", "memory": "8Gi"}),),
             per_node=4, age=3 * _DAY),
    Workload("payments", "notifications", "Deployment", ("latency",),
             (ContainerSpec("notifier", _img("registry.example.com/payments/notifications", "2.0.4"),
                            {"cpu": "200m", "memory": "256Mi"}, {"memory": "512Mi"}),),
             per_node=4, age=3 * _DAY),
    # -- telco pool ---------------------------------------------------------------------------
    Workload("telco-dpdk", "upf-dataplane", "Deployment", ("telco",),
             (guaranteed("upf", _img("registry.example.com/telco/upf", "24.3.1"), "8", "16Gi",
                         hugepages_1Gi="8Gi", e810_vf="2"),),
             per_node=2, age=14 * _DAY),
    Workload("telco-dpdk", "cu-up", "StatefulSet", ("telco",),
             (guaranteed("cu-up", _img("registry.example.com/telco/cu-up", "24.3.0"), "6", "8Gi",
                         hugepages_1Gi="4Gi", e810_vf="1"),),
             per_node=2, age=14 * _DAY),
    Workload("telco-dpdk", "cu-cp", "Deployment", ("telco",),
             (guaranteed("cu-cp", _img("registry.example.com/telco/cu-cp", "24.3.0"), "4", "8Gi"),),
             per_node=2, age=14 * _DAY),
    Workload("telco-dpdk", "oam-agent", "Deployment", ("telco",),
             (ContainerSpec("oam-agent", _img("registry.example.com/telco/oam-agent", "3.1.0"),
                            {"cpu": "200m", "memory": "256Mi"}, {"cpu": "1", "memory": "512Mi"}),),
             per_node=2, age=14 * _DAY),
    # -- GPU pools ----------------------------------------------------------------------------
    Workload("ml-training", "llm-pretrain", "Job", ("gpu",),
             (guaranteed("trainer", _img("nvcr.io/nvidia/pytorch", "25.06-py3"), "48", "512Gi", gpu="4",
                         cx7_vf="2"),),
             per_node=1, age=2 * _DAY, emptydir=True),
    Workload("ml-training", "data-loader", "Deployment", ("gpu",),
             (ContainerSpec("loader", _img("registry.example.com/ml/data-loader", "0.14.0"),
                            {"cpu": "2", "memory": "8Gi"}, {"cpu": "4", "memory": "16Gi"}),),
             per_node=6, age=2 * _DAY, emptydir=True),
    Workload("ml-training", "embeddings", "Deployment", ("gpu",),
             (guaranteed("encoder", _img("registry.example.com/ml/embeddings", "1.4.2"), "80", "256Gi", gpu="2"),),
             per_node=1, age=_DAY),
    Workload("ml-inference", "prompt-cache", "Deployment", ("gpu",),
             (ContainerSpec("redis", _img("docker.io/library/redis", "8.2.1"),
                            {"cpu": "500m", "memory": "4Gi"}, {"memory": "4Gi"}),),
             per_node=3, age=_DAY),
    Workload("ml-training", "gb200-train", "Job", ("gb200",),
             (guaranteed("trainer", _img("nvcr.io/nvidia/pytorch", "25.06-py3"), "128", "800Gi", gpu="4",
                         cx7_vf="4"),),
             per_node=1, age=_DAY, emptydir=True),
    Workload("ml-training", "gb200-data-loader", "Deployment", ("gb200",),
             (ContainerSpec("loader", _img("registry.example.com/ml/data-loader", "0.14.0"),
                            {"cpu": "2", "memory": "8Gi"}, {"cpu": "4", "memory": "16Gi"}),),
             per_node=4, age=_DAY, emptydir=True),
    # -- big-memory and 16-NUMA pools -----------------------------------------------------------
    Workload("analytics", "spark-executor", "StatefulSet", ("bigmem",),
             (guaranteed("executor", _img("docker.io/apache/spark", "4.0.0"), "30", "128Gi"),),
             per_node=6, age=9 * _DAY, emptydir=True),
    Workload("analytics", "trino-worker", "Deployment", ("bigmem",),
             (ContainerSpec("trino", _img("docker.io/trinodb/trino", "476"),
                            {"cpu": "4", "memory": "32Gi"}, {"cpu": "8", "memory": "64Gi"}),),
             per_node=6, age=9 * _DAY),
    Workload("analytics", "duckdb-gateway", "Deployment", ("bigmem",),
             (ContainerSpec("duckdb", _img("registry.example.com/analytics/duckdb-gateway", "1.3.2"),
                            {"cpu": "4", "memory": "64Gi"}, {"cpu": "16", "memory": "128Gi"}),),
             per_node=1, age=9 * _DAY),
    Workload("hpc", "cfd-solver", "Job", ("numa16",),
             (guaranteed("solver", _img("registry.example.com/hpc/openfoam", "v2406"), "28", "96Gi"),),
             per_node=4, age=3 * _DAY),
    Workload("hpc", "post-processing", "Deployment", ("numa16",),
             (ContainerSpec("paraview", _img("registry.example.com/hpc/paraview", "5.13.3"),
                            {"cpu": "4", "memory": "16Gi"}, {"cpu": "8", "memory": "32Gi"}),),
             per_node=6, age=3 * _DAY),
    Workload("hpc", "mpi-launcher", "Deployment", ("numa16",),
             (ContainerSpec("launcher", _img("registry.example.com/hpc/mpi-operator", "0.6.0"),
                            {"cpu": "1", "memory": "2Gi"}),),
             per_node=1, age=3 * _DAY),
    # -- today's rollout: one replica per NUMA-local GPU slot, on nodes already carved up ------
    Workload("ml-inference", "llm-serving", "Deployment", ("gpu",),
             (guaranteed("vllm", _img("docker.io/vllm/vllm-openai", "v0.10.1"), "24", "96Gi", gpu="1"),),
             per_node=2, minimum=4, age=timedelta(minutes=40), spread=timedelta(minutes=5)),
)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------
def _rng(seed: int, *parts: object) -> random.Random:
    """An independent, reproducible stream per purpose (str seeds are hashed with SHA-512)."""
    return random.Random(":".join(map(str, (seed, *parts))))


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _suffix(rng: random.Random, length: int) -> str:
    return "".join(rng.choice(_NAME_ALPHABET) for _ in range(length))


def _rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _cpu_text(millis: int) -> str:
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def _bytes_text(value: int) -> str:
    """Node-status style: Ki when whole kibibytes, else plain bytes."""
    return f"{value // 1024}Ki" if value % 1024 == 0 else str(value)


def _pages_text(count: int, size: str) -> str:
    if count == 0:
        return "0"
    value = count * int(quantity(size, "hugepage size"))
    return f"{value // GIB}Gi" if value % GIB == 0 else f"{value // MIB}Mi"


# ---------------------------------------------------------------------------------------------
# Step 2: hardware
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Zone:
    id: int
    socket: int
    local: int  # index among the socket's CPU-bearing NUMA nodes; -1 for memory-less nodes


@cache
def _shape_cpus(key: str) -> tuple[Cpu, ...]:
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
def _shape_zones(key: str) -> tuple[_Zone, ...]:
    """CPU-bearing NUMA nodes (socket-major), then the memory-less ones of each socket."""
    shape = SHAPES[key]
    zones = [
        _Zone(s * shape.numa_per_socket + i, s, i) for s in range(shape.sockets) for i in range(shape.numa_per_socket)
    ]
    first = len(zones)
    for s in range(shape.sockets):
        for k in range(shape.memoryless_per_socket):
            zones.append(_Zone(first + s * shape.memoryless_per_socket + k, s, -1))
    return tuple(zones)


@cache
def _shape_zone_rows(key: str) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Per zone: its sysfs cpulist and distance row."""
    shape = SHAPES[key]
    zones = _shape_zones(key)
    cpus = _shape_cpus(key)
    return tuple(
        (str(CPUSet(c.cpu for c in cpus if c.numa == z.id)), tuple(_distance(shape, z, other) for other in zones))
        for z in zones
    )


def _distance(shape: Shape, a: _Zone, b: _Zone) -> int:
    if a.id == b.id:
        return 10
    if a.local < 0 or b.local < 0:
        return 80 if a.socket == b.socket else 120
    if a.socket != b.socket:
        return shape.distance_remote
    return shape.distance_pair if a.local // 2 == b.local // 2 else shape.distance_socket


def _zone_memory(shape: Shape, zone: _Zone) -> int:
    """MemTotal of the node's meminfo: installed DIMMs less firmware/kernel reservations (NUMA 0 most)."""
    if zone.local < 0:
        return 0
    installed_kib = shape.gib_per_numa * GIB // 1024
    kib = installed_kib * 98 // 100 - (180 * 1024 if zone.id == 0 else 0)
    return kib * 1024


def _devices(shape: Shape, node: str, seed: int) -> list[Device]:
    rng = _rng(seed, "devices", node)
    devices = []
    for group in shape.devices:
        for i in range(group.count):
            devices.append(Device(resource=group.resource, id=_device_id(group, i, rng), numa=[group.numa]))
    return devices


def _device_id(group: DeviceGroup, index: int, rng: random.Random) -> str:
    """NVIDIA GPU UUIDs; SR-IOV VFs by PCI address (8 functions per device after the PF's slot)."""
    if group.kind == "gpu":
        return "GPU-" + _uid(rng)
    return f"0000:{group.pci_bus:02x}:{1 + index // 8:02x}.{index % 8}"


# ---------------------------------------------------------------------------------------------
# Step 3: kubelet configuration, as the files and command line a node holds, read like a real node's
# ---------------------------------------------------------------------------------------------
#: The fields the sample reports per node (what the inventory shows). ``effective_settings`` also
#: yields the kubelet's other defaults (maxPods, cgroupDriver, ...); the snapshot leaves them out.
#: A reported field no layer sets and the kubelet leaves empty (omitempty) is shown empty.
REPORTED_FIELDS = RESOURCE_MANAGER_FIELDS
DROPIN_DIR = "/etc/kubernetes/kubelet.conf.d"
#: KubeletConfiguration JSON name -> (command-line flag, how pflag parses its value).
_FLAG_OF = {name: (f"--{flag}", kind) for flag, (name, kind) in CONFIG_FLAGS.items()}
#: The zero value of a field's Go type, which is what the kubelet holds when nothing sets it.
_ZERO: dict[str, Any] = {"string": str, "[]MemoryReservation": list, "map[string]string": dict, "map[string]bool": dict}


@dataclass(frozen=True)
class _ConfigDocs:
    """A profile's configuration on one shape, parsed: the --config file and the drop-ins in merge
    order, and the extra command-line flags; or, for a node known only through /configz, that."""

    file: KubeletConfigDoc | None
    dropins: tuple[KubeletConfigDoc, ...]
    flags: tuple[str, ...]
    configz: KubeletConfigDoc | None = None


def _config_file(pool: Pool) -> str:
    return "/var/lib/kubelet/config.yaml" if pool.kubeadm else "/etc/kubernetes/kubelet-config.yaml"


def _reserved_cpus(shape: Shape, cores: Sequence[int]) -> str:
    return str(CPUSet(c.cpu for c in _shape_cpus(shape.key) if c.core in cores))


def _reserved_memory(total: int, numa_ids: Sequence[int]) -> list[dict[str, Any]]:
    """Whole GiB on NUMA nodes 1..k-1, the rest on NUMA 0 (so the sum equals the node reservation)."""
    k = max(1, min(len(numa_ids), total // GIB))
    rest = total - (k - 1) * GIB
    entries = [{"numaNode": numa_ids[0], "limits": {"memory": f"{rest // MIB}Mi"}}]
    entries += [{"numaNode": n, "limits": {"memory": "1Gi"}} for n in numa_ids[1:k]]
    return entries


def _yaml(values: Mapping[str, Any]) -> str:
    return yaml.safe_dump({"apiVersion": API_VERSION, "kind": KIND, **values}, sort_keys=False)


def _flag_args(values: Mapping[str, Any]) -> list[str]:
    """Config fields as kubelet flags, written the way each flag's parser reads them back."""
    args = []
    for name, value in values.items():
        flag, kind = _FLAG_OF[name]
        if kind == "map-nosplit":  # one key=value per use
            args += [f"{flag}={k}={v}" for k, v in value.items()]
        elif kind == "reserved-memory":
            entries = (f"{e['numaNode']}:" + ",".join(f"{k}={v}" for k, v in e["limits"].items()) for e in value)
            args.append(f"{flag}={';'.join(entries)}")
        elif kind in ("map", "langle-map", "map-bool"):
            sep = "<" if kind == "langle-map" else "="
            pairs = (f"{k}{sep}{str(v).lower() if isinstance(v, bool) else v}" for k, v in value.items())
            args.append(f"{flag}={','.join(pairs)}")
        elif kind == "string":
            args.append(f"{flag}={value}")
        else:
            raise InputError(f"the sample cannot write {name} as a flag ({kind})", where=name)
    return args


def _render(config_file: str, layers: Sequence[Mapping[str, Any]], dropins: Sequence[str]) -> _ConfigDocs:
    """Layers (file, drop-ins, flags) as the YAML and flags a node holds, parsed as the node agent parses them."""
    file, *others, flags = layers
    return _ConfigDocs(
        parse_kubelet_config(_yaml(file), source=config_file),
        tuple(
            parse_kubelet_dropin(_yaml(values), source=f"{DROPIN_DIR}/{name}")
            for name, values in zip(dropins, others, strict=True)
        ),
        tuple(_flag_args(flags)),
    )


def _layered(docs: _ConfigDocs, argv: Sequence[str], version: KubeVersion) -> KubeletSettings:
    flags = parse_kubelet_args(argv, source="kubelet command line")
    return effective_settings(file=docs.file, dropins=docs.dropins, flags=flags, version=version)


@cache
def _config_docs(profile_key: str, shape_key: str, config_file: str, version: KubeVersion) -> _ConfigDocs:
    """Render the profile's layers as the node's texts and parse them (once per distinct text).

    ``reserve_cores`` become ``reservedSystemCPUs`` in the file; a layer that turns the memory
    manager Static also carries the ``reservedMemory`` the kubelet demands, summing to the node
    reservation (kube + system reserved + the hard-eviction threshold) of the layers as merged."""
    profile, shape = PROFILES[profile_key], SHAPES[shape_key]
    layers: list[dict[str, Any]] = [dict(profile.file), *(dict(v) for _, v in profile.dropins), dict(profile.flags)]
    if profile.reserve_cores:
        layers[0]["reservedSystemCPUs"] = _reserved_cpus(shape, profile.reserve_cores)
    names = [name for name, _ in profile.dropins]
    static = [v for v in layers if v.get("memoryManagerPolicy") == "Static"]
    if static:
        docs = _render(config_file, layers, names)
        merged = _layered(docs, ["kubelet", *docs.flags], version)
        parts = [merged.value(k, {}).get("memory", "0") for k in ("kubeReserved", "systemReserved")]
        parts.append(merged.value("evictionHard", {}).get("memory.available", "0"))
        total = int(sum(quantity(p, "memory reservation") for p in parts))
        reserved = _reserved_memory(total, [z.id for z in _shape_zones(shape_key) if z.local >= 0])
        for values in static:
            values["reservedMemory"] = reserved
    docs = _render(config_file, layers, names)
    if not profile.configz_only:
        return docs
    # No node agent: only /configz, the running kubelet's configuration (defaults filled in, empty
    # fields omitted as the kubelet's JSON does), which its file decides.
    running = _layered(docs, ["kubelet", *docs.flags], version).fields
    body = {k: s.value for k, s in running.items() if s.value not in (None, "", {}, [])}
    return _ConfigDocs(None, (), (), parse_configz(json.dumps({"kubeletconfig": body}), source="/configz"))


def _kubelet(spec: NodeSpec, pool: Pool, profile: Profile, shape: Shape) -> KubeletInfo:
    """What the node agent reads (config file, drop-ins, command line) or, without one, /configz,
    through the parsers and ``effective_settings`` that read real nodes."""
    version = KubeVersion.parse(spec.kubelet)
    config_file = _config_file(pool)
    docs = _config_docs(profile.key, shape.key, config_file, version)
    if docs.configz is not None:
        fields = effective_settings(configz=docs.configz, version=version).fields
        return KubeletInfo(settings=_reported(fields, "configz"), kubeadm_managed=pool.kubeadm)
    config_dir = DROPIN_DIR if docs.dropins else None
    argv = _command_line(spec, pool, docs.flags, config_dir)
    settings = _layered(docs, argv, version)
    return KubeletInfo(
        settings=_reported(settings.fields, "default"),
        config_file=settings.config_file,
        config_dir=settings.config_dir,
        flags=argv,
        kubeadm_managed=pool.kubeadm,
    )


def _reported(fields: Mapping[str, Setting], unset: SettingSource) -> dict[str, Setting]:
    """``REPORTED_FIELDS`` in order. A field no layer sets and without a kubelet default holds its Go
    zero value (``effective_settings`` leaves it out, as /configz omits it)."""
    return {
        name: fields.get(name) or Setting(value=_ZERO[FIELD_TYPES[name]](), source=unset) for name in REPORTED_FIELDS
    }


def _command_line(spec: NodeSpec, pool: Pool, extra: Sequence[str], config_dir: str | None) -> list[str]:
    """kubeadm's systemd drop-in (or a provisioner's unit) plus the profile's extra flags; no secrets."""
    if pool.kubeadm:
        args = [
            "/usr/bin/kubelet",
            "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
            "--kubeconfig=/etc/kubernetes/kubelet.conf",
            f"--config={_config_file(pool)}",
            "--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock",
        ]
    else:
        args = ["/usr/local/bin/kubelet", "--kubeconfig=/var/lib/kubelet/kubeconfig", f"--config={_config_file(pool)}"]
    args.append(f"--node-ip={_node_ip(spec, pool)}")
    if config_dir:
        args.append(f"--config-dir={config_dir}")
    return [*args, *extra]


# ---------------------------------------------------------------------------------------------
# The node under construction: the snapshot node, its kubelet's resource managers, bookkeeping
# ---------------------------------------------------------------------------------------------
@dataclass
class _Node:
    """A node under construction: its snapshot record (allocations to come), the kubelet model
    started from that record, and what it runs. Scheduling quantities are integers in thousandths
    of a unit (millicores, millibytes)."""

    spec: NodeSpec
    shape: Shape
    base: Node
    allocatable: dict[str, Decimal]
    sim: NodeSimulator
    requested: dict[str, int] = field(default_factory=dict)
    admitted: list[tuple[Pod, PodResult, Mapping[str, int]]] = field(default_factory=list)
    version: int = 0  # bumped whenever ``requested`` changes (scheduler heap entries go stale)
    limit: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.limit = {r: int(v * 1000) for r, v in self.allocatable.items()}

    @property
    def name(self) -> str:
        return self.spec.name

    def fits(self, request: Mapping[str, int]) -> bool:
        requested, limit = self.requested, self.limit
        # A loop rather than all(generator): asked 1.4 million times for 5,000 nodes, twice as fast.
        for r, v in request.items():  # noqa: SIM110
            if v and requested.get(r, 0) + v > limit.get(r, 0):
                return False
        return True

    def score(self) -> float:
        """The scheduler's LeastAllocated score (cpu and memory weighted equally), higher is emptier."""
        return sum(1 - self.requested.get(r, 0) / self.limit[r] for r in ("cpu", "memory")) / 2

    def add(self, request: Mapping[str, int]) -> None:
        for r, v in request.items():
            self.requested[r] = self.requested.get(r, 0) + v
        self.version += 1


def _capacity(shape: Shape, cpus: Sequence[Cpu], zones: Sequence[_Zone], devices: Sequence[Device]) -> dict[str, str]:
    hugepages = shape.hugepages_1g_per_numa * sum(1 for z in zones if z.local >= 0)
    capacity = {
        "cpu": str(len(cpus)),
        "memory": _bytes_text(sum(_zone_memory(shape, z) for z in zones)),
        "ephemeral-storage": _bytes_text(shape.disk_gib * GIB),
        "hugepages-1Gi": _pages_text(hugepages, "1Gi"),
        "hugepages-2Mi": "0",
        "pods": "110",
    }
    for resource in sorted({d.resource for d in devices}):
        capacity[resource] = str(sum(1 for d in devices if d.resource == resource))
    return capacity


def _allocatable(
    capacity: Mapping[str, str], settings: Mapping[str, Setting], devices: Sequence[Device]
) -> dict[str, Decimal]:
    """capacity - kube/system reservations - hard eviction (memory also - pre-allocated hugepages)."""
    reserved = [settings["kubeReserved"].value, settings["systemReserved"].value]
    explicit = settings["reservedSystemCPUs"].value
    eviction = settings["evictionHard"].value
    values = {name: quantity(text, f"capacity.{name}") for name, text in capacity.items()}
    if explicit:
        values["cpu"] -= len(CPUSet.parse(explicit))
    else:
        values["cpu"] -= sum(quantity(r.get("cpu", "0"), "reserved cpu") for r in reserved)
    for name in ("memory", "ephemeral-storage"):
        values[name] -= sum(quantity(r.get(name, "0"), f"reserved {name}") for r in reserved)
    values["memory"] -= quantity(eviction.get("memory.available", "0"), "evictionHard") + values["hugepages-1Gi"]
    percent = Decimal(eviction.get("nodefs.available", "0%").removesuffix("%"))
    values["ephemeral-storage"] -= int(quantity(capacity["ephemeral-storage"], "disk") * percent / 100)
    for resource in {d.resource for d in devices}:
        values[resource] = Decimal(sum(1 for d in devices if d.resource == resource and d.healthy))
    return values


def _allocatable_text(values: Mapping[str, Decimal]) -> dict[str, str]:
    out = {}
    for name, value in values.items():
        if name == "cpu":
            out[name] = _cpu_text(int(value * 1000))
        elif name in ("memory", "ephemeral-storage"):
            out[name] = _bytes_text(int(value))
        elif name.startswith("hugepages-"):
            size = name.removeprefix("hugepages-")
            out[name] = _pages_text(int(value) // int(quantity(size, name)), size)
        else:
            out[name] = str(int(value))
    return out


def _node_ip(spec: NodeSpec, pool: Pool) -> str:
    return f"10.{pool.subnet}.{spec.index // 200}.{10 + spec.index % 200}"


def _build_node(spec: NodeSpec, seed: int) -> _Node:
    """The snapshot node without allocations, and a kubelet model started from it the way the
    what-if replay starts one (``tmnb.replay.node_model``)."""
    pool = POOLS[spec.pool]
    shape = SHAPES[pool.shape]
    profile = PROFILES[spec.profile]
    cpus = _shape_cpus(shape.key)
    devices = _devices(shape, spec.name, seed)
    kubelet = _kubelet(spec, pool, profile, shape)
    capacity = _capacity(shape, cpus, _shape_zones(shape.key), devices)
    allocatable = _allocatable(capacity, kubelet.settings, devices)
    base = Node(
        name=spec.name,
        labels=_labels(spec, shape),
        uid=_uid(_rng(seed, "node", spec.name)),
        versions=Versions(
            kubelet=spec.kubelet,
            container_runtime=spec.runtime,
            kernel=spec.kernel or shape.kernel,
            os_image=spec.os_image or shape.os_image,
        ),
        capacity=capacity,
        allocatable=_allocatable_text(allocatable),
        ready=True,
        unschedulable=spec.cordoned,
        kubelet=kubelet,
        cpus=list(cpus),
        numa=_numa_zones(shape, {}),
        devices=devices,
        issues=_issues(profile),
    )
    return _Node(spec, shape, base, allocatable, NodeSimulator(node_model(base, {})))


def _numa_zones(shape: Shape, used: Mapping[tuple[int, str], int]) -> list[NumaZone]:
    """sysfs view of the NUMA nodes; ``used`` (bytes per zone and memory type) gives the free figures."""
    out = []
    for z, (cpulist, distances) in zip(_shape_zones(shape.key), _shape_zone_rows(shape.key), strict=True):
        memory = _zone_memory(shape, z)
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
                distances=list(distances),
            )
        )
    return out


# ---------------------------------------------------------------------------------------------
# Step 4: workloads -> pod intents
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Intent:
    """A pod a controller is about to create, with everything but its node and fate."""

    created: datetime
    workload: Workload
    replica: int
    owner: OwnerRef
    name: str
    labels: Mapping[str, str]
    node: str | None = None  # DaemonSet pods are bound by their controller
    attempt: int = 0

    @property
    def order(self) -> tuple[datetime, str, str]:
        """Creation order as a snapshot lists pods: a replay in this order re-admits identically."""
        return (self.created, self.workload.namespace, self.name)


def _replicas(workload: Workload, counts: Mapping[str, int]) -> int:
    nodes = sum(counts.get(p, 0) for p in workload.pools or ())
    return max(workload.minimum, round(workload.per_node * nodes)) if nodes else 0


def _owner(workload: Workload, rng: random.Random) -> tuple[OwnerRef, dict[str, str]]:
    """The pod's controller reference and the labels its controller stamps on it."""
    labels = {"app.kubernetes.io/name": workload.name}
    if workload.kind == "Deployment":
        rs_hash = _suffix(rng, 10)
        labels["pod-template-hash"] = rs_hash
        return OwnerRef("ReplicaSet", f"{workload.name}-{rs_hash}", _uid(rng), "Deployment", workload.name), labels
    if workload.kind in ("DaemonSet", "StatefulSet"):
        labels["controller-revision-hash"] = _suffix(rng, 10)
        return OwnerRef(workload.kind, workload.name, _uid(rng)), labels
    scheduled = int((CAPTURED_AT - workload.age).timestamp()) // 60  # CronJobs name jobs by scheduled minute
    job = f"{workload.name}-{scheduled}" if workload.cronjob else workload.name
    labels["batch.kubernetes.io/job-name"] = job
    kind = "CronJob" if workload.cronjob else None
    return OwnerRef("Job", job, _uid(rng), kind, workload.cronjob), labels


def _pod_name(workload: Workload, owner: OwnerRef, replica: int, rng: random.Random) -> str:
    if workload.kind == "StatefulSet":
        return f"{workload.name}-{replica}"
    if workload.kind == "DaemonSet":
        return f"{workload.name}-{_suffix(rng, 5)}"
    return f"{owner.name}-{_suffix(rng, 5)}"


def _intents(specs: Sequence[NodeSpec], seed: int) -> list[_Intent]:
    """Every pod every controller creates up front, with creation times inside the workload's window."""
    counts = Counter(s.pool for s in specs)
    intents = []
    used: set[tuple[str, str]] = set()
    for w in WORKLOADS:
        rng = _rng(seed, "workload", w.namespace, w.name)
        owner, labels = _owner(w, rng)
        if w.kind == "DaemonSet":
            targets: list[str | None] = [s.name for s in specs if w.pools is None or s.pool in w.pools]
        else:
            targets = [None] * _replicas(w, counts)
        start = CAPTURED_AT - w.age
        for i, node in enumerate(targets):
            created = start + w.spread * (i + rng.random()) / max(len(targets), 1)
            created = created.replace(microsecond=0)
            name = _pod_name(w, owner, i, rng)
            while (w.namespace, name) in used:  # five random characters repeat in fleets of thousands
                name = _pod_name(w, owner, i, rng)
            used.add((w.namespace, name))
            intents.append(_Intent(created, w, i, owner, name, labels, node))
    return sorted(intents, key=lambda it: it.order)


# ---------------------------------------------------------------------------------------------
# Step 5: scheduling and admission (the allocation step)
# ---------------------------------------------------------------------------------------------
def _container(spec: ContainerSpec) -> Container:
    return Container(
        name=spec.name,
        requests=dict(spec.requests),
        limits=dict(spec.limits),
        restart_policy="Always" if spec.sidecar else None,
        image=spec.image,
    )


def _model_container(c: Container) -> ModelContainer:
    return ModelContainer(c.name, c.requests, c.limits, c.restart_policy)


def _scheduling_request(pod: ModelPod) -> dict[str, int]:
    """What the scheduler reserves, in thousandths: per resource the pod-level amount (init and
    sidecar rules), a missing request defaulting to the limit as the API defaults it; plus a pod slot."""
    names = sorted({r for c in pod.all_containers() for r in (*c.requests, *c.limits)})
    request = {"pods": 1000}
    for name in names:
        request[name] = pod_level_request(
            pod, lambda c, r=name: math.ceil(c.requests.get(r, c.limits.get(r, 0)) * 1000)
        )
    return request


@dataclass(frozen=True)
class _Template:
    """The pod spec a workload stamps out: shared immutable containers, QoS class and scheduling request."""

    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...]
    model: ModelPod  # the kubelet's view, uid and name filled in per pod
    request: Mapping[str, int]


def _template(w: Workload) -> _Template:
    containers = tuple(_container(c) for c in w.containers)
    inits = tuple(_container(c) for c in w.init_containers)
    model = ModelPod(
        uid="",
        name=w.name,
        namespace=w.namespace,
        containers=tuple(_model_container(c) for c in containers),
        init_containers=tuple(_model_container(c) for c in inits),
    )
    model = replace(model, qos_class=compute_qos(model))
    return _Template(containers, inits, model, _scheduling_request(model))


def _make_pod(intent: _Intent, template: _Template, node: str | None, phase: str, seed: int) -> Pod:
    w = intent.workload
    rng = _rng(seed, "pod", w.namespace, intent.name, intent.attempt)
    return Pod(
        namespace=w.namespace,
        name=intent.name,
        uid=_uid(rng),
        node=node,
        qos_class=template.model.qos_class,  # type: ignore[arg-type]
        phase=phase,
        created=_rfc3339(intent.created),
        owner=intent.owner,
        labels=_pod_labels(intent),
        containers=list(template.containers),
        init_containers=list(template.init_containers),
        priority_class=w.priority_class,
        volumes_emptydir=w.emptydir,
    )


def _pod_labels(intent: _Intent) -> dict[str, str]:
    if intent.workload.kind != "StatefulSet":
        return dict(intent.labels)
    return {**intent.labels, "apps.kubernetes.io/pod-index": str(intent.replica),
            "statefulset.kubernetes.io/pod-name": intent.name}  # fmt: skip


class _Scheduler:
    """Topology-unaware like kube-scheduler: fit by requests, then the least-allocated node (name breaks ties)."""

    def __init__(self, nodes: Sequence[_Node]) -> None:
        self._nodes = {n.name: n for n in nodes}
        self._heaps: dict[str, list[tuple[float, str, int]]] = {}
        for n in nodes:
            self._heaps.setdefault(n.spec.pool, []).append((-n.score(), n.name, n.version))
        for heap in self._heaps.values():
            heapq.heapify(heap)

    def node(self, name: str) -> _Node:
        return self._nodes[name]

    def pick(self, pool: str, request: Mapping[str, int]) -> _Node | None:
        heap = self._heaps.get(pool, [])
        skipped = []
        chosen = None
        while heap:
            entry = heapq.heappop(heap)
            node = self._nodes[entry[1]]
            if entry[2] != node.version:
                continue
            skipped.append(entry)
            if node.fits(request):
                chosen = node
                break
        for entry in skipped:
            heapq.heappush(heap, entry)
        return chosen

    def bind(self, node: _Node, request: Mapping[str, int]) -> None:
        node.add(request)
        heapq.heappush(self._heaps[node.spec.pool], (-node.score(), node.name, node.version))


@dataclass
class _Outcome:
    pods: list[Pod] = field(default_factory=list)
    rejected: list[tuple[Pod, _Intent]] = field(default_factory=list)


def _replacement(intent: _Intent, failed: datetime, seed: int) -> _Intent | None:
    """The new pod a ReplicaSet or Job creates beside the failed one. StatefulSet and DaemonSet
    controllers delete the failed pod and recreate it under its name: the snapshot shows it Failed."""
    if intent.attempt + 1 >= MAX_REJECTIONS or intent.workload.kind in ("StatefulSet", "DaemonSet"):
        return None
    rng = _rng(seed, "replacement", intent.name, intent.attempt)
    name = f"{intent.owner.name}-{_suffix(rng, 5)}"
    created = failed + timedelta(seconds=rng.randint(2, 9))
    return _Intent(created, intent.workload, intent.replica, intent.owner, name, intent.labels,
                   intent.node, intent.attempt + 1)  # fmt: skip


def _bind_target(scheduler: _Scheduler, intent: _Intent, request: Mapping[str, int]) -> _Node | None:
    if intent.node is not None:
        return scheduler.node(intent.node)
    return next((n for p in intent.workload.pools or () if (n := scheduler.pick(p, request)) is not None), None)


def _run(nodes: Sequence[_Node], intents: Sequence[_Intent], seed: int) -> _Outcome:
    """Create, schedule and admit pods in creation order; rejected pods are replaced by their controller."""
    scheduler = _Scheduler(nodes)
    templates: dict[tuple[str, str], _Template] = {}
    queue = [(*it.order, it) for it in intents]
    heapq.heapify(queue)
    outcome = _Outcome()
    while queue:
        intent = heapq.heappop(queue)[3]
        w = intent.workload
        if (w.namespace, w.name) not in templates:
            templates[(w.namespace, w.name)] = _template(w)
        template = templates[(w.namespace, w.name)]
        node = _bind_target(scheduler, intent, template.request)
        if node is None or w.completed:
            phase = "Pending" if node is None else "Succeeded"
            outcome.pods.append(_make_pod(intent, template, node and node.name, phase, seed))
            continue
        pod = _make_pod(intent, template, node.name, "Running", seed)
        result = node.sim.admit(replace(template.model, uid=pod.uid, name=pod.name))
        if result.admitted:
            scheduler.bind(node, template.request)
            node.admitted.append((pod, result, template.request))
            outcome.pods.append(pod)
            continue
        failed = replace(pod, phase="Failed", reason=result.reason, message=result.pod_status_message)
        outcome.pods.append(failed)
        outcome.rejected.append((failed, intent))
        again = _replacement(intent, intent.created + timedelta(seconds=2), seed)
        if again is not None:
            heapq.heappush(queue, (*again.order, again))
    return outcome


# ---------------------------------------------------------------------------------------------
# Step 6: assembly
# ---------------------------------------------------------------------------------------------
def _allocations(node: _Node) -> list[Allocation]:
    """Per running container: its exclusive cpuset or the shared pool, memory blocks and devices.
    Static-policy nodes list every container; other nodes only those holding devices."""
    pool = _shared_pool(node)
    everything = CPUSet(c.cpu for c in node.base.cpus)
    numa_of = {c.cpu: c.numa for c in node.base.cpus}
    device_numa = {d.id: d.numa or [] for d in node.base.devices}
    spans: dict[CPUSet, tuple[str, list[int]]] = {}  # cpu-list and NUMA zones; shared containers share one
    out = []
    for pod, result, _ in node.admitted:
        for got in result.containers:
            if not _long_running(pod, got.name) or (pool is None and not got.devices):
                continue
            cpus = got.cpuset or (pool if pool is not None else everything)
            if cpus not in spans:
                spans[cpus] = (str(cpus), sorted({numa_of[c] for c in cpus}))
            out.append(_allocation(pod, got, *spans[cpus], device_numa))
    return out


def _shared_pool(node: _Node) -> CPUSet | None:
    """The CPU manager's defaultCpuSet; None under the ``none`` policy, which keeps no CPU state."""
    return node.sim.shared_pool() if node.sim.node.settings.cpu_manager_policy == "static" else None


def _long_running(pod: Pod, container: str) -> bool:
    """App containers and sidecars; plain init containers have finished."""
    return any(c.name == container for c in pod.containers) or any(
        c.name == container and c.restart_policy == "Always" for c in pod.init_containers
    )


def _allocation(
    pod: Pod, got: ContainerResult, cpus: str, numa: list[int], device_numa: Mapping[str, list[int]]
) -> Allocation:
    return Allocation(
        pod_uid=pod.uid,
        namespace=pod.namespace,
        pod=pod.name,
        container=got.name,
        cpuset=cpus,
        exclusive=bool(got.cpuset),
        numa=numa,
        memory=[MemoryBlock(type=b.type, size=b.size, numa=list(b.numa)) for b in got.memory],
        devices=[
            DeviceAllocation(
                resource=resource,
                ids=list(ids),
                numa=sorted({n for i in ids for n in device_numa[i]}) or None,
            )
            for resource, ids in sorted(got.devices.items())
            if ids
        ],
    )


def _memory_used(node: _Node, allocations: Sequence[Allocation]) -> dict[tuple[int, str], int]:
    """Bytes per (zone, type): memory-manager blocks where pinned, other pods' requests spread evenly."""
    used: dict[tuple[int, str], int] = {}
    pinned = {a.pod_uid for a in allocations if a.memory}
    for a in allocations:
        for block in a.memory:
            for n in block.numa:
                used[(n, block.type)] = used.get((n, block.type), 0) + block.size // len(block.numa)
    memory_zones = [z.id for z in _shape_zones(node.shape.key) if z.local >= 0]
    for pod, _, request in node.admitted:
        if pod.uid in pinned:
            continue
        share = request.get("memory", 0) // 1000 // len(memory_zones)
        for n in memory_zones:
            used[(n, "memory")] = used.get((n, "memory"), 0) + share
    return used


def _labels(spec: NodeSpec, shape: Shape) -> dict[str, str]:
    labels = {
        "beta.kubernetes.io/arch": shape.arch,
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": shape.arch,
        "kubernetes.io/hostname": spec.name,
        "kubernetes.io/os": "linux",
        "node-role.kubernetes.io/worker": "",
        "node.kubernetes.io/instance-type": shape.instance_type,
        "topology.kubernetes.io/region": "dc1",
        "topology.kubernetes.io/zone": POOLS[spec.pool].zone,
        POOL_LABEL: spec.pool,
        "feature.node.kubernetes.io/cpu-model.vendor_id": {"GenuineIntel": "Intel", "AuthenticAMD": "AMD"}.get(
            shape.vendor, shape.vendor
        ),
        "feature.node.kubernetes.io/cpu-hardware_multithreading": str(shape.threads_per_core > 1).lower(),
        "feature.node.kubernetes.io/kernel-version.full": spec.kernel or shape.kernel,
        "feature.node.kubernetes.io/memory-numa": "true",
    }
    return {**labels, **shape.labels}


def _issues(profile: Profile) -> list[Issue]:
    if not profile.configz_only:
        return []
    return [
        Issue(
            source="node-agent",
            message="no node agent on this node: kubelet settings come from /configz alone, without their layers",
            severity="warning",
        )
    ]


def _assemble_node(node: _Node) -> Node:
    """The snapshot node with what admission gave its pods: allocations, shared pool, free memory."""
    allocations = _allocations(node)
    pool = _shared_pool(node)
    return replace(
        node.base,
        numa=_numa_zones(node.shape, _memory_used(node, allocations)),
        shared_pool=None if pool is None else str(pool),
        allocations=allocations,
    )


def _events(rejected: Sequence[tuple[Pod, _Intent]]) -> list[Event]:
    """What ``kubectl get events`` still shows (events live an hour): the controller creating each
    replacement, the scheduler binding it, and the kubelet rejecting it."""
    events = []
    for pod, intent in rejected:
        created = intent.created
        if CAPTURED_AT - created > EVENT_TTL:
            continue
        owner = intent.owner
        controller = {"ReplicaSet": "replicaset-controller", "Job": "job-controller"}.get(owner.kind)
        if controller:
            events.append(_event(pod, owner.kind, owner.name, "SuccessfulCreate", f"Created pod: {pod.name}",
                                 "Normal", created, controller, None))  # fmt: skip
        events.append(_event(pod, "Pod", pod.name, "Scheduled", f"Successfully assigned {pod.namespace}/{pod.name} "
                             f"to {pod.node}", "Normal", created, "default-scheduler", None))  # fmt: skip
        message = (pod.message or "").removeprefix("Pod was rejected: ")
        events.append(_event(pod, "Pod", pod.name, pod.reason or "", message, "Warning",
                             created + timedelta(seconds=1), "kubelet", pod.node))  # fmt: skip
    return events


def _event(
    pod: Pod,
    kind: str,
    name: str,
    reason: str,
    message: str,
    type_: str,
    at: datetime,
    component: str,
    node: str | None,
) -> Event:
    return Event(
        namespace=pod.namespace,
        kind=kind,
        name=name,
        reason=reason,
        message=message,
        type=type_,  # type: ignore[arg-type]
        first_seen=_rfc3339(at),
        last_seen=_rfc3339(at),
        node=node,
        component=component,
    )


def _disruption_budgets(pods: Sequence[Pod]) -> list[DisruptionBudget]:
    """One PDB per workload that asks for it, selecting exactly its pods by their app label."""
    budgets = []
    for w in WORKLOADS:
        if w.min_available is None or not any(p.labels.get("app.kubernetes.io/name") == w.name for p in pods):
            continue
        budgets.append(
            DisruptionBudget(
                namespace=w.namespace,
                name=f"{w.name}-pdb",
                selector={"app.kubernetes.io/name": w.name},
                min_available=w.min_available,
            )
        )
    return budgets


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------
def generate_fleet(nodes: int | None = None, *, seed: int = 7) -> Snapshot:
    """The curated sample (``nodes=None``) or the same pools and workloads scaled to ``nodes`` nodes.

    Deterministic: the same arguments give the same snapshot, byte for byte."""
    specs = _curated_specs() if nodes is None else _scaled_specs(nodes)
    built = [_build_node(s, seed) for s in specs]
    outcome = _run(built, _intents(specs, seed), seed)
    pods = sorted(outcome.pods, key=lambda p: (p.created, p.namespace, p.name))
    detail = "curated sample fleet" if nodes is None else f"scaled sample fleet, {nodes} nodes"
    return Snapshot(
        captured_at=_rfc3339(CAPTURED_AT),
        source=SnapshotSource(kind="sample", context="sample", detail=f"{detail} (tmnb.sources.sample, seed {seed})"),
        cluster=Cluster(server_version=SERVER_VERSION, platform="kubeadm on bare metal"),
        nodes=[_assemble_node(n) for n in built],
        pods=pods,
        events=_events(outcome.rejected),
        disruption_budgets=_disruption_budgets(pods),
    )


def load_sample() -> Snapshot:
    """The committed curated sample (package data), verified against its manifest."""
    return load(DATA_FILE)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tmnb.sources.sample", description="Write a generated sample fleet snapshot."
    )
    parser.add_argument("--out", required=True, type=Path, help="snapshot file (.json or .json.gz)")
    parser.add_argument("--nodes", type=int, default=None, help="scale to N nodes (default: the curated sample)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    snapshot = generate_fleet(args.nodes, seed=args.seed)
    manifest = save(snapshot, args.out)
    print(f"wrote {args.out}: {manifest['nodes']} nodes, {manifest['pods']} pods, sha256 {manifest['sha256'][:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
