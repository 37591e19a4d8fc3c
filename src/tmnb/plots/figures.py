"""Saving and showing figures: every figure lands as a PNG in the run folder and is shown once."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from tmnb.report import display
from tmnb.report.places import anchored

#: Figures are saved at this resolution.
DPI = 110


def save(fig: Figure, out_dir: str | Path, name: str) -> Path:
    """Write ``fig`` as PNG into the run folder under a file-system-safe name."""
    path = anchored(out_dir) / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    return path


def show(fig: Figure, out_dir: str | Path, name: str) -> Path:
    """Save as PNG, display that same PNG (rendering once, not twice), and release the figure."""
    path = save(fig, out_dir, name)
    plt.close(fig)
    display.image(path)
    return path
