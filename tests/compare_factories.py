"""Before/after test data for the comparison: a small fleet, an "after" derived from any "before",
and application metrics with a known change (OpenMetrics for a real Prometheus, or CSV).

``derive_after`` replays what a Topology Manager change does to a fleet, without tmnb.analysis:
the kubelet config gets the new policy, nodes are drained (pods come back with new names, except
StatefulSet pods), exclusive allocations that a single-numa-node kubelet cannot keep are re-placed
on one NUMA zone with their memory and devices, and pods that fit no zone are rejected.
"""

from __future__ import annotations

import dataclasses
import hashlib
import socket
from collections.abc import Collection
from pathlib import Path

import numpy as np
import pandas as pd

from factories import GIB, node, pod, settings, snapshot
from tmnb.cpuset import CPUSet
from tmnb.snapshot import (
    Allocation,
    Container,
    Device,
    DeviceAllocation,
    Event,
    KubeletInfo,
    MemoryBlock,
    Node,
    OwnerRef,
    Pod,
    Setting,
    Snapshot,
)
from tmnb.twin.metrics import Timeline, Workload, _pods, histogram_p99

TAE = "TopologyAffinityError"
TAE_MESSAGE = "Resources cannot be allocated with Topology locality"


# --- a before fleet ----------------------------------------------------------------------------


def _static_kubelet() -> KubeletInfo:
    return KubeletInfo(
        settings=settings(
            cpuManagerPolicy="static",
            reservedSystemCPUs="0,8",
            memoryManagerPolicy="Static",
            reservedMemory=[{"numaNode": 0, "limits": {"memory": "1Gi"}}, {"numaNode": 1, "limits": {"memory": "1Gi"}}],
        )
    )


def _alloc(p: Pod, cpuset: str, exclusive: bool = True, **kw: object) -> Allocation:
    return Allocation(
        pod_uid=p.uid,
        namespace=p.namespace,
        pod=p.name,
        container=p.containers[0].name,
        cpuset=cpuset,
        exclusive=exclusive,
        **kw,
    )


def _workload(name: str, namespace: str, container: str, cpu: str, *, kind: str = "Deployment", **kw: object) -> Pod:
    base = name.rsplit("-", 1)[0] if kind == "StatefulSet" else name.rsplit("-", 2)[0]
    owner = (
        OwnerRef(kind="StatefulSet", name=base)
        if kind == "StatefulSet"
        else OwnerRef(kind="ReplicaSet", name=f"{base}-5d8c9", controller_kind="Deployment", controller_name=base)
    )
    requests = {"cpu": cpu, "memory": "2Gi"}
    spec = Container(name=container, requests=requests, limits=dict(requests))
    return pod(name, namespace=namespace, uid=f"uid-{name}", owner=owner, containers=[spec], **kw)


def before_fleet() -> Snapshot:
    """Three 1.32 nodes (2 NUMA zones x 8 CPUs), static CPU and memory managers, policy none.

    w1: web-a (cross-NUMA CPUs), api-a (aligned), nginx (shared); w2: web-b (memory on the other
    zone), api-b (aligned), train (GPU on the other zone); w3: pg-0 (aligned StatefulSet),
    big (10 CPUs: needs both zones), report (a Job pod that finishes later).
    """
    job = OwnerRef(kind="Job", name="report")
    pods = {
        "web-a": _workload("web-5d8c9-aaaaa", "app", "web", "2", node_name="w1"),
        "api-a": _workload("api-5d8c9-ccccc", "app", "api", "3", node_name="w1"),
        "nginx": _workload("nginx-5d8c9-eeeee", "web", "nginx", "500m", node_name="w1", qos="Burstable"),
        "web-b": _workload("web-5d8c9-bbbbb", "app", "web", "2", node_name="w2"),
        "api-b": _workload("api-5d8c9-ddddd", "app", "api", "3", node_name="w2"),
        "train": _workload("train-5d8c9-fffff", "ml", "main", "4", node_name="w2"),
        "pg": _workload("pg-0", "db", "pg", "4", kind="StatefulSet", node_name="w3"),
        "big": _workload("big-5d8c9-ggggg", "ml", "main", "10", node_name="w3"),
        "report": pod("report-x1", "w3", "1", qos="Burstable", namespace="batch", owner=job),
    }
    mem = {"type": "memory", "size": 2 * GIB}
    w1 = [
        _alloc(pods["web-a"], "3,4", numa=[0, 1], memory=[MemoryBlock(numa=[0], **mem)]),
        _alloc(pods["api-a"], "1-2,9", numa=[0], memory=[MemoryBlock(numa=[0], **mem)]),
        _alloc(pods["nginx"], "5-7,10-15", exclusive=False),
    ]
    w2 = [
        _alloc(pods["web-b"], "4,12", numa=[1], memory=[MemoryBlock(numa=[0], **mem)]),
        _alloc(pods["api-b"], "1-2,9", numa=[0], memory=[MemoryBlock(numa=[0], **mem)]),
        _alloc(
            pods["train"],
            "3,10-11,5",
            numa=[0, 1],
            memory=[MemoryBlock(numa=[0], **mem)],
            devices=[DeviceAllocation(resource="nvidia.com/gpu", ids=["gpu1"], numa=[1])],
        ),
    ]
    w3 = [
        _alloc(pods["pg"], "4-5,12-13", numa=[1], memory=[MemoryBlock(numa=[1], **mem)]),
        _alloc(pods["big"], "1-3,6-7,9-11,14-15", numa=[0, 1]),
        _alloc(pods["report"], "0,8", exclusive=False),
    ]
    gpus = [Device(resource="nvidia.com/gpu", id=f"gpu{i}", numa=[i]) for i in (0, 1)]
    nodes = [
        node("w1", "v1.32.4", kubelet=_static_kubelet(), allocations=w1),
        node("w2", "v1.32.4", kubelet=_static_kubelet(), allocations=w2, devices=gpus),
        node("w3", "v1.32.4", kubelet=_static_kubelet(), allocations=w3),
    ]
    return snapshot(nodes, list(pods.values()))


# --- what a change does to a fleet ---------------------------------------------------------------


def _reserved(n: Node) -> CPUSet:
    setting = n.kubelet.settings.get("reservedSystemCPUs")
    return CPUSet.parse(str(setting.value if setting else "") or "")


def _renamed(p: Pod) -> Pod:
    """The pod after a drain: a new uid, and a new name unless a StatefulSet or no controller made it."""
    suffix = hashlib.sha1(p.uid.encode()).hexdigest()[:5]
    keeps_name = p.owner is None or p.owner.kind == "StatefulSet"
    name = p.name if keeps_name else f"{p.name.rsplit('-', 1)[0]}-{suffix}"
    return dataclasses.replace(p, name=name, uid=f"{p.uid}-{suffix}", created="2026-12-01T12:30:00Z")


def _single_zone(a: Allocation, n: Node) -> bool:
    cpus = CPUSet.parse(a.cpuset)
    zones = {z.id for z in n.numa if CPUSet.parse(z.cpus) & cpus}
    other = {z for b in a.memory for z in b.numa} | {z for d in a.devices for z in (d.numa or [])}
    return len(zones) == 1 and other <= zones


def _place(a: Allocation, n: Node, free: dict[int, list[int]], free_devices: list[Device]) -> Allocation | None:
    """Re-place an exclusive allocation on the zone with most free CPUs that can hold it, or None."""
    need = len(CPUSet.parse(a.cpuset))
    wanted = [(d.resource, len(d.ids)) for d in a.devices]
    for zone in sorted(free, key=lambda z: -len(free[z])):
        devices = {r: [d for d in free_devices if d.resource == r and d.numa == [zone]] for r, _ in wanted}
        if len(free[zone]) < need or any(len(devices[r]) < k for r, k in wanted):
            continue
        taken, free[zone] = free[zone][:need], free[zone][need:]
        picked = [DeviceAllocation(resource=r, ids=[d.id for d in devices[r][:k]], numa=[zone]) for r, k in wanted]
        for d in picked:
            free_devices[:] = [x for x in free_devices if x.id not in d.ids]
        memory = [dataclasses.replace(b, numa=[zone]) for b in a.memory]
        return dataclasses.replace(a, cpuset=str(CPUSet(taken)), numa=[zone], memory=memory, devices=picked)
    return None


def _readmit(n: Node) -> tuple[list[Allocation], set[str]]:
    """Allocations after a single-numa-node restart, and the uids of pods that no longer fit."""
    reserved = _reserved(n)
    by_core = {c.cpu: (c.core, c.cpu) for c in n.cpus}
    free = {z.id: sorted(CPUSet.parse(z.cpus) - reserved, key=by_core.get) for z in n.numa}
    exclusive = [a for a in n.allocations if a.exclusive]
    kept = [a for a in exclusive if _single_zone(a, n)]
    used = {c for a in kept for c in CPUSet.parse(a.cpuset)} | {i for a in kept for d in a.devices for i in d.ids}
    free = {z: [c for c in cpus if c not in used] for z, cpus in free.items()}
    free_devices = [d for d in n.devices if d.id not in used]
    placed, rejected = list(kept), set()
    for a in exclusive:
        if a in kept:
            continue
        moved = _place(a, n, free, free_devices)
        if moved is None:
            rejected.add(a.pod_uid)
        else:
            placed.append(moved)
    pool = str(CPUSet(c for cpus in free.values() for c in cpus))
    placed += [dataclasses.replace(a, cpuset=pool) for a in n.allocations if not a.exclusive]
    return [a for a in placed if a.pod_uid not in rejected], rejected


def derive_after(
    before: Snapshot,
    *,
    kubelet: str | None = "v1.33.2",
    remove: Collection[str] = ("report-x1",),
    captured_at: str = "2026-12-01T13:00:00Z",
) -> Snapshot:
    """The fleet after setting ``single-numa-node`` (and upgrading to ``kubelet``) on every node, as a
    drain and restart leave it; pods named in ``remove`` have finished or been deleted meanwhile."""
    renamed = {p.uid: _renamed(p) for p in before.pods if p.name not in remove}
    nodes, events, rejected_all = [], [], set()
    for n in before.nodes:
        staying = dataclasses.replace(n, allocations=[a for a in n.allocations if a.pod_uid in renamed])
        allocations, rejected = _readmit(staying)
        rejected_all |= rejected
        new_settings = dict(n.kubelet.settings)
        new_settings["topologyManagerPolicy"] = Setting(
            value="single-numa-node", source="file", detail="/var/lib/kubelet/config.yaml"
        )
        allocations = [
            dataclasses.replace(a, pod_uid=renamed[a.pod_uid].uid, pod=renamed[a.pod_uid].name) for a in allocations
        ]
        versions = dataclasses.replace(n.versions, kubelet=kubelet) if kubelet else n.versions
        kubelet_info = dataclasses.replace(n.kubelet, settings=new_settings)
        nodes.append(dataclasses.replace(n, versions=versions, kubelet=kubelet_info, allocations=allocations))
    after_pods = []
    for uid, p in renamed.items():
        if uid in rejected_all:
            p = dataclasses.replace(p, phase="Failed", reason=TAE, message=TAE_MESSAGE)
            events.append(
                Event(
                    namespace=p.namespace,
                    kind="Pod",
                    name=p.name,
                    reason=TAE,
                    message=TAE_MESSAGE,
                    type="Warning",
                    node=p.node,
                )
            )
        after_pods.append(p)
    return dataclasses.replace(before, captured_at=captured_at, nodes=nodes, pods=after_pods, events=events)


def fleet() -> Snapshot:
    """The embedded sample fleet once ``tmnb.twin.sample`` exists, else :func:`before_fleet`."""
    try:
        from tmnb.sources.embedded import load_sample
    except ImportError:
        return before_fleet()
    return load_sample()


def same_versions(snap: Snapshot, version: str) -> Snapshot:
    """Every node on one kubelet version (to compare without the 1.33 CFS quota confounder)."""
    nodes = [dataclasses.replace(n, versions=dataclasses.replace(n.versions, kubelet=version)) for n in snap.nodes]
    return dataclasses.replace(snap, nodes=nodes)


# --- application metrics with a known change: tmnb.twin.metrics, and a latency export ----


def write_journal(timeline: Timeline, path: Path) -> Path:
    """A rollout journal for the timeline: drain, restart, uncordon."""
    first, last = timeline.rollout
    lines = [
        f'{{"time": "{first:%Y-%m-%dT%H:%M:%SZ}", "event": "drain", "node": "w1"}}',
        f'{{"time": "{(first + (last - first) / 2):%Y-%m-%dT%H:%M:%SZ}", "event": "kubelet restarted"}}',
        f'{{"time": "{last:%Y-%m-%dT%H:%M:%SZ}", "event": "uncordon", "node": "w3"}}',
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def latency_csv(path: Path, timeline: Timeline, loads: tuple[Workload, ...], *, step: int = 60, seed: int = 11) -> Path:
    """Per-pod p99 latency samples in the documented long format (what a metrics export looks like):
    the p99 a histogram of the workload's latencies reports, with 4 % noise per sample."""
    rng = np.random.default_rng(seed)
    t = np.arange(timeline.start.timestamp(), timeline.end.timestamp() + 1, step, dtype=float)
    change = timeline.rollout[1].timestamp()
    rows = []
    for w in (w for w in loads if w.latency):
        for p, times, after in _pods(w, t, change):
            p99 = np.take([histogram_p99(m) for m in w.latency], after) * rng.normal(1, 0.04, len(times))
            rows += [
                {
                    "timestamp": pd.Timestamp(s, unit="s", tz="UTC").isoformat(),
                    "query": "latency_p99",
                    "namespace": w.namespace,
                    "container": w.container,
                    "pod": p,
                    "value": v,
                }
                for s, v in zip(times, p99, strict=True)
            ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
