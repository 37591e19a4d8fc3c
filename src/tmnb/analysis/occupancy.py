"""Per-NUMA-zone occupancy: what is reserved, pinned to pods, shared and free, per resource.

One tidy frame (node, zone, resource) feeds the per-node bars, the fleet heatmap and the
readiness report. CPUs count logical CPUs; memory and hugepages are bytes; devices are counts.
Nodes that only publish NodeResourceTopology objects are read from those zones instead.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from tmnb.analysis.checklist import NEXT_TARGET
from tmnb.analysis.inventory import shape_of
from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.parse.quantity import parse_quantity
from tmnb.report.commands import command
from tmnb.report.tables import quantity, some
from tmnb.report.verdict import Verdict
from tmnb.snapshot import Node, Snapshot
from tmnb.sources.resolve import source_argument

COLUMNS = ["node", "pool", "shape", "numa", "resource", "unit", "capacity", "reserved", "exclusive", "free", "fraction"]
POD_COLUMNS = ["node", "numa", "resource", "unit", "namespace", "pod", "container", "amount"]
POOL_LABELS = (
    "tmnb.dev/pool",
    "node.kubernetes.io/pool",
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
)
NO_TOPOLOGY = -1
_HUGEPAGE_BYTES = {"2Mi": 2 << 20, "1Gi": 1 << 30}


def pool_of(node: Node, label: str | None = None) -> str:
    keys = (label,) if label else POOL_LABELS
    return next((node.labels[k] for k in keys if k in node.labels), "(no pool)")


def _setting(node: Node, name: str) -> object:
    setting = node.kubelet.settings.get(name)
    return None if setting is None else setting.value


def _reserved_memory(node: Node) -> dict[tuple[int, str], int]:
    out: dict[tuple[int, str], int] = {}
    entries = _setting(node, "reservedMemory")
    for entry in entries if isinstance(entries, list) else []:
        for kind, qty in entry.get("limits", {}).items():
            out[(int(entry["numaNode"]), kind)] = int(parse_quantity(qty))
    return out


def _cpu_rows(node: Node) -> Iterator[tuple[int, str, str, float, float, float]]:
    reserved = CPUSet.parse(str(_setting(node, "reservedSystemCPUs") or ""))
    pinned = CPUSet(c for a in node.allocations if a.exclusive for c in CPUSet.parse(a.cpuset))
    for zone in node.numa:
        cpus = CPUSet.parse(zone.cpus)
        yield zone.id, "cpu", "cpus", len(cpus), len(cpus & reserved), len(cpus & pinned)


def _memory_rows(node: Node) -> Iterator[tuple[int, str, str, float, float, float]]:
    reserved = _reserved_memory(node)
    used: dict[tuple[int, str], float] = defaultdict(float)
    for alloc in node.allocations:
        for block in alloc.memory:
            for numa in block.numa:
                used[(numa, block.type)] += block.size / len(block.numa)
    for zone in node.numa:
        yield (
            zone.id,
            "memory",
            "bytes",
            zone.memory_total,
            reserved.get((zone.id, "memory"), 0),
            used[(zone.id, "memory")],
        )
        for pages in zone.hugepages:
            kind = f"hugepages-{pages.size}"
            size = _HUGEPAGE_BYTES.get(pages.size) or int(parse_quantity(pages.size))
            yield zone.id, kind, "bytes", pages.total * size, reserved.get((zone.id, kind), 0), used[(zone.id, kind)]


def _device_rows(node: Node) -> Iterator[tuple[int, str, str, float, float, float]]:
    allocated = {i for a in node.allocations for d in a.devices for i in d.ids}
    counts: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])
    for dev in node.devices:
        for numa in dev.numa or [NO_TOPOLOGY]:
            counts[(numa, dev.resource)][0] += 1
            counts[(numa, dev.resource)][1] += dev.id in allocated
    for (numa, resource), (total, used) in sorted(counts.items()):
        yield numa, resource, "devices", total, 0, used


def _nrt_rows(node: Node) -> Iterator[tuple[int, str, str, float, float, float]]:
    for zone in node.nrt:
        if zone.type != "Node" or not zone.name.startswith("node-"):
            continue
        numa = int(zone.name.removeprefix("node-"))
        for res in zone.resources:
            capacity, allocatable, available = (
                float(parse_quantity(q)) for q in (res.capacity, res.allocatable, res.available)
            )
            unit = (
                "cpus"
                if res.name == "cpu"
                else "bytes"
                if res.name == "memory" or res.name.startswith("hugepages-")
                else "devices"
            )
            yield numa, res.name, unit, capacity, capacity - allocatable, allocatable - available


def node_occupancy(node: Node, pool_label: str | None = None) -> list[dict[str, object]]:
    pool, shape = pool_of(node, pool_label), shape_of(node).label if node.cpus else "(from NodeResourceTopology)"
    sources = (_cpu_rows, _memory_rows, _device_rows) if node.numa else (_nrt_rows,)
    rows = []
    for source in sources:
        for numa, resource, unit, capacity, reserved, exclusive in source(node):
            free = max(capacity - reserved - exclusive, 0)
            usable = capacity - reserved
            rows.append(
                {
                    "node": node.name,
                    "pool": pool,
                    "shape": shape,
                    "numa": numa,
                    "resource": resource,
                    "unit": unit,
                    "capacity": capacity,
                    "reserved": reserved,
                    "exclusive": exclusive,
                    "free": free,
                    "fraction": exclusive / usable if usable > 0 else 0.0,
                }
            )
    return rows


def occupancy(snapshot: Snapshot, pool_label: str | None = None) -> pd.DataFrame:
    """Tidy frame, one row per (node, NUMA zone, resource); ``fraction`` = exclusive / (capacity - reserved)."""
    rows = [row for node in snapshot.nodes for row in node_occupancy(node, pool_label)]
    return pd.DataFrame(rows, columns=COLUMNS)


def pool_summary(occ: pd.DataFrame) -> pd.DataFrame:
    """Per pool and resource: nodes, totals and the fraction held exclusively (GiB for bytes)."""
    frame = occ.assign(scale=occ["unit"].map(lambda u: float(1 << 30) if u == "bytes" else 1.0))
    for column in ("capacity", "reserved", "exclusive", "free"):
        frame[column] = frame[column] / frame["scale"]
    frame["unit"] = frame["unit"].replace({"bytes": "GiB"})
    summary = frame.groupby(["pool", "resource", "unit"], as_index=False).agg(
        nodes=("node", "nunique"),
        capacity=("capacity", "sum"),
        reserved=("reserved", "sum"),
        exclusive=("exclusive", "sum"),
        free=("free", "sum"),
    )
    totals = ["capacity", "reserved", "exclusive", "free"]
    summary[totals] = summary[totals].round(1)
    # the share unrounded: the table shows it to 0.1 %, as the verdict's lines (never a 10 % step)
    summary["fraction"] = (summary["exclusive"] / (summary["capacity"] - summary["reserved"])).fillna(0)
    return summary


#: What "most loaded" means when 02 picks the nodes to draw: the share the pool table shows.
LOAD_MEASURE = "share of allocatable CPUs held exclusively"


def cpu_load(occ: pd.DataFrame) -> pd.Series:
    """Per node, the share of its allocatable CPUs (capacity less reserved) held exclusively by pods:
    the figure the tables show for a node, not one NUMA zone's."""
    cpu = occ[occ["resource"] == "cpu"].groupby("node")[["capacity", "reserved", "exclusive"]].sum()
    usable = cpu["capacity"] - cpu["reserved"]
    return (cpu["exclusive"] / usable.where(usable > 0)).fillna(0.0)


def pick_nodes(occ: pd.DataFrame, wanted: list[str] | None = None, count: int = 3) -> list[str]:
    """The nodes to draw in detail: those asked for (all must exist), else the most loaded by
    ``cpu_load`` (ties by name)."""
    known = set(occ["node"])
    if wanted:
        unknown = sorted(set(wanted) - known)
        if unknown:
            raise InputError(
                f"unknown node(s) {', '.join(unknown)}; the snapshot has {len(known)} nodes", where="nodes"
            )
        return list(wanted)
    load = cpu_load(occ).rename("load").reset_index()
    return list(load.sort_values(["load", "node"], ascending=[False, True], kind="stable")["node"][:count])


def detail_note(occ: pd.DataFrame, detail: list[str], source: str, wanted: list[str] | None = None) -> str:
    """Which nodes the detail figures draw, why those, and how to draw others: a report that shows a
    subset says so."""
    total = occ["node"].nunique()
    load = cpu_load(occ)
    shares = ", ".join(f"{node} {load.get(node, 0.0):.1%}".replace("%", " %") for node in detail)
    why = "as asked" if wanted else f"the {len(detail)} most loaded by {LOAD_MEASURE}: {shares}"
    note = f"Drawn in detail: **{', '.join(detail)}** ({why}, of {total} node(s))."
    if len(detail) < total:
        others = sorted(set(occ["node"]) - set(detail))
        draw = command("run", "02-numa-occupancy", params={"source": source_argument(source), "nodes": others[:1]})
        note += f" Not drawn: {some(others, 8)}. To draw any of them: `{draw}`"
    return note


def holdings(held: pd.DataFrame, nodes: list[str]) -> pd.DataFrame:
    """The exclusive holdings (``pod_occupancy``) on ``nodes``, by node, resource, zone and pod."""
    return held[held["node"].isin(nodes)].sort_values(["node", "resource", "numa", "pod"])


def results(occ: pd.DataFrame, detail: list[str], figures: list[Path]) -> dict[str, Any]:
    """What an occupancy run hands whoever scheduled it: the figures written, the nodes drawn in
    detail and the pools seen."""
    return {"figures": [f.name for f in figures], "detail_nodes": detail, "pools": sorted(set(occ["pool"]))}


def pod_occupancy(snapshot: Snapshot, node: str | None = None) -> pd.DataFrame:
    """What each container holds exclusively in each zone: CPUs, memory blocks, devices."""
    rows = []
    for n in snapshot.nodes:
        if node is not None and n.name != node:
            continue
        zones = {z.id: CPUSet.parse(z.cpus) for z in n.numa}
        device_numa = {d.id: d.numa or [NO_TOPOLOGY] for d in n.devices}
        for a in n.allocations:
            base = {"node": n.name, "namespace": a.namespace, "pod": a.pod, "container": a.container}
            if a.exclusive:
                cpus = CPUSet.parse(a.cpuset)
                rows += [
                    {**base, "numa": z, "resource": "cpu", "unit": "cpus", "amount": len(cpus & zc)}
                    for z, zc in zones.items()
                    if cpus & zc
                ]
            for block in a.memory:
                rows += [
                    {**base, "numa": z, "resource": block.type, "unit": "bytes", "amount": block.size / len(block.numa)}
                    for z in block.numa
                ]
            for d in a.devices:
                for dev_id in d.ids:
                    for z in device_numa.get(dev_id, [NO_TOPOLOGY]):
                        rows.append({**base, "numa": z, "resource": d.resource, "unit": "devices", "amount": 1})
    return pd.DataFrame(rows, columns=POD_COLUMNS)


def verdict(occ: pd.DataFrame, source: str, *, full: float = 0.9) -> Verdict:
    """Where exclusive room is left: the most loaded pools and the NUMA zones nearly full of pinned
    CPUs (a pod needing one zone cannot land there), then the readiness report to run next."""
    cpu = occ[(occ["resource"] == "cpu") & (occ["capacity"] > 0)]
    pools = cpu.groupby("pool")[["exclusive", "capacity", "reserved"]].sum()
    share = (pools["exclusive"] / (pools["capacity"] - pools["reserved"]).clip(lower=1)).sort_values(ascending=False)
    lines = [f"**{pool}**: {quantity(s, 'share')} of allocatable CPUs held exclusively" for pool, s in share.items()]
    hot = cpu[cpu["fraction"] >= full]
    zones = [
        f"**{node}**: NUMA {CPUSet(int(z) for z in part['numa'])} ≥ {100 * full:.0f} % pinned"
        for node, part in hot.groupby("node")
    ]
    nodes = occ["node"].nunique()
    headline = (
        f"{len(zones)} of {nodes} node(s) have NUMA zones nearly full of pinned CPUs: "
        "new single-zone pods will not fit there."
        if zones
        else f"No NUMA zone on the {nodes} node(s) is nearly full of pinned CPUs."
    )
    next_report = command("run", "03-readiness", params={"source": source_argument(source), "target": NEXT_TARGET})
    return Verdict(
        "warn" if zones else "ok",
        headline,
        [
            ("Nearly full zones", zones),
            ("Pools, most loaded first", lines),
            ("What to do next", ["Check a planned change against these nodes:"]),
        ],
        [next_report],
    )
