"""Figures are built from real frames and carry titles, axis labels and units."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from factories import busy_snapshot, node, snapshot
from tmnb import plots
from tmnb.analysis.occupancy import occupancy, pod_occupancy
from tmnb.plots.figures import DPI
from tmnb.sources.embedded import load_sample

#: A figure wider than this no longer fits a screen.
MAX_WIDTH_PX = 2000


def overlapping_text(fig) -> list[tuple[str, str]]:
    """Pairs of visible texts that collide when drawn: the tick labels of each axis, and the texts
    written inside an axes. A figure a person must read has none."""
    fig.canvas.draw()
    groups = []
    for ax in fig.axes:
        groups += [ax.get_xticklabels(), ax.get_yticklabels(), ax.texts]
    clashes = []
    for group in groups:
        shown = [(t.get_text(), t.get_window_extent()) for t in group if t.get_visible() and t.get_text()]
        for i, (a, box_a) in enumerate(shown):
            clashes += [(a, b) for b, box_b in shown[i + 1 :] if box_a.overlaps(box_b)]
    return clashes


@pytest.fixture
def busy():
    return busy_snapshot()


def labels(ax):
    return ax.get_title(), ax.get_xlabel(), ax.get_ylabel()


def test_node_bars(busy, tmp_path):
    occ, pods = occupancy(busy), pod_occupancy(busy)
    fig = plots.node_numa_bars(occ, pods, "w1")
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["cpu", "memory", "example.com/nic", "nvidia.com/gpu"]
    cpu, mem = fig.axes[0], fig.axes[1]
    assert labels(cpu)[1:] == ("cpus", "NUMA zone")
    assert mem.get_xlabel() == "GiB"
    assert [t.get_text() for t in cpu.get_yticklabels()] == ["NUMA 0", "NUMA 1", "no NUMA"]
    assert {t.get_text() for t in cpu.texts} <= {"pg-0", "train"}
    assert {t.get_text() for t in fig.legends[0].get_texts()} >= {"pg-0", "train", "reserved"}
    assert "w1" in fig._suptitle.get_text()
    path = plots.save(fig, tmp_path, "w1 bars")
    assert path.name == "w1_bars.png" and path.stat().st_size > 5000


def test_show_nodes_writes_bars_then_cpu_map_per_node(busy, tmp_path):
    paths = plots.show_nodes(occupancy(busy), pod_occupancy(busy), busy, ["w1"], tmp_path)
    assert [p.name for p in paths] == ["w1-numa.png", "w1-cpu-map.png"]
    assert all(p.parent == tmp_path and p.stat().st_size > 5000 for p in paths)


def test_cpu_map_colours_every_cpu_by_owner(busy):
    fig = plots.cpu_map(busy.nodes[0])
    ax = fig.axes[0]
    assert labels(ax)[2] == "socket / NUMA zone"
    assert "16 logical CPUs" in ax.get_title()
    assert sorted(int(t.get_text()) for t in ax.texts) == list(range(16))
    legend = {t.get_text() for t in ax.get_legend().get_texts()}
    assert legend == {"reserved", "shared pool", "pg-0", "train"}


@pytest.mark.parametrize(("nodes", "max_rows"), [(2, 80), (300, 40)])
def test_fleet_heatmap_bins_large_groups(nodes, max_rows):
    snap = snapshot([node(f"n{i:04d}") for i in range(nodes)])
    fig = plots.fleet_heatmap(occupancy(snap), max_rows=max_rows)
    ax = fig.axes[0]
    rows = len(ax.get_yticklabels())
    assert rows == min(nodes, max_rows)
    assert f"({nodes} nodes;" in ax.get_title()
    assert ax.get_xlabel() == "NUMA zone"
    assert "fraction" in fig.axes[1].get_ylabel()
    if nodes > max_rows:
        assert "nodes (rank 1-" in ax.get_yticklabels()[0].get_text()


def test_overlap_check_catches_crowded_tick_labels():
    """The check itself can fail: 34 long labels on a narrow axis collide."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar(range(34), range(34))
    ax.set_xticks(range(34), [f"NUMA {i}" for i in range(34)])
    ax.text(5, 10, "spark-executor-1")
    ax.text(5.5, 10, "spark-executor-2")
    clashes = overlapping_text(fig)
    assert ("NUMA 0", "NUMA 1") in clashes and ("spark-executor-1", "spark-executor-2") in clashes
    plt.close(fig)


def _readable(fig, tmp_path, name):
    import matplotlib.pyplot as plt
    from PIL import Image

    assert overlapping_text(fig) == [], name
    small = {t.get_text() for ax in fig.axes for t in ax.texts if t.get_fontsize() < 8}
    assert not small, f"{name}: text under 8 pt: {sorted(small)[:5]}"
    width, _ = Image.open(plots.save(fig, tmp_path, name)).size
    plt.close(fig)
    assert width <= MAX_WIDTH_PX, f"{name} is {width} px wide"


@pytest.mark.parametrize("name", [n.name for n in load_sample().nodes])
def test_every_sample_node_figure_reads(name, tmp_path):
    """2, 4, 8, 16 and 34 NUMA zones: no overlapping labels, no tiny text, no figure wider than a screen."""
    snap = load_sample()
    occ, pods = occupancy(snap), pod_occupancy(snap)
    _readable(plots.node_numa_bars(occ, pods, name), tmp_path, f"{name}-numa")
    _readable(plots.cpu_map(snap.node(name)), tmp_path, f"{name}-cpu-map")


def test_fleet_heatmaps_read(tmp_path):
    occ = occupancy(load_sample())
    for resource in ("cpu", "memory"):
        _readable(plots.fleet_heatmap(occ, resource), tmp_path, f"fleet-{resource}")


def test_more_than_eight_zones_is_a_heatmap_not_a_bar_row():
    snap = load_sample()
    wide = next(n.name for n in snap.nodes if len({c.numa for c in n.cpus}) > 8)
    fig = plots.node_numa_bars(occupancy(snap), pod_occupancy(snap), wide)
    assert fig.axes[0].images and not fig.axes[0].patches
    assert DPI * fig.get_size_inches()[0] <= MAX_WIDTH_PX


def test_fleet_heatmap_leaves_zones_without_the_resource_blank():
    """gb200's GPU memory zones hold no CPUs: blank cells, not a 0 % that reads as 'free'."""
    occ = occupancy(load_sample())
    fig = plots.fleet_heatmap(occ, "cpu")
    grid = fig.axes[0].images[0].get_array()
    row = [t.get_text() for t in fig.axes[0].get_yticklabels()].index("gb200 · gb200-01")
    cpu_zones = set(occ[(occ["node"] == "gb200-01") & (occ["resource"] == "cpu") & (occ["capacity"] > 0)]["numa"])
    for column, zone in enumerate(int(t.get_text()) for t in fig.axes[0].get_xticklabels()):
        assert bool(np.ma.getmaskarray(grid)[row, column] or np.isnan(grid[row, column])) == (zone not in cpu_zones)
    plt.close(fig)
