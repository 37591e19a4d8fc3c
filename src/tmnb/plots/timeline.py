"""The swimlane of a change: one lane per node (and one for the cluster), time on x, a marker shape
per kind of record, the change window shaded."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from tmnb.parse.klog_names import NAMES

MARKERS = {
    "rollout": ("o", "tab:blue"),
    "ready": ("^", "tab:green"),
    "event": ("x", "tab:red"),
    "snapshot": ("s", "tab:gray"),
    "kubelet start/stop": ("|", "tab:olive"),
    "kubelet did not start": ("D", "tab:purple"),
    "pod rejected at admission": ("X", "tab:red"),
    "topology manager": (".", "tab:cyan"),
}
_STARTS = {"kubelet_start", "kubelet_stop", "kubelet_exit", "kubelet_version", "topology_manager_created"}
#: the kubelet's records of a pod it refused at admission (the kubelet itself ran on)
_REJECTIONS = {"topology_affinity_error", "smt_alignment_error", "admission_denied"}
#: beyond this many lanes the labels stop reading; the busiest lanes are kept
MAX_LANES = 40


def marker_kind(kind: str) -> str:
    """The legend entry of a timeline kind: kubelet log kinds (record names) fall into four, so a
    pod the kubelet refused reads as such, not as a kubelet that refused to run."""
    if kind not in NAMES:
        return kind
    if kind in _STARTS:
        return "kubelet start/stop"
    if kind in _REJECTIONS:
        return "pod rejected at admission"
    if kind.startswith("topology_"):
        return "topology manager"
    return "kubelet did not start"


def swimlane(timeline: pd.DataFrame, window: tuple[pd.Timestamp, pd.Timestamp] | None) -> Figure:
    outside = 0
    if window is not None:  # zoom to the change: months of old events would squash it to a line
        pad = max((window[1] - window[0]) * 0.5, pd.Timedelta(minutes=2))
        inside = timeline["time"].between(window[0] - pad, window[1] + pad)
        outside = int((~inside).sum())
        timeline = timeline[inside]
    lanes_all = timeline.assign(
        lane=timeline["node"].replace("", "(cluster)"), marker=timeline["kind"].map(marker_kind)
    )
    busiest = lanes_all["lane"].value_counts().index[:MAX_LANES]
    frame = lanes_all[lanes_all["lane"].isin(busiest)]
    lanes = sorted(frame["lane"].unique(), key=lambda n: (n != "(cluster)", n))
    fig, ax = plt.subplots(figsize=(12, max(2.0, 0.45 * len(lanes) + 1.2)), layout="constrained")
    if window is not None:
        ax.axvspan(window[0], window[1], color="tab:orange", alpha=0.15, label="change window")
    y = {lane: i for i, lane in enumerate(lanes)}
    for kind, (marker, color) in MARKERS.items():
        part = frame[frame["marker"] == kind]
        if not part.empty:
            ax.scatter(part["time"], part["lane"].map(y), marker=marker, color=color, label=kind, s=36, zorder=3)
    ax.set_yticks(range(len(lanes)), lanes)
    ax.invert_yaxis()
    ax.set_xlabel("time (UTC)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    hidden = lanes_all["lane"].nunique() - len(lanes)
    notes = [f"the {len(lanes)} busiest lanes, {hidden} more in the table" if hidden else ""]
    notes.append(f"{outside} record(s) outside the change window in the table" if outside else "")
    note = "; ".join(n for n in notes if n)
    ax.set_title("What happened" + (f" ({note})" if note else ""))
    fig.autofmt_xdate()
    return fig
