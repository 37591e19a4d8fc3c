"""What else changed with the change and moves application metrics on its own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd

from tmnb.analysis.compare.containers import QUOTA_GATE, kubelet_version
from tmnb.snapshot import Snapshot

CONFOUNDER_COLUMNS = ["confounder", "affects", "scope", "detail"]


Confounder = dict[str, Any]
_RUNNING = ["aligned", "cross-NUMA", "shared", "unknown"]


def _scope(rows: pd.DataFrame) -> list[dict[str, str]]:
    """The workloads a confounder touches, as label sets the statistics' groups can be matched on."""
    pairs = rows[["namespace", "container"]].drop_duplicates().sort_values(["namespace", "container"])
    records: list[dict[str, str]] = pairs.to_dict("records")
    return records


def _quota(table: pd.DataFrame, before: Snapshot, after: Snapshot) -> Iterator[Confounder]:
    lost = table["cfs_quota_before"].eq(True) & table["cfs_quota_after"].eq(False)
    gained = table["cfs_quota_before"].eq(False) & table["cfs_quota_after"].eq(True)
    if lost.any():
        yield {
            "confounder": "CFS quota removed",
            "affects": ["throttling", "latency"],
            "scope": _scope(table[lost]),
            "detail": f"{lost.sum()} container(s) lost their CFS quota: from kubelet 1.33 ({QUOTA_GATE}, on by "
            "default) containers with exclusive CPUs get none, so CPU throttling drops (and tail latency may "
            "improve) whatever NUMA alignment did",
        }
    if gained.any():
        yield {
            "confounder": "CFS quota added",
            "affects": ["throttling", "latency"],
            "scope": _scope(table[gained]),
            "detail": f"{gained.sum()} container(s) run with a CFS quota again (shared CPUs now, an older kubelet, "
            f"or {QUOTA_GATE} turned off), so throttling can rise whatever NUMA alignment did",
        }


def _kubelet_versions(table: pd.DataFrame, before: Snapshot, after: Snapshot) -> Iterator[Confounder]:
    old, new = {n.name: kubelet_version(n) for n in before.nodes}, {n.name: kubelet_version(n) for n in after.nodes}
    changed = [n for n in sorted(old.keys() & new.keys()) if old[n] != new[n]]
    if changed:
        upgrades = "; ".join(sorted({f"{old[n]} → {new[n]}" for n in changed}))
        on_them = table["node_before"].isin(changed) | table["node_after"].isin(changed)
        yield {
            "confounder": "kubelet version changed",
            "affects": ["all"],
            "scope": _scope(table[on_them]),
            "detail": f"{len(changed)} node(s) changed kubelet version ({upgrades}): everything else in those "
            "releases changed at the same time",
        }


def _exclusive(table: pd.DataFrame, before: Snapshot, after: Snapshot) -> Iterator[Confounder]:
    known = table["exclusive_before"].notna() & table["exclusive_after"].notna()
    flipped = known & (table["exclusive_before"] != table["exclusive_after"])
    if flipped.any():
        yield {
            "confounder": "exclusive CPUs changed",
            "affects": ["cpu", "throttling", "latency"],
            "scope": _scope(table[flipped]),
            "detail": f"{flipped.sum()} container(s) moved between the shared pool and exclusive CPUs, which changes "
            "CPU contention independently of NUMA placement",
        }


def _replicas(table: pd.DataFrame, before: Snapshot, after: Snapshot) -> Iterator[Confounder]:
    counts = {
        side: table[table[f"alignment_{side}"].isin(_RUNNING)].groupby(["namespace", "owner"]).size()
        for side in ("before", "after")
    }
    both = pd.concat(counts, axis=1).fillna(0).astype(int)
    scaled = both[both["before"] != both["after"]]
    if len(scaled):
        examples = ", ".join(f"{owner} {r.before}→{r.after}" for (_, owner), r in scaled.head(3).iterrows())
        owners = table.set_index(["namespace", "owner"]).index.isin(scaled.index)
        yield {
            "confounder": "running replicas changed",
            "affects": ["cpu", "latency"],
            "scope": _scope(table[owners]),
            "detail": f"{len(scaled)} owner(s) run a different number of containers ({examples}"
            f"{', …' if len(scaled) > 3 else ''}): load per replica shifts",
        }


def confounders(before: Snapshot, after: Snapshot, table: pd.DataFrame) -> pd.DataFrame:
    """Other things that changed between the snapshots and move application metrics on their own.

    ``affects`` lists the signal kinds (cpu, throttling, latency, or all) whose statistics get the note;
    ``scope`` the workloads (namespace, container) concerned.
    """
    rules = (_quota, _kubelet_versions, _exclusive, _replicas)
    rows = [row for rule in rules for row in rule(table, before, after)]
    return pd.DataFrame(rows, columns=CONFOUNDER_COLUMNS)


def describe_confounders(found: pd.DataFrame) -> str:
    """Markdown bullets for the report: each confounder, the signals it moves, and why."""
    if found.empty:
        return "No confounders: kubelet versions, CFS quotas, exclusive CPUs and replica counts did not change."
    return "\n".join(f"- **{r.confounder}** (moves {', '.join(r.affects)}): {r.detail}." for r in found.itertuples())
