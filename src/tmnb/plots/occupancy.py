"""Figures SREs otherwise draw by hand: per-node NUMA bars, the fleet heatmap, a node's CPU map.

Functions take frames from ``tmnb.analysis.occupancy`` and return figures with a title and
labelled axes with units; ``tmnb.plots.show`` saves and displays them.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from tmnb.analysis.occupancy import NO_TOPOLOGY
from tmnb.cpuset import CPUSet
from tmnb.snapshot import Node

GIB = float(1 << 30)
RESERVED, FREE, SHARED, OFFLINE = "#7f7f7f", "#ececec", "#fbf3d5", "#ffffff"
# tab20 without its greys (reserved is grey), strong shades first so neighbours differ.
_TAB20 = plt.get_cmap("tab20").colors
_PALETTE = [_TAB20[i] for i in (*range(0, 20, 2), *range(1, 20, 2)) if i not in (14, 15)]


def _zone_label(numa: int) -> str:
    return "no NUMA" if numa == NO_TOPOLOGY else f"NUMA {numa}"


def _scale(unit: str) -> tuple[float, str]:
    return (GIB, "GiB") if unit == "bytes" else (1.0, unit)


def node_numa_bars(occ: pd.DataFrame, pods: pd.DataFrame, node: str) -> Figure:
    """Stacked bars per NUMA zone and resource: reserved, each pod's exclusive share, free."""
    mine = occ[occ["node"] == node]
    resources = list(dict.fromkeys(mine["resource"]))
    fig, axes = plt.subplots(1, max(len(resources), 1), figsize=(3.2 * max(len(resources), 1) + 1, 4.2), squeeze=False)
    owners = sorted(set(pods.loc[pods["node"] == node, "pod"]))
    colour = {p: _PALETTE[i % len(_PALETTE)] for i, p in enumerate(owners)}
    for ax, resource in zip(axes[0], resources, strict=False):
        rows = mine[mine["resource"] == resource].sort_values("numa")
        div, unit = _scale(rows["unit"].iloc[0])
        x = np.arange(len(rows))
        bottom = rows["reserved"].to_numpy() / div
        ax.bar(x, bottom, color=RESERVED, label="reserved")
        held = pods[(pods["node"] == node) & (pods["resource"] == resource)]
        for pod, part in held.groupby("pod"):
            amount = part.groupby("numa")["amount"].sum().reindex(rows["numa"], fill_value=0).to_numpy() / div
            ax.bar(x, amount, bottom=bottom, color=colour[pod], edgecolor="white", linewidth=0.5)
            for xi, (h, b) in enumerate(zip(amount, bottom, strict=True)):
                if h >= 0.08 * (rows["capacity"].max() / div):
                    ax.text(xi, b + h / 2, pod[:18], ha="center", va="center", fontsize=6.5)
            bottom = bottom + amount
        ax.bar(x, rows["free"].to_numpy() / div, bottom=bottom, color=FREE, label="free / shared")
        ax.set_xticks(x, [_zone_label(n) for n in rows["numa"]])
        ax.set_title(resource)
        if unit != "GiB":
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("NUMA zone")
        ax.set_ylabel(unit)
    legend = [Patch(color=RESERVED, label="reserved"), Patch(color=FREE, label="free / shared pool")]
    legend += [Patch(color=colour[p], label=p) for p in owners[:12]]
    fig.legend(handles=legend, loc="lower center", ncol=min(len(legend), 5), fontsize=7, frameon=False)
    fig.suptitle(f"{node}: NUMA occupancy (exclusive allocations per pod)")
    fig.tight_layout(rect=(0, 0.12 if len(legend) > 5 else 0.08, 1, 1))
    return fig


def _heatmap_rows(occ: pd.DataFrame, resource: str, group_by: str, max_rows: int) -> tuple[pd.DataFrame, list[str]]:
    """Nodes x zones fractions; groups too big for the row budget are binned into quantile rows."""
    data = occ[(occ["resource"] == resource) & (occ["numa"] != NO_TOPOLOGY)]
    grid = data.pivot_table(index=[group_by, "node"], columns="numa", values="fraction", aggfunc="mean")
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
    ax.set_title(f"Fleet {resource} occupancy per NUMA zone ({nodes} nodes)")
    fig.tight_layout()
    return fig


def cpu_map(node: Node) -> Figure:
    """Every logical CPU as a cell: rows per socket/NUMA zone, columns per core, coloured by owner."""
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
    width = max((len(v) for v in cores.values()), default=1)
    grid = np.full((len(zones) * threads, width), np.nan)
    text: dict[tuple[int, int], str] = {}
    for c in node.cpus:
        zi = zones.index((c.socket, c.numa))
        col = cores[(c.socket, c.numa)].index(c.core)
        siblings = sorted(x.cpu for x in node.cpus if x.core == c.core)
        row = zi * threads + siblings.index(c.cpu)
        grid[row, col] = index[owner[c.cpu]]
        text[(row, col)] = str(c.cpu)
    fig, ax = plt.subplots(figsize=(min(max(7.0, 3 + 0.42 * width), 22), max(3.0, 1.2 + 0.42 * len(grid))))
    cmap = ListedColormap(colours).with_extremes(bad="#ffffff")
    ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=len(names) - 0.5, aspect="auto", interpolation="nearest")
    for (row, col), label in text.items():
        ax.text(col, row, label, ha="center", va="center", fontsize=6)
    for boundary in range(threads, len(grid), threads):
        ax.axhline(boundary - 0.5, color="black", linewidth=1.2)
    ax.set_yticks(
        [zi * threads + (threads - 1) / 2 for zi in range(len(zones))],
        [f"socket {s} / NUMA {n}" for s, n in zones],
    )
    ax.set_xticks(range(width), [str(i) for i in range(width)], fontsize=6)
    ax.set_xlabel(f"physical core within the NUMA zone (each column = 1 core, {threads} thread rows)")
    ax.set_ylabel("socket / NUMA zone")
    ax.set_title(f"{node.name}: CPU map by owner ({len(node.cpus)} logical CPUs)")
    handles = [
        Patch(facecolor=c, edgecolor="#999999", label=n)
        for n, c in zip(names, colours, strict=True)
        if n in set(owner.values())
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7, frameon=False)
    fig.tight_layout()
    return fig
