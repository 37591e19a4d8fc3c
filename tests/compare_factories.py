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
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.stats import norm

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
    """The embedded sample fleet once ``tmnb.sources.sample`` exists, else :func:`before_fleet`."""
    try:
        from tmnb.sources.sample import load_sample
    except ImportError:
        return before_fleet()
    return load_sample()


def same_versions(snap: Snapshot, version: str) -> Snapshot:
    """Every node on one kubelet version (to compare without the 1.33 CFS quota confounder)."""
    nodes = [dataclasses.replace(n, versions=dataclasses.replace(n.versions, kubelet=version)) for n in snap.nodes]
    return dataclasses.replace(snap, nodes=nodes)


# --- application metrics with a known change -----------------------------------------------------

#: Latency bucket bounds (seconds) of the synthetic application histogram.
BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0)


@dataclass(frozen=True)
class Workload:
    """One owner's container with its pods on each side and how its signals move across the change."""

    namespace: str
    container: str
    node: str
    pods_before: tuple[str, ...]
    pods_after: tuple[str, ...]
    cpu: tuple[float, float]  # cores used per pod, before → after
    throttled: float  # fraction of CFS periods throttled before; after, the quota and its CFS series are gone
    latency: tuple[float, float] | None  # median request latency in seconds


#: Spread (log scale) of the synthetic request latencies around their median.
LATENCY_SIGMA = 0.4


def histogram_p99(median: float) -> float:
    """The p99 that ``histogram_quantile`` reports for lognormal latencies over ``BUCKETS``: linear
    between the bounds of the bucket that holds it, as Prometheus interpolates."""
    bounds = np.array(BUCKETS)
    cdf = norm.cdf(np.log(bounds / median) / LATENCY_SIGMA)
    i = int(np.searchsorted(cdf, 0.99))
    low, f_low = (bounds[i - 1], cdf[i - 1]) if i else (0.0, 0.0)
    return float(low + (bounds[i] - low) * (0.99 - f_low) / (cdf[i] - f_low))


def shifted(median: float, pct: float) -> tuple[float, float]:
    """Medians before and after such that the reported p99 moves by exactly ``pct`` percent."""
    target = histogram_p99(median) * (1 + pct / 100)
    return median, float(brentq(lambda m: histogram_p99(m) - target, median * 0.5, median * 2, xtol=1e-12))


#: How the workloads change: 30 % slower (the regression), faster, steady without a latency
#: histogram, p99 +2.5 % (half the 5 % threshold: no alarm) and p99 +15 % (threshold + 10: a
#: regression). Throttling ends because 1.33 drops the CFS quota of exclusive CPUs.
ROLES = (
    ((1.0, 1.0), 0.10, (0.050, 0.065)),
    ((1.6, 1.5), 0.25, (0.040, 0.030)),
    ((3.0, 3.0), 0.05, None),
    ((1.2, 1.2), 0.08, shifted(0.050, 2.5)),
    ((1.4, 1.4), 0.12, shifted(0.050, 15.0)),
)


def _exclusive_running(snap: Snapshot) -> dict[tuple[str, str, str], list[Pod]]:
    """Running pods per (namespace, controller, container) holding exclusive CPUs."""
    exclusive = {(a.pod_uid, a.container) for n in snap.nodes for a in n.allocations if a.exclusive}
    found: dict[tuple[str, str, str], list[Pod]] = {}
    for p in sorted(snap.pods, key=lambda p: p.name):
        owner = p.owner.controller_name or p.owner.name if p.owner else p.name
        for c in p.containers:
            if p.phase == "Running" and (p.uid, c.name) in exclusive:
                found.setdefault((p.namespace, owner, c.name), []).append(p)
    return found


def workloads(before: Snapshot, after: Snapshot) -> tuple[Workload, ...]:
    """The first workloads with exclusive CPUs on both sides, given the roles in ``ROLES``."""
    old, new = _exclusive_running(before), _exclusive_running(after)
    keys = sorted(old.keys() & new.keys())[: len(ROLES)]
    assert len(keys) >= 2, "the fleet needs two workloads with exclusive CPUs before and after the change"
    return tuple(
        Workload(
            ns,
            container,
            old[(ns, owner, container)][0].node or "",
            tuple(p.name for p in old[(ns, owner, container)]),
            tuple(p.name for p in new[(ns, owner, container)]),
            *role,
        )
        for (ns, owner, container), role in zip(keys, ROLES, strict=False)
    )


@dataclass(frozen=True)
class Timeline:
    """When the synthetic data starts, when the rollout ran, when it ends (all UTC, whole minutes)."""

    start: pd.Timestamp
    rollout: tuple[pd.Timestamp, pd.Timestamp]
    end: pd.Timestamp

    @classmethod
    def recent(cls, hours: float = 2.0) -> Timeline:
        """Two-hour windows on each side of a rollout that ended ``hours`` + 30 minutes ago."""
        end = pd.Timestamp.now(tz="UTC").floor("min") - pd.Timedelta(minutes=20)
        done = end - pd.Timedelta(hours=hours, minutes=10)
        return cls(done - pd.Timedelta(hours=hours, minutes=20), (done - pd.Timedelta(minutes=3), done), end)

    def journal(self, path: Path) -> Path:
        first, last = self.rollout
        lines = [
            f'{{"time": "{first:%Y-%m-%dT%H:%M:%SZ}", "event": "drain", "node": "w1"}}',
            f'{{"time": "{(first + (last - first) / 2):%Y-%m-%dT%H:%M:%SZ}", "event": "kubelet restarted"}}',
            f'{{"time": "{last:%Y-%m-%dT%H:%M:%SZ}", "event": "uncordon", "node": "w3"}}',
        ]
        path.write_text("\n".join(lines) + "\n")
        return path


def _scrapes(timeline: Timeline, step: int) -> np.ndarray:
    return np.arange(timeline.start.timestamp(), timeline.end.timestamp() + 1, step, dtype=float)


def _pods(w: Workload, t: np.ndarray, change: float) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """(pod, its scrape times, which of them are after the change); a kept pod name spans both."""
    for p in dict.fromkeys((*w.pods_before, *w.pods_after)):
        lives = (
            np.ones_like(t, bool) if p in w.pods_before and p in w.pods_after else (t >= change) == (p in w.pods_after)
        )
        yield p, t[lives], (t[lives] >= change).astype(int)


def _labels(w: Workload, p: str, **extra: str) -> str:
    pairs = {"container": w.container, "namespace": w.namespace, "node": w.node, "pod": p, **extra}
    return ",".join(f'{k}="{v}"' for k, v in pairs.items())


def write_openmetrics(
    path: Path, timeline: Timeline, loads: tuple[Workload, ...], *, step: int = 30, seed: int = 7
) -> Path:
    """cAdvisor-style CPU counters and an application latency histogram, OpenMetrics for ``promtool``."""
    rng = np.random.default_rng(seed)
    t = _scrapes(timeline, step)
    change = timeline.rollout[1].timestamp()
    periods = 10 * step  # 100 ms CFS periods
    families = {
        "container_cpu_usage_seconds": lambda w, a: np.take(w.cpu, a) * step * rng.normal(1, 0.05, len(a)),
        "container_cpu_cfs_periods": lambda w, a: np.full(len(a), periods),
        "container_cpu_cfs_throttled_periods": lambda w, a: rng.binomial(periods, w.throttled, len(a)),
    }
    out = []
    for family, increments in families.items():
        out.append(f"# TYPE {family} counter")
        for w in loads:
            for p, times, after in _pods(w, t, change):
                if "cfs" in family:  # exclusive CPUs on 1.33 have no CFS quota, and cAdvisor no CFS series
                    times, after = times[after == 0], after[after == 0]
                counts = np.cumsum(increments(w, after))
                out += [
                    f"{family}_total{{{_labels(w, p)}}} {v:.3f} {s:.0f}" for s, v in zip(times, counts, strict=True)
                ]
    out.append("# TYPE http_request_duration_seconds histogram")
    bounds, per_scrape = np.array(BUCKETS), 20 * step
    for w in (w for w in loads if w.latency):
        for p, times, after in _pods(w, t, change):
            medians = np.log(np.take(w.latency, after))[:, None]
            latencies = rng.lognormal(medians, LATENCY_SIGMA, size=(len(times), per_scrape))
            buckets = np.cumsum((latencies[:, :, None] <= bounds).sum(axis=1), axis=0)
            total, sums = per_scrape * np.arange(1, len(times) + 1), np.cumsum(latencies.sum(axis=1))
            name = "http_request_duration_seconds"
            for i, s in enumerate(times):
                out += [
                    f"{name}_bucket{{{_labels(w, p, le=f'{le:g}')}}} {v} {s:.0f}"
                    for le, v in zip(BUCKETS, buckets[i], strict=True)
                ]
                out.append(f"{name}_bucket{{{_labels(w, p, le='+Inf')}}} {total[i]} {s:.0f}")
                out.append(f"{name}_count{{{_labels(w, p)}}} {total[i]} {s:.0f}")
                out.append(f"{name}_sum{{{_labels(w, p)}}} {sums[i]:.3f} {s:.0f}")
    path.write_text("\n".join([*out, "# EOF"]) + "\n")
    return path


def latency_csv(path: Path, timeline: Timeline, loads: tuple[Workload, ...], *, step: int = 60, seed: int = 11) -> Path:
    """Per-pod p99 latency samples in the documented long format (what a metrics export looks like):
    the p99 a histogram of the workload's latencies reports, with 4 % noise per sample."""
    rng = np.random.default_rng(seed)
    t = _scrapes(timeline, step)
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
