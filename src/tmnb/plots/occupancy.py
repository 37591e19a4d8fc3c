"""Figures SREs otherwise draw by hand: per-node NUMA bars, the fleet heatmap, a node's CPU map.

Functions take frames from ``tmnb.analysis.occupancy`` and return figures with a title and
labelled axes with units; ``tmnb.plots.show`` saves and displays them.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from tmnb.analysis.occupancy import NO_TOPOLOGY
from tmnb.cpuset import CPUSet
from tmnb.plots.figures import show
from tmnb.snapshot import Node, Snapshot

GIB = float(1 << 30)
RESERVED, FREE, SHARED, OFFLINE = "#7f7f7f", "#ececec", "#fbf3d5", "#ffffff"
# tab20 without its greys (reserved is grey), strong shades first so neighbours differ.
_TAB20 = matplotlib.color_sequences["tab20"]
_PALETTE = [_TAB20[i] for i in (*range(0, 20, 2), *range(1, 20, 2)) if i not in (14, 15)]


def _zone_label(numa: int) -> str:
    return "no NUMA" if numa == NO_TOPOLOGY else f"NUMA {numa}"


def _scale(unit: str) -> tuple[float, str]:
    return (GIB, "GiB") if unit == "bytes" else (1.0, unit)


#: Above this many NUMA zones a row of bars no longer reads: the node is drawn as a heatmap.
MAX_BAR_ZONES = 8
#: Smallest font in any figure (points); smaller text is unreadable at the report's scale.
MIN_FONT = 8.0


def node_numa_bars(occ: pd.DataFrame, pods: pd.DataFrame, node: str) -> Figure:
    """Per NUMA zone and resource: reserved, each pod's exclusive share, free.

    Up to ``MAX_BAR_ZONES`` zones: horizontal stacked bars (zone labels never collide), a pod's
    name written inside its segment only when it fits there, every pod in the legend. More
    zones: a zones x resources heatmap of the share held, annotated with the amounts.
    """
    mine = occ[occ["node"] == node]
    if mine["numa"].nunique() > MAX_BAR_ZONES:
        return _node_heatmap(mine, node)
    resources = list(dict.fromkeys(mine["resource"]))
    zones = sorted(set(mine["numa"]), key=lambda n: (n == NO_TOPOLOGY, n))  # shared axis; "no NUMA" last
    columns = max(len(resources), 1)
    fig, axes = plt.subplots(
        1, columns, figsize=(3.6 * columns + 1.2, 1.6 + 0.42 * len(zones)), squeeze=False, sharey=True
    )
    owners = sorted(set(pods.loc[pods["node"] == node, "pod"]))
    colour = {p: _PALETTE[i % len(_PALETTE)] for i, p in enumerate(owners)}
    segments: list[tuple[Axes, float, float, float, str]] = []
    for ax, resource in zip(axes[0], resources, strict=False):
        rows = mine[mine["resource"] == resource].set_index("numa").reindex(zones)
        div, unit = _scale(str(rows["unit"].dropna().iloc[0]))
        y = np.arange(len(zones))
        left = rows["reserved"].fillna(0).to_numpy() / div
        ax.barh(y, left, color=RESERVED, height=0.7)
        held = pods[(pods["node"] == node) & (pods["resource"] == resource)]
        for pod, part in held.groupby("pod"):
            amount = part.groupby("numa")["amount"].sum().reindex(zones, fill_value=0).to_numpy() / div
            ax.barh(y, amount, left=left, color=colour[str(pod)], edgecolor="white", linewidth=0.5, height=0.7)
            segments += [(ax, yi, lo, w, str(pod)) for yi, (lo, w) in enumerate(zip(left, amount, strict=True)) if w]
            left = left + amount
        ax.barh(y, rows["free"].fillna(0).to_numpy() / div, left=left, color=FREE, height=0.7)
        ax.set_yticks(y, [_zone_label(n) for n in zones])
        ax.set_title(resource)
        if unit != "GiB":
            ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=5))
        else:
            ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
        ax.set_xlabel(unit)
    axes[0][0].set_ylabel("NUMA zone")
    axes[0][0].invert_yaxis()  # shared by all: zone 0 on top
    legend = [Patch(color=RESERVED, label="reserved"), Patch(color=FREE, label="free / shared pool")]
    legend += [Patch(color=colour[p], label=p) for p in owners]
    ncol = min(len(legend), 4)
    fig.suptitle(f"{node}: NUMA occupancy (exclusive allocations per pod)")
    fig.legend(handles=legend, loc="lower center", ncol=ncol, fontsize=MIN_FONT, frameon=False)
    legend_rows = -(-len(legend) // ncol)
    fig.set_figheight(fig.get_figheight() + 0.22 * legend_rows)
    fig.tight_layout(rect=(0, 0.22 * legend_rows / fig.get_figheight() + 0.02, 1, 1))
    _label_fitting_segments(fig, segments)
    return fig


def _label_fitting_segments(fig: Figure, segments: list[tuple[Axes, float, float, float, str]]) -> None:
    """Write each pod's name inside its bar segment, only where the rendered text fits (the legend
    names every pod anyway)."""
    for ax, y, left, width, pod in segments:
        text = ax.text(left + width / 2, y, pod, ha="center", va="center", fontsize=MIN_FONT, clip_on=True)
        box = text.get_window_extent()  # drawn by the figure's own renderer
        (x0, _), (x1, _) = ax.transData.transform([(left, y), (left + width, y)])
        if box.width + 4 > abs(x1 - x0):
            text.remove()


def _node_heatmap(mine: pd.DataFrame, node: str) -> Figure:
    """Zones x resources, coloured by the share reserved or held exclusively; zones with none of
    a resource are blank, so a wide machine (16, 34 zones) reads in one glance."""
    resources = list(dict.fromkeys(mine["resource"]))
    capacity = mine.groupby("numa")["capacity"].sum()
    zones = sorted(capacity[capacity > 0].index)
    bare = sorted(capacity[capacity <= 0].index)
    frame = mine.assign(used=mine["reserved"] + mine["exclusive"])
    share = frame.pivot_table(index="numa", columns="resource", values="used", aggfunc="sum").reindex(
        index=zones, columns=resources
    ) / frame.pivot_table(index="numa", columns="resource", values="capacity", aggfunc="sum").reindex(
        index=zones, columns=resources
    ).replace(0, np.nan)
    fig, ax = plt.subplots(figsize=(2.0 + 1.7 * len(resources), max(3.4, 1.4 + 0.3 * len(zones))))
    cmap = plt.get_cmap("magma_r").with_extremes(bad="#ffffff")
    image = ax.imshow(share.to_numpy(dtype=float), aspect="auto", cmap=cmap, vmin=0, vmax=1, interpolation="nearest")
    for (zi, ri), value in np.ndenumerate(share.to_numpy(dtype=float)):
        row = frame[(frame["numa"] == zones[zi]) & (frame["resource"] == resources[ri])]
        if row.empty or not row["capacity"].sum():
            ax.text(ri, zi, "none", ha="center", va="center", fontsize=MIN_FONT, color="#999999")
            continue
        div = _scale(str(row["unit"].iloc[0]))[0]
        label = f"{row['used'].sum() / div:.0f}/{row['capacity'].sum() / div:.0f}"
        ax.text(ri, zi, label, ha="center", va="center", fontsize=MIN_FONT, color="white" if value > 0.6 else "black")
    ax.set_xticks(range(len(resources)), [_short_resource(r, mine) for r in resources], fontsize=MIN_FONT + 1)
    ax.set_yticks(range(len(zones)), [_zone_label(z) for z in zones], fontsize=MIN_FONT)
    ax.set_xlabel("resource (cells: reserved + exclusive / capacity)")
    ax.set_ylabel("NUMA zone")
    ax.xaxis.set_ticks_position("top")
    ax.xaxis.set_label_position("top")
    fig.colorbar(image, ax=ax, label="share reserved or held", shrink=0.8)
    fig.suptitle(f"{node}: NUMA occupancy ({len(capacity)} zones; per-pod holdings in the table below)")
    if bare:
        note = f"NUMA {CPUSet(bare)}: none of these resources (not drawn)"
        fig.text(0.01, 0.01, note, fontsize=MIN_FONT + 1, ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.04 if bare else 0, 1, 1))
    return fig


def _short_resource(resource: str, mine: pd.DataFrame) -> str:
    unit = _scale(str(mine.loc[mine["resource"] == resource, "unit"].iloc[0]))[1]
    return f"{resource.rsplit('/', 1)[-1]}\n({unit})"


def _heatmap_rows(occ: pd.DataFrame, resource: str, group_by: str, max_rows: int) -> tuple[pd.DataFrame, list[str]]:
    """Nodes x zones fractions; groups too big for the row budget are binned into quantile rows."""
    data = occ[(occ["resource"] == resource) & (occ["numa"] != NO_TOPOLOGY)]
    # A zone with none of the resource (a CPU-less memory zone) is blank, not "0 % held".
    data = data.assign(fraction=data["fraction"].where(data["capacity"] - data["reserved"] > 0))
    grid = data.pivot(index=[group_by, "node"], columns="numa", values="fraction")  # keeps all-blank zones
    grid["_mean"] = grid.mean(axis=1)
    groups = grid.groupby(level=0, sort=True)
    budget = max(max_rows // max(groups.ngroups, 1), 1)
    blocks, labels = [], []
    for name, block in groups:
        block = block.sort_values("_mean", ascending=False).droplevel(0)
        if len(block) <= budget:
            blocks.append(block)
            labels += [f"{name} · {n}" for n in block.index]
            continue
        chunks = np.array_split(np.arange(len(block)), budget)
        binned = pd.DataFrame([block.iloc[c].mean() for c in chunks])
        blocks.append(binned)
        labels += [f"{name} · {len(c)} nodes (rank {c[0] + 1}-{c[-1] + 1})" for c in chunks]
    return pd.concat(blocks, ignore_index=True).drop(columns="_mean"), labels


def fleet_heatmap(occ: pd.DataFrame, resource: str = "cpu", group_by: str = "pool", max_rows: int = 80) -> Figure:
    """Nodes x NUMA zones coloured by fraction pinned; readable at thousands of nodes.

    Nodes are grouped (pool or shape), sorted by load, and a group larger than its share of
    ``max_rows`` is shown as rows of equal-sized bins (mean of each bin), labelled with ranks.
    """
    grid, labels = _heatmap_rows(occ, resource, group_by, max_rows)
    nodes = occ.loc[occ["resource"] == resource, "node"].nunique()
    fig, ax = plt.subplots(figsize=(max(7.0, 4 + 0.45 * grid.shape[1]), max(3.5, 1.6 + 0.16 * len(grid))))
    cmap = plt.get_cmap("magma_r").with_extremes(bad="#f4f4f4")
    image = ax.imshow(grid.to_numpy(dtype=float), aspect="auto", cmap=cmap, vmin=0, vmax=1, interpolation="nearest")
    ax.set_xticks(range(grid.shape[1]), [str(c) for c in grid.columns])
    ax.set_yticks(range(len(labels)), labels, fontsize=6.5 if len(labels) > 40 else 8)
    ax.set_xlabel("NUMA zone")
    ax.set_ylabel(f"nodes grouped by {group_by}, most loaded first")
    fig.colorbar(image, ax=ax, label=f"fraction of allocatable {resource} held exclusively")
    ax.set_title(f"Fleet {resource} occupancy per NUMA zone ({nodes} nodes; grey: the zone has no {resource})")
    fig.tight_layout()
    return fig


#: A CPU map row holds at most this many cores; wider zones wrap onto more rows (figure <= ~2,000 px).
CPU_MAP_COLUMNS = 32


def cpu_map(node: Node) -> Figure:
    """Every logical CPU as a cell: rows per socket/NUMA zone (and thread), columns per core,
    coloured by owner; zones wider than ``CPU_MAP_COLUMNS`` cores wrap onto further rows."""
    reserved = CPUSet.parse(str(getattr(node.kubelet.settings.get("reservedSystemCPUs"), "value", "") or ""))
    owner = {cpu: "shared pool" for cpu in (c.cpu for c in node.cpus)}
    owner.update({cpu: "reserved" for cpu in reserved})
    for a in node.allocations:
        if a.exclusive:
            owner.update({cpu: a.pod for cpu in CPUSet.parse(a.cpuset)})
    owner.update({c.cpu: "offline" for c in node.cpus if not c.online})
    pods = sorted({o for o in owner.values() if o not in {"shared pool", "reserved", "offline"}})
    names = ["offline", "shared pool", "reserved", *pods]
    colours = [OFFLINE, SHARED, RESERVED, *(_PALETTE[i % len(_PALETTE)] for i in range(len(pods)))]
    index = {n: i for i, n in enumerate(names)}

    zones = sorted({(c.socket, c.numa) for c in node.cpus})
    cores = {z: sorted({c.core for c in node.cpus if (c.socket, c.numa) == z}) for z in zones}
    threads = max((sum(1 for c in node.cpus if c.core == core) for core in {c.core for c in node.cpus}), default=1)
    widest = max((len(v) for v in cores.values()), default=1)
    bands = -(-widest // CPU_MAP_COLUMNS)
    width = -(-widest // bands)
    grid = np.full((len(zones) * bands * threads, width), np.nan)
    text: dict[tuple[int, int], str] = {}
    for c in node.cpus:
        zi = zones.index((c.socket, c.numa))
        band, col = divmod(cores[(c.socket, c.numa)].index(c.core), width)
        siblings = sorted(x.cpu for x in node.cpus if x.core == c.core)
        row = (zi * bands + band) * threads + siblings.index(c.cpu)
        grid[row, col] = index[owner[c.cpu]]
        text[(row, col)] = str(c.cpu)
    fig, ax = plt.subplots(figsize=(4.5 + 0.36 * width, 1.3 + 0.3 * len(grid)))
    cmap = ListedColormap(colours).with_extremes(bad="#ffffff")
    ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=len(names) - 0.5, aspect="auto", interpolation="nearest")
    for (row, col), label in text.items():
        ax.text(col, row, label, ha="center", va="center", fontsize=MIN_FONT, in_layout=False)
    for boundary in range(threads, len(grid), threads):
        zone_edge = boundary % (bands * threads) == 0
        ax.axhline(boundary - 0.5, color="black", linewidth=1.4 if zone_edge else 0.4)
    ticks, labels = [], []
    for zi, (s, n) in enumerate(zones):
        for band in range(bands):
            ticks.append((zi * bands + band) * threads + (threads - 1) / 2)
            part = f", cores {band * width}-{min((band + 1) * width, len(cores[(s, n)])) - 1}" if bands > 1 else ""
            labels.append(f"socket {s} / NUMA {n}{part}")
    ax.set_yticks(ticks, labels, fontsize=MIN_FONT + 1)
    step = 1 if width <= 16 else 2
    ax.set_xticks(range(0, width, step), [str(i) for i in range(0, width, step)], fontsize=MIN_FONT)
    wrapped = f", rows of {width} cores" if bands > 1 else ""
    ax.set_xlabel(f"physical core within the row (each column = 1 core, {threads} thread row(s){wrapped})")
    ax.set_ylabel("socket / NUMA zone")
    ax.set_title(f"{node.name}: CPU map by owner ({len(node.cpus)} logical CPUs)")
    handles = [
        Patch(facecolor=c, edgecolor="#999999", label=n)
        for n, c in zip(names, colours, strict=True)
        if n in set(owner.values())
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=MIN_FONT, frameon=False)
    fig.tight_layout()
    return fig


def show_nodes(
    occ: pd.DataFrame, held: pd.DataFrame, snapshot: Snapshot, nodes: list[str], out_dir: str | Path
) -> list[Path]:
    """Each node's NUMA bars, then its CPU map, saved into the run folder and shown in that order."""
    paths = []
    for name in nodes:
        paths.append(show(node_numa_bars(occ, held, name), out_dir, f"{name}-numa"))
        paths.append(show(cpu_map(snapshot.node(name)), out_dir, f"{name}-cpu-map"))
    return paths
