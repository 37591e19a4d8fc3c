"""Figures for the reports (matplotlib). Each has a title and labelled axes with units."""

from tmnb.plots.figures import save, show
from tmnb.plots.occupancy import cpu_map, fleet_heatmap, node_numa_bars

__all__ = ["cpu_map", "fleet_heatmap", "node_numa_bars", "save", "show"]
