"""Before/after figures: a signal over time with the change marked, its distributions side by side,
and how container alignment moved across the fleet.

Series are coloured by workload group (the statistics' ``group_by`` labels), not by pod, because
pods are renamed by the change and the reader compares workloads.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from tmnb.analysis.compare import VERDICTS, alignment_matrix
from tmnb.metrics.collect import Collected
from tmnb.metrics.frame import group_labels
from tmnb.metrics.windows import Windows
from tmnb.plots.figures import show
from tmnb.report import display

BEFORE, AFTER, CHANGE = "#9ecae1", "#a1d99b", "#d9d9d9"
VERDICT_COLOURS = {
    "now rejected": "#b2182b",
    "lost alignment": "#ef8a62",
    "gone": "#bababa",
    "newly aligned": "#1a9850",
    "moved": "#67a9cf",
    "new": "#d9ef8b",
    "unchanged": "#e0e0e0",
}
_COLOURS = matplotlib.color_sequences["tab10"]


def timeseries(
    frame: pd.DataFrame, query: str, windows: Windows, *, group_by: Sequence[str] = (), unit: str = ""
) -> Figure:
    """Every series of ``query`` over time, the windows shaded and the change's markers drawn."""
    data = frame[frame["query"] == query]
    groups = group_labels(data, group_by)
    colour = {g: _COLOURS[i % len(_COLOURS)] for i, g in enumerate(sorted(set(groups)))}
    fig, ax = plt.subplots(figsize=(10, 4))
    ax.axvspan(*windows.before, color=BEFORE, alpha=0.3, label="before window")
    ax.axvspan(*windows.after, color=AFTER, alpha=0.3, label="after window")
    if windows.change[1] > windows.change[0]:
        ax.axvspan(*windows.change, color=CHANGE, alpha=0.6, label="change")
    for _, part in data.groupby(["series", "window"], sort=False):
        group = groups.loc[part.index[0]]
        ax.plot(part["timestamp"], part["value"], color=colour[group], linewidth=0.9, alpha=0.8)
    labelled = None
    for marker in windows.markers.itertuples():
        ax.axvline(marker.time, color="black", linewidth=0.8, linestyle="--")
        if labelled is None or marker.time - labelled > (windows.after[1] - windows.before[0]) * 0.03:
            labelled = marker.time
            ax.annotate(
                marker.event,
                (marker.time, 1),
                xycoords=("data", "axes fraction"),
                rotation=90,
                fontsize=7,
                va="top",
                ha="right",
            )
    handles, _ = ax.get_legend_handles_labels()
    handles += [Line2D([], [], color=c, label=g) for g, c in colour.items()]
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    ax.set_title(f"{query}: before and after the change ({data['series'].nunique()} series)")
    ax.set_xlabel("time (UTC)")
    ax.set_ylabel(unit or "value")
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def distributions(frame: pd.DataFrame, query: str, *, group_by: Sequence[str] = (), unit: str = "") -> Figure:
    """Box plots per workload group, before above after; whiskers at the 5th and 95th percentile.
    Each group gets its own panel and scale, so a narrow distribution shows its box and whiskers
    rather than a median line lost on another group's scale; the medians are written beside it."""
    data = frame[(frame["query"] == query) & frame["window"].isin(["before", "after"]) & np.isfinite(frame["value"])]
    groups = group_labels(data, group_by)
    names = sorted(set(groups)) or [""]
    fig, axes = plt.subplots(len(names), 1, figsize=(9, 0.9 + 0.9 * len(names)), squeeze=False)
    for ax, name in zip(axes[:, 0], names, strict=True):
        boxes, labels, colours, medians = [], [], [], []
        for window, colour in (("after", AFTER), ("before", BEFORE)):
            values = data.loc[(groups == name) & (data["window"] == window), "value"].to_numpy()
            if len(values):
                boxes.append(values)
                labels.append(window)
                colours.append(colour)
                medians.append(f"{window} {np.median(values):.3g}")
        if boxes:
            art = ax.boxplot(
                boxes, orientation="horizontal", widths=0.6, whis=(5, 95), showfliers=False, patch_artist=True
            )
            for patch, colour in zip(art["boxes"], colours, strict=True):
                patch.set_facecolor(colour)
            ax.set_yticks(range(1, len(labels) + 1), labels, fontsize=7)
        ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=8)
        ax.text(1.01, 0.5, "median " + ", ".join(reversed(medians)), transform=ax.transAxes, fontsize=7, va="center")
        ax.tick_params(axis="x", labelsize=7)
    axes[0, 0].set_title(f"{query}: distribution per workload, before and after (each on its own scale)")
    axes[-1, 0].set_xlabel(unit or "value")
    fig.tight_layout()
    return fig


def alignment_changes(table: pd.DataFrame) -> Figure:
    """Verdict counts, and a before x after matrix of alignment states, across the whole fleet."""
    fig, (bars, grid) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [1, 1.3]})
    counts = table["verdict"].value_counts().reindex(VERDICTS, fill_value=0)
    bars.barh(list(counts.index), counts.to_numpy(), color=[VERDICT_COLOURS[v] for v in counts.index])
    bars.invert_yaxis()
    for y, n in enumerate(counts):
        bars.text(n, y, f" {n}", va="center", fontsize=8)
    bars.set_xlabel("containers")
    bars.set_ylabel("verdict (worst first)")
    bars.set_title("Verdict per container")
    matrix = alignment_matrix(table)
    grid.imshow(matrix.to_numpy(), cmap="Blues", aspect="auto")
    for (r, c), n in np.ndenumerate(matrix.to_numpy()):
        grid.text(
            c,
            r,
            str(n),
            ha="center",
            va="center",
            fontsize=9,
            color="black" if n < matrix.values.max() / 2 else "white",
        )
    grid.set_xticks(range(matrix.shape[1]), list(matrix.columns), rotation=30, ha="right", fontsize=8)
    grid.set_yticks(range(matrix.shape[0]), list(matrix.index), fontsize=8)
    grid.set_xlabel("alignment after")
    grid.set_ylabel("alignment before")
    grid.set_title("Containers by alignment, before x after")
    fig.suptitle(f"Alignment changes across the fleet ({len(table)} containers)")
    fig.tight_layout()
    return fig


def show_signals(got: Collected, span: Windows | None, group_by: Sequence[str], out_dir: str | Path) -> list[Path]:
    """Each signal with data: its time series, then its before/after distributions, saved and shown.
    A signal that is 0 in every sample (throttling without CFS quotas) gets a sentence, not two
    empty figures. Without windows (no metrics source) nothing was collected: no figure."""
    paths: list[Path] = []
    if span is None:
        return paths
    for s in got.with_data():
        frame = got.frame
        windows = frame["window"].isin(["before", "after"]) if "window" in frame else False
        values = frame.loc[(frame["query"] == s.name) & windows & np.isfinite(frame["value"]), "value"]
        if len(values) and (values == 0).all():
            display.markdown(f"_{s.name}: 0 in every sample of both windows; no figure._")
            continue
        fig = timeseries(got.frame, s.name, span, group_by=group_by, unit=s.unit)
        paths.append(show(fig, out_dir, f"{s.name}-over-time"))
        paths.append(
            show(distributions(got.frame, s.name, group_by=group_by, unit=s.unit), out_dir, f"{s.name}-distribution")
        )
    return paths
