"""Small hand-made snapshots whose every value a test can reason about."""

from __future__ import annotations

import dataclasses
from typing import Any

from tmnb.snapshot import (
    Allocation,
    Cluster,
    Container,
    Cpu,
    Device,
    DeviceAllocation,
    KubeletInfo,
    Layer,
    MemoryBlock,
    Node,
    NumaZone,
    OwnerRef,
    Pod,
    Setting,
    Snapshot,
    SnapshotSource,
    Versions,
)

GIB = 1 << 30


def two_socket_cpus(cores_per_socket: int = 4, smt: bool = True) -> list[Cpu]:
    """Intel-style numbering: CPU i and i + total_cores are siblings on one core."""
    total = 2 * cores_per_socket
    cpus = []
    for thread in range(2 if smt else 1):
        for core in range(total):
            socket = core // cores_per_socket
            cpus.append(Cpu(cpu=core + thread * total, core=core, socket=socket, numa=socket))
    return cpus


def settings(**values: Any) -> dict[str, Setting]:
    defaults = {
        "topologyManagerPolicy": "none",
        "topologyManagerScope": "container",
        "cpuManagerPolicy": "none",
        "memoryManagerPolicy": "None",
    }
    out = {k: Setting(value=v, source="default") for k, v in defaults.items()}
    out.update({k: Setting(value=v, source="file", detail="/var/lib/kubelet/config.yaml") for k, v in values.items()})
    return out


def node(name: str = "worker-1", version: str = "v1.36.1", *, smt: bool = True, **kw: Any) -> Node:
    cpus = two_socket_cpus(smt=smt)
    zones = [
        NumaZone(
            id=z,
            cpus=",".join(str(c.cpu) for c in cpus if c.numa == z),
            memory_total=64 * GIB,
            distances={0: 10, 1: 21} if z == 0 else {0: 21, 1: 10},
        )
        for z in (0, 1)
    ]
    fields: dict[str, Any] = {
        "name": name,
        "labels": {"kubernetes.io/hostname": name, "tmnb.dev/pool": "general"},
        "versions": Versions(kubelet=version),
        "capacity": {"cpu": str(len(cpus)), "memory": "128Gi", "pods": "110"},
        "allocatable": {"cpu": str(len(cpus) - 1), "memory": "126Gi", "pods": "110"},
        "ready": True,
        "kubelet": KubeletInfo(settings=settings()),
        "cpus": cpus,
        "numa": zones,
    }
    fields.update(kw)
    return Node(**fields)


def pod(name: str, node_name: str | None = "worker-1", cpu: str = "2", qos: str = "Guaranteed", **kw: Any) -> Pod:
    requests = {"cpu": cpu, "memory": "1Gi"}
    fields: dict[str, Any] = {
        "namespace": "app",
        "name": name,
        "uid": f"uid-{name}",
        "node": node_name,
        "qos_class": qos,
        "phase": "Running",
        "created": "2026-11-30T10:00:00Z",
        "owner": OwnerRef(kind="ReplicaSet", name=f"{name}-rs", controller_kind="Deployment", controller_name=name),
        "containers": [Container(name="main", requests=requests, limits=dict(requests))],
    }
    fields.update(kw)
    return Pod(**fields)


def snapshot(nodes: list[Node] | None = None, pods: list[Pod] | None = None, **kw: Any) -> Snapshot:
    return Snapshot(
        captured_at="2026-12-01T12:00:00Z",
        source=SnapshotSource(kind="sample"),
        cluster=kw.pop("cluster", Cluster(server_version="v1.36.2")),
        nodes=nodes if nodes is not None else [node()],
        pods=pods or [],
        **kw,
    )


def busy_snapshot() -> Snapshot:
    """A static-policy node with exclusive CPUs, memory blocks and GPUs, for occupancy and plots."""
    static = KubeletInfo(
        settings=settings(
            cpuManagerPolicy="static",
            reservedSystemCPUs="0,8",
            memoryManagerPolicy="Static",
            reservedMemory=[{"numaNode": 0, "limits": {"memory": "1Gi"}}, {"numaNode": 1, "limits": {"memory": "1Gi"}}],
            # 1948Mi + the 100Mi default hard-eviction threshold = the 2Gi reservedMemory sum, or the
            # kubelet refuses to start.
            systemReserved={"memory": "1948Mi"},
        )
    )
    allocs = [
        Allocation(
            pod_uid="u1",
            namespace="db",
            pod="pg-0",
            container="pg",
            cpuset="1-2,9-10",
            exclusive=True,
            numa=[0],
            memory=[MemoryBlock(type="memory", size=8 * GIB, numa=[0])],
        ),
        Allocation(
            pod_uid="u2",
            namespace="ml",
            pod="train",
            container="main",
            cpuset="4,12",
            exclusive=True,
            numa=[1],
            memory=[MemoryBlock(type="memory", size=4 * GIB, numa=[0, 1])],
            devices=[DeviceAllocation(resource="nvidia.com/gpu", ids=["gpu2"], numa=[1])],
        ),
        Allocation(
            pod_uid="u3", namespace="web", pod="nginx", container="nginx", cpuset="3,5-7,11,13-15", exclusive=False
        ),
    ]
    devices = [Device(resource="nvidia.com/gpu", id=f"gpu{i}", numa=[i // 2]) for i in range(4)]
    devices.append(Device(resource="example.com/nic", id="nic0", numa=None))
    return snapshot([node("w1", kubelet=static, allocations=allocs, devices=devices)])


def layered_node() -> Node:
    """busy_snapshot's node with provenance from every layer: a flag beating the config file and a
    drop-in, as a real node's unit, config file and --config-dir would give it."""
    node = busy_snapshot().nodes[0]
    settings = dict(node.kubelet.settings)
    settings["topologyManagerPolicy"] = Setting(
        value="single-numa-node",
        source="flag",
        detail="--topology-manager-policy",
        overridden=(Layer(source="file", value="best-effort", detail="/var/lib/kubelet/config.yaml"),),
    )
    settings["topologyManagerScope"] = Setting(
        value="pod", source="dropin", detail="/etc/kubernetes/kubelet.conf.d/50-scope.conf"
    )
    flags = ["/usr/bin/kubelet", "--topology-manager-policy=single-numa-node", "--node-ip=10.0.0.7"]
    return dataclasses.replace(node, kubelet=KubeletInfo(settings=settings, flags=flags))


__all__ = [
    "Allocation",
    "Device",
    "Layer",
    "busy_snapshot",
    "layered_node",
    "node",
    "pod",
    "settings",
    "snapshot",
    "two_socket_cpus",
]
