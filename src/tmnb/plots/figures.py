"""Saving and showing figures: every figure lands as a PNG in the run folder and is shown once."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from tmnb.report import display

#: Figures are saved at this resolution; a figure wider than MAX_WIDTH_PX no longer fits a screen.
DPI = 110
MAX_WIDTH_PX = 2000


def overlapping_text(fig: Figure) -> list[tuple[str, str]]:
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


def save(fig: Figure, out_dir: str | Path, name: str) -> Path:
    """Write ``fig`` as PNG into the run folder under a file-system-safe name."""
    path = Path(out_dir) / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    return path


def show(fig: Figure, out_dir: str | Path, name: str) -> Path:
    """Save as PNG, display that same PNG (rendering once, not twice), and release the figure."""
    path = save(fig, out_dir, name)
    plt.close(fig)
    display.image(path)
    return path
