"""Pods the kubelet refused at admission, and the controllers that keep recreating them."""

from __future__ import annotations

import pandas as pd

from tmnb.analysis.diagnose import Diagnosis, diagnose
from tmnb.kubelet.names import ADMISSION_REASONS
from tmnb.postmortem.evidence import Evidence


def rejected_pods(evidence: Evidence) -> pd.DataFrame:
    """Every rejected pod seen in any snapshot, once, with the snapshot that saw it first."""
    rows, seen = [], set()
    for path, snap in [*evidence.snapshots, *evidence.node_snapshots]:
        for p in snap.pods:
            if p.phase == "Failed" and p.reason in ADMISSION_REASONS and p.uid not in seen:
                seen.add(p.uid)
                owner = f"{p.owner.kind}/{p.owner.name}" if p.owner else ""
                rows.append({
                    "node": p.node or "", "pod": f"{p.namespace}/{p.name}", "owner": owner, "reason": p.reason,
                    "message": p.message or "", "created": p.created, "seen in": path.parent.name,
                })  # fmt: skip
    return pd.DataFrame(rows, columns=["node", "pod", "owner", "reason", "message", "created", "seen in"])


def flapping(rejected: pd.DataFrame) -> pd.DataFrame:
    """Controllers with more than one rejected pod: the kubelet keeps refusing their replacements."""
    counts = rejected[rejected["owner"] != ""].groupby(["owner", "reason"], as_index=False).size()
    return counts[counts["size"] > 1].rename(columns={"size": "rejected pods"}).reset_index(drop=True)


def diagnoses(evidence: Evidence) -> list[tuple[str, Diagnosis]]:
    """Each rejected pod explained on the first whole-cluster snapshot that holds it (other pools
    are visible there), else on the node snapshot that saw it; with that snapshot's folder."""
    out, seen = [], set()
    for path, snap in [*evidence.snapshots, *evidence.node_snapshots]:
        names = {n.name for n in snap.nodes}
        for p in snap.pods:
            if p.phase == "Failed" and p.reason in ADMISSION_REASONS and p.uid not in seen and p.node in names:
                seen.add(p.uid)
                out.append((path.parent.name, diagnose(snap, p)))
    return out
