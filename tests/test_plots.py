"""Figures are built from real frames and carry titles, axis labels and units."""

import pytest

from factories import busy_snapshot, node, snapshot
from tmnb import plots
from tmnb.analysis.occupancy import occupancy, pod_occupancy


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
    assert labels(cpu)[1:] == ("NUMA zone", "cpus")
    assert mem.get_ylabel() == "GiB"
    assert [t.get_text() for t in cpu.get_xticklabels()] == ["NUMA 0", "NUMA 1"]
    assert {t.get_text() for t in cpu.texts} == {"pg-0", "train"}
    assert "w1" in fig._suptitle.get_text()
    path = plots.save(fig, tmp_path, "w1 bars")
    assert path.name == "w1_bars.png" and path.stat().st_size > 5000


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
    assert f"({nodes} nodes)" in ax.get_title()
    assert ax.get_xlabel() == "NUMA zone"
    assert "fraction" in fig.axes[1].get_ylabel()
    if nodes > max_rows:
        assert "nodes (rank 1-" in ax.get_yticklabels()[0].get_text()
