"""Figures for the reports (matplotlib). Each has a title and labelled axes with units."""

from tmnb.plots.compare import alignment_changes, distributions, show_signals, timeseries
from tmnb.plots.figures import save, show
from tmnb.plots.occupancy import cpu_map, fleet_heatmap, node_numa_bars, show_nodes

__all__ = [
    "alignment_changes",
    "cpu_map",
    "distributions",
    "fleet_heatmap",
    "node_numa_bars",
    "save",
    "show",
    "show_nodes",
    "show_signals",
    "timeseries",
]
