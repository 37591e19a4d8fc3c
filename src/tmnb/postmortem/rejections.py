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


def diagnoses(evidence: Evidence) -> list[tuple[str, Diagnosis, list[str]]]:
    """Each rejected pod explained on the first whole-cluster snapshot that holds it (other pools
    are visible there), else on the node snapshot that saw it. Pods of one controller refused on
    one node for one reason are explained once; the others are listed with it."""
    if evidence.explained is None:
        evidence.explained = _diagnoses(evidence)
    return evidence.explained


def _diagnoses(evidence: Evidence) -> list[tuple[str, Diagnosis, list[str]]]:
    out: dict[tuple[str, str, str], tuple[str, Diagnosis, list[str]]] = {}
    seen: set[str] = set()
    for path, snap in [*evidence.snapshots, *evidence.node_snapshots]:
        names = {n.name for n in snap.nodes}
        for p in snap.pods:
            if p.phase != "Failed" or p.reason not in ADMISSION_REASONS or p.uid in seen or p.node not in names:
                continue
            seen.add(p.uid)
            owner = (
                f"{p.owner.controller_kind or p.owner.kind}/{p.owner.controller_name or p.owner.name}"
                if p.owner
                else ""
            )
            key = (p.node or "", f"{p.namespace}/{owner}" if owner else f"{p.namespace}/{p.name}", p.reason or "")
            if key in out:
                out[key][2].append(f"{p.namespace}/{p.name}")
            else:
                out[key] = (path.parent.name, diagnose(snap, p), [])
    return list(out.values())
